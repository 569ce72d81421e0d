"""verify from several threads at once (as the explorer's background proofs and repairs run it) leaves
sys.stdout, sys.stderr and the warnings filters as they were, and each verdict keeps its own TS printout."""

from __future__ import annotations

import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import verify_builders as B
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore import gallery
from ts_explore.seed_examples import resources as R
from ts_explore.verification.verify import verify


class RuntimeRows(Task):
    def get_domain(self, tile_coord):  # noqa: ANN001 - TS checks this exact signature
        return None  # known only on the GPU: TS warns and checks a stand-in count


def runtime_rows() -> dict:
    """A per-tile loop end TS cannot probe on the host: TaskManager warns (a Python warning)."""
    src, dst, wq = R.GmemSource(name="src"), R.GmemSink(name="dst"), R.static_queue()

    @schedule
    def rows(src, dst, wq):
        with work_tile_loop(wq):
            with domain_loop(0, RuntimeRows.get_domain, 1):
                dst.set_item(data=src.get_item())
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    task = RuntimeRows(name="rows", src_resources=[src, wq], dst_resources=[dst], warp_idx=0, num_warps=1,
                       schedule=rows(src, dst, wq))
    return {"tasks": [task], "resource_dependency_graph": {dst: [src], src: [], wq: []}}


CASES = (B.head_loop_overlap, lambda: gallery.get("cross_wait").broken(), runtime_rows)
BUILDING = threading.Lock()  # the DSL's tracer (a WorkQueue's default tile is traced) is not thread-safe


def _verify_one(i: int) -> tuple[bool, str, tuple[str, ...]]:
    with BUILDING:
        kwargs = CASES[i % len(CASES)]()  # a printed TS warning; a blocked schedule; TS's Python warning
    v = verify(**kwargs)
    return v.ok, v.raw_output, tuple(f"{n.kind}: {n.message}" for n in v.warnings)


def test_verify_from_four_threads_keeps_the_process_streams_and_filters() -> None:
    stdout, stderr, filters, hook = sys.stdout, sys.stderr, list(warnings.filters), warnings.showwarning
    alone = {i: _verify_one(i) for i in range(len(CASES))}  # what each verdict says when nothing else runs
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads take turns often, so their verify calls interleave inside TS's checks
    try:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(_verify_one, range(200)))
    finally:
        sys.setswitchinterval(interval)
    assert sys.stdout is stdout and sys.stderr is stderr
    assert warnings.filters == filters and warnings.showwarning is hook
    for i, got in enumerate(results):
        assert got == alone[i % len(CASES)], f"call {i} lost or mixed its TS printout or warnings"
    assert "[head-loop-overlap] WARNING" in alone[0][1] and "Schedule is blocked!" in alone[1][1]
    assert any(note.startswith("ts-warning: Task 'rows': get_domain") for note in alone[2][2]), alone[2][2]


def test_tss_warnings_become_notes_and_never_reach_the_console(capsys) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = verify(**runtime_rows())
    assert caught == [] and capsys.readouterr() == ("", "")
    assert [n.kind for n in v.warnings] == ["ts-warning"] and "did not yield a compile-time int" in v.warnings[0].message


def test_a_capturing_thread_hides_only_its_own_output(capsys) -> None:
    from ts_explore.reader.capture import captured_output, recorded_warnings

    started, release = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def capturing() -> None:
        with captured_output() as out, recorded_warnings() as caught:
            print("inside")
            warnings.warn("mine")
            warnings.warn("mine")  # a repeat is recorded too
            started.set()
            release.wait(10)
        seen["out"], seen["caught"] = out.getvalue(), [str(w.message) for w in caught]

    worker = threading.Thread(target=capturing)
    worker.start()
    started.wait(10)
    print("outside")  # another thread prints while the capture runs
    with warnings.catch_warnings(record=True) as other:
        warnings.simplefilter("always")
        warnings.warn("theirs")
    release.set()
    worker.join(10)
    assert seen == {"out": "inside\n", "caught": ["mine", "mine"]}
    assert capsys.readouterr().out == "outside\n"
    assert [str(w.message) for w in other] == ["theirs"]


def test_other_threads_see_the_real_streams_attributes_while_a_capture_runs() -> None:
    from ts_explore.reader.capture import captured_output

    stream = sys.stdout
    with captured_output():
        assert sys.stdout is not stream and sys.stdout.encoding == stream.encoding
        assert sys.stdout.errors == stream.errors
    assert sys.stdout is stream
