"""Repairs of the gallery: proven SAFE through verify, accepted by TS's TaskManager, never dropping work."""

from __future__ import annotations

import contextlib
import io
import threading

import pytest
from cutlass.experimental.task_scheduling.task_manager import TaskManager

import ts_explore
from ts_explore import gallery
from ts_explore.repair import MoveSteps, RemoveStep, Repairs
from ts_explore.repair.edits import EditError
from ts_explore.repair.search import normal_form
from ts_explore.repair.tree_ops import work_steps

from repair_support import LAYOUT_ONLY, SCHEDULE_CASES, capture, gallery_repairs


def _twin_size(name: str) -> int:
    """Steps (and loop headers) the gallery's own fix changes: steps out of place plus changed loops."""
    from ts_explore.repair.result import _moved

    broken, fixed = capture(gallery.get(name).broken), capture(gallery.get(name).fixed)
    size = 0
    for b, f in zip(broken.tasks, fixed.tasks):
        key = lambda s: (s.resource, s.stage, s.label)  # noqa: E731
        old = [key(s) for s in b.schedule.steps()]
        new = [key(s) for s in f.schedule.steps()]
        ids_old = list(range(len(old)))
        # the same call may repeat: match by (call, occurrence)
        tag = lambda seq: [(k, seq[:i].count(k)) for i, k in enumerate(seq)]  # noqa: E731
        t_old, t_new = tag(old), tag(new)
        size += len(_moved(t_old, t_new)) if ids_old else 0
        size += sum(1 for k in t_old if k not in t_new)
        lb, lf = b.schedule.domain_loop(), f.schedule.domain_loop()
        size += int((lb.start, lb.end, lb.step) != (lf.start, lf.end, lf.step))
    return size


@pytest.mark.parametrize("name", SCHEDULE_CASES)
def test_gallery_fix_or_smaller_ranked_first_or_second(name: str) -> None:
    found = gallery_repairs(name)
    assert found, found.tried
    fixed = [t.schedule for t in normal_form(capture(gallery.get(name).fixed)).tasks]
    top_two = list(found)[:2]
    same = any([t.schedule for t in r.after.tasks] == fixed for r in top_two)
    assert same or found[0].size <= _twin_size(name), (found.summary(), _twin_size(name))


@pytest.mark.parametrize("name", SCHEDULE_CASES)
def test_every_repair_reverifies_safe_and_task_manager_accepts_it(name: str) -> None:
    for repair in gallery_repairs(name):
        assert repair.proof.ok
        assert ts_explore.verify(**repair.task_set()).ok, repair.sentence  # TS's own BFS and checks too
        args = repair.task_set()
        with contextlib.redirect_stdout(io.StringIO()):
            TaskManager(args["tasks"], args["resource_dependency_graph"], verbose=False)


@pytest.mark.parametrize("name", SCHEDULE_CASES)
def test_repairs_keep_every_work_step_and_capture_back_to_their_model(name: str) -> None:
    for repair in gallery_repairs(name):
        for before, after in zip(repair.before.tasks, repair.after.tasks):
            assert work_steps(after.schedule) >= work_steps(before.schedule), repair.sentence
        again = capture(repair.task_set)
        assert again.tasks == repair.after.tasks, repair.sentence


def test_repairs_are_ranked_smallest_first_and_say_what_they_do() -> None:
    found = gallery_repairs("missing_release")
    sizes = [r.rank_key() for r in found]
    assert sizes == sorted(sizes)
    assert found[0].sentence == "task `Store`: insert `smem.release()` after `gmem_out.set_item()`"
    assert "1. task `Store`" in found.summary() and "proven SAFE" in found.tried


def test_a_repair_never_removes_work() -> None:
    ts = capture(gallery.get("missing_release").broken)
    read = next(s for s in ts.task("Store").schedule.steps() if s.label == "read")
    with pytest.raises(EditError, match="never removes work"):
        RemoveStep("Store", read.uid).apply(ts)


def test_a_case_with_no_repair_within_the_bound_says_what_was_tried() -> None:
    found = ts_explore.repairs(gallery.get(LAYOUT_ONLY).broken, depth=1, seconds=10)
    assert not found
    assert found.tried.startswith("no repair found: tried ")
    assert "candidate schedule(s)" in found.tried and "edit depth <= 1" in found.tried


def test_verdict_repairs_and_errors_name_the_fix() -> None:
    case = gallery.get("pdl_launch_before_wait")
    v = ts_explore.verify(**case.broken())
    found = v.repairs(case.broken)
    assert "launch_griddep" in found[0].sentence
    with pytest.raises(TypeError, match="pass build="):
        v.repairs()
    with pytest.raises(ValueError, match="different schedules"):
        v.repairs(gallery.get("cross_wait").broken)
    safe = ts_explore.repairs(case.fixed)
    assert not safe and safe.tried == "nothing to repair: the schedule is proven SAFE"


def test_cancel_stops_the_search_and_says_so() -> None:
    flag = threading.Event()
    flag.set()
    found = ts_explore.repairs(gallery.get("cross_wait").broken, cancel=flag)
    assert isinstance(found, Repairs) and found.cancelled and "cancelled" in found.tried


def test_progress_reports_candidates_checked() -> None:
    seen: list[tuple[int, int, float]] = []
    ts_explore.repairs(gallery.get("cycle_of_three").broken, depth=1, progress=lambda *a: seen.append(a))
    assert seen and seen[-1][0] >= seen[0][0] >= 1


def test_move_edits_compose_and_keep_uids() -> None:
    ts = capture(gallery.get("cross_wait").broken)
    ping = ts.task("Ping").schedule
    uids = [s.uid for s in ping.steps()]
    first = MoveSteps("Ping", (uids[0], uids[1], uids[2]), uids[5], True)
    moved = first.apply(ts)
    assert [s.uid for s in moved.task("Ping").schedule.steps()] == uids[3:] + uids[:3]
    back = MoveSteps("Ping", (uids[0], uids[1], uids[2]), uids[3], False).apply(moved)
    assert back == ts


def test_a_build_returning_a_pair_or_a_wrong_value() -> None:
    case = gallery.get("missing_release")

    def pair():
        d = case.broken()
        return d["tasks"], d["resource_dependency_graph"]

    assert ts_explore.repairs(pair, depth=1)[0].sentence.startswith("task `Store`: insert")
    with pytest.raises(TypeError, match="build\\(\\) must return"):
        ts_explore.repairs(lambda: 3)


def test_an_inconclusive_verdict_is_not_repaired_and_says_why() -> None:
    case = gallery.get("cross_wait")
    capped = ts_explore.verify(**case.fixed(), checker="reduced", max_states=2)
    assert capped.status.value == "inconclusive"
    found = ts_explore.repairs(capped, case.fixed)
    assert not found and "INCONCLUSIVE, not UNSAFE" in found.tried
