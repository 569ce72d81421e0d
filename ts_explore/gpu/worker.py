"""The launch worker: a spawned process that owns the GPU, compiles, runs, times and checks.

The notebook process never touches CUDA. It sends one request at a time over a
pipe and waits at most ``timeout`` seconds; a worker that does not answer (a
hung kernel, say) is killed and the next launch starts a fresh one. The
worker keeps its compile cache across launches.
"""

from __future__ import annotations

import builtins
import dataclasses
import marshal
import multiprocessing as mp
import os
import pickle
import sys
import traceback
import types
from typing import Any

from .errors import LaunchError


class PortableFunction:
    """A self-contained function (no closure, no globals) sent to the worker by its code."""

    def __init__(self, fn: types.FunctionType) -> None:
        if fn.__closure__:
            raise LaunchError("unpicklable", f"{fn.__qualname__} uses variables of its surroundings (a closure), "
                              "which cannot be sent to the launch worker; write it self-contained, e.g. "
                              "lambda tile: tile % 3 == 0, or define it in an importable module")
        unknown = [n for n in fn.__code__.co_names if not hasattr(builtins, n)]
        if unknown:
            raise LaunchError("unpicklable", f"{fn.__qualname__} refers to global names {unknown}, which the "
                              "launch worker does not have; inline them or define the function in an importable "
                              "module")
        self.code = marshal.dumps(fn.__code__)
        self.name = fn.__name__
        self.defaults = fn.__defaults__
        self._fn: Any = None

    def __call__(self, *args: Any) -> Any:
        if self._fn is None:
            self._fn = types.FunctionType(marshal.loads(self.code), {"__builtins__": builtins}, self.name,
                                          self.defaults)
        return self._fn(*args)

    def __getstate__(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "defaults": self.defaults, "_fn": None}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PortableFunction) and other.code == self.code

    def __hash__(self) -> int:
        return hash(self.code)


def _importable(fn: types.FunctionType) -> bool:
    module = sys.modules.get(fn.__module__)
    return (fn.__module__ != "__main__" and module is not None
            and getattr(module, fn.__qualname__, None) is fn)


def portable_config(config: Any) -> Any:
    """The config with user functions made sendable; LaunchError when it cannot be pickled."""
    if dataclasses.is_dataclass(config):
        changes = {f.name: PortableFunction(v) for f in dataclasses.fields(config)
                   if isinstance(v := getattr(config, f.name), types.FunctionType) and not _importable(v)}
        config = dataclasses.replace(config, **changes) if changes else config
    try:
        pickle.dumps(config)
    except Exception as exc:
        raise LaunchError("unpicklable", f"the config cannot be sent to the launch worker ({exc}); keep its "
                          "fields plain values or module-level functions") from None
    return config


class WorkerHandle:
    """Parent side: start the worker, send a request, enforce the timeout."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Any = None
        self._fresh = False  # started and not yet answered: a death now is a start-up failure

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    def _start(self) -> None:
        if getattr(mp.current_process(), "_inheriting", False):  # we are a worker re-running the user's script
            raise LaunchError("script_guard", _SCRIPT_GUARD)
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=worker_main, args=(child,), name="ts-explore-launch", daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        self._fresh = True

    def request(self, message: dict[str, Any], timeout: float, on_timeout: str = "") -> dict[str, Any]:
        """Send ``message``; kill the worker and raise LaunchError if no answer comes in ``timeout`` s."""
        if not self.alive:
            self._start()
        try:
            self._conn.send(message)
            ready = self._conn.poll(timeout)
        except (BrokenPipeError, EOFError, OSError):
            ready = None
        except KeyboardInterrupt:  # the user interrupted the notebook: do not leave a busy worker behind
            self.kill()
            raise
        if ready is None or (not ready and not self.alive):
            code = self._proc.exitcode if self._proc is not None else None
            raise self._died(code, "before answering")
        if not ready:
            self.kill()
            raise LaunchError("timeout", f"did not finish in {timeout:g} s; the worker was killed. {on_timeout}")
        try:
            reply = self._conn.recv()
        except (EOFError, OSError):
            raise self._died(self._proc.exitcode, "while answering") from None
        self._fresh = False
        if reply.get("restart"):
            self.stop()
        return reply

    def _died(self, code: int | None, when: str) -> LaunchError:
        """The error for a worker that exited; one that died starting up in a script gets the guard hint."""
        fresh = self._fresh
        self.stop()
        if fresh and _in_script():
            return LaunchError("worker_died", f"the launch worker exited (exit code {code}) while starting; its "
                               "own error is printed above. If the script launches at its top level, that is why: "
                               + _SCRIPT_GUARD)
        return LaunchError("worker_died", f"the launch worker exited (exit code {code}) {when}; "
                           "the next launch starts a fresh one")

    def kill(self) -> None:
        """End the worker now (SIGKILL), e.g. when a kernel hangs."""
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(10)
        self._close()

    def stop(self) -> None:
        """Ask the worker to exit; kill it if it does not."""
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send({"op": "stop"})
            except (BrokenPipeError, OSError):
                pass
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(5)
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._proc = None
        self._conn = None


_SCRIPT_GUARD = ("the launch worker is a fresh Python process that imports the running script again, so a "
                 "script must launch from inside `if __name__ == \"__main__\":` (as multiprocessing requires); "
                 "move the launch calls under that guard and run the script again")


def _in_script() -> bool:
    """Whether this process runs a script file (which the spawned worker imports again), not a notebook."""
    return getattr(sys.modules.get("__main__"), "__file__", None) is not None


def worker_main(conn: Any) -> None:
    """Child side: answer requests until told to stop or the pipe closes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupts belong to the notebook; it kills us if needed
    from .runner import Runner

    runner = Runner()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message.get("op") == "stop":
            return
        try:
            reply = runner.handle(message)
        except LaunchError as exc:
            reply = {"ok": False, "reason": exc.reason, "message": exc.args[0], "restart": runner.broken,
                     "hang": getattr(exc, "report", None)}
        except Exception as exc:  # anything else: report it with its traceback, restart if CUDA is unusable
            reply = {"ok": False, "reason": "launch_failed", "message": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc(limit=12), "restart": True}
        conn.send(reply)
        if reply.get("restart"):
            os._exit(0)


__all__ = ["PortableFunction", "WorkerHandle", "portable_config", "worker_main"]
