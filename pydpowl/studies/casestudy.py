"""The case study (Table 1 / Fig. 2 of the paper): DP-OWL across privacy budgets.

For one dataset: fit the exact (non-private) rule once, then, for every
epsilon, draw ``n_runs`` independent private releases (only the noise depends
on epsilon) and evaluate each rule in-sample as the paper does: empirical
treatment value, concordance with the non-private rule, chi-squared test of
association with it, and how many subjects each arm is allocated
(:func:`run_case_study`, Table 1).

:func:`gamma_sensitivity` repeats the study over a grid of gamma (Fig. 2
style): for each gamma one exact fit, then releases for every epsilon; mean
value, concordance and share allocated to +1 by (gamma, epsilon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

import numpy as np
import pandas as pd

from .._progress import Progress
from .._validation import resolve_rng
from ..datasets import OWLData
from ..estimators.owl import DPOWL
from ..estimators.owl_defaults import PAPER_MECHANISM
from .noise_draws import decision_values, noisy_releases
from ..estimators.summary import eps_text
from ..evaluation.empirical import allocation_test, association_test, empirical_value, ipw_values
from .config import (DEFAULT_CASE_EPSILONS, DEFAULT_SENSITIVITY_GAMMAS, CaseStudyConfig, SensitivityConfig,
                     resolve_config)

__all__ = ["CaseStudyResult", "run_case_study", "gamma_sensitivity", "DEFAULT_EPSILONS", "DEFAULT_SENSITIVITY_GAMMAS"]

DEFAULT_EPSILONS = DEFAULT_CASE_EPSILONS


def _nanmedian(values) -> float:
    arr = np.asarray(values, dtype=float)
    return float("nan") if np.all(np.isnan(arr)) else float(np.nanmedian(arr))


#: p-values below this print as a bound: a chi-squared p this small underflows to 0 in double precision
P_FLOOR = 1e-300
#: the runs' quantiles that bound the concordance interval (inside [0, 1] by construction, unlike mean +- SD)
CONCORDANCE_QUANTILES = (0.025, 0.975)


def format_p_value(p: float) -> str:
    """A p-value for a table: ``"< 1e-300"`` below :data:`P_FLOOR` (0 is an underflow, not a probability 0),
    ``"nan"`` when undefined, else three significant digits."""
    if np.isnan(p):
        return "nan"
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.3g}"


@dataclass(frozen=True)
class CaseStudyResult:
    """Table 1 rows (one per epsilon) and the settings that produced them."""

    table: pd.DataFrame
    gamma: float
    n_runs: int
    description: str
    nonprivate_coef: Tuple[float, ...]
    coefficient_names: Tuple[str, ...]
    notes: Tuple[str, ...] = field(default_factory=tuple)

    def format_table(self) -> str:
        """Table 1 as aligned text: mean (SD) over the DP runs."""
        header = ["epsilon", "value mean (SD)", "concordance (SD)", "chi2 p alloc. (median)", "+1 : -1 allocation (SD)"]
        rows = []
        for r in self.table.itertuples():
            if r.epsilon == math.inf:
                rows.append(["inf (non-private)", f"{r.value_mean:.4f}", "1", "-",
                             f"{r.n_plus_mean:.0f} : {r.n_minus_mean:.0f}"])
            else:
                p = format_p_value(r.allocation_p_median)
                rows.append([eps_text(r.epsilon), f"{r.value_mean:.4f} ({r.value_sd:.4f})",
                             f"{r.concordance_mean:.3f} ({r.concordance_sd:.3f})", p,
                             f"{r.n_plus_mean:.0f} : {r.n_minus_mean:.0f} ({r.n_plus_sd:.0f})"])
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
        out = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
        return "\n".join(out)


def run_case_study(data: OWLData, *, config: Optional[CaseStudyConfig] = None, random_state: Any = None,
                   progress: bool = False, **settings: Any) -> CaseStudyResult:
    """Run the case study on ``data``.

    Parameters
    ----------
    data : OWLData
        Features, treatments, benefits, propensities and public bounds.
    config : CaseStudyConfig, optional
        Every setting at once; keyword ``settings`` override its fields.
    random_state : None, int or numpy Generator
    progress : bool, default=False
        Draw a progress bar on stderr.
    **settings
        Fields of :class:`~pydpowl.studies.config.CaseStudyConfig`:
        ``epsilons`` (default (0.1, 0.5, 1, 2, 5, inf); ``inf`` is the
        non-private rule), ``gamma`` (75), ``n_runs`` (200 private releases
        per finite epsilon), ``huber_h`` (0.5).
    """
    cfg = resolve_config(CaseStudyConfig, config, settings)
    eps_list, gamma, n_runs, huber_h = list(cfg.epsilons), cfg.gamma, cfg.n_runs, cfg.huber_h
    rng = resolve_rng(random_state)
    model = DPOWL(epsilon=math.inf, gamma=gamma, weights_upper_bound=data.weights_upper_bound,
                  feature_bounds=data.feature_bounds, huber_h=huber_h,
                  weight_sensitivity=data.weight_sensitivity, **PAPER_MECHANISM).fit(
        data.X, data.treatment, data.benefit, data.propensity)
    X = data.X.to_numpy(dtype=float)
    A, B, p = data.treatment, data.benefit, data.propensity
    rule0 = model.predict(data.X)
    rows = []
    finite = [e for e in eps_list if e != math.inf]
    with Progress(len(finite) * n_runs, "case study", enabled=progress) as bar:
        for eps in eps_list:
            if eps == math.inf:
                rows.append(dict(epsilon=eps, value_mean=empirical_value(rule0, A, B, p), value_sd=0.0,
                                 concordance_mean=1.0, concordance_sd=0.0, concordance_lo=1.0, concordance_hi=1.0,
                                 allocation_p_median=float("nan"),
                                 association_p_median=float("nan"),
                                 n_plus_mean=float((rule0 > 0).sum()), n_plus_sd=0.0,
                                 n_minus_mean=float((rule0 < 0).sum())))
                continue
            coefs = noisy_releases(model.scaled_coef_, epsilon=eps, gamma=gamma,
                                   weights_upper_bound=data.weights_upper_bound, C=model.weight_sensitivity_,
                                   n_samples=model.n_samples_, tol=model.tol, n_releases=n_runs, rng=rng)
            rules = np.where(decision_values(X, coefs, model.scaler_) > 0, 1, -1)
            values, concs, p_alloc, p_assoc = [], [], [], []
            for k in range(n_runs):
                values.append(empirical_value(rules[:, k], A, B, p))
                concs.append(float(np.mean(rules[:, k] == rule0)))
                p_alloc.append(allocation_test(rules[:, k], rule0).pvalue)
                p_assoc.append(association_test(rules[:, k], rule0).pvalue)
                bar.update()
            n_plus = (rules > 0).sum(axis=0)
            rows.append(dict(epsilon=eps, value_mean=float(np.nanmean(values)),
                             value_sd=float(np.nanstd(values, ddof=1)),
                             concordance_mean=float(np.mean(concs)), concordance_sd=float(np.std(concs, ddof=1)),
                             concordance_lo=float(np.quantile(concs, CONCORDANCE_QUANTILES[0])),
                             concordance_hi=float(np.quantile(concs, CONCORDANCE_QUANTILES[1])),
                             allocation_p_median=_nanmedian(p_alloc), association_p_median=_nanmedian(p_assoc),
                             n_plus_mean=float(n_plus.mean()), n_plus_sd=float(n_plus.std(ddof=1)),
                             n_minus_mean=float(len(A) - n_plus.mean())))
    names = ("(intercept)",) + tuple(str(c) for c in data.X.columns)
    return CaseStudyResult(
        table=pd.DataFrame(rows), gamma=gamma, n_runs=n_runs, description=data.description,
        nonprivate_coef=tuple(float(v) for v in model.dppack_coeff_), coefficient_names=names,
        notes=tuple(data.notes) + (
            "in-sample evaluation, as in the paper; value = self-normalised IPW with the known propensities",
            "chi2 p alloc.: Pearson test (Yates-corrected, as R's chisq.test) that a DP rule allocates the arms in "
            "the same shares as the non-private rule; median over runs. The CSV also has association_p_median, the "
            "test of association between DP and non-private assignments per subject (NaN when a rule puts everyone "
            "in one arm)",
        ),
    )


def gamma_sensitivity(data: OWLData, *, config: Optional[SensitivityConfig] = None, random_state: Any = None,
                      progress: bool = False, **settings: Any) -> pd.DataFrame:
    """Value, concordance and allocation of DP-OWL by (gamma, epsilon), in-sample (Fig. 2 style).

    Parameters
    ----------
    data : OWLData
    config : SensitivityConfig, optional
        Every setting at once; keyword ``settings`` override its fields.
    random_state : None, int or numpy Generator
    progress : bool, default=False
    **settings
        Fields of :class:`~pydpowl.studies.config.SensitivityConfig`:
        ``gammas``, ``epsilons`` (``inf`` gives the non-private rule of each
        gamma), ``n_runs`` (100 private releases per gamma and finite
        epsilon), ``huber_h``.

    Returns
    -------
    DataFrame
        ``gamma, epsilon, value_mean, value_sd, concordance_mean, share_plus_mean, n_runs``;
        concordance is with the non-private rule of the same gamma.
    """
    cfg = resolve_config(SensitivityConfig, config, settings)
    grid, eps_list, n_runs, huber_h = list(cfg.gammas), list(cfg.epsilons), cfg.n_runs, cfg.huber_h
    rng = resolve_rng(random_state)
    X = data.X.to_numpy(dtype=float)
    A, B, p = data.treatment, data.benefit, data.propensity
    rows = []
    with Progress(len(grid), "gamma sensitivity", enabled=progress) as bar:
        for gamma in grid:
            model = DPOWL(epsilon=math.inf, gamma=gamma, weights_upper_bound=data.weights_upper_bound,
                          feature_bounds=data.feature_bounds, huber_h=huber_h,
                          weight_sensitivity=data.weight_sensitivity, **PAPER_MECHANISM).fit(X, A, B, p)
            rule0 = model.predict(X) > 0
            for eps in eps_list:
                k = 1 if eps == math.inf else n_runs
                coefs = noisy_releases(model.scaled_coef_, epsilon=eps, gamma=gamma,
                                       weights_upper_bound=data.weights_upper_bound, C=model.weight_sensitivity_,
                                       n_samples=model.n_samples_, tol=model.tol, n_releases=k, rng=rng)
                rules = decision_values(X, coefs, model.scaler_) > 0
                values = ipw_values(rules, A, B, p)
                rows.append(dict(gamma=gamma, epsilon=eps, value_mean=float(np.nanmean(values)),
                                 value_sd=float(np.nanstd(values, ddof=1)) if k > 1 else 0.0,
                                 concordance_mean=float((rules == rule0[:, None]).mean()),
                                 share_plus_mean=float(rules.mean()), n_runs=k))
            bar.update()
    return pd.DataFrame(rows)
