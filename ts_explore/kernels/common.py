"""DSL helpers shared by the catalog kernels: run a built task set, per-thread vector views."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from .contract import Built, BuildContext

# Called with the freshly built task set while the kernel is traced (before
# TaskManager touches it); tests use it to compare the traced schedule with
# the one recorded on the CPU.
BuiltHook = Callable[["Built"], None]


_UNCHECKED: contextvars.ContextVar[bool] = contextvars.ContextVar("unchecked", default=False)


@contextlib.contextmanager
def unchecked_build() -> Iterator[None]:
    """Kernels traced in this block let TaskManager report failed checks as warnings instead of raising.

    Only a forced launch (``launch(..., force=True)``) compiles this way: the
    launch gate has already verified the schedule on the CPU and said what
    is wrong with it; the kernel is built anyway so the user can watch it fail.
    """
    token = _UNCHECKED.set(True)
    try:
        yield
    finally:
        _UNCHECKED.reset(token)


_EDITS: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar("repair_edits", default=())


@contextlib.contextmanager
def repaired_build(edits: tuple[Any, ...]) -> Iterator[None]:
    """Kernels traced in this block run their built tasks with ``edits`` (a proven repair's) written onto them.

    Only ``launch(..., repair=...)`` compiles this way, after the launch gate
    has proven every instance of the plan with the same edits applied the
    same way (:func:`apply_repair`, on the CPU).
    """
    token = _EDITS.set(tuple(edits))
    try:
        yield
    finally:
        _EDITS.reset(token)


def repair_edits() -> tuple[Any, ...]:
    """The edits kernels traced now write onto their built tasks (empty outside :func:`repaired_build`)."""
    return _EDITS.get()


def apply_repair(built: Built) -> None:
    """Write the edits of :func:`repaired_build` (if any) onto ``built``'s tasks, before TaskManager sees them."""
    edits = _EDITS.get()
    if edits:
        from ..reader.materialise import write_edits

        write_edits(built.tasks, built.resource_dependency_graph, edits)


def quiet_task_manager(built: Built) -> TaskManager:
    """Construct TaskManager (it verifies) without its stdout tables or trace-time warnings."""
    from ..reader.capture import quiet

    with quiet():  # this thread's printout and warnings only: a launch may run beside a background proof
        return TaskManager(**built.task_manager_args(), verbose=False, skip_validation=_UNCHECKED.get())


def run_built(built: Built, on_built: BuiltHook | None = None, recorder: Any = None, *,
              cluster: bool = False) -> None:
    """Inside ``@cute.kernel``: hand the built tasks to TaskManager, set them up and run them.

    ``recorder`` (a :class:`~ts_explore.kernels.trace.Recorder`, from
    :func:`~ts_explore.kernels.trace.recorder_for`) instruments every step
    (see :func:`run_tasks`). ``cluster``: the CTA is one of a cluster whose
    TMA multicasts and releases land in its peers' shared memory, so the
    barriers must be visible cluster-wide before any task runs.
    """
    apply_repair(built)
    if on_built is not None:
        on_built(built)
    tm = quiet_task_manager(built)
    tm.setup_resources_and_tasks()
    uses_barriers = any(
        getattr(r, "pipeline_config", None) is not None for r in tm.resources
    )
    if uses_barriers:
        # Pipeline mbarriers were initialised by setup: make them visible to
        # every warp (and to the bulk-copy engine, and with a cluster to the peer CTAs) before any task runs.
        cute.arch.mbarrier_init_fence()
        if cluster:
            cute.arch.cluster_arrive_relaxed()
            cute.arch.cluster_wait()
        else:
            cute.arch.sync_threads()
    run_tasks(tm, built, recorder)


def kernel_context(tensors: dict[str, Any], extra: dict[str, Any]) -> BuildContext:
    """Inside ``@cute.kernel``: the build context of this thread (its CTA numbered across a 3-D grid)."""
    bx, by, bz = cute.arch.block_idx()
    tx, _, _ = cute.arch.thread_idx()
    gx, gy, gz = cute.arch.grid_dim()
    return BuildContext(on_gpu=True, block=bx + gx * (by + gy * bz), thread=tx, grid=gx * gy * gz,
                        tensors=tensors, extra=extra)


def run_tasks(tm: TaskManager, built: Built, recorder: Any = None) -> None:
    """Inside ``@cute.kernel``, once ``tm``'s resources are set up and visible to every thread: run the schedule.

    Plain with no ``recorder``. With one, every step goes through it; when it
    records only some CTAs (:attr:`~ts_explore.model.timeline.TraceSpec.splits`),
    the schedule is emitted twice behind one branch on the CTA index, over
    the same shared memory and barriers: instrumented for the recording CTAs,
    plain for the rest. A spec's ``registers`` caps the kernel's registers
    (a launch also tries the plain kernel's count, so that the plain branch
    can compile as the plain kernel does, and 255).
    """
    if recorder is None:
        tm.run()
        return
    from ..reader import capture_task_set
    from .trace import cap_registers, split_by_cta
    from ..reader.trace_hook import instrument, python_state, restore, start_counters, step_ids, uninstrument

    captured = capture_task_set(built.tasks, built.resource_dependency_graph)
    ids = step_ids(built.tasks, built.resource_dependency_graph, captured)

    # Running the schedule leaves staged values on TS's objects; the plain copy must start from the
    # state setup left, not from values that exist only inside the recording branch.
    state = python_state(tm)

    def traced() -> None:
        instrument(tm.tasks, ids, recorder)
        start_counters(tm.tasks)
        tm.run()
        uninstrument(tm.tasks)
        restore(state)

    if recorder.spec.registers is not None:
        cap_registers(recorder.spec.registers)
    if recorder.spec.splits:
        split_by_cta(recorder.spec.ctas, recorder.spec.first_cta, traced, tm.run)
    else:
        traced()


def thread_vectors(base: Any, threads: int, vector: int, count: int) -> Any:
    """View ``threads * vector * count`` contiguous elements as ``(vector, thread, j)``.

    Thread ``t`` owns ``[(None, t, None)]``: ``count`` vectors spaced a whole
    CTA-row apart, so lane-adjacent threads touch adjacent vectors (coalesced).
    """
    layout = cute.make_layout((vector, threads, count), stride=(1, vector, vector * threads))
    return cute.make_tensor(base, layout)


def tile_start(tensor: Any, tile: int, index: Any) -> Any:
    """Pointer to tile ``index`` of a 1-D tensor, keeping the alignment a static tile size implies."""
    return cute.zipped_divide(tensor, (tile,))[(None, index)].iterator


def int32_vector_ssa(vector: int, count: int) -> Callable[[], Any]:
    """Default factory for a task-local ``(vector, count)`` int32 register value."""
    return lambda: cute.full((vector, count), 0, cutlass.Int32)


__all__ = ["BuiltHook", "apply_repair", "int32_vector_ssa", "kernel_context", "quiet_task_manager", "repair_edits",
           "repaired_build", "run_built", "run_tasks", "thread_vectors", "tile_start", "unchecked_build"]
