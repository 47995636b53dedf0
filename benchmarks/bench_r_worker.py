"""The R front end's worker as a user meets it: how fast Ctrl-C comes back, what it costs, and the round trip.

1. Interrupt: a fresh ``Rscript`` starts a long fit (``svmDP`` with the Gaussian kernel, n = 50,000,
   D = 500: tens of seconds on this machine) inside ``tryCatch(interrupt = )``; one second after R says
   it is fitting, this script sends SIGINT to R's process, as a terminal's Ctrl-C or RStudio's stop button
   does, and times the moment R prints that it is back (the latency seen from outside R). R then checks
   that the worker's process is gone (its work stopped) and fits a small model whose coefficients must
   equal those of the same fit before the interrupt (same seed), timing that first call after the
   interrupt (it starts a new worker). ``--runs`` fresh sessions; medians.
2. Round trip: in one R session, the median time of a warm ``echo`` (a request and its answer carrying
   nothing) and of a 20,000-row ``svmDP`` fit, each over batches lasting about 50 ms or more.

Run: ``python benchmarks/bench_r_worker.py`` (``make bench-r-worker``); ``R_LIBS`` must reach the R
package pydpowl. The machine's load average is printed with the figures (2 shared cores).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List

INTERRUPT_SCRIPT = r"""
suppressPackageStartupMessages(library(pydpowl))
small <- data.frame(a = c(0.2, 0.8, 0.3, 0.9, 0.5)); ys <- c(0, 1, 0, 1, 1)
fit_small <- function() svmDP$new("l2", Inf, 1)$fit(small, ys, 1, 0)$coeff  # the exact minimiser
session_first <- system.time(before <- fit_small())[["elapsed"]]
pid <- pydpowl_config()$worker_pid
set.seed(1); n <- 5e4
X <- data.frame(a = runif(n), b = runif(n), c = runif(n)); y <- rbinom(n, 1, 0.5)
long <- svmDP$new("l2", eps = 1, gamma = 1, kernel = "Gaussian", D = 500)
cat("FITTING\n"); flush(stdout())
outcome <- tryCatch({ long$fit(X, y, c(1, 1, 1), c(0, 0, 0)); "COMPLETED" },
                    interrupt = function(e) {
                      cat(sprintf("INTERRUPTED AT=%.6f\n", as.numeric(Sys.time()))); flush(stdout()); "INTERRUPTED" })
deadline <- Sys.time() + 5
while (isTRUE(tools::pskill(pid, 0L)) && Sys.time() < deadline) Sys.sleep(0.005)
gone <- !isTRUE(tools::pskill(pid, 0L))
first <- system.time(after <- fit_small())[["elapsed"]]
cat(sprintf("OUTCOME=%s GONE=%s SAME=%s FIRST_CALL=%.4f SESSION_FIRST=%.4f\n", outcome, gone,
            identical(before, after), first, session_first))
"""

ROUND_TRIP_SCRIPT = r"""
suppressPackageStartupMessages(library(pydpowl))
per_call <- function(f, samples = 9L) {
  f(); f()
  k <- 1L
  while (system.time(for (i in seq_len(k)) f())[["elapsed"]] < 0.05) k <- k * 2L
  median(vapply(seq_len(samples), function(s) system.time(for (i in seq_len(k)) f())[["elapsed"]] / k, 0))
}
echo <- per_call(function() pydpowl:::engine("echo", list()))
set.seed(1); n <- 20000
X <- data.frame(a = runif(n), b = runif(n)); y <- rbinom(n, 1, 0.5)
fit <- per_call(function() svmDP$new("l2", 1, 1)$fit(X, y, c(1, 1), c(0, 0), add.bias = TRUE))
cat(sprintf("ECHO=%.6f FIT20000=%.6f\n", echo, fit))
"""


def _fields(line: str) -> Dict[str, str]:
    return dict(item.split("=", 1) for item in line.split())


def interrupt_once(env: Dict[str, str], delay: float) -> Dict[str, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as f:
        f.write(INTERRUPT_SCRIPT)
    try:
        proc = subprocess.Popen(["Rscript", f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env)
        line = proc.stdout.readline()
        while line and line.strip() != "FITTING":
            line = proc.stdout.readline()
        time.sleep(delay)
        sent, sent_wall = time.monotonic(), time.time()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline()
        back = time.monotonic()
        rest = proc.stdout.read()
        proc.wait(timeout=120)
    finally:
        os.unlink(f.name)
    if not line.startswith("INTERRUPTED AT="):
        raise RuntimeError(f"R did not report the interrupt: {line!r}{rest}")
    result = _fields([s for s in rest.splitlines() if s.startswith("OUTCOME=")][0])
    if result["GONE"] != "TRUE" or result["SAME"] != "TRUE":
        raise RuntimeError(f"after the interrupt: {result}")
    return {"latency": back - sent, "in_r": float(_fields(line.split(" ", 1)[1])["AT"]) - sent_wall,
            "first_call": float(result["FIRST_CALL"]), "session_first": float(result["SESSION_FIRST"])}


def round_trip(env: Dict[str, str]) -> Dict[str, float]:
    out = subprocess.run(["Rscript", "-e", ROUND_TRIP_SCRIPT], env=env, capture_output=True, text=True, check=True)
    fields = _fields([s for s in out.stdout.splitlines() if s.startswith("ECHO=")][0])
    return {"echo": float(fields["ECHO"]), "fit20000": float(fields["FIT20000"])}


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh R sessions interrupted (default 5)")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds between the fit's start and SIGINT")
    parser.add_argument("--rlib", help="an R library to put first on R_LIBS")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.rlib:
        env["R_LIBS"] = os.pathsep.join(p for p in (str(Path(args.rlib).resolve()), env.get("R_LIBS")) if p)
    runs = [interrupt_once(env, args.delay) for _ in range(args.runs)]
    for key, what in (("in_r", "SIGINT -> R's interrupt handler runs (R's clock)"),
                      ("latency", "SIGINT -> R's line read here (through a pipe)"),
                      ("first_call", "first call after the interrupt (a small svmDP fit; new worker)"),
                      ("session_first", "first call of the session, for comparison (same fit; new worker)")):
        v = [r[key] * 1e3 for r in runs]
        print(f"{what}, {args.runs} runs: median {statistics.median(v):.1f} ms (min {min(v):.1f}, max {max(v):.1f})")
    rt = round_trip(env)
    print(f"warm round trip: echo {rt['echo'] * 1e3:.3f} ms; svmDP fit at n = 20,000 {rt['fit20000'] * 1e3:.2f} ms")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
