"""On an sm_90 GPU: the TS-scheduled attention forward matches torch SDPA (O, fp32) and a float64 LSE for every
shape class and control value, or the control value is refused with a reason.

bf16 Q, K, V; O may differ from the fp32 reference by bf16 rounding of O and
of P (see ``attention.mismatches``); the LSE is held to 1e-3, so a lost or
doubled K/V block (a shift of log(1 ± 1/blocks)) is caught even where O's
tolerance would hide it.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from ts_explore.kernels import attention  # noqa: E402
from ts_explore.scenarios import get  # noqa: E402
from ts_explore.scenarios.attention import Persistence  # noqa: E402

SCENARIO = get("hopper_attention")

# (batch, heads, seqlen_q, seqlen_kv): full tiles, tails in either seqlen, seqlen_q != seqlen_kv both ways, tiny
SHAPES = [
    (2, 4, 1024, 1024),
    (1, 3, 1000, 1000),   # tails in both (not multiples of 128)
    (2, 2, 200, 777),     # seqlen_q < seqlen_kv, both tails
    (1, 2, 777, 200),     # seqlen_q > seqlen_kv: causal rows before the diagonal see no key
    (1, 1, 1, 1),
    (3, 1, 65, 129),      # just past one block in each
    (1, 2, 128, 128),     # exactly one block
    (1, 2, 4096, 4096),   # 32 K/V blocks: most blocks raise no row's max, so warps skip the O rescale
]


@functools.lru_cache(maxsize=None)
def compiled(**overrides: Any) -> Any:
    return attention.compile(SCENARIO, SCENARIO.config(**overrides))


def sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def check(shape: tuple[int, int, int, int], seed: int = 0, **overrides: Any) -> None:
    cfg = SCENARIO.config(**overrides)
    b, h, sq, skv = shape
    check_on(*attention.make_inputs((b, h, sq, skv, cfg.head_dim), seed), **overrides)


def check_on(q: Any, k: Any, v: Any, **overrides: Any) -> None:
    """Launch on the given (batch, seqlen, heads, head_dim) tensors and compare O and LSE with the references."""
    cfg = SCENARIO.config(**overrides)
    b, sq, h, d = q.shape
    shape = (b, h, sq, k.shape[1])
    o = torch.full((b, sq, h, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    lse = torch.full((b, h, sq), float("nan"), device="cuda", dtype=torch.float32)
    attention.launcher(compiled(**overrides), q, k, v, o, lse, cfg, sms())()
    torch.cuda.synchronize()
    ref_o, ref_lse = attention.reference(q, k, v, cfg.causal)
    bad_o, bad_lse = attention.mismatches(o, lse, ref_o, ref_lse)
    wrong = int(bad_o.sum()) + int(bad_lse.sum())
    if wrong:
        heat = attention.error_map(bad_o, bad_lse, cfg.tile_q)
        raise AssertionError(
            f"{shape} {overrides}: {int(bad_o.sum())} of {o.numel()} O elements and {int(bad_lse.sum())} of "
            f"{lse.numel()} LSE rows off (max O error {float((o.float() - ref_o).abs().nan_to_num(1e30).max()):.3g}, "
            f"max LSE error {float((lse.double() - ref_lse).abs().nan_to_num(1e30).max()):.3g}); mismatches per "
            f"(Q tile, batch·head):\n{heat}")


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [128, 64])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_shape_class_matches_torch(shape: tuple[int, int, int, int], head_dim: int, causal: bool) -> None:
    check(shape, head_dim=head_dim, causal=causal)


CONTROLS: list[dict[str, Any]] = [
    dict(overlap=False),
    dict(pingpong=False),
    dict(overlap=False, pingpong=False),
    dict(tile_k=64),
    dict(tile_k=64, stages=4),
    dict(tile_k=64, stages=5),
    dict(tile_k=160),
    dict(tile_k=160, head_dim=64),
    dict(consumer_wgs=1, tile_q=64),
    dict(consumer_wgs=1, tile_q=64, overlap=False),
    dict(head_dim=64, stages=6),
    dict(persistence=Persistence.STATIC, consumer_wgs=1, tile_q=64),
    dict(persistence=Persistence.STATIC),
    dict(tile_q=64, consumer_wgs=1, causal=True),
    dict(head_dim=64, tile_k=192),
    dict(head_dim=64, tile_k=256),
    dict(head_dim=64, tile_k=256, persistence=Persistence.STATIC),
    dict(tma_store=False),
    dict(tma_store=False, overlap=False),
    dict(tma_store=False, persistence=Persistence.STATIC),
    dict(tma_store=False, consumer_wgs=1, tile_q=64),
    dict(head_dim=64, tile_q=192, consumer_wgs=3),
    dict(head_dim=64, tile_q=192, consumer_wgs=3, overlap=False),
    dict(head_dim=64, tile_q=192, consumer_wgs=3, persistence=Persistence.STATIC),
    dict(head_dim=64, tile_q=192, consumer_wgs=3, tma_store=False),
]


@pytest.mark.parametrize("overrides", CONTROLS, ids=lambda o: ",".join(f"{k}={getattr(v, 'name', v)}"
                                                                       for k, v in o.items()))
def test_each_control_value_launches_and_matches_torch(overrides: dict[str, Any]) -> None:
    check((2, 3, 1000, 777), seed=1, **overrides)
    if attention.launch_refusal(SCENARIO.config(**{**overrides, "causal": True})) is None:  # causal + static: refused
        check((1, 2, 256, 512), seed=2, **{**overrides, "causal": True})


@pytest.mark.parametrize("wgs", [1, 2, 3])
def test_static_persistence_walks_many_tiles_per_cta(wgs: int) -> None:
    """Hundreds of work tiles on at most 132 CTAs: O, the statistics, the K/V rings and the O buffers carry from
    tile to tile (three consumer warpgroups: head_dim 64)."""
    d = {"head_dim": 64} if wgs == 3 else {}
    check((8, 16, 1000, 777), seed=3, persistence=Persistence.STATIC, consumer_wgs=wgs, tile_q=64 * wgs, **d)
    check((8, 16, 1000, 777), seed=4, persistence=Persistence.STATIC, consumer_wgs=wgs, tile_q=64 * wgs,
          overlap=False, **d)


@pytest.mark.parametrize("overrides", [dict(), dict(persistence=Persistence.STATIC), dict(consumer_wgs=1, tile_q=64)],
                         ids=lambda o: ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in o.items()) or "default")
def test_the_tma_store_of_o_writes_no_row_past_seqlen_q(overrides: dict[str, Any]) -> None:
    """O's last Q tile is a tail and O ends where a guard band of the same allocation begins: the TMA store clips
    the rows past seqlen_q, so the band keeps its values, and every row before it matches the references."""
    cfg = SCENARIO.config(**overrides)
    b, h, sq, skv, d = 2, 3, 200, 333, cfg.head_dim
    q, k, v = attention.make_inputs((b, h, sq, skv, d), 5)
    n = b * sq * h * d
    guard = 4 * cfg.tile_q * h * d  # room for the rows of a whole Q tile past the end, several times over
    memory = torch.full((n + guard,), 7.0, device="cuda", dtype=torch.bfloat16)
    o = memory[:n].view(b, sq, h, d)
    lse = torch.empty((b, h, sq), device="cuda", dtype=torch.float32)
    attention.launcher(compiled(**overrides), q, k, v, o, lse, cfg, sms())()
    torch.cuda.synchronize()
    assert bool((memory[n:] == 7.0).all()), "the TMA store wrote past O's last row"
    bad_o, bad_lse = attention.mismatches(o, lse, *attention.reference(q, k, v, cfg.causal))
    assert not bool(bad_o.any()) and not bool(bad_lse.any())


def test_control_values_that_cannot_launch_are_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="64 rows"):
        attention.compile(SCENARIO, SCENARIO.config(consumer_wgs=1, tile_q=128, tile_k=64, head_dim=64))


def test_launch_runs_attention_through_the_gate_and_times_the_torch_backends() -> None:
    """The user's path: launch plans the size, proves each instance, checks O and LSE, times torch SDPA beside."""
    from ts_explore.gpu import launch

    result = launch("hopper_attention", sizes=[(4, 16, 2048, 2048, 128), (1, 3, 1000, 777, 128)], reps=5, warmup=2)
    assert result.ok, result.summary()
    big, tails = result.runs
    assert big.unit == "TFLOP/s" and big.rate > 100, big
    assert any(big.reference(name) is not None for name, _ in attention.SDPA_BACKENDS), big.references
    assert tails.mismatches[0].total == 1000 * 3 * 128 + 3 * 1000
    causal = launch("hopper_attention", causal=True, sizes=[(2, 4, 1000, 1500, 128)], reps=3, warmup=1)
    assert causal.ok, causal.summary()


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [128, 64])
def test_a_single_row_whose_max_rises_in_a_late_block_is_rescaled_while_its_warp_neighbours_keep_theirs(
        head_dim: int, causal: bool) -> None:
    """The O rescale is skipped only where no row of a warp raised its max: here one row of one warp meets its
    largest score in the last K/V block (key 1000 of 1024 is that row's query, scaled up), all others early."""
    b, h, s = 1, 2, 1024
    q, k, v = attention.make_inputs((b, h, s, s, head_dim), seed=5)
    row, key = 1010, 1000  # the key is visible to the row under the causal mask too
    k[0, key, 0] = (q[0, row, 0].float() * 4.0).to(torch.bfloat16)
    k[0, 3, :] = k[0, 3, :] * 3  # an early key every row weighs heavily: later blocks rarely raise a max
    check_on(q, k, v, head_dim=head_dim, causal=causal)


@pytest.mark.parametrize("head_dim", [128, 64])
def test_rows_whose_max_rises_block_after_block_are_rescaled_each_time(head_dim: int) -> None:
    """Keys grow in size block by block, so most rows' max rises in most blocks: O is rescaled again and again."""
    b, h, s = 1, 2, 1024
    q, k, v = attention.make_inputs((b, h, s, s, head_dim), seed=6)
    k *= torch.linspace(0.25, 2.0, s, device="cuda", dtype=torch.float32).to(torch.bfloat16)[None, :, None, None]
    check_on(q, k, v, head_dim=head_dim)
