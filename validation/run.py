"""One validation run: cases -> both engines -> checks -> report."""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import List, Optional, TextIO

import numpy as np

from .cases import build_cases
from .checks import (
    CheckRow,
    KSTest,
    NonprivateSummary,
    bonferroni_rows,
    data_check,
    nonprivate_checks,
    one_sample_noise_tests,
    replay_check,
    two_sample_noise_tests,
)
from .engines import replay_noise, run_dppack, run_pydpowl
from .family import build_family_cases, run_family_case
from .report import RunInfo, write_report

__all__ = ["DEFAULT_ALPHA", "ValidationResult", "run_validation"]

#: family-wise level of all KS tests of a run
DEFAULT_ALPHA = 0.01
#: private fits per case replayed with pydpowl's R-compatible stream
N_REPLAY = 20


@dataclass(frozen=True)
class ValidationResult:
    rows: List[CheckRow]
    summaries: List[NonprivateSummary]
    info: RunInfo
    report: Path
    family: List = field(default_factory=list)


def _versions() -> dict:
    import pydpowl
    from r_reference._session import call_r

    r = call_r('function() c(R = paste(R.version$major, R.version$minor, sep = "."), '
               'DPpack = as.character(utils::packageVersion("DPpack")))')
    return {"pydpowl": pydpowl.__version__, "R": str(r[0]), "DPpack": str(r[1]),
            "numpy": np.__version__, "python": platform.python_version()}


def run_validation(*, out: Path, quick: bool, k: int, alpha: float, seed: int, cyp_path: Optional[Path],
                   plots: bool = True, log: Optional[TextIO] = None) -> ValidationResult:
    """Run every case and write ``out/report.md`` (plus figures); return rows and summaries.

    Raises
    ------
    RUnavailableError
        When R, rpy2 or DPpack is missing.
    """
    from r_reference._session import require_packages

    require_packages("DPpack")
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cases, notes = build_cases(quick=quick, cyp_path=cyp_path, seed=seed)
    family_cases = build_family_cases(quick=quick, seed=seed)
    fixed_rows: List[CheckRow] = []
    ks: List[KSTest] = []
    summaries: List[NonprivateSummary] = []
    noises = {}
    timings = {}
    for idx, case in enumerate(cases):
        if log is not None:
            print(f"[validation] {case.name}: n={case.n}, d={case.dim}, K={k} ...", file=log, flush=True)
        py = run_pydpowl(case, k, seed=seed, case_index=idx)
        rr = run_dppack(case, k, seed=seed, case_index=idx)
        timings[case.name] = {"pydpowl": py.seconds, "DPpack": rr.seconds}
        fixed_rows.append(data_check(case.name, py.Z, py.y, py.w, rr.Z, rr.y, rr.w))
        scale = None
        if case.kind == "owl":
            from pydpowl import FeatureScaler

            sc = FeatureScaler.from_bounds(case.feature_bounds, case.X.shape[1], True)
            scale = sc.column_scale * sc.dimension_scale
        rows, summary = nonprivate_checks(case.name, py.Z, py.y, py.w, gamma=case.gamma, loss=case.loss,
                                          theta_py=py.nonprivate, theta_r=rr.nonprivate, original_scale=scale)
        fixed_rows += rows
        n_rep = min(N_REPLAY, k)
        if rr.seeds is None:  # run_dppack records the seeds R used
            raise RuntimeError(f"{case.name}: the DPpack run recorded no seeds to replay.")
        fixed_rows.append(replay_check(case.name, replay_noise(case, rr.seeds[:n_rep]), rr.noise[:n_rep]))
        summaries.append(summary)
        rate = case.noise_rate
        ks += one_sample_noise_tests(case.name, "pydpowl", py.noise, rate)
        ks += one_sample_noise_tests(case.name, "DPpack", rr.noise, rate)
        ks += two_sample_noise_tests(case.name, py.noise, rr.noise)
        noises[case.name] = ({"pydpowl": py.noise, "DPpack": rr.noise}, rate)
    family_summaries = []
    for j, fcase in enumerate(family_cases):
        if log is not None:
            print(f"[validation] {fcase.name}: n={fcase.n}, d={fcase.d}, K={fcase.k or k} ...", file=log, flush=True)
        f_rows, f_ks, f_summary = run_family_case(fcase, k=k, seed=seed, case_index=100 + j, n_replay=N_REPLAY)
        fixed_rows += f_rows
        ks += f_ks
        p_min = min((t.p_value for t in f_ks), default=float("nan"))
        family_summaries.append(replace(f_summary, ks_min_p=p_min))
        timings[fcase.name] = {"pydpowl": f_summary.seconds_py, "DPpack": f_summary.seconds_r}
    from .multistage import dtrlearn2_cases, dtrlearn2_rows, multiarm_scipy_rows

    multi_rows = multiarm_scipy_rows()
    require_packages("DTRlearn2")
    multi_cases = dtrlearn2_cases(quick)
    if log is not None:
        print(f"[validation] DTRlearn2 cross-checks: {len(multi_cases)} cases ...", file=log, flush=True)
    multi_rows += dtrlearn2_rows(multi_cases)
    fixed_rows += multi_rows
    ks_rows, threshold = bonferroni_rows(ks, alpha)
    rows = []
    multi_names = list(dict.fromkeys(r.case for r in multi_rows))
    for name in [c.name for c in cases] + [c.name for c in family_cases] + multi_names:  # rows grouped by case
        rows += [r for r in fixed_rows if r.case == name]
        rows += [r for r in ks_rows if r.case == name]
    figures: List[Path] = []
    if plots:
        from .plots import plot_coef_differences, plot_direction_hist, plot_noise_qq

        figures.append(plot_coef_differences(out / "coef_differences.png", summaries))
        for name, (nz, rate) in noises.items():
            figures.append(plot_noise_qq(out / f"noise_norm_qq_{name}.png", name, nz, rate))
            figures.append(plot_direction_hist(out / f"direction_u1_{name}.png", name, nz, coordinate=1))
    info = RunInfo(
        mode="quick" if quick else "full", k=k, alpha=alpha, n_ks_tests=len(ks), threshold=threshold, seed=seed,
        seconds=time.perf_counter() - t0, versions=_versions(), notes=list(notes),
        case_titles={**{c.name: c.title + (f" ({'; '.join(c.notes)})" if c.notes else "")
                        for c in list(cases) + list(family_cases)},
                     **{c.name: c.title + " (pydpowl at epsilon = inf vs DTRlearn2::owl, hinge, linear, "
                                          "res.lasso = FALSE, solver = 'ipop')" for c in multi_cases},
                     **{f"multiarm-K{K}": f"{K} arms: the one solver vs scipy trust-exact on the matrix objective"
                        for K in (3, 4)}},
        timings=timings,
    )
    report = write_report(out, info, rows, summaries, figures, family=family_summaries)
    return ValidationResult(rows, summaries, info, report, family_summaries)
