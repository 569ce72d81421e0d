"""The one CUDA probe: is there a GPU to launch on, and what are its limits?

Launch, the explorer's launch panel and the CLI all ask :func:`probe`. It runs
in a short-lived child process, once per notebook process, so the notebook's
own process never initialises CUDA (kernels run in the launch worker, which
owns its CUDA context). The answer is cached; ``probe(refresh=True)`` asks
again (e.g. after installing cuda-python).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..model.plan import DeviceLimits

# The one table of device limits: wire key -> (DeviceLimits field, CUDA device attribute). The probe's child
# process and the launch worker (:func:`ts_explore.gpu.device.open_device`) both read the limits through it.
LIMIT_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "sms": ("sms", "MULTIPROCESSOR_COUNT"),
    "threads": ("max_threads_per_sm", "MAX_THREADS_PER_MULTIPROCESSOR"),
    "ctas": ("max_ctas_per_sm", "MAX_BLOCKS_PER_MULTIPROCESSOR"),
    "smem_sm": ("smem_per_sm", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
    "smem_cta": ("smem_per_cta", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
    "regs": ("regs_per_sm", "MAX_REGISTERS_PER_MULTIPROCESSOR"),
}


def limits_from(name: str, cc: tuple[int, int], get: Callable[[str], int]) -> DeviceLimits:
    """DeviceLimits from ``get(CUDA attribute name without the CU_DEVICE_ATTRIBUTE_ prefix)``."""
    return DeviceLimits(name=name, cc=cc, **{f: get(attr) for f, attr in LIMIT_ATTRIBUTES.values()})


_SCRIPT = r"""
import json, sys
def say(**kw):
    print(json.dumps(kw)); sys.exit(0)
try:
    from cuda.bindings import driver as cu
except ImportError:
    say(reason="no_cuda_python")
try:
    (err,) = cu.cuInit(0)
except Exception as exc:
    say(reason="no_driver", detail=type(exc).__name__)
if int(err) != 0:
    say(reason="no_driver", detail=getattr(err, "name", str(err)))
err, count = cu.cuDeviceGetCount()
if int(err) != 0 or count == 0:
    say(reason="no_device")
A = cu.CUdevice_attribute
def get(name):
    return int(cu.cuDeviceGetAttribute(getattr(A, "CU_DEVICE_ATTRIBUTE_" + name), 0)[1])
err, name = cu.cuDeviceGetName(64, 0)
say(reason=None, name=name.split(b"\0")[0].decode(errors="replace"), count=count,
    cc=[get("COMPUTE_CAPABILITY_MAJOR"), get("COMPUTE_CAPABILITY_MINOR")],
    **{key: get(attr) for key, (_field, attr) in ATTRIBUTES.items()})
""".replace("ATTRIBUTES", repr(LIMIT_ATTRIBUTES))

_MESSAGES = {
    "no_cuda_python": "cuda-python is not installed; pip install 'ts-explore[gpu]' on a machine with an NVIDIA GPU "
                      "(record, draw and verify work without it)",
    "no_driver": "no NVIDIA driver on this machine; launches need an NVIDIA GPU - record, draw and verify work here",
    "no_device": "no CUDA device is visible; launches need an NVIDIA GPU - record, draw and verify work here",
    "probe_failed": "the CUDA probe did not answer; launches are off - record, draw and verify work here",
}


@dataclass(frozen=True)
class Probe:
    """What the probe found: a usable GPU's limits, or why there is none (``reason`` + ``message``)."""

    reason: str | None
    message: str = ""
    limits: DeviceLimits | None = None
    devices: int = 0

    @property
    def ok(self) -> bool:
        """True when a CUDA device answered."""
        return self.reason is None


def parse(stdout: str) -> Probe:
    """The probe script's one JSON line as a :class:`Probe` (anything else: ``probe_failed``)."""
    try:
        data = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Probe("probe_failed", _MESSAGES["probe_failed"])
    reason = data.get("reason")
    if reason is not None:
        detail = f" ({data['detail']})" if data.get("detail") else ""
        return Probe(reason, _MESSAGES.get(reason, reason) + detail)
    fields = {attr: data[key] for key, (_field, attr) in LIMIT_ATTRIBUTES.items()}
    limits = limits_from(data["name"], (data["cc"][0], data["cc"][1]), fields.__getitem__)
    return Probe(None, f"{limits.name} (sm_{limits.cc[0]}{limits.cc[1]}, {limits.sms} SMs)", limits,
                 int(data.get("count", 1)))


@functools.lru_cache(maxsize=1)
def _cached(timeout_s: float) -> Probe:
    try:
        out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return Probe("probe_failed", _MESSAGES["probe_failed"])
    return parse(out.stdout)


def probe(*, refresh: bool = False, timeout_s: float = 60.0) -> Probe:
    """Whether this machine can launch, and the GPU's limits; cached for the process (``refresh`` asks again)."""
    if refresh:
        _cached.cache_clear()
    return _cached(timeout_s)


def gpu_identity() -> dict[str, str]:
    """The name and driver version of the first GPU this process sees, read through NVML without a CUDA context.

    Names the sweeps' results caches and the tuning tables. Without NVML, the
    probe's device name and driver ``unknown``.
    """
    name, driver = "unknown", "unknown"
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            first = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip()
            handle = (pynvml.nvmlDeviceGetHandleByUUID(first) if first.startswith(("GPU-", "MIG-"))
                      else pynvml.nvmlDeviceGetHandleByIndex(int(first) if first.isdigit() else 0))
            name = _text(pynvml.nvmlDeviceGetName(handle))
            driver = _text(pynvml.nvmlSystemGetDriverVersion())
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML: fall back to the probe's name
        found = probe()
        if found.limits is not None:
            name = found.limits.name
    return {"gpu": name, "driver": driver}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


__all__ = ["Probe", "gpu_identity", "parse", "probe"]
