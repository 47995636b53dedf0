"""Evaluating treatment rules: empirical value, accuracy, concordance, association.

Rules and treatments are coded in {-1, 1}. DPpack's ``svmDP`` predicts 0/1;
map 0 to -1 before comparing (one of the authors' R scripts compares 0/1
predictions with -1/+1 labels inside its value function, so only patients
treated with +1 and predicted 1 count there; these functions refuse 0/1 rules
instead of reproducing that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_labels, check_same_length, check_treatment, check_vector
from ..estimators.propensity_received import received_propensity

__all__ = [
    "empirical_value",
    "ipw_value",
    "accuracy",
    "concordance",
    "AssociationTest",
    "association_test",
    "allocation_test",
    "ipw_values",
]


def ipw_values(recommends_plus: ArrayLike, treatment: ArrayLike, benefit: ArrayLike,
               propensity_received: Optional[ArrayLike] = None) -> NDArray[np.float64]:
    """Self-normalised IPW value of many rules at once (the one implementation).

    ``V(d) = sum_i 1{d_i = A_i} B_i / p_i  /  sum_i 1{d_i = A_i} / p_i``;
    NaN for a rule that no subject followed.

    Parameters
    ----------
    recommends_plus : array-like of bool, shape (..., n, K)
        True where rule k recommends treatment +1 for subject i (leading axes,
        e.g. repetitions, broadcast against the other arguments).
    treatment, benefit : array-like of shape (..., n)
        Received treatment in {-1, 1} and benefit.
    propensity_received : array-like of shape (..., n), optional
        P(A_i | x_i) of the received treatment; None when it is the same for
        every subject (it then cancels).

    Returns
    -------
    ndarray of shape (..., K)
    """
    rules = np.asarray(recommends_plus, dtype=bool)
    follows = (rules == (np.asarray(treatment) > 0)[..., None]).astype(np.float64)
    benefit = np.asarray(benefit, dtype=np.float64)
    if propensity_received is None:
        inv = np.ones_like(benefit)
    else:
        inv = 1.0 / np.asarray(propensity_received, dtype=np.float64)
    den = np.einsum("...n,...nk->...k", inv, follows)
    num = np.einsum("...n,...nk->...k", benefit * inv, follows)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _inputs(rule: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any
            ) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The checked rule, treatments, benefits and the received arms' probabilities."""
    d = check_labels("rule", rule)
    A = check_treatment("treatment", treatment)
    B = check_vector("benefit", benefit)
    check_same_length(("rule", "treatment", "benefit"), (d.size, A.size, B.size))
    return d, A, B, received_propensity(propensity, A)


def empirical_value(rule: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5) -> float:
    """Self-normalised IPW value of a rule.

    ``V(d) = sum_i 1{d_i = A_i} B_i / p_i  /  sum_i 1{d_i = A_i} / p_i``,
    with ``p_i = P(A_i | x_i)``. NaN when no subject received the recommended
    treatment.

    Parameters
    ----------
    rule : array-like of shape (n,)
        Recommended treatments in {-1, 1}.
    treatment : array-like of shape (n,)
        Received treatments in {-1, 1}.
    benefit : array-like of shape (n,)
    propensity : float or array-like, default=0.5
        Scalar P(A = +1) (randomised trial) or P(A_i | x_i) per subject.
    """
    d, A, B, p = _inputs(rule, treatment, benefit, propensity)
    return float(ipw_values((d > 0)[:, None], A, B, p)[0])


def ipw_value(rule: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, propensity: Any = 0.5) -> float:
    """Plain IPW value ``mean(1{d_i = A_i} B_i / p_i)`` (unbiased, higher variance)."""
    d, A, B, p = _inputs(rule, treatment, benefit, propensity)
    return float(np.mean((d == A) * B / p))


def accuracy(rule: ArrayLike, optimal: ArrayLike) -> float:
    """Share of subjects whose recommendation equals the known optimal treatment."""
    rule = check_labels("rule", rule)
    optimal = check_labels("optimal", optimal)
    check_same_length(("rule", "optimal"), (rule.size, optimal.size))
    return float(np.mean(rule == optimal))


def concordance(rule: ArrayLike, other: ArrayLike) -> float:
    """Share of subjects on whom two rules agree."""
    rule = check_labels("rule", rule)
    other = check_labels("other", other)
    check_same_length(("rule", "other"), (rule.size, other.size))
    return float(np.mean(rule == other))


@dataclass(frozen=True)
class AssociationTest:
    """Pearson chi-squared test of independence between two rules' assignments."""

    statistic: float
    pvalue: float
    table: tuple  # ((n(-1,-1), n(-1,+1)), (n(+1,-1), n(+1,+1)))


def association_test(rule: ArrayLike, other: ArrayLike, *, correction: bool = True) -> AssociationTest:
    """Chi-squared test of association between two rules (2x2 table).

    ``correction=True`` applies Yates' continuity correction, as R's
    ``chisq.test`` does for 2x2 tables. When either rule assigns everybody to
    one arm the test is undefined and statistic and p-value are NaN.
    """
    from scipy.stats import chi2_contingency

    rule = check_labels("rule", rule)
    other = check_labels("other", other)
    check_same_length(("rule", "other"), (rule.size, other.size))
    table = np.array([[np.sum((rule == a) & (other == b)) for b in (-1, 1)] for a in (-1, 1)])
    tup = tuple(tuple(int(v) for v in row) for row in table)
    if (table.sum(axis=0) == 0).any() or (table.sum(axis=1) == 0).any():
        return AssociationTest(float("nan"), float("nan"), tup)
    stat, p, _, _ = chi2_contingency(table, correction=correction)
    return AssociationTest(float(stat), float(p), tup)


def allocation_test(rule: ArrayLike, reference: ArrayLike, *, correction: bool = True) -> AssociationTest:
    """Chi-squared test that two rules allocate the same shares to each arm.

    The 2x2 table has one row per rule and the counts of -1 and +1 in the
    columns (``chisq.test`` of the allocation counts, Yates-corrected by
    default). Unlike :func:`association_test` it is defined when the reference
    rule sends everybody to one arm; it is undefined (NaN) only when neither
    rule uses one of the arms.
    """
    from scipy.stats import chi2_contingency

    rule = check_labels("rule", rule)
    reference = check_labels("reference", reference)
    table = np.array([[np.sum(r == -1), np.sum(r == 1)] for r in (rule, reference)])
    tup = tuple(tuple(int(v) for v in row) for row in table)
    if (table.sum(axis=0) == 0).any():
        return AssociationTest(float("nan"), float("nan"), tup)
    stat, p, _, _ = chi2_contingency(table, correction=correction)
    return AssociationTest(float(stat), float(p), tup)
