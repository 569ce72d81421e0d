"""Repairs: from a counterexample to a small schedule edit that ts-explore has proven SAFE.

>>> import ts_explore
>>> from ts_explore import gallery
>>> found = ts_explore.repairs(gallery.get("missing_release").broken)
>>> found[0].sentence
'task `Store`: insert `smem.release()` after `gmem_out.set_item()`'
>>> ts_explore.verify(**found[0].task_set()).ok
True

The edit language (:mod:`.edits`) is data on the captured model; the search
(:mod:`.search`) screens candidates with our checker and proves each repair
with ``verify`` (TS's ``TaskManager`` checks included).
"""

from __future__ import annotations

from typing import Any, Callable

from ..model.verdict import Verdict
from .edits import Edit, EditError, InsertStep, MoveOutOfSkippable, MoveSteps, RemoveStep
from .structure_edits import AddStage, ChangeGuard, MatchLoopBounds, SwapPdl
from .result import Repair, Repairs
from .search import DEFAULT_SECONDS, search_repairs

NO_BUILD = ("repairs need a way to make fresh tasks (TS changes the tasks it verifies): pass "
            "build=, a function returning dict(tasks=..., resource_dependency_graph=...), e.g. "
            "ts_explore.repairs(verdict, build=lambda: make_tasks()) or ts_explore.repairs(make_tasks)")


def repairs(
    verdict: Verdict | Callable[[], dict[str, Any]],
    build: Callable[[], dict[str, Any]] | None = None,
    *,
    seconds: float = DEFAULT_SECONDS,
    depth: int = 2,
    limit: int = 5,
    progress: Callable[[int, int, float], None] | None = None,
    cancel: Any = None,
    **verify_kwargs: Any,
) -> Repairs:
    """Ranked repairs of an UNSAFE verdict, each proven SAFE (see :mod:`ts_explore.repair.search`).

    ``verdict`` is a :class:`~ts_explore.model.verdict.Verdict` with ``build``
    the function that made its tasks, or just that function (it is verified
    first). ``seconds`` and ``depth`` (edits per repair, 1 or 2) bound the
    search, ``limit`` the repairs kept; ``progress(checked, found, elapsed_s)``
    reports and ``cancel`` (a ``threading.Event``) stops it. Other keywords
    (``tiles=``, ``rules=`` ...) go to every ``verify`` of a candidate, so a
    repair is proven on the same instance as the verdict.
    """
    from ..reader.tasks import capture_task_set
    from ..verification.verify import verify

    if not isinstance(verdict, Verdict):
        if not callable(verdict):
            raise TypeError(f"repairs() takes a Verdict (with build=) or a build function, got {type(verdict).__name__}")
        build = _as_dict_builder(verdict)
        verdict = verify(**build(), checker="reduced", **verify_kwargs)
    if build is None:
        raise TypeError(NO_BUILD)
    build = _as_dict_builder(build)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise ValueError(f"repairs(seconds=...) takes a positive time bound in seconds, got {seconds!r}")
    if depth not in (1, 2):
        raise ValueError(f"repairs(depth=...) takes 1 or 2 edits per repair, got {depth!r}")
    if verdict.ok:
        return Repairs((), "nothing to repair: the schedule is proven SAFE")
    if verdict.status.value != "unsafe":
        return Repairs((), "nothing to repair: the verdict is INCONCLUSIVE, not UNSAFE (" + "; ".join(verdict.reasons)
                       + "); settle that first")
    fresh = build()
    base = capture_task_set(fresh["tasks"], fresh.get("resource_dependency_graph") or {})
    if verdict.task_set is not None and [t.schedule for t in verdict.task_set.tasks] != [t.schedule for t in base.tasks]:
        raise ValueError("build() makes different schedules than the verdict's: pass the function that built the "
                         "tasks this verdict verified")
    return search_repairs(verdict, build, base, seconds=seconds, depth=depth, limit=limit, progress=progress,
                          cancel=cancel, verify_kwargs=verify_kwargs)


def _as_dict_builder(build: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    """``build`` as a function returning ``dict(tasks=..., resource_dependency_graph=...)`` (a pair works too)."""
    if getattr(build, "_ts_explore_dict_builder", False):
        return build

    def made() -> dict[str, Any]:
        value = build()
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
            return {"tasks": list(value[0]), "resource_dependency_graph": value[1]}
        if hasattr(value, "verify_kwargs"):  # a scenario's Built
            return value.verify_kwargs()
        if not isinstance(value, dict) or "tasks" not in value:
            raise TypeError("build() must return dict(tasks=..., resource_dependency_graph=...), a (tasks, graph) "
                            f"pair or a scenario's Built; got {type(value).__name__}")
        return value

    made._ts_explore_dict_builder = True  # type: ignore[attr-defined]
    return made


__all__ = [
    "AddStage",
    "ChangeGuard",
    "Edit",
    "EditError",
    "InsertStep",
    "MatchLoopBounds",
    "MoveOutOfSkippable",
    "MoveSteps",
    "NO_BUILD",
    "RemoveStep",
    "Repair",
    "Repairs",
    "SwapPdl",
    "repairs",
]
