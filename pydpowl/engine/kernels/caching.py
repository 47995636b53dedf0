"""Where the kernels' machine code comes from: the cache compiled at set-up, read-only if need be.

numba keeps compiled code in ``__pycache__`` beside each source file, but only
where the running process may also write: its in-tree locator tests the
directory by creating a file there. A package installed by root and run by a
service account (Shiny, cron, a container; HOME unset or not writable) then
has no cache location at all, and ``numba.njit(cache=True)`` raises "cannot
cache function ...: no locator available" when the kernel module is
imported; with a writable but empty HOME numba compiles every kernel again
for the user (4-15 s) in the middle of a fit.

:func:`kernel` compiles a function as ``numba.njit(cache=True, nogil=True)``
does, with one difference in where the cache lies, tried in this order:

1. ``NUMBA_CACHE_DIR`` when set (numba's own rule, the user's explicit choice);
2. ``__pycache__`` beside the source, as numba does, but also when this process
   can only read it: the set-up's compiled code (``warm_up``) is loaded from
   there, and code compiled here that cannot be saved serves this process only;
3. numba's user-wide cache (``~/.cache/numba``) when it can be written;

and with no location at all the kernel is compiled for this process, never an
error. Whether the ``"auto"`` backend uses the kernels at all is decided
without numba (:func:`pydpowl.engine.kernels.use_kernels`): only when the
set-up's cache is there and current, so that no fit waits for a compiler.

This leans on numba's cache classes (``numba.core.caching``, numba 0.56 as in
Debian 12): a locator subclass, and a ``FunctionCache`` subclass put where
``Dispatcher.enable_caching`` puts numba's own. Where they are missing (another
numba), :func:`kernel` falls back to ``numba.njit(cache=True)`` and, if no
location exists, to no cache.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numba

__all__ = ["kernel"]

try:
    from numba.core import caching as _numba_caching
    # imported by name (a missing name raises ImportError), so that mypy takes them as classes to derive from
    from numba.core.caching import CompileResultCacheImpl as _CacheImpl
    from numba.core.caching import FunctionCache as _FunctionCache
    from numba.core.caching import _InTreeCacheLocator as _InTree

    _LOCATORS_AFTER = (_numba_caching._UserWideCacheLocator,)
    _LOCATORS_BEFORE = (_numba_caching._UserProvidedCacheLocator,)
except (ImportError, AttributeError):  # pragma: no cover - another numba: its own rules, see kernel()
    _numba_caching = None


if _numba_caching is not None:

    class _SetupCacheLocator(_InTree):
        """numba's ``__pycache__`` beside the source file, accepted when it can only be read."""

        def ensure_cache_path(self) -> None:
            try:
                super().ensure_cache_path()  # numba's check: create the directory and write a file in it
            except OSError:
                path = self.get_cache_path()
                if not (os.path.isdir(path) and os.access(path, os.R_OK | os.X_OK)):
                    raise

    class _SetupCacheImpl(_CacheImpl):
        _locator_classes = [*_LOCATORS_BEFORE, _SetupCacheLocator, *_LOCATORS_AFTER]

    class _SetupCache(_FunctionCache):
        """A function's cache that may be read-only: what cannot be saved stays in this process."""

        _impl_class = _SetupCacheImpl

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except OSError:
                pass


def kernel(fn: Callable[..., Any]) -> Any:
    """``numba.njit(nogil=True)`` with the cache described in the module docstring (never "no locator")."""
    if _numba_caching is None:  # pragma: no cover - another numba
        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError:  # no cache location: compiled for this process
            return numba.njit(nogil=True)(fn)
    dispatcher = numba.njit(nogil=True)(fn)
    try:
        dispatcher._cache = _SetupCache(fn)  # what Dispatcher.enable_caching does with numba's FunctionCache
    except RuntimeError:  # no location at all: compiled for this process
        pass
    return dispatcher
