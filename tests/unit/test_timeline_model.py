"""Timelines without a GPU: decoding the kernel's buffers, the Chrome trace round trip, the step table,
the step-by-step check against the schedule, and hang reports."""

from __future__ import annotations

import doctest
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ts_explore
from ts_explore.analysis import timeline as analysis
from ts_explore.analysis.timeline import expected_steps, measured_tiles, step_table
from ts_explore.gpu import trace_run
from ts_explore.gpu.plan import plans_for
from ts_explore.gpu.trace_run import Layout, compare, decode_events, decode_progress, schedule_for, trace_spec
from ts_explore.kernels.contract import BuildContext
from ts_explore.kernels.trace import ENTERED, EVENT_WORDS, LEFT, PROGRESS_WORDS
from ts_explore.model import QueueKind, Section, Stage
from ts_explore.model import hang
from ts_explore.model import timeline as model
from ts_explore.model.plan import DeviceLimits
from ts_explore.model.hang import HangReport, PredictedBlock
from ts_explore.model.timeline import TraceSpec
from ts_explore.model.trace_file import load_trace
from ts_explore.reader import capture_task_set
from ts_explore.scenarios import SkipRule, get

H200 = DeviceLimits.h200()


def _int64_words(value: int) -> np.ndarray:
    return np.array([value], dtype=np.int64).view(np.int32)


def synthetic_run(name: str, size: int, spec: TraceSpec, seed: int = 0, start: int = 0,
                  **overrides: Any) -> tuple[Any, ...]:
    """What an instrumented kernel would write if every warp ran exactly its schedule (random durations).

    Region ``r`` of the buffer holds CTA ``start + r``, as the kernel writes it for a placed spec.
    """
    rng = random.Random(seed)
    sc = get(name)
    cfg = sc.config(**overrides)
    plan = plans_for(sc, cfg, (size,), H200)[0]
    layout = Layout.of(spec, plan.ctas, plan.threads)
    raw = np.zeros((layout.traced_ctas, layout.warps, layout.capacity + 1, EVENT_WORDS), dtype=np.int32)
    task_set = None
    stages = model.WORK_STAGES if spec.stages == "work" else None
    for region in range(layout.traced_ctas):
        cta = start + region
        for warp in range(layout.warps):
            found = schedule_for(sc, cfg, plan, cta, warp)
            if found is None:
                continue
            tree, trips = found
            tiles = [(cta, False)]
            if tree.work_tile_loop() is not None and name == "persistent_copy":
                total = cfg.total_tiles(size // cfg.tile)
                tiles = [(t, cfg.skipped(t, size // cfg.tile)) for t in range(cta, total, plan.ctas)]
            elif tree.work_tile_loop() is not None:  # varlen: one tile per segment, strided over the CTAs
                from ts_explore.kernels.varlen import segment_lengths

                tiles = [(t, False) for t in range(cta, len(segment_lengths(cfg, size)), plan.ctas)]
            t = 2**32 - 3_000 + rng.randrange(100)  # the timer's low word wraps during the run
            for n, e in enumerate(expected_steps(tree, trips, tiles=tiles, stages=stages)):
                # As the kernel writes it: events past the capacity all land in the last slot.
                rec = raw[region, warp, min(n, layout.capacity)]
                length = rng.randrange(5, 400)
                # The loop offset, first offset and step (zeros outside the loop); the host divides.
                first, stride = (cta, plan.ctas) if e.iteration is not None else (0, 0)
                offset = first + stride * e.iteration if e.iteration is not None else 0
                low = np.array([t, t + length], dtype=np.int64).astype(np.uint32).view(np.int32)  # timer low words
                rec[:] = (e.step + 1, low[0], offset, cta if e.tile is None else e.tile, low[1], first, stride, n + 1)
                t += length + rng.randrange(0, 30)
    built = sc.build(cfg, BuildContext.for_instance(plan.instances[0].view))
    task_set = capture_task_set(built.tasks, built.resource_dependency_graph)
    return sc, cfg, plan, raw, task_set


CASES = [
    ("pipelined_copy", 1 << 18, {}),
    ("pipelined_copy", 1 << 18, dict(stages=2, ctas=3)),
    ("grid_stride_copy", 1 << 16, dict(ctas=4, per_thread=2)),
    ("persistent_copy", 24 * 8192, dict(queue=QueueKind.STATIC, skip=SkipRule.MASK, mask=(0, 5), overlaunch=3,
                                        ctas=4)),
    ("persistent_copy", 8 * 8192, dict(queue=QueueKind.NONE, overlaunch=0)),
    ("guards_demo", 64, {}),
    ("varlen_copy", 1000, dict(ctas=3)),
    ("varlen_copy", 1000, dict(dynamic=False, queue=QueueKind.NONE)),
]


@pytest.mark.parametrize("name,size,overrides", CASES)
@pytest.mark.parametrize("stages", ["all", "work"])
def test_a_run_that_follows_the_schedule_decodes_and_checks_clean(name: str, size: int, overrides: dict,
                                                                   stages: str) -> None:
    spec = TraceSpec(stages=stages)
    sc, cfg, plan, raw, task_set = synthetic_run(name, size, spec, **overrides)
    timeline = decode_events(raw, task_set, scenario=name, spec=spec)
    assert timeline.events and not timeline.lost
    assert min(e.start_ns for e in timeline.events) == 0, "times are relative to the first step"
    alignment = compare(sc, cfg, plan, timeline)
    assert alignment.ok, alignment.summary()
    assert len(alignment.lanes) == len(timeline.warps())
    if stages == "work":
        assert {e.stage for e in timeline.events} <= model.WORK_STAGES


def test_stamps_past_the_timers_32_bit_wrap_stay_in_order() -> None:
    """The kernel keeps the global timer's low word; a run that crosses 2**32 ns decodes without a jump."""
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec, seed=2)
    low = raw[0, 0, :-1, 1].astype(np.int64) & 0xFFFFFFFF
    used = raw[0, 0, :-1, 0] != 0
    assert low[used].max() > 2**32 - 4_000 and low[used].min() < 4_000, "the synthetic run must cross the wrap"
    lane = decode_events(raw, task_set, scenario=sc.name, spec=spec).lane(0, 0)
    starts = [e.start_ns for e in lane]
    assert starts == sorted(starts) and starts[-1] - starts[0] < 100_000
    assert all(0 <= e.end_ns - e.start_ns < 400 for e in lane)


def test_a_wrong_step_is_named_with_its_place() -> None:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec)
    raw[0, 4, 3, 0], raw[0, 4, 4, 0] = raw[0, 4, 4, 0], raw[0, 4, 3, 0]  # swap two load steps
    alignment = compare(sc, cfg, plan, decode_events(raw, task_set, scenario=sc.name, spec=spec), cta=0)
    (bad,) = [lane for lane in alignment.lanes if not lane.ok]
    assert (bad.task, bad.warp, bad.mismatch) == ("load", 4, 3)
    assert "expected smem.load_tile (iteration 0), measured smem.commit" in bad.describe()


def test_a_missing_iteration_is_caught() -> None:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec)
    used = int((raw[1, 0, :-1, 0] != 0).sum())
    raw[1, 0, used - 4:used] = 0  # store warp 0 of CTA 1 lost its last iteration
    alignment = compare(sc, cfg, plan, decode_events(raw, task_set, scenario=sc.name, spec=spec), cta=1)
    assert not alignment.ok and "nothing" in alignment.summary()


def test_persistent_tiles_and_skips_come_back_from_the_events() -> None:
    spec = TraceSpec(ctas=4)
    overrides = dict(queue=QueueKind.STATIC, skip=SkipRule.MASK, mask=(0, 5), overlaunch=3, ctas=4)
    sc, cfg, plan, raw, task_set = synthetic_run("persistent_copy", 24 * 8192, spec, **overrides)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    for cta in range(4):
        tree, _ = schedule_for(sc, cfg, plan, cta, 0)
        assert measured_tiles(timeline.lane(cta, 0), tree) == [(t, cfg.skipped(t, 24)) for t in range(cta, 27, 4)]


def test_capacity_overflow_is_counted_not_hidden() -> None:
    spec = TraceSpec(capacity=8)
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    produced = int(raw[0, 0, 8, 7])  # the overflow slot keeps n + 1 of the warp's last event
    assert produced > 8 and (0, 0, produced - 8) in timeline.lost
    assert "events lost (capacity 8 per warp)" in timeline.summary()
    assert len(timeline.lane(0, 0)) == 8


def test_chrome_trace_round_trip(tmp_path: Path) -> None:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec, seed=3)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec, device="NVIDIA H200", kernel_ns=12345)
    path = timeline.save(tmp_path / "t.json")
    doc = json.loads(path.read_text())
    complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(timeline.events)
    assert {"name", "ts", "dur", "pid", "tid", "args"} <= set(complete[0])
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "warp 4 · load" in names
    assert ts_explore.load_trace(path) == timeline == load_trace(str(path))


def test_loading_something_else_says_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="Timeline.save"):
        load_trace(tmp_path / "x.json")
    (tmp_path / "y.json").write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        load_trace(tmp_path / "y.json")
    with pytest.raises(FileNotFoundError, match="timeline.save"):
        load_trace(tmp_path / "missing.json")


def test_step_table_sums_each_step_once() -> None:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec, seed=5)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    table = step_table(timeline)
    assert sum(r.count for r in table.rows) == len(timeline.events)
    assert sum(r.total_ns for r in table.rows) == sum(e.duration_ns for e in timeline.events)
    waits = [r for r in table.rows if r.stage in (Stage.CONSUMER_WAIT, Stage.PRODUCER_ACQUIRE)]
    assert waits and all(r.blocked_ns == r.total_ns for r in waits)
    assert all(r.blocked_ns == 0 for r in table.rows if r.stage is Stage.PRODUCER_WORK)
    assert "smem.wait" in table.text()


def _progress(layout: Layout, cells: dict[tuple[int, int], tuple[int, int, int, int, int]]) -> np.ndarray:
    raw = np.zeros((layout.grid, layout.warps, PROGRESS_WORDS), dtype=np.int32)
    for (cta, warp), (uid, iteration, tile, state, stamp) in cells.items():
        raw[cta, warp, :4] = (uid + 1, iteration, tile, state)
        raw[cta, warp, 4:6] = _int64_words(stamp)
    return raw


def test_progress_names_each_warps_last_blocking_step() -> None:
    sc = get("pipelined_copy")
    cfg = sc.config(fault="consumer_extra", elements=1 << 17)
    built = sc.build(cfg)
    task_set = capture_task_set(built.tasks, built.resource_dependency_graph)
    layout = Layout.of(TraceSpec(stages="none"), 2, cfg.threads)
    wait = next(s.uid for s in task_set.task("store").schedule.steps() if s.stage is Stage.CONSUMER_WAIT)
    acquire = next(s.uid for s in task_set.task("load").schedule.steps() if s.stage is Stage.PRODUCER_ACQUIRE)
    cells = {(c, w): (wait, 8, c, ENTERED, 1000 + w) for c in range(2) for w in range(4)}
    cells[(0, 4)] = (acquire, 7, 0, LEFT, 900)
    warps = decode_progress(_progress(layout, cells), task_set)
    assert len(warps) == 10
    stuck = [w for w in warps if w.stuck]
    assert {(w.task, w.label, w.iteration) for w in stuck} == {("store", "smem.wait", 8)}
    load = {w.cta: w for w in warps if w.task == "load"}
    assert load[0].state == hang.LEFT and load[0].label == "smem.acquire" and load[1].state == ""
    report = HangReport("pipelined_copy", 10, warps, (PredictedBlock("store", "smem.wait", wait, 8),))
    text = report.describe()
    assert "predicted: store blocked in smem.wait, iteration 8 · measured: warp 0 stopped in smem.wait, " \
           "iteration 8" in text
    assert "no blocking step reached" in text and "past smem.acquire, iteration 7" in text
    assert "  store warp 0, CTAs 0-1: stopped in smem.wait, iteration 8, tiles 0-1" in report.lines()
    from ts_explore.analysis.timeline_hang import agrees

    assert agrees(report) == report.predicted


def test_the_verifier_predicts_the_blocked_steps_of_each_deadlocking_fault() -> None:
    from ts_explore.analysis.timeline_hang import predicted_blocks

    sc = get("pipelined_copy")
    for fault, expected in (("consumer_extra", {("store", "smem.wait", 8)}),
                            ("no_release", {("store", "smem.wait", 4), ("load", "smem.acquire", 4)})):
        built = sc.build(sc.config(fault=fault, elements=1 << 17))
        blocks = predicted_blocks(ts_explore.verify(**built.verify_kwargs()))
        assert {(b.task, b.label, b.iteration) for b in blocks} == expected, fault


def test_trace_spec_from_launch_arguments() -> None:
    assert trace_spec(False) is None and trace_spec(None) is None
    assert trace_spec(True) == TraceSpec()
    assert trace_spec("work").stages == "work"
    forced = trace_spec(False, forced=True)
    assert forced.progress and not forced.events and forced.ctas == 0
    assert trace_spec({"stages": "all", "ctas": 0}).ctas == 0
    from ts_explore.gpu import LaunchError

    with pytest.raises(LaunchError, match="trace='work'"):
        trace_spec("everything")
    with pytest.raises(LaunchError, match="TraceSpec"):
        trace_spec({"stage": "all"})
    with pytest.raises(ValueError, match="one of"):
        TraceSpec(stages="some")


def test_expected_steps_fire_guards_like_ts() -> None:
    sc = get("guards_demo")
    cfg = sc.config(start=1, end=9, step=2)
    built = sc.build(cfg)
    tree = capture_task_set(built.tasks, built.resource_dependency_graph).tasks[0].schedule
    trips = tree.domain_loop().trip_count()
    steps = expected_steps(tree, trips)
    firsts = {e.iteration for e in steps if e.label.endswith("tag_first")}
    lasts = {e.iteration for e in steps if e.label.endswith("tag_last")}
    assert firsts == {0} and lasts == {trips - 1}
    assert any(e.optional for e in steps), "when_true blocks depend on run-time values"


def test_doctests() -> None:
    for module in (model, analysis, trace_run):  # hang has no examples; its text is tested above
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_sections_of_decoded_events_carry_iterations_only_in_the_loop() -> None:
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("persistent_copy", 8 * 8192, spec, queue=QueueKind.STATIC,
                                                 overlaunch=0, ctas=2)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    assert all((e.iteration is None) == (e.section is not Section.LOOP) for e in timeline.events)
    assert {e.section for e in timeline.events} == {Section.LOOP, Section.TAIL}


RESULTS = Path(__file__).parents[2] / "benchmarks" / "results"
COMMITTED = [
    ("pipelined_copy", dict(ctas=132, stages=4, tile=4096)),
    ("persistent_copy", dict(queue=QueueKind.STATIC, ctas=132, overlaunch=2)),
]


@pytest.mark.parametrize("name,overrides", COMMITTED)
def test_committed_h200_traces_follow_their_schedules(name: str, overrides: dict) -> None:
    """The traces recorded on an H200 (scripts/trace_examples.py) still line up with the drawn schedules."""
    timeline = load_trace(RESULTS / f"{name}.h200.trace.json")
    assert timeline.device.startswith("NVIDIA H200") and len(timeline.events) >= 50 and not timeline.lost
    sc = get(name)
    cfg = sc.config(**overrides)
    plan = plans_for(sc, cfg, (1 << 22,), H200)[0]
    alignment = compare(sc, cfg, plan, timeline)
    assert alignment.ok and len(alignment.lanes) == 2 * plan.threads // 32, alignment.summary()
    assert all(e.start_ns % 32 == 0 for e in timeline.events), "the H200's global timer ticks in 32 ns"


def test_the_committed_pipelined_trace_has_both_tasks() -> None:
    timeline = load_trace(RESULTS / "pipelined_copy.h200.trace.json")
    assert {t.name for t in timeline.tasks} == {"store", "load"} == {e.task for e in timeline.events}
    hang = (RESULTS / "hang_diagnoses.h200.txt").read_text()
    assert "predicted: load blocked in smem.acquire, iteration 4 · measured: warp 4 stopped in smem.acquire, " \
           "iteration 4" in hang


def test_an_event_that_began_but_never_ended_is_not_decoded() -> None:
    """The kernel writes an event in two halves; a slot with only the first half is no step that ran."""
    spec = TraceSpec()
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 1 << 18, spec, seed=4)
    whole = len(decode_events(raw, task_set, scenario=sc.name, spec=spec).lane(0, 4))
    raw[0, 4, 2, 4:] = 0  # event 2 of load warp 4: no end time, no sequence number
    lane = decode_events(raw, task_set, scenario=sc.name, spec=spec).lane(0, 4)
    assert len(lane) == whole - 1
