"""hopper_attention with intra-warpgroup overlap (``overlap=True``) on the CPU: the schedule keeps each WGMMA group
and its wait inside one guarded block, our checker proves it SAFE on the shapes the kernel meets (first and last
block, one block, tails, the causal diagonal, static persistence, one or two consumers), and the two planted
faults of its synchronisation (V[j-1] released before the lagged P·V completes; the wait that leaves one group
running placed before that P·V is issued) are races the async-read rule reports with a counterexample.

Why the blocks must be self-contained, and what ptxas says of the kernel, is in
``tests/unit/test_attention_overlap_ptxas.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from scenario_support import captured, ident
from ts_explore.analysis.async_reads import AsyncReads, check_async_reads
from ts_explore.model import Block, BlockKind, Step
from ts_explore.scenarios import get
from ts_explore.scenarios.attention import OVERLAP_FAULTS, AttentionFault, Persistence, async_reads
from ts_explore.scenarios.knobs import ConfigError
from ts_explore.verification.verify import verify

SC = get("hopper_attention")
ISSUES = {"qk", "pv"}  # the steps that commit a WGMMA group
WAITS = {"wait_s": 0, "wait_s_keep_pv": 1, "wait_o": 0}  # the steps that wait, and how many groups they leave

# the shapes a launch meets: K/V loops of several blocks, exactly one, a tail, the causal diagonal (a Q tile
# whose last block is masked), seqlen_q != seqlen_kv, static persistence, one consumer, no ping-pong, hd64
SHAPES: list[dict[str, Any]] = [
    dict(), dict(head_dim=64), dict(seqlen_kv=128), dict(seqlen_q=200, seqlen_kv=300),
    dict(causal=True, q_tile=1), dict(causal=True, seqlen_q=500, seqlen_kv=300, q_tile=3),
    dict(persistence=Persistence.STATIC), dict(persistence=Persistence.STATIC, head_dim=64, seqlen_kv=128),
    dict(pingpong=False), dict(consumer_wgs=1, tile_q=64), dict(head_dim=64, tile_k=192),
]


def loop_blocks(cfg: Any, task: str = "mma0") -> tuple[list[Step], list[Block]]:
    """The consumer's domain loop: the steps it runs on every iteration, and its guarded blocks."""
    loop = captured(SC, cfg).task(task).schedule.domain_loop()
    always = [n for n in loop.body if isinstance(n, Step)]
    return always, [n for n in loop.body if isinstance(n, Block)]


def groups_left(steps: list[Step]) -> int:
    """WGMMA groups a straight run of steps leaves in flight, starting with none (-1: a wait reads an empty queue
    where it must complete a group, or a group's registers are read before it completes)."""
    queue = 0
    for s in steps:
        if s.label in ISSUES:
            queue += 1
        elif s.label in WAITS:
            if queue <= WAITS[s.label] and s.label == "wait_s_keep_pv":
                return -1  # nothing newer than S to leave running: S itself would stay in flight
            queue = min(queue, WAITS[s.label])
    return queue


@pytest.mark.parametrize("overrides", SHAPES, ids=ident)
def test_every_guarded_block_of_the_overlapped_loop_waits_for_the_groups_it_issues(
        overrides: dict[str, Any]) -> None:
    """What ptxas needs to keep WGMMAs asynchronous: no group issued on one path and waited for on another. The
    loop's unguarded steps issue and wait for nothing; each guarded block ends with no group in flight."""
    cfg = SC.config(overlap=True, **overrides)
    for task in [f"mma{c}" for c in range(cfg.consumer_wgs)]:
        always, blocks = loop_blocks(cfg, task)
        assert not [s.label for s in always if s.label in ISSUES | set(WAITS)], task
        kinds = [b.kind for b in blocks if any(s.label in ISSUES for s in b.body if isinstance(s, Step))]
        assert kinds == [BlockKind.FIRST_ITER, BlockKind.EVERY, BlockKind.LAST_ITER], (task, kinds)
        for block in blocks:
            steps = [s for s in block.body if isinstance(s, Step)]
            assert groups_left(steps) == 0, (task, block.kind, [s.label for s in steps])


def test_the_later_blocks_issue_the_lagged_pv_after_s_and_run_the_softmax_before_waiting_for_it() -> None:
    _, blocks = loop_blocks(SC.config(overlap=True))
    later = [s.label for s in blocks[[b.kind for b in blocks].index(BlockKind.EVERY)].body if isinstance(s, Step)]
    order = [label for label in later if label in {"qk", "pv", "wait_s_keep_pv", "softmax_unpacked", "wait_o", "pack"}]
    assert order == ["qk", "pv", "wait_s_keep_pv", "softmax_unpacked", "wait_o", "pack"]


@pytest.mark.parametrize("overrides", SHAPES, ids=ident)
def test_the_overlapped_schedule_is_proven_safe_by_our_checker(overrides: dict[str, Any]) -> None:
    built = SC.build(SC.config(overlap=True, **overrides))
    verdict = verify(**built.verify_kwargs())
    assert verdict.status.value == "safe" and "partial-order reduced" in verdict.scope.engine, verdict.summary()
    for resource in ("k_smem", "v_smem"):
        assert check_async_reads(captured(SC, SC.config(overlap=True, **overrides)), async_reads(resource)).safe


def test_overlap_under_static_persistence_is_proven_for_every_number_of_work_tiles() -> None:
    verdict = verify(**SC.build(SC.config(overlap=True, persistence=Persistence.STATIC)).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert verdict.scope.tiles_covered == "every number of work tiles (tile-loop search)"


def test_the_default_overlapped_config_takes_fewer_states_than_ts_search() -> None:
    built = SC.build(SC.config(overlap=True))
    ours, theirs = verify(**built.verify_kwargs()), verify(checker="ts", **built.verify_kwargs())
    assert ours.status.value == theirs.status.value == "safe"
    assert 0 < ours.scope.states < theirs.scope.states / 5, (ours.scope.states, theirs.scope.states)


def test_a_v_stage_released_before_the_lagged_pv_completes_is_a_race_ts_alone_calls_safe() -> None:
    cfg = SC.config(overlap=True, fault=AttentionFault.OVERLAP_EARLY_V_RELEASE)
    built = SC.build(cfg)
    assert verify(**built.task_manager_args()).status.value == "safe"  # TS does not see WGMMA's async reads
    assert verify(**built.verify_kwargs()).status.value == "unsafe"
    report = check_async_reads(captured(SC, cfg), async_reads("v_smem"))
    first = report.findings[0]  # V[0], read by the P·V issued in iteration 1, freed in that iteration
    assert (first.task, first.iteration, first.read_iteration) == ("mma0", 1, 1), first
    assert {f.task for f in report.findings} == {"mma0", "mma1"}
    assert check_async_reads(captured(SC, cfg), async_reads("k_smem")).safe


def test_waiting_down_to_one_group_before_the_lagged_pv_is_issued_leaves_s_reading_k_when_it_is_released() -> None:
    cfg = SC.config(overlap=True, fault=AttentionFault.OVERLAP_S_WAIT_FIRST)
    assert verify(**SC.build(cfg).verify_kwargs()).status.value == "unsafe"
    report = check_async_reads(captured(SC, cfg), async_reads("k_smem"))
    first = report.findings[0]  # K[1]: the first block waits for all groups, the second leaves S in flight
    assert (first.task, first.iteration, first.read_iteration) == ("mma0", 1, 1), first
    assert check_async_reads(captured(SC, cfg), async_reads("v_smem")).safe


@pytest.mark.parametrize("fault", OVERLAP_FAULTS, ids=lambda f: f.name)
def test_the_overlap_faults_need_overlap_on_and_say_so(fault: AttentionFault) -> None:
    with pytest.raises(ConfigError, match="overlap"):
        SC.check(SC.config(fault=fault, overlap=False))


@pytest.mark.parametrize("fault", OVERLAP_FAULTS, ids=lambda f: f.name)
@pytest.mark.parametrize("overrides", [dict(head_dim=64), dict(causal=True, q_tile=2), dict(pingpong=False),
                                       dict(consumer_wgs=1, tile_q=64), dict(persistence=Persistence.STATIC)],
                         ids=ident)
def test_the_overlap_faults_are_caught_in_every_shape(fault: AttentionFault, overrides: dict[str, Any]) -> None:
    verdict = verify(**SC.build(SC.config(overlap=True, fault=fault, **overrides)).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()


def test_a_wait_that_leaves_the_newest_group_completes_reads_only_behind_a_newer_group_of_the_other_ring() -> None:
    """The async-read replay counts one queue of groups: ``drains_but_newest`` completes this ring's reads only
    where another ring's group (``other_groups``) was committed after them."""
    from dataclasses import replace

    ts = captured(SC, SC.config(overlap=True))
    spec = async_reads("k_smem")
    assert check_async_reads(ts, spec).safe
    alone = replace(spec, other_groups=())  # as if the P·V committed no group: S would be the newest
    found = check_async_reads(ts, alone)
    assert not found.safe and {f.iteration for f in found.findings} == {1, 2}
    assert not check_async_reads(ts, AsyncReads(resource="k_smem", issue="qk", in_flight=1)).safe


@pytest.mark.parametrize("overrides", [dict(), dict(pingpong=False), dict(consumer_wgs=1, tile_q=64),
                                       dict(persistence=Persistence.STATIC)], ids=ident)
def test_every_value_the_epilogue_reads_is_written_in_every_tile_with_a_block(overrides: dict[str, Any]) -> None:
    """A route names one writer, and TS copies the value into the reader's slot only when that writer runs. A
    step after the K/V loop must therefore read values whose writer runs on the loop's last iteration whatever
    the loop's length: unguarded in the loop, or in its ``last_iter`` block. The epilogue once read the row
    statistics from the later blocks' softmax, which a tile of one K/V block never runs: O came out 0 and the
    LSE -inf there (seen on an H100)."""
    for task in ("mma0", "mma1") if overrides.get("consumer_wgs", 2) == 2 else ("mma0",):
        tree = captured(SC, SC.config(overlap=True, **overrides)).task(task).schedule
        loop = tree.domain_loop()
        last_ran = {n.uid for n in loop.body if isinstance(n, Step)}
        last_ran |= {n.uid for b in loop.body if isinstance(b, Block) and b.kind is BlockKind.LAST_ITER
                     for n in b.body if isinstance(n, Step)}
        in_loop = {n.uid for n in loop.body if isinstance(n, Step)}
        in_loop |= {n.uid for b in loop.body if isinstance(b, Block) for n in b.body if isinstance(n, Step)}
        after = {s.uid for s in tree.steps()[max(tree.steps().index(tree.step(u)) for u in in_loop) + 1:]}
        for route in tree.routes:
            if route.destination in after and route.source in in_loop:
                assert route.source in last_ran, (
                    f"{task}: {tree.step(route.destination).title} reads {route.variable!r} from "
                    f"{tree.step(route.source).title}, which the loop's last iteration may skip")
