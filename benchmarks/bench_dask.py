"""Benchmark: DP-OWL on Dask (a LocalCluster of 2 worker processes) vs in memory vs DPpack, data on disk.

For each n (``--sizes``, default 1e6 and 1e7; the issue's grid adds 1e8) it

1. writes the paper's synthetic design (4 features in [0, 1] + intercept,
   treatment +-1 with probability 1/2, benefits shifted by the public
   constant 10 and clipped at 0, W = 30) chunk by chunk as ``.npy`` chunks
   (never the whole dataset in memory), after checking the free disk space;
2. Dask: starts a fresh LocalCluster (2 worker processes, 1 thread each) per
   n and persist mode, and times ``DPOWL.fit`` on the lazily opened chunks
   (:func:`pydpowl.datasets.chunked.open_npy_chunks`; every fit reads the
   files), ``--repeats`` times: the median time per fit, the passes over
   the data (:func:`pydpowl.engine.dask_problem.track_passes`), the client's
   peak memory (its resident set sampled every 10 ms during the fits, and
   tracemalloc's peak of one more fit) and the workers' peak resident sets;
3. in memory, in a fresh process: loads the chunks into one array (timed)
   and times ``DPOWL.fit`` (median of ``--repeats``) and its peak memory;
   skipped when the estimated need (160 bytes per row) exceeds half of the
   available memory, and compares its release with the Dask release (same
   seed);
4. DPpack, in a fresh process: loads the chunks and times ``svmDP$fit``
   through rpy2 (inside R, the fit alone; ``r_reference.fit_svmdp``) for
   n <= ``--r-max``;
5. the CSV reader path for n <= ``--csv-max``: the chunks rewritten as CSV
   files, then :func:`pydpowl.datasets.chunked.read_csv_chunks` and the fit
   on the cluster (what ``pydpowl fit --engine dask`` does).

Prints a markdown table, the crossover of Dask and in-memory fits and the
release agreement. The machine is shared: timings are noisy (medians).

Run: ``python benchmarks/bench_dask.py`` (``make bench-dask``; the full grid:
``make bench-dask BENCH_DASK_ARGS="--sizes 1e6,1e7,1e8"``); ``--help`` for options.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

W = 30.0
GAMMA = 100.0
EPSILON = 1.0
#: the paper's mechanism (DPOWL's default uses residual weights, which Dask inputs do not take)
PAPER = {"mechanism": "output", "residual": False, "huber_h": 0.5}
BENEFIT_SHIFT = 10.0
BOUNDS = (np.zeros(4), np.ones(4))
#: bytes per row an in-memory DPOWL fit needs at its peak (data, scaled rows, weights, solver work arrays)
MEMORY_BYTES_PER_ROW = 160


def chunk_rows_for(n: int) -> int:
    """16 chunks up to 1e7 rows, chunks of 1e6 rows above (at least 50,000 rows per chunk)."""
    return int(min(max(n // 16, 50_000), 1_000_000))


def synthetic_chunks(n: int, chunk_rows: int, seed: int):
    """The paper's design, chunk by chunk (a seed per chunk), with a public benefit shift."""
    from pydpowl.datasets import make_synthetic_owl

    for k, start in enumerate(range(0, n, chunk_rows)):
        rows = min(chunk_rows, n - start)
        d = make_synthetic_owl(rows, shift=BENEFIT_SHIFT, random_state=np.random.default_rng([seed, k]))
        yield {"X": d.X.to_numpy(dtype=np.float64), "treatment": d.treatment, "benefit": d.benefit}


def write_data(directory: Path, n: int, seed: int) -> float:
    from pydpowl.datasets.chunked import write_npy_chunks

    need = n * 8 * 6 * 1.1
    directory.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory.parent).free
    if need > 0.8 * free:
        raise SystemExit(f"[bench-dask] n={n:,} needs about {need / 1e9:.1f} GB on disk; "
                         f"{free / 1e9:.1f} GB free under {directory.parent}.")
    t0 = time.perf_counter()
    write_npy_chunks(directory, synthetic_chunks(n, chunk_rows_for(n), seed))
    return time.perf_counter() - t0


def write_csv(npy_dir: Path, csv_dir: Path) -> float:
    """The npy chunks rewritten as one CSV file per chunk (one chunk in memory at a time)."""
    import pandas as pd

    t0 = time.perf_counter()
    csv_dir.mkdir(parents=True, exist_ok=True)
    for k, path in enumerate(sorted((npy_dir / "X").glob("*.npy"))):
        X = np.load(path)
        frame = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
        frame["A"] = np.load(npy_dir / "treatment" / path.name).astype(int)
        frame["B"] = np.load(npy_dir / "benefit" / path.name)
        frame.to_csv(csv_dir / f"part-{k:04d}.csv", index=False)
    return time.perf_counter() - t0


class PeakRSS:
    """Samples this process's resident set size every ``interval`` seconds while active."""

    def __init__(self, interval: float = 0.01) -> None:
        import psutil

        self._proc, self._interval = psutil.Process(), interval
        self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> "PeakRSS":
        self.peak = self._proc.memory_info().rss
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            self._stop.wait(self._interval)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss)


def _worker_peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def bench_dask(directory: Path, n: int, *, persist, repeats: int, seed: int) -> dict:
    """Fits on a fresh 2-process LocalCluster; times, passes, client and worker memory."""
    import dask
    from distributed import Client, LocalCluster

    from pydpowl import DPOWL
    from pydpowl.datasets.chunked import open_npy_chunks
    from pydpowl.engine.dask_problem import track_passes

    row: Dict[str, object] = {"persist": persist}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client, dask.config.set({"pydpowl.persist": persist}):
        arrays = open_npy_chunks(directory)
        row["chunks"] = arrays["X"].numblocks[0]
        times, models = [], []
        with PeakRSS() as rss:
            for _ in range(repeats):
                est = DPOWL(epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, feature_bounds=BOUNDS,
                            random_state=seed, **PAPER)
                with track_passes() as log:
                    t0 = time.perf_counter()
                    est.fit(arrays["X"], arrays["treatment"], arrays["benefit"], 0.5)
                    times.append(time.perf_counter() - t0)
                models.append(est)
        tracemalloc.start()
        DPOWL(epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, feature_bounds=BOUNDS,
              random_state=seed, **PAPER).fit(arrays["X"], arrays["treatment"], arrays["benefit"], 0.5)
        row["client_tracemalloc"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        workers = client.run(_worker_peak_rss)
    row.update(times=times, fit=float(np.median(times)), passes=log.total, evaluations=log.evaluations,
               line_search=log.line_search, client_rss=rss.peak, workers_rss=max(workers.values()),
               workers_rss_total=sum(workers.values()), coef=models[-1].scaled_coef_.tolist(),
               nit=models[-1].n_iter_, clipped=models[-1].n_clipped_weights_)
    return row


def bench_csv(csv_dir: Path, *, repeats: int, seed: int) -> dict:
    from distributed import Client, LocalCluster

    from pydpowl import DPOWL
    from pydpowl.datasets.chunked import read_csv_chunks

    times = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster):
        for _ in range(repeats):
            t0 = time.perf_counter()
            data = read_csv_chunks(str(csv_dir / "*.csv"), treatment="A", benefit="B",
                                   features=["x1", "x2", "x3", "x4"], bounds=BOUNDS, weights_upper_bound=W,
                                   blocksize=None)
            est = DPOWL(epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, feature_bounds=BOUNDS,
                        weight_sensitivity=data.weight_sensitivity,  # C as the data state it (0: randomised)
                        random_state=seed, **PAPER).fit(data.X, data.treatment, data.benefit, data.propensity)
            times.append(time.perf_counter() - t0)
    return {"csv_fit": float(np.median(times)), "csv_coef": est.scaled_coef_.tolist()}


def _load(directory: Path):
    """Every chunk into one array per name (what an in-memory fit needs first)."""
    files = {name: sorted((directory / name).glob("*.npy")) for name in ("X", "treatment", "benefit")}
    out = {name: np.concatenate([np.load(p) for p in paths]) for name, paths in files.items()}
    return out["X"], out["treatment"], out["benefit"]


def child_memory(directory: str, repeats: int, seed: int) -> None:
    """In a fresh process: load every chunk, then time DPOWL.fit in memory; print JSON."""
    from pydpowl import DPOWL

    t0 = time.perf_counter()
    X, A, B = _load(Path(directory))
    load = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        est = DPOWL(epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, feature_bounds=BOUNDS, random_state=seed,
                    **PAPER)
        t0 = time.perf_counter()
        est.fit(X, A, B, 0.5)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"load": load, "fit": float(np.median(times)), "times": times,
                      "rss": _worker_peak_rss(), "coef": est.scaled_coef_.tolist(), "nit": est.n_iter_}))


def child_dppack(directory: str, repeats: int) -> None:
    """In a fresh process: load every chunk, then time DPpack's svmDP fit (inside R); print JSON."""
    from r_reference import fit_svmdp

    t0 = time.perf_counter()
    X, A, B = _load(Path(directory))
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    fits = fit_svmdp(X, A, B / 0.5, epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, feature_bounds=BOUNDS,
                     huber_h=0.5, fit_intercept=True, seeds=[1] * repeats)
    wall = time.perf_counter() - t0
    print(json.dumps({"load": load, "fit": float(np.median(fits.fit_seconds)), "times": fits.fit_seconds.tolist(),
                      "wall": wall, "rss": _worker_peak_rss()}))


def _child(kind: str, directory: Path, repeats: int, seed: int) -> dict:
    args = [sys.executable, __file__, "--child", kind, str(directory), "--repeats", str(repeats), "--seed", str(seed)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _available_memory() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def _s(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _gb(x: Optional[float]) -> str:
    return "-" if x is None else (f"{x / 2**30:.2f}" if x < 10 * 2**30 else f"{x / 2**30:.1f}")


def format_table(rows: Sequence[dict]) -> str:
    head = ["n", "chunks", "persist", "Dask fit s", "passes (eval + line)", "client peak RSS GB",
            "client tracemalloc MB", "workers peak RSS GB (max, sum)", "in-memory load s", "in-memory fit s",
            "in-memory peak GB", "DPpack fit s", "CSV read+fit s", "release rel. diff"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        d, m, rr = r["dask"], r.get("memory") or {}, r.get("dppack") or {}
        lines.append("| " + " | ".join([
            f"{r['n']:,}", str(d["chunks"]), str(d["persist"]), _s(d["fit"]),
            f"{d['passes']} ({d['evaluations']} + {d['line_search']})", _gb(d["client_rss"]),
            f"{d['client_tracemalloc'] / 2**20:.1f}", f"{_gb(d['workers_rss'])}, {_gb(d['workers_rss_total'])}",
            _s(m.get("load")) if "error" not in m else "failed", _s(m.get("fit")), _gb(m.get("rss")),
            _s(rr.get("fit")) if "error" not in rr else "failed", _s(r.get("csv_fit")),
            "-" if r.get("rel_diff") is None else f"{r['rel_diff']:.1e}",
        ]) + " |")
    return "\n".join(lines)


def crossover_lines(rows: Sequence[dict]) -> List[str]:
    out = []
    for r in rows:
        m, d = r.get("memory"), r["dask"]
        if m and "fit" in m:
            total = m["load"] + m["fit"]
            faster = "Dask" if d["fit"] < total else "in memory"
            out.append(f"n={r['n']:,} ({d['persist']}): in memory load+fit {total:.2f} s, fit alone {m['fit']:.2f} s; "
                       f"Dask {d['fit']:.2f} s -> {faster} faster")
        else:
            out.append(f"n={r['n']:,} ({d['persist']}): in memory not run ({r.get('memory_note', 'skipped')}); "
                       f"Dask {d['fit']:.2f} s")
    return out


def _parse_sizes(text: str) -> List[int]:
    return [int(float(t)) for t in text.split(",") if t.strip()]


def _parse_persist(text: str) -> List[object]:
    table = {"auto": "auto", "true": True, "false": False}
    try:
        return [table[t.strip().lower()] for t in text.split(",") if t.strip()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"--persist takes auto, true and false, got {text!r}") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description="Time DP-OWL fits on Dask, in memory and in DPpack on data on disk.")
    p.add_argument("--sizes", type=_parse_sizes, default=_parse_sizes("1e6,1e7"), help="values of n, e.g. 1e6,1e7,1e8")
    p.add_argument("--repeats", type=int, default=3, help="timed fits per engine and n (median reported)")
    p.add_argument("--persist", type=_parse_persist, default=["auto"], help="persist modes: auto,true,false")
    p.add_argument("--workdir", type=Path, default=None, help="where data are written (default: a temp dir)")
    p.add_argument("--keep-data", action="store_true", help="keep (and reuse) the written data")
    p.add_argument("--r-max", type=float, default=1e7, help="largest n for DPpack (0: no DPpack)")
    p.add_argument("--r-repeats", type=int, default=1, help="DPpack fits from 1e7 rows (3 below)")
    p.add_argument("--csv-max", type=float, default=1e6, help="largest n for the CSV reader path (0: none)")
    p.add_argument("--no-memory", action="store_true", help="skip the in-memory fits")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--child", nargs=2, metavar=("KIND", "DIR"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        kind, directory = args.child
        if kind == "memory":
            child_memory(directory, args.repeats, args.seed)
        else:
            child_dppack(directory, args.repeats)
        return 0

    base = args.workdir or Path(tempfile.mkdtemp(prefix="pydpowl-bench-dask-"))
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in args.sizes:
            directory = base / f"n{n}" / "npy"
            if not (directory / "X").is_dir():
                print(f"[bench-dask] writing n={n:,} in chunks of {chunk_rows_for(n):,} rows ...", file=sys.stderr,
                      flush=True)
                secs = write_data(directory, n, args.seed)
                print(f"[bench-dask]   written in {secs:.2f} s", file=sys.stderr, flush=True)
            memory = note = None
            if not args.no_memory:
                need, avail = MEMORY_BYTES_PER_ROW * n, _available_memory()
                if need <= 0.5 * avail:
                    print(f"[bench-dask] n={n:,} in memory ...", file=sys.stderr, flush=True)
                    memory = _child("memory", directory, args.repeats, args.seed)
                else:
                    note = f"needs about {need / 2**30:.0f} GB; {avail / 2**30:.0f} GB available on a shared machine"
            dppack = None
            if n <= args.r_max:
                print(f"[bench-dask] n={n:,} DPpack ...", file=sys.stderr, flush=True)
                dppack = _child("dppack", directory, args.r_repeats if n >= 1e7 else 3, args.seed)
            csv = {}
            if n <= args.csv_max:
                csv_dir = base / f"n{n}" / "csv"
                if not csv_dir.is_dir():
                    write_csv(directory, csv_dir)
                print(f"[bench-dask] n={n:,} CSV on Dask ...", file=sys.stderr, flush=True)
                csv = bench_csv(csv_dir, repeats=args.repeats, seed=args.seed)
            for mode in args.persist:
                print(f"[bench-dask] n={n:,} Dask (persist={mode}) ...", file=sys.stderr, flush=True)
                dask_row = bench_dask(directory, n, persist=mode, repeats=args.repeats, seed=args.seed)
                rel = None
                if memory and "coef" in memory:
                    ref = np.asarray(memory["coef"])
                    rel = float(np.linalg.norm(np.asarray(dask_row["coef"]) - ref) / np.linalg.norm(ref))
                rows.append({"n": n, "dask": dask_row, "memory": memory, "memory_note": note, "dppack": dppack,
                             "csv_fit": csv.get("csv_fit"), "rel_diff": rel})
            if not args.keep_data:
                shutil.rmtree(base / f"n{n}")
    finally:
        if not args.keep_data and args.workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    print(f"DP-OWL fits on data on disk (epsilon={EPSILON:g}, gamma={GAMMA:g}, W={W:g}; Dask: LocalCluster of 2 "
          f"worker processes x 1 thread; medians of {args.repeats}; machine: {os.cpu_count()} cores, shared)")
    print()
    print(format_table(rows))
    print()
    for line in crossover_lines(rows):
        print(line)
    errors = [f"n={r['n']:,} {k}: {r[k]['error']}" for r in rows for k in ("memory", "dppack")
              if r.get(k) and "error" in r[k]]
    for e in errors:
        print(f"failed: {e}")
    worst = max((r["rel_diff"] for r in rows if r.get("rel_diff") is not None), default=None)
    if worst is not None:
        print(f"release agreement Dask vs in memory (same seed): max relative difference {worst:.1e} "
              f"({'<=' if worst <= 1e-9 else '>'} 1e-9)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
