"""The private analysis for bridges: plain arrays and scalars in, a plain dict out (R's ``dpowl_analysis()``)."""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Sequence

from numpy.typing import ArrayLike

from ..analysis import BenefitScale, BudgetSplit, _n_labels, run_analysis
from ..estimators.dp_propensity import DEFAULT_LOGIT_BOUND

__all__ = ["analyze_arrays"]


def analyze_arrays(X: ArrayLike, treatment: ArrayLike, benefit: ArrayLike, *, lower: Sequence[float],
                   upper: Sequence[float], benefit_lower: float, benefit_upper: float, weights_upper_bound: float,
                   total_epsilon: float, propensity: Any = None, propensity_model: Optional[str] = None,
                   feature_names: Optional[Sequence[str]] = None, treatment_labels: Sequence[str] = ("+1", "-1"),
                   gamma: Optional[float] = None, gammas: Optional[Sequence[float]] = None,
                   logit_bound: float = DEFAULT_LOGIT_BOUND, level: float = 0.95, split: Optional[str] = None,
                   seed: Optional[int] = None, out_dir: Optional[str] = None, public_n: bool = False,
                   benefit_definition: Optional[str] = None) -> Dict[str, Any]:
    """Bridge-friendly entry point (plain arrays and scalars in, a plain dict out), e.g. for R's ``dpowl_analysis()``.

    Parameters are those of :func:`run_analysis` with the bounds as flat
    sequences (``lower``, ``upper`` per feature; ``benefit_lower``,
    ``benefit_upper``), ``split`` as the text of :meth:`BudgetSplit.parse`, and
    ``seed`` an optional int (reproduction only), ``benefit_definition`` the
    text of :class:`BenefitScale`. With ``out_dir`` the output files of
    ``pydpowl analyze`` are written there too. With three or more arms
    ``treatment`` holds the labels, ``propensity`` is 1/K or a mapping
    ``{arm: probability}`` and ``treatment_labels`` is not used (the arms are
    the labels, sorted).

    Returns
    -------
    dict
        ``model`` (the ``model.json`` content), ``coefficients`` (name -> value),
        ``gamma``, ``gamma_selection``, ``value`` (the ``value.json`` content),
        ``ledger`` (the ``ledger.json`` content), sizes, ``treatment_labels``,
        ``propensity``, ``value_release`` and, with ``out_dir``, ``files``. Only
        lists, dicts, strings, numbers and None.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, numbers.Integral))):
        raise TypeError(f"seed must be an integer or None, got {type(seed).__name__}.")
    if isinstance(treatment_labels, str) or len(treatment_labels) < 2:
        raise ValueError("treatment_labels must be two names (arm +1, arm -1), or with three or more arms the arms' "
                         "labels.")
    multi = _n_labels(treatment) > 2  # K arms: the labels are the treatment's own; propensity 1/K or a mapping
    result = run_analysis(
        X, treatment, benefit, feature_bounds=(list(lower), list(upper)),
        benefit_bounds=(benefit_lower, benefit_upper), weights_upper_bound=weights_upper_bound,
        total_epsilon=total_epsilon, propensity=propensity, propensity_model=propensity_model,
        logit_bound=logit_bound, gamma=gamma, gammas=None if gammas is None else list(gammas), level=level,
        split=None if split is None else BudgetSplit.parse(split), feature_names=feature_names,
        treatment_labels=(str(treatment_labels[0]), str(treatment_labels[1])) if not multi else tuple(
            str(t) for t in treatment_labels), public_n=public_n,
        benefit_scale=None if benefit_definition is None else BenefitScale(definition=str(benefit_definition)),
        random_state=None if seed is None else int(seed),
    )
    out = result.to_dict()
    if out_dir is not None:
        from ..analysis_output import write_analysis

        out["files"] = [str(p) for p in write_analysis(result, out_dir)]
    return out
