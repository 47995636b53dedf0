"""Releases of the R front end (``rpkg/pydpowl``) for the bit-level audit.

The R package calls the Python engine through reticulate, so it cannot run
inside this process's embedded R (rpy2) without two Pythons fighting over one
process. Each batch of releases is therefore one ``Rscript`` run: the data go
in and the released doubles come out as little-endian binary files (no decimal
round trip), and the fits run in a loop after ``set.seed(seed)``, exactly as a
user would call them:

* ``svmDP``: ``pydpowl::svmDP$new("l2", eps, gamma, "output", huber.h = h)$fit(...)``
  with ``add.bias = TRUE`` and OWL weights ``B / 0.5``; released ``$coeff``;
* ``dpowl``: ``pydpowl::dpowl(X, treatment, benefit, propensity = 0.5, ...)``;
  released ``coef(fit)``.

Rows are intercept first, in the original feature space. The R library that
holds the package is taken from ``R_LIBS`` (as for any R run).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["R_INTERFACES", "r_front_end_available", "r_front_end_releases"]

#: the released attribute of each R interface
R_INTERFACES: Dict[str, str] = {"svmDP": "svmDP $coeff", "dpowl": "dpowl() coef()"}

_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1L]
rd <- function(name, n) readBin(file.path(dir, name), "double", n = n, size = 8L, endian = "little")
meta <- read.dcf(file.path(dir, "meta.dcf"))[1L, ]
n <- as.integer(meta[["n"]]); p <- as.integer(meta[["p"]]); k <- as.integer(meta[["k"]])
X <- matrix(rd("X.bin", n * p), nrow = n, ncol = p)
A <- rd("A.bin", n); B <- rd("B.bin", n)
lower <- rd("lower.bin", p); upper <- rd("upper.bin", p)
seeds <- as.integer(rd("seeds.bin", k))
par <- rd("params.bin", 4L)
eps <- par[1L]; gamma <- par[2L]; W <- par[3L]; h <- par[4L]
out <- matrix(NA_real_, nrow = k, ncol = p + 1L)
for (i in seq_len(k)) {
  set.seed(seeds[i])
  if (meta[["interface"]] == "svmDP") {
    m <- pydpowl::svmDP$new("l2", eps, gamma, perturbation.method = "output", huber.h = h)
    suppressWarnings(m$fit(X, (A + 1) / 2, upper.bounds = upper, lower.bounds = lower, add.bias = TRUE,
                           weights = B / 0.5, weights.upper.bound = W))
    out[i, ] <- m$coeff
  } else {
    fit <- suppressWarnings(pydpowl::dpowl(X, treatment = A, benefit = B, propensity = 0.5, epsilon = eps,
                                           gamma = gamma, weights_upper_bound = W,
                                           bounds = list(lower = lower, upper = upper), huber_h = h))
    out[i, ] <- unname(coef(fit))
  }
}
con <- file(file.path(dir, "out.bin"), "wb")
writeBin(as.double(t(out)), con, size = 8L, endian = "little")
close(con)
"""


def _rscript() -> str:
    path = shutil.which("Rscript")
    if path is None:
        raise RuntimeError("Rscript is not on PATH: the R front end cannot be audited.")
    return path


def r_front_end_available() -> bool:
    """True when ``Rscript`` runs and the R package pydpowl loads its Python engine."""
    try:
        res = subprocess.run([_rscript(), "-e", "quit(status = if (requireNamespace('pydpowl', quietly = TRUE) && "
                              "pydpowl::pydpowl_available()) 0L else 3L)"], capture_output=True, timeout=300)
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def r_front_end_releases(config: Any, data: Any, epsilon: float, seeds: Sequence[int], *,
                         interface: str = "svmDP") -> NDArray[np.float64]:
    """One release of the R front end per seed (rows: intercept then coefficients).

    Parameters
    ----------
    config : AuditConfig
        An ``"owl"`` configuration with known propensity 0.5.
    data : Dataset
        Features ``X``, treatments ``y`` and benefits ``v``.
    epsilon : float
    seeds : sequence of int
        R seeds; one ``set.seed`` per release.
    interface : {"svmDP", "dpowl"}
    """
    if interface not in R_INTERFACES:
        raise ValueError(f"interface must be one of {sorted(R_INTERFACES)}, got interface={interface!r}.")
    if config.kind != "owl" or config.propensity != "known":
        raise ValueError("the R front end is audited on 'owl' configurations with known propensity 0.5.")
    seeds = np.asarray(list(seeds), dtype=np.float64)
    lower, upper = config.bounds
    n, p = data.X.shape
    with tempfile.TemporaryDirectory(prefix="pydpowl-audit-r-") as tmp:
        d = Path(tmp)
        for name, arr in (("X", np.asfortranarray(data.X).ravel(order="F")), ("A", data.y), ("B", data.v),
                          ("lower", lower), ("upper", upper), ("seeds", seeds),
                          ("params", [epsilon, config.gamma, config.weights_upper_bound, config.huber_h])):
            np.asarray(arr, dtype="<f8").tofile(d / f"{name}.bin")
        meta = {"n": n, "p": p, "k": seeds.size, "interface": interface}
        (d / "meta.dcf").write_text("".join(f"{k}: {v}\n" for k, v in meta.items()))
        (d / "run.R").write_text(_SCRIPT)
        res = subprocess.run([_rscript(), str(d / "run.R"), str(d)], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"the R front end failed (status {res.returncode}): {res.stderr.strip()[-2000:]}")
        out = np.fromfile(d / "out.bin", dtype="<f8")
    return out.reshape(seeds.size, p + 1)
