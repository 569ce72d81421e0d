"""Why a tensor cannot go to an op: one message per cause, naming the argument and the fix.

These read only ``.dtype``, ``.device``, ``.shape``, ``.stride()`` and
``.data_ptr()``, so they run (and are tested) without torch. The ops check
their arguments with a few cheap comparisons on every call and ask these
functions only when one fails, for the message.
"""

from __future__ import annotations

from typing import Any

from ..kernels.gemm_geometry import DType, shape_refusal
from .gate import OpsError

BF16, FP8, FP32 = "torch.bfloat16", "torch.float8_e4m3fn", "torch.float32"
ATTENTION_HEAD_DIMS = (64, 128)


def _dtype(t: Any) -> str:
    return str(t.dtype)


def _where(t: Any) -> str:
    dev = getattr(t, "device", t)  # a tensor, or a device
    return f"{dev.type}:{dev.index}" if getattr(dev, "index", None) is not None else str(dev.type)


def _cuda(name: str, t: Any, device: Any = None) -> None:
    if t.device.type != "cuda":
        raise OpsError(f"{name} is on {_where(t)}; the TS kernels run on a CUDA GPU: move it with {name}.cuda()")
    if device is not None and _where(t) != _where(device):
        raise OpsError(f"{name} is on {_where(t)} but the first operand is on {_where(device)}; put every "
                       "tensor of one call on the same GPU")


def _aligned(name: str, t: Any) -> None:
    if t.data_ptr() % 16:
        raise OpsError(f"{name} starts at an address that is not 16-byte aligned (TMA needs it); pass a tensor of "
                       f"its own ({name}.clone()) rather than a view at an odd offset")


def explain_gemm(a: Any, b: Any, out: Any = None, fp8: bool | None = None, pointers: bool = True) -> None:
    """Raise OpsError naming what is wrong with ``gemm(a, b, out=out)``; return when nothing is.

    ``pointers=False`` skips the alignment checks (fake tensors, as ``torch.compile`` traces, have no data).
    """
    want = FP8 if fp8 or (fp8 is None and _dtype(a) == FP8) else BF16
    for name, t in (("a", a), ("b", b)):
        if len(t.shape) != 2:
            raise OpsError(f"{name} has {len(t.shape)} dimensions; gemm multiplies matrices: a is (M, K), b is "
                           "(K, N); flatten leading dimensions first (x.reshape(-1, x.shape[-1]))")
        if _dtype(t) not in (BF16, FP8):
            raise OpsError(f"{name} is {_dtype(t)}; gemm takes torch.bfloat16, or torch.float8_e4m3fn with "
                           f"scale_a and scale_b: convert with {name}.to(torch.bfloat16)")
        if _dtype(t) != want:
            raise OpsError(f"a is {_dtype(a)} but b is {_dtype(b)}; both operands must have one dtype "
                           "(bf16, or fp8 e4m3 with scales)")
    _cuda("a", a)
    _cuda("b", b, a.device)
    (m, k), (k2, n) = tuple(a.shape), tuple(b.shape)
    if k != k2:
        raise OpsError(f"a is {m}x{k} and b is {k2}x{n}: a's columns must equal b's rows (K)")
    if tuple(a.stride()) != (k, 1):
        raise OpsError(f"a must be row-major and contiguous (strides ({k}, 1)), got strides {tuple(a.stride())}; "
                       "pass a.contiguous()")
    if tuple(b.stride()) != (1, k):
        hint = ("b is row-major; the kernel reads B as N rows of K (an nn.Linear weight, w of shape (N, K)): pass "
                "w.t(), or b.t().contiguous().t()")
        raise OpsError(f"b must be column-major (strides (1, {k})), got strides {tuple(b.stride())}: {hint}")
    refusal = shape_refusal((m, n, k), DType.FP8 if want == FP8 else DType.BF16)
    if refusal is not None:
        raise OpsError(refusal)
    if pointers:
        _aligned("a", a)
        _aligned("b", b)
    if out is not None:
        if _dtype(out) != BF16:
            raise OpsError(f"out is {_dtype(out)}; gemm writes bf16: pass torch.empty((M, N), dtype=torch.bfloat16)")
        _cuda("out", out, a.device)
        if tuple(out.shape) != (m, n) or tuple(out.stride()) != (n, 1):
            raise OpsError(f"out must be a contiguous {m}x{n} bf16 tensor, got shape {tuple(out.shape)} and strides "
                           f"{tuple(out.stride())}")
        if pointers:
            _aligned("out", out)


def explain_scales(fp8: bool, scale_a: Any, scale_b: Any) -> None:
    """Raise OpsError when the scales do not fit the operands' dtype."""
    if fp8 and (scale_a is None or scale_b is None):
        raise OpsError("an fp8 gemm computes (scale_a·scale_b)·(a @ b): pass both scale_a and scale_b "
                       "(floats; 1.0 for unscaled inputs)")
    if not fp8 and (scale_a is not None or scale_b is not None):
        raise OpsError("scale_a and scale_b apply to float8_e4m3fn operands only; a bf16 gemm takes none")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s is None:
            continue
        numel = getattr(s, "numel", None)
        if numel is not None and numel() != 1:
            raise OpsError(f"{name} has {numel()} elements; gemm takes one scale per tensor")


def explain_attention(q: Any, k: Any, v: Any, out: Any = None, pointers: bool = True) -> None:
    """Raise OpsError naming what is wrong with ``attention(q, k, v, out=out)``; return when nothing is
    (``pointers=False``: without the alignment checks, for fake tensors)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if len(t.shape) != 4:
            raise OpsError(f"{name} has {len(t.shape)} dimensions; attention takes (batch, seqlen, heads, "
                           "head_dim) tensors (flash-attention's layout; from SDPA's (batch, heads, seqlen, "
                           "head_dim) use x.transpose(1, 2).contiguous())")
        if _dtype(t) != BF16:
            raise OpsError(f"{name} is {_dtype(t)}; attention takes torch.bfloat16: convert with "
                           f"{name}.to(torch.bfloat16)")
        _cuda(name, t, None if t is q else q.device)
    b, sq, h, d = tuple(q.shape)
    if d not in ATTENTION_HEAD_DIMS:
        raise OpsError(f"head_dim {d} is not built: the kernel is laid out for head_dim "
                       f"{' and '.join(map(str, ATTENTION_HEAD_DIMS))}")
    skv = k.shape[1]
    for name, t in (("k", k), ("v", v)):
        if tuple(t.shape) != (b, skv, h, d):
            raise OpsError(f"{name} has shape {tuple(t.shape)}; with q {tuple(q.shape)} and k's seqlen {skv} it "
                           f"must be {(b, skv, h, d)} (batch, seqlen, heads, head_dim; same heads as q)")
    for name, t in (("q", q), ("k", k), ("v", v)):
        s = tuple(t.shape)
        if tuple(t.stride()) != (s[1] * s[2] * s[3], s[2] * s[3], s[3], 1):
            raise OpsError(f"{name} must be contiguous in (batch, seqlen, heads, head_dim), got strides "
                           f"{tuple(t.stride())}; pass {name}.contiguous()")
        if pointers:
            _aligned(name, t)
    if b * h * max(sq, skv) * d >= 2**31:
        raise OpsError(f"q/k/v of {(b, max(sq, skv), h, d)} hold 2^31 elements or more; the kernel indexes with "
                       "32-bit integers: split the batch")
    if out is not None:
        if _dtype(out) != BF16 or tuple(out.shape) != tuple(q.shape) or tuple(out.stride()) != tuple(q.stride()):
            raise OpsError(f"out must be a contiguous bf16 tensor shaped like q {tuple(q.shape)}, got "
                           f"{_dtype(out)} {tuple(out.shape)}")
        _cuda("out", out, q.device)
        if pointers:
            _aligned("out", out)


__all__ = ["ATTENTION_HEAD_DIMS", "explain_attention", "explain_gemm", "explain_scales"]
