"""Passes over chunked data on a Dask cluster that fail loudly and say where.

Every pass of a chunked fit (:mod:`pydpowl.engine.dask_problem`,
:mod:`pydpowl.estimators.dask_inputs`, :mod:`pydpowl.datasets.chunked`) is run by
:func:`compute` (and :func:`persist`). Without a ``distributed.Client`` they
are Dask's own ``compute`` and ``persist`` (the local scheduler, in this
process). With one, the pass is submitted to the client and watched:

* **Workers' environment.** Before the first pass on a worker, a probe runs
  there (:func:`check_workers`): a worker whose Python cannot import pydpowl,
  or imports another version than the client's, stops the fit with a
  :class:`DaskClusterError` naming the worker's address, its Python and how to
  start it. An ``ImportError`` raised by a task (a worker that joined later, a
  module pydpowl needs) is reported the same way, naming the worker it
  happened on.
* **Lost workers.** While a pass waits, the scheduler's workers are counted
  every second. With none connected, a warning says so at once (log
  ``pydpowl.dask``); when none has come back after ``worker_timeout``
  seconds (default 60), the pass is cancelled and :class:`DaskClusterError`
  says what happened. Workers that come back in time resume the fit (the
  release is the same: the lost chunks are recomputed from their source).
* **Heartbeat.** Every ``heartbeat`` seconds (default 30) a pass still running
  logs (INFO, ``pydpowl.dask``) how long it has run and on how many workers.
  ``pydpowl fit --engine dask`` shows these lines on stderr; in Python, e.g.
  ``logging.basicConfig(level=logging.INFO)``.
* **Lost scheduler.** A client that loses its scheduler raises
  :class:`DaskClusterError` naming the scheduler's address.

Settings (Dask config, like ``pydpowl.persist``)::

    dask.config.set({"pydpowl.worker-timeout": 120})   # seconds; None or inf: wait for workers forever
    dask.config.set({"pydpowl.heartbeat": 10})         # seconds between progress lines

The messages carry only the pass's name, times, worker addresses and counts of
workers and tasks: nothing computed from the data.
"""

from __future__ import annotations

import logging
import math
import sys
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Set

__all__ = ["DaskClusterError", "distributed_client", "compute", "persist", "check_workers", "worker_timeout",
           "heartbeat_interval", "WORKER_TIMEOUT", "HEARTBEAT"]

logger = logging.getLogger("pydpowl.dask")

#: default seconds a pass waits with no worker connected before it gives up
WORKER_TIMEOUT = 60.0
#: default seconds between the progress lines of a running pass
HEARTBEAT = 30.0
#: seconds between looks at the scheduler while a pass waits
_TICK = 1.0


class DaskClusterError(RuntimeError):
    """A Dask cluster could not run a pass of a fit: no worker connected for too long, a worker whose
    Python cannot run pydpowl's tasks, or a lost scheduler. The message names the worker or scheduler
    and what to do."""


# --------------------------------------------------------------------------- settings


def _seconds_setting(key: str, default: float) -> float:
    """A duration from Dask's config: seconds (a number, or a string such as ``"2 minutes"``); None: ``inf``."""
    import dask
    from dask.utils import parse_timedelta

    from .._validation import check_positive

    value = dask.config.get(key, default)
    if value is None:
        return math.inf
    if isinstance(value, str) and value.strip().lower() not in ("inf", "infinity"):
        try:
            value = parse_timedelta(value, default="s")
        except (TypeError, ValueError, KeyError):
            raise ValueError(f"dask config {key!r} must be a duration (seconds > 0, or None), got {value!r}.") from None
    elif isinstance(value, str):
        value = math.inf
    return check_positive(key, value, allow_inf=True)  # "pydpowl.worker-timeout must be in (0, inf], got ..."


def worker_timeout() -> float:
    """``dask.config.get("pydpowl.worker-timeout")`` in seconds (default 60; None: ``inf``, wait forever)."""
    return _seconds_setting("pydpowl.worker-timeout", WORKER_TIMEOUT)


def heartbeat_interval() -> float:
    """``dask.config.get("pydpowl.heartbeat")`` in seconds (default 30; None: no progress lines)."""
    return _seconds_setting("pydpowl.heartbeat", HEARTBEAT)


# --------------------------------------------------------------------------- the client


def distributed_client() -> Optional[Any]:
    """The ``distributed.Client`` Dask computes on (the current or latest open one), or None."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - set-up installs distributed
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _client() -> Optional[Any]:
    """The client of :func:`distributed_client` when Dask would compute on a distributed client (named
    explicitly because, with workers in the client's own process, ``LocalCluster(processes=False)``, Dask's
    implicit look-up can pick up a worker's stale client); None for Dask's local schedulers."""
    import dask

    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    return distributed_client()


def compute(*collections: Any, label: str = "a pass over the data") -> tuple:
    """Dask's ``compute`` of ``collections``; on a distributed client, watched (see the module docstring).

    Parameters
    ----------
    *collections
        Dask collections (arrays, Delayed objects).
    label : str
        What the pass is, for the progress lines and errors ("the evaluation pass").

    Returns
    -------
    tuple
        The computed values, as ``dask.compute`` returns them.

    Raises
    ------
    DaskClusterError
        No worker connected for ``worker_timeout`` seconds, a worker that cannot run pydpowl's tasks,
        or a lost scheduler.
    """
    import dask

    client = _client()
    if client is None:
        return dask.compute(*collections)
    check_workers(client, label=label)
    futures = client.compute(list(collections))
    try:
        _wait(client, futures, label)
        return tuple(client.gather(futures))
    except BaseException as exc:
        error = exc
        if isinstance(exc, ImportError):
            error = _import_error(client, exc, futures, label)
        elif isinstance(exc, Exception) and not isinstance(exc, DaskClusterError) and client.status != "running":
            error = _scheduler_lost(client, label)
        _cancel(client, futures)
        if error is exc:
            raise
        raise error from (None if isinstance(exc, ImportError) else exc)


def persist(*collections: Any, label: str = "a pass over the data") -> tuple:
    """Dask's ``persist``; on a distributed client the workers are checked first (:func:`check_workers`).

    The persisted collections are computed by the workers in the background; the
    :func:`compute` that reads them next waits for them (watched). ``label`` names the pass in errors.
    """
    import dask

    client = _client()
    if client is None:
        return dask.persist(*collections)
    check_workers(client, label=label)
    return tuple(client.persist(list(collections)))


def _cancel(client: Any, futures: Sequence[Any]) -> None:
    """Stop a pass given up (an error, an interrupt): its tasks and results leave the cluster now, not when
    the traceback that refers to the futures is collected."""
    if client.status == "running":
        try:
            client.cancel(list(futures))
        except Exception:  # pragma: no cover - the client is going away anyway
            pass


def _workers(client: Any) -> Optional[Dict[str, Any]]:
    """The scheduler's workers (address -> info), or None when the client has lost the scheduler."""
    if client.status != "running":
        return None
    try:
        return dict(client.scheduler_info()["workers"])
    except (OSError, KeyError):
        return None


def _scheduler_address(client: Any) -> str:
    return str(getattr(client.scheduler, "address", None) or client)


#: how often :func:`_done_within` looks at the futures
_POLL = 0.01


def _done_within(futures: Sequence[Any], seconds: float) -> bool:
    """Whether every future is done (finished, failed or cancelled) within ``seconds``.

    Looks at the futures' status instead of calling ``distributed.wait(timeout=...)``: each wait that timed
    out raised a TimeoutError kept in a reference cycle (distributed's ``sync``) with the frames that hold
    the futures, so persisted chunks outlived the fit until the garbage collector ran; the slower the
    cluster, the more ticks timed out (a flaky test under load).
    """
    end = time.monotonic() + seconds
    while not all(f.done() for f in futures):
        if time.monotonic() >= end:
            return False
        time.sleep(_POLL)
    return True


def _wait(client: Any, futures: Sequence[Any], label: str) -> None:
    """Wait for ``futures``, counting the workers every tick: warn as soon as none is connected, give up
    after :func:`worker_timeout` seconds without one, log progress every :func:`heartbeat_interval`."""
    timeout, beat = worker_timeout(), heartbeat_interval()
    tick = min(_TICK, beat, timeout / 4)
    start = last_beat = time.monotonic()
    alone_since: Optional[float] = None
    alone_for = 0.0  # seconds without a worker, while none is connected
    while True:
        if _done_within(futures, tick):
            return
        now = time.monotonic()
        workers = _workers(client)
        if workers is None:
            raise _scheduler_lost(client, label)
        if not workers:
            if alone_since is None:
                alone_since = now
                logger.warning("no Dask worker is connected to the scheduler %s: %s waits for workers (%s)",
                               _scheduler_address(client), label, _gives_up(timeout))
            elif now - alone_since >= timeout:
                raise DaskClusterError(
                    f"no Dask worker has been connected to the scheduler {_scheduler_address(client)} for "
                    f"{_duration(now - alone_since)} during {label} (every worker was lost or none was started); "
                    f"the fit was stopped. Start workers (see docs/dask.md) and run it again, or wait longer "
                    f"(pydpowl fit --dask-timeout SECONDS; in Python dask.config.set({{'pydpowl.worker-timeout': "
                    f"SECONDS}})).")
            alone_for = now - alone_since
        elif alone_since is not None:
            logger.warning("%d Dask worker(s) connected again: %s resumes", len(workers), label)
            alone_since = None
        if now - last_beat >= beat:
            last_beat = now
            if workers:
                logger.info("%s still running after %s on %d worker(s) of %s", label, _duration(now - start),
                            len(workers), _scheduler_address(client))
            else:
                logger.warning("%s waiting for workers: none connected to %s for %s (%s)", label,
                               _scheduler_address(client), _duration(alone_for), _gives_up(timeout))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s"


def _gives_up(timeout: float) -> str:
    return "without a time limit" if math.isinf(timeout) else f"gives up after {_duration(timeout)}"


def _scheduler_lost(client: Any, label: str) -> DaskClusterError:
    return DaskClusterError(f"lost the connection to the Dask scheduler {_scheduler_address(client)} during "
                            f"{label} (client status {client.status!r}); the fit was stopped. Check that "
                            "dask-scheduler is running, then run the fit again.")


# --------------------------------------------------------------------------- the workers' environment

#: per client, the worker addresses whose environment was checked (weak: a closed client is forgotten)
_CHECKED: "weakref.WeakKeyDictionary[Any, Set[str]]" = weakref.WeakKeyDictionary()


def _environment_probe() -> Callable[[], Dict[str, Any]]:
    """A function reporting a worker's Python, directory and pydpowl version (or import error).

    Defined inside this function so that cloudpickle sends it by value: it runs on a worker that
    cannot import pydpowl (a module-level function would be sent as a reference into pydpowl).
    """

    def pydpowl_environment() -> Dict[str, Any]:
        import os
        import sys as _sys

        out: Dict[str, Any] = {"python": _sys.executable, "cwd": os.getcwd()}
        try:
            import pydpowl
        except Exception as exc:  # reported to the client, which raises
            out["error"] = f"{type(exc).__name__}: {exc}"
        else:
            out["version"] = getattr(pydpowl, "__version__", "?")
        return out

    return pydpowl_environment


def check_workers(client: Any, workers: Optional[Sequence[str]] = None, *,
                  label: str = "the check of the workers") -> None:
    """Raise :class:`DaskClusterError` unless every worker can import the client's pydpowl.

    Each worker is probed once per client (workers that join later are probed
    at the next pass).

    Parameters
    ----------
    client : distributed.Client
    workers : sequence of str, optional
        Addresses to probe even if checked before (default: the workers not checked yet).
    label : str
        The pass about to run, for the error when the scheduler is lost.
    """
    from .. import __version__

    checked = _CHECKED.setdefault(client, set())
    if workers is None:
        current = _workers(client)
        if current is None:
            raise _scheduler_lost(client, label)
        workers = [w for w in current if w not in checked]
    if not workers:
        return
    found = client.run(_environment_probe(), workers=list(workers), on_error="return")
    bad: List[str] = []
    for address, env in sorted(found.items()):
        if isinstance(env, BaseException):  # the probe itself failed on the worker
            env = {"error": f"{type(env).__name__}: {env}"}
        if "error" in env:
            bad.append(f"Dask worker {address} cannot import pydpowl ({env['error']}); it runs "
                       f"{env.get('python', 'an unknown Python')} in {env.get('cwd', 'an unknown directory')}")
        elif env["version"] != __version__:
            bad.append(f"Dask worker {address} imports pydpowl {env['version']}, the client {__version__} "
                       f"(worker's Python {env['python']})")
    if bad:
        raise DaskClusterError("; ".join(bad) + ". " + _start_workers_hint(client))
    checked.update(found)


def _start_workers_hint(client: Any) -> str:
    return (f"Start every worker with the Python environment of the client ({sys.executable}), e.g. "
            f"'{sys.executable} -m distributed.cli.dask_worker {_scheduler_address(client)}' "
            "(see docs/dask.md, Deployment).")


def _erred_on(client: Any, futures: Sequence[Any]) -> List[str]:
    """The workers on which the task behind the failed futures raised (the scheduler's record), or []."""
    keys = [f.key for f in futures]

    def workers_blamed(dask_scheduler) -> List[str]:  # sent by value, runs on the scheduler
        out: Set[str] = set()
        for key in keys:
            ts = dask_scheduler.tasks.get(key)
            blame = getattr(ts, "exception_blame", None)
            out |= set(getattr(blame, "erred_on", None) or ())
        return sorted(out)

    try:
        return list(client.run_on_scheduler(workers_blamed))
    except Exception:  # an older or newer scheduler without this record: the probe still names workers
        return []


def _import_error(client: Any, exc: ImportError, futures: Sequence[Any], label: str) -> DaskClusterError:
    """An ``ImportError`` raised by a task, as an error naming the worker(s) (checked again)."""
    where = _erred_on(client, futures)
    try:
        check_workers(client, workers=where or None)  # raises naming a worker that cannot import pydpowl
    except DaskClusterError as named:
        return named
    on = f"Dask worker(s) {', '.join(where)}" if where else "a Dask worker"
    return DaskClusterError(f"{on} raised {type(exc).__name__}: {exc} during {label}: the worker's Python "
                            "environment differs from the client's. " + _start_workers_hint(client))
