"""Schedules that break one grammar rule each; the line marked ``# <-`` is the culprit.

Each ``CASES`` entry: rule slug -> function returning ``record(...)`` of the broken schedule.
"""

from __future__ import annotations

from typing import Callable

from cutlass.experimental.task_scheduling import when_false, when_true
from cutlass.experimental.task_scheduling.enums import FIRST_ITER
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, work_tile_loop

from cutlass.experimental.task_scheduling.task import Task

from ts_explore import record
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue


def _src() -> R.GmemSource:
    return R.GmemSource(name="src")


def _dst() -> R.GmemSink:
    return R.GmemSink(name="dst")


def _smem() -> R.SmemBuffer:
    return R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2))


def workqueue_in_skippable():
    def sched(copy, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if) as wtl:
            with wtl.skippable():
                with domain_loop(0, 4, 1):
                    copy.copy_tile_row()
                wq.try_wait()  # <-
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()

    return record(sched, R.TileCopy(name="copy"), R.static_queue(cls=OversubscribedQueue))


def domain_loop_not_skippable():
    def sched(copy, wq):
        with work_tile_loop(wq, skip_if=OversubscribedQueue.skip_work_tile_if):
            with domain_loop(0, 4, 1):  # <-
                copy.copy_tile_row()
            wq.release()

    return record(sched, R.TileCopy(name="copy"), R.static_queue(cls=OversubscribedQueue))


def skippable_needs_skip_if():
    def sched(copy, wq):
        with work_tile_loop(wq) as wtl:
            with wtl.skippable():  # <-
                with domain_loop(0, 4, 1):
                    copy.copy_tile_row()

    return record(sched, R.TileCopy(name="copy"), R.static_queue())


def nested_domain_loop():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            with domain_loop(0, 2, 1):  # <-
                dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def work_tile_loop_not_top_level():
    def sched(src, wq):
        with domain_loop(0, 4, 1):
            with work_tile_loop(wq):  # <-
                pass

    return record(sched, _src(), R.static_queue())


def two_work_tile_loops():
    def sched(copy, wq):
        with work_tile_loop(wq):
            with domain_loop(0, 4, 1):
                copy.copy_tile_row()
        with work_tile_loop(wq):  # <-
            pass

    return record(sched, R.TileCopy(name="copy"), R.static_queue())


def step_outside_work_tile_loop():
    def sched(copy, wq):
        copy.copy_tile_row()
        with work_tile_loop(wq):  # <-
            with domain_loop(0, 4, 1):
                copy.copy_tile_row()

    return record(sched, R.TileCopy(name="copy"), R.static_queue())


def block_after_work_tile_loop():
    def sched(copy, wq):
        with work_tile_loop(wq):
            pass
        with domain_loop(0, 4, 1):  # <-
            copy.copy_tile_row()

    return record(sched, R.TileCopy(name="copy"), R.static_queue())


def guard_outside_loop():
    def sched(src, dst):
        with when_true(FIRST_ITER):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def nested_guard():
    def sched(src, dst):
        with domain_loop(0, 4, 1) as d:
            with d.first_iter():
                with d.last_iter():  # <-
                    dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def negated_iteration_guard():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            with when_false(FIRST_ITER):  # <-
                dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def condition_not_output():
    def sched(smem):
        with domain_loop(0, 4, 1):
            token = smem.acquire()
            with when_true(token):  # <-
                smem.commit()

    return record(sched, _smem())


def stale_loop_handle():
    def sched(src, dst):
        with domain_loop(0, 4, 1) as d:
            dst.set_item(src.get_item())
        with d.first_iter():  # <-
            pass

    return record(sched, _src(), _dst())


def stale_token():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            old = src.get_item()
            dst.set_item(src.get_item())
            dst.set_item(old)  # <-

    return record(sched, _src(), _dst())


def constexpr_token():
    def sched(src, dst):
        with domain_loop(0, 2, 1):
            frag = src.load(slot_index=0)
            dst.store(frag=frag, slot_index=frag)  # <-

    return record(sched, R.SlotSource(name="src"), R.SlotSink(name="dst"))


def constexpr_missing():
    def sched(src, dst):
        with domain_loop(0, 2, 1):
            frag = src.load()  # <-
            dst.store(frag=frag, slot_index=0)

    return record(sched, R.SlotSource(name="src"), R.SlotSink(name="dst"))


def missing_input():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            src.get_item()
            dst.set_item()  # <-

    return record(sched, _src(), _dst())


def unknown_argument():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            dst.set_item(data=src.get_item(), extra=1)  # <-

    return record(sched, _src(), _dst())


def input_pipeline_token():
    def sched(smem, dst):
        with domain_loop(0, 4, 1):
            token = smem.acquire()
            dst.set_item(data=token)  # <-

    return record(sched, _smem(), _dst())


def input_not_token():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            dst.set_item(data=3)  # <-

    return record(sched, _src(), _dst())


def single_output_unpacked():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            a, b = src.get_item()  # <-

    return record(sched, _src(), _dst())


def domain_step_zero():
    def sched(src, dst):
        with domain_loop(0, 4, 0):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def domain_bounds():
    def sched(src, dst):
        with domain_loop():  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def skip_if_not_queue_method():
    queue = R.static_queue(cls=OversubscribedQueue)

    def sched(copy, wq):
        with work_tile_loop(wq, skip_if=queue.skip_work_tile_if) as wtl:  # <-
            with wtl.skippable(), domain_loop(0, 4, 1):
                copy.copy_tile_row()

    return record(sched, R.TileCopy(name="copy"), queue)


def variable_as_method():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            src.item()  # <-

    return record(sched, _src(), _dst())


def workqueue_shorthand():
    def sched(copy, wq):
        with work_tile_loop(wq):
            with domain_loop(0, 4, 1):
                copy.copy_tile_row()
            wq.consumer_work()  # <-

    return record(sched, R.TileCopy(name="copy"), R.static_queue())


def unknown_method():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            src.get_itme()  # <-

    return record(sched, _src(), _dst())


def bad_every():
    def sched(src, dst):
        with domain_loop(0, 4, 1) as d:
            with d.every(0):  # <-
                dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def python_error():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            dst.set_item(data=undefined_name)  # noqa: F821  # <-

    return record(sched, _src(), _dst())


CASES: dict[str, Callable[[], object]] = {
    fn.__name__.replace("_", "-"): fn
    for fn in (
        workqueue_in_skippable,
        domain_loop_not_skippable,
        skippable_needs_skip_if,
        nested_domain_loop,
        work_tile_loop_not_top_level,
        two_work_tile_loops,
        step_outside_work_tile_loop,
        block_after_work_tile_loop,
        guard_outside_loop,
        nested_guard,
        negated_iteration_guard,
        condition_not_output,
        stale_loop_handle,
        stale_token,
        constexpr_token,
        constexpr_missing,
        missing_input,
        unknown_argument,
        input_pipeline_token,
        input_not_token,
        single_output_unpacked,
        domain_step_zero,
        domain_bounds,
        skip_if_not_queue_method,
        variable_as_method,
        workqueue_shorthand,
        unknown_method,
        bad_every,
        python_error,
    )
}


# -- recorded cleanly, rejected by Task(schedule=...): a Problem with the schedule still drawn --------------


class LengthTask(Task):
    """A Task subclass with the per-tile bound under the name the guide once used."""

    def get_domain_size(self, work_tile_coord):  # noqa: ANN001
        return 4

    def get_domain(self, work_tile_coord):  # noqa: ANN001
        return 4


def two_domain_loops():
    def sched(src, dst):
        with domain_loop(0, 4, 1):
            dst.set_item(src.get_item())
        with domain_loop(0, 2, 1):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def no_domain_loop():
    def sched(src, dst):  # <-
        dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def dynamic_domain_name():
    def sched(src, dst):
        with domain_loop(0, LengthTask.get_domain_size, 1):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def dynamic_start_step():
    def sched(src, dst):
        with domain_loop(LengthTask.get_domain, 8, 1):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def unroll_not_int():
    def sched(src, dst):
        with domain_loop(0, 4, 1, unroll=2.5):  # <-
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def guard_outside_domain_loop():
    def sched(flags, smem):
        flag = flags.needs_epilogue()
        with when_true(flag):  # <-
            smem.acquire()
            smem.commit()
        with domain_loop(0, 2, 1):
            smem.acquire()
            smem.commit()

    return record(sched, R.EpilogueSmem(name="flags"), R.Signal(name="smem", pipeline_config=R.async_pipeline(1)))


TASK_CASES: dict[str, Callable[[], object]] = {
    "two-domain-loops": two_domain_loops,
    "no-domain-loop": no_domain_loop,
    "dynamic-domain-name": dynamic_domain_name,
    "dynamic-start-step": dynamic_start_step,
    "unroll-not-int": unroll_not_int,
    "guard-outside-loop": guard_outside_domain_loop,
}


# -- not a schedule at all --------------------------------------------------------------------------------


def none_schedule():
    return record(None, _src(), _dst())  # <-


def async_schedule():
    async def sched(src, dst):  # <-
        with domain_loop(0, 4, 1):
            dst.set_item(src.get_item())

    return record(sched, _src(), _dst())


def generator_schedule():
    def sched(src, dst):  # <-
        with domain_loop(0, 4, 1):
            dst.set_item(src.get_item())
        yield

    return record(sched, _src(), _dst())


NOT_SCHEDULES: dict[str, Callable[[], object]] = {
    "not-a-schedule": none_schedule,
    "async-schedule": async_schedule,
    "generator-schedule": generator_schedule,
}
