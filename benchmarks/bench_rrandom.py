"""Time 10^6 draws from RRandom (R-compatible streams) against numpy's default_rng.

Run: ``.venv/bin/python benchmarks/bench_rrandom.py [--n 1000000] [--repeat 3]``.
Prints the best-of-``repeat`` wall time per sampler and the ratio RRandom / numpy.
numpy's PCG64 samplers are not R's algorithms; they are only a speed yardstick.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, List, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydpowl.rrandom import RRandom  # noqa: E402


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="draws per sampler")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is shown")
    args = ap.parse_args(argv)
    n = args.n
    r = RRandom(1)
    g = np.random.default_rng(1)
    rows: List[Tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("rnorm / standard_normal", lambda: r.rnorm(n), lambda: g.standard_normal(n)),
        ("runif / random", lambda: r.runif(n), lambda: g.random(n)),
        ("rgamma(shape=5) / gamma(5)", lambda: r.rgamma(n, 5.0), lambda: g.gamma(5.0, size=n)),
        ("rgamma(shape=1) / gamma(1)", lambda: r.rgamma(n, 1.0), lambda: g.gamma(1.0, size=n)),
        ("rgamma(shape=0.5) / gamma(0.5)", lambda: r.rgamma(n, 0.5), lambda: g.gamma(0.5, size=n)),
        ("rexp / standard_exponential", lambda: r.rexp(n), lambda: g.standard_exponential(n)),
        ("rt(df=8) / standard_t(8)", lambda: r.rt(n, 8.0), lambda: g.standard_t(8.0, size=n)),
        ("sample.int(1e6, n, TRUE) / integers", lambda: r.sample_int(10**6, n, replace=True),
         lambda: g.integers(10**6, size=n)),
    ]
    print(f"{n:,} draws, best of {args.repeat} (seconds)")
    print(f"{'sampler (RRandom / numpy)':<38} {'RRandom':>9} {'numpy':>9} {'ratio':>7}")
    for label, ours, theirs in rows:
        t_r = _best(ours, args.repeat)
        t_n = _best(theirs, args.repeat)
        print(f"{label:<38} {t_r:9.3f} {t_n:9.3f} {t_r / t_n:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
