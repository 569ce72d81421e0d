"""Run TaskManager's checks one by one and keep each outcome as data.

``TaskManager.__init__`` runs every check through ``TaskManager._run_check``
and stops at the first failure (``skip_validation=True`` turns failures into
warning text). A subclass that overrides ``_run_check`` keeps the exception
object of every failing check, lets the remaining checks run, and also
catches the ``AssertionError`` s of the WorkQueue placement rules that
warn-only mode lets through.
"""

from __future__ import annotations

from typing import Any, Callable

from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ..model.verdict import ANALYSIS_CHECK

SETUP = "TaskManager"
ANALYSIS = ANALYSIS_CHECK  # our own reading of TS's results failed (INCONCLUSIVE, not a TS rejection)

# TS check method -> (title in words, how to fix a failure)
CHECKS: dict[str, tuple[str, str]] = {
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
    return CHECKS.get(name, (name.strip("_").replace("_", " "), ""))[0]


def check_hint(name: str) -> str:
    """How to fix a failure of a TS check."""
    return CHECKS.get(name, ("", "Read TS's message; it names the rule."))[1]


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
        except Exception as exc:  # noqa: BLE001 - every failure is data, AssertionError included
            self._ts_explore_outcomes.append((name, exc))
        else:
            self._ts_explore_outcomes.append((name, None))


__all__ = ["ANALYSIS", "CHECKS", "SETUP", "ObservedTaskManager", "check_hint", "check_name", "check_title"]
