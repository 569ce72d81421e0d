"""The scenario catalog: every scenario builds and verifies, knobs sweep, bad combos explain themselves."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import warnings
from dataclasses import dataclass

import pytest
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ts_explore.reader import capture_task_set
from ts_explore.model import BoundKind, QueueKind
from ts_explore.scenarios import CATALOG, BuildContext, Built, Loader, Scenario, SkipRule, get, knob, register

BUILT_IN = ["grid_stride_copy", "guards_demo", "persistent_copy", "pipelined_copy", "varlen_copy"]


def verify(built: Built) -> None:
    """TaskManager raises on any failed check; stdout tables are swallowed."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TaskManager(**built.verify_kwargs(), verbose=False)


def test_catalog_registers_the_built_in_scenarios() -> None:
    assert set(BUILT_IN) <= set(CATALOG)
    for name in BUILT_IN:
        sc = get(name)
        assert sc.kernel and sc.kernel.startswith("ts_explore.kernels."), name
        assert sc.title and sc.description


@pytest.mark.parametrize("name", BUILT_IN)
def test_default_config_builds_and_verifies(name: str) -> None:
    sc = get(name)
    built = sc.build()
    assert built.tasks and built.resource_dependency_graph
    verify(built)
    assert built.notes, "the CPU view explains what the viewed CTA/thread does"


SWEEPS: dict[str, list[dict]] = {
    "grid_stride_copy": [
        dict(vector=1), dict(vector=2, per_thread=3), dict(per_thread=8, unroll=4), dict(warps=8, block=7, thread=255),
        dict(ctas=0, block=300), dict(elements=64, ctas=1),
    ],
    "pipelined_copy": [
        dict(stages=1), dict(stages=8, tile=2048), dict(loader=Loader.THREADS, load_warps=2),
        dict(loader=Loader.THREADS, load_warps=4, store_warps=8, vector=2), dict(tile=16384, stages=3, block=3),
    ],
    "persistent_copy": [
        dict(queue=QueueKind.NONE, overlaunch=0), dict(skip=SkipRule.EVERY_KTH, every_k=2),
        dict(skip=SkipRule.MASK, mask=(0, 5, 11)), dict(skip=SkipRule.CUSTOM, skip_fn=lambda t: t % 5 == 0),
        dict(queue=QueueKind.CLC), dict(queue=QueueKind.CLC, skip=SkipRule.EVERY_KTH, scheduler_stages=3),
        dict(per_thread=4, unroll=2, tile=16384), dict(overlaunch=0), dict(ctas=0, tiles=600, block=20),
    ],
    "varlen_copy": [
        dict(dynamic=False), dict(queue=QueueKind.NONE), dict(lengths=(1, 2, 3), view_tile=2, warps=2, thread=40),
        dict(lengths=(0, 64), view_tile=0),
    ],
    "guards_demo": [
        dict(start=3, end=20, step=2), dict(first=False, last=False), dict(when=False, unroll=2),
        dict(every_period=1, every_start=0), dict(start=0, end=1), dict(every_start=40),
    ],
}


@pytest.mark.parametrize("name,overrides", [(n, o) for n, sweep in SWEEPS.items() for o in sweep])
def test_knob_sweep_builds_and_verifies(name: str, overrides: dict) -> None:
    sc = get(name)
    verify(sc.build(sc.config(**overrides)))


BAD: list[tuple[str, dict, str, str | None]] = [
    ("grid_stride_copy", dict(vector=3), "is not one of 1, 2, 4", "vector"),  # refused by the knob's options
    ("grid_stride_copy", dict(warps=40), "warps per task: 40 is out of range; must be between 1 and 32", "warps"),
    ("grid_stride_copy", dict(thread=200), "pick view as thread below 128", "thread"),
    ("grid_stride_copy", dict(block=8), "raise CTAs", "block"),
    ("pipelined_copy", dict(stages=8, tile=16384), "pick fewer SMEM stages or a smaller tile", "stages"),
    ("pipelined_copy", dict(load_warps=2), "pick 1 warp of the load task, or loader threads", "load_warps"),
    ("pipelined_copy", dict(tile=256, store_warps=4), "does not split evenly", "tile"),
    ("persistent_copy", dict(queue=QueueKind.NONE), "set over-launched tiles to 0", "overlaunch"),
    ("persistent_copy", dict(queue=QueueKind.NONE, overlaunch=0, skip=SkipRule.MASK), "needs a work queue", "skip"),
    ("persistent_copy", dict(skip=SkipRule.CUSTOM), "pick a named function in 'skip rule: user callable'", "skip_fn"),
    ("persistent_copy", dict(tile=512, warps=8), "whole rows", "tile"),
    ("persistent_copy", dict(block=9), "pick view as CTA below 4, or raise persistent CTAs", "block"),
    ("varlen_copy", dict(queue=QueueKind.CLC), "is not one of none, static", "queue"),
    ("varlen_copy", dict(lengths=(0, 0)), "positive segment length", None),
    ("varlen_copy", dict(view_tile=9), "pick view tile below 8", "view_tile"),
    ("guards_demo", dict(start=5, end=5), "pick a domain start below the domain end", "start"),
]


@pytest.mark.parametrize("name,overrides,fix,knob_name", BAD)
def test_bad_combinations_name_cause_fix_and_the_control(name: str, overrides: dict, fix: str,
                                                         knob_name: str | None) -> None:
    sc = get(name)
    with pytest.raises(ValueError) as err:
        sc.build(sc.config(**overrides))
    assert fix in str(err.value)
    assert getattr(err.value, "knob", None) == knob_name
    if knob_name is not None and "; pick" in str(err.value):
        assert err.value.cause and err.value.hint, "a scenario check gives its cause and its own fix"
    fields = [f.name for f in dataclasses.fields(sc.config_type) if "_" in f.name or f.name in ("overlaunch",)]
    for field_name in fields:
        assert f"{field_name}=" not in str(err.value), f"the message speaks of the field {field_name!r}, not its label"


def test_every_check_has_its_own_hint() -> None:
    hints = {}
    for name, overrides, _, knob_name in BAD:
        sc = get(name)
        try:
            config = sc.config(**overrides)
        except ValueError:
            continue  # refused by the knob itself, before any check
        with pytest.raises(ValueError) as err:
            sc.check(config)
        hints.setdefault(err.value.hint, []).append((name, overrides))
    shared = {h: cases for h, cases in hints.items() if len(cases) > 1}
    assert not shared, f"checks share a hint: {shared}"


def test_unknown_setting_lists_the_real_ones() -> None:
    with pytest.raises(ValueError, match="has no setting stagez; its settings are: .*stages"):
        get("pipelined_copy").config(stagez=3)


@pytest.mark.parametrize("name", BUILT_IN)
def test_knobs_carry_widget_hints(name: str) -> None:
    for f in dataclasses.fields(get(name).config_type):
        if f.type in ("int", int) and f.name != "skip_fn":
            assert "min" in f.metadata or "options" in f.metadata or f.default == 0, (name, f.name)
            assert "label" in f.metadata, (name, f.name)
    hash(get(name).default_config())  # frozen and hashable: the compile cache keys on it


def domain_of(built: Built, task: str = "copy"):
    ts = capture_task_set(built.tasks, built.resource_dependency_graph)
    loop = ts.task(task).schedule.domain_loop()
    assert loop is not None
    return loop


def test_grid_stride_domain_is_what_the_viewed_thread_sees() -> None:
    sc = get("grid_stride_copy")
    cfg = sc.config(ctas=4, warps=2, block=3, thread=37, elements=4096, vector=4, per_thread=2)
    loop = domain_of(sc.build(cfg))
    assert (loop.start.value, loop.end.value, loop.step.value) == (3 * 64 + 37, 1024, 4 * 64 * 2)
    assert loop.start.kind is BoundKind.INT


def test_pipelined_domain_walks_this_ctas_tiles() -> None:
    sc = get("pipelined_copy")
    built = sc.build(sc.config(block=2, ctas=4, elements=1 << 16, tile=4096))
    assert [t.name for t in built.tasks] == ["store", "load"]
    loop = domain_of(built, "load")
    assert (loop.start.value, loop.end.value, loop.step.value) == (2, 16, 4)


def test_persistent_shapes_differ_in_tasks_and_queue() -> None:
    sc = get("persistent_copy")
    none = capture_task_set(*_tasks_graph(sc.build(sc.config(queue=QueueKind.NONE, overlaunch=0))))
    static = capture_task_set(*_tasks_graph(sc.build(sc.config(queue=QueueKind.STATIC))))
    clc = capture_task_set(*_tasks_graph(sc.build(sc.config(queue=QueueKind.CLC))))
    assert none.queue_kind is QueueKind.NONE and [t.name for t in none.tasks] == ["copy"]
    assert static.queue_kind is QueueKind.STATIC and [t.name for t in static.tasks] == ["copy"]
    assert clc.queue_kind is QueueKind.CLC and [t.name for t in clc.tasks] == ["copy", "scheduler"]
    assert static.tasks[0].persistent and not none.tasks[0].persistent


def _tasks_graph(built: Built):
    return built.tasks, built.resource_dependency_graph


def test_persistent_notes_name_the_skipped_tiles() -> None:
    sc = get("persistent_copy")
    cfg = sc.config(tiles=6, overlaunch=1, skip=SkipRule.MASK, mask=(2,), ctas=3, block=1)
    assert [t for t in range(7) if cfg.skipped(t)] == [2, 6]
    built = sc.build(cfg)
    notes = " ".join(built.notes)
    assert "CTA 1 of 3 gets tiles 1, 4" in notes and "copies 2 of them" in notes
    assert built.captions["skippable"] == "skip rule: tile mask 2; skips tiles none"  # CTA 1 gets 1 and 4


def test_thousands_of_tiles_keep_the_notes_short() -> None:
    sc = get("persistent_copy")
    built = sc.build(sc.config(tiles=4096, skip=SkipRule.EVERY_KTH, every_k=3, ctas=1))
    text = " ".join(built.notes) + built.captions["skippable"]
    assert len(text) < 400, text
    assert "every 3rd tile" in text and "(1367 in all)" in text


def test_a_view_without_work_says_so() -> None:
    sc = get("grid_stride_copy")
    note = sc.build(sc.config(ctas=0, elements=64, block=100)).notes[0]
    assert "CTA 100" in note and "does no work (0 iterations)" in note
    varlen = get("varlen_copy")
    assert "does no work (0 iterations)" in varlen.build(varlen.config(view_tile=4)).notes[0]  # a 0-length segment


def test_clc_notes_describe_the_run_time_hand_out() -> None:
    sc = get("persistent_copy")
    built = sc.build(sc.config(queue=QueueKind.CLC))
    assert "handed out at run time" in built.notes[0]
    assert built.captions["skippable"] == "skip rule: over-launched tiles only; skips tiles 12, 13"


def test_varlen_uses_get_domain_only_when_dynamic() -> None:
    sc = get("varlen_copy")
    dyn = capture_task_set(*_tasks_graph(sc.build(sc.config(dynamic=True)))).tasks[0]
    fixed = capture_task_set(*_tasks_graph(sc.build(sc.config(dynamic=False)))).tasks[0]
    assert dyn.dynamic_domain and not fixed.dynamic_domain
    assert fixed.schedule.domain_loop().end.value == 40  # longest segment
    assert type(sc.build().tasks[0]).get_domain.__name__ == "get_domain"


def test_guards_notes_list_where_blocks_fire() -> None:
    sc = get("guards_demo")
    note = sc.build(sc.config(start=0, end=7, every_period=3, every_start=1)).notes[0]
    assert "first_iter at offset 0" in note and "last_iter at offset 6" in note and "every at offsets 1, 4;" in note


def test_users_register_their_own_scenario() -> None:
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
    from cutlass.experimental.task_scheduling.task import Task

    from ts_explore.seed_examples.resources import GmemSink, GmemSource

    @dataclass(frozen=True)
    class Tiny:
        trips: int = knob(3, min=1, max=9, label="trips")

    def build(cfg: Tiny, ctx: BuildContext) -> Built:
        src, dst = GmemSource(name="src"), GmemSink(name="dst")

        @schedule
        def tiny(src: GmemSource, dst: GmemSink) -> None:
            with domain_loop(0, cfg.trips, 1):
                dst.set_item(src.get_item())

        task = Task(name="t", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=tiny(src, dst))
        return Built(tasks=[task], resource_dependency_graph={dst: [src]})

    sc = Scenario(name="tiny_test_scenario", title="Tiny", config_type=Tiny, build_fn=build)
    try:
        register(sc)
        assert get("tiny_test_scenario") is sc and sc.kernel is None
        verify(sc.build(sc.config(trips=5)))
        with pytest.raises(ValueError, match="already registered"):
            register(sc)
    finally:
        CATALOG.pop("tiny_test_scenario", None)
