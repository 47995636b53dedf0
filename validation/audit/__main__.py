"""``python -m validation.audit``: sensitivity search and black-box privacy audit of both engines.

Exit status: 0 when every check passes (sensitivity ratios <= 1, empirical
epsilon lower bounds <= the claimed epsilon, the negative control flagged,
no bit-level leak in any number pydpowl releases, unguaranteed constants
refused, no count or warning of a neighbour visible in the default output),
1 when any check fails, 2 when the run cannot start (e.g. R, DPpack
or the R package pydpowl missing: the message names what to install;
``--no-r`` audits pydpowl's Python engine alone).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .report import write_report
from .run import run_audit


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation.audit", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("results/audit"), help="report directory (default results/audit)")
    p.add_argument("--quick", action="store_true", help="reduced searches and samples (a couple of minutes)")
    p.add_argument("--n", type=int, default=None,
                   help="releases per dataset in each half (default 10000, 1500 with --quick)")
    p.add_argument("--alpha", type=float, default=0.05, help="each bound holds with probability 1 - alpha")
    p.add_argument("--seed", type=int, default=20240601, help="seed of the searches and the releases")
    p.add_argument("--no-r", action="store_true", help="audit pydpowl only (no DPpack column)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG")
    p.add_argument("--no-analysis", action="store_true", help="skip the audit of the whole private analysis")
    p.add_argument("--no-disclosure", action="store_true",
                   help="skip the audit of the default output channels (counts and warnings on neighbours)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.n is not None and args.n < 100:
        print(f"error: --n must be >= 100 for meaningful bounds, got {args.n}", file=sys.stderr)
        return 2
    if not 0 < args.alpha < 1:
        print(f"error: --alpha must be in (0, 1), got {args.alpha}", file=sys.stderr)
        return 2
    engines = ("pydpowl",) if args.no_r else ("pydpowl", "DPpack")
    if not args.no_r:
        try:
            from r_reference._session import require_packages

            require_packages("DPpack")
        except ImportError as exc:  # RUnavailableError names the set-up command
            print(f"error: {exc} (or pass --no-r)", file=sys.stderr)
            return 2
        from .rfrontend import r_front_end_available

        if not r_front_end_available():
            print("error: the R package pydpowl (the R front end, audited at the bit level) does not load its "
                  "engine; install it (make setup, or R CMD INSTALL -l LIB rpkg/pydpowl with R_LIBS=LIB) "
                  "or pass --no-r", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    result = run_audit(quick=args.quick, engines=engines, n_per_split=args.n, alpha=args.alpha, seed=args.seed,
                       log=sys.stderr, r_front_end=not args.no_r, analysis=not args.no_analysis,
                       disclosure=not args.no_disclosure)
    result.seconds = time.perf_counter() - t0
    report = write_report(result, args.out, plots=not args.no_plots)
    for s in result.sensitivity:
        print(f"{s.config.name:20s} worst ||theta - theta'||/Delta = {s.worst.ratio:.6f}"
              + (f", other weights moved by {s.worst_weight_ratio:.4f} C" if s.worst.C > 0 else "")
              + (" (conditional on an assumption: not in the verdict)" if s.config.conditional else ""))
    for c in result.checks:
        print(f"{c.config:20s} {c.check}: {'PASS' if c.passed else 'FAIL'}")
    for r in result.black_box:
        print(f"{r.config:20s} {r.engine:8s} eps={r.epsilon:<4g} lower bound {r.epsilon_lb:.3f} "
              f"(ideal {r.ideal:.3f}) {r.verdict}")
    for fl in result.floating:
        if fl.grid is None:
            verdict = ("FAIL" if fl.leaks else "PASS") if fl.in_verdict else "(for comparison)"
            print(f"{fl.config:20s} bit level {fl.engine:9s} {fl.attribute:18s} eps={fl.epsilon:<4g} lower bound "
                  f"{fl.bound.epsilon_lb:.3f} {verdict}")
    for an in result.analysis:
        print(f"{an.config:18s} {an.mode + (' (control)' if an.control else ''):20s} lower bound "
              f"{an.epsilon_lb:.3f} (ledger {an.claimed:g}) {an.verdict}")
    for dc in result.disclosure:
        print(f"{dc.command:36s} {dc.neighbour:8s} {'differ (control)' if dc.control else 'identical':17s} "
              f"{'PASS' if dc.passed else 'FAIL'}")
    print(f"\n{'PASS' if result.passed else 'FAIL'}; report: {report} ({result.seconds:.0f} s)")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
