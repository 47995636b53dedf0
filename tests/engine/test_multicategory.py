"""The angle-based K-arm rows (pydpowl.engine.multicategory)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pydpowl.engine.multicategory import arm_scores, expand_rows, recommend, simplex_vertices


@pytest.mark.parametrize("K", [2, 3, 4, 5, 8])
def test_vertices_form_a_regular_simplex(K):
    V = simplex_vertices(K)
    assert V.shape == (K, K - 1)
    gram = V @ V.T
    assert np.all(np.einsum("ij,ij->i", V, V) <= 1.0)  # never above 1: the expanded rows keep ||u|| <= ||z||
    assert_allclose(np.diag(gram), 1.0, atol=1e-15)
    assert_allclose(gram[~np.eye(K, dtype=bool)], -1.0 / (K - 1), atol=1e-15)
    assert_allclose(V.sum(axis=0), 0.0, atol=1e-14)


def test_two_arms_are_exactly_minus_and_plus_one():
    assert_array_equal(simplex_vertices(2), [[-1.0], [1.0]])


def test_vertices_refuse_one_arm():
    with pytest.raises(ValueError, match=r"^n_arms must be an integer >= 2"):
        simplex_vertices(1)


def test_expanded_rows_give_the_angle_based_margins():
    rng = np.random.default_rng(3)
    n, d, K = 40, 3, 4
    Z = rng.uniform(-1, 1, (n, d))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    arms = rng.integers(0, K, n)
    signs = rng.choice([-1.0, 1.0], n)
    V = simplex_vertices(K)
    U, y = expand_rows(Z, arms, signs, V)
    Theta = rng.normal(size=(K - 1, d))
    direct = signs * np.einsum("ik,ik->i", V[arms], Z @ Theta.T)  # s_i <V_a, Theta z_i>
    assert_allclose(y * (U @ Theta.ravel()), direct, rtol=1e-13, atol=1e-14)
    assert_allclose(np.linalg.norm(U, axis=1), np.linalg.norm(Z, axis=1), rtol=1e-14)
    assert U.flags.f_contiguous


def test_two_arms_keep_the_rows_and_code_the_labels():
    Z = np.eye(3)[:2]
    U, y = expand_rows(Z, np.array([0, 1]), np.array([1.0, -1.0]), simplex_vertices(2))
    assert U is Z
    assert_array_equal(y, [-1.0, -1.0])


def test_scores_and_ties():
    V = simplex_vertices(2)
    F = np.array([[0.5], [-0.5], [0.0]])
    assert_array_equal(arm_scores(F, V), [[-0.5, 0.5], [0.5, -0.5], [0.0, 0.0]])
    assert_array_equal(recommend(arm_scores(F, V)), [1, 0, 0])  # 0 goes to the first arm, as DP-OWL
    V3 = simplex_vertices(3)
    assert_array_equal(recommend(arm_scores(V3 * 2.0, V3)), [0, 1, 2])  # f at a vertex recommends that arm
