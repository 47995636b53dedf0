"""Choosing the regularisation constant gamma for DP-OWL (Algorithm 2 and two ways without D0).

**Algorithm 2 (public data D0).** :func:`tune_gamma` / :func:`tune_gamma_table`
follow ``tuning_algorithm2.md`` section 3.2: with ``n0`` rows in D0, a
validation part of ``n_val = max(m, n0 - n)`` rows and a training pool of
``n_pool = n0 - n_val`` rows (one shuffle); each repetition draws ``n`` rows
from the pool (with replacement exactly when ``n_pool < n``), fits the
*private* learner with the target (epsilon, gamma) and fresh noise, and scores
the rule on the whole validation part by the empirical value (default) or, for
simulated D0, the accuracy against the known optimal rule. The chosen gamma
has the largest mean score (ties go to the larger gamma, which carries less
noise); ``rule="one-se"`` takes the largest gamma within one standard error of
the best. D0 is independent of the private data, so the search spends no
privacy budget; its only private-side inputs, n and epsilon, are public.

By default the candidates share the resampled training sets (common random
numbers, which sharpen the comparison between candidates); the authors' code
draws fresh samples per candidate (``common_samples=False``). Only the noise
depends on epsilon, so one exact fit per (repetition, gamma) serves every
epsilon of a table.

**Without D0.** Both ways select gamma privately with the exponential
mechanism over candidates fitted on disjoint parts (in the spirit of Chaudhuri,
Monteleoni & Sarwate 2011, Algorithm 3): the selection data are split into
K + 1 equal parts; candidate k is fitted privately on part k; each is scored on
the last part by ``s_k = sum_i 1{f_k(x_i) = A_i} min(B_i / P(A_i | x_i), W)``
(one subject changes it by at most W), and k is drawn with probability
proportional to ``exp(eps_sel * s_k / (2 W))``. Each subject lies in one part,
so the selection is ``eps_sel``-DP for the selection data. The mechanism and
its derivation live in :mod:`pydpowl.privacy.selection`.

* :func:`tune_split_data`: select on a random part of the data with the full
  budget epsilon and fit the final model on the *other* rows with epsilon.
  Disjoint rows: the pipeline is epsilon-DP (parallel composition), but the
  final model sees fewer rows.
* :func:`tune_split_budget`: select on all rows with epsilon1 and fit the final
  model on all rows with epsilon2: epsilon1 + epsilon2 in total (sequential
  composition), charged explicitly in ``TuningResult.spending``.

The candidates of both ways are fitted on ``n_part`` rows with the selection
budget, not on the final (n, epsilon), so the selected gamma is transferred:
``transfer="bound"`` (default) scales it by ``sqrt((n_fit / n_part) * (eps_sel / eps_fit))``,
the scaling of the gamma that minimises the utility bound of
:mod:`pydpowl.studies.bounds` (``gamma* ~ sqrt(n / epsilon)``); ``transfer="none"``
uses it unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..engine.losses import HuberHingeLoss
from ..engine.solver import solve_each
from ..privacy.accountant import compose
from ..privacy.selection import TRANSFERS, select_gamma_privately, selection_delta, transfer_gamma
from .._progress import Progress
from .._validation import check_epsilon, check_int, check_positive, resolve_rng
from ..datasets import OWLData
from .gamma_table import GammaTable
from ..engine.mechanisms import perturb
from ..engine.solver import DEFAULT_TOL
from ..estimators.inputs import OWLProblem, prepare_owl
from ..estimators.owl import DPOWL
from ..estimators.summary import delta_text, guarantee_text
from ..estimators.owl_defaults import PAPER_MECHANISM
from ..evaluation.empirical import ipw_values
from .._validation import check_choice
from .config import DEFAULT_GAMMA_GRID, METRICS, RULES, GammaSearchConfig, check_gamma_grid, resolve_config

__all__ = [
    "DEFAULT_GAMMA_GRID",
    "BudgetCharge",
    "TuningResult",
    "tune_gamma",
    "tune_gamma_table",
    "tune_split_data",
    "tune_split_budget",
    "select_gamma",
    "split_sizes",
]


@dataclass(frozen=True)
class BudgetCharge:
    """One use of the privacy budget on the private data.

    Attributes
    ----------
    purpose : str
        What the budget paid for.
    epsilon : float
    rows : int
        How many private rows this step touched.
    delta : float
        The step's delta (its floating-point-safe rounding's).
    """

    purpose: str
    epsilon: float
    rows: int
    delta: float = 0.0


@dataclass(frozen=True)
class TuningResult:
    """The chosen gamma, how it was chosen, and what it cost.

    Attributes
    ----------
    method : {"public-D0", "split-data", "split-budget"}
    gamma : float
        The chosen gamma (for the final fit: after the transfer for the no-D0 ways).
    n, epsilon : int, float
        Training size and budget of the (final) private fit the choice is for.
    metric, rule : str
    table : DataFrame or None
        Public-D0 only: ``gamma, mean, sd, se, r, n_undefined, selected`` (the
        score by candidate). The no-D0 ways publish no scores: they are private.
    details : dict
        Sizes and flags (``n_pool``, ``n_val``, ``replace`` for Algorithm 2;
        ``n_part``, ``selected_gamma``, ``transfer`` for the no-D0 ways).
    spending : tuple of BudgetCharge
        Budget spent on the private data (empty for Algorithm 2 with public D0).
    epsilon_total : float
        Total budget of the pipeline on the private data.
    delta_total : float
        Its delta, composed as the charges are (:attr:`privacy_spent`).
    composition : str
        How the charges combine.
    model : DPOWL or None
        The final private fit (no-D0 ways only).
    notes : tuple of str
    """

    method: str
    gamma: float
    n: int
    epsilon: float
    metric: str
    rule: str
    table: Optional[pd.DataFrame]
    details: Dict[str, Any]
    spending: Tuple[BudgetCharge, ...] = ()
    epsilon_total: float = 0.0
    composition: str = "none: D0 is public; the search spends no privacy budget"
    model: Optional[DPOWL] = None
    notes: Tuple[str, ...] = field(default_factory=tuple)
    delta_total: float = 0.0

    @property
    def privacy_spent(self) -> Tuple[float, float]:
        """``(epsilon_total, delta_total)``: the pipeline's guarantee on the private data."""
        return self.epsilon_total, self.delta_total

    def describe(self, *, public_n: bool = False) -> str:
        """Plain text for people: method, choice, sizes, and the budget charges.

        The no-D0 ways run on the private data: the sizes derived from its n
        (the parts, the final fit's n) are shown only with ``public_n=True``,
        the analyst's statement that n is public (it is, to the guarantee:
        neighbours have the same n). Algorithm 2's sizes are settings of the
        study on public D0 and always shown.
        """
        eps = "inf" if self.epsilon == math.inf else f"{self.epsilon:g}"
        sizes = public_n or not self.spending
        n_text = f"n = {self.n}" if sizes else "n not released"
        lines = [f"method: {self.method} ({_METHOD_TEXT[self.method]})",
                 f"chosen gamma = {self.gamma:g} for the private fit with {n_text}, epsilon = {eps} "
                 f"(metric {self.metric}, rule {self.rule})"]
        lines += [f"  {k} = {v}" for k, v in self.details.items() if sizes or k not in _PRIVATE_SIZES]
        if self.spending:
            lines.append("privacy budget charged on the private data:")
            lines += [f"  epsilon = {c.epsilon:g}, delta = {delta_text(c.delta)}"
                      f"{f' on {c.rows} rows' if sizes else ''}: {c.purpose}" for c in self.spending]
            lines.append(f"  total epsilon = {self.epsilon_total:g} ({self.composition}): "
                         f"{guarantee_text(*self.privacy_spent)}, delta from the floating-point-safe rounding")
        else:
            lines.append(f"privacy budget: {self.composition}")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


#: details of the no-D0 ways that are sizes derived from the private data's n
_PRIVATE_SIZES = ("n_select", "n_part")

_METHOD_TEXT = {
    "public-D0": "Algorithm 2 on independent data D0",
    "split-data": "no D0: split the data; select gamma privately on one part, fit on the other",
    "split-budget": "no D0: split the budget epsilon1 + epsilon2; select gamma privately, then fit, on all rows",
}


def split_sizes(n0: int, n: int, m: int) -> Tuple[int, int, bool]:
    """``(n_pool, n_val, replace)``: ``n_val = max(m, n0 - n)``, ``n_pool = n0 - n_val``, ``replace = n_pool < n``."""
    n0 = check_int("n0", n0, minimum=2)
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=1)
    if m >= n0:
        raise ValueError(f"m must be in [1, n0 - 1] = [1, {n0 - 1}], got m={m}.")
    n_val = max(m, n0 - n)
    n_pool = n0 - n_val
    return n_pool, n_val, n_pool < n


def select_gamma(gammas: Sequence[float], means: Sequence[float], ses: Sequence[float], rule: str = "max") -> float:
    """The chosen candidate: largest mean (ties to the larger gamma), or the one-SE rule.

    Candidates with an undefined (NaN) mean rank last.
    """
    check_choice("rule", rule, RULES)
    g = np.asarray(gammas, dtype=float)
    mu = np.where(np.isnan(means), -np.inf, np.asarray(means, dtype=float))
    best = mu.max()
    if rule == "max":
        return float(g[mu == best].max())
    se = np.asarray(ses, dtype=float)[int(np.flatnonzero(mu == best)[np.argmax(g[mu == best])])]
    se = 0.0 if np.isnan(se) else se
    return float(g[mu >= best - se].max())


def _prepared(data: OWLData) -> OWLProblem:
    """``data`` as a DP-wERM problem (scaled rows, labels, clipped weights, C, scaler) with its public settings."""
    return prepare_owl(data.X, data.treatment, data.benefit, data.propensity,
                       weights_upper_bound=data.weights_upper_bound, feature_bounds=data.feature_bounds,
                       weight_sensitivity=data.weight_sensitivity)


def _validation_scores(Xv, Av, Bv, pv, ov, coef, metric: str) -> NDArray[np.float64]:
    """Score of each release (rows of ``coef``, original scale) on its validation set.

    The validation arrays have a leading axis of length 1 (one split shared by
    every repetition) or r (one split per repetition).
    """
    if Xv.shape[0] == 1:
        rules = (Xv[0] @ coef[:, 1:].T + coef[:, 0][None, :]) > 0
        return _scores(rules, Av[0], Bv[0], pv[0], None if ov is None else ov[0], metric)
    rules = (np.einsum("rtp,rp->rt", Xv, coef[:, 1:]) + coef[:, 0][:, None]) > 0
    out = np.empty(coef.shape[0])
    for j in range(coef.shape[0]):
        out[j] = _scores(rules[j][:, None], Av[j], Bv[j], pv[j], None if ov is None else ov[j], metric)[0]
    return out


def _scores(rules: NDArray[np.bool_], A, B, prop, optimal, metric: str) -> NDArray[np.float64]:
    """Score of each rule (columns of ``rules``, True = +1) on the validation rows."""
    if metric == "accuracy":
        return (rules == (optimal > 0)[:, None]).mean(axis=0)
    return ipw_values(rules, A, B, prop)


def tune_gamma_table(
    d0: OWLData,
    ns: Sequence[int] = (),
    epsilons: Sequence[float] = (),
    *,
    config: Optional[GammaSearchConfig] = None,
    random_state: Any = None,
    progress: bool = False,
    **settings: Any,
) -> Tuple[GammaTable, pd.DataFrame]:
    """Algorithm 2 for every (n, epsilon) cell, sharing the exact fits across epsilon.

    Parameters
    ----------
    d0 : OWLData
        Independent (public) data; its bounds, W and propensities are used.
        ``metric="accuracy"`` needs ``d0.optimal``.
    ns, epsilons : sequence
        Training sizes and budgets of the private fits (``inf``: non-private);
        ignored when ``config`` is given.
    config : GammaSearchConfig, optional
        Every setting at once; keyword ``settings`` override its fields.
    random_state : None, int or numpy Generator
        Every draw (shuffle, resampling, noise) comes from this one generator.
    progress : bool, default=False
    **settings
        Other fields of :class:`~pydpowl.studies.config.GammaSearchConfig`:
        ``gammas``, ``m`` (minimum validation size, default ``n0 // 2``),
        ``r``, ``metric``, ``rule``, ``common_samples``, ``redraw_split``
        (a new pool / validation split of D0 for every repetition; the
        authors' code and the default split D0 once), ``huber_h``.

    Returns
    -------
    table : GammaTable
        The chosen gamma per cell.
    curves : DataFrame
        ``n, epsilon, gamma, mean, sd, se, r, n_undefined, selected, n_pool, n_val, replace``.
    """
    if config is None:
        settings = {"ns": ns, "epsilons": epsilons, **settings}
    cfg = resolve_config(GammaSearchConfig, config, settings)
    grid, r, metric, rule, huber_h = list(cfg.gammas), cfg.r, cfg.metric, cfg.rule, cfg.huber_h
    ns, eps_list, common_samples, redraw_split = list(cfg.ns), list(cfg.epsilons), cfg.common_samples, cfg.redraw_split
    if metric == "accuracy" and d0.optimal is None:
        raise ValueError("metric='accuracy' needs the optimal rule of D0 (simulated data); use metric='value'.")
    n0 = d0.n
    m = n0 // 2 if cfg.m is None else cfg.m
    rng = resolve_rng(random_state)
    problem = _prepared(d0)
    Z, y, w, C, scaler = problem.Z, problem.labels, problem.weights, problem.weight_sensitivity, problem.scaler
    X = d0.X.to_numpy(dtype=float)
    W = float(d0.weights_upper_bound)
    scale = scaler.column_scale * scaler.dimension_scale
    order = sorted(grid, reverse=True)
    rows, cells = [], []
    with Progress(len(ns) * len(grid), "tune", enabled=progress) as bar:
        for n in ns:
            n_pool, n_val, replace = split_sizes(n0, n, m)
            splits = [rng.permutation(n0) for _ in range(r if redraw_split else 1)]

            def draw():
                """Training rows (r, n) and validation rows (r or 1, n_val) of every repetition."""
                perms = splits if redraw_split else splits * r
                train = []
                for perm in perms:
                    pool = perm[:n_pool]
                    train.append(pool[rng.integers(0, n_pool, size=n)] if replace else pool[rng.permutation(n_pool)])
                return np.stack(train)

            val = np.stack([perm[n_pool:] for perm in splits])  # (1 or r, n_val)
            Xv, Av, Bv, pv = X[val], d0.treatment[val], d0.benefit[val], d0.propensity[val]
            ov = d0.optimal[val] if d0.optimal is not None else None
            shared = draw() if common_samples else None
            scores: Dict[Any, Dict[Any, Any]] = {e: {} for e in eps_list}
            theta0 = None
            for gamma in order:
                idx = shared if common_samples else draw()
                theta = solve_each(Z[idx], y[idx], w[idx], gamma=gamma, loss=HuberHingeLoss(huber_h),
                                   theta0=theta0 if common_samples else None, tol=DEFAULT_TOL)
                theta0 = theta
                for eps in eps_list:
                    coef = perturb(theta, epsilon=eps, gamma=gamma, weights_upper_bound=W, C=C, n_samples=n,
                                   tol=DEFAULT_TOL, rng=rng) / scale
                    scores[eps][gamma] = _validation_scores(Xv, Av, Bv, pv, ov, coef, metric)
                bar.update()
            for eps in eps_list:
                stats = []
                for gamma in grid:
                    s = scores[eps][gamma]
                    ok = s[~np.isnan(s)]
                    mean = float(ok.mean()) if ok.size == r else float("nan")
                    sd = float(ok.std(ddof=1)) if ok.size >= 2 else float("nan")
                    stats.append((gamma, mean, sd, sd / math.sqrt(r), r - ok.size))
                chosen = select_gamma([s[0] for s in stats], [s[1] for s in stats], [s[3] for s in stats], rule)
                for gamma, mean, sd, se, undefined in stats:
                    rows.append(dict(n=n, epsilon=eps, gamma=gamma, mean=mean, sd=sd, se=se, r=r,
                                     n_undefined=undefined, selected=gamma == chosen, n_pool=n_pool, n_val=n_val,
                                     replace=replace))
                cells.append((n, eps, chosen))
    source = (f"Algorithm 2 on D0 ({d0.description}; n0={n0}, m={m}, r={r}, metric={metric}, rule={rule}, "
              f"{'split redrawn per repetition' if redraw_split else 'one split'}, "
              f"grid={'/'.join(f'{g:g}' for g in grid)})")
    return GammaTable(cells=tuple(cells), source=source), pd.DataFrame(rows)


def tune_gamma(d0: OWLData, n: int, epsilon: float, **kwargs: Any) -> TuningResult:
    """Algorithm 2 for one (n, epsilon); keyword arguments as in :func:`tune_gamma_table`."""
    random_state, progress = kwargs.pop("random_state", None), kwargs.pop("progress", False)
    cfg = GammaSearchConfig(ns=(n,), epsilons=(epsilon,), **kwargs)
    table, curves = tune_gamma_table(d0, config=cfg, random_state=random_state, progress=progress)
    row = curves.iloc[0]
    m = cfg.m or d0.n // 2
    return TuningResult(
        method="public-D0", gamma=table.lookup(n, epsilon), n=int(n), epsilon=check_epsilon(epsilon),
        metric=cfg.metric, rule=cfg.rule,
        table=curves[["gamma", "mean", "sd", "se", "r", "n_undefined", "selected"]].reset_index(drop=True),
        details=dict(n0=d0.n, m=m, n_pool=int(row["n_pool"]), n_val=int(row["n_val"]), replace=bool(row["replace"]),
                     common_samples=cfg.common_samples, redraw_split=cfg.redraw_split),
        notes=(f"D0: {d0.description}",),
    )


# ----------------------------------------------------------------------------- without D0


def _private_selection(data: OWLData, rows: NDArray[np.int64], grid: List[float], eps_sel: float, metric: str,
                       huber_h: float, rng: np.random.Generator) -> Tuple[float, int]:
    """Exponential-mechanism choice among candidates fitted on disjoint parts of ``rows``
    (:func:`pydpowl.privacy.selection.select_gamma_privately`)."""
    if metric == "accuracy" and data.optimal is None:
        raise ValueError("metric='accuracy' needs the optimal rule (simulated data); use metric='value'.")
    problem = _prepared(data)
    C = problem.weight_sensitivity
    if C != 0:  # the parallel-composition argument needs weights that depend on their own record only
        raise ValueError(f"private selection needs known or released propensities (C = 0), got C={C!r}.")
    return select_gamma_privately(problem.Z, problem.labels, problem.weights, rows, grid, epsilon=eps_sel,
                                  weights_upper_bound=data.weights_upper_bound, huber_h=huber_h, score=metric,
                                  optimal=data.optimal, rng=rng)


def _no_d0(data: OWLData, *, method: str, eps_sel: float, eps_fit: float, sel_rows, fit_rows, gammas, metric,
           transfer, huber_h, rng) -> TuningResult:
    grid = list(check_gamma_grid("gammas", gammas))
    check_choice("metric", metric, METRICS)
    check_choice("transfer", transfer, TRANSFERS)
    chosen, n_part = _private_selection(data, sel_rows, grid, eps_sel, metric, huber_h, rng)
    sel_delta = selection_delta(grid, epsilon=eps_sel, weights_upper_bound=data.weights_upper_bound, n_part=n_part,
                                dim=data.X.shape[1] + 1)
    n_fit = int(fit_rows.size)
    gamma = transfer_gamma(chosen, transfer=transfer, n_part=n_part, epsilon_select=eps_sel, n_fit=n_fit,
                           epsilon_fit=eps_fit)
    X = data.X.iloc[fit_rows].reset_index(drop=True)
    model = DPOWL(epsilon=eps_fit, gamma=gamma, weights_upper_bound=data.weights_upper_bound,
                  feature_bounds=data.feature_bounds, huber_h=huber_h, weight_sensitivity=data.weight_sensitivity,
                  random_state=rng, **PAPER_MECHANISM).fit(
        X, data.treatment[fit_rows], data.benefit[fit_rows], data.propensity[fit_rows])
    model.set_params(random_state=None)  # the live generator could be rewound to regenerate the noise
    sel = BudgetCharge(f"gamma selection: {len(grid)} candidates fitted on disjoint parts, exponential mechanism "
                       "on the last part", eps_sel, int(sel_rows.size), sel_delta)
    fit = BudgetCharge(f"final DP-OWL fit with gamma = {gamma:.6g}", eps_fit, n_fit, model.privacy_spent_[1])
    how = "parallel" if method == "split-data" else "sequential"
    total, delta_total = compose([(c.epsilon, c.delta) for c in (sel, fit)], how)
    composition = ("parallel composition: the two steps use disjoint rows" if how == "parallel" else
                   "sequential composition: both steps use every row")
    return TuningResult(
        method=method, gamma=gamma, n=n_fit, epsilon=eps_fit, metric=metric, rule="exponential mechanism",
        table=None, details=dict(n_select=int(sel_rows.size), n_part=n_part, candidates=len(grid),
                                 selected_gamma=chosen, transfer=transfer),
        spending=(sel, fit), epsilon_total=total, delta_total=delta_total, composition=composition, model=model,
        notes=("the candidates' scores are private and are not reported",
               f"gamma transfer '{transfer}': selected {chosen:g} for the candidates' fits (n_part rows, "
               f"epsilon={eps_sel:g}); used {gamma:.6g} for the final fit (n rows, epsilon={eps_fit:g})"
               + (" by gamma ~ sqrt(n / epsilon)" if transfer == "bound" else "")),
    )


def tune_split_data(data: OWLData, *, epsilon: float, gammas: Sequence[float] = (10, 30, 75, 150, 300),
                    select_fraction: float = 0.5, metric: str = "value", transfer: str = "bound",
                    huber_h: float = 0.5, random_state: Any = None, accountant: Any = None) -> TuningResult:
    """No D0, split the data: select gamma on one part (epsilon), fit on the rest (epsilon).

    Parameters
    ----------
    data : OWLData
        The private data (public bounds, W and propensities inside).
    epsilon : float
        Budget of each step; the pipeline is epsilon-DP (disjoint rows).
    gammas : sequence of float, default=(10, 30, 75, 150, 300)
        Candidates; each is fitted on ``1/(K+1)`` of the selection rows, so keep K small.
    select_fraction : float, default=0.5
        Share of rows used for the selection (the rest trains the final model).
    metric, transfer, huber_h, random_state
        See the module docstring.
    """
    eps = check_positive("epsilon", epsilon)
    if accountant is not None:
        accountant.check(eps, label="tune_split_data")
    q = check_positive("select_fraction", select_fraction)
    if not q < 1:
        raise ValueError(f"select_fraction must be in (0, 1), got select_fraction={select_fraction!r}.")
    rng = resolve_rng(random_state)
    perm = rng.permutation(data.n)
    n_sel = int(math.floor(q * data.n))
    if n_sel < 1 or n_sel >= data.n:
        raise ValueError(f"select_fraction={q:g} leaves no rows for one of the two parts of n={data.n}.")
    result = _no_d0(data, method="split-data", eps_sel=eps, eps_fit=eps, sel_rows=perm[:n_sel],
                    fit_rows=np.sort(perm[n_sel:]), gammas=gammas, metric=metric, transfer=transfer,
                    huber_h=huber_h, rng=rng)
    if accountant is not None:  # parallel composition: one charge of epsilon for both disjoint parts
        accountant.spend(result.epsilon_total, label=f"tune_split_data: {result.composition}",
                         delta=result.delta_total)
    return result


def tune_split_budget(data: OWLData, *, epsilon_select: float, epsilon_fit: float,
                      gammas: Sequence[float] = (10, 30, 75, 150, 300), metric: str = "value",
                      transfer: str = "bound", huber_h: float = 0.5, random_state: Any = None,
                      accountant: Any = None) -> TuningResult:
    """No D0, split the budget: select gamma on all rows (epsilon1), fit on all rows (epsilon2).

    The total charge is ``epsilon_select + epsilon_fit`` (sequential
    composition), listed in ``TuningResult.spending``. With a
    :class:`pydpowl.privacy.accountant.BudgetAccountant` the sum is checked before the
    data are touched and both charges are recorded after success.
    """
    e1 = check_positive("epsilon_select", epsilon_select)
    e2 = check_positive("epsilon_fit", epsilon_fit)
    if accountant is not None:  # epsilon1 + epsilon2 must fit before the data are touched
        accountant.check_split([e1, e2], label="tune_split_budget")
    rng = resolve_rng(random_state)
    perm = rng.permutation(data.n)
    result = _no_d0(data, method="split-budget", eps_sel=e1, eps_fit=e2, sel_rows=perm,
                    fit_rows=np.arange(data.n), gammas=gammas, metric=metric, transfer=transfer,
                    huber_h=huber_h, rng=rng)
    if accountant is not None:  # sequential composition: one charge per step
        for charge in result.spending:
            accountant.spend(charge.epsilon, label=charge.purpose, delta=charge.delta)
    return result
