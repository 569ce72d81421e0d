"""Huge loop bounds, a memory cap and Ctrl-C: verify refuses a loop too long to unroll (saying the limit and
what to do), an out-of-memory is never UNSAFE, and Ctrl-C while TS reads the tasks ends the CLI at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ts_explore
from ts_explore.reader.trips import MAX_LOOP_ITERATIONS, LoopTooLong
from ts_explore.verification.verify import verify

FACTORY = '''
import os
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task
from ts_explore.seed_examples import resources as R


def copy(end=None):
    src, dst = R.GmemSource(name="src"), R.GmemSink(name="dst")

    @schedule
    def copy_schedule(src, dst):
        with domain_loop(0, int(os.environ.get("LOOP_END", "4")) if end is None else end, 1):
            dst.set_item(data=src.get_item())

    task = Task(name="copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy_schedule(src, dst))
    return [task], {dst: [src]}
'''

CAPPED = '''
import resource, sys
from ts_explore.cli import main
import loops
loops.copy(8)  # imports and TS's first use done before the cap
pages = int(open("/proc/self/statm").read().split()[0])
resource.setrlimit(resource.RLIMIT_AS, (pages * resource.getpagesize() + 150 * 2**20, resource.RLIM_INFINITY))
sys.exit(main(["verify", "loops:copy"]))
'''


@pytest.fixture
def loops(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "loops.py").write_text(FACTORY)
    (tmp_path / "capped.py").write_text(CAPPED)
    sys.path.insert(0, str(tmp_path))
    package_root = str(Path(ts_explore.__file__).parents[1])  # this checkout, not an installed copy
    yield {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), package_root,
                                                        os.environ.get("PYTHONPATH", "")])}
    sys.path.remove(str(tmp_path))
    sys.modules.pop("loops", None)


def test_a_loop_too_long_to_unroll_is_refused_before_anything_unrolls_it(loops: dict[str, str]) -> None:
    import loops as factory

    tasks, graph = factory.copy(2**62)
    started = time.perf_counter()
    with pytest.raises(LoopTooLong) as err:
        verify(tasks=tasks, resource_dependency_graph=graph)
    assert time.perf_counter() - started < 5
    text = str(err.value)
    assert "domain_loop(0, 4611686018427387904, 1) runs 4,611,686,018,427,387,904 iterations" in text
    assert f"at most {MAX_LOOP_ITERATIONS:,} per loop" in text and "verify a smaller instance" in text
    tasks, graph = factory.copy(64)
    assert verify(tasks=tasks, resource_dependency_graph=graph).ok  # the smaller instance it suggests


def test_work_tiles_count_towards_the_limit() -> None:
    from ts_explore.scenarios import get

    sc = get("persistent_copy")  # each tile runs the copy's 16-row loop
    with pytest.raises(LoopTooLong, match=r"1,000,000,000 work tiles of its domain_loop\(0, 16, 1\) are "
                                          r"16,000,000,000 iterations.*verify fewer tiles, e.g. tiles=6250"):
        verify(**sc.build(sc.config()).verify_kwargs(), tiles=10**9)
    assert verify(**sc.build(sc.config()).verify_kwargs(), tiles=6).ok


def test_the_cli_refuses_it_in_one_line_under_a_memory_cap(loops: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "capped.py"], cwd=tmp_path, env={**loops, "LOOP_END": str(2**62)},
                          text=True, capture_output=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ts-explore verify: error: task 'copy'") and "at most 100,000 per loop" in last
    assert "Traceback" not in done.stderr


def test_running_out_of_memory_is_never_unsafe(loops: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "capped.py"], cwd=tmp_path, env={**loops, "LOOP_END": "60000"},
                          text=True, capture_output=True, timeout=120)  # about 250 MB more than the cap allows
    assert done.returncode == 4, (done.stdout, done.stderr)  # INCONCLUSIVE, wherever the memory ran out
    told = done.stdout + done.stderr
    assert "ran out of memory" in told or ("INCONCLUSIVE" in done.stdout and "MemoryError" in done.stdout), told
    assert "Traceback" not in done.stderr and "UNSAFE" not in done.stdout


def test_ctrl_c_while_ts_reads_the_tasks_ends_the_cli_at_once(loops: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "ts_explore.cli", "verify", "loops:copy"], cwd=tmp_path,
                            env={**loops, "LOOP_END": "100000"}, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # reading and checking it takes about 12 s
    try:
        first = proc.stderr.readline()  # "verifying 1 task(s) ..." once the tasks are built
        assert first.startswith("verifying"), first
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, (out, err)
    assert time.perf_counter() - sent < 4, "Ctrl-C must not wait for TS to finish reading"
    assert err.strip().splitlines()[-1] == "ts-explore verify: interrupted (Ctrl-C); nothing was proven"
    assert "Traceback" not in err and out == ""
