"""Tasks and TaskManagers built before ``import ts_explore`` draw exactly like those built after it.

The guide's workflow builds ``Task`` / ``TaskManager`` objects first and looks
at them later, so the capture cannot depend on a hook installed at import.
The check runs in a fresh interpreter that builds the tasks with nothing of
ts_explore loaded (the resources come from a file loaded by path).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import contextlib, importlib.util, io, json, sys, warnings

    spec = importlib.util.spec_from_file_location("user_resources", sys.argv[1])
    R = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(R)

    import cutlass.cute as cute
    from cutlass.experimental.task_scheduling import when_true
    from cutlass.experimental.task_scheduling.resources import WorkQueue
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
    from cutlass.experimental.task_scheduling.task import Task
    from cutlass.experimental.task_scheduling.task_manager import TaskManager


    class SkippingQueue(WorkQueue):
        @cute.jit
        def skip_work_tile_if(self, work_tile):
            return work_tile.tile_idx[0] >= 4


    def build():
        src, out = R.SlotSource(name="src"), R.SlotSink(name="out")
        epi = R.EpilogueSmem(name="epi", pipeline_config=R.async_pipeline(1))
        flags = R.EpilogueSmem(name="flags")
        wq = R.static_queue(cls=SkippingQueue)

        @schedule
        def copy(src, out, flags, epi, wq):
            with work_tile_loop(wq, skip_if=SkippingQueue.skip_work_tile_if) as tiles:
                with tiles.skippable(), domain_loop(0, 2, 1):
                    frag = src.load(slot_index=3)
                    out.store(frag=frag, slot_index=1)
                    epi.acquire()
                    flag = flags.needs_epilogue()
                    with when_true(flag):
                        epi.epilogue()
                    with when_true(flag, key="shared"):
                        epi.epilogue()
                    epi.commit()
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

        @schedule
        def drain(epi, wq):
            with work_tile_loop(wq, skip_if=SkippingQueue.skip_work_tile_if) as tiles:
                with tiles.skippable(), domain_loop(0, 2, 1):
                    epi.wait()
                    epi.release()
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tasks = [Task([src, flags, wq], [out, epi], 0, 1, schedule=copy(src, out, flags, epi, wq), name="copy"),
                     Task([epi, wq], [], 1, 1, schedule=drain(epi, wq), name="drain")]
        graph = {out: [src, wq], epi: [flags], src: [], flags: [], wq: []}
        with contextlib.redirect_stdout(io.StringIO()):
            tm = TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
        return tasks, tm


    before_tasks, before_tm = build()
    assert not any(m == "ts_explore" or m.startswith("ts_explore.") for m in sys.modules), "imported too early"

    import ts_explore

    after_tasks, after_tm = build()
    before, after = ts_explore.capture(before_tm), ts_explore.capture(after_tm)
    copy = before.tasks[0].schedule
    print(json.dumps({
        "same_model": before == after,
        "same_dot": ts_explore.schedule_graph(before_tm).source == ts_explore.schedule_graph(after_tm).source,
        "same_task": ts_explore.capture(before_tasks[0]) == ts_explore.capture(after_tasks[0]),
        "routes": [[r.variable, r.argument] for r in copy.routes],
        "literals": [[l.name, l.text] for s in copy.steps() for l in s.literals],
        "blocks": [b.kind.value for b in copy.blocks()],
        "keys": [b.condition.key for b in copy.blocks() if b.condition is not None],
        "dot": ts_explore.schedule_graph(before_tasks[0]).source,
    }))
    """
)


def test_tasks_built_before_import_capture_and_draw_the_same():
    resources = ROOT / "ts_explore" / "seed_examples" / "resources.py"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(resources)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["same_model"] and got["same_dot"] and got["same_task"]
    assert got["routes"] == [["frag", "frag"]]
    assert ["slot_index", "3"] in got["literals"] and ["slot_index", "1"] in got["literals"]
    assert "skippable" in got["blocks"] and got["blocks"].count("when_true") == 2
    assert got["keys"] == ["flags.needs_epilogue.needs_epilogue_flag", "shared"]
    dot = got["dot"]
    assert "slot_index=3" in dot and "frag -> frag" in dot
    assert "skippable()" in dot and "1400" not in dot and "not recovered" not in dot
