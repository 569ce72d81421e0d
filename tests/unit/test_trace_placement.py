"""Which CTAs a default trace records: ones whose instrumented steps do not set the kernel's end."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ts_explore.gpu import launch_plan
from ts_explore.gpu.trace_run import decode_events
from ts_explore.model.plan import DeviceLimits, Instance, LaunchPlan
from ts_explore.model.timeline import TraceSpec, quiet_start
from ts_explore.model.trace_file import load_trace

H200 = DeviceLimits.h200()


def test_a_single_wave_gemm_traces_two_ctas_that_carry_three_tiles_not_four() -> None:
    # 32 x 16 tiles of 128 x 256 over 132 persistent CTAs: CTAs 0-115 get 4 tiles, 116-131 get 3.
    plan = launch_plan("hopper_gemm", (4096, 4096, 4096), device=H200)
    start = TraceSpec(stages="work").placed(plan).start
    assert start == 130
    tiles = {c: i.iterations for i in plan.instances for span in i.ctas for c in span}
    assert (tiles[0], tiles[1], tiles[130], tiles[131]) == (4, 4, 3, 3)


def test_a_grid_of_several_waves_keeps_ctas_0_and_1() -> None:
    plan = launch_plan("guards_demo", 1 << 20, device=H200)
    assert plan.ctas > H200.sms * H200.max_ctas_per_sm
    assert TraceSpec(stages="work").placed(plan).start == 0


def test_a_given_start_stays_and_every_cta_tracing_starts_at_0() -> None:
    plan = launch_plan("pipelined_copy", 1 << 26, device=H200, ctas=0)
    assert TraceSpec(start=0).placed(plan).start == 0
    assert TraceSpec(start=7).placed(plan).start == 7
    assert TraceSpec(ctas=0).placed(plan).start == 0
    assert TraceSpec().placed(plan).start == plan.ctas - 2  # 16384 tiles over 396 CTAs: the last carry 41, not 42
    with pytest.raises(ValueError, match="start=-1"):
        TraceSpec(start=-1)


def _plan(units: list[int], threads: int = 128) -> LaunchPlan:
    instances = tuple(Instance(ctas=(range(c, c + 1),), view={"block": c}, work=f"{u} tiles", iterations=u)
                      for c, u in enumerate(units))
    return LaunchPlan(kernel="k", size=sum(units), grid=(len(units), 1, 1), threads=threads, smem_bytes=0,
                      device=H200, instances=instances)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=60), st.integers(min_value=1, max_value=4))
def test_the_window_chosen_has_work_everywhere_and_no_more_than_any_other_such_window(units: list[int],
                                                                                         ctas: int) -> None:
    start = quiet_start(_plan(units), ctas)
    windows = [units[s:s + ctas] for s in range(len(units) - ctas + 1) if min(units[s:s + ctas]) > 0]
    if ctas >= len(units) or not windows:
        assert start == 0
        return
    chosen = units[start:start + ctas]
    assert len(chosen) == ctas and min(chosen) > 0
    assert max(chosen) == min(max(w) for w in windows)
    assert all(max(units[s:s + ctas]) > max(chosen) or min(units[s:s + ctas]) == 0
               for s in range(start + 1, len(units) - ctas + 1))  # the last of the best windows


def test_ctas_whose_work_is_not_one_number_each_keep_ctas_0_and_1() -> None:
    plan = _plan([3, 3, 2, 2])
    shared = replace(plan, instances=plan.instances + (Instance(ctas=(range(0, 4),), view={}, work="?"),))
    assert quiet_start(plan, 2) == 2
    assert quiet_start(shared, 2) == 0


def test_a_trace_of_later_ctas_decodes_as_those_ctas_and_checks_clean_against_their_schedule(tmp_path) -> None:
    from test_timeline_model import synthetic_run

    from ts_explore.gpu.trace_run import compare

    spec = TraceSpec(stages="all", start=2)
    sc, cfg, plan, raw, task_set = synthetic_run("pipelined_copy", 5 * 4096, spec, start=2, ctas=4, stages=2)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    assert {cta for cta, _ in timeline.warps()} == {2, 3}
    assert "warps of CTAs 2-3 over" in timeline.summary()
    alignment = compare(sc, cfg, plan, timeline)
    assert alignment.ok, alignment.summary()
    assert load_trace(timeline.save(tmp_path / "t.trace.json")).spec.start == 2


def test_a_trace_that_splits_offers_builds_capped_at_the_plain_kernels_registers_and_at_255() -> None:
    plan = launch_plan("pipelined_copy", 1 << 26, device=H200, registers=40, ctas=0)
    spec = TraceSpec(stages="work").placed(plan)
    assert spec.registers is None  # placing picks CTAs, not a cap
    caps = spec.alternatives(plan)
    assert [c.registers for c in caps] == [40, 255] and {replace(c, registers=None) for c in caps} == {spec}
    assert [c.registers for c in spec.alternatives(replace(plan, registers=255))] == [255]
    assert TraceSpec(registers=64).alternatives(plan) == ()  # a cap given is the user's
    # Every CTA records, or every CTA writes progress: no plain branch to protect.
    assert TraceSpec(ctas=0).alternatives(plan) == ()
    assert TraceSpec(progress=True).alternatives(plan) == ()
    # A plan made without a compiled kernel does not know the count.
    assert spec.alternatives(replace(plan, registers=None)) == ()
    with pytest.raises(ValueError, match="registers=0"):
        TraceSpec(registers=0)
    with pytest.raises(ValueError, match="registers=256"):
        TraceSpec(registers=256)


def test_a_saved_trace_keeps_its_register_cap(tmp_path) -> None:
    from test_timeline_model import synthetic_run

    spec = TraceSpec(stages="all", start=2, registers=40)
    sc, _, _, raw, task_set = synthetic_run("pipelined_copy", 5 * 4096, spec, start=2, ctas=4, stages=2)
    timeline = decode_events(raw, task_set, scenario=sc.name, spec=spec)
    assert load_trace(timeline.save(tmp_path / "t.trace.json")).spec == spec
