"""Drawings show what the model knows: explicit condition keys, never-routed outputs, bounds of any size."""

from __future__ import annotations

import subprocess

from cutlass.experimental.task_scheduling import when_true
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop

import ts_explore
from ts_explore.seed_examples import resources as R


def _marks(end: int = 2**63):
    def marks(flags, epi, tmem, src, dst):
        with domain_loop(0, end, 1):
            flag = flags.needs_epilogue()
            epi.acquire()
            with when_true(flag, key="shared"):
                epi.epilogue()
            with when_true(flag):
                epi.epilogue()
            epi.commit()
            tmem.load_subtile(subtile_idx=0)  # its output is never routed
            dst.set_item(src.get_item())

    return ts_explore.record(marks, R.EpilogueSmem(name="flags"),
                             R.EpilogueSmem(name="epi", pipeline_config=R.async_pipeline(1)),
                             R.TmemAcc(name="tmem"), R.GmemSource(name="src"), R.GmemSink(name="dst"))


def test_marks_dot_is_golden_and_renders(golden, tmp_path) -> None:
    rec = _marks()
    assert rec.ok, rec.error
    dot = ts_explore.schedule_graph(rec).source
    golden("dot/marks.dot", dot)
    assert 'when_true(flags.needs_epilogue() -> needs_epilogue_flag, key=\\"shared\\")' in dot
    assert "t2r_rmem never routed" in dot and "[9223372036854775808 iterations]" in dot
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    assert "<svg" in svg
    assert ts_explore.save(rec, tmp_path / "marks.svg").read_text().lstrip().startswith("<?xml")


def test_recording_display_lists_unrouted_outputs() -> None:
    rec = _marks(4)
    assert rec.unrouted and "t2r_rmem" in rec.unrouted[0]
    html = rec._repr_mimebundle_()["text/html"]
    assert html.index("never routed") < html.index("ts-explore-diagram") and "t2r_rmem" in html


def test_huge_and_negative_bounds_draw_everywhere() -> None:
    cases = {(0, 2**63): 2**63, (-(2**63), 2**63, 2**62): 4, (2**64, 0, -1): 2**64, (0, 2**31): 2**31, (5, -5, 1): 0}
    for bounds, trips in cases.items():
        def sched(src, dst, bounds=bounds):
            with domain_loop(*bounds):
                dst.set_item(src.get_item())

        rec = ts_explore.record(sched, R.GmemSource(name="src"), R.GmemSink(name="dst"))
        loop = rec.tree.domain_loop()
        assert loop.trip_count() == trips
        assert "digraph" in ts_explore.schedule_graph(rec).source
        assert "ts-explore-diagram" in rec._repr_mimebundle_()["text/html"]
