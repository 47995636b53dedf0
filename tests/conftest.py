"""Shared test helpers.

``require_r`` is a fixture returning a checker: ``require_r("DPpack")`` skips
the requesting test when R, rpy2 or a named R package is unavailable;
the ``r_front_end`` fixture does the same for the R package pydpowl (``R_LIBS``). When the
environment variable ``PYDPOWL_REQUIRE_R=1`` is set (``make test`` and CI set
it, because the set-up installs R), a missing R fails the test instead.
"""

from __future__ import annotations

import math
import os
import re
from typing import Callable

import numpy as np
import pytest


def check_r(*packages: str) -> None:
    """Skip (or fail under ``PYDPOWL_REQUIRE_R=1``) unless R and ``packages`` load."""
    from r_reference import r_available

    if r_available(*packages):
        return
    what = "R through rpy2" + (f" with R packages {', '.join(packages)}" if packages else "")
    if os.environ.get("PYDPOWL_REQUIRE_R") == "1":
        pytest.fail(f"{what} is not available, and PYDPOWL_REQUIRE_R=1 requires it.", pytrace=False)
    pytest.skip(f"{what} is not available.")


@pytest.fixture(scope="session", autouse=True)
def fingerprint_key(tmp_path_factory):
    """Budget files' fingerprint key in a temporary folder, not the user's configuration folder."""
    key = tmp_path_factory.mktemp("pydpowl-key") / "fingerprint.key"
    old = os.environ.get("PYDPOWL_KEY_FILE")
    os.environ["PYDPOWL_KEY_FILE"] = str(key)
    yield key
    if old is None:
        os.environ.pop("PYDPOWL_KEY_FILE", None)
    else:
        os.environ["PYDPOWL_KEY_FILE"] = old


def check_r_front_end() -> None:
    """Skip (or fail under ``PYDPOWL_REQUIRE_R=1``) unless the R package pydpowl loads its engine (``R_LIBS``)."""
    from validation.audit.rfrontend import r_front_end_available

    if r_front_end_available():
        return
    if os.environ.get("PYDPOWL_REQUIRE_R") == "1":
        pytest.fail("the R package pydpowl is not installed (R_LIBS) and PYDPOWL_REQUIRE_R=1 requires it.",
                    pytrace=False)
    pytest.skip("the R package pydpowl is not installed")


@pytest.fixture
def r_front_end() -> None:
    """Requires the R package pydpowl (:func:`check_r_front_end`)."""
    check_r_front_end()


@pytest.fixture(scope="session")
def require_r() -> Callable[..., None]:
    """The :func:`check_r` checker, for use in (module-level autouse) fixtures."""
    return check_r


@pytest.fixture(scope="session")
def dask_client():
    """A ``distributed.Client`` on a 2-worker LocalCluster for the Dask tests.

    ``processes=False``: the two workers (one thread each) run in the test process, which starts
    in a fraction of a second and needs no spawned interpreters; the scheduler, the workers and
    the task graphs are the same as with worker processes. Set-up installs Dask, so a missing
    Dask is an error, not a skip.
    """
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=True) as client:
        yield client


class Unprivileged:
    """Runs commands as the unprivileged user ``nobody`` (a service account: Shiny, cron, a container).

    ``root`` is a directory (mode 0755, owned by the test's user, so read-only to ``nobody``) holding a
    copy of the ``pydpowl`` package, with the numba kernels' set-up cache as this checkout has it (mtimes
    kept, so the cache stays valid) or without it: an installation by root as a service account sees it
    (the checkout itself may lie where ``nobody`` cannot read). ``python`` is the system interpreter behind
    this test's virtual environment (numpy, numba), which finds the copy through ``PYTHONPATH``.
    """

    def __init__(self, root: str, python: str):
        self.root, self.python = root, python

    def run(self, argv, env=None, timeout=300):
        """``argv`` as ``nobody`` in an empty environment plus ``PATH``, ``PYTHONPATH=root`` and ``env``
        (a value None leaves the variable unset; HOME is unset unless given)."""
        import subprocess

        base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": self.root, "LC_ALL": "C.UTF-8"}
        base.update(env or {})
        assignments = [f"{k}={v}" for k, v in base.items() if v is not None]
        return subprocess.run(["runuser", "-u", "nobody", "--", "env", "-i", *assignments, *argv],
                              capture_output=True, text=True, timeout=timeout, cwd="/")


def _unprivileged_unavailable() -> str:
    import shutil

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "running as another user needs root"
    if shutil.which("runuser") is None:
        return "runuser (util-linux) is missing"
    try:
        import pwd

        pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        return "there is no user 'nobody'"
    return ""


@pytest.fixture
def unprivileged():
    """A factory ``unprivileged(with_kernel_cache=True)`` of :class:`Unprivileged` runners, each with its own
    read-only copy of the package (removed after the test).

    Skips when the tests cannot switch users (not root, no ``runuser``, no ``nobody``); under
    ``PYDPOWL_REQUIRE_R=1`` (``make test`` and CI, which run as root) that is a failure instead.
    """
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    import pydpowl

    why = _unprivileged_unavailable()
    if why:
        if os.environ.get("PYDPOWL_REQUIRE_R") == "1":
            pytest.fail(f"cannot run as an unprivileged user ({why}), and PYDPOWL_REQUIRE_R=1 requires it.",
                        pytrace=False)
        pytest.skip(f"cannot run as an unprivileged user: {why}.")
    roots = []

    def make(with_kernel_cache: bool = True) -> Unprivileged:
        root = tempfile.mkdtemp(prefix="pydpowl-unprivileged-")  # not under pytest's basetemp (mode 0700)
        roots.append(root)
        skip = ("*.pyc",) if with_kernel_cache else ("*.pyc", "*.nbi", "*.nbc")
        src = Path(pydpowl.__file__).resolve().parent
        shutil.copytree(src, Path(root) / "pydpowl", ignore=shutil.ignore_patterns(*skip))
        for d, _, files in os.walk(root):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        return Unprivileged(root, os.path.realpath(sys.executable))

    yield make
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


class DaskProcesses:
    """A real ``dask-scheduler`` and ``dask-worker`` processes on loopback, started by a test and killed
    by pid (SIGKILL). Their output goes to log files in ``directory``."""

    def __init__(self, directory) -> None:
        from pathlib import Path

        self.directory = Path(directory)
        self.procs: list = []
        self.address = ""

    def _spawn(self, args, *, cwd=None, env=None):
        import subprocess

        log = open(self.directory / f"process-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen(args, cwd=cwd or self.directory, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(proc)
        return proc

    def start_scheduler(self, timeout: float = 60.0) -> str:
        """Start ``python -m distributed.cli.dask_scheduler`` on a free loopback port; its address."""
        import json
        import sys
        import time

        path = self.directory / "scheduler.json"
        proc = self._spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                            "--port", "0", "--no-dashboard", "--scheduler-file", str(path)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"dask-scheduler exited with status {proc.returncode}; see {self.directory}")
            try:
                self.address = json.loads(path.read_text())["address"]
                return self.address
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        raise RuntimeError(f"dask-scheduler did not start within {timeout} s")

    def start_worker(self, python=None, *, cwd=None, env=None):
        """Start ``python -m distributed.cli.dask_worker`` (no nanny: the process is the worker)."""
        import sys

        return self._spawn([python or sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                            "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                            "--death-timeout", "60"], cwd=cwd, env=env)

    def kill(self, proc) -> None:
        """SIGKILL one process by its pid."""
        import os
        import signal

        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        for proc in self.procs:
            self.kill(proc)


@pytest.fixture(scope="module")
def _dask_scheduler_process(tmp_path_factory):
    processes = DaskProcesses(tmp_path_factory.mktemp("dask-processes"))
    try:
        processes.start_scheduler()
        yield processes
    finally:
        processes.close()


@pytest.fixture
def dask_processes(_dask_scheduler_process):
    """:class:`DaskProcesses` with a running scheduler (one per test module); the test starts its workers,
    which are killed when it ends."""
    first = len(_dask_scheduler_process.procs)
    try:
        yield _dask_scheduler_process
    finally:
        for proc in _dask_scheduler_process.procs[first:]:
            _dask_scheduler_process.kill(proc)


class FakeRStream:
    """Records the order of calls, like R's stream would consume them (``rgamma`` gives 2, ``rnorm`` (3, 4))."""

    def __init__(self):
        self.calls = []

    def rgamma(self, n, shape, rate=1.0):
        self.calls.append(("rgamma", n, shape, rate))
        return np.array([2.0])

    def rnorm(self, n):
        self.calls.append(("rnorm", n))
        return np.array([3.0, 4.0])


@pytest.fixture
def fake_r_stream() -> Callable[[], FakeRStream]:
    """The :class:`FakeRStream` class: an R-compatible stream that records its calls."""
    return FakeRStream


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``PYDPOWL_REQUIRE_R=1`` (``make test``, CI) a skipped test is a failed test.

    The set-up installs everything the suite uses (R, DPpack, numba, the R package) and CI runs on that set-up, so
    a skip there means a check silently did not run: a missing optional backend, a data file not found, a guard
    that no longer holds. Tests whose skip is part of their design carry ``@pytest.mark.allow_skip(reason)``.
    """
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and not hasattr(report, "wasxfail") and os.environ.get("PYDPOWL_REQUIRE_R") == "1"
            and item.get_closest_marker("allow_skip") is None):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} was skipped ({reason}); with PYDPOWL_REQUIRE_R=1 every test must run "
                           "(mark a skip that is part of the test's design with @pytest.mark.allow_skip).")


@pytest.fixture(scope="module")
def cyp_scaled():
    """A CYP-GUIDES-style analysis with the length-of-stay benefit scale and a private gamma selection."""
    from pydpowl.analysis import DEFAULT_GAMMAS, BenefitScale, run_analysis
    from pydpowl.datasets import make_cyp_guides_style

    d = make_cyp_guides_style(800, random_state=5)
    return run_analysis(d.X, d.treatment, d.benefit, feature_bounds=d.feature_bounds,
                        benefit_bounds=(0.0, math.log(8760)), weights_upper_bound=d.weights_upper_bound,
                        total_epsilon=2.0, propensity=2 / 3, treatment_labels=("G", "S"),
                        benefit_scale=BenefitScale.known("los-hours"), gammas=DEFAULT_GAMMAS, random_state=2)


def mentions_number(text: str, number: int) -> bool:
    """Whether ``number`` stands in ``text`` as a number of its own, file paths aside.

    pytest numbers its temporary folders (``/tmp/pytest-of-root/pytest-600/``),
    so a plain substring test for a sample size fails whenever the folder's
    number contains it.
    """
    words = re.sub(r"\S*/\S*", " ", text)
    return re.search(rf"(?<![\d.]){number}(?!\d)", words) is not None


@pytest.fixture
def mentions() -> Callable[[str, int], bool]:
    """:func:`mentions_number`, for the tests that check a size is not printed."""
    return mentions_number
