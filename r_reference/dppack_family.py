"""DPpack's ``svmDP``, ``LogisticRegressionDP``, ``LinearRegressionDP`` and tuning functions, called from numpy.

:func:`fit_dppack_model` runs MANY fits of one DPpack model in ONE R call: for
each seed a fresh model object (as a fresh script would build it),
``set.seed(seed)``, ``fit``, then its ``coeff``, the ``.Random.seed`` left
behind and, for the Gaussian kernel, the ``prefilter`` it drew. With
``return_data`` it also returns the data exactly as DPpack's optimiser sees
them (DPpack's own private ``preprocess_data`` after ``set.seed(seeds[0])``:
for the Gaussian kernel that draws the same features as the first fit).
:func:`tune_dppack` runs ``tune_classification_model`` /
``tune_linear_regression_model``.

Conventions at the boundary: labels 0/1 as DPpack takes them; bounds passed by
name; DPpack's errors come back as :class:`~r_reference.RError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._session import call_r, require_packages

__all__ = ["FamilyData", "FamilyFits", "fit_dppack_model", "tune_dppack", "dppack_exponential_mechanism",
           "dppack_random_features"]

_R_MAKE = r"""
  make <- function() {
    if (cls == "svmDP") {
      DPpack::svmDP$new("l2", eps, gamma, perturbation.method = pm, kernel = kernel,
                        D = if (D > 0) D else NULL, kernel.param = if (is.na(kp)) NULL else kp,
                        huber.h = huber_h)
    } else if (cls == "LogisticRegressionDP") {
      DPpack::LogisticRegressionDP$new("l2", eps, gamma, perturbation.method = pm)
    } else {
      DPpack::LinearRegressionDP$new("l2", eps, delta, gamma)
    }
  }
  X <- as.data.frame(X)
  y <- as.numeric(y)
  w <- as.numeric(w)
  upper <- as.numeric(upper)
  lower <- as.numeric(lower)
  fit1 <- function(m) {
    if (has_w) m$fit(X, y, upper.bounds = upper, lower.bounds = lower, add.bias = add_bias,
                     weights = w, weights.upper.bound = wub)
    else m$fit(X, y, upper.bounds = upper, lower.bounds = lower, add.bias = add_bias)
  }
"""

_R_FIT = r"""
function(cls, X, y, w, has_w, upper, lower, add_bias, eps, delta, gamma, pm, kernel, D, kp, huber_h, wub,
         seeds, return_data, predict_X) {
""" + _R_MAKE + r"""
  K <- length(seeds)
  coef <- NULL
  states <- matrix(0L, K, 626)
  pre <- list()
  preds <- NULL
  secs <- numeric(K)
  for (k in seq_len(K)) {
    m <- make()
    set.seed(seeds[k])
    t0 <- Sys.time()
    fit1(m)
    secs[k] <- as.numeric(Sys.time()) - as.numeric(t0)
    states[k, ] <- .Random.seed
    cf <- as.numeric(m$coeff)
    if (is.null(coef)) coef <- matrix(NA_real_, K, length(cf))
    coef[k, ] <- cf
    if (cls == "svmDP" && kernel == "Gaussian") pre[[k]] <- m$prefilter
    if (nrow(predict_X) > 0) {
      PX <- as.data.frame(predict_X)
      pv <- if (cls == "LinearRegressionDP") m$predict(PX, add_bias)
            else m$predict(PX, add_bias, raw.value = TRUE)
      if (is.null(preds)) preds <- matrix(NA_real_, K, length(pv))
      preds[k, ] <- as.numeric(pv)
    }
  }
  data <- NULL
  if (return_data) {
    m <- make()
    if (cls == "svmDP" && kernel == "Gaussian") {
      m$kernel.param <- if (is.na(kp)) 1 / ncol(X) else kp
      m$sampling <- DPpack::generate.sampling(m$kernel.param)
    }
    set.seed(seeds[1])
    priv <- m$.__enclos_env__$private
    prep <- if (cls == "svmDP" && has_w) {
      priv$preprocess_data(X, y, upper, lower, add_bias, weights = w, weights.upper.bound = wub)
    } else priv$preprocess_data(X, y, upper, lower, add_bias)
    data <- list(Z = prep$X, y = as.numeric(prep$y),
                 w = if (is.null(prep$weights)) numeric(0) else as.numeric(prep$weights),
                 scale1 = if (is.null(prep$scale1)) numeric(0) else as.numeric(prep$scale1),
                 scale2 = if (is.null(prep$scale2)) NA_real_ else as.numeric(prep$scale2),
                 scale_X = if (is.null(prep$scale.X)) numeric(0) else as.numeric(prep$scale.X),
                 scale_y = if (is.null(prep$scale.y)) NA_real_ else as.numeric(prep$scale.y),
                 shift_y = if (is.null(prep$shift.y)) NA_real_ else as.numeric(prep$shift.y),
                 prefilter = if (is.null(m$prefilter)) matrix(0, 0, 0) else m$prefilter)
  }
  list(coef = coef, states = states, prefilter = if (length(pre)) do.call(rbind, pre) else matrix(0, 0, 0),
       seconds = secs, data = data,
       preds = if (is.null(preds)) matrix(0, 0, 0) else preds)
}
"""


@dataclass(frozen=True)
class FamilyData:
    """The data as DPpack's optimiser sees them, and its scales.

    Attributes
    ----------
    Z : ndarray of shape (n, d)
        Scaled rows (Gaussian kernel: scaled random features).
    y : ndarray of shape (n,)
        svmDP: labels in {-1, 1}; LogisticRegressionDP: 0/1; LinearRegressionDP: the scaled target.
    w : ndarray or None
        svmDP's clipped weights.
    scale : ndarray of shape (d,)
        Multiply an original-space ``coeff`` by it to get the scaled one (``scale1 * scale2`` for the
        classifiers; ``scale.X / scale.y`` for regression after subtracting ``shift.y`` from the intercept).
    shift_y : float
        LinearRegressionDP's ``shift.y`` (0 otherwise).
    prefilter : ndarray or None
        The random features drawn (Gaussian kernel).
    """

    Z: NDArray[np.float64]
    y: NDArray[np.float64]
    w: Optional[NDArray[np.float64]]
    scale: NDArray[np.float64]
    shift_y: float
    prefilter: Optional[NDArray[np.float64]]

    def to_scaled(self, coeff: NDArray[np.float64], fit_intercept: bool) -> NDArray[np.float64]:
        """DPpack's ``coeff`` (rows) mapped to the scaled space."""
        c = np.array(coeff, dtype=np.float64, copy=True, ndmin=2)
        if self.shift_y and fit_intercept:
            c[:, 0] -= self.shift_y
        return c * self.scale


@dataclass(frozen=True)
class FamilyFits:
    """K fits of one DPpack model on the same data, one row per seed.

    Attributes
    ----------
    coef : ndarray of shape (K, d)
        DPpack's ``coeff``.
    random_seed : ndarray of shape (K, 626)
        ``.Random.seed`` right after each fit.
    prefilter : list of ndarray or None
        Gaussian kernel: each fit's ``prefilter``.
    seeds : ndarray of shape (K,)
    fit_seconds : ndarray of shape (K,)
        Wall time of each ``fit`` (``Sys.time`` in R).
    predictions : ndarray of shape (K, m) or None
        ``predict(predict_X, add.bias, raw.value = TRUE)`` of each fit.
    data : FamilyData or None
    """

    coef: NDArray[np.float64]
    random_seed: NDArray[np.int32]
    prefilter: Optional[List[NDArray[np.float64]]]
    seeds: NDArray[np.int64]
    fit_seconds: NDArray[np.float64]
    predictions: Optional[NDArray[np.float64]]
    data: Optional[FamilyData] = None


def _f64(x: ArrayLike) -> NDArray[np.float64]:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64))


def fit_dppack_model(cls: str, X: ArrayLike, y: ArrayLike, *, upper: ArrayLike, lower: ArrayLike,
                     add_bias: bool = False, eps: float, gamma: float, delta: float = 0.0,
                     perturbation: str = "objective", kernel: str = "linear", D: Optional[int] = None,
                     kernel_param: Optional[float] = None, huber_h: float = 0.5,
                     weights: Optional[ArrayLike] = None, weights_upper_bound: Optional[float] = None,
                     seeds: Sequence[int] = (1,), return_data: bool = False,
                     predict_X: Optional[ArrayLike] = None) -> FamilyFits:
    """Fit DPpack's ``cls`` once per seed in one R call.

    Parameters
    ----------
    cls : {"svmDP", "LogisticRegressionDP", "LinearRegressionDP"}
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
        0/1 labels for the classifiers, the target for regression.
    upper, lower : array-like
        DPpack's ``upper.bounds`` / ``lower.bounds`` (length p, or p + 1 for regression).
    add_bias : bool
    eps, gamma, delta : float
    perturbation : {"objective", "output"}
    kernel : {"linear", "Gaussian"}
    D : int, optional
    kernel_param : float, optional
    huber_h : float
    weights, weights_upper_bound : optional
        svmDP only.
    seeds : sequence of int
    return_data : bool
    predict_X : array-like, optional
        Rows to predict (raw values) with each fit.
    """
    if cls not in ("svmDP", "LogisticRegressionDP", "LinearRegressionDP"):
        raise ValueError(f"cls must be svmDP, LogisticRegressionDP or LinearRegressionDP, got {cls!r}.")
    require_packages("DPpack")
    X = _f64(X)
    n = X.shape[0]
    has_w = weights is not None
    seeds_arr = np.asarray(seeds, dtype=np.int32)
    PX = np.zeros((0, X.shape[1])) if predict_X is None else _f64(predict_X)
    res = call_r(_R_FIT, cls, X, _f64(y), _f64(weights) if weights is not None else np.ones(n), has_w, _f64(upper),
                 _f64(lower), bool(add_bias), float(eps), float(delta), float(gamma), perturbation, kernel, int(D or 0),
                 float("nan") if kernel_param is None else float(kernel_param), float(huber_h),
                 float("nan") if weights_upper_bound is None else float(weights_upper_bound), seeds_arr,
                 bool(return_data), PX)
    coef = np.array(res["coef"], dtype=np.float64, copy=True, ndmin=2)
    states = np.array(res["states"], dtype=np.int64, copy=True).astype(np.int32)
    pre = np.array(res["prefilter"], dtype=np.float64, copy=True)
    prefilter = list(pre.reshape(len(seeds_arr), -1, pre.shape[1])) if pre.size else None
    preds = np.array(res["preds"], dtype=np.float64, copy=True)
    data = None
    if return_data:
        dd = res["data"]
        w = np.array(dd["w"], dtype=np.float64, copy=True)
        if cls == "LinearRegressionDP":
            scale = np.array(dd["scale_X"], dtype=np.float64) / float(np.asarray(dd["scale_y"]).ravel()[0])
            shift = float(np.asarray(dd["shift_y"]).ravel()[0])
        else:
            scale = np.array(dd["scale1"], dtype=np.float64) * float(np.asarray(dd["scale2"]).ravel()[0])
            shift = 0.0
        P = np.array(dd["prefilter"], dtype=np.float64, copy=True)
        data = FamilyData(Z=np.array(dd["Z"], dtype=np.float64, copy=True, ndmin=2),
                          y=np.array(dd["y"], dtype=np.float64, copy=True).ravel(),
                          w=w if w.size else None, scale=scale, shift_y=shift,
                          prefilter=P if P.size else None)
    return FamilyFits(coef=coef, random_seed=states, prefilter=prefilter, seeds=seeds_arr.astype(np.int64),
                      fit_seconds=np.array(res["seconds"], dtype=np.float64, copy=True).ravel(),
                      predictions=preds if preds.size else None, data=data)


_R_TUNE = r"""
function(kind, cls, eps, gamma, pm, kernel, D, delta, X, y, w, has_w, upper, lower, add_bias, wub, seed) {
  X <- as.data.frame(X)
  y <- as.numeric(y)
  w <- as.numeric(w)
  specs <- lapply(seq_along(cls), function(i) list(cls = cls[i], eps = eps[i], gamma = gamma[i], pm = pm[i],
                                                    kernel = kernel[i], D = D[i], delta = delta[i]))
  models <- lapply(specs, function(s) {
    if (s$cls == "svmDP") DPpack::svmDP$new("l2", s$eps, s$gamma, perturbation.method = s$pm,
                                            kernel = s$kernel, D = if (s$D > 0) s$D else NULL)
    else if (s$cls == "LogisticRegressionDP") DPpack::LogisticRegressionDP$new("l2", s$eps, s$gamma,
                                                                              perturbation.method = s$pm)
    else DPpack::LinearRegressionDP$new("l2", s$eps, s$delta, s$gamma)
  })
  upper <- as.numeric(upper)
  lower <- as.numeric(lower)
  set.seed(seed)
  best <- if (kind == "classification") {
    if (has_w) DPpack::tune_classification_model(models, X, y, upper, lower, add_bias, weights = w,
                                                 weights.upper.bound = wub)
    else DPpack::tune_classification_model(models, X, y, upper, lower, add_bias)
  } else DPpack::tune_linear_regression_model(models, X, y, upper, lower, add_bias)
  index <- which(vapply(models, function(m) identical(m, best), logical(1)))[1]
  list(index = index, coeff = as.numeric(best$coeff),
       all = lapply(models, function(m) as.numeric(m$coeff)), seed = .Random.seed)
}
"""


def tune_dppack(kind: str, specs: Sequence[Dict[str, Any]], X: ArrayLike, y: ArrayLike, *, upper: ArrayLike,
                lower: ArrayLike, add_bias: bool = False, weights: Optional[ArrayLike] = None,
                weights_upper_bound: Optional[float] = None, seed: int = 1) -> Dict[str, Any]:
    """DPpack's ``tune_classification_model`` (``kind="classification"``) or ``tune_linear_regression_model``.

    ``specs``: dicts with ``cls``, ``eps``, ``gamma`` and ``pm``, ``kernel``, ``D`` (svmDP, LogisticRegressionDP)
    or ``delta`` (LinearRegressionDP). Returns ``index`` (1-based), ``coeff`` of the selected model,
    ``all`` (every candidate's coeff) and ``random_seed`` after the call.
    """
    require_packages("DPpack")
    X = _f64(X)
    col = {
        "cls": np.array([s["cls"] for s in specs], dtype=str),
        "eps": np.array([float(s["eps"]) for s in specs]),
        "gamma": np.array([float(s["gamma"]) for s in specs]),
        "pm": np.array([s.get("pm", "objective") for s in specs], dtype=str),
        "kernel": np.array([s.get("kernel", "linear") for s in specs], dtype=str),
        "D": np.array([int(s.get("D") or 0) for s in specs], dtype=np.int32),
        "delta": np.array([float(s.get("delta", 0.0)) for s in specs]),
    }
    has_w = weights is not None
    res = call_r(_R_TUNE, kind, col["cls"], col["eps"], col["gamma"], col["pm"], col["kernel"], col["D"],
                 col["delta"], X, _f64(y), _f64(weights) if weights is not None else np.ones(X.shape[0]), has_w,
                 _f64(upper), _f64(lower), bool(add_bias),
                 float("nan") if weights_upper_bound is None else float(weights_upper_bound), int(seed))
    return {"index": int(np.asarray(res["index"]).ravel()[0]),
            "coeff": np.array(res["coeff"], dtype=np.float64, copy=True),
            "all": [np.array(c, dtype=np.float64, copy=True) for c in res["all"]],
            "random_seed": np.array(res["seed"], dtype=np.int64).astype(np.int32)}


_R_EM = r"""function(utility, eps, sens, seed) {
  set.seed(seed)
  k <- DPpack::ExponentialMechanism(utility, eps, sens)
  list(k = k, seed = .Random.seed)
}"""


def dppack_exponential_mechanism(utility: ArrayLike, eps: float, sensitivity: float, seed: int) -> Dict[str, Any]:
    """DPpack's ``ExponentialMechanism(utility, eps, sensitivity)`` after ``set.seed(seed)`` (index 1-based)."""
    require_packages("DPpack")
    res = call_r(_R_EM, _f64(utility), float(eps), float(sensitivity), int(seed))
    return {"index": int(np.asarray(res["k"]).ravel()[0]),
            "random_seed": np.array(res["seed"], dtype=np.int64).astype(np.int32)}


_R_RFF = r"""function(X, D, kp, seed) {
  sampling <- DPpack::generate.sampling(kp)
  set.seed(seed)
  d <- ncol(X)
  prefilter <- matrix(NaN, nrow = D, ncol = d + 1)
  for (i in 1:D) prefilter[i, ] <- sampling(d)
  m <- DPpack::svmDP$new("l2", 1, 1, kernel = "Gaussian", D = D)
  m$prefilter <- prefilter
  list(prefilter = prefilter, V = m$XtoV(X), seed = .Random.seed)
}"""


def dppack_random_features(X: ArrayLike, D: int, kernel_param: float, seed: int) -> Dict[str, Any]:
    """DPpack's ``generate.sampling`` drawn D times after ``set.seed(seed)``, and ``XtoV(X)`` with them."""
    require_packages("DPpack")
    res = call_r(_R_RFF, _f64(X), int(D), float(kernel_param), int(seed))
    return {"prefilter": np.array(res["prefilter"], dtype=np.float64, copy=True),
            "V": np.array(res["V"], dtype=np.float64, copy=True),
            "random_seed": np.array(res["seed"], dtype=np.int64).astype(np.int32)}
