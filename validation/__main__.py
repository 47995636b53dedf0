"""``python -m validation``: run pydpowl and DPpack on shared cases and write a report.

Exit status: 0 when every check passes, 1 when any check fails, 2 when the run
cannot start (e.g. R or DPpack missing: the message names ``make setup``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .run import DEFAULT_ALPHA, run_validation
from .cases import default_cyp_path
from .report import format_table, summary_rows


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="smaller run for CI (K=300 fits per engine and case, no n=2500 case)")
    p.add_argument("--out", type=Path, default=Path("results/validation"), help="report directory")
    p.add_argument("--cyp-data", type=Path, default=default_cyp_path(),
                   help="public CYP-GUIDES clinical CSV (default: ../shared/data/cyp_guides_clinical.csv "
                        "relative to the repository root)")
    p.add_argument("--k", type=int, default=None, help="private fits per engine and case "
                   "(default 1000, 300 with --quick)")
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                   help=f"family-wise level of the KS tests, Bonferroni-adjusted (default {DEFAULT_ALPHA})")
    p.add_argument("--seed", type=int, default=20240601, help="run seed (data, R seeds, pydpowl noise)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    k = args.k if args.k is not None else (300 if args.quick else 1000)
    if k < 20:
        print(f"error: --k must be >= 20 for meaningful KS tests, got {k}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        result = run_validation(out=args.out, quick=args.quick, k=k, alpha=args.alpha, seed=args.seed,
                                cyp_path=args.cyp_data, plots=not args.no_plots, log=sys.stderr)
    except ImportError as exc:  # RUnavailableError included: names the set-up command
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = result.rows
    print(format_table(summary_rows(rows), markdown=False))
    for note in result.info.notes:
        print(f"NOTE: {note}")
    n_fail = sum(r.verdict == "FAIL" for r in rows)
    print(f"\n{len(rows) - n_fail} passed, {n_fail} failed; report: {result.report} "
          f"({time.perf_counter() - t0:.0f} s)")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
