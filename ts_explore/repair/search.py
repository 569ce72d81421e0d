"""The repair search: try small edits of an UNSAFE task set, keep those ts-explore proves SAFE.

1. Read the verdict's counterexample into suspects
   (:func:`~ts_explore.repair.candidates.guidance`) and list single edits,
   most likely first, smallest first.
2. Apply each to the model, skip duplicates (by normal form), write it onto
   fresh TS tasks (:func:`~ts_explore.reader.materialise.materialise`; a
   schedule TS cannot lower is refused) and screen it with our search over
   the runs the instance needs.
3. A clean candidate is proven with ``verify(checker="reduced")``: TS's
   ``TaskManager`` structure and credit checks, and our search on every run
   and tile count the instance needs. Only a SAFE verdict makes a repair.
4. With nothing proven at depth 1, the candidates that got furthest (longest
   counterexample, most runs clean) get a second edit, guided by what their
   own search found.

The search is bounded in time (``seconds``) and depth, reports progress and
can be cancelled; its answer says what it tried.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from ..model import TaskSet
from ..model.verdict import Verdict
from .candidates import Suspects, candidates, guidance
from .edits import AddStage, Edit, EditError, adds_stage
from .result import Repair, Repairs
from .tree_ops import normalise_task, work_steps

Build = Callable[[], dict[str, Any]]
Progress = Callable[[int, int, float], None]

DEFAULT_SECONDS = 2.0
SECOND_EDIT_BASES = 6


def normal_form(task_set: TaskSet) -> TaskSet:
    """The task set as capture would give it back (see :func:`~ts_explore.repair.tree_ops.normalise`)."""
    return dataclasses.replace(task_set, tasks=tuple(normalise_task(t) for t in task_set.tasks))


def _size(edit: Edit) -> int:
    return len(edit.touched())


def _keeps_work(before: TaskSet, after: TaskSet) -> bool:
    return all(work_steps(a.schedule) >= work_steps(b.schedule) for b, a in zip(before.tasks, after.tasks))


class _Search:
    def __init__(self, base: TaskSet, build: Build, seconds: float, limit: int, progress: Progress | None,
                 cancel: Any, verify_kwargs: dict[str, Any]) -> None:
        self.base = base
        self.build = build
        self.deadline = time.perf_counter() + seconds
        self.start = time.perf_counter()
        self.limit = limit
        self.progress = progress
        self.cancel = cancel
        self.verify_kwargs = verify_kwargs
        self.seen: set[Any] = {normal_form(base)}
        self.found: list[Repair] = []
        self.checked = self.refused = self.proved = 0
        self.kinds: dict[str, int] = {}
        self.screening = True
        self.near: list[tuple[tuple[int, int], tuple[Edit, ...], TaskSet, Any]] = []
        self.last_report = 0.0

    def stopped(self) -> bool:
        return time.perf_counter() > self.deadline or bool(self.cancel is not None and self.cancel.is_set())

    def report(self) -> None:
        now = time.perf_counter()
        if self.progress is not None and now - self.last_report > 0.1:
            self.last_report = now
            self.progress(self.checked, len(self.found), now - self.start)

    def materialise(self, model: TaskSet) -> dict[str, Any] | None:
        from ..reader.materialise import materialise

        try:
            return materialise(self.base, model, self.build)
        except Exception:  # noqa: BLE001 - TS refusing to lower the edited schedule refuses the candidate
            self.refused += 1
            return None

    def try_edits(self, edits: tuple[Edit, ...], model: TaskSet) -> None:
        from ..reader.repair_runs import screen

        norm = normal_form(model)
        if norm in self.seen or not _keeps_work(self.base, model):
            return
        self.seen.add(norm)
        for e in edits:
            self.kinds[e.kind] = self.kinds.get(e.kind, 0) + 1
        fresh = self.materialise(model)
        if fresh is None:
            return
        self.checked += 1
        self.report()
        if self.screening:
            try:
                result = screen(list(fresh["tasks"]), cancel=self.cancel)
            except Exception:  # noqa: BLE001 - a candidate TS's setup rejects is refused
                self.refused += 1
                return
            if not result.clean:
                if result.finding not in ("capped", "cancelled"):
                    self.near.append(((result.runs_passed, result.depth), edits, model, result))
                return
        self.prove(edits, model, norm)

    def prove(self, edits: tuple[Edit, ...], model: TaskSet, norm: TaskSet) -> None:
        import ts_explore

        fresh = self.materialise(model)
        if fresh is None:
            return
        verdict = ts_explore.verify(**fresh, checker="reduced", cancel=self.cancel, **self.verify_kwargs)
        if not verdict.ok:
            return
        self.proved += 1
        sentences, current = [], self.base
        for e in edits:
            sentences.append(e.sentence(current))
            current = e.apply(current)
        added = sum(AddStage.bytes_of(self.base.resource(e.resource)) for e in edits if isinstance(e, AddStage))
        self.found.append(Repair(edits, tuple(sentences), self.base, model, norm, verdict, added, len(self.found),
                                 self.build))

    def full(self) -> bool:
        return len(self.found) >= self.limit


def _ranked(edits: list[Edit]) -> list[Edit]:
    return sorted(edits, key=lambda e: (_size(e), adds_stage(e)))


def search_repairs(verdict: Verdict, build: Build, base: TaskSet, *, seconds: float = DEFAULT_SECONDS,
                   depth: int = 2, limit: int = 5, progress: Progress | None = None, cancel: Any = None,
                   verify_kwargs: dict[str, Any] | None = None) -> Repairs:
    """Ranked proven repairs of ``verdict`` (see the module docstring)."""
    from ..reader.materialise import materialise
    from ..reader.repair_runs import screen

    s = _Search(base, build, seconds, limit, progress, cancel, dict(verify_kwargs or {}))
    suspects = guidance(verdict, base)
    s.screening = not screen(list(materialise(base, base, build)["tasks"])).clean
    first = _ranked(candidates(base, suspects))
    for edit in first:
        if s.stopped() or s.full():
            break
        try:
            model = edit.apply(base)
        except EditError:
            continue
        s.try_edits((edit,), model)
    exhausted_first = not s.stopped() and not s.full()
    second = 0
    if depth >= 2 and not s.found and not s.stopped():
        bases = sorted(s.near, key=lambda n: n[0], reverse=True)[:SECOND_EDIT_BASES]
        plans = []
        for rank, (_score, edits, model, result) in enumerate(bases):
            more = suspects.merged(Suspects(result.resources, result.tasks))
            for i, e2 in enumerate(_ranked(candidates(model, more))):
                plans.append((_size(edits[0]) + _size(e2), i, rank, edits, model, e2))
        plans.sort(key=lambda p: p[:3])
        for _total, _i, _rank, edits, model, e2 in plans:
            if s.stopped() or s.full():
                break
            try:
                model2 = e2.apply(model)
            except EditError:
                continue
            second += 1
            s.try_edits((*edits, e2), model2)
    elapsed = time.perf_counter() - s.start
    found = tuple(sorted(s.found, key=lambda r: r.rank_key()))
    cancelled = bool(cancel is not None and cancel.is_set())
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(s.kinds.items()))
    stop = ("cancelled" if cancelled else f"stopped at the {seconds:g} s bound" if time.perf_counter() > s.deadline
            else "every candidate within the bound tried")
    tried = (f"tried {s.checked} candidate schedule(s) in {elapsed:.2f} s ({kinds or 'no edits'}; "
             f"{s.refused} refused by TS while lowering, {second} with a second edit); {stop}; "
             f"{len(found)} proven SAFE")
    if not found:
        tried = "no repair found: " + tried + (f" (edit depth <= {depth})")
    return Repairs(found, tried, s.checked, s.proved, elapsed, exhausted_first and stop.startswith("every"),
                   cancelled)


__all__ = ["DEFAULT_SECONDS", "normal_form", "search_repairs"]
