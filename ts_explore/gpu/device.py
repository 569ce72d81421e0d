"""The CUDA device as the worker sees it (cuda-python driver API; never imported by the parent)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.plan import DeviceLimits
from .probe import limits_from


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


def check(result: Any) -> Any:
    """Unwrap a cuda-python ``(CUresult, value...)`` tuple, raising CudaError on failure."""
    from cuda.bindings import driver as cu

    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    if int(err) != int(cu.CUresult.CUDA_SUCCESS):
        _, text = cu.cuGetErrorString(err)
        raise CudaError(f"{err.name if hasattr(err, 'name') else err}: {text.decode() if text else ''}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


@dataclass(frozen=True)
class DeviceInfo:
    """What the launch report and the refusals need to know about the GPU."""

    name: str
    cc: tuple[int, int]
    sms: int
    peak_gbps: float | None  # DRAM bytes per second from clock x bus width x 2 (DDR), in GB/s
    total_bytes: int
    limits: DeviceLimits | None = None  # what launch plans need (occupancy limits)

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"


def open_device(ordinal: int = 0) -> tuple[Any, DeviceInfo, Any]:
    """Initialise the driver, make the primary context current; returns (context, info, stream)."""
    from cuda.bindings import driver as cu

    try:
        init = cu.cuInit(0)
    except Exception as exc:  # the driver library is missing altogether
        raise CudaError(f"no NVIDIA driver ({type(exc).__name__})") from None
    check(init)
    count = check(cu.cuDeviceGetCount())
    if count == 0:
        raise CudaError("no CUDA device is visible")
    dev = check(cu.cuDeviceGet(ordinal))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    attr = cu.CUdevice_attribute

    def get(a: Any) -> int:
        return int(check(cu.cuDeviceGetAttribute(a, dev)))

    name = check(cu.cuDeviceGetName(64, dev))
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    cc = (get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    try:
        clock_khz = get(attr.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        bus_bits = get(attr.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        peak = 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9 if clock_khz and bus_bits else None
    except CudaError:
        peak = None
    limits = limits_from(name, cc, lambda a: get(getattr(attr, "CU_DEVICE_ATTRIBUTE_" + a)))
    info = DeviceInfo(name, cc, limits.sms, peak, int(check(cu.cuDeviceTotalMem(dev))), limits)
    stream = check(cu.cuStreamCreate(1))  # non-blocking: independent of the legacy default stream
    return ctx, info, stream


class Buffers:
    """Named device allocations of int32 elements, freed together."""

    def __init__(self) -> None:
        self.ptrs: dict[str, Any] = {}
        self.sizes: dict[str, int] = {}

    def alloc(self, name: str, elements: int) -> int:
        from cuda.bindings import driver as cu

        ptr = check(cu.cuMemAlloc(max(16, 4 * elements)))
        self.ptrs[name], self.sizes[name] = ptr, elements
        return int(ptr)

    def upload(self, name: str, array: np.ndarray) -> None:
        from cuda.bindings import driver as cu

        array = np.ascontiguousarray(array, dtype=np.int32)
        self.alloc(name, array.size)
        check(cu.cuMemcpyHtoD(self.ptrs[name], array.ctypes.data, array.nbytes))

    def fill(self, name: str, value: int, stream: Any) -> None:
        from cuda.bindings import driver as cu

        check(cu.cuMemsetD32Async(self.ptrs[name], int(np.int32(value).view(np.uint32)), self.sizes[name], stream))

    def download(self, name: str) -> np.ndarray:
        from cuda.bindings import driver as cu

        out = np.empty(self.sizes[name], dtype=np.int32)
        check(cu.cuMemcpyDtoH(out.ctypes.data, self.ptrs[name], out.nbytes))
        return out

    def address(self, name: str) -> int:
        return int(self.ptrs[name])

    def free(self) -> None:
        from cuda.bindings import driver as cu

        for ptr in self.ptrs.values():
            cu.cuMemFree(ptr)
        self.ptrs.clear()
        self.sizes.clear()


__all__ = ["Buffers", "CudaError", "DeviceInfo", "check", "open_device"]
