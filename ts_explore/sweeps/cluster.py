"""The Dask cluster a sweep runs on when the user gives none, configured for sweeps.

Verification sweeps get one single-threaded worker process per core;
launch sweeps one per visible GPU (``dask_cuda.LocalCUDACluster``, else a
spec cluster that pins ``CUDA_VISIBLE_DEVICES`` per worker). Our settings:

- the scheduler's ``allowed_failures`` is 0: a cell whose worker dies is
  recorded as failed after its first death instead of killing worker after
  worker (the default retries it three times);
- ``worker-saturation`` 1.0: a worker holds only the cell it runs, so a death
  takes no innocent queued cell with it;
- launch workers are not daemonic, so they may start the launch worker
  process that owns the GPU and its watchdog (``distributed.worker.daemon``
  is set to False for the process: the nanny reads it again when it restarts
  a worker);
- only its owner can reach it: the scheduler, the nannies and the workers
  listen on 127.0.0.1 and speak TLS with a certificate made for this cluster
  (``Security.temporary()``: mutual TLS, so a process without it cannot
  connect, let alone run code on the workers); the dashboard listens on
  127.0.0.1 only;
- no fixed ports (the scheduler and the dashboard take free ones);
- worker processes ignore Ctrl-C (the terminal sends it to every process of
  the sweep): the client stops the sweep and closes the cluster, and no
  worker prints a KeyboardInterrupt traceback. The first workers inherit
  the ignored SIGINT, so the client ignores it too while they start (a few
  seconds; Ctrl-C works again once the cluster is up);
- before starting worker processes from a script, :mod:`.bootstrap` checks
  that they can start (each re-runs the script's top level): a script with
  no ``if __name__ == "__main__":`` guard, or one read from standard input,
  fails within seconds with the fix;
- a worker that starts slowly (a busy machine: "Nanny failed to start") does
  not fail the sweep: the cluster is started again with longer timeouts
  (:data:`START_TIMEOUTS_S`), and a :class:`SweepError` names the way out
  when the last attempt fails too.

One cluster of each kind is started on first use and kept for the process
(a second sweep starts at once); :func:`shutdown` closes them.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import SweepError

_CLIENTS: dict[str, Any] = {}
_LOCK = threading.Lock()

INSTALL_HINT = "pip install 'ts-explore[sweep]' (Dask distributed, dask-cuda, pandas, pyarrow and cryptography)"
START_TIMEOUTS_S = (30.0, 120.0, 300.0)  # seconds a worker may take to start and connect, attempt by attempt
_START_ERRORS = (RuntimeError, TimeoutError, OSError)  # how distributed reports a worker that did not start
LOCALHOST = "127.0.0.1"
WORKER_SETUP = "ts_explore.sweeps.worker_setup"  # preloaded by every worker process


def require_packages() -> None:
    """Raise :class:`SweepError` saying how to install what sweeps need when Dask or pandas is missing."""
    missing = []
    for module, package in (("distributed", "distributed"), ("dask", "dask"), ("pandas", "pandas"),
                            ("cryptography", "cryptography")):  # the local cluster's TLS certificate
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise SweepError(f"sweeps need {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
                         f"installed; {INSTALL_HINT}")


def _sweep_config(launch: bool) -> dict[str, Any]:
    return {"distributed.scheduler.worker-saturation": 1.0,
            "distributed.scheduler.allowed-failures": 0,
            "distributed.worker.daemon": not launch}


def visible_gpus() -> int:
    """How many CUDA devices this machine shows (from the one probe, without touching CUDA here)."""
    from ..gpu.probe import probe

    found = probe()
    if not found.ok:
        raise SweepError(f"launch=True needs a CUDA GPU: {found.message}. Sweep without launch to verify only, or "
                         "pass client= connected to a cluster with GPU workers")
    return max(1, found.devices)


def start_cluster(*, launch: bool = False, workers: int | None = None) -> Any:
    """A new ``distributed.Client`` on a local cluster set up for sweeps (see the module docstring).

    ``workers`` defaults to one per core (verification) or one per visible GPU
    (``launch=True``; ``workers`` then takes the first N GPUs).
    """
    require_packages()
    import dask

    from .bootstrap import check_bootstrap, refuse_while_bootstrapping

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers= takes a positive number of worker processes, got {workers!r}; e.g. workers=2, "
                         "or leave it out for one per core (one per GPU for launches)")
    refuse_while_bootstrapping()
    check_bootstrap()

    if launch:
        dask.config.set({"distributed.worker.daemon": False})  # kept: the nanny reads it on every restart
    for timeout, longer in zip(START_TIMEOUTS_S, START_TIMEOUTS_S[1:]):
        try:
            return _start(launch, workers, timeout)
        except SweepError:  # no GPU for a launch sweep: no attempt helps
            raise
        except _START_ERRORS as exc:  # "Nanny failed to start", a start that timed out: try again, more patiently
            logging.getLogger(__name__).warning(
                "the sweep's local Dask cluster did not start (%s: %s); starting it again, allowing %.0f s per "
                "worker", type(exc).__name__, exc, longer)
    try:
        return _start(launch, workers, START_TIMEOUTS_S[-1])
    except SweepError:
        raise
    except _START_ERRORS as exc:
        kind = "GPU worker per device" if launch else "worker process per core"
        raise SweepError(
            f"the local Dask cluster for this sweep (one {kind}) did not start in {len(START_TIMEOUTS_S)} attempts, "
            f"the last allowing {START_TIMEOUTS_S[-1]:.0f} s per worker ({type(exc).__name__}: {exc}). The machine "
            "is probably too busy or short of memory: retry when it is quieter, start fewer workers "
            "(client=ts_explore.sweeps.start_cluster(workers=1)), or pass client= connected to a running "
            "cluster") from exc


def _start(launch: bool, workers: int | None, timeout: float) -> Any:
    """One attempt at :func:`start_cluster`, allowing each worker ``timeout`` seconds to start and connect."""
    import dask
    from distributed import Client, LocalCluster

    from distributed.security import Security

    settings = {**_sweep_config(launch), "distributed.comm.timeouts.connect": f"{timeout}s"}
    common = {"scheduler_kwargs": {"allowed_failures": 0}, "dashboard_address": f"{LOCALHOST}:0",
              "silence_logs": logging.ERROR, "death_timeout": timeout, "security": Security.temporary(),
              "host": LOCALHOST, "protocol": "tls://", "preload": [WORKER_SETUP]}
    with dask.config.set(settings), _workers_ignore_ctrl_c():
        if not launch:
            n = workers or os.cpu_count() or 1
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, **common)
            return Client(cluster, security=common["security"])
        gpus = list(range(visible_gpus()))[: workers or None]
        try:
            from dask_cuda import LocalCUDACluster

            cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(g) for g in gpus), threads_per_worker=1,
                                       **common)
        except Exception as exc:  # noqa: BLE001 - no dask-cuda, or it cannot start here: same layout without it
            logging.getLogger(__name__).warning("dask-cuda's LocalCUDACluster is not available (%s: %s); "
                                                "starting one worker per GPU without it", type(exc).__name__, exc)
            cluster = _gpu_spec_cluster(gpus, common)
        return Client(cluster, security=common["security"])


def _gpu_spec_cluster(gpus: list[int], common: dict[str, Any]) -> Any:
    """One nanny-managed worker per GPU, each seeing only its own device (what dask-cuda does, minus extras)."""
    from distributed import Nanny, Scheduler, SpecCluster

    secure = {"security": common["security"], "host": common["host"], "protocol": common["protocol"]}
    scheduler = {"cls": Scheduler, "options": {"allowed_failures": 0, "dashboard_address": common["dashboard_address"],
                                               **secure}}
    spec = {f"gpu-{g}": {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(g)},
                                                    "silence_logs": common["silence_logs"],
                                                    "death_timeout": common["death_timeout"],
                                                    "preload": common["preload"], **secure}} for g in gpus}
    return SpecCluster(workers=spec, scheduler=scheduler, silence_logs=common["silence_logs"],
                       security=common["security"])


@contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Worker processes started meanwhile inherit an ignored SIGINT (a restarted one: :data:`WORKER_SETUP`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def local_client(*, launch: bool = False) -> Any:
    """The process's sweep cluster of this kind, started on first use."""
    kind = "gpu" if launch else "cpu"
    with _LOCK:
        client = _CLIENTS.get(kind)
        if client is not None and client.status == "running":
            return client
        client = _CLIENTS[kind] = start_cluster(launch=launch)
        return client


def shutdown() -> None:
    """Close the local clusters sweeps started (their worker processes end)."""
    with _LOCK:
        clients = list(_CLIENTS.values())
        _CLIENTS.clear()
    for client in clients:
        cluster = getattr(client, "cluster", None)
        try:
            client.close()
            if cluster is not None:
                cluster.close()
        except Exception:  # noqa: BLE001 - closing at exit must not raise
            pass


atexit.register(shutdown)


def gpu_identity() -> dict[str, str]:
    """The GPU this worker uses and its driver (:func:`ts_explore.gpu.probe.gpu_identity`; imported when called)."""
    from ..gpu.probe import gpu_identity as identity

    return identity()


__all__ = ["INSTALL_HINT", "START_TIMEOUTS_S", "SweepError", "gpu_identity", "local_client", "require_packages", "shutdown",
           "start_cluster", "visible_gpus"]
