"""``range_constexpr`` outside a JIT: off by default, on inside the switch, on while %load_ext ts_explore is loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cutlass
import pytest
from cutlass import range_constexpr as imported_by_name
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task
from IPython.core.interactiveshell import InteractiveShell

import ts_explore
from ts_explore.reader import constexpr
from ts_explore.seed_examples import resources as R

ROOT = Path(__file__).resolve().parents[2]


@schedule
def subtiles(tmem, out, wq):
    with work_tile_loop(wq):
        with domain_loop(0, 2, 1):
            pass
        for i in imported_by_name(3):  # the guide's trace-time unroll, written outside any JIT
            out.store(t2r_rmem=tmem.load_subtile(subtile_idx=i), subtile_idx=i)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()


def _resources():
    return R.TmemAcc(name="tmem"), R.GmemOut(name="out"), R.static_queue()


def test_off_by_default_with_the_dsl_error():
    assert not constexpr.is_enabled()
    with pytest.raises(Exception, match="preprocessed"):
        subtiles(*_resources())


def test_the_switch_lets_a_task_be_built_directly():
    tmem, out, wq = _resources()
    with ts_explore.range_constexpr_on_cpu():
        assert list(cutlass.range_constexpr(1, 4)) == [1, 2, 3]
        task = Task([tmem, wq], [out], 0, 1, schedule=subtiles(tmem, out, wq), name="store")
    assert not constexpr.is_enabled()
    info = ts_explore.capture(task)
    assert [s.literals[0].text for s in info.schedule.steps() if s.literals] == ["0", "0", "1", "1", "2", "2"]


def test_switch_nests_and_record_turns_it_on_only_while_recording():
    with ts_explore.range_constexpr_on_cpu():
        with ts_explore.range_constexpr_on_cpu():
            pass
        assert constexpr.is_enabled()
    assert not constexpr.is_enabled()
    rec = ts_explore.record(subtiles, *_resources())
    assert rec.ok, rec.error
    assert not constexpr.is_enabled()


def test_the_notebook_extension_holds_the_switch():
    ip = InteractiveShell.instance()
    try:
        ip.run_line_magic("load_ext", "ts_explore")
        ip.run_line_magic("reload_ext", "ts_explore")
        assert constexpr.is_enabled()
        tmem, out, wq = _resources()
        Task([tmem, wq], [out], 0, 1, schedule=subtiles(tmem, out, wq), name="store")
    finally:
        ip.run_line_magic("unload_ext", "ts_explore")
    assert not constexpr.is_enabled()


def test_importing_ts_explore_does_not_turn_it_on():
    code = ("import ts_explore, ts_explore.reader, ts_explore.app.drawings\n"
            "from ts_explore.reader import constexpr\n"
            "print(constexpr.is_enabled())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
