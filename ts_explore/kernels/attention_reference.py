"""What a launch of the Hopper attention forward is checked against: seeded inputs, the fp32 reference and
its comparison, the error map a heatmap draws, and torch's SDPA backends timed beside.

Host side only (torch, numpy); :mod:`.attention` compiles, plans and
launches, and re-exports these for the launch worker, the tests and the
benchmark.
"""

from __future__ import annotations

import math
from typing import Any

Shape = tuple  # (batch, heads, seqlen_q, seqlen_kv, head_dim)


def make_inputs(shape: Shape, seed: int = 0, device: str = "cuda") -> tuple:
    """Random-normal bf16 Q (b, sq, h, d), K and V (b, skv, h, d), seeded (torch)."""
    import torch

    b, h, sq, skv, d = shape
    gen = torch.Generator(device=device).manual_seed(seed)

    def normal(rows: int) -> Any:
        return torch.randn((b, rows, h, d), generator=gen, device=device, dtype=torch.float32).to(torch.bfloat16)

    return normal(sq), normal(skv), normal(skv)


def visible(sq: int, skv: int, causal: bool, device: Any = None) -> Any:
    """The (sq, skv) boolean mask of keys each row sees (bottom-right aligned when causal), or None."""
    import torch

    if not causal:
        return None
    rows = torch.arange(sq, device=device)[:, None]
    keys = torch.arange(skv, device=device)[None, :]
    return keys <= rows + (skv - sq)


def reference(q: Any, k: Any, v: Any, causal: bool) -> tuple:
    """O in fp32 (torch SDPA on fp32 copies, (b, sq, h, d)) and LSE in float64 ((b, h, sq)), head by head.

    Rows that see no key (causal, seqlen_q > seqlen_kv) expect O = 0 and LSE = -inf, as the kernel writes.
    """
    import torch
    import torch.nn.functional as F

    b, sq, h, d = q.shape
    skv = k.shape[1]
    mask = visible(sq, skv, causal, q.device)
    out = torch.empty((b, sq, h, d), device=q.device, dtype=torch.float32)
    lse = torch.empty((b, h, sq), device=q.device, dtype=torch.float64)
    scale = 1.0 / math.sqrt(d)
    for bi in range(b):
        for hi in range(h):
            qf, kf, vf = (t[bi, :, hi].float() for t in (q, k, v))
            o = F.scaled_dot_product_attention(qf[None], kf[None], vf[None], attn_mask=mask)[0]
            s = (qf.double() @ kf.double().T) * scale
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
                o = torch.where(mask.any(dim=1, keepdim=True), o, torch.zeros_like(o))
            out[bi, :, hi] = o
            lse[bi, hi] = torch.logsumexp(s, dim=1)
    return out, lse


def mismatches(o: Any, lse: Any, ref_o: Any, ref_lse: Any) -> tuple:
    """Boolean maps of wrong O elements and wrong LSE rows (NaN never agrees).

    O: bf16 rounding of the output costs 2^-9 of |O| and P rounded to bf16
    before the P·V GEMM about 2^-9 of the largest |V| a row weighs (allowed:
    2^-7·|O| + 4e-3). LSE: fp32 statistics with exp2 and log2 approximations
    (allowed: 1e-3 + 1e-5·|LSE|). A lost or doubled K/V block moves the LSE by
    log(1 ± 1/blocks), far outside.
    """
    import torch

    got = o.float()
    bad_o = ~((got - ref_o).abs() <= ref_o.abs() * 2.0**-7 + 4e-3)
    ref = ref_lse.float()
    both_inf = torch.isinf(ref) & (lse == ref)
    bad_lse = ~(both_inf | ((lse - ref).abs() <= 1e-3 + 1e-5 * ref.abs()))
    return bad_o, bad_lse


def error_map(bad_o: Any, bad_lse: Any, tile_q: int) -> Any:
    """Mismatches per (Q tile, batch·head): O elements plus LSE rows, a small integer array for a heatmap."""
    import numpy as np

    b, sq, h, _ = bad_o.shape
    per_row = (bad_o.sum(dim=3).permute(0, 2, 1) + bad_lse).reshape(b * h, sq).cpu().numpy()  # (b·h, sq)
    tiles = -(-sq // tile_q)
    padded = np.zeros((b * h, tiles * tile_q), dtype=np.int64)
    padded[:, :sq] = per_row
    return padded.reshape(b * h, tiles, tile_q).sum(axis=2).T


SDPA_BACKENDS = (("torch SDPA flash", "FLASH_ATTENTION"), ("torch SDPA cuDNN", "CUDNN_ATTENTION"),
                 ("torch SDPA efficient", "EFFICIENT_ATTENTION"))


def sdpa_references(q: Any, k: Any, v: Any, causal: bool) -> dict:
    """Each torch SDPA backend this machine has, as a zero-argument call on the same tensors (named by backend).

    A backend that refuses the shape or is absent is left out. Causal with
    seqlen_q != seqlen_kv passes the bottom-right-aligned mask torch names
    ``causal_lower_right``.
    """
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))  # (b, h, s, d) views
    sq, skv = q.shape[1], k.shape[1]
    kwargs: dict = {}
    if causal and sq == skv:
        kwargs = {"is_causal": True}
    elif causal:
        from torch.nn.attention.bias import causal_lower_right

        kwargs = {"attn_mask": causal_lower_right(sq, skv)}
    found: dict = {}
    for label, name in SDPA_BACKENDS:
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue

        def call(backend: Any = backend) -> None:
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(qt, kt, vt, **kwargs)

        try:
            call()
            torch.cuda.synchronize()
        except RuntimeError:
            continue
        found[label] = call
    return found


__all__ = ["SDPA_BACKENDS", "error_map", "make_inputs", "mismatches", "reference", "sdpa_references", "visible"]
