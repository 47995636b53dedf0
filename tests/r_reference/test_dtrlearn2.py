"""pydpowl's multi-stage regime against DTRlearn2::owl at epsilon = inf (needs R and DTRlearn2)."""

import numpy as np
import pytest

pytestmark = pytest.mark.r


@pytest.fixture(autouse=True, scope="module")
def _needs_dtrlearn2(require_r):
    require_r("DTRlearn2")


from r_reference.dtrlearn2 import adhd_data, fit_dtrlearn2_owl, matched_gamma, sim_kstage  # noqa: E402
from validation.multistage import AGREEMENT, adhd_case, cross_check, sim_case  # noqa: E402


@pytest.mark.parametrize("case", [lambda: sim_case(2, seed=2), lambda: sim_case(3, seed=2),
                                  lambda: sim_case(3, seed=1), adhd_case],
                         ids=["sim_Kstage-2-stages", "sim_Kstage-3-stages", "sim_Kstage-3-stages-seed1", "adhd"])
def test_regime_agrees_with_dtrlearn2(case):
    result = cross_check(case())
    assert min(result.agreement) >= AGREEMENT, result
    assert result.value_ok, result


def test_sim_kstage_and_adhd_have_dtrlearn2_shapes():
    d = sim_kstage(100, 10, 3, 2, 3, seed=1)
    assert d["X"].shape == (100, 5) and d["A"].shape == (100, 3) and d["R"].shape == (100, 3)
    assert set(np.unique(d["A"])) == {-1.0, 1.0}
    assert np.all(d["R"][:, :2] == 0)  # sim_Kstage puts the whole reward at the last stage
    a = adhd_data()
    assert a["H1"].shape == (150, 4) and a["H2"].shape == (150, 13) and a["y"].shape == (150,)


def test_the_default_svm_solver_reverses_the_rule_when_the_first_label_is_negative():
    """Why the cross-checks use solver = "ipop": DTRlearn2's wsvm path takes libsvm's first class (the first label
    in the data) as positive, so the same separable data in two orders give opposite rules."""
    from r_reference._session import call_r

    signs = call_r("""function() {
      set.seed(1); n <- 200; X <- matrix(rnorm(2 * n), n); A <- ifelse(X[, 1] > 0, 1, -1)
      ws <- get("wsvm_solve", asNamespace("DTRlearn2"))
      sapply(c(1, -1), function(first) {
        i <- which(A == first)[1]; o <- c(i, setdiff(seq_len(n), i))
        sign(ws(X[o, ], A[o], rep(1, n), C = 1, solver = "svm")$beta[1]) })
    }""")
    assert list(np.asarray(signs)) == [1.0, -1.0]


def test_matched_gamma_convention():
    # n_k / (c d s^2): 300 followers, c = 4, 11 columns, features scaled by 2
    assert matched_gamma(4.0, 300, 11, 2.0) == pytest.approx(300 / (4 * 11 * 4))


def test_dtrlearn2_fit_returns_every_stage():
    d = sim_kstage(200, 10, 3, 2, 2, seed=3)
    H = [d["X"], d["X"]]
    fit = fit_dtrlearn2_owl(H, [d["A"][:, 0], d["A"][:, 1]], [d["R"][:, 0], d["R"][:, 1]], [np.full(200, 0.5)] * 2,
                            c=1.0)
    assert fit.intercepts.shape == (2,) and [c.shape for c in fit.coefs] == [(5,), (5,)]
    assert fit.treatments.shape == (200, 2) and set(np.unique(fit.treatments)) <= {-1.0, 1.0}
    # its recommendation is the sign of its decision function
    np.testing.assert_array_equal(fit.treatments[:, 1], np.where(fit.intercepts[1] + H[1] @ fit.coefs[1] > 0, 1, -1))
