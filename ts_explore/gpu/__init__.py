"""Launch a catalog scenario on the GPU: verify, compile (cached), run, time and check it.

>>> import ts_explore                                              # doctest: +SKIP
>>> r = ts_explore.launch("grid_stride_copy", sizes=[1 << 24])     # doctest: +SKIP
>>> print(r.summary())                                             # doctest: +SKIP

Refusals and failures are exceptions: :class:`LaunchError` with a ``reason``
slug and a message naming the cause and the fix (no CUDA device, no
cuda-python, a config the verifier rejects, CLC on a GPU below sm_100, a size
the kernel cannot take, a kernel that did not finish in time...). The launch
itself runs in a worker process, so a hung kernel is killed and the notebook
lives on.
"""

from __future__ import annotations

import atexit
import dataclasses
from typing import Any, Iterable

from ..scenarios import Scenario, get
from .device import DeviceInfo
from .errors import LaunchError
from .reference import HostProblem, Mismatch
from .result import MEMCPY, TORCH, LaunchResult, SizeRun
from .safety import Gate, verdict_for
from .timing import Timing
from .worker import WorkerHandle, portable_config

DEFAULT_SIZES = (1 << 22,)
_WORKER = WorkerHandle()
atexit.register(_WORKER.stop)


def cuda_unavailable_reason() -> tuple[str, str] | None:
    """(reason, message) when this machine cannot launch at all; None when a CUDA device is visible."""
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        return ("no_cuda_python", "cuda-python is not installed; pip install 'ts-explore[gpu]' on a machine with "
                "an NVIDIA GPU (record and verify work without it)")
    try:
        err = cu.cuInit(0)[0]
    except Exception as exc:  # the driver library itself is missing
        return ("no_device", f"no NVIDIA driver on this machine ({type(exc).__name__}); launches need an NVIDIA "
                "GPU - record, draw and verify work here")
    if int(err) != 0:
        return ("no_device", f"no CUDA driver or device here (cuInit returned {err.name if hasattr(err, 'name') else err}); "
                "launches need an NVIDIA GPU - record, draw and verify work on this machine")
    err, count = cu.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        return ("no_device", "no CUDA device is visible; launches need an NVIDIA GPU - record, draw and verify "
                "work on this machine")
    return None


def launch(scenario: str | Scenario, config: Any = None, *, sizes: Iterable[int] = DEFAULT_SIZES, reps: int = 20,
           warmup: int = 3, timeout: float = 180.0, force: bool = False, check: bool = True,
           references: bool = True, **overrides: Any) -> LaunchResult:
    """Run ``scenario`` with ``config`` (or its defaults plus ``overrides``) once per size, in int32 elements.

    Each size is checked exactly against a host reference (``check``) and timed
    with CUDA events (``warmup`` untimed runs, then ``reps``); ``references``
    also times a device-to-device ``cudaMemcpyAsync`` of the same bytes (and
    ``torch.copy_`` when torch is installed) in the same process. A config the
    verifier rejects is refused unless ``force=True``.
    """
    sc = get(scenario)
    cfg = sc.config(**overrides) if config is None else (dataclasses.replace(config, **overrides) if overrides
                                                         else config)
    if sc.kernel is None:
        raise LaunchError("no_kernel", f"scenario {sc.name!r} has no GPU kernel (Scenario.kernel is None); it can "
                          "be recorded and verified, not launched")
    try:
        sc.check(cfg)
    except (ValueError, TypeError) as exc:
        raise LaunchError("bad_config", str(exc)) from None
    gate = verdict_for(sc, cfg)
    if not gate.ok and not force:
        raise LaunchError("unverified", f"the verifier rejects this config ({gate.summary}); fix the schedule, or "
                          f"pass force=True to launch it anyway (a hang is killed after {timeout:g} s)")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise LaunchError("bad_size", "sizes is empty; pass e.g. sizes=[1 << 22]")
    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        raise LaunchError(*unavailable)
    message = {"op": "launch", "scenario": sc.name, "kernel": sc.kernel, "config": portable_config(cfg),
               "sizes": sizes, "reps": max(1, int(reps)), "warmup": max(0, int(warmup)), "check": check,
               "references": references}
    reply = _WORKER.request(message, timeout, on_timeout=f"The verifier said: {gate.summary}.")
    if not reply.get("ok"):
        text = reply.get("message", "unknown failure")
        if reply.get("traceback"):
            text += "\n" + reply["traceback"]
        raise LaunchError(reply.get("reason", "launch_failed"), text)
    return LaunchResult(scenario=sc.name, config=cfg, device=reply["device"], runs=reply["runs"],
                        compile_s=reply["compile_s"], first_compile_s=reply["first_compile_s"],
                        cache_hit=reply["cache_hit"], verdict=gate.summary, forced=force and not gate.ok)


def device_info(timeout: float = 60.0) -> DeviceInfo:
    """Name, compute capability, SM count and peak bandwidth of the GPU the worker uses."""
    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        raise LaunchError(*unavailable)
    reply = _WORKER.request({"op": "device"}, timeout)
    if not reply.get("ok"):
        raise LaunchError(reply.get("reason", "launch_failed"), reply.get("message", ""))
    return reply["device"]


def shutdown() -> None:
    """Stop the launch worker (its compile cache goes with it)."""
    _WORKER.stop()


__all__ = [
    "DEFAULT_SIZES",
    "MEMCPY",
    "TORCH",
    "DeviceInfo",
    "Gate",
    "HostProblem",
    "LaunchError",
    "LaunchResult",
    "Mismatch",
    "SizeRun",
    "Timing",
    "cuda_unavailable_reason",
    "device_info",
    "launch",
    "shutdown",
]
