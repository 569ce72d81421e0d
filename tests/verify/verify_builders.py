"""Small task sets the verification tests need beyond the gallery (fresh objects on every call)."""

from __future__ import annotations

import cutlass
from cutlass.experimental.task_scheduling import when_true
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue


def head_loop_overlap(n: int = 2) -> dict:
    """A producer that fills smem in HEAD and in the loop: TS prints a [head-loop-overlap] warning."""
    smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(2))

    @schedule
    def producer(smem):
        smem.acquire()
        smem.produce()
        smem.commit()
        with domain_loop(0, n, 1):
            smem.acquire()
            smem.produce()
            smem.commit()

    @schedule
    def consumer(smem):
        with domain_loop(0, n + 1, 1):
            smem.wait()
            smem.consume()
            smem.release()

    tasks = [Task([], [smem], 0, 1, schedule=producer(smem), name="Producer"),
             Task([smem], [], 1, 1, schedule=consumer(smem), name="Consumer")]
    return {"tasks": tasks, "resource_dependency_graph": {smem: []}}


def runtime_domain(broken: bool) -> dict:
    """Producer/consumer whose loop end is a DSL value: TS checks a stand-in single iteration.

    Broken: the consumer waits twice per iteration for one commit.
    """
    smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(1))
    end = cutlass.Int32(4)

    @schedule
    def producer(smem):
        with domain_loop(0, end, 1):
            smem.acquire()
            smem.produce()
            smem.commit()

    @schedule
    def consumer(smem):
        with domain_loop(0, end, 1):
            for _ in range(2 if broken else 1):
                smem.wait()
                smem.consume()
                smem.release()

    tasks = [Task([], [smem], 0, 1, schedule=producer(smem), name="Producer"),
             Task([smem], [], 1, 1, schedule=consumer(smem), name="Consumer")]
    return {"tasks": tasks, "resource_dependency_graph": {smem: []}}


def skipped_tile_deadlock(broken: bool) -> dict:
    """Persistent copy with skip_if: the commit sits inside skippable() but the waiter's wait does not.

    Normal tiles are fine; on a skipped tile nobody commits, so the waiter stalls
    (only the skipped-tile variant of the exhaustive check finds it).
    """
    sig = R.Signal(name="sig", pipeline_config=R.async_pipeline(1))
    wq = R.static_queue(cls=OversubscribedQueue)

    @schedule
    def producer(sig, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtl:
            with wtl.skippable():
                with domain_loop(0, 1, 1):
                    sig.acquire()
                    sig.produce()
                    sig.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def waiter(sig, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtl:
            with wtl.skippable():
                with domain_loop(0, 1, 1):
                    if not broken:
                        sig.wait()
                        sig.consume()
                        sig.release()
            if broken:
                sig.wait()
                sig.consume()
                sig.release()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [Task([wq], [sig], 0, 1, schedule=producer(sig, wq), name="Producer"),
             Task([sig, wq], [], 1, 1, schedule=waiter(sig, wq), name="Waiter")]
    return {"tasks": tasks, "resource_dependency_graph": {sig: [], wq: []}}


def opaque_epilogue() -> dict:
    """A when_true-guarded epilogue: the checker runs once per value of the condition."""
    flags = R.EpilogueSmem(name="flags")
    smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(2))

    @schedule
    def producer(flags, smem):
        with domain_loop(0, 2, 1):
            flag = flags.needs_epilogue()
            smem.acquire()
            with when_true(flag, key="epilogue"):
                smem.produce()
            smem.commit()

    @schedule
    def consumer(smem):
        with domain_loop(0, 2, 1):
            smem.wait()
            smem.consume()
            smem.release()

    tasks = [Task([flags], [smem], 0, 1, schedule=producer(flags, smem), name="Producer"),
             Task([smem], [], 1, 1, schedule=consumer(smem), name="Consumer")]
    return {"tasks": tasks, "resource_dependency_graph": {smem: [flags], flags: []}}


def long_names(broken: bool = True) -> dict:
    """The cross wait with resource names longer than the 10 characters TS prints."""
    left = R.Signal(name="left_buffer_ring", pipeline_config=R.async_pipeline(1))
    right = R.Signal(name="left_buffer_rope", pipeline_config=R.async_pipeline(1))

    @schedule
    def ping(left, right):
        with domain_loop(0, 2, 1):
            right.wait()
            right.consume()
            right.release()
            left.acquire()
            left.produce()
            left.commit()

    @schedule
    def pong(left, right):
        with domain_loop(0, 2, 1):
            left.wait()
            left.consume()
            left.release()
            right.acquire()
            right.produce()
            right.commit()

    tasks = [Task([right], [left], 0, 1, schedule=ping(left, right), name="Ping"),
             Task([left], [right], 1, 1, schedule=pong(left, right), name="Pong")]
    return {"tasks": tasks, "resource_dependency_graph": {left: [right], right: [left]}}


def idle_copy(end: int = 0) -> dict:
    """A producer/consumer pair whose loop runs ``end`` iterations (0: the instance does no work)."""
    smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(2))

    @schedule
    def producer(smem):
        with domain_loop(0, end, 1):
            smem.acquire()
            smem.produce()
            smem.commit()

    @schedule
    def consumer(smem):
        with domain_loop(0, end, 1):
            smem.wait()
            smem.consume()
            smem.release()

    tasks = [Task([], [smem], 0, 1, schedule=producer(smem), name="Producer"),
             Task([smem], [], 1, 1, schedule=consumer(smem), name="Consumer")]
    return {"tasks": tasks, "resource_dependency_graph": {smem: []}}


def persistent_pair(stages: int = 2, rows: int = 1, *, skip: bool = False, signal_outside: bool = False) -> dict:
    """Persistent producer -> consumer through ``smem`` (``stages`` slots, ``rows`` iterations per tile).

    ``skip``: tiles can be skipped (the loop sits in ``skippable()``);
    ``signal_outside``: a second pipeline, used once per tile outside
    ``skippable()``, so skipped tiles still move credits.
    """
    smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(stages))
    flag = R.Signal(name="flag", pipeline_config=R.async_pipeline(1))
    wq = R.static_queue(cls=OversubscribedQueue if skip else None)
    skip_if = OversubscribedQueue.skip_work_tile_if if skip else None

    def tail(wq):
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()

    @schedule
    def producer(smem, flag, wq):
        with work_tile_loop(wq, skip_if=skip_if) as wtl:
            with (wtl.skippable() if skip else _nothing()):
                with domain_loop(0, rows, 1):
                    smem.acquire()
                    smem.produce()
                    smem.commit()
            if signal_outside:
                flag.acquire()
                flag.produce()
                flag.commit()
            tail(wq)

    @schedule
    def consumer(smem, flag, wq):
        with work_tile_loop(wq, skip_if=skip_if) as wtl:
            with (wtl.skippable() if skip else _nothing()):
                with domain_loop(0, rows, 1):
                    smem.wait()
                    smem.consume()
                    smem.release()
            if signal_outside:
                flag.wait()
                flag.consume()
                flag.release()
            tail(wq)

    extra = [flag] if signal_outside else []
    tasks = [Task([wq], [smem, *extra], 0, 1, schedule=producer(smem, flag, wq), name="Producer"),
             Task([smem, *extra, wq], [], 1, 1, schedule=consumer(smem, flag, wq), name="Consumer")]
    graph = {smem: [wq], wq: []}
    if signal_outside:
        graph[flag] = []
    return {"tasks": tasks, "resource_dependency_graph": graph}


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
