#!/usr/bin/env bash
# Install or update the R front end (rpkg/pydpowl) when needed; called by scripts/setup.sh.
#   rpkg/install.sh /path/to/.venv/bin/python
# Reinstalls when the set-up has not installed it yet, when any package file
# (other than tests) changed since, or when the installed version or the Python
# it records differ from the sources / the given interpreter. Honours $SUDO.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:?usage: rpkg/install.sh /path/to/python}"
STAMP=.venv/.rpkg-installed
reason=""
if [ ! -f "$STAMP" ]; then
  reason="not installed by the set-up yet"
elif [ -n "$(find rpkg/pydpowl -newer "$STAMP" -not -path 'rpkg/pydpowl/tests/*' -not -name python-path -print -quit)" ]; then
  reason="sources changed"
elif ! PY="$PY" Rscript -e 'ok <- requireNamespace("pydpowl", quietly = TRUE) &&
    as.character(packageVersion("pydpowl")) == read.dcf("rpkg/pydpowl/DESCRIPTION")[, "Version"] &&
    identical(readLines(system.file("python-path", package = "pydpowl"), warn = FALSE)[1], Sys.getenv("PY"))
    quit(status = !isTRUE(ok))' >/dev/null 2>&1; then
  reason="installed version or recorded Python differs"
fi
if [ -n "$reason" ]; then
  echo "[setup] installing the R front end (rpkg/pydpowl): $reason"
  if ! log="$(${SUDO:-} env PYDPOWL_PYTHON="$PY" R CMD INSTALL --no-multiarch --clean rpkg/pydpowl 2>&1)"; then
    echo "$log" >&2
    echo "[setup] R CMD INSTALL rpkg/pydpowl failed" >&2
    exit 1
  fi
  touch "$STAMP"
else
  echo "[setup] R front end present"
fi
