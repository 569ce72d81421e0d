"""Run TaskManager's checks one by one and keep each outcome as data.

``TaskManager.__init__`` runs every check through ``TaskManager._run_check``
and stops at the first failure (``skip_validation=True`` turns failures into
warning text). A subclass that overrides ``_run_check`` keeps the exception
object of every failing check, lets the remaining checks run, and also
catches the ``AssertionError`` s of the WorkQueue placement rules that
warn-only mode lets through.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from cutlass.experimental.task_scheduling.resources import MemoryResource
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ..model.verdict import ANALYSIS_CHECK, CheckOutcome, Note
from .capture import captured_output, recorded_warnings
from .problems import problem_from_exception
from .simulation import SIMULATION
from .ts_text import parse_printed_notes

SETUP = "TaskManager"
ANALYSIS = ANALYSIS_CHECK  # our own reading of TS's results failed (INCONCLUSIVE, not a TS rejection)

# TS checks: TaskManager's check method -> (title in words, how to fix a failure)
TS_CHECKS: dict[str, tuple[str, str]] = {
    SETUP: ("TaskManager construction",
            "TaskManager could not start verifying these objects; read the message and check the tasks and graph."),
    ANALYSIS: ("reading TS's results",
               "ts-explore could not turn TS's results into a counterexample; TS's own checks above still stand."),
    "_print_task_schedules": ("credit simulation",
                              "Every wait needs a commit before it and every acquire a free slot: "
                              "reorder the steps or add stages so each task can move on."),
    "_verify_warp_group_registers": ("registers per warp group",
                                     "Give tasks that share a warp group of 4 the same num_registers."),
    "_verify_register_budget": ("register budget", "Lower num_registers or use fewer warps."),
    "_verify_pipeline_group_consistency": ("pipeline groups",
                                           "Make group members agree with the group's merged pipeline config."),
    "_verify_resource_stage_roles": ("producer/consumer roles",
                                     "List a resource in dst_resources to produce it and in src_resources to consume it."),
    "_verify_resource_deps": ("resource dependency graph",
                              "Each edge upstream -> downstream needs a task that consumes upstream and produces downstream."),
    "_verify_pdl_wait_ordering": ("PDL wait before dependent work",
                                  "Call pdl_wait.wait_griddep() before the work that reads the previous grid's output."),
    "_verify_resource_coverage": ("graph covers every resource",
                                  "Add every task resource to resource_dependency_graph (``res: []`` for sources)."),
    "_verify_schedule_uses_all_resources": ("declared resources are used",
                                            "Remove the unused resource from src/dst_resources or schedule a step on it."),
    "_verify_work_group_bracketing": ("work bracketed by wait/release and acquire/commit",
                                      "Put consumer work between wait and release, producer work between acquire and commit."),
    "_verify_work_queue_schedule": ("WorkQueue placement",
                                    "WorkQueue try_wait/wait/get_and_advance_work_tile/release go once per tile, "
                                    "after the domain loop (outside skippable())."),
    "_verify_dma_ordering": ("DMA buffer release order",
                             "Release the DMA-read buffer only after the downstream DMA work (e.g. the MMA) that reads it."),
    "_verify_consumer_wait_signaling": ("consumer wait signaling",
                                        "Only set consumer_wait_signaling_threads on split-consumer resources."),
    "_verify_pipeline_thread_counts": ("pipeline thread counts",
                                       "Size the producer/consumer CooperativeGroups to the threads that arrive."),
    "_verify_leader_routed_producer_completions": ("TMA transaction bytes",
                                                   "Make num_bytes match the bytes the leader-routed copies complete."),
    "_verify_interleaved_pipelines": ("interleaved pipelines",
                                      "Use one task warp per lane and a stage count divisible by the stride."),
    "_verify_cta_layout_consistency": ("cluster layout",
                                       "Give every pipeline resource the same cta_layout_vmnk."),
    "_verify_head_loop_producer_overlap": ("head/loop producer overlap",
                                           "Produce a resource in HEAD or in the loop, not both."),
    "_verify_work_labels": ("work method labels", "Check the work method names on the resources."),
    "_verify_smem_capacity": ("shared memory capacity", "Reduce stages or tile sizes."),
    "_verify_tmem_capacity": ("tensor memory capacity", "Reduce accumulator columns or stages."),
    "_verify_slot_routing": ("slot routing", "Fix the task's slot_routing entries."),
    "_verify_ping_pong_resources": ("ping-pong resources",
                                    "Give ping-pong tasks matching schedules on the shared resource."),
    "_exhaustive_aliasing_races": ("exhaustive interleavings (deadlock, race, PDL order)",
                                   "Follow the counterexample: it is the shortest interleaving that reaches the bad state."),
}


def check_title(name: str) -> str:
    """A TS check's name in words."""
    return TS_CHECKS.get(name, (name.strip("_").replace("_", " "), ""))[0]


def check_hint(name: str) -> str:
    """How to fix a failure of a TS check."""
    return TS_CHECKS.get(name, ("", "Read TS's message; it names the rule."))[1]


def check_name(check_fn: Callable[[], Any]) -> str:
    """TS's name for a check; the ping-pong check is a lambda, named after the method it calls."""
    name = getattr(check_fn, "__name__", "") or "check"
    if name == "<lambda>":
        code = getattr(check_fn, "__code__", None)
        called = [n for n in getattr(code, "co_names", ()) if n.startswith("_verify")]
        return called[0] if called else "ping-pong check"
    return name


class ObservedTaskManager(TaskManager):
    """A TaskManager that records ``(check name, exception or None)`` for every check it runs."""

    def __init__(self, *args: Any, outcomes: list[tuple[str, BaseException | None]], **kwargs: Any) -> None:
        self._ts_explore_outcomes = outcomes
        super().__init__(*args, **kwargs)

    def _run_check(self, check_fn: Callable[[], Any]) -> None:
        name = check_name(check_fn)
        try:
            check_fn()
        except MemoryError:
            raise  # running out of memory says nothing about the schedule: never a failed check
        except Exception as exc:  # noqa: BLE001 - every failure is data, AssertionError included
            self._ts_explore_outcomes.append((name, exc))
        else:
            self._ts_explore_outcomes.append((name, None))


SEARCH_SWITCH = "exhaustive_deadlock_race_check"
_TM_PARAMS = frozenset(inspect.signature(TaskManager.__init__).parameters) - {"self", "tasks", "resource_dependency_graph"}


def check_outcome(name: str, exc: BaseException | None) -> CheckOutcome:
    """One check's outcome in words: passed, or failed with its message and how to fix it."""
    if exc is None:
        return CheckOutcome(name, check_title(name), True)
    problem = problem_from_exception(exc) if name == SETUP else None
    return CheckOutcome(
        name=name, title=check_title(name), passed=False,
        message=str(exc).strip() or type(exc).__name__, error_type=type(exc).__name__,
        hint=problem.hint if problem and problem.rule not in ("schedule-error", "python-error") else check_hint(name),
        problem=problem,
    )


@dataclass(frozen=True)
class CheckRecord:
    """What TaskManager's checks gave, as model values: each check's outcome, the printout, the warnings.

    Read once, when the checks have run (:func:`run_checks`); the exceptions
    TS raised are kept only as the outcomes' words, and the credit
    simulation's failure as its message (what :mod:`.simulation` parses).
    """

    outcomes: tuple[CheckOutcome, ...] = ()  # in TaskManager's order, a failed setup first
    output: str = ""  # what the checks printed
    warnings: tuple[str, ...] = ()  # the Python warnings they raised, as text
    notes: tuple[Note, ...] = ()  # TS's printed notes and its Python warnings
    reached_search: bool = True  # TaskManager got as far as its exhaustive search (no setup crash before it)
    simulation_error: str | None = None  # the credit simulation's failure message, None when it passed


def _notes(output: str, caught: list[warnings.WarningMessage]) -> tuple[Note, ...]:
    """TS's printed notes and its Python warnings, as :class:`Note` s."""
    notes = [Note(n.kind, f"{n.level}: {n.text}", n.task, n.resource) for n in parse_printed_notes(output)]
    notes.extend(Note("ts-warning", str(w.message).strip()) for w in caught)
    return tuple(notes)


def check_arguments(tasks: Any, graph: Any, tm_kwargs: dict[str, Any]) -> list[Any]:
    """``verify``'s tasks as a list; a TypeError naming the mistake when they are not TS Tasks and a graph.

    (A loop too long to unroll is refused next, before TaskManager's checks
    unroll it: :func:`ts_explore.reader.trips.read_trips`.)
    """
    if not isinstance(tasks, (list, tuple)):
        raise TypeError(f"verify(tasks=...) takes a list of TS Task objects, got {type(tasks).__name__}")
    bad = [type(t).__name__ for t in tasks if not isinstance(t, Task)]
    if bad:
        raise TypeError(f"verify(tasks=...) takes TS Task objects; got {', '.join(sorted(set(bad)))}")
    if not isinstance(graph, Mapping):
        raise TypeError(
            "verify(resource_dependency_graph=...) takes a dict {downstream resource: [upstream resources]}, "
            f"got {type(graph).__name__}"
        )
    bad_values = [type(v).__name__ for v in graph.values() if not isinstance(v, (list, tuple))]
    if bad_values:
        raise TypeError(
            "verify(resource_dependency_graph=...) maps each downstream resource to a LIST of upstream "
            f"resources (use [] for sources); got {', '.join(sorted(set(bad_values)))}"
        )
    named = [x for k, v in graph.items() for x in (k, *v) if not isinstance(x, MemoryResource)]
    if named:
        example = named[0]
        raise TypeError(
            "verify(resource_dependency_graph=...) takes the resource objects the tasks use, not names or other "
            f"values: got {example!r} ({type(example).__name__}); write {{smem: [src]}}, not {{'smem': ['src']}}"
        )
    unknown = sorted(set(tm_kwargs) - _TM_PARAMS)
    if unknown:
        raise TypeError(
            f"verify() got unknown TaskManager argument(s) {', '.join(unknown)}; "
            f"TaskManager accepts: {', '.join(sorted(_TM_PARAMS))}"
        )
    return list(tasks)


def run_checks(tasks: list[Any], graph: Mapping[Any, Any], tm_kwargs: dict[str, Any]) -> CheckRecord:
    """Construct TaskManager quietly with its exhaustive search switched off; every check's outcome as data.

    The search runs afterwards, through the verification's engine, over
    inputs read once (:mod:`ts_explore.reader.capture_set`).
    """
    outcomes: list[tuple[str, BaseException | None]] = []
    kwargs = {"verbose": False, **tm_kwargs, SEARCH_SWITCH: False}
    with recorded_warnings() as caught, captured_output() as out:  # this thread's only: others print as before
        try:
            ObservedTaskManager(tasks, dict(graph), outcomes=outcomes, **kwargs)
        except MemoryError:
            raise  # not a verdict on the schedule
        except Exception as exc:  # noqa: BLE001 - a crash outside the checks is a failed setup check
            outcomes.insert(0, (SETUP, exc))
    simulation = next((exc for name, exc in outcomes if name == SIMULATION and exc is not None), None)
    return CheckRecord(
        outcomes=tuple(check_outcome(name, exc) for name, exc in outcomes),
        output=out.getvalue(),
        warnings=tuple(str(w.message) for w in caught),
        notes=_notes(out.getvalue(), list(caught)),
        reached_search=not any(name == SETUP for name, _ in outcomes),
        simulation_error=None if simulation is None else str(simulation),
    )


__all__ = ["ANALYSIS", "SIMULATION", "TS_CHECKS", "SEARCH_SWITCH", "SETUP", "CheckRecord", "ObservedTaskManager",
           "check_arguments", "check_hint", "check_name", "check_outcome", "check_title", "run_checks"]
