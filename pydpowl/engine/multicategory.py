"""Multicategory (K-arm) margin learning as weighted ERM: the angle-based rows.

A rule for ``K >= 2`` arms is a linear decision function ``f(z) = Theta z`` in
``R^(K-1)`` (``Theta`` is ``(K-1) x d``) with the arms at the vertices
``V_1, ..., V_K`` of a regular simplex centred at 0 in ``R^(K-1)`` (unit norm,
``<V_a, V_b> = -1/(K-1)`` for ``a != b``); the rule recommends
``argmax_a <V_a, f(z)>`` (Zhang & Liu 2014, angle-based classification; the
outcome weighted version is Zhang, Chen, Fu, He, Zhao & Liu 2020). A subject
who received arm ``a`` with weight ``w`` and sign ``s`` contributes
``w l(s <V_a, Theta z>)`` to the objective.

The loss of a record is a margin loss of one linear function of ``Theta``:

    <V_a, Theta z> = vec(Theta)' (V_a kron z),     ||V_a kron z|| = ||V_a|| ||z|| = ||z|| <= 1,

so the K-arm objective *is* the binary weighted ERM objective over the
expanded rows ``u_i = V_{a_i} kron z_i`` with labels ``s_i``:
:func:`expand_rows` builds them and the one solver and the one release
(:func:`pydpowl.engine.mechanisms.release_output_perturbation`) do the rest,
with ``d' = (K-1) d`` coefficients ``vec(Theta)`` (row-major: ``Theta[k, j]``
is entry ``k d + j``). The sensitivity of the minimiser in Frobenius norm is
Theorem 7's with the same constants (docs/privacy_audit.md, "Multi-arm rules").

For ``K = 2`` the vertices are ``-1`` and ``+1`` (first arm, second arm), the
expanded rows are the rows themselves and the labels ``V_a s``: exactly the
binary DP-OWL problem of :class:`pydpowl.DPOWL`, so the two give the same
release for the same noise.

The vertices are Zhang & Liu's reflected through the origin (``-W_a``), which
is again a regular simplex; the reflection makes the first of two arms ``-1``,
pydpowl's binary convention.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int

__all__ = ["simplex_vertices", "expand_rows", "arm_scores", "recommend"]


def simplex_vertices(n_arms: int) -> NDArray[np.float64]:
    """The ``K`` vertices of a regular simplex in ``R^(K-1)``, one row per arm, each of norm at most 1.

    ``V_1 = -(K-1)^(-1/2) 1`` and ``V_j = (1 + sqrt K) / (K-1)^(3/2) 1 - sqrt(K/(K-1)) e_(j-1)`` for
    ``j = 2..K``: unit vectors with pairwise inner products ``-1/(K-1)`` summing to 0 (for ``K = 2``:
    ``-1`` and ``+1``). A row whose computed norm exceeds 1 by rounding is shrunk by an ulp, so the
    expanded rows keep norm at most ``||z||``.

    Parameters
    ----------
    n_arms : int
        ``K >= 2``.

    Returns
    -------
    ndarray of shape (K, K - 1)
    """
    K = check_int("n_arms", n_arms, minimum=2)
    if K == 2:  # exactly -1 and +1 (the formula gives 1 - 2^-52 for the second): DP-OWL's labels
        return np.array([[-1.0], [1.0]])
    m = K - 1
    V = np.empty((K, m))
    V[0] = -1.0 / math.sqrt(m)
    off = (1.0 + math.sqrt(K)) / m ** 1.5
    for j in range(1, K):
        V[j] = off
        V[j, j - 1] -= math.sqrt(K / m)
    for j in range(K):
        while math.fsum(V[j] * V[j]) > 1.0:
            V[j] *= 1.0 - 2.0 ** -52
    return V


def expand_rows(Z: NDArray[np.float64], arms: NDArray[np.intp], signs: NDArray[np.float64],
                vertices: NDArray[np.float64]):
    """The binary weighted-ERM rows and labels of a K-arm problem.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows of norm at most 1 (the scaled space).
    arms : ndarray of int of shape (n,)
        The received arm of each row, as an index ``0..K-1`` into ``vertices``.
    signs : ndarray of shape (n,)
        ``+1`` (the usual OWL record: pull ``f`` towards the received arm) or ``-1`` (a negative
        outcome: push it away), for residual weights.
    vertices : ndarray of shape (K, K - 1)
        :func:`simplex_vertices`.

    Returns
    -------
    U : ndarray of shape (n, (K - 1) d)
        ``V_{a_i} kron z_i`` (column-major, the solver's layout); for ``K = 2`` ``Z`` itself.
    y : ndarray of shape (n,)
        The labels: ``s_i`` (``K >= 3``), ``V_{a_i} s_i`` in {-1, 1} (``K = 2``).
    """
    Z = np.asarray(Z, dtype=np.float64)
    arms = np.asarray(arms, dtype=np.intp)
    signs = np.asarray(signs, dtype=np.float64)
    K, m = vertices.shape
    if m == 1:  # binary: the vertex is the label, the row stays as it is (DP-OWL's own problem)
        return Z, vertices[arms, 0] * signs
    n, d = Z.shape
    U = np.empty((n, m * d), order="F")
    Va = vertices[arms]  # (n, K-1)
    for k in range(m):
        np.multiply(Z, Va[:, k:k + 1], out=U[:, k * d:(k + 1) * d])
    return U, signs.copy()


def arm_scores(F: NDArray[np.float64], vertices: NDArray[np.float64]) -> NDArray[np.float64]:
    """``<V_a, f_i>`` for every row ``f_i`` of the decision values ``F`` (n, K-1): shape (n, K)."""
    return np.asarray(F, dtype=np.float64) @ vertices.T


def recommend(scores: NDArray[np.float64]) -> NDArray[np.intp]:
    """The index of the largest score per row (the first on ties: for two arms a decision value of 0
    recommends the first arm, as DP-OWL and DPpack do)."""
    return np.argmax(scores, axis=1)
