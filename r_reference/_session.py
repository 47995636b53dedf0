"""Lazy access to an embedded R through rpy2, with local conversion only.

Every call into R goes through :func:`call_r_file` (a function defined in one
of the ``.R`` files next to this module, called with named arguments) or
:func:`call_r` (an R function given as source, for short test snippets). Both
load rpy2 on first use, evaluate the R code once (cached), convert numpy
arguments inside a ``localconverter`` context (never globally) and turn R
errors into :class:`RError` with R's message.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List

import numpy as np

__all__ = ["RError", "RUnavailableError", "r_available", "call_r", "call_r_file", "require_packages"]

#: the folder holding the package's R code (``dppack.R``, ``rng.R``)
R_DIR = Path(__file__).resolve().parent

SETUP_HINT = "run 'bash scripts/setup.sh' (or 'make setup') from the repository root"


class RUnavailableError(ImportError):
    """R, rpy2 or a required R package is not available."""


class RError(RuntimeError):
    """R signalled an error; the message is R's."""


@functools.lru_cache(maxsize=None)
def _rpy2() -> Dict[str, Any]:
    try:
        import rpy2.rinterface_lib.callbacks as callbacks
        import rpy2.rinterface_lib.embedded as embedded
        from rpy2 import robjects
        from rpy2.robjects import default_converter, numpy2ri
        from rpy2.robjects.conversion import localconverter
        from rpy2.robjects.packages import isinstalled
    except Exception as exc:  # ImportError, or R itself failing to start
        raise RUnavailableError(
            f"the R reference needs rpy2 and a working R ({type(exc).__name__}: {exc}); "
            f"{SETUP_HINT}."
        ) from exc
    return {
        "robjects": robjects,
        "converter": default_converter + numpy2ri.converter,
        "localconverter": localconverter,
        "isinstalled": isinstalled,
        "RRuntimeError": embedded.RRuntimeError,
        "callbacks": callbacks,
    }


def r_available(*packages: str) -> bool:
    """True when rpy2 loads and every named R package is installed."""
    try:
        require_packages(*packages)
    except RUnavailableError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def require_packages(*packages: str) -> None:
    """Raise :class:`RUnavailableError` unless every R package is installed."""
    api = _rpy2()
    for pkg in packages:
        if not api["isinstalled"](pkg):
            raise RUnavailableError(
                f"R package '{pkg}' is not installed in the R that rpy2 found; {SETUP_HINT}."
            )


@functools.lru_cache(maxsize=None)
def _r_function(source: str) -> Any:
    api = _rpy2()
    with api["localconverter"](api["converter"]):
        return api["robjects"].r(source)


@functools.lru_cache(maxsize=None)
def _r_file_function(file: str, function: str) -> Any:
    api = _rpy2()
    robjects = api["robjects"]
    with api["localconverter"](api["converter"]):
        env = robjects.r["new.env"](parent=robjects.globalenv)
        robjects.r["sys.source"](str(R_DIR / file), envir=env)
        return env[function]


def call_r_file(file: str, function: str, **kwargs: Any) -> Any:
    """Call the R function ``function`` defined in ``r_reference/<file>`` with named arguments.

    Parameters
    ----------
    file : str
        An R file of this package, e.g. ``"dppack.R"``; sourced once into its
        own environment.
    function : str
        The name of a function defined there.
    **kwargs
        The arguments, by name (numpy arrays, floats, ints, bools, strings). A
        value of None leaves the argument out, so that R's default applies
        (rpy2 has no conversion for None).

    Returns
    -------
    object
        The R result converted with numpy2ri (named lists become ``OrdDict``).

    Raises
    ------
    RError
        With R's message when R signals an error.
    """
    api = _rpy2()
    fn = _r_file_function(file, function)
    return _invoke(api, fn, (), {k: v for k, v in kwargs.items() if v is not None})


def call_r(source: str, *args: Any, **kwargs: Any) -> Any:
    """Evaluate the R function ``source`` and call it with converted arguments.

    Parameters
    ----------
    source : str
        R source of a function, e.g. ``"function(x) sum(x)"``; compiled once.
    *args, **kwargs
        numpy arrays, floats, ints, strings or None; keyword names are passed to
        R unchanged (use ``upper_bounds`` style names in R code you control).

    Returns
    -------
    object
        The R result converted with numpy2ri (numeric vectors become numpy
        arrays, named lists become ``rpy2`` ``NamedList``-like objects).

    Raises
    ------
    RError
        With R's message when R signals an error.
    """
    api = _rpy2()
    return _invoke(api, _r_function(source), args, kwargs)


def _invoke(api: Dict[str, Any], fn: Any, args: tuple, kwargs: Dict[str, Any]) -> Any:
    with api["localconverter"](api["converter"]), _captured_r_console(api["callbacks"]) as console:
        try:
            result = fn(*args, **kwargs)
        except api["RRuntimeError"] as exc:
            raise RError(f"R error: {str(exc).strip()}") from None
    text = "".join(console).strip()
    if text:  # R wrote a warning while succeeding: pass it on rather than lose it
        warnings.warn(f"R: {text}", RuntimeWarning, stacklevel=3)
    return result


@contextlib.contextmanager
def _captured_r_console(callbacks: Any) -> Iterator[List[str]]:
    """Keep R's error/warning console output (already carried by RError) off stderr.

    rpy2 echoes every R error as "R[write to console]: ..."; the message is
    raised as :class:`RError` instead, so the echo is swallowed while the call
    runs and the previous callback is restored afterwards.
    """
    captured: List[str] = []
    previous = callbacks.consolewrite_warnerror
    callbacks.consolewrite_warnerror = captured.append
    try:
        yield captured
    finally:
        callbacks.consolewrite_warnerror = previous


def as_float_array(value: Any) -> np.ndarray:
    """Copy an R numeric result into a fresh float64 numpy array."""
    return np.array(value, dtype=np.float64, copy=True)
