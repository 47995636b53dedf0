"""Shared test helpers.

``require_r`` is a fixture returning a checker: ``require_r("DPpack")`` skips
the requesting test when R, rpy2 or a named R package is unavailable;
the ``r_front_end`` fixture does the same for the R package pydpowl (``R_LIBS``). When the
environment variable ``PYDPOWL_REQUIRE_R=1`` is set (``make test`` and CI set
it, because the set-up installs R), a missing R fails the test instead.
"""

from __future__ import annotations

import os
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
