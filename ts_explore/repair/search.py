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
from .edits import Edit, EditError, adds_stage
from .structure_edits import AddStage
from ..check.from_model import NotSupported, problem_from_model
from .result import Repair, Repairs
from .screen import Screen, screen
from .tree_ops import normalise_task, work_steps

Build = Callable[[], dict[str, Any]]
Progress = Callable[[int, int, float], None]

DEFAULT_SECONDS = 2.0
SECOND_EDIT_BASES = 10
FIRST_EDIT_SHARE = 0.4  # of the bound, for single edits before two-edit repairs are tried (then the rest)
CLEAN = 1_000  # score of a candidate the search found nothing in (refused by a TS check or the proof)
ALTERNATIVES_S = 0.2  # after the first proven repair, how long to look for others as small


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
        self.near: list[tuple[tuple[int, int], tuple[Edit, ...], TaskSet, Any]] = []
        self.last_report = 0.0
        self.early = False
        self.graced = False
        self.grace = max(ALTERNATIVES_S, 0.1 * seconds)  # time for alternatives once one repair is proven
        self.found_at = 0.0
        self.smallest = False
        self.bench: Any = None
        self.facts: list[Any] | None = None  # per run, for problems built from the model
        self.from_model = self.through_ts = self.structure = 0
        self.slowest = 0.0  # seconds of the slowest candidate so far (screen and proof)

    def stopped(self) -> bool:
        """Past the bound (or too close to it to finish one more candidate), past the grace after the first repair,
        or cancelled."""
        now = time.perf_counter()
        if self.found and now > self.found_at + self.grace:
            self.graced = True
            return True
        return now + self.slowest > self.deadline or bool(self.cancel is not None and self.cancel.is_set())

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
        began = time.perf_counter()
        try:
            self._try(edits, model)
        finally:
            self.slowest = max(self.slowest, time.perf_counter() - began)

    def _try(self, edits: tuple[Edit, ...], model: TaskSet) -> None:
        norm = normal_form(model)
        if norm in self.seen or not _keeps_work(self.base, model):
            return
        self.seen.add(norm)
        kind = edits[-1].kind  # counted by the edit that made the candidate
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        result = self.screen(model)  # a finding rules the candidate out, whatever else failed
        if result is None:
            return
        if not result.clean:
            if result.finding not in ("capped", "cancelled"):
                self.near.append(((result.runs_passed, result.depth), edits, model, result))
            return
        refusal = self.structure_refusal(model)
        if refusal is not None:  # no finding left: the most promising first edit for a second
            named = Screen(False, "structure", tuple(t.name for t in model.tasks if t.name and t.name in refusal),
                           tuple(r.name for r in model.resources if f"'{r.name}'" in refusal))
            self.near.append(((CLEAN, 0), edits, model, named))
            return
        self.prove(edits, model, norm)

    def screen(self, model: TaskSet) -> Screen | None:
        """Screen a candidate: problems built from the model when it can, else through TS (None: refused)."""
        from ..reader.repair_runs import run_problems

        if self.facts is not None:
            try:
                problems = [problem_from_model(model, f) for f in self.facts]
            except NotSupported:
                self.through_ts += 1
            else:
                self.checked += 1
                self.from_model += 1
                self.report()
                return screen(problems, cancel=self.cancel)
        try:
            tasks = self.bench.lower(model)
        except Exception:  # noqa: BLE001 - TS refusing to lower the edited schedule refuses the candidate
            self.refused += 1
            self.bench.undo()
            return None
        self.checked += 1
        self.report()
        try:
            return screen(run_problems(tasks), cancel=self.cancel)
        except Exception:  # noqa: BLE001 - a candidate TS's check setup rejects is refused
            self.refused += 1
            return None
        finally:
            self.bench.undo()

    def structure_refusal(self, model: TaskSet) -> str | None:
        """TS's cheap structure checks (work bracketing, queue placement, DMA and PDL order) before a proof."""
        from ..reader.repair_runs import structure_refusal

        try:
            tasks = self.bench.lower(model)
            extra = {k: v for k, v in self.bench.fresh.items() if k not in ("tasks", "resource_dependency_graph")}
            refusal = structure_refusal(tasks, self.bench.graph, **extra)
        except Exception:  # noqa: BLE001 - TS refusing to lower the edited schedule refuses the candidate
            refusal = "TS refuses to lower it"
        finally:
            self.bench.undo()
        if refusal is not None:
            self.structure += 1
        return refusal

    def prove(self, edits: tuple[Edit, ...], model: TaskSet, norm: TaskSet) -> None:
        from ..verification.verify import verify

        fresh = self.materialise(model)
        if fresh is None:
            return
        verdict = verify(**fresh, checker="reduced", cancel=self.cancel, **self.verify_kwargs)
        if not verdict.ok:
            self.near.append(((CLEAN, 0), edits, model, Screen(False, "proof", tuple(verdict_tasks(verdict)))))
            return
        self.proved += 1
        sentences, current = [], self.base
        for e in edits:
            sentences.append(e.sentence(current))
            current = e.apply(current)
        added = sum(AddStage.bytes_of(self.base.resource(e.resource)) for e in edits if isinstance(e, AddStage))
        if not self.found:
            self.found_at = time.perf_counter()
        self.found.append(Repair(edits, tuple(sentences), self.base, model, norm, verdict, added, len(self.found),
                                 self.build))

    def full(self) -> bool:
        return len(self.found) >= self.limit


def _second_edit_bases(near: list[Any]) -> list[Any]:
    """The first edits to extend: the two that got furthest of each kind, then the furthest others."""
    ranked = sorted(near, key=lambda n: n[0], reverse=True)
    picked: list[Any] = []
    per_kind: dict[str, int] = {}
    for entry in ranked:
        kind = entry[1][0].kind
        if per_kind.get(kind, 0) < 2:
            per_kind[kind] = per_kind.get(kind, 0) + 1
            picked.append(entry)
    return picked + [e for e in ranked if all(e is not p for p in picked)]


def verdict_tasks(verdict: Verdict) -> list[str]:
    """Task names a failed proof's checks and findings mention (to guide a second edit)."""
    names = [t.name for t in verdict.task_set.tasks] if verdict.task_set else []
    text = " ".join(c.message for c in verdict.failed_checks) + " ".join(f.describe() for f in verdict.findings)
    return [n for n in names if n and n in text]


def _ranked(edits: list[Edit]) -> list[Edit]:
    return sorted(edits, key=lambda e: (_size(e), adds_stage(e)))


def _single_edits(s: _Search, edits: list[Edit], base: TaskSet, until: float) -> int:
    """Try single edits in rank order until ``until``; the number of edits gone through."""
    for done, edit in enumerate(edits):
        if s.stopped() or s.full() or time.perf_counter() > until:
            return done
        if s.found and _size(edit) > min(r.size for r in s.found):  # only larger edits are left
            s.smallest = True
            return len(edits)
        try:
            model = edit.apply(base)
        except EditError:
            continue
        s.try_edits((edit,), model)
    return len(edits)


def _second_edits(s: _Search, suspects: Suspects) -> int:
    """Extend the first edits that got furthest by a second edit, batch by batch; the number tried."""
    second = 0
    bases = _second_edit_bases(s.near)
    for batch in range(0, len(bases), SECOND_EDIT_BASES):  # the most promising first edits first
        plans = []
        for rank, (_score, edits, model, result) in enumerate(bases[batch:batch + SECOND_EDIT_BASES]):
            more = Suspects(result.resources, result.tasks).merged(suspects)  # its own finding first
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
        if s.found or s.stopped():
            s.early = bool(s.found) and not s.stopped()
            break
    return second


def search_repairs(verdict: Verdict, build: Build, base: TaskSet, *, seconds: float = DEFAULT_SECONDS,
                   depth: int = 2, limit: int = 5, progress: Progress | None = None, cancel: Any = None,
                   verify_kwargs: dict[str, Any] | None = None) -> Repairs:
    """Ranked proven repairs of ``verdict`` (see the module docstring)."""
    from ..reader.materialise import Workbench
    from ..reader.search_facts import capture_run_facts

    s = _Search(base, build, seconds, limit, progress, cancel, dict(verify_kwargs or {}))
    suspects = guidance(verdict, base)
    s.bench = Workbench(base, build)
    try:
        s.facts = [facts for _kwargs, facts in capture_run_facts(s.bench.tasks, s.bench.graph, base)]
    except NotSupported:
        s.facts = None
    first = _ranked(candidates(base, suspects))
    split = s.start + FIRST_EDIT_SHARE * seconds if depth >= 2 else float("inf")
    done = _single_edits(s, first, base, until=split)
    second = 0
    if depth >= 2 and not s.found and not s.stopped():
        second = _second_edits(s, suspects)
        if not s.found and not s.stopped():  # time left: the single edits not reached before the split
            _single_edits(s, first[done:], base, until=float("inf"))
    elapsed = time.perf_counter() - s.start
    found = tuple(sorted(s.found, key=lambda r: r.rank_key()))
    cancelled = bool(cancel is not None and cancel.is_set())
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(s.kinds.items()))
    if cancelled:
        stop = "cancelled"
    elif s.full():
        stop = f"stopped after {limit} proven repair(s)"
    elif s.graced:
        stop = f"looked {s.grace:g} s for alternatives after the first proven repair"
    elif s.stopped():
        stop = f"stopped at the {seconds:g} s bound"
    elif s.smallest:
        stop = "every edit as small as the smallest repair tried"
    elif s.early:
        stop = "stopped once two-edit repairs were proven (the most promising first edits were extended first)"
    else:
        stop = "every candidate within the bound tried"
    tried = (f"tried {s.checked} candidate schedule(s) in {elapsed:.2f} s ({kinds or 'no edits'}; "
             f"{s.refused} refused by TS while lowering, {second} with a second edit, {s.from_model} checked from "
             f"the model, {s.through_ts} through TS, {s.structure} refused by TS's structure checks); {stop}; "
             f"{len(found)} proven SAFE")
    if not found:
        tried = "no repair found: " + tried + (f" (edit depth <= {depth})")
    return Repairs(found, tried, s.checked, s.proved, elapsed, stop.startswith("every"),
                   cancelled)


__all__ = ["DEFAULT_SECONDS", "normal_form", "search_repairs"]
