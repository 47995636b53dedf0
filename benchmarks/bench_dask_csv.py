"""Benchmark: ``pydpowl fit --engine dask`` on CSV files against ``dask.dataframe.read_csv`` plus the same fit.

Writes ``--n`` rows of the paper's synthetic design (4 features in [0, 1],
treatment +-1, benefits shifted by the public constant 10) as ``--files`` CSV
files under a temporary directory (``--workdir``, default: the system's temp
directory; removed afterwards unless ``--keep-data``), then times, each in a
fresh process (``--repeats`` runs, the median reported):

``cli``
    ``pydpowl fit --data 'dir/*.csv' --engine dask ...`` as a user runs it (a
    local cluster of one thread-worker per core in the command's process; the
    whole command, start-up included);
``cli-procs``
    the same command with ``--scheduler`` on a ``LocalCluster`` of one
    single-threaded worker process per core, started before the timer;
``dd``
    ``dask.dataframe.read_csv`` of the same files, persisted, then the same
    ``DPOWL`` fit on its columns, on the cluster of ``cli-procs`` (the time
    from ``read_csv`` to the release, start-up excluded). Worker processes,
    because Debian's Dask 2022.12 cannot compute ``read_csv`` graphs on
    workers in the client's process (``'Serialize' object is not callable``);
``dd-lazy``
    the same without persisting (the fit's passes read the files: the
    ``to_dask_array(lengths=True)`` of each input and the validation pass);
``memory``
    ``pandas.read_csv`` of every file into one table, then the in-memory fit
    (the reference release).

It prints the times, the ratio of ``cli`` to ``dd`` (the target is at most
2) and whether the releases agree (``cli`` and ``memory`` must be equal bit
for bit: the same data and seed). The machine is shared: times are noisy.

Run: ``python benchmarks/bench_dask_csv.py`` (``make bench-dask-csv``; the
issue's size: ``make bench-dask-csv BENCH_DASK_CSV_ARGS="--n 2e7 --files 40"``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout

FEATURES = ["x1", "x2", "x3", "x4"]
W, GAMMA, EPSILON, SEED, SHIFT = 30.0, 100.0, 1.0, 1, 10.0
KINDS = ("cli", "cli-procs", "dd", "dd-lazy", "memory")


def write_csv_files(directory: Path, n: int, files: int, seed: int = SEED) -> float:
    """``n`` rows of the synthetic design as ``files`` CSV files (one file in memory at a time); seconds."""
    import pandas as pd

    from pydpowl.datasets import make_synthetic_owl

    need = n * 110 * 1.2
    directory.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory).free
    if need > 0.8 * free:
        raise SystemExit(f"[bench-dask-csv] {n:,} rows need about {need / 1e9:.1f} GB; {free / 1e9:.1f} GB free.")
    t0 = time.perf_counter()
    bounds = np.linspace(0, n, files + 1).astype(int)
    for k in range(files):
        rows = int(bounds[k + 1] - bounds[k])
        d = make_synthetic_owl(rows, shift=SHIFT, random_state=np.random.default_rng([seed, k]))
        frame = pd.DataFrame(d.X.to_numpy(), columns=FEATURES)
        frame["A"] = d.treatment.astype(int)
        frame["B"] = d.benefit
        frame.to_csv(directory / f"part-{k:04d}.csv", index=False)
    return time.perf_counter() - t0


def _model():
    """The fit of ``pydpowl fit --engine dask`` with the command's settings: residual weights are not
    available for Dask inputs, so ``residual="auto"`` resolves to False there and is stated here (in memory
    "auto" would take them: another rule, not the reference for the Dask release)."""
    from pydpowl import DPOWL

    return DPOWL(epsilon=EPSILON, gamma=GAMMA, weights_upper_bound=W, residual=False,
                 feature_bounds=(np.zeros(len(FEATURES)), np.ones(len(FEATURES))), random_state=SEED)


def _released(est) -> Dict[str, object]:
    """The release as the model file holds it (what ``pydpowl fit`` writes)."""
    from pydpowl.model_io import export_model

    with tempfile.TemporaryDirectory() as tmp:
        path = export_model(est, Path(tmp) / "model.json", feature_names=FEATURES, treatment_labels=("1", "-1"))
        model = json.loads(Path(path).read_text())
    return {"coef": model["coef"], "intercept": model["intercept"]}


def _process_cluster():
    """A LocalCluster of one single-threaded worker process per core (imports done), and a client on it."""
    from distributed import Client, LocalCluster

    import importlib

    cluster = LocalCluster(n_workers=max(os.cpu_count() or 1, 1), threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster, set_as_default=True)
    for module in ("pandas", "dask.dataframe", "pydpowl.estimators.owl", "pydpowl.datasets.chunked"):
        client.run(importlib.import_module, module)  # imports before the timer, as in a running cluster
    return cluster, client


def _cli(pattern: str, out: Path, scheduler: Optional[str] = None) -> Dict[str, object]:
    """``pydpowl fit --engine dask`` in a fresh process; its wall time and the release it wrote."""
    args = [sys.executable, "-m", "pydpowl.cli", "fit", "--data", pattern, "--engine", "dask", "--treatment", "A",
            "--benefit", "B", "--features", ",".join(FEATURES), "--bounds", ",".join(["0:1"] * len(FEATURES)),
            "--weights-upper-bound", str(W), "--epsilon", str(EPSILON), "--gamma", str(GAMMA), "--seed", str(SEED),
            "--out", str(out)] + ([] if scheduler is None else ["--scheduler", scheduler])
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    model = json.loads(out.read_text())
    out.unlink()
    return {"seconds": seconds, "coef": model["coef"], "intercept": model["intercept"]}


def child(kind: str, directory: str) -> Dict[str, object]:
    """One timed run in this (fresh) process."""
    pattern = str(Path(directory) / "*.csv")
    out = Path(tempfile.mkdtemp(prefix="pydpowl-bench-model-")) / "model.json"
    if kind == "cli":
        return _cli(pattern, out)
    if kind == "cli-procs":
        cluster, client = _process_cluster()
        with cluster, client:
            return _cli(pattern, out, scheduler=cluster.scheduler_address)
    if kind in ("dd", "dd-lazy"):
        import dask.dataframe as dd

        cluster, client = _process_cluster()
        with cluster, client:
            t0 = time.perf_counter()
            frame = dd.read_csv(pattern, usecols=[*FEATURES, "A", "B"])
            if kind == "dd":
                frame = frame.persist()
            est = _model().fit(frame[FEATURES], frame["A"], frame["B"], 0.5)
            seconds = time.perf_counter() - t0
        return {"seconds": seconds, **_released(est)}
    if kind == "memory":
        import pandas as pd

        t0 = time.perf_counter()
        frame = pd.concat([pd.read_csv(p) for p in sorted(Path(directory).glob("*.csv"))], ignore_index=True)
        est = _model().fit(frame[FEATURES].to_numpy(), frame["A"].to_numpy(float), frame["B"].to_numpy(), 0.5)
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, **_released(est)}
    raise ValueError(f"unknown kind {kind!r}; one of {KINDS}")


def run_child(kind: str, directory: Path) -> Dict[str, object]:
    proc = subprocess.run([sys.executable, __file__, "--child", kind, str(directory)], capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarise(n: int, files: int, results: Dict[str, List[Dict[str, object]]]) -> List[str]:
    """The report: median seconds per kind, the cli/dd ratio and the agreement of the releases."""
    lines = [f"{n:,} rows in {files} CSV files; fresh process per run; machine: {os.cpu_count()} cores, shared", "",
             "| run | median s | runs (s) |", "|---|---|---|"]
    medians: Dict[str, float] = {}
    for kind, runs in results.items():
        ok = [r["seconds"] for r in runs if "error" not in r]
        if ok:
            medians[kind] = float(np.median(ok))
        shown = ", ".join(f"{s:.1f}" for s in ok) + "".join(f" failed: {r['error']}" for r in runs if "error" in r)
        lines.append(f"| {kind} | {medians.get(kind, float('nan')):.1f} | {shown} |")
    lines.append("")
    for kind in ("cli", "cli-procs"):
        if kind in medians and "dd" in medians:
            ratio = medians[kind] / medians["dd"]
            lines.append(f"{kind} / dd (dask.dataframe.read_csv + persist + fit) = {ratio:.2f} "
                         f"({'within' if ratio <= 2 else 'above'} the target 2)")
    first = {kind: next((r for r in runs if "error" not in r), None) for kind, runs in results.items()}
    for kind, run in first.items():
        if run:
            lines.append(f"release of {kind}: intercept {run['intercept']!r}, coef {run['coef']!r}")
    for kind in ("cli", "cli-procs", "dd", "dd-lazy"):
        if first.get(kind) and first.get("memory"):
            same = (first[kind]["coef"], first[kind]["intercept"]) == (first["memory"]["coef"],
                                                                       first["memory"]["intercept"])
            lines.append(f"release of {kind} equal to the in-memory release bit for bit: {same}")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description="Time pydpowl fit --engine dask on CSV files against "
                                            "dask.dataframe.read_csv plus the same fit.")
    p.add_argument("--n", type=float, default=2e6, help="rows (default 2e6; the issue's 2e7)")
    p.add_argument("--files", type=int, default=40, help="CSV files (default 40)")
    p.add_argument("--repeats", type=int, default=1, help="runs per kind (median reported)")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"what to run, of {','.join(KINDS)}")
    p.add_argument("--workdir", type=Path, default=None, help="where the files are written (default: a temp dir)")
    p.add_argument("--keep-data", action="store_true", help="keep (and reuse) the files")
    p.add_argument("--child", nargs=2, metavar=("KIND", "DIR"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    n, kinds = int(args.n), [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        p.error(f"--kinds: unknown {unknown}; choose from {','.join(KINDS)}")
    base = args.workdir or Path(tempfile.mkdtemp(prefix="pydpowl-bench-dask-csv-"))
    directory = base / f"n{n}-files{args.files}"
    try:
        if not any(directory.glob("*.csv")):
            print(f"[bench-dask-csv] writing {n:,} rows in {args.files} files under {directory} ...", file=sys.stderr,
                  flush=True)
            secs = write_csv_files(directory, n, args.files)
            size = sum(f.stat().st_size for f in directory.glob("*.csv"))
            print(f"[bench-dask-csv]   {size / 1e9:.2f} GB written in {secs:.0f} s", file=sys.stderr, flush=True)
        results: Dict[str, List[Dict[str, object]]] = {k: [] for k in kinds}
        for r in range(args.repeats):
            for kind in kinds:
                print(f"[bench-dask-csv] {kind} (run {r + 1}) ...", file=sys.stderr, flush=True)
                results[kind].append(run_child(kind, directory))
                print(f"[bench-dask-csv]   {results[kind][-1].get('seconds', results[kind][-1].get('error'))}",
                      file=sys.stderr, flush=True)
    finally:
        if not args.keep_data:
            shutil.rmtree(directory, ignore_errors=True)
            if args.workdir is None:
                shutil.rmtree(base, ignore_errors=True)
    print("\n".join(summarise(n, args.files, results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
