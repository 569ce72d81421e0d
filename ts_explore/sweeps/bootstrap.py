"""Can this program start the sweep's worker processes? Checked before a local cluster starts.

Dask starts worker processes with multiprocessing's ``spawn``: each new
process runs the parent's main module again (as ``__mp_main__``) before it
does anything else. Two programs cannot survive that: a script that starts a
sweep at its top level, without an ``if __name__ == "__main__":`` guard
(every worker would start a sweep of its own), and a script read from
standard input (a worker cannot read it again). Left alone, each worker dies
at start and the cluster waits out its start timeouts, minutes, before
blaming a busy machine.

:func:`check_bootstrap` runs that same first step once, in a child process
with multiprocessing's own preparation data, and raises a
:class:`~.errors.SweepError` with the fix and the child's own error when it
fails. A process that is itself still running the main module that way
refuses to start a cluster (:func:`refuse_while_bootstrapping`), which is the
error the check then reports.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from .errors import SweepError

CHECK_TIMEOUT_S = 60.0  # a main module still importing after this long is slow, not broken: the cluster starts
GUARD = 'if __name__ == "__main__":'
_MARK = "started a sweep while a worker process was starting"

# The child: multiprocessing's spawn preparation, as a worker process runs it.
_CHILD = """
import pickle, sys
from multiprocessing import process, spawn
data = pickle.load(sys.stdin.buffer)
process.current_process()._inheriting = True
spawn.prepare(data)
"""


def bootstrapping() -> bool:
    """True while this process is a spawned child still running its parent's main module."""
    import multiprocessing

    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def refuse_while_bootstrapping() -> None:
    """Raise SweepError when a worker process that is starting reaches a sweep (an unguarded script's)."""

    if bootstrapping():
        main = getattr(sys.modules.get("__mp_main__"), "__file__", None) or "the main module"
        raise SweepError(f"{main} {_MARK}: the sweep is not under {GUARD}")


def _preparation() -> dict[str, object] | None:
    """multiprocessing's data for a spawned child, or None when the child would not run a main module again."""
    import dask
    from multiprocessing import spawn

    if dask.config.get("distributed.worker.multiprocessing-method", "spawn") not in ("spawn", "forkserver"):
        return None
    data = spawn.get_preparation_data("ts-explore-bootstrap-check")
    data.pop("authkey", None)  # the child talks to nobody; multiprocessing refuses to pickle it anyway
    name, path = data.get("init_main_from_name"), data.get("init_main_from_path")
    if name is None and path is None:  # a notebook, python -c, the REPL: nothing is re-run
        return None
    if isinstance(name, str) and name.split(".")[0] == "ts_explore":  # python -m ts_explore.cli
        return None
    return data


def check_bootstrap(timeout: float = CHECK_TIMEOUT_S) -> None:
    """Raise SweepError (with ``worker_error``) when worker processes of this program cannot start."""

    data = _preparation()
    if data is None:
        return
    from multiprocessing import spawn

    try:
        done = subprocess.run([spawn.get_executable(), "-c", _CHILD], input=pickle.dumps(data), capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return  # slow to import, not broken: the cluster's own start timeouts apply
    except OSError:
        return
    if done.returncode == 0:
        return
    error = done.stderr.decode("utf-8", "replace").strip()
    last = next((line.strip() for line in reversed(error.splitlines()) if line.strip()), f"exit {done.returncode}")
    raise SweepError(_explain(data, error, last), worker_error=error)


def _explain(data: dict[str, object], error: str, last: str) -> str:
    """The one-line message: why the workers cannot start, the fix, and their error's last line."""
    main = str(data.get("init_main_from_path") or data.get("init_main_from_name"))
    start = f"the sweep's worker processes cannot start: each first runs this program's main module ({main}) again"
    if data.get("init_main_from_path") and not Path(main).is_file():
        return (f"{start}, but it was read from standard input, which they cannot read again. Save the program to "
                f"a file and run that (with the sweep under {GUARD}) [worker error: {last}]")
    if _MARK in error or "bootstrapping phase" in error:
        return (f"{start}, and it starts a sweep at its top level. Put the code that starts the sweep under "
                f"{GUARD} [worker error: {last}]")
    return (f"{start}, and that fails. Make its top level importable (move the work under {GUARD}) "
            f"[worker error: {last}]")


__all__ = ["CHECK_TIMEOUT_S", "bootstrapping", "check_bootstrap", "refuse_while_bootstrapping"]
