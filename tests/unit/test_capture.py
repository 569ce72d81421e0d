"""capture() keeps every construct of the schedule grammar with its parameters."""

from __future__ import annotations

import contextlib
import io

import cutlass
import pytest
from cutlass.experimental.task_scheduling import when_false, when_true
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

import ts_explore
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples import seed
from ts_explore.model import (
    Block,
    BlockKind,
    BoundKind,
    DomainLoop,
    Family,
    QueueKind,
    Route,
    ScheduleTree,
    Section,
    SkipKind,
    Stage,
    TaskInfo,
    TaskSet,
    WorkTileLoop,
)


def tree(rec) -> ScheduleTree:
    assert rec.ok, rec.error
    return rec.tree


def test_reference_shape_sections_routes_and_multi_return() -> None:
    t = tree(seed.reference_shape())
    wtl = t.body[0]
    assert isinstance(wtl, WorkTileLoop) and wtl.queue == "wq" and wtl.queue_kind is QueueKind.STATIC
    sections = [(s.title, s.section) for s in t.steps()]
    assert sections[:2] == [("smem_q.try_acquire", Section.HEAD), ("smem_q.acquire", Section.HEAD)]
    assert ("wq.release", Section.TAIL) == sections[-1]
    loop = t.domain_loop()
    assert loop is not None and loop.trip_count() == 4
    first = next(b for b in t.blocks() if b.kind is BlockKind.FIRST_ITER)
    assert [s.title for s in first.body] == ["gmem_qkv.compute_coords", "smem_q.q_load", "smem_q.commit"]
    coords = t.steps()[2]
    assert coords.returns == ("coord_q", "coord_k")
    assert set(t.routes) == {
        Route(coords.uid, "coord_q", t.steps()[3].uid, "coord_q"),
        Route(coords.uid, "coord_k", t.steps()[7].uid, "coord_k"),
    }


def test_call_indices_and_sections_match_the_task_lists() -> None:
    rec = seed.subtile_loop()
    tmem, gmem, wq = rec.schedule.resources
    task = Task(src_resources=[tmem, wq], dst_resources=[gmem], warp_idx=0, num_warps=1,
                schedule=rec.schedule, name="store")
    info = ts_explore.capture(task)
    assert isinstance(info, TaskInfo) and info.name == "store" and info.warp_text == "warps [0, 1)"
    order = {Section.HEAD: 0, Section.LOOP: 1, Section.TAIL: 2}
    from_tree = sorted(
        ((s.resource, s.stage, s.call_index, s.section) for s in info.schedule.steps()),
        key=lambda x: order[x[3]],
    )
    from_ts = [(e.resource, e.stage, e.call_index, e.section) for e in info.expanded]
    assert from_tree == from_ts
    loads = [s for s in info.schedule.steps() if s.label == "load_subtile"]
    assert [s.call_index for s in loads] == [0, 1, 2, 3]
    assert [s.literals[0].text for s in loads] == ["0", "1", "2", "3"]


def test_guards_keep_their_parameters() -> None:
    t = tree(seed.guarded())
    kinds = [(b.kind, b.period, b.start) for b in t.blocks()]
    assert kinds == [
        (BlockKind.FIRST_ITER, None, None),
        (BlockKind.EVERY, 4, 0),
        (BlockKind.LAST_ITER, None, None),
    ]
    assert t.blocks()[1].title == "every(4, start=0)"


def test_when_true_condition_points_at_its_producer() -> None:
    t = tree(seed.when_true_condition())
    block = t.blocks()[0]
    assert block.kind is BlockKind.WHEN_TRUE
    cond = block.condition
    producer = next(s for s in t.steps() if s.label == "needs_epilogue")
    assert (cond.resource, cond.method, cond.variable, cond.step) == (
        "smem", "needs_epilogue", "needs_epilogue_flag", producer.uid)
    assert not cond.explicit_key and cond.key == "smem.needs_epilogue.needs_epilogue_flag"
    assert producer.family is Family.AUX


def test_when_false_with_explicit_key_and_python_value_conditions() -> None:
    @schedule
    def sched(smem):
        with domain_loop(0, 2, 1):
            smem.acquire()
            flag = smem.needs_epilogue()
            with when_false(flag, key="shared-flag"):
                smem.epilogue()
            with when_true(True):
                smem.commit()

    t = tree(ts_explore.record(sched, R.EpilogueSmem(name="smem", pipeline_config=R.async_pipeline(1))))
    neg, py = t.blocks()
    assert neg.kind is BlockKind.WHEN_FALSE and neg.condition.explicit_key
    assert neg.condition.key == "shared-flag"
    assert py.kind is BlockKind.WHEN_TRUE and py.condition.key == "python value #1"


def test_skip_predicates_queue_method_function_and_lambda() -> None:
    wtl = tree(seed.skippable_copy()).work_tile_loop()
    assert wtl.skip_if.kind is SkipKind.QUEUE_METHOD
    assert wtl.skip_if.name == "OversubscribedQueue.skip_work_tile_if"
    skippable = wtl.body[0]
    assert isinstance(skippable, Block) and skippable.kind is BlockKind.SKIPPABLE
    assert isinstance(skippable.body[0], DomainLoop)

    def every_third(work_tile):
        return work_tile.tile_idx[0] % 3 == 0

    for pred, kind in ((every_third, SkipKind.FUNCTION), (lambda wq, tile: tile.is_valid_tile, SkipKind.LAMBDA)):
        @schedule
        def sched(copy, wq):
            with work_tile_loop(wq, skip_if=pred) as w:
                with w.skippable(), domain_loop(0, 2, 1):
                    copy.copy_tile_row()
                wq.release()

        got = tree(ts_explore.record(sched, R.TileCopy(name="copy"), R.static_queue())).work_tile_loop().skip_if
        assert got.kind is kind
    assert got.source == "lambda wq, tile: tile.is_valid_tile"


def test_bounds_int_dynamic_and_runtime() -> None:
    grid = tree(seed.grid_stride(num_entries=1000, bx=2, tx=3, gdimx=4, num_warps=1, unroll=2)).domain_loop()
    assert (grid.start.value, grid.end.value, grid.step.value, grid.unroll) == (67, 1000, 128, 2)
    assert grid.trip_count() == len(range(67, 1000, 128))
    dyn = tree(seed.dynamic_domain()).domain_loop()
    assert dyn.end.kind is BoundKind.DYNAMIC and dyn.end.text == "VarlenTask.get_domain(tile)"
    assert dyn.trip_count() is None

    @schedule
    def sched(src, dst):
        with domain_loop(0, cutlass.Int32(8)):
            dst.set_item(src.get_item())

    rt = tree(ts_explore.record(sched, R.GmemSource(name="src"), R.GmemSink(name="dst"))).domain_loop()
    assert rt.end.kind is BoundKind.RUNTIME and rt.end.text == "Int32(8)"


def test_queue_kinds_and_scheduler_task_shape() -> None:
    t = tree(seed.clc_scheduler())
    assert t.work_tile_loop().queue_kind is QueueKind.CLC
    assert [s.method for s in t.steps()][:4] == ["try_acquire", "acquire", "fetch_work_tile", "commit"]
    assert all(s.family is Family.QUEUE for s in t.steps())
    assert tree(seed.static_persistent()).work_tile_loop().queue_kind is QueueKind.STATIC


def test_constexpr_literals_per_call_site() -> None:
    t = tree(seed.constexpr_forwarding())
    got = [(s.title, s.call_index, tuple((lit.name, lit.text) for lit in s.literals)) for s in t.steps()]
    assert got == [
        ("input_gmem.load", 0, (("slot_index", "0"),)),
        ("output_gmem.store", 0, (("slot_index", "1"),)),
        ("input_gmem.load", 1, (("slot_index", "1"),)),
        ("output_gmem.store", 1, (("slot_index", "0"),)),
    ]


def test_range_constexpr_records_outside_a_kernel_and_is_restored() -> None:
    original = cutlass.range_constexpr
    rec = seed.subtile_loop(subtile_cnt=3)
    assert len([s for s in tree(rec).steps() if s.label == "store"]) == 3
    assert cutlass.range_constexpr is original

    @schedule
    def failing(src, dst):
        with domain_loop(0, 2):
            for _ in cutlass.range_constexpr(2):
                src.no_such_method()

    assert ts_explore.record(failing, R.GmemSource(name="src"), R.GmemSink(name="dst")).error is not None
    assert cutlass.range_constexpr is original


def test_record_accepts_an_undecorated_function_and_collects_warnings() -> None:
    def plain(src, dst):
        with domain_loop(0, 4, 1):
            src.get_item()  # produced but never routed: TS warns

    rec = ts_explore.record(plain, R.GmemSource(name="src"), R.GmemSink(name="dst"))
    assert rec.ok and any("never routed" in w for w in rec.warnings)


def _two_task_pipeline():
    src, smem, dst = R.GmemSource(name="src"), R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2)), R.GmemSink(name="dst")

    @schedule
    def load(src, smem):
        with domain_loop(0, 4, 1):
            item = src.get_item()
            smem.acquire()
            smem.fill(item)
            smem.commit()

    @schedule
    def store(smem, dst):
        with domain_loop(0, 4, 1):
            smem.wait()
            val = smem.read()
            smem.release()
            dst.set_item(val)

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[smem], warp_idx=0, num_warps=1, schedule=load(src, smem)),
        Task(name="Store", src_resources=[smem], dst_resources=[dst], warp_idx=1, num_warps=1, schedule=store(smem, dst)),
    ]
    return tasks, {smem: [src], dst: [smem]}


def test_task_manager_capture_has_resources_edges_and_trees() -> None:
    tasks, graph = _two_task_pipeline()
    with contextlib.redirect_stdout(io.StringIO()):
        tm = TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
    ts = ts_explore.capture(tm)
    assert isinstance(ts, TaskSet)
    assert [t.name for t in ts.tasks] == ["Load", "Store"]
    smem = ts.resource("smem")
    assert (smem.pipeline, smem.stages, smem.variables) == ("AsyncAsync", 2, ("val",))
    assert [(e.upstream, e.downstream, e.tasks, e.kind) for e in ts.edges] == [
        ("src", "smem", ("Load[0:1)",), "data"),
        ("smem", "dst", ("Store[1:2)",), "data"),
    ]
    assert ts.tasks[1].schedule.routes[0].argument == "data"
    dot = ts_explore.dependency_graph(tm).source
    assert "Load[0:1)" in dot and "AsyncAsync" in dot
    both = ts_explore.schedule_graph(tm).source
    assert "Task Load" in both and "Task Store" in both and "t1_s3" in both


def test_task_tree_is_rebuilt_from_what_the_task_keeps() -> None:
    tasks, _ = _two_task_pipeline()
    info = ts_explore.capture(tasks[1])
    assert info.schedule.from_lists and not info.schedule.unrecovered
    assert [s.title for s in info.schedule.steps()] == ["smem.wait", "smem.read", "smem.release", "dst.set_item"]
    assert [(r.variable, r.argument) for r in info.schedule.routes] == [("val", "data")]
    title = ts_explore.schedule_graph(tasks[1]).source
    assert "Task Store" in title and "not recovered" not in title


def test_capture_rejects_other_objects_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match="takes a TS Schedule"):
        ts_explore.capture(42)
    failed = seed.skippable_copy.__wrapped__ if hasattr(seed.skippable_copy, "__wrapped__") else None
    assert failed is None
    bad = ts_explore.record(lambda src: src.nope(), R.GmemSource(name="src"))
    with pytest.raises(ValueError, match="recording failed"):
        ts_explore.capture(bad)


def test_stage_family_colours_cover_every_stage() -> None:
    t = tree(seed.reference_shape())
    fam = {s.stage: s.family for s in t.steps() if s.resource.startswith("smem")}
    assert fam[Stage.PRODUCER_ACQUIRE] is Family.ACQUIRE
    assert fam[Stage.PRODUCER_COMMIT] is Family.COMMIT
    assert fam[Stage.PRODUCER_WORK] is Family.PRODUCER_WORK


from cutlass import range_constexpr as imported_range_constexpr  # noqa: E402 - the import form under test


def test_range_constexpr_imported_by_name_also_records() -> None:
    @schedule
    def sched(tmem, out):
        with domain_loop(0, 2, 1):
            for i in imported_range_constexpr(2):
                out.store(t2r_rmem=tmem.load_subtile(subtile_idx=i), subtile_idx=i)

    rec = ts_explore.record(sched, R.TmemAcc(name="tmem"), R.GmemOut(name="out"))
    assert rec.ok, rec.error
    assert [s.literals[0].text for s in rec.tree.steps()] == ["0", "0", "1", "1"]
    assert imported_range_constexpr is cutlass.range_constexpr
