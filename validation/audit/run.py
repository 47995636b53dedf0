"""Run the privacy audit: sensitivity search, black-box tests on both engines, bit-level tests.

For every configuration the sensitivity search finds the worst neighbouring
pair (D, D'); for every claimed epsilon the black-box audit then draws private
releases on D and on D' from pydpowl (through the public ``fit``, one seed per
release) and from DPpack (through R, many seeds in one R call), and bounds the
epsilon the releases reveal (:mod:`validation.audit.blackbox`). A negative
control releases with noise calibrated for ``4 epsilon`` while claiming
``epsilon``: the audit must flag it, showing it can fail. Configurations whose
guarantee rests on an assumption about the data (``assume_hessian_bound``) are
searched for information only; the audit checks that their bound is refused
without the opt-in. The bit-level audit tests every number pydpowl releases
(Python attributes, summary, JSON export, and the R front end's ``$coeff`` and
``dpowl()``): as released, none may leak beyond epsilon; DPpack's full-precision
``coeff`` is shown for comparison. The exact-law checks (:mod:`.exact`) compute
the law of the discrete samplers on adversarial neighbours (the exponential
mechanism, exact and DPpack's replay) where no sample could show it.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO

import numpy as np

from .blackbox import BoundVerdict, EpsilonBound, epsilon_lower_bound
from .configs import AuditConfig, Dataset, bit_level_configs, default_configs, quick_configs
from .family import family_configs, quick_family_configs
from .objective import DensitySearchResult, objective_configs, quick_objective_configs
from .floating import LsbBound, lsb_lower_bound, round_releases
from .sensitivity import SensitivityResult, sensitivity_search

__all__ = ["BlackBoxRow", "FloatingRow", "CheckResult", "AuditResult", "run_audit", "black_box_row",
           "floating_rows", "binade_crossing_pair", "assumption_check", "RATIO_TOLERANCE", "ROUNDING_GRID",
           "VERDICT_ENGINES"]

#: slack on ``ratio <= 1`` for the certified solver's rounding (gradient norm <= 1e-10)
RATIO_TOLERANCE = 1e-8
#: how much weaker than claimed the negative control's noise is
CONTROL_FACTOR = 4.0
#: grid of the rounded releases in the bit-level audit (2^-24, about 6e-8)
ROUNDING_GRID = 2.0 ** -24
#: configurations of the bit-level audit (besides :func:`bit_level_configs`); the quick run keeps the first
FLOATING_CONFIGS = ("werm-huber", "owl-intercept")
#: engines whose as-released numbers must pass the bit-level audit (DPpack's are shown for comparison)
VERDICT_ENGINES = ("pydpowl", "pydpowl-R")


@dataclass(frozen=True)
class BlackBoxRow(BoundVerdict):
    """One black-box audit: a configuration, an engine and a claimed epsilon.

    Attributes
    ----------
    config : str
    engine : {"pydpowl", "DPpack"}
    epsilon : float
        The claimed budget.
    noise_epsilon : float
        The budget the noise was calibrated for (differs from ``epsilon`` only in the control).
    ideal : float
        ``epsilon * ||theta_hat(D) - theta_hat(D')|| / Delta``: the exact privacy loss of this
        pair under the specified noise law (the most any test can reveal).
    bound : EpsilonBound
    control : bool
        True for the deliberately broken release (expected to be flagged).
    """

    config: str
    engine: str
    epsilon: float
    noise_epsilon: float
    ideal: float
    bound: EpsilonBound
    control: bool = False

    @property
    def claimed_epsilon(self) -> float:
        return self.epsilon


@dataclass(frozen=True)
class FloatingRow:
    """Bit-level audit of one engine's full-precision (or rounded) releases on a binade-crossing pair.

    Attributes
    ----------
    config, engine : str
    epsilon : float
    grid : float or None
        None for the releases as the engine returns them; else the rounding grid.
    bound : LsbBound
    attribute : str
        Which released numbers were tested.
    """

    config: str
    engine: str
    epsilon: float
    grid: Optional[float]
    bound: LsbBound
    attribute: str = "release"

    @property
    def leaks(self) -> bool:
        return self.bound.epsilon_lb > self.epsilon

    @property
    def in_verdict(self) -> bool:
        """pydpowl's releases as users get them (Python and R front end) count; DPpack and re-rounding do not."""
        return self.grid is None and self.engine in VERDICT_ENGINES


@dataclass(frozen=True)
class CheckResult:
    """A pass/fail check that is not a bound (e.g. that an unguaranteed constant is refused)."""

    config: str
    check: str
    passed: bool
    detail: str = ""


@dataclass
class AuditResult:
    """Everything one audit run produced."""

    sensitivity: List[SensitivityResult]
    black_box: List[BlackBoxRow]
    n_per_split: int
    alpha: float
    seed: int
    seconds: float = 0.0
    floating: List[FloatingRow] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    checks: List[CheckResult] = field(default_factory=list)
    analysis: List[Any] = field(default_factory=list)
    n_analysis: int = 0
    disclosure: List[Any] = field(default_factory=list)
    objective: List[DensitySearchResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        sens_ok = all(s.worst.ratio <= 1.0 + RATIO_TOLERANCE for s in self.sensitivity if not s.config.conditional)
        sens_ok = sens_ok and all(o.ratio <= 1.0 + RATIO_TOLERANCE and o.worst_gradient_ratio <= 1.0 + RATIO_TOLERANCE
                                  and o.worst_jacobian_ratio <= 1.0 + RATIO_TOLERANCE for o in self.objective)
        floating_ok = all(not r.leaks for r in self.floating if r.in_verdict)
        return (sens_ok and all(r.passed for r in self.black_box) and floating_ok
                and all(c.passed for c in self.checks) and all(r.passed for r in self.analysis)
                and all(r.passed for r in self.disclosure))


def _seeds(start: int, count: int) -> List[int]:
    return list(range(start, start + count))


def black_box_row(config: AuditConfig, D: Dataset, D1: Dataset, *, epsilon: float, engine: str,
                  n_per_split: int, seed: int, alpha: float = 0.05, noise_epsilon: Optional[float] = None,
                  control: bool = False) -> BlackBoxRow:
    """Draw ``2 n_per_split`` releases on D and on D' from one engine and bound epsilon.

    Seeds: D uses ``seed, seed + 1, ...`` and D' the next ``2 n_per_split`` integers,
    so the two samples are independent and every run is reproducible.
    """
    noise_eps = epsilon if noise_epsilon is None else noise_epsilon
    m = 2 * n_per_split
    s0, s1 = _seeds(seed, m), _seeds(seed + m, m)
    if engine == "pydpowl":
        R0, R1 = config.releases(D, noise_eps, s0), config.releases(D1, noise_eps, s1)
        t0, sens = config.minimiser(D)
        t1, _ = config.minimiser(D1)
    elif engine == "DPpack":
        R0, R1 = config.dppack_releases(D, noise_eps, s0), config.dppack_releases(D1, noise_eps, s1)
        t0 = config.dppack_releases(D, math.inf, [1])[0]
        t1 = config.dppack_releases(D1, math.inf, [1])[0]
        sens = config.minimiser(D)[1]
    else:
        raise ValueError(f"engine must be 'pydpowl' or 'DPpack', got {engine!r}.")
    # objective perturbation has no sensitivity (nan): no ideal privacy loss to report
    ideal = noise_eps * float(np.linalg.norm(t0 - t1)) / sens
    if getattr(config, "maps_releases", False):  # a fixed statistic of each release, chosen before seeing them
        R0, R1 = config.audit_map(D, D1, R0, epsilon), config.audit_map(D, D1, R1, epsilon)
    bound = epsilon_lower_bound(R0, R1, alpha=alpha, delta=float(getattr(config, "delta", 0.0)))
    return BlackBoxRow(config=config.name, engine=engine, epsilon=epsilon, noise_epsilon=noise_eps, ideal=ideal,
                       bound=bound, control=control)


def binade_crossing_pair(config: AuditConfig, D: Dataset, *, seed: int, tries: int = 200):
    """Replace record 0 of D by corners until a coefficient of the minimiser changes binade.

    Returns ``(D, D')``; most pairs qualify. Raises RuntimeError if none is found.
    """
    rng = np.random.default_rng(seed)
    t0, _ = config.minimiser(D)
    for _ in range(tries):
        x, v = config.record(config.corner(rng))
        D1 = D.with_record(0, x, -D.y[0], v)
        t1, _ = config.minimiser(D1)
        if (np.frexp(np.abs(t0))[1] != np.frexp(np.abs(t1))[1]).any():
            return D, D1
    raise RuntimeError(f"{config.name}: no binade-crossing neighbour in {tries} tries.")


def floating_rows(config: AuditConfig, D: Dataset, D1: Dataset, *, epsilon: float, engine: str,
                  n_per_split: int, seed: int, alpha: float = 0.05) -> List[FloatingRow]:
    """Bit-level bounds per released attribute, as returned and rounded to :data:`ROUNDING_GRID`.

    Engines and their released attributes: ``"pydpowl"``, every attribute of
    :meth:`AuditConfig.released_attributes` (``coef_`` or ``scaled_coef_``,
    ``intercept_, coef_``, ``summary()``, the JSON export); ``"pydpowl-R"``, the
    R front end's ``svmDP $coeff`` and ``dpowl()`` coefficients (seeds are R
    seeds); ``"DPpack"``, ``coeff``.
    """
    m = 2 * n_per_split
    s0, s1 = _seeds(seed, m), _seeds(seed + m, m)
    if engine == "pydpowl":
        A0 = config.released_attributes(D, epsilon, s0)
        A1 = config.released_attributes(D1, epsilon, s1)
        views = [(name, A0[name], A1[name]) for name in A0]
    elif engine == "pydpowl-R":
        from .rfrontend import R_INTERFACES, r_front_end_releases

        views = [(what, r_front_end_releases(config, D, epsilon, s0, interface=api),
                  r_front_end_releases(config, D1, epsilon, s1, interface=api)) for api, what in R_INTERFACES.items()]
    elif engine == "DPpack":
        views = [("coeff", config.dppack_releases(D, epsilon, s0, as_released=True),
                  config.dppack_releases(D1, epsilon, s1, as_released=True))]
    else:
        raise ValueError(f"engine must be 'pydpowl', 'pydpowl-R' or 'DPpack', got {engine!r}.")
    rows = []
    for what, a, b in views:
        rows.append(FloatingRow(config.name, engine, epsilon, None, lsb_lower_bound(a, b, alpha=alpha), what))
        rows.append(FloatingRow(config.name, engine, epsilon, ROUNDING_GRID,
                                lsb_lower_bound(round_releases(a, ROUNDING_GRID), round_releases(b, ROUNDING_GRID),
                                                alpha=alpha), what))
    return rows


def assumption_check(config: AuditConfig, data: Dataset) -> CheckResult:
    """The configuration's assumed Hessian bound must be refused without the opt-in, and warned about with it."""
    from pydpowl import PrivacyLeakWarning

    sample = config.propensity_part(data)
    try:
        config.propensity_model(assume=False).fit(sample.X, sample.y)
        refused, message = False, "accepted without assume_hessian_bound=True"
    except ValueError as exc:
        refused, message = "assume_hessian_bound=True" in str(exc), str(exc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.propensity_model(assume=True).fit(sample.X, sample.y)
    warned = any(issubclass(w.category, PrivacyLeakWarning) and "conditional on the assumption" in str(w.message)
                 for w in caught)
    detail = (f"without the opt-in: {'refused' if refused else 'NOT refused'} ({message[:90]}...); with it: "
              f"{'PrivacyLeakWarning (guarantee conditional)' if warned else 'NO warning'}")
    return CheckResult(config.name, f"hessian_lower_bound={config.hessian_lower_bound:g} > ridge={config.ridge:g}",
                       refused and warned, detail)


def run_audit(*, quick: bool = False, configs: Optional[Sequence[AuditConfig]] = None,
              engines: Sequence[str] = ("pydpowl", "DPpack"), n_per_split: Optional[int] = None,
              alpha: float = 0.05, seed: int = 20240601, log: Optional[TextIO] = None,
              search_options: Optional[Dict] = None, r_front_end: bool = False, analysis: bool = True,
              disclosure: bool = True) -> AuditResult:
    """Run the sensitivity search and the black-box audit.

    Parameters
    ----------
    quick : bool
        Smaller searches, one epsilon per configuration and fewer releases.
    configs : sequence of AuditConfig, optional
        Defaults to :func:`default_configs` (or :func:`quick_configs` when quick).
    engines : sequence of {"pydpowl", "DPpack"}
    n_per_split : int, optional
        Releases per dataset in each of the selection and evaluation halves
        (default 10000, 1500 when quick).
    alpha : float
        The epsilon lower bounds hold with probability >= 1 - alpha each.
    seed : int
        Seed of the searches and first seed of the releases.
    log : text stream, optional
        Progress lines (the library itself never prints).
    search_options : dict, optional
        Passed to :func:`sensitivity_search` (defaults depend on ``quick``).
    r_front_end : bool
        Also audit the R front end (needs the R package pydpowl; see
        :mod:`validation.audit.rfrontend`): its releases at the bit level, and
        that its default releases do not follow ``set.seed`` (fresh R sessions).
    analysis : bool, default=True
        Also audit the whole private analysis as one mechanism
        (:mod:`validation.audit.analysis`; half as many releases per split), and a
        two-stage regime, with its defaults and with output perturbation
        (:mod:`validation.audit.multistage`; at least 1000 releases per split; its
        rows join the analysis table).
    disclosure : bool, default=True
        Also check that a neighbour which changes only a count or a warning
        changes nothing a user sees by default (:mod:`validation.audit.disclosure`).
    """
    t0 = time.perf_counter()
    if configs is None:
        from .multiarm import multiarm_configs

        configs = list(quick_configs() + quick_family_configs() + multiarm_configs() + quick_objective_configs()) \
            if quick else list(default_configs() + family_configs() + multiarm_configs() + objective_configs())
    configs = list(configs)
    n_per_split = n_per_split or (1500 if quick else 10000)
    say: Callable[[str], None] = (lambda msg: print(msg, file=log, flush=True)) if log else (lambda msg: None)
    sens: List[SensitivityResult] = []
    rows: List[BlackBoxRow] = []
    checks: List[CheckResult] = []
    objective: List[DensitySearchResult] = []
    next_seed = seed
    for config in configs:
        options: Dict[str, Any] = dict(n_random=40, n_starts=2, maxiter=30, n_replaced=1) if quick else \
            dict(n_random=200, n_starts=6, maxiter=60, n_replaced=2,
                 bases=("random", "balanced", "random", "balanced"))
        if config.propensity == "logistic":  # every evaluation refits the propensity model (twice for "pair")
            options.update(n_starts=max(1, options["n_starts"] // 2), modes=("replace",) if quick else
                           ("replace", "pair"), n_random=options["n_random"] // 2, maxiter=options["maxiter"] // 2,
                           bases=("random", "balanced"))
        options.update(search_options or {})
        conditional = config.conditional
        if conditional:
            check = assumption_check(config, config.random_dataset(np.random.default_rng([seed, 7])))
            checks.append(check)
            say(f"[audit] {config.name}: {check.check}: {'PASS' if check.passed else 'FAIL'} ({check.detail})")
        if getattr(config, "sensitivity_applies", True):
            result = sensitivity_search(config, seed=seed, **options)
            sens.append(result)
            D_pair, D1_pair = result.D, result.D1
            say(f"[audit] {config.name}: worst ||theta - theta'|| / Delta = {result.worst.ratio:.6f}, other weights "
                f"moved by {result.worst_weight_ratio:.4f} C ({result.found_by}; {result.n_evaluations} pairs, "
                f"{result.seconds:.0f} s)" + (" [conditional: not in the verdict]" if conditional else ""))
            if conditional:
                continue  # a release under an assumption is not audited as if it were guaranteed
        else:  # objective perturbation: no sensitivity to search; a pair that moves the gradient most
            D_pair, D1_pair = config.audit_pair(seed)
            if hasattr(config, "density"):  # weighted objective perturbation: the density argument, searched
                for eps in config.epsilons:
                    found = config.density(eps, quick=quick, seed=seed)
                    objective.append(found)
                    say(f"[audit] {config.name} eps={eps:g}: worst log density ratio / eps = {found.ratio:.6f}, "
                        f"gradient change / 2W = {found.worst_gradient_ratio:.6f}, Jacobian log ratio / its bound = "
                        f"{found.worst_jacobian_ratio:.6f} ({found.n_evaluations} evaluations, "
                        f"{found.seconds:.0f} s)")
            say(f"[audit] {config.name}: objective perturbation, black-box (corner record, label flipped)")
        n_here = min(n_per_split, getattr(config, "max_releases_per_split", n_per_split))
        for eps in config.epsilons:
            for engine in [e for e in engines if e != "DPpack" or config.compare_dppack]:
                t = time.perf_counter()
                row = black_box_row(config, D_pair, D1_pair, epsilon=eps, engine=engine,
                                    n_per_split=n_here, seed=next_seed, alpha=alpha)
                rows.append(row)
                say(f"[audit] {config.name} {engine} eps={eps:g}: lower bound {row.epsilon_lb:.3f} "
                    f"(ideal {row.ideal:.3f}) {row.verdict} [{time.perf_counter() - t:.0f} s]")
                next_seed += 4 * n_per_split
    # negative control on the configuration whose pair comes closest to the bound
    eps = 1.0
    # (not a random-feature configuration: its releases mix over the features, which no test separates)
    controllable = [r for r in sens if getattr(r.config, "kernel", "linear") != "gaussian"
                    and not getattr(r.config, "conditional", False)]
    if controllable:
        worst = max(controllable, key=lambda s: s.worst.ratio)
        control = black_box_row(worst.config, worst.D, worst.D1, epsilon=eps, engine="pydpowl",
                                n_per_split=n_per_split, seed=next_seed, alpha=alpha,
                                noise_epsilon=CONTROL_FACTOR * eps, control=True)
        rows.append(control)
        say(f"[audit] control ({worst.config.name}, noise for eps={CONTROL_FACTOR * eps:g}, claimed {eps:g}): "
            f"lower bound {control.epsilon_lb:.3f} {control.verdict}")
        next_seed += 4 * n_per_split
    # and on the first objective-perturbation configuration audited through its release statistic
    mapped = [c for c in configs if getattr(c, "maps_releases", False) and c.delta == 0]
    if mapped:
        c = mapped[0]
        n_c = min(n_per_split, getattr(c, "max_releases_per_split", n_per_split))
        D_pair, D1_pair = c.audit_pair(seed)
        control = black_box_row(c, D_pair, D1_pair, epsilon=eps, engine="pydpowl", n_per_split=n_c,
                                seed=next_seed, alpha=alpha, noise_epsilon=CONTROL_FACTOR * eps, control=True)
        rows.append(control)
        say(f"[audit] control ({c.name}, noise for eps={CONTROL_FACTOR * eps:g}, claimed {eps:g}): "
            f"lower bound {control.epsilon_lb:.3f} {control.verdict}")
        next_seed += 4 * n_c
    floating: List[FloatingRow] = []
    n_fp = max(500, n_per_split // 3)
    wanted = FLOATING_CONFIGS[:1] if quick else FLOATING_CONFIGS
    targets = [(r.config, r.D) for r in sens if r.config.name in wanted]
    targets += [(c, c.random_dataset(np.random.default_rng([seed, 99]))) for c in bit_level_configs()]
    for config, base in targets:
        D, D1 = binade_crossing_pair(config, base, seed=seed)
        eps = config.epsilons[0]
        fp_engines = list(engines) + (["pydpowl-R"] if r_front_end and config.kind == "owl" else [])
        for engine in fp_engines:
            fl = floating_rows(config, D, D1, epsilon=eps, engine=engine, n_per_split=n_fp, seed=next_seed,
                               alpha=alpha)
            floating.extend(fl)
            next_seed += 4 * n_fp
            for raw, rounded in zip(fl[::2], fl[1::2]):
                say(f"[audit] bit-level {config.name} {engine} {raw.attribute} eps={eps:g}: lower bound "
                    f"{raw.bound.epsilon_lb:.3f} as released, {rounded.bound.epsilon_lb:.3f} rounded to 2^-24")
    from .exact import exact_law_checks

    for check in exact_law_checks():
        checks.append(check)
        say(f"[audit] {check.config}: {check.check}: {'PASS' if check.passed else 'FAIL'} ({check.detail})")
    notes = [] if r_front_end else ["the R front end was not audited (bit level, randomness) (--no-r)"]
    if r_front_end:
        from .rfrontend import r_stream_checks

        for check in r_stream_checks(seed=seed % 2**31):
            checks.append(check)
            say(f"[audit] {check.config}: {check.check}: {'PASS' if check.passed else 'FAIL'} ({check.detail})")
    analysis_rows: List[Any] = []
    n_analysis = max(100, n_per_split // 2)
    if analysis:
        from .analysis import run_analysis_audit

        analysis_rows = run_analysis_audit(quick=quick, n_per_split=n_analysis, seed=next_seed, alpha=alpha, say=say)
        next_seed += 16 * n_analysis
        from .multistage import run_multistage_audit

        # the whole multi-stage regime as one mechanism (rows of the analysis table: a ledger total vs a bound)
        analysis_rows += run_multistage_audit(n_per_split=max(1000, n_analysis), seed=next_seed, alpha=alpha,
                                              say=say)
    disclosure_rows: List[Any] = []
    if disclosure:
        import tempfile

        from .disclosure import api_rows
        from .disclosure import disclosure_rows as run_disclosure

        with tempfile.TemporaryDirectory(prefix="pydpowl-disclosure-") as tmp:
            disclosure_rows = run_disclosure(Path(tmp)) + api_rows()
        for r in disclosure_rows:
            say(f"[audit] default output: {r.command} on the {r.neighbour!r} neighbour: "
                f"{'differs' if r.differs else 'identical'} {'PASS' if r.passed else 'FAIL'}"
                + (f" ({r.detail})" if r.differs else ""))
    return AuditResult(sensitivity=sens, black_box=rows, n_per_split=n_per_split, alpha=alpha, seed=seed,
                       seconds=time.perf_counter() - t0, floating=floating, checks=checks, notes=notes,
                       analysis=analysis_rows, n_analysis=n_analysis if analysis else 0,
                       disclosure=disclosure_rows, objective=objective)
