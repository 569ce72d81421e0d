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
from pathlib import Path
from typing import Any

import torch

from .attention_policy import attention_knobs
from .checks import explain_attention
from .compile_cache import load_shared, shared_library
from .gate import OpsError
from .launch_index import INDEX, record_name
from .routing import device_key, direct

_BF16, _FP32 = torch.bfloat16, torch.float32
_Tensor, _empty_like = torch.Tensor, torch.empty_like
_GATE: list[Any] = []


def gate() -> Any:
    """The attention's :class:`~.gate.ShapeGate` (made on first use: it imports the scenario and the plan)."""
    if not _GATE:
        from ..kernels import attention as kernel
        from . import compiled
        from .gate import ShapeGate

        _GATE.append(ShapeGate(compiled.scenario("hopper_attention"), kernel.plan))
    return _GATE[0]


@dataclass(frozen=True)
class Prepared:
    """One shape's attention kernel, proven and loaded."""

    fn: Any
    sizes: tuple[int, int, int, int]  # batch, heads, seqlen_q, seqlen_kv
    head_dim: int
    causal: bool
    grid: tuple[int, int, int]
    lse_shape: tuple[int, int, int]
    device: int
    from_record: bool  # loaded from a launch record of an earlier process (proven and compiled there)
    scratch_lse: torch.Tensor  # where a call that does not return the LSE lets the kernel write it

    @property
    def config(self) -> Any:
        """The attention config the kernel was compiled from."""
        from . import compiled

        return compiled.attention_config(self.head_dim, self.causal, seqlen_q=self.sizes[2])


_PREPARED: dict[tuple, Prepared] = {}


def prepare(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Prepared:
    """Check, then take a launch record of an earlier process, else prove (once per shape class) and load or
    compile, for these shapes."""
    explain_attention(q, k, v)
    b, sq, h, d = q.shape
    skv = k.shape[1]
    index = q.get_device()
    shape = (b, h, sq, skv, d)
    sms, cc = device_key(index)
    knobs = attention_knobs(d, causal, sq)
    name = record_name("attention", repr(knobs), shape, "bf16", sms, cc)
    found = INDEX.get(name)
    if found is not None:
        fn = load_shared(Path(found["library"]), found["symbol"])
        return Prepared(fn, (b, h, sq, skv), d, bool(causal), tuple(found["grid"]), (b, h, sq), index,
                        True, q.new_empty((b, h, sq), dtype=_FP32))
    from ..kernels import attention as kernel
    from . import compiled
    from .device import arch, limits, require_launchable

    limits_ = limits(index)
    cfg = compiled.config_of_knobs(knobs)
    require_launchable("hopper_attention", cfg, index)
    gate().admit(cfg, shape, limits_)
    loaded = compiled.attention_function(cfg, arch(limits_))
    grid = tuple(kernel.grid(cfg, shape, limits_.sms))
    library = shared_library(loaded.path)
    if library.exists():
        INDEX.put(name, {"library": str(library), "symbol": loaded.path.stem, "grid": grid, "config": repr(cfg)})
    return Prepared(loaded.function, (b, h, sq, skv), d, bool(causal), grid, (b, h, sq), index,
                    False, q.new_empty((b, h, sq), dtype=_FP32))


def _lookup(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Prepared:
    # v's shape and every dtype: TVM-FFI checks them. ``causal`` as given: True and 1 are one key.
    key = (q.shape, k.shape, q.get_device(), causal)
    p = _PREPARED.get(key)
    if p is None:
        p = _PREPARED[key] = prepare(q, k, v, bool(causal))
    return p


def _refuse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor | None,
            cause: Exception | None = None) -> None:
    """Raise the message naming why these tensors failed a call's checks (ours, or TVM-FFI's against the compiled
    placeholders)."""
    explain_attention(q, k, v, out)
    said = f" (the kernel's check said: {cause})" if cause is not None else ""
    raise OpsError("q, k, v (and out) must be contiguous bf16 tensors, 16-byte aligned, on one GPU" + said) from cause


def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor | None, causal: bool,
        want_lse: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """The op's implementation: (O, LSE) on the current stream (O into ``out`` when given).

    TVM-FFI checks the tensors' dtype, device, sizes and alignment against the compiled placeholders and launches
    on torch's current stream; the strides between tokens and batches it cannot tie to the sizes, so contiguity is
    checked here. ``want_lse=False`` lets the kernel write the LSE into a buffer kept per shape (nobody reads it),
    which saves an allocation per call; the LSE returned is then that buffer, to be ignored.
    """
    p = _PREPARED.get((q.shape, k.shape, q.get_device(), causal))  # _lookup's key, inlined: a call's budget is µs
    if p is None:
        p = _lookup(q, k, v, causal)
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        _refuse(q, k, v, out)
    if out is None:  # O has q's shape and dtype; empty_like is the cheapest allocation measured (1.6 µs)
        out = _empty_like(q)
    elif not out.is_contiguous():
        _refuse(q, k, v, out)
    lse = q.new_empty(p.lse_shape, dtype=_FP32) if want_lse else p.scratch_lse
    try:
        p.fn(q, k, v, out, lse, *p.grid)
    except Exception as cause:  # TVM-FFI's refusal: name the tensor and the fix
        _refuse(q, k, v, out, cause)
    return out, lse


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False, return_lse: bool = False,
              out: torch.Tensor | None = None) -> Any:
    """softmax(q·kᵀ/sqrt(d))·v with the TS attention kernel; O, or (O, LSE) with ``return_lse``.

    q, k, v: bf16, contiguous (batch, seqlen, heads, head_dim), head_dim 64
    or 128, on one GPU. Wrong dtype, device, layout or shape raises
    :class:`~ts_explore.ops.OpsError` naming it.
    """
    if (out is None or type(out) is _Tensor) and direct(q, k, v):
        if return_lse:
            return run(q, k, v, out, causal, True)
        return run(q, k, v, out, causal, False)[0]
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
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


__all__ = ["gate", "NO_BACKWARD", "Prepared", "attention", "attention_op", "attention_out_op", "prepared", "run"]
