"""What the mechanisms share: R-compatible streams, derived generators, R's sums, the replay warning.

Not a mechanism: the helpers every module of :mod:`pydpowl.engine.mechanisms`
needs to draw from a numpy Generator or an R-compatible stream
(:class:`pydpowl.RRandom`) in DPpack's order and arithmetic.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...exceptions import PrivacyLeakWarning

__all__ = ["is_r_stream", "derived_generator", "warn_reproduce_dppack", "check_tol"]


def check_tol(tol: Any) -> float:
    """A solver tolerance in ``[0, inf)``."""
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.floating, np.integer)) \
            or not (0 <= float(tol) < np.inf):
        raise ValueError(f"tol must be in [0, inf), got tol={tol!r}.")
    return float(tol)


def is_r_stream(rng: Any) -> bool:
    """True for an R-compatible stream (:class:`pydpowl.RRandom`-like: ``rgamma`` and ``rnorm``)."""
    return callable(getattr(rng, "rgamma", None)) and callable(getattr(rng, "rnorm", None))


def r_sum(values: NDArray[np.float64]) -> float:
    """R's ``sum``: left to right in long double, stored as a double."""
    acc = np.longdouble(0.0)
    for v in values:
        acc += np.longdouble(v)
    return float(acc)


def r_cumsum(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """R's ``cumsum``: accumulated in long double, each partial sum stored as a double."""
    acc = np.longdouble(0.0)
    out = np.empty_like(values)
    for i, v in enumerate(values):
        acc += np.longdouble(v)
        out[i] = float(acc)
    return out


def r_sum_of_squares(z: NDArray[np.float64]) -> float:
    """R's ``sum(z^2)``: the squares as doubles, accumulated in long double."""
    return r_sum(z * z)


def derived_generator(rng: Any, *, domain: str) -> np.random.Generator:
    """A numpy Generator for draws that must not advance ``rng``: ``rng`` itself if it is one.

    For an R-compatible stream (anything with ``get_state()``, e.g.
    :class:`pydpowl.RRandom`) the generator is PCG64 seeded with the SHA-256
    digest of ``domain`` and the stream's current state (R's 626 integers,
    little-endian int32): a deterministic function of the state that leaves it
    untouched. The same ``set.seed`` gives the same draws (reproducible), and
    the stream's later draws are exactly those it would have made without them
    (``.Random.seed`` ends where DPpack's does). The derived draws are as secret
    as the state itself: whoever holds the state can recompute them, as they can
    recompute every draw of the stream.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    get_state = getattr(rng, "get_state", None)
    if not callable(get_state):
        raise TypeError(f"rng must be a numpy Generator or an R-compatible stream with get_state(), got "
                        f"{type(rng).__name__}.")
    state = np.ascontiguousarray(np.asarray(get_state(), dtype=np.int64).astype("<i4"))
    digest = hashlib.sha256(domain.encode("utf-8") + b"\0" + state.tobytes()).digest()
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int.from_bytes(digest, "little"))))


def warn_reproduce_dppack(estimator: str, *, extra: str = "", stacklevel: int = 2,
                          argument: str = "reproduce_dppack") -> None:
    """The :class:`PrivacyLeakWarning` of a fit with ``reproduce_dppack=True`` (validation and replay only).

    ``stacklevel`` counts from the caller of this function (2: the caller's caller); ``argument`` is the
    name the caller's user typed (R's drop-ins: ``reproduce.dppack``).
    """
    warnings.warn(
        f"{estimator}({argument}=True) reproduces DPpack 0.2.2's arithmetic and draws for validation and "
        "replay: the release is full precision (not floating-point safe: its last bits can reveal the data) and "
        "its calibration assumes an exact minimiser, which no optimiser returns (Delta omits the solver "
        "tolerance); it carries no proven privacy guarantee. Do not publish it." + (" " + extra if extra else ""),
        PrivacyLeakWarning, stacklevel=stacklevel + 1,
    )
