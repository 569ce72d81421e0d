"""What the ops need to know about the GPU a tensor lives on: its limits, its arch, and the launch rules.

Read once per device (``torch.cuda`` has made the context by the time a
tensor is on the GPU) and kept, so a call pays a dict lookup.
"""

from __future__ import annotations

import functools
from typing import Any

from ..model.plan import DeviceLimits
from .gate import OpsError


@functools.lru_cache(maxsize=None)
def limits(index: int) -> DeviceLimits:
    """The limits of CUDA device ``index`` (as :mod:`ts_explore.gpu.probe` reads them, through the driver)."""
    import torch
    from cuda.bindings import driver as cu

    from ..gpu.probe import limits_from

    props = torch.cuda.get_device_properties(index)
    err, dev = cu.cuDeviceGet(index)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise OpsError(f"the CUDA driver cannot open device {index} ({err}); check nvidia-smi")

    def get(attr: str) -> int:
        err, value = cu.cuDeviceGetAttribute(getattr(cu.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{attr}"), dev)
        if err != cu.CUresult.CUDA_SUCCESS:
            raise OpsError(f"cannot read {attr} of CUDA device {index} ({err})")
        return int(value)

    return limits_from(props.name, (props.major, props.minor), get)


def arch(limits: DeviceLimits) -> str:
    """The DSL target for these limits (``sm_90a`` on Hopper: WGMMA and TMA need the ``a`` variant)."""
    return f"sm_{limits.cc[0]}{limits.cc[1]}a"


@functools.lru_cache(maxsize=None)
def require_launchable(scenario_name: str, config: Any, index: int) -> DeviceLimits:
    """Device ``index``'s limits once :func:`ts_explore.gpu.safety.launch_refusal` lets ``config`` run there."""
    from ..gpu.safety import launch_refusal
    from .compiled import scenario

    found = limits(index)
    refusal = launch_refusal(scenario(scenario_name), config, found)
    if refusal is not None:
        raise OpsError(refusal[1])
    return found


__all__ = ["arch", "limits", "require_launchable"]
