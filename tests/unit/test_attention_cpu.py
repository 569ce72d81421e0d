"""hopper_attention on the CPU: every control value records, draws and verifies; the default configs are
proven SAFE by our checker; the K/V trip counts follow the sizes and the causal mask; each planted fault is
found with a counterexample; the kernel compiles for sm_90a and traces the recorded schedule; the launch plan
groups Q tiles by the K/V blocks they visit; sizes and configs the kernel does not take are refused with the reason."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenario_support import captured, ident
from ts_explore.analysis.async_reads import SCOPE_NOTE, check_async_reads
from ts_explore.app.drawings import dependency_graph, schedule_graph
from ts_explore.gpu import launch
from ts_explore.gpu.errors import LaunchError
from ts_explore.model import Stage, TaskSet
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import get
from ts_explore.scenarios.attention import OVERLAP_FAULTS, AttentionFault, Persistence, async_reads
from ts_explore.kernels.attention_geometry import SMEM_LIMIT
from ts_explore.scenarios.knobs import ConfigError
from ts_explore.verification.verify import verify

SC = get("hopper_attention")

CONTROL_VALUES: list[dict[str, Any]] = [
    dict(tile_q=64, consumer_wgs=1), dict(tile_k=64), dict(tile_k=64, stages=4), dict(tile_k=160),
    dict(tile_k=160, seqlen_kv=500, causal=True, q_tile=2),
    dict(head_dim=64), dict(head_dim=64, stages=6), dict(consumer_wgs=1, tile_q=64),
    dict(pingpong=False), dict(overlap=False), dict(overlap=False, pingpong=False),
    dict(persistence=Persistence.STATIC, consumer_wgs=1, tile_q=64), dict(causal=True, q_tile=1),
    dict(seqlen_q=200, seqlen_kv=300), dict(batch=4, heads=8),
    dict(head_dim=64, tile_k=192), dict(head_dim=64, tile_k=256, causal=True, seqlen_kv=600, q_tile=2),
    dict(head_dim=64, tile_k=256, persistence=Persistence.STATIC),
    dict(head_dim=64, tile_q=192, consumer_wgs=3), dict(head_dim=64, tile_q=192, consumer_wgs=3, overlap=False),
    dict(head_dim=64, tile_q=192, consumer_wgs=3, causal=True, seqlen_kv=500, q_tile=1),
]

# what the default configs are: each proven SAFE by our checker (states, and TS's own BFS for comparison)
DEFAULTS: list[dict[str, Any]] = [dict(), dict(head_dim=64), dict(causal=True, q_tile=2), dict(overlap=False),
                                  dict(consumer_wgs=1, tile_q=64)]


def model(cfg: Any) -> TaskSet:
    return captured(SC, cfg)


@pytest.mark.parametrize("overrides", CONTROL_VALUES, ids=ident)
def test_every_control_value_records_draws_and_verifies(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    built = SC.build(cfg)
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    store = ["store"] if cfg.tma_store else []
    assert [t.name for t in ts.tasks] == ["load", *store, *(f"mma{c}" for c in range(cfg.consumer_wgs))]
    mma0 = schedule_graph(next(t for t in built.tasks if t.name == "mma0")).source
    assert "qk" in mma0 and "softmax" in mma0
    assert "k_smem" in dependency_graph(ts).source and "v_smem" in dependency_graph(ts).source
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert SCOPE_NOTE in verdict.scope.not_modelled
    assert any("K/V blocks of" in n for n in built.notes)


@pytest.mark.parametrize("overrides", DEFAULTS, ids=ident)
def test_the_default_configs_are_proven_safe_by_our_checker_in_fewer_states_than_ts_search(
        overrides: dict[str, Any]) -> None:
    built = SC.build(SC.config(**overrides))
    ours = verify(**built.verify_kwargs())
    theirs = verify(checker="ts", **built.verify_kwargs())
    assert ours.status.value == "safe" and "partial-order reduced" in ours.scope.engine, ours.summary()
    assert theirs.status.value == "safe"
    assert 0 < ours.scope.states < theirs.scope.states / 5, (ours.scope.states, theirs.scope.states)


def test_two_consumers_under_static_persistence_are_proven_for_every_number_of_work_tiles() -> None:
    """The tile-loop search closes on the whole set (the two consumer warpgroups included): SAFE for every count,
    and the unrolled searches of 3 and 4 tiles agree."""
    verdict = verify(**SC.build(SC.config(persistence=Persistence.STATIC)).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert verdict.scope.tiles_covered == "every number of work tiles (tile-loop search)"
    for tiles in (3, 4):
        assert verify(**SC.build(SC.config(persistence=Persistence.STATIC)).verify_kwargs(), tiles=tiles).ok


def _blocks_by_brute_force(sq: int, skv: int, tq: int, tk: int, m: int, causal: bool) -> int:
    """K/V blocks with at least one key some row of Q tile ``m`` sees, counted key by key."""
    rows = range(m * tq, min((m + 1) * tq, sq))
    seen = {key // tk for i in rows for key in range(skv) if not causal or key <= i + skv - sq}
    return len(range(max(seen) + 1)) if seen else 0


@settings(max_examples=25, deadline=None)
@given(sq=st.integers(1, 700), skv=st.integers(1, 700), tq=st.sampled_from([64, 128]),
       tk=st.sampled_from([64, 128]), causal=st.booleans(), pick=st.integers(0, 10 ** 6))
def test_each_task_loops_over_the_blocks_the_viewed_tile_needs(sq: int, skv: int, tq: int, tk: int, causal: bool,
                                                               pick: int) -> None:
    m = pick % -(-sq // tq)
    cfg = SC.config(seqlen_q=sq, seqlen_kv=skv, tile_q=tq, tile_k=tk, causal=causal, q_tile=m,
                    consumer_wgs=2 if tq == 128 else 1)
    expected = _blocks_by_brute_force(sq, skv, tq, tk, m, causal)
    assert cfg.kv_blocks == expected
    ts = model(cfg)
    for task in ts.tasks:  # the store task's loop runs once per tile: it stores O whatever the K/V blocks
        loop = task.schedule.domain_loop()
        assert loop is not None and loop.trip_count() == (1 if task.name == "store" else expected), (task.name, loop)
    verdict = verify(**SC.build(cfg).verify_kwargs())  # a tile with no K/V block (causal) does no work
    assert verdict.status.value == ("safe" if expected else "inconclusive"), verdict.summary()
    assert not verdict.findings


def test_a_causal_q_tile_that_sees_no_key_does_not_wait_for_a_turn_never_handed_over() -> None:
    cfg = SC.config(causal=True, seqlen_q=1024, seqlen_kv=256, q_tile=0)
    assert cfg.kv_blocks == 0 and cfg.pingponging
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert not verdict.deadlocks and "does no work" in verdict.summary()


def test_shared_memory_beyond_227_kib_is_refused_naming_the_bytes() -> None:
    with pytest.raises(ConfigError) as err:
        SC.check(SC.config(stages=3))  # head_dim 128, K/V block 128
    cfg = SC.config(stages=2)
    message = str(err.value)
    over = cfg.geometry().smem_bytes + 2 * cfg.geometry().kv_stage_bytes
    assert f"{over} B" in message and f"{SMEM_LIMIT} B" in message and "stages <= 2" in message
    SC.check(SC.config(stages=2))


def test_a_k_v_block_of_192_or_256_keys_is_refused_at_head_dim_128_naming_what_does_not_fit() -> None:
    with pytest.raises(ConfigError, match="not even two stages of 192 keys fit"):
        SC.check(SC.config(tile_k=192))  # 160 registers for S and O fit; two stages of 48 KiB K and V do not
    with pytest.raises(ConfigError, match="192 fp32 registers"):
        SC.check(SC.config(tile_k=256))
    for tile_k in (192, 256):
        SC.check(SC.config(tile_k=tile_k, head_dim=64))


@pytest.mark.parametrize("tile_k", [192, 256])
@pytest.mark.parametrize("fault", [f for f in AttentionFault if f is not AttentionFault.NONE], ids=lambda f: f.name)
def test_every_planted_fault_is_caught_with_the_wide_hd64_blocks(fault: AttentionFault, tile_k: int) -> None:
    cfg = SC.config(head_dim=64, tile_k=tile_k, fault=fault, overlap=fault in OVERLAP_FAULTS)
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()


@pytest.mark.parametrize("head_dim", [32, 96, 192, 256])
def test_head_dims_other_than_64_and_128_are_refused_with_the_reason(head_dim: int) -> None:
    with pytest.raises(ConfigError, match=f"head_dim {head_dim} is not laid out.*use head_dim 64 or 128"):
        SC.check(SC.config(head_dim=head_dim))


def test_a_k_stage_released_before_its_s_gemm_completes_is_a_race_ts_alone_calls_safe() -> None:
    cfg = SC.config(fault=AttentionFault.EARLY_K_RELEASE)
    built = SC.build(cfg)
    assert verify(**built.task_manager_args()).status.value == "safe"  # what TS alone cannot see
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "unsafe"
    report = check_async_reads(model(cfg), async_reads("k_smem"))
    first = report.findings[0]  # the counterexample: which release freed which stage under which read
    assert (first.task, first.iteration, first.read_iteration) == ("mma0", 0, 0)
    assert {f.task for f in report.findings} == {"mma0", "mma1"}
    assert check_async_reads(model(cfg), async_reads("v_smem")).safe
    assert check_async_reads(model(SC.default_config()), async_reads("k_smem")).safe


@pytest.mark.parametrize("fault", [f for f in AttentionFault if f is not AttentionFault.NONE], ids=lambda f: f.name)
def test_every_planted_fault_is_caught_with_the_160_key_block_too(fault: AttentionFault) -> None:
    """The 128x160 tile keeps the schedule's synchronisation: each planted fault stays a race or a deadlock."""
    verdict = verify(**SC.build(SC.config(tile_k=160, fault=fault, overlap=fault in OVERLAP_FAULTS)).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()
    assert verify(**SC.build(SC.config(tile_k=160)).verify_kwargs()).status.value == "safe"


def test_the_v_rule_catches_a_release_of_a_v_stage_without_waiting_for_its_p_v_gemm() -> None:
    ts = model(SC.default_config())
    assert check_async_reads(ts, async_reads("v_smem")).safe
    no_wait = dataclasses.replace(async_reads("v_smem"), drains=())  # as if wait_o did not wait for P·V
    report = check_async_reads(ts, no_wait)
    assert not report.safe and {f.task for f in report.findings} == {"mma0", "mma1"}
    assert "may still be reading it" in report.findings[0].message


def test_a_broken_ping_pong_order_deadlocks_the_two_consumers() -> None:
    verdict = verify(**SC.build(SC.config(fault=AttentionFault.PINGPONG_BROKEN)).verify_kwargs())
    assert verdict.status.value == "unsafe"
    dead = verdict.deadlocks[0]
    assert dead.interleaving is not None and set(dead.cycle) == {"mma0", "mma1"}
    assert {(b.task, b.resource) for b in dead.blocked} >= {("mma0", "turn10"), ("mma1", "turn01")}


@pytest.mark.parametrize("wgs", [1, 2])
def test_a_consumer_loop_one_block_longer_than_the_loaders_deadlocks(wgs: int) -> None:
    cfg = SC.config(fault=AttentionFault.CONSUMER_EXTRA, consumer_wgs=wgs, tile_q=64 * wgs)
    ts = model(cfg)
    assert ts.task(f"mma{wgs - 1}").schedule.domain_loop().trip_count() == cfg.kv_blocks + 1
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe"
    dead = verdict.deadlocks[0]
    assert dead.interleaving is not None
    assert any(b.task == f"mma{wgs - 1}" and b.resource == "k_smem" and b.stage is Stage.CONSUMER_WAIT
               for b in dead.blocked), dead.blocked


def test_the_kernel_compiles_for_sm90a_and_traces_the_recorded_schedule() -> None:
    from test_kernel_trace import same_shape
    from ts_explore.kernels import attention

    cfg = SC.default_config()
    seen: list[TaskSet] = []
    fn = attention.compile(SC, cfg, arch="sm_90a",
                           on_built=lambda b: seen.append(capture_task_set(b.tasks, b.resource_dependency_graph)))
    assert fn is not None and len(seen) == 1, "the kernel builds the scenario exactly once"
    # The kernel's K/V loop length is its work tile's (get_domain); the CPU records the viewed tile's count.
    gpu = seen[0]
    assert all(t.dynamic_domain == (t.name != "store") for t in gpu.tasks)  # the store task: once per tile
    same_shape(model(cfg), dataclasses.replace(gpu, tasks=tuple(dataclasses.replace(t, dynamic_domain=False)
                                                                 for t in gpu.tasks)))
    assert attention.features(cfg) == {"wgmma"}


def test_the_launch_plan_groups_q_tiles_by_the_kv_blocks_they_visit() -> None:
    from ts_explore.gpu.plan import launch_plan
    from ts_explore.model.plan import DeviceLimits

    h200 = DeviceLimits.h200()
    full = launch_plan("hopper_attention", (2, 4, 1000, 777, 128), device=h200)
    assert full.grid == (4, 2, 8) and full.threads == 384 and len(full.instances) == 1
    assert full.instances[0].iterations == 7 and full.instances[0].count == 64
    causal = launch_plan("hopper_attention", (1, 2, 512, 512, 128), device=h200, causal=True)
    assert [i.iterations for i in causal.instances] == [1, 2, 3, 4]
    # the grid starts the longest Q tiles first: Q tile 3 (4 blocks) on CTAs 0-1, Q tile 0 (1 block) on CTAs 6-7
    assert [i.ctas for i in causal.instances] == [(range(6, 8),), (range(4, 6),), (range(2, 4),), (range(0, 2),)]
    early = launch_plan("hopper_attention", (1, 1, 1024, 256, 128), device=h200, causal=True)
    assert early.instances[0].iterations is None and "no key visible" in early.instances[0].work
    static = launch_plan("hopper_attention", (8, 16, 1024, 1024, 128), device=h200, persistence="static",
                         consumer_wgs=1, tile_q=64)
    assert static.grid == (1, 1, 132) and sum(i.count for i in static.instances) == 132
    gate = launch_plan("hopper_attention", (2, 4, 1000, 777, 128), device=h200)
    assert gate.instances[0].view["extra"] == {"kv_blocks": 7, "seqlen_q": 1000, "seqlen_kv": 777}


def test_sizes_and_configs_the_kernel_does_not_take_are_refused_with_the_reason() -> None:
    from ts_explore.gpu.plan import launch_plan
    from ts_explore.kernels import attention
    from ts_explore.model.plan import DeviceLimits

    h200 = DeviceLimits.h200()
    with pytest.raises(LaunchError, match="compiled for head_dim 128"):
        launch_plan("hopper_attention", (1, 1, 128, 128, 64), device=h200)
    with pytest.raises(LaunchError, match="head_dim 96 is not laid out"):
        launch_plan("hopper_attention", (1, 1, 128, 128, 96), device=h200)
    with pytest.raises(LaunchError, match="five positive ints"):
        launch_plan("hopper_attention", (1, 128, 128, 128), device=h200)
    assert attention.launch_refusal(SC.default_config()) is None
    wide = SC.config(consumer_wgs=1, tile_q=128, tile_k=64, head_dim=64)
    assert "64 rows" in attention.launch_refusal(wide)
    assert "persistence='none' with causal" in attention.launch_refusal(SC.config(persistence=Persistence.STATIC,
                                                                                      causal=True))
    with pytest.raises(ValueError, match="64 rows"):
        attention.compile(SC, wide, arch="sm_90a")


@pytest.mark.soak  # a second kernel compile (about 10 s): beyond the default tier's budget
def test_the_traced_kernel_emits_every_drawn_step_with_its_id() -> None:
    """``launch(..., trace=True)`` compiles an instrumented build; every step the diagrams draw writes its uid."""
    from test_timeline_kernel import emitted
    from ts_explore.model.timeline import TraceSpec

    cfg = SC.config(overlap=False)
    want = {(t.name, s.uid) for t in model(cfg).tasks for s in t.schedule.steps()}
    assert emitted("hopper_attention", cfg, TraceSpec()) == want


def test_three_consumer_warpgroups_take_turns_in_a_ring_proven_and_a_broken_ring_deadlocks() -> None:
    """192-row Q tiles at head_dim 64: mma0 hands the turn to mma1 (turn01), mma1 to mma2 (turn12), mma2 back to
    mma0 (turn20); each runs with 160 registers. The ring is proven; mma0 waiting for the turn before its first
    block too (nobody hands first) is a deadlock with its cycle; head_dim 128 does not fit the registers."""
    cfg = SC.config(head_dim=64, tile_q=192, consumer_wgs=3)
    built = SC.build(cfg)
    tasks = {t.name: t for t in built.tasks}
    assert [t.name for t in built.tasks] == ["load", "store", "mma0", "mma1", "mma2"]
    assert all(tasks[f"mma{c}"].num_registers == 160 for c in range(3))
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    for c, (take, hand) in enumerate((("turn20", "turn01"), ("turn01", "turn12"), ("turn12", "turn20"))):
        mine = next(t for t in ts.tasks if t.name == f"mma{c}")
        assert take in mine.src and hand in mine.dst, (c, mine.src, mine.dst)
    assert any("turn01, turn12, turn20" in n for n in built.notes), built.notes
    assert verify(**built.verify_kwargs()).status.value == "safe"
    broken = verify(**SC.build(SC.config(head_dim=64, tile_q=192, consumer_wgs=3,
                                         fault=AttentionFault.PINGPONG_BROKEN)).verify_kwargs())
    assert broken.status.value == "unsafe" and broken.deadlocks, broken.summary()
    with pytest.raises(ConfigError, match="96 that leave room"):
        SC.check(SC.config(tile_q=192, consumer_wgs=3))
