"""``--engine dask`` of ``pydpowl fit``: the Dask client and the chunked CSV data.

Without ``--scheduler`` the work runs on a local cluster of threads in the
command's own process (one worker per core; numba kernels and numpy release
the GIL); with ``--scheduler ADDR`` on a running ``dask-scheduler`` and its
``dask-worker`` processes, which must reach the CSV files at the same paths.
Every pass is watched (:mod:`pydpowl.engine.dask_cluster`): its progress and
lost workers are reported on stderr, and a fit with no worker connected for
``--dask-timeout`` seconds stops with an error naming the scheduler.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
from typing import Any, Iterator, Optional, TextIO, Tuple

from .._validation import check_positive
from ..engine import dask_cluster
from ..engine.dask_cluster import WORKER_TIMEOUT

__all__ = ["dask_client", "chunked_data_from_args", "files_fingerprint"]


@contextlib.contextmanager
def dask_client(scheduler: Optional[str] = None, *, worker_timeout: Optional[float] = None,
                stream: Optional[TextIO] = None) -> Iterator[object]:
    """A ``distributed.Client`` on ``scheduler``, or on a local cluster of threads; closed on exit.

    Inside, a pass waits at most ``worker_timeout`` seconds (None: 60) with no worker connected (then the fit
    fails naming the scheduler; ``inf``: forever), and the progress lines of :mod:`pydpowl.engine.dask_cluster`
    (a pass still running, workers lost or back) go to ``stream`` (default: stderr).
    """
    import dask

    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - set-up installs it
        raise ValueError("--engine dask needs Dask's distributed scheduler (Debian: python3-distributed).") from None
    worker_timeout = WORKER_TIMEOUT if worker_timeout is None else check_positive("--dask-timeout", worker_timeout,
                                                                                  allow_inf=True)
    with contextlib.ExitStack() as stack:
        stack.enter_context(dask.config.set({"pydpowl.worker-timeout": worker_timeout}))
        stack.enter_context(_progress_lines(stream if stream is not None else sys.stderr))
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout="10s", set_as_default=True)
            except OSError as exc:
                raise ValueError(f"--scheduler {scheduler}: could not connect ({type(exc).__name__}); is "
                                 "dask-scheduler running there?") from None
            yield stack.enter_context(client)
            return
        n_workers = max(os.cpu_count() or 1, 1)
        cluster = stack.enter_context(LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False,
                                                   dashboard_address=":0"))
        yield stack.enter_context(Client(cluster, set_as_default=True))


@contextlib.contextmanager
def _progress_lines(stream: TextIO) -> Iterator[None]:
    """Show the ``pydpowl.dask`` log (progress of the passes, lost workers) on ``stream`` while inside."""
    log = dask_cluster.logger
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("dask: %(message)s"))
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False  # shown once, here
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def chunked_data_from_args(args) -> Tuple[Any, Tuple[str, str]]:
    """:class:`~pydpowl.datasets.chunked.ChunkedOWLData` from the data options, and the arm names."""
    from ..datasets.chunked import read_csv_chunks

    missing = [opt for opt, val in (("--treatment", args.treatment), ("--benefit", args.benefit),
                                    ("--features", args.features), ("--bounds", args.bounds),
                                    ("--weights-upper-bound", args.weights_upper_bound)) if val is None]
    if missing:
        raise ValueError(f"--data needs {', '.join(missing)} (public settings are never read off the data).")
    check_positive("weights_upper_bound", args.weights_upper_bound)
    data = read_csv_chunks(
        args.data, treatment=args.treatment, benefit=args.benefit, features=args.features, bounds=args.bounds,
        weights_upper_bound=args.weights_upper_bound, propensity="0.5" if args.propensity is None else args.propensity,
        treated=args.treated,
        benefit_lower_bound=args.benefit_lower_bound, weight_sensitivity=getattr(args, "weight_sensitivity", None),
    )
    return data, data.treatment_labels


def files_fingerprint(pattern: str) -> str:
    """``"sha256:<hex>"`` over the sorted files a glob matches (names and contents), to bind a budget file
    to a chunked dataset as :func:`pydpowl.privacy.accountant.dataset_fingerprint` binds it to one file."""
    from ..datasets.chunked import csv_files
    from ..privacy.accountant import dataset_fingerprint

    digest = hashlib.sha256()
    for path in csv_files(pattern):
        digest.update(os.path.basename(path).encode() + b"\0" + dataset_fingerprint(path).encode() + b"\n")
    return "sha256:" + digest.hexdigest()
