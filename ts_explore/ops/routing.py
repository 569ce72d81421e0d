"""Whether a call may take the direct path, or must go through torch's dispatcher as a custom op.

A call of ``ts_explore.ops.gemm`` on plain CUDA tensors, outside
``torch.compile``, without autograd and without a torch dispatch or function
mode active, runs the op's implementation directly: the dispatcher (and
``custom_op``'s Python wrapper around it) would add several microseconds to a
call whose whole budget is ten. Everything else (tracing, fake tensors,
tensor subclasses, inputs that require grad) goes through the registered
custom op, so torch sees exactly the op it would see without the shortcut.
"""

from __future__ import annotations

from typing import Any

import torch

_Tensor = torch.Tensor
# Dynamo answers True while it traces (the call then goes to the custom op); eager, a constant False, cheaper
# than torch.compiler.is_compiling. Non-Dynamo tracing (make_fx, AOT autograd) hands in fake tensors, which
# the type check already sends to the custom op.
_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)
_grad = torch.is_grad_enabled
_dispatch_modes = torch._C._len_torch_dispatch_stack  # modes entered with `with SomeTorchDispatchMode():`
_function_modes = torch._C._is_torch_function_mode_enabled


def direct(*tensors: Any) -> bool:
    """True when a call on ``tensors`` may skip the dispatcher (see the module docstring).

    The cheapest tests go first: a tensor subclass (a fake tensor, a subclass a
    dispatch mode wraps) ends the check before any mode is asked about.
    """
    for t in tensors:
        if type(t) is not _Tensor:
            return False
    if _compiling() or _dispatch_modes() or _function_modes():
        return False
    if _grad():
        for t in tensors:
            if t.requires_grad:
                return False
    return True


_DEVICES: dict[int, tuple[int, tuple[int, int]]] = {}


def device_key(index: int) -> tuple[int, tuple[int, int]]:
    """(SM count, compute capability) of CUDA device ``index``, read once through torch."""
    found = _DEVICES.get(index)
    if found is None:
        props = torch.cuda.get_device_properties(index)
        found = _DEVICES[index] = (props.multi_processor_count, (props.major, props.minor))
    return found


__all__ = ["device_key", "direct"]
