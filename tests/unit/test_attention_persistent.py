"""hopper_attention under static persistence, causal: the tiles go out longest first, the launch plan names the
walk of every CTA, and the verdict covers exactly that walk: SAFE for every number of tiles of one K/V loop
length (the CPU view's instance, every CTA of a one-wave grid), INCONCLUSIVE with the reason for a walk that
mixes lengths (TS's tile loop repeats one length), never SAFE in its place; the planted faults are still found."""

from __future__ import annotations

import pytest

from ts_explore.app.drawings import schedule_graph
from ts_explore.gpu.plan import launch_plan
from ts_explore.gpu.safety import prove
from ts_explore.kernels import attention
from ts_explore.kernels.attention_geometry import cta_walk, kv_blocks, q_tiles
from ts_explore.model.plan import DeviceLimits
from ts_explore.scenarios import get
from ts_explore.scenarios.attention import OVERLAP_FAULTS, AttentionFault, Persistence
from ts_explore.verification.verify import verify

SC = get("hopper_attention")
H200 = DeviceLimits.h200()
STATIC = Persistence.STATIC


def _walk_by_hand(b: int, h: int, sq: int, skv: int, ctas: int, cta: int) -> list[int]:
    """What CTA ``cta`` runs, from the kernel's rules spelled out: Q tiles last first, heads·batches fastest, cut
    into waves of one grid, every other wave reversed; the CTA takes its place in each wave."""
    order = [m for m in reversed(range(q_tiles(sq, 128))) for _ in range(h * b)]
    waves = [order[i:i + ctas] for i in range(0, len(order), ctas)]
    waves = [w[::-1] if k % 2 else w for k, w in enumerate(waves)]
    return [kv_blocks(sq, skv, 128, 128, w[cta], True) for w in waves if cta < len(w)]


@pytest.mark.parametrize("q_tile", [0, 1, 2])
def test_the_causal_persistent_cpu_view_is_proven_for_every_number_of_work_tiles(q_tile: int) -> None:
    cfg = SC.config(causal=True, persistence=STATIC, q_tile=q_tile)
    built = SC.build(cfg)
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert verdict.scope.tiles_covered == "every number of work tiles (tile-loop search)"
    assert any(f"walks 1 tile of {cfg.kv_blocks} K/V blocks" in n for n in built.notes), built.notes
    drawn = schedule_graph(SC.build(cfg).tasks[-1]).source
    assert "qk" in drawn and "softmax" in drawn and "tiles" in drawn


def test_a_walk_of_tiles_of_different_lengths_is_inconclusive_and_says_why() -> None:
    cfg = SC.config(causal=True, persistence=STATIC, heads=100, q_tile=2)
    # 300 tiles (100 each of 3, 2 and 1 blocks) on 132 CTAs: CTA 0 runs the first tile of wave 0, the last of wave 1
    # (walked backwards) and the first of wave 2
    assert cfg.viewed_cta == 0 and cfg.viewed_walk == (3, 1, 1)
    built = SC.build(cfg)
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "inconclusive", verdict.summary()
    assert "not Python ints" in verdict.summary() and not verdict.findings
    assert any("differ in K/V loop length" in n and "INCONCLUSIVE" in n for n in built.notes), built.notes
    assert "get_domain" in schedule_graph(SC.build(cfg).tasks[-1]).source  # drawn with its per-tile bound
    # the same CTA count with one length per walk (non-causal) is a proof
    assert verify(**SC.build(SC.config(persistence=STATIC, heads=100)).verify_kwargs()).status.value == "safe"


@pytest.mark.parametrize("size", [(2, 16, 8192, 8192, 128), (16, 16, 1024, 1024, 128), (3, 5, 1000, 1300, 128),
                                  (1, 40, 777, 200, 128)])
def test_the_launch_plan_names_the_walk_of_every_cta_longest_tiles_first(size: tuple) -> None:
    b, h, sq, skv, _ = size
    plan = launch_plan("hopper_attention", size, device=H200, causal=True, persistence="static")
    tiles = h * b * q_tiles(sq, 128)
    ctas = min(H200.sms, tiles)
    assert plan.grid == (1, 1, ctas)
    seen = {}
    for inst in plan.instances:
        for span in inst.ctas:
            for c in span:
                seen[c] = list(inst.view["extra"]["walk"])
                assert inst.iterations == len(seen[c])
    assert sorted(seen) == list(range(ctas)), "every CTA is named once"
    for c in range(ctas):
        assert seen[c] == _walk_by_hand(b, h, sq, skv, ctas, c), c
    assert sum(len(w) for w in seen.values()) == tiles
    # the first wave takes the longest tiles
    assert [w[0] for w in seen.values()] == sorted((w[0] for w in seen.values()), reverse=True) or tiles > ctas
    most, fewest = attention.makespan(SC.config(causal=True, persistence=STATIC), (b, h, sq, skv, 128), H200.sms)
    assert most == max(sum(w) for w in seen.values()) and fewest == min(sum(w) for w in seen.values())
    assert f"{fewest}-{most} K/V blocks" in plan.assumptions[-1]


def test_the_gate_proves_a_one_wave_causal_grid_and_does_not_prove_a_mixed_walk() -> None:
    cfg = SC.config(causal=True, persistence=STATIC)
    one_wave = launch_plan("hopper_attention", (1, 3, 1000, 1300, 128), device=H200, causal=True,
                           persistence="static")
    report = prove(SC, cfg, [one_wave])
    assert not report.problem and len(report.proven) > 1
    assert all(p.status == "safe" for p in report.proven), [(p.status, p.summary) for p in report.proven]
    waves = launch_plan("hopper_attention", (2, 40, 512, 512, 128), device=H200, causal=True, persistence="static")
    report = prove(SC, cfg, [waves])
    mixed = [p for p in report.proven if len(set(p.instance.view["extra"]["walk"])) > 1]
    assert mixed and all(p.status == "inconclusive" for p in mixed), [(p.status, p.summary) for p in report.proven]
    assert all(p.status == "safe" for p in report.proven if p not in mixed)


def test_a_cta_whose_rows_see_no_key_is_named_and_not_called_safe() -> None:
    """seqlen_q > seqlen_kv: the first Q tiles see no key; their CTAs store O = 0 and LSE = -inf and run no K/V
    block, which the verdict says rather than proving a loop that never runs."""
    plan = launch_plan("hopper_attention", (1, 2, 777, 200, 128), device=H200, causal=True, persistence="static")
    empty = [i for i in plan.instances if i.view["extra"]["walk"] == (0,)]
    assert [i.describe() for i in empty] == ["CTAs 6-13: 1 tile, 0 K/V blocks each"]
    report = prove(SC, SC.config(causal=True, persistence=STATIC), [plan])
    assert {p.status for p in report.proven if p.instance in empty} == {"inconclusive"}
    assert all("does no work" in p.summary for p in report.proven if p.instance in empty)


def test_cta_walk_alternates_the_direction_of_the_waves_causal_and_keeps_the_stride_otherwise() -> None:
    assert [cta_walk(512, 512, 128, 128, 2, True, 3, c) for c in range(3)] == [(4, 2, 1), (4, 2, 1), (3, 3)]
    assert cta_walk(512, 512, 128, 128, 2, False, 3, 1) == (4, 4, 4)


def test_the_snake_order_lets_the_causal_ctas_finish_together() -> None:
    """hd128 8k causal (2 x 16 heads, 64 Q tiles on 132 CTAs): one grid's stride over the longest-first order
    gives CTA 0 the longest tile of every wave (536 K/V blocks against 473 for the last); walking every other wave
    backwards evens the totals out to within 1 % of the mean (504)."""
    size = (2, 16, 8192, 8192, 128)
    most, fewest = attention.makespan(SC.config(causal=True, persistence=STATIC), size, H200.sms)
    mean = sum(kv_blocks(8192, 8192, 128, 128, m, True) for m in range(64)) * 32 / 132
    assert most <= 1.01 * mean and fewest >= 0.99 * mean, (most, fewest, mean)
    plain = [sum(_stride_walk(c)) for c in range(132)]
    assert max(plain) == 536 and min(plain) == 473


def _stride_walk(cta: int) -> list[int]:
    order = [m for m in reversed(range(64)) for _ in range(32)]
    return [kv_blocks(8192, 8192, 128, 128, m, True) for m in order[cta::132]]


@pytest.mark.parametrize("fault", [f for f in AttentionFault if f is not AttentionFault.NONE], ids=lambda f: f.name)
def test_every_planted_fault_is_caught_in_the_causal_persistent_view(fault: AttentionFault) -> None:
    cfg = SC.config(causal=True, persistence=STATIC, q_tile=2, fault=fault, overlap=fault in OVERLAP_FAULTS)
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()


@pytest.mark.parametrize("heads,batch,tiles,grid", [(16, 2, 64, 132), (3, 1, 5, 4), (5, 3, 7, 13), (1, 1, 1, 1),
                                                    (40, 3, 5, 132)])
def test_the_kernels_work_order_is_the_plans_and_runs_every_tile_once(heads: int, batch: int, tiles: int,
                                                                      grid: int) -> None:
    """The kernel's ``work_coord`` on Int32 sizes (run eagerly here), for every scheduler tile of every CTA: the
    work tile it runs is the one ``snake`` names, and every work tile runs exactly once."""
    import cutlass

    from ts_explore.kernels.attention_geometry import snake
    from ts_explore.kernels.attention_tiles import WorkOrder, work_coord

    total = heads * batch * tiles
    order = WorkOrder(*(cutlass.Int32(v) for v in (heads, batch, tiles, grid, 1)), how="snake")
    ran = []
    for t in range(total):  # the static scheduler's tile t, as the coordinate it hands the CTA (heads fastest)
        coord = (t % heads, (t // heads) % batch, t // (heads * batch))
        h, b, z = (int(v) for v in work_coord(coord, order))
        assert 0 <= h < heads and 0 <= b < batch and 0 <= z < tiles
        ran.append(h + heads * (b + batch * z))
        assert ran[-1] == snake(t, total, grid)
    assert sorted(ran) == list(range(total))


@pytest.mark.parametrize("how", ["by q tile", "grouped"])
@pytest.mark.parametrize("heads,batch,tiles,group", [(16, 2, 64, 6), (3, 1, 5, 2), (5, 3, 7, 4), (1, 1, 1, 1),
                                                     (40, 3, 5, 200)])
def test_the_l2_work_orders_run_every_tile_once_in_their_sequence(how: str, heads: int, batch: int, tiles: int,
                                                                  group: int) -> None:
    """One CTA per tile, taken in dispatch order: non-causal, the Q tiles of one (head, batch) one after another;
    causal, ``group`` pairs at a time with each group's Q tiles longest first. ``work_coord`` on Int32 sizes (run
    eagerly) names the tiles the geometry's functions name, and every work tile runs exactly once."""
    import cutlass

    from ts_explore.kernels.attention_geometry import by_q_tile, grouped_longest_first
    from ts_explore.kernels.attention_tiles import WorkOrder, work_coord

    total = heads * batch * tiles
    order = WorkOrder(*(cutlass.Int32(v) for v in (heads, batch, tiles, 132, group)), how=how)
    ran = []
    for t in range(total):  # the t-th CTA the grid dispatches, as its block coordinate (heads fastest)
        coord = (t % heads, (t // heads) % batch, t // (heads * batch))
        h, b, z = (int(v) for v in work_coord(coord, order))
        if how == "by q tile":
            assert (h, b, z) == by_q_tile(t, heads, tiles)
        else:
            pair, zr = grouped_longest_first(t, heads * batch, tiles, group)
            assert (h + heads * b, z) == (pair, zr)
        ran.append((h, b, z))
    assert sorted(ran) == sorted((h, b, z) for h in range(heads) for b in range(batch) for z in range(tiles))
    if how == "grouped" and group < heads * batch:  # the busy pairs stay within one group until it is done
        first = [h + heads * b for h, b, _ in ran[:group * tiles]]
        assert set(first) == set(range(group))
