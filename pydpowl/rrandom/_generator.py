"""``RRandom``: R's default random streams after ``set.seed``, bit for bit."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _exp, _gamma, _normal, _sample, _student, _uniform
from ._mt import WordStream, coerce_seed, seed_key, state_from_r, state_to_r
from ._params import as_param, as_shape, as_size, check_count

__all__ = ["RRandom"]

_Size = Union[None, int, Sequence[int]]


class RRandom:
    """R's default random-number streams (R >= 3.6.0), reproduced in Python.

    ``RRandom(s)`` is R after ``set.seed(s)`` with the default kinds
    ``RNGkind("Mersenne-Twister", "Inversion", "Rejection")``. Successive
    method calls consume one shared stream in R's order, so a sequence of calls
    gives exactly (bitwise) what the same sequence gives in R.

    Parameters
    ----------
    seed : int or float
        As in R's ``set.seed``: doubles are truncated toward zero; the value
        must lie in ``[-2147483647, 2147483647]``.

    Attributes
    ----------
    random_seed : numpy.ndarray of int32, shape (626,)
        R's ``.Random.seed`` for the current position (see :meth:`get_state`).
    words_used : int
        32-bit Mersenne-Twister words consumed since the last seeding or
        state load (diagnostics).

    See Also
    --------
    RRandom.from_r_state : continue from a ``.Random.seed`` saved in R.

    Notes
    -----
    **R functions** (R's argument names and recycling of parameter vectors):
    :meth:`runif`, :meth:`rnorm`, :meth:`rexp`, :meth:`rgamma`, :meth:`rt`,
    :meth:`sample` and :meth:`sample_int`. Special values follow R (NaN for
    invalid parameters, no draw consumed for ``sd = 0``, ``min == max``,
    ``rate = Inf``, ``shape = 0`` ...); R's "NAs produced" warning is not
    emitted.

    **numpy.random.Generator subset**, so that an ``RRandom`` can be passed
    where a Generator is expected (``random_state=``/``rng=``). Each maps to
    one R call, with numpy's argument names; values fill the requested shape
    in C (row-major) order:

    ====================================  =========================================
    method                                R equivalent
    ====================================  =========================================
    ``random(size)``                      ``runif(n)``
    ``uniform(low, high, size)``          ``runif(n, low, high)``
    ``standard_normal(size)``             ``rnorm(n)``
    ``normal(loc, scale, size)``          ``rnorm(n, loc, scale)``
    ``standard_exponential(size)``        ``rexp(n)``
    ``exponential(scale, size)``          ``rexp(n, rate = 1/scale)`` (scale used as is)
    ``gamma(shape, scale, size)``         ``rgamma(n, shape, scale = scale)``
    ``standard_gamma(shape, size)``       ``rgamma(n, shape)``
    ``standard_t(df, size)``              ``rt(n, df)``
    ``integers(low, high, size)``         ``low - 1 + sample.int(high - low, n, TRUE)``
    ``choice(a, size, replace, p)``       ``a[sample.int(length(a), n, replace, p)]``
    ``permutation(x)``                    ``sample.int(x) - 1`` or ``x[sample.int(nrow(x)), ]``
    ====================================  =========================================

    ``gamma`` passes ``scale`` straight to R's sampler, exactly like R's
    ``rgamma(n, shape, scale = scale)``; ``rgamma(n, shape, rate = r)`` uses
    ``scale = 1/r`` computed in floating point, as R's wrapper does.
    ``exponential`` likewise multiplies by ``scale`` directly, which equals
    R's ``rexp(n, rate = 1/scale)`` whenever ``1/(1/scale) == scale``.
    Parameter checks follow R, not numpy (e.g. a negative ``scale`` gives NaN
    rather than an error). ``size=None`` with scalar parameters returns a
    Python scalar, as numpy does.

    **Seeds are for reproduction, not for releases.** A seeded stream is
    fully predictable: use it to replicate an R run (tests, validation), never
    to add the noise of a production differentially private release.

    Examples
    --------
    >>> rng = RRandom(42)                    # R: set.seed(42)
    >>> rng.rnorm(3)                         # R: rnorm(3)
    array([ 1.37095845, -0.56469817,  0.36312841])
    """

    def __init__(self, seed: Union[int, float]) -> None:
        self.set_seed(seed)

    # ------------------------------------------------------------------ state
    def _load(self, key: NDArray[np.uint32], pos: int, r_vec: NDArray[np.int32],
              seed: Optional[int]) -> None:
        stream = getattr(self, "_stream", None)
        if stream is None:
            self._stream: WordStream = WordStream(key, pos)
        else:
            stream.reset(key, pos)
        self._pristine = r_vec  # what R shows before the first draw
        self._seed = seed

    def set_seed(self, seed: Union[int, float]) -> None:
        """Reseed as R's ``set.seed(seed)`` (see the class docstring for the rules)."""
        value = coerce_seed(seed)
        key = seed_key(value)
        self._load(key, 624, state_to_r(key, 624), value)

    @classmethod
    def from_r_state(cls, state: ArrayLike) -> "RRandom":
        """A generator positioned at an R ``.Random.seed``.

        Parameters
        ----------
        state : array-like of int, length 626
            R's ``.Random.seed`` (kind code 10403). R's load-time rules apply:
            ``mti <= 0`` means 624 (twist first) and ``mti == 625`` triggers R's
            legacy ``sgenrand(4357)`` initialisation at the next draw.

        Returns
        -------
        RRandom

        Raises
        ------
        ValueError
            If the vector cannot be R's Mersenne-Twister state (see
            :meth:`set_state`).
        """
        self = cls.__new__(cls)
        self.set_state(state)
        return self

    def set_state(self, state: ArrayLike) -> None:
        """Load an R ``.Random.seed`` vector (see :meth:`from_r_state`).

        Raises
        ------
        ValueError
            If the length is not 626, the kind code is not 10403, a value does
            not fit in 32 bits, or all 624 words are zero (R would reseed from
            the clock).
        """
        key, pos, r_vec = state_from_r(state)
        self._load(key, pos, r_vec, None)

    def get_state(self) -> NDArray[np.int32]:
        """R's ``.Random.seed`` at the current position (int32, length 626).

        ``c(10403, mti, mt[0..623])``, exactly what R holds after the same calls.
        """
        if self._stream.words_used == 0:
            return self._pristine.copy()
        key, pos = self._stream.state()
        return state_to_r(key, pos)

    @property
    def random_seed(self) -> NDArray[np.int32]:
        """R's ``.Random.seed`` at the current position (see :meth:`get_state`)."""
        return self.get_state()

    @property
    def words_used(self) -> int:
        """32-bit words consumed since the last seeding or state load."""
        return self._stream.words_used

    def __repr__(self) -> str:
        origin = f"seed={self._seed}" if self._seed is not None else "from_r_state"
        return f"RRandom({origin}, words_used={self.words_used})"

    # ------------------------------------------------------------ R functions
    def runif(self, n: int, min: ArrayLike = 0.0, max: ArrayLike = 1.0) -> NDArray[np.float64]:
        """R's ``runif(n, min, max)``.

        Parameters
        ----------
        n : int
            Number of values, ``>= 0``.
        min, max : float or array-like of float, default=0.0, 1.0
            Recycled to length ``n``. ``min == max`` gives ``min`` without a
            draw; non-finite ends or ``max < min`` give NaN without a draw.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
        """
        n = check_count("n", n)
        return _uniform.runif(self._stream, n, as_param("min", min), as_param("max", max))

    def rnorm(self, n: int, mean: ArrayLike = 0.0, sd: ArrayLike = 1.0) -> NDArray[np.float64]:
        """R's ``rnorm(n, mean, sd)`` (Inversion: two uniforms per value).

        Parameters
        ----------
        n : int
            Number of values, ``>= 0``.
        mean, sd : float or array-like of float, default=0.0, 1.0
            Recycled to length ``n``. ``sd == 0`` or infinite ``mean`` gives
            ``mean`` without a draw; NaN ``mean``, ``sd < 0`` or non-finite
            ``sd`` gives NaN without a draw.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
        """
        n = check_count("n", n)
        return _normal.rnorm(self._stream, n, as_param("mean", mean), as_param("sd", sd))

    def rexp(self, n: int, rate: ArrayLike = 1.0) -> NDArray[np.float64]:
        """R's ``rexp(n, rate)``: ``(1/rate) * exp_rand()`` per value.

        Parameters
        ----------
        n : int
            Number of values, ``>= 0``.
        rate : float or array-like of float, default=1.0
            Recycled to length ``n``. ``rate = Inf`` gives 0 without a draw;
            ``rate <= 0`` or NaN gives NaN without a draw.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
        """
        n = check_count("n", n)
        rate_v = as_param("rate", rate)
        with np.errstate(divide="ignore"):
            scale = 1.0 / rate_v  # R's wrapper: rexp(n, 1/rate)
        return _exp.rexp(self._stream, n, scale)

    def rgamma(
        self,
        n: int,
        shape: ArrayLike,
        rate: Optional[ArrayLike] = None,
        scale: Optional[ArrayLike] = None,
    ) -> NDArray[np.float64]:
        """R's ``rgamma(n, shape, rate = 1, scale = 1/rate)``.

        Parameters
        ----------
        n : int
            Number of values, ``>= 0``.
        shape : float or array-like of float
            Recycled to length ``n``. ``shape < 1`` uses algorithm GS and
            ``shape >= 1`` (including 1) algorithm GD, as R.
        rate : float or array-like of float, optional
            Default 1. R computes ``scale = 1/rate`` and samples with that scale.
        scale : float or array-like of float, optional
            Passed to the sampler unchanged. Give ``rate`` or ``scale``, not
            both (R accepts both only if ``rate * scale == 1`` to 1e-15, with a
            warning).

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            Per value: NaN if a parameter is NaN; 0 (no draw) if shape or scale
            is 0; NaN (no draw) if either is negative; ``inf`` (no draw) if
            either is infinite.
        """
        n = check_count("n", n)
        shape_v = as_param("shape", shape)
        if rate is not None and scale is not None:
            rate_v, scale_v = as_param("rate", rate), as_param("scale", scale)
            if rate_v.shape[0] != 1 or scale_v.shape[0] != 1 or not (
                abs(rate_v[0] * scale_v[0] - 1.0) < 1e-15
            ):
                raise ValueError(
                    "specify rate or scale but not both (they must satisfy rate * scale == 1)."
                )
            warnings.warn("specify 'rate' or 'scale' but not both", UserWarning, stacklevel=2)
        elif scale is not None:
            scale_v = as_param("scale", scale)
        else:
            rate_v = as_param("rate", 1.0 if rate is None else rate)
            with np.errstate(divide="ignore"):
                scale_v = 1.0 / rate_v
        return _gamma.rgamma(self._stream, n, shape_v, scale_v)

    def rt(self, n: int, df: ArrayLike) -> NDArray[np.float64]:
        """R's ``rt(n, df)`` (central t): ``norm_rand() / sqrt(rchisq(df) / df)`` per value.

        Parameters
        ----------
        n : int
            Number of values, ``>= 0``.
        df : float or array-like of float
            Degrees of freedom, recycled to length ``n``. ``df = Inf`` gives a
            standard normal; NaN or ``df <= 0`` gives NaN without a draw.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)

        Notes
        -----
        Per value R draws the normal first, then ``rgamma(1, df / 2, scale = 2)``.
        """
        n = check_count("n", n)
        return _student.rt(self._stream, n, as_param("df", df))

    def sample_int(
        self,
        n: float,
        size: Optional[float] = None,
        replace: bool = False,
        prob: Optional[ArrayLike] = None,
    ) -> NDArray[np.int64]:
        """R's ``sample.int(n, size = n, replace = FALSE, prob = NULL)``: 1-based.

        Parameters
        ----------
        n : int or float
            Population size; R's rules (truncation where an integer is needed,
            ``n <= 4.5e15``).
        size : int or float, optional
            Number of draws (default ``n``); truncated toward zero as in R.
        replace : bool, default=False
        prob : array-like of float, optional
            Weights of length ``n``; R normalises them by the sum of the
            positive entries.

        Returns
        -------
        numpy.ndarray of int64, shape (size,)
            Values in ``1..n``. R returns doubles when ``n > 2^31 - 1``; the
            values are the same.

        Notes
        -----
        As in R, the hash algorithm is used when ``n > 1e7``, ``replace`` is
        False, ``prob`` is None and ``size <= n/2``.
        """
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Real):
            raise TypeError(f"n must be a number, got {type(n).__name__}.")
        dn = float(n)
        if not (math.isfinite(dn) and dn >= 0):
            raise ValueError(f"n must be finite and in [0, 4.5e15], got n={n!r}.")
        k = as_size("size", dn if size is None else size)
        if not isinstance(replace, (bool, np.bool_)):
            raise TypeError(f"replace must be True or False, got {type(replace).__name__}.")
        p = None if prob is None else as_param("prob", prob)
        return _sample.sample_int(self._stream, dn, k, bool(replace), p)

    def sample(
        self,
        x: Any,
        size: Optional[float] = None,
        replace: bool = False,
        prob: Optional[ArrayLike] = None,
    ) -> NDArray[Any]:
        """R's ``sample(x, size, replace = FALSE, prob = NULL)``.

        Parameters
        ----------
        x : scalar or 1-D array-like
            A single finite number ``>= 1`` means ``1:x`` (R's dispatch, with
            ``size`` defaulting to ``x``); anything else is a population of
            ``len(x)`` elements (``size`` defaulting to ``len(x)``).
        size : int or float, optional
        replace : bool, default=False
        prob : array-like of float, optional
            Weights, one per population element.

        Returns
        -------
        numpy.ndarray
            ``sample_int(x, ...)`` (int64) in the first case, otherwise the
            chosen elements of ``x`` (its dtype).
        """
        arr = np.asarray(x)
        if arr.ndim > 1:
            raise ValueError(f"x must be a scalar or 1-D, got shape {arr.shape}.")
        is_number = arr.dtype.kind in "iuf"  # R's is.numeric is FALSE for logicals
        if arr.size == 1 and is_number:
            v = float(arr.reshape(-1)[0])
            if math.isfinite(v) and v >= 1:
                return self.sample_int(v, size=size, replace=replace, prob=prob)
        pop = arr.reshape(-1)
        idx = self.sample_int(pop.shape[0], size=size, replace=replace, prob=prob)
        return pop[idx - 1]

    # ---------------------------------------------- numpy.random.Generator API
    def _numpy_style(
        self, fn: Callable[..., NDArray[Any]], size: _Size, *params: ArrayLike
    ) -> Any:
        arrs = [np.asarray(p, dtype=np.float64) for p in params]
        shape = as_shape(size)
        if shape is None:
            shape = np.broadcast_shapes(*(a.shape for a in arrs)) if arrs else ()
        elif arrs:
            try:
                np.broadcast_shapes(shape, *(a.shape for a in arrs))
            except ValueError:
                raise ValueError(
                    f"parameters of shapes {[a.shape for a in arrs]} cannot be broadcast "
                    f"to size={shape}."
                ) from None
        count = int(np.prod(shape, dtype=np.int64))
        flat = [a.reshape(1) if a.size == 1 else np.broadcast_to(a, shape).ravel() for a in arrs]
        out = fn(count, *flat)
        if size is None and shape == ():
            return out[0].item()
        return out.reshape(shape)

    def random(self, size: _Size = None) -> Any:
        """Uniforms in (0, 1): R's ``runif(n)``."""
        return self._numpy_style(lambda n: self.runif(n), size)

    def uniform(self, low: ArrayLike = 0.0, high: ArrayLike = 1.0, size: _Size = None) -> Any:
        """R's ``runif(n, low, high)`` (``high < low`` gives NaN, as in R)."""
        return self._numpy_style(lambda n, a, b: self.runif(n, a, b), size, low, high)

    def standard_normal(self, size: _Size = None) -> Any:
        """R's ``rnorm(n)``."""
        return self._numpy_style(lambda n: self.rnorm(n), size)

    def normal(self, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0, size: _Size = None) -> Any:
        """R's ``rnorm(n, loc, scale)``."""
        return self._numpy_style(lambda n, m, s: self.rnorm(n, m, s), size, loc, scale)

    def standard_exponential(self, size: _Size = None) -> Any:
        """R's ``rexp(n)``."""
        return self._numpy_style(lambda n: self.rexp(n), size)

    def exponential(self, scale: ArrayLike = 1.0, size: _Size = None) -> Any:
        """``scale * exp_rand()``: R's ``rexp(n, 1/scale)`` with ``scale`` used as is."""
        return self._numpy_style(
            lambda n, s: _exp.rexp(self._stream, check_count("n", n), s), size, scale
        )

    def gamma(self, shape: ArrayLike, scale: ArrayLike = 1.0, size: _Size = None) -> Any:
        """R's ``rgamma(n, shape, scale = scale)`` (equivalently ``rate = 1/scale``)."""
        return self._numpy_style(
            lambda n, a, s: self.rgamma(n, a, scale=s), size, shape, scale
        )

    def standard_gamma(self, shape: ArrayLike, size: _Size = None) -> Any:
        """R's ``rgamma(n, shape)``."""
        return self._numpy_style(lambda n, a: self.rgamma(n, a), size, shape)

    def standard_t(self, df: ArrayLike, size: _Size = None) -> Any:
        """R's ``rt(n, df)``."""
        return self._numpy_style(lambda n, d: self.rt(n, d), size, df)

    def integers(
        self,
        low: int,
        high: Optional[int] = None,
        size: _Size = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
    ) -> Any:
        """Integers in ``[low, high)``: R's ``low - 1 + sample.int(high - low, n, TRUE)``.

        Only scalar ``low``/``high`` are supported. ``integers(m)`` draws from
        ``[0, m)``; ``endpoint=True`` includes ``high``.
        """
        for name, v in (("low", low), ("high", high)):
            if v is not None and (
                isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral)
            ):
                raise TypeError(f"{name} must be an integer, got {type(v).__name__}.")
        lo, hi = (0, int(low)) if high is None else (int(low), int(high))
        width = hi - lo + (1 if endpoint else 0)
        if width < 1 or width > 4.5e15:
            raise ValueError(
                f"the range must hold between 1 and 4.5e15 integers, got low={lo}, "
                f"high={hi}, endpoint={endpoint}."
            )
        shape = as_shape(size)
        count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        draws = _sample.unif_index_many(self._stream, float(width), count)
        out = (draws.astype(np.int64) + lo).astype(dtype)
        return out[0].item() if shape is None else out.reshape(shape)

    def choice(
        self,
        a: Any,
        size: _Size = None,
        replace: bool = True,
        p: Optional[ArrayLike] = None,
    ) -> Any:
        """numpy's ``choice`` through R's ``sample.int`` (1-based indices shifted to 0).

        ``a`` is an int (population ``0..a-1``) or a 1-D array. ``p`` is
        normalised as R does (no check that it sums to 1).
        """
        if isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_)):
            pop = None
            n = int(a)
        else:
            pop = np.asarray(a)
            if pop.ndim != 1:
                raise ValueError(f"a must be an int or a 1-D array, got shape {pop.shape}.")
            n = pop.shape[0]
        shape = as_shape(size)
        count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        if n < 1 and count > 0:
            raise ValueError(f"a must be a positive int or a non-empty array, got {n} elements.")
        idx = self.sample_int(n, size=count, replace=replace, prob=p) - 1
        out = idx if pop is None else pop[idx]
        return out[0].item() if shape is None else out.reshape(shape)

    def permutation(self, x: Any) -> NDArray[Any]:
        """A random permutation through R's ``sample.int``.

        ``x`` an int: ``sample.int(x) - 1`` (a permutation of ``0..x-1``);
        ``x`` an array: its rows (first axis) in the order ``sample.int(nrow)``,
        a new array, as numpy's ``Generator.permutation`` returns.
        """
        if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
            n = int(x)
            if n < 0:
                raise ValueError(f"x must be a non-negative int or an array, got x={n}.")
            return self.sample_int(n, size=n) - 1
        arr = np.asarray(x)
        if arr.ndim == 0:
            raise ValueError("x must be an int or an array with at least one dimension, got a 0-d array.")
        return arr[self.sample_int(arr.shape[0], size=arr.shape[0]) - 1]
