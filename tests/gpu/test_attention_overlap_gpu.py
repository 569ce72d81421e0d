"""On an sm_90 GPU: attention with intra-warpgroup overlap (``overlap=True``) matches torch SDPA (O, fp32) and a
float64 LSE on every shape class, as the in-order kernel does (``test_attention_gpu.py``, whose checks these
reuse).

What overlap changes is where a block's work happens: the first block runs S, its softmax and P alone; every
later block issues S[j] and then the P·V of block j-1, runs the softmax of block j while that P·V runs, and packs
P after it completes; the last block issues its own P·V. So the shapes that matter are the loop's ends: a tile
with exactly one K/V block (first and last at once), two blocks, tails in either sequence, causal tiles whose
last block is masked and Q tiles that see no key (the loop does not run), and static persistence, where a CTA's
next tile starts right after the last P·V.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from test_attention_gpu import SHAPES, check, check_on  # noqa: E402
from ts_explore.kernels import attention  # noqa: E402
from ts_explore.scenarios import get  # noqa: E402
from ts_explore.scenarios.attention import Persistence  # noqa: E402

SCENARIO = get("hopper_attention")
STATIC = Persistence.STATIC
OVERLAP_SHAPES = [*SHAPES, (2, 3, 256, 256), (1, 2, 300, 129)]  # two blocks; the second of two a 1-key tail


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [128, 64])
@pytest.mark.parametrize("shape", OVERLAP_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_overlap_matches_torch_on_every_shape_class(shape: tuple[int, int, int, int], head_dim: int,
                                                    causal: bool) -> None:
    check(shape, overlap=True, head_dim=head_dim, causal=causal)


CONTROLS: list[dict[str, Any]] = [
    dict(pingpong=False),
    dict(pingpong=False, head_dim=64),
    dict(persistence=STATIC),
    dict(persistence=STATIC, head_dim=64),
    dict(consumer_wgs=1, tile_q=64),
    dict(consumer_wgs=1, tile_q=64, persistence=STATIC),
    dict(head_dim=64, tile_k=192, persistence=STATIC),
]


@pytest.mark.parametrize("overrides", CONTROLS, ids=lambda o: ",".join(f"{k}={getattr(v, 'name', v)}"
                                                                       for k, v in o.items()))
def test_overlap_with_each_control_value_matches_torch(overrides: dict[str, Any]) -> None:
    check((2, 3, 1000, 777), seed=1, overlap=True, **overrides)
    check((1, 2, 128, 128), seed=7, overlap=True, **overrides)  # one block: the first is the last
    if attention.launch_refusal(SCENARIO.config(**{**overrides, "causal": True})) is None:  # causal + static: refused
        check((1, 2, 256, 512), seed=2, overlap=True, causal=True, **overrides)
        check((1, 2, 777, 200), seed=8, overlap=True, causal=True, **overrides)  # Q tiles that see no key


@pytest.mark.parametrize("wgs", [1, 2])
def test_overlap_under_static_persistence_walks_many_tiles_per_cta(wgs: int) -> None:
    """1024 work tiles on at most 132 CTAs: O, P, the statistics and the K/V rings carry from tile to tile."""
    check((8, 16, 1000, 777), seed=3, overlap=True, persistence=STATIC, consumer_wgs=wgs, tile_q=64 * wgs)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [128, 64])
def test_overlap_rescales_o_when_a_single_rows_max_rises_in_a_late_block(head_dim: int, causal: bool) -> None:
    """The lagged P·V rescales O by the factor of the block before it: one row meets its largest score in the last
    block (its P·V is the last block's own), all others early."""
    b, h, s = 1, 2, 1024
    q, k, v = attention.make_inputs((b, h, s, s, head_dim), seed=5)
    row, key = 1010, 1000
    k[0, key, 0] = (q[0, row, 0].float() * 4.0).to(torch.bfloat16)
    k[0, 3, :] = k[0, 3, :] * 3
    check_on(q, k, v, overlap=True, head_dim=head_dim, causal=causal)


@pytest.mark.parametrize("head_dim", [128, 64])
def test_overlap_rescales_o_block_after_block(head_dim: int) -> None:
    b, h, s = 1, 2, 1024
    q, k, v = attention.make_inputs((b, h, s, s, head_dim), seed=6)
    k *= torch.linspace(0.25, 2.0, s, device="cuda", dtype=torch.float32).to(torch.bfloat16)[None, :, None, None]
    check_on(q, k, v, overlap=True, head_dim=head_dim)
