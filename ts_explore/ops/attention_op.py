"""``ts_explore.ops.attention``: the catalog's Hopper attention forward as a torch custom op.

``attention(q, k, v)`` is softmax(q·kᵀ/sqrt(head_dim))·v for bf16 tensors in
flash-attention's layout, (batch, seqlen, heads, head_dim), contiguous
(head_dim 64 or 128; seqlen_q and seqlen_kv may differ; ``causal=True``
masks bottom-right aligned, as the kernel does). It returns O in q's layout,
and with ``return_lse=True`` also the fp32 log-sum-exp of each row,
(batch, heads, seqlen_q).

Each new shape is proven once per shape class (:mod:`.gate`), its kernel
loaded from the compile cache or compiled into it; a call then checks its
tensors with a few comparisons and calls the TVM-FFI host on the current
stream. The custom ops ``torch.ops.ts_explore.attention`` and
``attention_out`` (with fake implementations) are what ``torch.compile`` and
CUDA graphs see. There is no backward: differentiating through it raises
:class:`NotImplementedError` saying so.
"""

# No ``from __future__ import annotations`` here: torch.library reads the custom ops' annotations as objects.

from dataclasses import dataclass
from typing import Any

import torch

from ..kernels import attention as kernel
from . import compiled
from .checks import explain_attention
from .device import arch, limits, require_launchable
from .gate import OpsError, ShapeGate
from .routing import current_stream, direct

_BF16, _FP32 = torch.bfloat16, torch.float32
GATE = ShapeGate(compiled.scenario("hopper_attention"), kernel.plan)


@dataclass(frozen=True)
class Prepared:
    """One shape's attention kernel, proven and loaded."""

    fn: Any
    config: Any
    sizes: tuple[int, int, int, int]  # batch, heads, seqlen_q, seqlen_kv
    grid: tuple[int, int, int]
    o_shape: tuple[int, int, int, int]
    lse_shape: tuple[int, int, int]
    device: int


_PREPARED: dict[tuple, Prepared] = {}


def prepare(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Prepared:
    """Check, prove (once per shape class), load or compile, for these shapes."""
    explain_attention(q, k, v)
    b, sq, h, d = q.shape
    skv = k.shape[1]
    index = q.get_device()
    found = limits(index)
    cfg = compiled.attention_config(d, bool(causal))
    require_launchable("hopper_attention", cfg, index)
    shape = (b, h, sq, skv, d)
    GATE.admit(cfg, shape, found)
    fn = compiled.attention_function(cfg, arch(found)).function
    return Prepared(fn, cfg, (b, h, sq, skv), tuple(kernel.grid(cfg, shape, found.sms)), (b, sq, h, d), (b, h, sq),
                    index)


def _lookup(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Prepared:
    key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.get_device(), bool(causal))
    p = _PREPARED.get(key)
    if p is None:
        p = _PREPARED[key] = prepare(q, k, v, causal)
    return p


def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor | None,
        causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The op's implementation: (O, LSE) on the current stream (O into ``out`` when given)."""
    p = _lookup(q, k, v, causal)
    if (not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous())
            or (q.data_ptr() | k.data_ptr() | v.data_ptr()) & 15
            or k.get_device() != p.device or v.get_device() != p.device):
        explain_attention(q, k, v, out)
    if out is None:
        out = torch.empty(p.o_shape, dtype=_BF16, device=q.device)
    elif (out.shape != p.o_shape or out.dtype is not _BF16 or not out.is_contiguous() or out.data_ptr() & 15
          or out.get_device() != p.device):
        explain_attention(q, k, v, out)
    lse = torch.empty(p.lse_shape, dtype=_FP32, device=q.device)
    b, h, sq, skv = p.sizes
    gx, gy, gz = p.grid
    p.fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(), b, h, sq, skv, gx, gy, gz,
         current_stream(p.device), None, None)
    return out, lse


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False, return_lse: bool = False,
              out: torch.Tensor | None = None) -> Any:
    """softmax(q·kᵀ/sqrt(d))·v with the TS attention kernel; O, or (O, LSE) with ``return_lse``.

    q, k, v: bf16, contiguous (batch, seqlen, heads, head_dim), head_dim 64
    or 128, on one GPU. Wrong dtype, device, layout or shape raises
    :class:`~ts_explore.ops.OpsError` naming it.
    """
    if direct(q, k, v) and (out is None or type(out) is torch.Tensor):
        o, lse = run(q, k, v, out, causal)
    elif not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        raise OpsError(f"attention takes torch tensors, got {', '.join(type(t).__name__ for t in (q, k, v))}")
    elif out is None:
        o, lse = torch.ops.ts_explore.attention(q, k, v, bool(causal))
    else:
        lse = torch.ops.ts_explore.attention_out(q, k, v, out, bool(causal))
        o = out
    return (o, lse) if return_lse else o


NO_BACKWARD = ("ts_explore.ops.attention has no backward (it is not built yet): it is a forward-only kernel; for "
               "training use torch.nn.functional.scaled_dot_product_attention, or call attention on tensors that "
               "do not require grad (torch.no_grad(), x.detach())")


@torch.library.custom_op("ts_explore::attention", mutates_args=())
def attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, LSE) of softmax(q·kᵀ/sqrt(d))·v (see :func:`attention`)."""
    return run(q, k, v, None, causal)


@attention_op.register_fake
def _attention_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    explain_attention(q, k, v, pointers=False)
    b, sq, h, _ = q.shape
    return torch.empty_like(q), q.new_empty((b, h, sq), dtype=_FP32)


@torch.library.custom_op("ts_explore::attention_out", mutates_args=("out",))
def attention_out_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                     causal: bool) -> torch.Tensor:
    """LSE, with O written into ``out`` (see :func:`attention`)."""
    return run(q, k, v, out, causal)[1]


@attention_out_op.register_fake
def _attention_out_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                        causal: bool) -> torch.Tensor:
    explain_attention(q, k, v, out, pointers=False)
    b, sq, h, _ = q.shape
    return q.new_empty((b, h, sq), dtype=_FP32)


def _no_backward(ctx: Any, *grads: Any) -> Any:
    raise NotImplementedError(NO_BACKWARD)


def _no_context(ctx: Any, inputs: Any, output: Any) -> None:
    return None


attention_op.register_autograd(_no_backward, setup_context=_no_context)


def prepared(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> Prepared:
    """The kernel a call on these shapes runs (proven and loaded now if new)."""
    return _lookup(q, k, v, causal)


__all__ = ["GATE", "NO_BACKWARD", "Prepared", "attention", "attention_op", "attention_out_op", "prepared", "run"]
