"""End to end against R: generate -> fit DP-OWL -> evaluate, from one seed (needs R + DPpack).

Each case is ONE R call. R runs ``set.seed(seed)``, the authors' data generator
(re-implemented in ``tests/reference/generate_data.R``), DPpack's ``svmDP``
(linear kernel, output perturbation) on the same stream, and the evaluation;
Python runs the same pipeline from ``RRandom(seed)``. What must agree:

* data (training and test sets): bit for bit;
* the noise: bit for bit. R returns the noise drawn again by this test's own R
  code from the stream position before DPpack's ``fit`` (``rgamma(1, d, rate)``
  then ``rnorm(d)``, normalised with ``sum``), and proves it is DPpack's: the
  redraw leaves ``.Random.seed`` exactly where DPpack's fit left it, and
  DPpack's released minus non-private coefficients equal it to rounding;
* the stream position (``.Random.seed``) after every step, including the
  ``epsilon = Inf`` refit, which still consumes ``rnorm(d)`` in DPpack;
* coefficients: within DPpack's optimiser tolerance, bounded by strong
  convexity, ``||theta_R - theta_py|| <= sqrt(2 (F(theta_R) - F(theta_py)) / mu)``
  with ``mu = gamma / n`` (scaled space; ``theta_py`` is certified);
* treatment assignments on the test set: identical, except where the decision
  value lies within the band that the coefficient bound allows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pydpowl import DPOWL, DPWeightedERM, HuberHingeLoss, RRandom, accuracy, empirical_value, prepare_owl
from pydpowl.datasets import make_synthetic_owl
from pydpowl.engine.solver import objective_value

#: every fit here replays DPpack bit for bit: the documented validation switch (full precision, DPpack's Delta)
pytestmark = [pytest.mark.r, pytest.mark.filterwarnings("ignore:reproduce_dppack=True")]

W = 30.0  # the authors' public weight bound
PROPENSITY = 0.5
P = 4
BOUNDS = (np.zeros(P), np.ones(P))
EPS64 = np.finfo(np.float64).eps
#: gamma for epsilon = 1 in the authors' simulation_study.R (tuned table, p = 4, no
#: negative weights; their tuning data has 10 columns, so N = 800 uses 75).
AUTHORS_GAMMA_EPS1 = {200: 150.0, 500: 115.0, 800: 75.0, 1000: 75.0}
N_TEST = 5000  # the authors' validation size

GENERATOR_R = (Path(__file__).resolve().parents[1] / "reference" / "generate_data.R").read_text()


@pytest.fixture(scope="module", autouse=True)
def _needs_dppack(require_r):
    require_r("DPpack")


def _call(source, *args):
    from r_reference._session import call_r

    res = call_r(source, *args)
    return {k: np.array(v, dtype=np.float64) for k, v in res.items()}


def _hex_diff(got, ref, label):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, f"{label}: shape {got.shape} != R's {ref.shape}"
    bad = np.flatnonzero(got.ravel() != ref.ravel())
    assert bad.size == 0, (
        f"{label}: {bad.size} of {ref.size} values differ from R; first at {bad[0]}: "
        f"{got.ravel()[bad[0]].hex()} != R {ref.ravel()[bad[0]].hex()}"
    )


def _same_state(rng, r_state, label):
    np.testing.assert_array_equal(rng.get_state(), r_state.astype(np.int64),
                                  err_msg=f".Random.seed differs from R {label}")


def _convexity_bound(theta_r, theta_py, Z, y, w, gamma):
    """sqrt(2 (F(theta_R) - F(theta_py)) / mu) + 1e-9, and the objective gap."""
    loss = HuberHingeLoss(0.5)
    f_r = objective_value(theta_r, Z, y, w, gamma=gamma, loss=loss)
    f_py = objective_value(theta_py, Z, y, w, gamma=gamma, loss=loss)
    # theta_py is the certified minimiser: R cannot be lower beyond rounding
    assert f_r >= f_py - 1e-13 * (1.0 + abs(f_py)), (
        f"F(theta_R)={f_r!r} < F(theta_py)={f_py!r}: pydpowl's solution is not the minimiser"
    )
    mu = gamma / Z.shape[0]
    return math.sqrt(2.0 * max(f_r - f_py, 0.0) / mu) + 1e-9, f_r - f_py


# --------------------------------------------------------------------- the pipeline
_PIPELINE_R = (
    "function(seed, n_train, n_test, p, eps, gamma, wub, prop) {\n" + GENERATOR_R + r"""
  state <- function() get(".Random.seed", envir = globalenv())
  set_state <- function(s) assign(".Random.seed", s, envir = globalenv())
  fit_owl <- function(e, d) {
    m <- DPpack::svmDP$new("l2", e, gamma, perturbation.method = "output")
    m$fit(as.data.frame(d$X), as.numeric(d$A > 0), upper.bounds = rep(1, p),
          lower.bounds = rep(0, p), add.bias = TRUE, weights = d$B / prop,
          weights.upper.bound = wub)
    m
  }
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
  tr <- generate_owl_data(n_train, p)
  s_data <- state()
  m <- fit_owl(eps, tr)
  s_fit <- state()
  # DPpack's noise drawn again from the same position with this test's own code
  set_state(s_data)
  k <- p + 1
  radius <- rgamma(1, k, rate = gamma * eps / (2 * wub))
  z <- rnorm(k)
  noise <- radius * (z / sqrt(sum(z^2)))
  redraw_ends_at_fit <- identical(state(), s_fit)
  # the non-private part: eps = Inf on the same data, continuing the stream
  m0 <- fit_owl(Inf, tr)
  s_inf <- state()
  set_state(s_fit)
  invisible(rnorm(k))
  inf_consumes_rnorm_k <- identical(state(), s_inf)
  set_state(s_inf)
  te <- generate_owl_data(n_test, p)
  s_end <- state()
  pred <- as.numeric(m$predict(as.data.frame(te$X), add.bias = TRUE))
  pred[pred == 0] <- -1
  hit <- pred == te$A
  prep <- m$.__enclos_env__$private$preprocess_data(
    as.data.frame(tr$X), as.numeric(tr$A > 0), rep(1, p), rep(0, p), TRUE, tr$B / prop, wub)
  list(X = tr$X, A = tr$A, B = tr$B, X_test = te$X, A_test = te$A, B_test = te$B,
       Z = prep$X, w = as.numeric(prep$weights), scale = as.numeric(prep$scale1 * prep$scale2),
       coef = as.numeric(m$coeff), coef_inf = as.numeric(m0$coeff), noise = noise,
       redraw_ends_at_fit = redraw_ends_at_fit, inf_consumes_rnorm_k = inf_consumes_rnorm_k,
       s_data = s_data, s_fit = s_fit, s_inf = s_inf, s_end = s_end, pred = pred,
       accuracy = 100 * mean(pred == sign(te$fx)), value = sum(hit * te$B / prop) / sum(hit / prop))
}""")

PIPELINE_CASES = [(0, 200), (1, 500), (-20240607, 800), (2**31 - 1, 1000), (100, 200), (42, 500),
                  (-1, 200), (7, 1000), (123456, 800), (-(2**31) + 1, 500)]


@pytest.mark.parametrize("seed, n", PIPELINE_CASES, ids=[f"seed{s}-n{n}" for s, n in PIPELINE_CASES])
def test_generate_fit_evaluate_matches_r(seed, n):
    gamma = AUTHORS_GAMMA_EPS1[n]
    r = _call(_PIPELINE_R, seed, n, N_TEST, P, 1.0, gamma, W, PROPENSITY)

    rng = RRandom(seed)
    train = make_synthetic_owl(n, random_state=rng)
    _hex_diff(train.X.to_numpy(), r["X"], "training features")
    _hex_diff(train.treatment, r["A"], "training treatments")
    _hex_diff(train.benefit, r["B"], "training benefits")
    _same_state(rng, r["s_data"], "after the training data")

    kw = dict(gamma=gamma, weights_upper_bound=W, feature_bounds=BOUNDS, keep_nonprivate=True, random_state=rng,
              reproduce_dppack=True)
    owl = DPOWL(epsilon=1.0, **kw).fit(train.X, train.treatment, train.benefit, PROPENSITY)
    _same_state(rng, r["s_fit"], "after the epsilon = 1 fit")
    assert r["redraw_ends_at_fit"][0] == 1, "R: DPpack's fit consumed more or less than rgamma(1, d) + rnorm(d)"
    _hex_diff(owl.noise_scaled_, r["noise"], "noise (scaled space)")

    used = rng.words_used
    DPOWL(epsilon=np.inf, **kw).fit(train.X, train.treatment, train.benefit, PROPENSITY)
    d = P + 1
    assert r["inf_consumes_rnorm_k"][0] == 1, "R: DPpack's eps = Inf fit does not consume exactly rnorm(d)"
    assert rng.words_used - used == 2 * d, (
        f"pydpowl's eps = Inf fit used {rng.words_used - used} words; DPpack's rnorm(d) uses {2 * d}"
    )
    _same_state(rng, r["s_inf"], "after the epsilon = Inf refit")

    test = make_synthetic_owl(N_TEST, random_state=rng)
    _hex_diff(test.X.to_numpy(), r["X_test"], "test features")
    _hex_diff(test.treatment, r["A_test"], "test treatments")
    _hex_diff(test.benefit, r["B_test"], "test benefits")
    _same_state(rng, r["s_end"], "after the test data")

    problem = prepare_owl(train.X, train.treatment, train.benefit, PROPENSITY, weights_upper_bound=W,
                          feature_bounds=BOUNDS)
    Z, y, w = problem.Z, problem.labels, problem.weights
    _hex_diff(Z, r["Z"], "scaled features (DPpack's preprocessing)")
    _hex_diff(w, r["w"], "clipped OWL weights")

    # DPpack's own release minus its non-private fit is the noise, to rounding
    theta_r = r["coef_inf"] * r["scale"]
    released_r = r["coef"] * r["scale"]
    rounding = 8 * EPS64 * (np.abs(theta_r) + np.abs(r["noise"]))
    resid = np.abs((released_r - theta_r) - r["noise"])
    assert np.all(resid <= rounding), (
        f"DPpack's released - non-private differs from the redrawn noise by {resid.max():.2e} "
        f"> rounding {rounding.max():.2e}"
    )

    bound, gap_f = _convexity_bound(theta_r, owl.nonprivate_scaled_coef_, Z, y, w, gamma)
    gap = float(np.linalg.norm(theta_r - owl.nonprivate_scaled_coef_))
    assert gap <= bound, (
        f"non-private gap ||theta_R - theta_py|| = {gap:.3e} exceeds the strong-convexity bound "
        f"{bound:.3e} (F gap {gap_f:.2e}, mu = gamma/n = {gamma / n:g})"
    )
    slack = bound + 8 * EPS64 * (np.linalg.norm(theta_r) + np.linalg.norm(r["noise"]))
    gap_rel = float(np.linalg.norm(released_r - owl.scaled_coef_))
    assert gap_rel <= slack, f"released gap {gap_rel:.3e} exceeds bound + rounding {slack:.3e}"

    pred = owl.predict(test.X)
    differ = np.flatnonzero(pred != r["pred"])
    if differ.size:
        # |f_R(x) - f_py(x)| <= ||(1, x) / scale|| * ||released_R - released_py|| (scaled space)
        xt = np.column_stack([np.ones(N_TEST), test.X.to_numpy()]) / r["scale"]
        band = np.linalg.norm(xt[differ], axis=1) * slack + 1e-12
        dec = np.abs(owl.decision_function(test.X)[differ])
        assert np.all(dec <= band), (
            f"{differ.size} of {N_TEST} test assignments differ from R and "
            f"{int((dec > band).sum())} of them have |decision| above the tolerance band "
            f"(max {dec.max():.2e} vs band {band.max():.2e})"
        )
    else:
        assert accuracy(pred, test.optimal) * 100 == pytest.approx(float(r["accuracy"][0]), abs=1e-12)
        value = empirical_value(pred, test.treatment, test.benefit, PROPENSITY)
        assert value == pytest.approx(float(r["value"][0]), rel=1e-12), "empirical value differs from R's"


# ------------------------------------------------------------ the published run
_PUBLISHED_R = (
    "function(seed, n, n_test, eps, gamma, wub) {\n" + GENERATOR_R + r"""
  fit_owl <- function(e, X, A, B) {
    m <- DPpack::svmDP$new("l2", e, gamma, perturbation.method = "output")
    m$fit(as.data.frame(X), as.numeric(A > 0), upper.bounds = rep(1, 4),
          lower.bounds = rep(0, 4), add.bias = TRUE, weights = B / 0.5,
          weights.upper.bound = wub)
    m
  }
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
  d0 <- generate_owl_data(1000, 10)         # the tuning data D0
  tr <- generate_owl_data(n, 4)             # first replicate: training data
  te <- generate_owl_data(n_test, 4)        # and its validation data
  perm <- sample(seq_len(n))                # train.model's shuffle
  m <- fit_owl(eps, tr$X[perm, , drop = FALSE], tr$A[perm], tr$B[perm])
  invisible(fit_owl(eps, tr$X, tr$A, tr$B)) # train.model's second model (noise drawn, coefficients replaced)
  s_end <- get(".Random.seed", envir = globalenv())
  m0 <- fit_owl(Inf, tr$X[perm, , drop = FALSE], tr$A[perm], tr$B[perm])
  pred <- as.numeric(m$predict(as.data.frame(te$X), add.bias = TRUE))
  pred[pred == 0] <- -1
  hit <- pred == te$A
  list(B0 = d0$B, perm = perm, coef = as.numeric(m$coeff), coef_inf = as.numeric(m0$coeff),
       s_end = s_end, pred = pred, accuracy = 100 * mean(pred == sign(te$fx)),
       value = sum(hit * te$B / 0.5) / sum(hit / 0.5))
}""")


def test_first_replicate_of_the_published_simulation():
    """``set.seed(100)`` in simulation_study.R: D0, then N = 200, eps = 0.1, gamma = 50."""
    n, eps, gamma = 200, 0.1, 50.0
    r = _call(_PUBLISHED_R, 100, n, N_TEST, eps, gamma, W)

    rng = RRandom(100)
    d0 = make_synthetic_owl(1000, n_noise_features=6, random_state=rng)
    train = make_synthetic_owl(n, random_state=rng)
    test = make_synthetic_owl(N_TEST, random_state=rng)
    perm = rng.sample(np.arange(1, n + 1)) - 1
    _hex_diff(d0.benefit, r["B0"], "tuning data D0 benefits")
    _hex_diff(perm + 1, r["perm"], "train.model's shuffle")
    kw = dict(epsilon=eps, gamma=gamma, weights_upper_bound=W, feature_bounds=BOUNDS, random_state=rng,
              reproduce_dppack=True)
    Xp, Ap, Bp = train.X.iloc[perm], train.treatment[perm], train.benefit[perm]
    owl = DPOWL(keep_nonprivate=True, **kw).fit(Xp, Ap, Bp)
    DPOWL(**kw).fit(train.X, train.treatment, train.benefit)
    _same_state(rng, r["s_end"], "after train.model")

    scale = math.sqrt(P + 1)  # bounds [0, 1]: DPpack's scale is sqrt(d) for every column
    theta_r = r["coef_inf"] * scale
    problem = prepare_owl(Xp, Ap, Bp, weights_upper_bound=W, feature_bounds=BOUNDS)
    Z, y, w = problem.Z, problem.labels, problem.weights
    bound, _ = _convexity_bound(theta_r, owl.nonprivate_scaled_coef_, Z, y, w, gamma)
    slack = bound + 8 * EPS64 * (np.linalg.norm(theta_r) + np.linalg.norm(owl.noise_scaled_))
    gap = float(np.linalg.norm(r["coef"] * scale - owl.scaled_coef_))
    assert gap <= slack, f"released gap {gap:.3e} exceeds the strong-convexity bound {slack:.3e}"

    pred = owl.predict(test.X)
    assert np.array_equal(pred, r["pred"]), f"{int((pred != r['pred']).sum())} test assignments differ from R"
    assert accuracy(pred, test.optimal) * 100 == pytest.approx(float(r["accuracy"][0]), abs=1e-12)
    assert empirical_value(pred, test.treatment, test.benefit) == pytest.approx(float(r["value"][0]), rel=1e-12)


# --------------------------------------------------- DPWeightedERM vs WeightedERMDP.CMS
_CMS_R = r"""function(X, y, w, eps, gamma, h, wub, seeds) {
  X <- as.data.frame(X)
  d <- ncol(X)
  state <- function() get(".Random.seed", envir = globalenv())
  model <- function(e) DPpack::WeightedERMDP.CMS$new(
    DPpack::mapXy.linear, DPpack::generate.loss.huber(h), "l2", e, gamma,
    perturbation.method = "output", c = 1 / (2 * h), mapXy.gr = DPpack::mapXy.gr.linear,
    loss.gr = DPpack::generate.loss.gr.huber(h))
  fit <- function(m) m$fit(X, y, upper.bounds = rep(1, d), lower.bounds = rep(-1, d),
                           add.bias = FALSE, weights = w, weights.upper.bound = wub)
  K <- length(seeds)
  coef <- noise <- matrix(NA_real_, K, d)
  states <- matrix(NA_real_, K, 626)
  ends <- logical(K)
  for (k in seq_len(K)) {
    set.seed(seeds[k], kind = "Mersenne-Twister", normal.kind = "Inversion",
             sample.kind = "Rejection")
    m <- model(eps)
    fit(m)
    coef[k, ] <- m$coeff
    states[k, ] <- s_fit <- state()
    set.seed(seeds[k])
    radius <- rgamma(1, d, rate = gamma * eps / (2 * wub))
    z <- rnorm(d)
    noise[k, ] <- radius * (z / sqrt(sum(z^2)))
    ends[k] <- identical(state(), s_fit)
  }
  m0 <- model(Inf)
  fit(m0)
  list(coef = coef, noise = noise, states = states, redraw_ends_at_fit = as.numeric(ends),
       coef_inf = as.numeric(m0$coeff))
}"""


def test_weighted_erm_noise_matches_weightederm_cms_huber():
    gen = np.random.default_rng(404)
    n, d, wub, gamma, eps = 300, 3, 2.0, 5.0, 1.0
    U = gen.normal(size=(n, d))
    X = U / np.maximum(1.0, np.linalg.norm(U, axis=1))[:, None] * gen.uniform(0.2, 1.0, size=(n, 1))
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) + 0.3 * gen.normal(size=n) > 0, 1.0, -1.0)
    w = gen.uniform(0.0, wub, size=n)
    seeds = np.array([3, -11, 0, 1, 99, 2024, -777, 31337, 2**31 - 1, -(2**31) + 1], dtype=np.int32)
    r = _call(_CMS_R, X, y, w, eps, gamma, 0.5, wub, seeds)

    for k, seed in enumerate(seeds.tolist()):
        rng = RRandom(seed)
        est = DPWeightedERM(epsilon=eps, gamma=gamma, weights_upper_bound=wub, loss="huber", huber_h=0.5,
                            keep_nonprivate=True, random_state=rng, reproduce_dppack=True).fit(X, y, w)
        assert r["redraw_ends_at_fit"][k] == 1, f"seed {seed}: DPpack's fit consumed other draws than the noise"
        _hex_diff(est.noise_, r["noise"][k], f"seed {seed}: noise")
        _same_state(rng, r["states"][k], f"after the fit (seed {seed})")
        bound, _ = _convexity_bound(r["coef_inf"], est.nonprivate_coef_, X, y, w, gamma)
        slack = bound + 8 * EPS64 * (np.linalg.norm(r["coef_inf"]) + np.linalg.norm(est.noise_))
        gap = float(np.linalg.norm(r["coef"][k] - est.coef_))
        assert gap <= slack, f"seed {seed}: released gap {gap:.3e} exceeds the strong-convexity bound {slack:.3e}"


# ------------------------------------------------------------ the noise alone, many seeds
_NOISE_R = r"""function(seeds, d, rate) {
  out <- matrix(NA_real_, length(seeds), d)
  for (k in seq_along(seeds)) {
    set.seed(seeds[k], kind = "Mersenne-Twister", normal.kind = "Inversion",
             sample.kind = "Rejection")
    radius <- rgamma(1, d, rate = rate)
    z <- rnorm(d)
    out[k, ] <- radius * (z / sqrt(sum(z^2)))
  }
  out
}"""


@pytest.mark.parametrize("d, rate", [(2, 0.5), (5, 1.25), (5, 5.0), (11, 3.0)])
def test_output_noise_equals_dppacks_draws_for_many_seeds(d, rate):
    from r_reference._session import call_r

    from pydpowl import sample_output_noise

    seeds = np.random.default_rng(d * 1000 + int(rate * 100)).integers(-(2**31) + 1, 2**31 - 1, size=300)
    ref = np.array(call_r(_NOISE_R, seeds.astype(np.int32), d, rate), dtype=np.float64)
    got = np.array([sample_output_noise(d, rate, rng=RRandom(int(s))) for s in seeds])
    _hex_diff(got, ref, f"noise for d={d}, rate={rate} over {seeds.size} seeds")
