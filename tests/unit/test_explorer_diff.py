"""The schedule diff: steps matched by what they do, classified as added, removed or moved."""

from __future__ import annotations

from explorer_support import COPY

from ts_explore.analysis.diff import Change, diff_task_sets, diff_trees
from ts_explore.reader import capture_task_set
from ts_explore.model import (
    Block,
    BlockKind,
    Bound,
    DomainLoop,
    Family,
    QueueKind,
    ScheduleTree,
    Section,
    Stage,
    Step,
)

def step(uid: int, resource: str, stage: Stage, label: str | None = None, section: Section = Section.LOOP) -> Step:
    return Step(uid, resource, stage, label, 0, section, Family.PRODUCER_WORK)


def loop(*body) -> DomainLoop:
    return DomainLoop(Bound.of_int(0), Bound.of_int(4), Bound.of_int(1), None, tuple(body))


def tree(*body) -> ScheduleTree:
    return ScheduleTree("s", ("a", "b"), tuple(body))


ACQ, WORK, COMMIT = Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_WORK, Stage.PRODUCER_COMMIT


def test_identical_trees_have_no_changes() -> None:
    t = tree(loop(step(0, "a", ACQ), step(1, "a", WORK, "fill"), step(2, "a", COMMIT)))
    d = diff_trees(t, t)
    assert d.status == "same" and not d.of(Change.ADDED) and not d.of(Change.MOVED)


def test_inserted_step_is_added_and_later_steps_are_not_moved() -> None:
    old = tree(loop(step(0, "a", ACQ), step(1, "a", COMMIT)))
    new = tree(loop(step(0, "a", ACQ), step(1, "a", WORK, "fill"), step(2, "a", COMMIT)))
    d = diff_trees(old, new)
    assert [(s.change, s.title) for s in d.steps if s.change is not Change.SAME] == [(Change.ADDED, "a.fill")]
    assert d.change_of(2) is Change.SAME  # the commit was renumbered, not moved


def test_removed_step_keeps_its_old_place() -> None:
    old = tree(loop(step(0, "a", ACQ), step(1, "a", COMMIT)))
    new = tree(loop(step(0, "a", ACQ)))
    (removed,) = diff_trees(old, new).of(Change.REMOVED)
    assert removed.title == "a.commit" and removed.old_place == "domain_loop" and removed.new_uid is None


def test_step_moved_into_a_guard_or_reordered_counts_as_moved() -> None:
    old = tree(loop(step(0, "a", ACQ), step(1, "b", WORK, "fill"), step(2, "a", COMMIT)))
    guarded = tree(loop(step(0, "a", ACQ), Block(BlockKind.FIRST_ITER, (step(1, "b", WORK, "fill"),)),
                        step(2, "a", COMMIT)))
    (moved,) = diff_trees(old, guarded).of(Change.MOVED)
    assert moved.old_place == "domain_loop" and moved.new_place == "domain_loop > first_iter()"
    reordered = tree(loop(step(0, "a", ACQ), step(1, "a", COMMIT), step(2, "b", WORK, "fill")))
    d = diff_trees(old, reordered)
    assert len(d.of(Change.MOVED)) == 1 and not d.of(Change.ADDED) and not d.of(Change.REMOVED)
    assert "changed order" in d.of(Change.MOVED)[0].description


def _task_set(**overrides):
    built = COPY.build(COPY.config(**overrides))
    return capture_task_set(built.tasks, built.resource_dependency_graph)


def test_task_set_diff_static_to_clc_adds_the_scheduler_and_notes_the_queue() -> None:
    d = diff_task_sets(_task_set(queue=QueueKind.STATIC), _task_set(queue=QueueKind.CLC, forget_commit=True))
    assert d.task("scheduler").status == "added"
    assert d.count(Change.ADDED) == 8  # the scheduler's fetch + queue epilogue
    assert [s.title for s in d.task("producer").of(Change.REMOVED)] == ["smem.commit"]
    assert any("[clc]" in note for note in d.task("producer").notes)
    assert any(note.startswith("resource wq") for note in d.notes)
    back = diff_task_sets(_task_set(queue=QueueKind.CLC), _task_set(queue=QueueKind.STATIC))
    assert back.task("scheduler").status == "removed" and "task gone: scheduler" in back.summary()
