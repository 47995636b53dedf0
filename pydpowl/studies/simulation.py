"""The paper's synthetic study (Fig. 1): DP-OWL accuracy and value by n and epsilon.

For every training size n and repetition j = 1..reps:

1. draw a training set of the paper's design (:func:`pydpowl.datasets.make_synthetic_owl`,
   p = 4, W = 30, propensity 1/2, the authors' per-dataset benefit shift) and an
   independent test set of ``test_size`` rows (shifted the same way);
2. solve the exact (non-private) DP-OWL problem once for every distinct gamma
   the table assigns to this n (only the noise depends on epsilon);
3. for every epsilon, add fresh output-perturbation noise with that epsilon's
   rate (each noisy vector is distributed exactly as the release of a separate
   DP-OWL fit with that epsilon and gamma);
4. score every rule on the test set: accuracy against the known optimal rule
   ``sign(f(x))`` and the empirical value (self-normalised IPW, propensity 1/2).

Per (n, epsilon): the mean over repetitions and a 95 % t-interval
``mean +- t_{0.975, reps-1} SD / sqrt(reps)``; ``epsilon = inf`` is the
non-private reference (gamma from the table's ``inf`` row).

Everything is vectorised over repetitions: the datasets of one n are drawn as
one block, the problems solved one by one by the certified solver, the noise
drawn in one batch per (n, epsilon), and the test sets scored with batched
matrix products.

The value estimator is the corrected one: rules and treatments are both coded
{-1, 1}. The authors' ``simulation_study_clean.R`` compares DPpack's 0/1
predictions with -1/+1 labels inside its value function, so there only
patients treated with +1 and predicted 1 count; ``simulation_study.R`` (which
produced the reference runs in ``tuning_algorithm2.md`` section 7) maps the
predictions to -1/+1 first, as we do.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..engine.losses import HuberHingeLoss
from ..engine.solver import solve_each
from .._progress import Progress
from .._validation import resolve_rng
from ..datasets import make_synthetic_owl
from .gamma_table import GammaTable, get_gamma_table
from ..engine.solver import DEFAULT_TOL
from ..engine.mechanisms import perturb
from ..estimators.inputs import owl_weights
from ..engine.preprocessing import FeatureScaler
from ..evaluation.empirical import ipw_values
from .config import FIG1_EPSILONS, FIG1_NS, SimulationConfig, resolve_config

__all__ = [
    "SimulationResult",
    "run_simulation",
    "paper_shift",
    "t_interval",
    "FIG1_NS",
    "FIG1_EPSILONS",
]


RESULT_COLUMNS = ["n", "epsilon", "accuracy_mean", "accuracy_lo", "accuracy_hi", "value_mean", "value_lo",
                  "value_hi", "gamma", "accuracy_sd", "value_sd", "reps"]

_P = 4  # informative features of the design


def paper_shift(benefit: NDArray[np.float64]) -> NDArray[np.float64]:
    """The authors' per-dataset shift along the last axis: ``B + |min B| + 0.001`` where ``min B < 0``.

    ``benefit`` has shape (..., n): each row is one dataset. It is the rule of
    ``make_synthetic_owl(shift="paper")``, applied to many datasets at once.
    """
    low = benefit.min(axis=-1, keepdims=True)
    return np.where(low < 0, benefit + np.abs(low) + 0.001, benefit)  # R's order: (B + |min B|) + 0.001


def t_interval(values: NDArray[np.float64], level: float = 0.95) -> Tuple[float, float, float, float]:
    """``(mean, lo, hi, sd)`` of a t-interval over the last axis (NaN bounds for one value)."""
    from scipy.stats import t

    values = np.asarray(values, dtype=float)
    k = values.shape[-1]
    mean = float(values.mean())
    if k < 2:
        return mean, float("nan"), float("nan"), float("nan")
    sd = float(values.std(ddof=1))
    half = float(t.ppf(0.5 + level / 2.0, k - 1)) * sd / math.sqrt(k)
    return mean, mean - half, mean + half, sd


def _draw_block(n: int, reps: int, rng: np.random.Generator):
    """``reps`` independent datasets of size n as arrays (reps, n, ...), benefits shifted per dataset."""
    data = make_synthetic_owl(n * reps, shift=None, random_state=rng)
    X = data.X.to_numpy(dtype=float).reshape(reps, n, -1)
    A = data.treatment.reshape(reps, n)
    B = paper_shift(data.benefit.reshape(reps, n))
    if data.optimal is None:  # make_synthetic_owl gives each subject's optimal arm
        raise ValueError("make_synthetic_owl gave no optimal arms.")
    optimal = data.optimal.reshape(reps, n)
    return X, A, B, optimal


@dataclass(frozen=True)
class SimulationResult:
    """Per (n, epsilon) summaries of the synthetic study and its settings.

    Attributes
    ----------
    table : DataFrame
        Columns ``n, epsilon, accuracy_mean, accuracy_lo, accuracy_hi,
        value_mean, value_lo, value_hi, gamma, accuracy_sd, value_sd, reps``
        (accuracy as a proportion; ``epsilon = inf`` is the non-private rule).
    runs : dict
        ``(n, epsilon) -> (accuracy, value)`` arrays over repetitions.
    reps, test_size : int
    gamma_source : str
    seconds : float
        Wall-clock time of the study (data, fits, noise, scoring).
    notes : tuple of str
    """

    table: pd.DataFrame
    runs: Dict[Tuple[int, float], Tuple[NDArray[np.float64], NDArray[np.float64]]]
    reps: int
    test_size: int
    gamma_source: str
    seconds: float
    notes: Tuple[str, ...] = field(default_factory=tuple)

    def format_table(self, digits: int = 3) -> str:
        """Accuracy (%) and value, mean [95 % CI], one line per (n, epsilon)."""
        lines = [f"{'n':>5} {'epsilon':>8} {'gamma':>6}  {'accuracy % [95% CI]':<24} {'value [95% CI]':<26}"]
        for r in self.table.itertuples():
            eps = "inf" if r.epsilon == math.inf else f"{r.epsilon:g}"
            acc = f"{100 * r.accuracy_mean:.{digits - 1}f} [{100 * r.accuracy_lo:.1f}, {100 * r.accuracy_hi:.1f}]"
            val = f"{r.value_mean:.{digits}f} [{r.value_lo:.{digits}f}, {r.value_hi:.{digits}f}]"
            lines.append(f"{r.n:>5} {eps:>8} {r.gamma:>6g}  {acc:<24} {val:<26}")
        return "\n".join(lines)


def run_simulation(
    ns: Sequence[int] = FIG1_NS,
    epsilons: Sequence[float] = FIG1_EPSILONS,
    *,
    config: Optional[SimulationConfig] = None,
    random_state: Any = None,
    progress: bool = False,
    **settings: Any,
) -> SimulationResult:
    """Run the synthetic study of Fig. 1.

    Parameters
    ----------
    ns, epsilons
        Training sizes and budgets (fields of :class:`SimulationConfig`);
        ignored when ``config`` is given.
    config : SimulationConfig, optional
        Every setting at once; keyword ``settings`` override its fields.
    random_state : None, int or numpy Generator
    progress : bool, default=False
        Draw a progress bar on stderr.
    **settings
        Other fields of :class:`SimulationConfig` (``reps``, ``test_size``,
        ``gamma_table``, ``huber_h``, ``weights_upper_bound``, ``backend``).

    Returns
    -------
    SimulationResult
    """
    start = time.perf_counter()
    if config is None:
        settings = {"ns": ns, "epsilons": epsilons, **settings}
    cfg = resolve_config(SimulationConfig, config, settings)
    ns, eps_list, reps, test_size = list(cfg.ns), list(cfg.epsilons), cfg.reps, cfg.test_size
    w_max, huber_h, backend = cfg.weights_upper_bound, cfg.huber_h, cfg.backend
    table: GammaTable = get_gamma_table(cfg.gamma_table)
    rng = resolve_rng(random_state)
    scaler = FeatureScaler.from_bounds((np.zeros(_P), np.ones(_P)), _P)
    loss = HuberHingeLoss(huber_h)
    scale = scaler.column_scale * scaler.dimension_scale

    gammas = {n: [table.lookup(n, e) for e in eps_list] for n in ns}
    total = sum(len(set(g)) + 1 for g in gammas.values())
    rows, runs = [], {}
    with Progress(total, "simulate", enabled=progress) as bar:
        for n in ns:
            X, A, B, _ = _draw_block(n, reps, rng)
            Xt, At, Bt, optimal = _draw_block(test_size, reps, rng)
            w, _ = owl_weights(B, np.full(B.shape, 0.5), w_max)
            Z = (np.concatenate([np.ones((reps, n, 1)), np.clip(X, 0.0, 1.0)], axis=2) / scaler.column_scale
                 ) / scaler.dimension_scale
            solutions, theta0 = {}, None
            for gamma in sorted(set(gammas[n]), reverse=True):  # warm starts from the next larger gamma
                theta0 = solve_each(Z, A, w, gamma=gamma, loss=loss, theta0=theta0, backend=backend, tol=DEFAULT_TOL)
                solutions[gamma] = theta0
                bar.update()
            coefs = np.empty((reps, len(eps_list), _P + 1))
            for k, (eps, gamma) in enumerate(zip(eps_list, gammas[n])):
                coefs[:, k, :] = perturb(solutions[gamma], epsilon=eps, gamma=gamma, weights_upper_bound=w_max,
                                         n_samples=n, tol=DEFAULT_TOL, rng=rng) / scale
            acc, val = _score(Xt, At, Bt, optimal, coefs)
            bar.update()
            for k, (eps, gamma) in enumerate(zip(eps_list, gammas[n])):
                a_mean, a_lo, a_hi, a_sd = t_interval(acc[:, k])
                v_mean, v_lo, v_hi, v_sd = t_interval(val[:, k])
                rows.append(dict(n=n, epsilon=eps, accuracy_mean=a_mean, accuracy_lo=a_lo, accuracy_hi=a_hi,
                                 value_mean=v_mean, value_lo=v_lo, value_hi=v_hi, gamma=gamma, accuracy_sd=a_sd,
                                 value_sd=v_sd, reps=reps))
                runs[(n, eps)] = (acc[:, k].copy(), val[:, k].copy())
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    return SimulationResult(
        table=frame, runs=runs, reps=reps, test_size=test_size, gamma_source=table.source,
        seconds=time.perf_counter() - start,
        notes=(
            "design: x ~ U[0,1]^4, A = +-1 w.p. 1/2, f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4, "
            "B ~ N(0.01 + 0.02 x4 + 3 A f(x), 0.5^2), shifted per dataset by |min B| + 0.001; W = 30",
            "accuracy: share of test rows whose recommendation equals sign(f(x)); value: self-normalised IPW "
            "(propensity 1/2) with rules and treatments both coded -1/+1 (the corrected estimator)",
            "the non-private solution is computed once per dataset and gamma; each epsilon adds fresh noise",
        ),
    )


def _score(Xt, At, Bt, optimal, coefs, chunk: int = 25):
    """Accuracy and value of every rule (reps, K) on its repetition's test set."""
    reps, K = coefs.shape[0], coefs.shape[1]
    acc = np.empty((reps, K))
    val = np.empty((reps, K))
    for s in range(0, reps, chunk):
        e = min(s + chunk, reps)
        dec = np.matmul(Xt[s:e], np.transpose(coefs[s:e, :, 1:], (0, 2, 1))) + coefs[s:e, None, :, 0]
        rule = dec > 0
        acc[s:e] = (rule == (optimal[s:e, :, None] > 0)).mean(axis=1)
        val[s:e] = ipw_values(rule, At[s:e], Bt[s:e])  # constant propensity 1/2: it cancels
    return acc, val
