"""``verify`` against TS on generated task sets: its answer equals TaskManager's, whichever engine searches.

For each generated set (``tests/task_set_generator.py``):

* ``verify(...).ok`` equals "TaskManager accepts it" (constructed with
  validation on, quietly), except where TS itself cannot decide (its BFS hits
  the state cap: TaskManager only warns) or a bound is a runtime value;
* ``verify(checker="auto")`` (ours, reduced) and ``verify(checker="ts")`` give
  the same status and failed checks, and for failures a shared kind of finding
  and, for deadlocks, the same blocked (task, resource, stage) steps.

Fast tier: ``TS_EXPLORE_VERIFY_SETS`` sets (default 120) in the default run;
``TS_EXPLORE_SOAK=1`` runs 5,000.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings

import pytest
from cutlass.experimental.task_scheduling.task_manager import TaskManager
from task_set_generator import generate

from ts_explore import gallery, verify
from ts_explore.model.verdict import Status

SOAK = os.environ.get("TS_EXPLORE_SOAK") == "1"
COUNT = 5000 if SOAK else int(os.environ.get("TS_EXPLORE_VERIFY_SETS", "120"))
SEEDS = range(50_000, 50_000 + COUNT)


def ts_accepts(case: dict) -> tuple[bool, bool]:
    """(TaskManager constructs without an error, its search hit the state cap)."""
    capped = False
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            TaskManager(**case, verbose=False)
            ok = True
        except (ValueError, AssertionError, RuntimeError, TypeError):
            ok = False
    capped = any("hit max_states" in str(w.message) for w in caught)
    return ok, capped


def signature(v) -> tuple:
    """What both engines must agree on: the status and which checks failed."""
    return v.status, frozenset(c.name for c in v.failed_checks)


def same_findings(ours, ref) -> str:
    """'' when the findings agree as far as a first-finding search can: a shared kind, the same deadlock.

    Both searches stop at their first bad state (TaskManager's early exit) and
    visit states in different orders, so a set that can both deadlock and race
    may be reported either way; a set that only deadlocks must show the same
    blocked (task, resource, stage) steps.
    """
    kinds, ref_kinds = {f.kind for f in ours.findings}, {f.kind for f in ref.findings}
    if bool(kinds) != bool(ref_kinds) or (kinds and not kinds & ref_kinds):
        return f"finding kinds {sorted(kinds)} vs {sorted(ref_kinds)}"
    if kinds == ref_kinds == {"deadlock"}:
        blocked = {frozenset((b.task, b.resource, b.stage.value) for b in d.blocked) for d in ours.deadlocks}
        ref_blocked = {frozenset((b.task, b.resource, b.stage.value) for b in d.blocked) for d in ref.deadlocks}
        if not blocked & ref_blocked:
            return f"blocked steps {blocked} vs {ref_blocked}"
    return ""


def _chunks(seeds: range, n: int) -> list[range]:
    step = max(1, len(seeds) // n)
    return [range(s, min(s + step, seeds.stop)) for s in range(seeds.start, seeds.stop, step)]


@pytest.mark.parametrize("seeds", _chunks(SEEDS, 4), ids=lambda r: f"{r.start}-{r.stop - 1}")
def test_verify_agrees_with_task_manager_and_between_engines(seeds: range) -> None:
    decided = 0
    for seed in seeds:
        spec = generate(seed, max_tasks=4 if SOAK else 3, max_iterations=4)
        ours = verify(**spec.build())
        reference = verify(**spec.build(), checker="ts")
        accepted, capped = ts_accepts(spec.build())
        if capped or any(r.capped for r in reference.scope.runs) or any(not t.exact for t in reference.scope.tasks):
            continue  # TS cannot decide this one (its search hit the cap, or a bound is a runtime value)
        decided += 1
        where = f"seed {seed} ({spec.describe()})"
        assert signature(ours) == signature(reference), where
        assert not same_findings(ours, reference), f"{where}: {same_findings(ours, reference)}"
        if reference.status is not Status.INCONCLUSIVE:
            assert reference.ok == accepted, f"{where}: verify says {reference.status.value}, TaskManager " \
                                             f"{'accepts' if accepted else 'rejects'}"
    assert decided >= len(seeds) // 2, "most generated sets must be decidable, or the test proves little"


@pytest.mark.parametrize("name", sorted(gallery.CASES))
def test_engines_agree_on_the_gallery(name: str) -> None:
    case = gallery.get(name)
    for build in (case.broken, case.fixed):
        ours, ref = verify(**build()), verify(**build(), checker="ts")
        assert signature(ours) == signature(ref) and not same_findings(ours, ref), name
