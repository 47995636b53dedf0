"""Compiled kernels (numba) of the engine, as ordinary source files.

* :mod:`.margin_losses`: the built-in losses of :mod:`pydpowl.engine.losses`,
  compiled from their one definition; :func:`~.margin_losses.loss_terms`
  picks one by its code, :func:`~.margin_losses.loss_terms_block` applies it
  to a block of margins;
* :mod:`.row_sweeps`: one pass over the (column-major) rows, block by block,
  for the objective, gradient and curvature changes or the whole Hessian; the
  rank-k Hessian update; the margins; the line-search derivatives;
* :mod:`.feature_scaling`: DPpack's clip-and-scale of the features in one
  pass, written column-major.

Every kernel is compiled as ``numba.njit(nogil=True)`` with numba's on-disk
cache (:func:`.caching.kernel`): set-up (``scripts/setup.sh``, which calls
:func:`warm_up`) compiles them once and numba keeps the machine code in
``__pycache__`` beside these files (and beside ``engine/losses.py``, whose
loss terms they compile), so a user's process loads them instead of
compiling; also a process that may not write there (a package installed by
root, run by a service account with no writable HOME), which numba alone
refuses. Loading still costs about 0.2 s (importing numba and LLVM), which is
why the solver uses them only from ``AUTO_MIN_ROWS`` rows on (measurements
in :mod:`pydpowl.engine.solver`), and only when that cache is current
(:func:`setup_cache_current`): compiling them takes 4-15 s, which no fit
should wait for, so without the cache ``"auto"`` stays on numpy.
``NUMBA_DEBUG_CACHE=1`` shows the cache at work ("data loaded from", and no
"data saved to" after set-up).

Caveat of numba's cache: it is keyed on the source file of each kernel, not
on the files it calls. After editing :mod:`pydpowl.engine.losses`, delete the
``*.nbi``/``*.nbc`` files under ``pydpowl/engine`` and run :func:`warm_up`
(``make setup`` does); a fresh clone has none. ``NUMBA_CACHE_DIR``, when set,
is where numba caches the kernels instead (compiled there once, at their
first use).

Nothing here is imported by ``import pydpowl``; ``numba`` itself is imported
only when a kernel is first used.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["AUTO_MIN_ROWS", "numba_available", "setup_cache_current", "use_kernels", "warm_up"]

#: from this many rows ``backend="auto"`` uses the kernels (measured; see pydpowl.engine.solver)
AUTO_MIN_ROWS = 100_000

#: the source files whose functions the kernels compile, relative to ``pydpowl/engine``; numba keeps their
#: machine code in the ``__pycache__`` beside each
KERNEL_SOURCES = ("kernels/feature_scaling.py", "kernels/margin_losses.py", "kernels/row_sweeps.py", "losses.py")


def numba_available() -> bool:
    """Whether numba can be imported (checked without importing it)."""
    return importlib.util.find_spec("numba") is not None


@functools.lru_cache(maxsize=None)
def setup_cache_current() -> bool:
    """Whether the kernels will load from a cache without compiling (checked without importing numba).

    True when ``NUMBA_CACHE_DIR`` is set (the user's own cache: compiled there
    once), or when for every file of ``KERNEL_SOURCES`` the ``__pycache__``
    beside it holds numba's index files for this Python version, the newest
    of them written after the source file (numba's index is keyed on the
    source's time stamp). :func:`warm_up` compiles them, and clears this
    answer. Kept per process.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return True
    engine = Path(__file__).resolve().parent.parent
    tag = f".py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}.nbi"
    for rel in KERNEL_SOURCES:
        source = engine / rel
        try:
            indexes = [p.stat().st_mtime for p in (source.parent / "__pycache__").glob(f"{source.stem}.*{tag}")]
            if not indexes or max(indexes) < source.stat().st_mtime:
                return False
        except OSError:  # a directory that cannot be read
            return False
    return True


def use_kernels(n_rows: int, backend: str, loss: Any = None) -> bool:
    """The backend rule shared by the solver and the feature scaling.

    ``"numpy"``: never; ``"numba"``: always (the caller raises if numba is
    missing; without a cache the kernels are compiled for the process, 4-15 s);
    ``"auto"``: from ``AUTO_MIN_ROWS`` rows on, when numba is installed, the
    kernels' compiled code is in a cache (:func:`setup_cache_current`; a fit
    does not wait for the compiler) and the loss of the fit (if given) has
    ``auto_kernels`` (not the logistic loss, whose vectorised numpy terms are
    faster).
    """
    if backend not in ("auto", "numpy", "numba"):
        raise ValueError(f"backend must be one of {{'auto', 'numpy', 'numba'}}, got backend={backend!r}.")
    if backend == "numba":
        return True
    return (backend == "auto" and n_rows >= AUTO_MIN_ROWS and getattr(loss, "auto_kernels", True)
            and numba_available() and setup_cache_current())


def warm_up() -> bool:
    """Compile every kernel for the argument types the engine uses, filling numba's on-disk cache.

    Returns False when numba is not installed. Set-up runs it once; later
    processes load the cached machine code. When a kernel source is newer
    than its cache (an edit, a checkout) the kernels' caches are cleared first:
    numba checks a cached function against its own source only, so a caller
    loaded from its cache would keep a changed callee's old code, and the
    callee's own index would stay stale (:func:`setup_cache_current` False).
    """
    if not numba_available():
        return False
    import numpy as np

    setup_cache_current.cache_clear()
    if not os.environ.get("NUMBA_CACHE_DIR") and not setup_cache_current():
        _clear_kernel_caches()

    from ..losses import HuberHingeLoss, LogisticLoss
    from ..problem import MarginProblem
    from .feature_scaling import clip_and_scale_rows

    rng = np.random.default_rng(0)
    Z = rng.uniform(-0.4, 0.4, size=(8, 3))
    y = np.array([1.0, -1.0] * 4)
    w = np.ones(8)
    theta = np.array([3.0, -2.0, 1.0])  # margins in every Huber zone, which change between the two points
    for loss in (HuberHingeLoss(0.5), HuberHingeLoss(0.5).quadratic_surrogate(), LogisticLoss()):
        problem = MarginProblem(Z, y, w, loss, backend="numba")
        problem.evaluate(theta)  # the sweep that rebuilds the Hessian
        problem.evaluate(-theta)  # the sweep that lists the rows whose curvature changed, and the update
        problem.line(theta, -theta)(0.5)
        problem.release()
    X = rng.uniform(size=(4, 2))
    clip_and_scale_rows(X, np.zeros(2), np.ones(2), np.ones(3), 2.0, 1, np.empty((4, 3), order="F"))
    from .. import losses
    from .margin_losses import loss_terms, loss_terms_block

    m = np.linspace(-2.0, 2.0, 4)
    for kind in (losses.HUBER_HINGE, losses.LOGISTIC, losses.HUBER_SURROGATE):  # their own cache entries too
        loss_terms(kind, 0.5, 0.25)
        loss_terms_block(kind, 0.5, m, np.empty(4), np.empty(4), np.empty(4), 4)
    setup_cache_current.cache_clear()
    return True


def _clear_kernel_caches() -> None:
    """Remove numba's cache files of every kernel source (their ``__pycache__``'s ``.nbi``/``.nbc`` files)."""
    engine = Path(__file__).resolve().parent.parent
    for rel in KERNEL_SOURCES:
        source = engine / rel
        for path in (source.parent / "__pycache__").glob(f"{source.stem}.*.nb[ic]"):
            try:
                path.unlink()
            except OSError:  # a read-only installation: numba then compiles in memory (see .caching)
                pass
