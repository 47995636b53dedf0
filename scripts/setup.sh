#!/usr/bin/env bash
# One-time, idempotent set-up for pydpowl on a Debian machine with R and CRAN access.
# Installs R and DPpack (the reference), the Python stack from Debian, a virtual
# environment in .venv and the project (editable), and the R front end.
# Each step is skipped when its result is already present.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

APT_PACKAGES=(
  r-base-core r-base-dev
  r-cran-rmutil r-cran-rdpack r-cran-r6 r-cran-dplyr r-cran-nloptr r-cran-e1071
  r-cran-ggplot2 r-cran-mass r-cran-testthat r-cran-knitr r-cran-rmarkdown pandoc
  r-cran-glmnet r-cran-kernlab r-cran-foreach
  python3-venv python3-numpy python3-scipy python3-pandas python3-statsmodels
  python3-rpy2 python3-pytest python3-pytest-timeout python3-matplotlib python3-hypothesis python3-numba
  python3-setuptools python3-wheel python3-pip python3-flake8 python3-pycodestyle python3-pyflakes mypy
  r-cran-lintr
  python3-sklearn python3-dask python3-distributed python3-zarr mkdocs
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "[setup] Debian packages present"
fi

if ! Rscript -e 'quit(status = !requireNamespace("DPpack", quietly = TRUE))' >/dev/null 2>&1; then
  echo "[setup] installing DPpack from CRAN"
  $SUDO Rscript -e 'install.packages("DPpack"); if (!requireNamespace("DPpack", quietly = TRUE)) quit(status = 1)'
else
  echo "[setup] DPpack present"
fi

# DTRlearn2 (K-stage OWL; its dependencies glmnet, kernlab, foreach come from Debian above, WeightSVM from CRAN):
# the multi-stage cross-checks (tests/r_reference/test_dtrlearn2.py, python -m validation).
if ! Rscript -e 'quit(status = !requireNamespace("DTRlearn2", quietly = TRUE))' >/dev/null 2>&1; then
  echo "[setup] installing DTRlearn2 from CRAN"
  $SUDO Rscript -e 'install.packages("DTRlearn2"); if (!requireNamespace("DTRlearn2", quietly = TRUE)) quit(status = 1)'
else
  echo "[setup] DTRlearn2 present"
fi

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv from /usr/bin/python3 with system site packages"
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# Reinstall when the package is missing or pyproject.toml changed (entry points, metadata).
if [ ! -x .venv/bin/pydpowl ] || [ ! -f .venv/.pydpowl-installed ] || [ pyproject.toml -nt .venv/.pydpowl-installed ] \
   || ! (cd / && "$ROOT/.venv/bin/python" -c 'import pydpowl') >/dev/null 2>&1; then
  echo "[setup] installing pydpowl (editable) into .venv"
  .venv/bin/python -m pip install -q --no-build-isolation --no-deps -e .
  touch .venv/.pydpowl-installed
else
  echo "[setup] pydpowl importable from .venv"
fi

# Compile the package's bytecode, as pip does for a regular install (an editable one leaves it to the first
# import, which cannot write it under PYTHONDONTWRITEBYTECODE or a read-only checkout: every process would then
# compile pydpowl's modules again, about 0.04 s of a cold script). Only files changed since run again.
.venv/bin/python -m compileall -q pydpowl >/dev/null || echo "[setup] note: pydpowl's bytecode not compiled"

# Compile the numba kernels once (cached next to the sources) so first runs are not slowed by it.
.venv/bin/python -c "import sys; from pydpowl.engine.kernels import warm_up; sys.exit(0 if warm_up() else 1)" >/dev/null 2>&1 || echo "[setup] note: numba kernels not compiled (numba missing?); the numpy path is used"

if [ -d rpkg/pydpowl ]; then
  SUDO="$SUDO" bash rpkg/install.sh "$ROOT/.venv/bin/python"
fi
echo "[setup] done"
