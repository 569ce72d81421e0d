"""Inside the worker: open the device, compile through the cache, run each size, time and check it.

The first run of each size is watched (the stream is polled, so a hang is
reported by the worker itself) and, when the launch asks for it, runs an
instrumented build of the kernel (:mod:`.trace_run`); the timed repetitions
always run the plain build.
"""

from __future__ import annotations

import contextlib
import importlib
import pickle
import statistics
from typing import Any

from .cache import CompileCache, Compiled
from .device import Buffers, CudaError, DeviceInfo, check, open_device
from .errors import LaunchError
from ..kernels.host import DeviceProblem, HostProblem
from .reference import Mismatch, compare
from .result import MEMCPY, SizeRun
from .timing import Timing, on_stream, sm_clock_mhz, time_alternating, time_events, time_steady, time_torch_copy
from .trace_run import HangError, Layout, TraceBuffers, decode_events, decode_progress, watch


Builds = tuple[tuple[Any, Compiled], ...]  # instrumented builds to choose from: (TraceSpec, Compiled)
CHOICE_ROUNDS = 10  # rounds per order of the instrumented builds when they are timed against each other
CHOICE_MARGIN = 0.02  # a capped build is kept only when it beats the uncapped by this share of the plain kernel's time


def kept_build(ratios: list[float], margin: float = CHOICE_MARGIN) -> int:
    """Which instrumented build to keep, from each one's median time over the plain kernel's (first: uncapped).

    The first build unless another is faster by more than ``margin`` (then
    the fastest): a cap is kept only for a clear gain, not for noise.

    >>> kept_build([1.045, 1.000]), kept_build([1.000, 1.068]), kept_build([1.03, 1.02]), kept_build([1.1, 1.05, 1.02])
    (1, 0, 0, 2)
    """
    best = min(range(len(ratios)), key=ratios.__getitem__)
    return best if ratios[best] < ratios[0] - margin else 0


class Runner:
    """Handles launch requests; keeps the CUDA context and the compile cache between them."""

    def __init__(self) -> None:
        self.cache = CompileCache()
        self.info: DeviceInfo | None = None
        self.stream: Any = None
        self.broken = False  # a kernel fault poisons the context: the worker must restart
        self._clock: Any = None  # reads the SM clock (NVML), made on first use

    def open(self) -> DeviceInfo:
        if self.info is None:
            try:
                import cuda.bindings.driver  # noqa: F401
            except ImportError:
                raise LaunchError("no_cuda_python", "cuda-python is not installed; pip install "
                                  "'ts-explore[gpu]' (or cuda-bindings) on a machine with a CUDA GPU") from None
            try:
                _, self.info, self.stream = open_device()
            except CudaError as exc:
                raise LaunchError("no_device", f"no usable CUDA device ({exc}); launches need an NVIDIA GPU "
                                  "and driver; record and verify work without one") from None
        return self.info

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message.get("op")
        info = self.open()
        if op == "device":
            return {"ok": True, "device": info}
        if op == "prepare":
            return self.prepare(message, info)
        if op == "run":
            return self.run(message, info)
        raise LaunchError("launch_failed", f"unknown worker request {op!r}")

    def compiled(self, m: dict[str, Any], info: DeviceInfo, trace: Any = None) -> tuple[Compiled, float, bool]:
        """The config's compiled kernel (cached per scenario, config, architecture, trace spec and forcing)."""
        from ..kernels.common import repaired_build, unchecked_build
        from ..reader import capture_task_set
        from ..scenarios import get

        kernel = importlib.import_module(m["kernel"])
        scenario = get(m["scenario"])
        forced = bool(m.get("forced"))
        edits = tuple(m.get("edits") or ())
        key = (m["scenario"], m["config"], info.arch, trace, forced, pickle.dumps(edits))

        def build() -> Any:
            seen: list[Any] = []
            extra = {} if trace is None else {"trace": trace}
            with unchecked_build() if forced else contextlib.nullcontext(), repaired_build(edits):
                fn = kernel.compile(scenario, m["config"], arch=f"{info.arch}a", **extra,
                                    on_built=lambda b: seen.append(capture_task_set(b.tasks,
                                                                                    b.resource_dependency_graph)))
            return fn, (seen[0] if seen else None)

        try:
            return self.cache.get(key, build)
        except LaunchError:
            raise
        except Exception as exc:
            text = str(exc).strip().splitlines()
            raise LaunchError("compile_failed", f"compiling {scenario.name} failed: {type(exc).__name__}: "
                              f"{' '.join(text[:6])}") from None

    def prepare(self, m: dict[str, Any], info: DeviceInfo) -> dict[str, Any]:
        """Compile, then plan every size with this GPU's limits and the kernel's own register count."""
        from ..kernels.build import resources

        compiled, spent, hit = self.compiled(m, info)
        used = resources(compiled.fn)
        kernel = importlib.import_module(m["kernel"])
        plans = tuple(kernel.plan(m["config"], size, info.limits, used.registers if used else None)
                      for size in m["sizes"])
        if m.get("trace") is not None:  # the recording CTAs are compiled in, chosen per plan
            for plan in plans:
                spent += self.instrumented(m, info, plan)[1]
        return {"ok": True, "device": info, "plans": plans, "compile_s": spent,
                "first_compile_s": compiled.compile_s, "cache_hit": hit}

    def instrumented(self, m: dict[str, Any], info: DeviceInfo, plan: Any) -> tuple[Builds, float]:
        """The instrumented builds to choose from for ``plan``, as ``(spec, compiled)``, and the seconds compiling took.

        The build of the placed spec first; when the trace splits and that
        build uses more registers than the plain kernel, also one per
        register cap of :meth:`~ts_explore.model.timeline.TraceSpec.alternatives`
        (a cap the compiler refuses, or whose build is byte for byte one
        already there, adds none). :meth:`first_run` keeps a capped build
        only when it is clearly faster (:func:`kept_build`).
        """
        from ..kernels.build import resources

        spec = m["trace"].placed(plan)
        first, spent, _ = self.compiled(m, info, spec)
        builds: list[tuple[Any, Compiled]] = [(spec, first)]
        used, plain = resources(first.fn), getattr(plan, "registers", None)
        if used is None or plain is None or used.registers <= plain:
            return tuple(builds), spent
        for capped in spec.alternatives(plan):
            try:
                build, more, _ = self.compiled(m, info, capped)
            except LaunchError:  # a cap is an option: a build the compiler refuses at it is left out
                continue
            spent += more
            cubin = getattr(build.fn, "__cubin__", None)
            if cubin is None or all(cubin != getattr(b.fn, "__cubin__", None) for _, b in builds):
                builds.append((capped, build))
        return tuple(builds), spent

    def run(self, m: dict[str, Any], info: DeviceInfo) -> dict[str, Any]:
        """Run, check and time each planned size with the cached kernel."""
        compiled, _, _ = self.compiled(m, info)
        kernel = importlib.import_module(m["kernel"])

        def traced(plan: Any) -> Builds:
            return self.instrumented(m, info, plan)[0] if m.get("trace") is not None else ()

        if hasattr(kernel, "device_problem"):
            runs = tuple(self.run_on_device(kernel.device_problem(compiled.fn, m["config"], plan, self.stream), m,
                                            traced(plan), plan, info)
                         for plan in m["plans"])
        else:
            runs = tuple(self.run_size(compiled.fn, kernel.host_problem(m["config"], plan), m, traced(plan), plan,
                                       info)
                         for plan in m["plans"])
        return {"ok": True, "device": info, "runs": runs}

    def run_on_device(self, problem: DeviceProblem, m: dict[str, Any], traced: Builds = (),
                      plan: Any = None, info: DeviceInfo | None = None) -> SizeRun:
        """A problem made on the GPU: run once, check against the GPU reference, time kernel and references.

        With an instrumented build the first run is the traced one (its
        timeline, and with ``time_trace`` the alternating timing), as for
        host problems; the check then reads what the last launch wrote.
        """
        timeline, traced_ms, paired = None, None, None
        if not traced:
            self.guarded(lambda: (problem.launch(), check(_sync(self.stream))))
        else:
            timeline, traced_ms, paired = self.guarded(
                lambda: self.first_run(problem.launch, list(problem.args), traced, plan, m, info, problem.bytes_moved,
                                       call=_plain_call))
        baseline, traced_timing = paired or (None, None)
        mismatches: tuple[Mismatch, ...] = ()
        if m.get("check", True):
            wrong, total, first, heat = self.guarded(problem.check)
            mismatches = (Mismatch(problem.output, int(wrong), int(total), tuple(first), heat),)
        kept = self.guarded(problem.outputs) if m.get("keep_output") and problem.outputs is not None else None
        # as the benchmarks time: alternating with the references, warmed by time, rounds enough for steady clocks
        references = dict(problem.references) if m.get("references", True) else {}
        self._clock = self._clock or sm_clock_mhz()
        timings, clock = self.guarded(lambda: time_steady(
            (problem.launch, *(on_stream(run, self.stream) for run in references.values())), self.stream,
            m["reps"], ("kernel", *references), problem.bytes_moved, problem.flops, clock=self._clock))
        return SizeRun(problem.elements, problem.bytes_moved, problem.grid, timings[0], tuple(timings[1:]), mismatches,
                       checked=bool(m.get("check", True)), shape=problem.shape, timeline=timeline,
                       traced_ms=traced_ms, traced_timing=traced_timing, traced_baseline=baseline, outputs=kept,
                       sm_clock_mhz=clock)

    def run_size(self, fn: Any, problem: HostProblem, m: dict[str, Any], traced: Builds = (),
                 plan: Any = None, info: DeviceInfo | None = None) -> SizeRun:
        from ..kernels.build import gmem_ptr

        buffers = Buffers()
        try:
            for name, array in problem.inputs.items():
                buffers.upload(name, array)
            for name, elements in problem.outputs.items():
                buffers.alloc(name, elements)
            args = [gmem_ptr(buffers.address(a)) if isinstance(a, str) else a for a in problem.args]
            args.append(self.stream)

            def reset() -> None:
                for name in problem.outputs:
                    buffers.fill(name, 0 if name in problem.zero_filled else -559038737, self.stream)

            run = _fast_call(fn, args)

            reset()
            timeline, traced_ms, paired = self.guarded(
                lambda: self.first_run(run, args, traced, plan, m, info, problem.bytes_moved))
            baseline, traced_timing = paired or (None, None)
            mismatches = ()
            if m.get("check", True):
                mismatches = tuple(compare(name, problem.expected[name], buffers.download(name),
                                           problem.shapes.get(name)) for name in problem.outputs)
            kept = {name: buffers.download(name) for name in problem.outputs} if m.get("keep_output") else None
            timing = self.guarded(lambda: time_events(run, self.stream, m["reps"], m["warmup"], "kernel",
                                                      problem.bytes_moved))
            refs: list[Timing] = []
            if m.get("references", True):
                refs.append(self.memcpy_reference(problem.bytes_moved // 2, m))
                torch_ref = time_torch_copy(problem.bytes_moved // 2, m["reps"], m["warmup"])
                if torch_ref is not None:
                    refs.append(torch_ref)
            return SizeRun(problem.elements, problem.bytes_moved, problem.grid, timing, tuple(refs), mismatches,
                           checked=bool(m.get("check", True)), timeline=timeline, traced_ms=traced_ms,
                           traced_timing=traced_timing, traced_baseline=baseline, outputs=kept)
        finally:
            if not self.broken:
                buffers.free()

    def first_run(self, run: Any, args: list[Any], traced: Builds, plan: Any, m: dict[str, Any],
                  info: DeviceInfo | None, bytes_moved: int = 0, call: Any = None
                  ) -> tuple[Any, float | None, tuple[Timing, ...] | None]:
        """Run once, watched: the instrumented build when there is one (its timeline, time, and timing reps).

        ``traced``: the instrumented builds to choose from (:meth:`instrumented`;
        empty: run the plain kernel). With several, each is timed in turn with
        the plain kernel (:meth:`faster`) after a watched run of the first,
        and the one kept is then recorded in a launch of its own; its spec
        (``registers``: the cap, or None) goes with the timeline.
        The timing reps (``time_trace``) are ``(plain, instrumented)``, taken in alternation.
        ``call(fn, args)`` makes the instrumented build's zero-argument launcher
        (default: arguments converted once, :func:`_fast_call`).

        A kernel still running after ``kernel_timeout`` s is read (each warp's
        progress, if instrumented) and reported as a :class:`HangError`; the
        worker restarts, since its context is stuck.
        """
        timeout = float(m.get("kernel_timeout", 180.0))
        if not traced:
            if watch(run, self.stream, timeout) is None:
                self.broken = True
                raise HangError(f"did not finish in {timeout:g} s; the worker was stopped and restarts")
            return None, None, None
        spec, build = traced[0]
        buffers = TraceBuffers(Layout.of(spec, plan.ctas, plan.threads), spec.progress)
        try:
            launchers = [(s, b, (call or _fast_call)(b.fn, [*args, *buffers.pointers()])) for s, b in traced]
            traced_run = launchers[0][2]
            ms = self.recorded(traced_run, buffers, build, spec, timeout)
            if len(launchers) > 1:  # the timing rounds overwrite the events: record the one kept afresh
                spec, build, traced_run = self.faster(run, launchers, bytes_moved)
                ms = self.recorded(traced_run, buffers, build, spec, timeout)
            timeline = None
            if spec.events:
                timeline = decode_events(buffers.read_events(), build.task_set, scenario=m["scenario"], spec=spec,
                                         device=info.name if info else "", config=repr(m["config"]),
                                         kernel_ns=int(ms * 1e6))
            timing = None
            if m.get("time_trace"):
                timing = time_alternating((run, traced_run), self.stream, m["reps"], m["warmup"],
                                          ("plain, alternating", f"traced ({spec.stages})"), bytes_moved)
            return timeline, ms, timing
        finally:
            if not self.broken:
                buffers.free()

    def recorded(self, traced_run: Any, buffers: TraceBuffers, build: Compiled, spec: Any, timeout: float) -> float:
        """One watched launch of an instrumented build into freshly cleared buffers; its time in ms.

        A launch still running after ``timeout`` s marks the worker broken and
        raises :class:`HangError` with each warp's last progress (when written).
        """
        buffers.reset(self.stream)
        check(_sync(self.stream))
        start, stop = _event(), _event()
        waited = watch(lambda: (_record(start, self.stream), traced_run(), _record(stop, self.stream)),
                       self.stream, timeout)
        if waited is None:
            self.broken = True
            warps = decode_progress(buffers.read_progress(), build.task_set) if spec.progress else ()
            raise HangError(f"did not finish in {timeout:g} s; the worker was stopped and restarts", warps)
        return _elapsed_ms(start, stop)

    def faster(self, run: Any, launchers: list[tuple[Any, Compiled, Any]], bytes_moved: int
               ) -> tuple[Any, Compiled, Any]:
        """The instrumented launcher to keep (:func:`kept_build` of each one's time over the plain kernel's).

        Each round runs the plain kernel, then every candidate; the candidates'
        order rotates between batches of :data:`CHOICE_ROUNDS` rounds so that
        no build always runs in the same place, and each time is divided by
        the plain kernel's of the same round.
        """
        ratios: list[list[float]] = [[] for _ in launchers]
        count = len(launchers)
        for shift in range(count):
            order = [(i + shift) % count for i in range(count)]
            timings = time_alternating((run, *(launchers[i][2] for i in order)), self.stream, CHOICE_ROUNDS, 2,
                                       ("plain", *(f"instrumented build {i}" for i in order)), bytes_moved)
            plain = timings[0].times_ms
            for place, i in enumerate(order):
                ratios[i].extend(t / p for t, p in zip(timings[place + 1].times_ms, plain))
        return launchers[kept_build([statistics.median(r) for r in ratios])]

    def memcpy_reference(self, nbytes: int, m: dict[str, Any]) -> Timing:
        """A device-to-device copy of the same bytes through the driver's memcpy path."""
        from cuda.bindings import driver as cu

        nbytes = max(16, nbytes)
        src, dst = check(cu.cuMemAlloc(nbytes)), check(cu.cuMemAlloc(nbytes))
        try:
            return time_events(lambda: check(cu.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream)), self.stream,
                               m["reps"], m["warmup"], MEMCPY, 2 * nbytes)
        finally:
            cu.cuMemFree(src)
            cu.cuMemFree(dst)

    def guarded(self, action: Any) -> Any:
        """Run GPU work; a CUDA fault marks the worker broken (its context is unusable) and reports it."""
        try:
            return action()
        except CudaError as exc:
            self.broken = True
            raise LaunchError("launch_failed", f"the kernel failed on the GPU ({exc}); the worker restarts") from None


def _fast_call(fn: Any, args: list[Any]) -> Any:
    """A zero-argument launcher; converts the arguments once so timing loops pay no Python conversion."""
    try:
        exe_args, adapted = fn.generate_execution_args(*args)
    except AttributeError:  # another DSL version: plain call
        return lambda: fn(*args)

    def run() -> None:
        _ = adapted  # keep the converted arguments alive
        fn.run_compiled_program(exe_args)

    return run


def _plain_call(fn: Any, args: list[Any]) -> Any:
    """A zero-argument launcher that lets the compiled function convert its arguments on every call."""
    return lambda: fn(*args)


def _sync(stream: Any) -> Any:
    from cuda.bindings import driver as cu

    return cu.cuStreamSynchronize(stream)


def _event() -> Any:
    from cuda.bindings import driver as cu

    return check(cu.cuEventCreate(0))


def _record(event: Any, stream: Any) -> None:
    from cuda.bindings import driver as cu

    check(cu.cuEventRecord(event, stream))


def _elapsed_ms(start: Any, stop: Any) -> float:
    from cuda.bindings import driver as cu

    ms = float(check(cu.cuEventElapsedTime(start, stop)))
    cu.cuEventDestroy(start)
    cu.cuEventDestroy(stop)
    return ms


__all__ = ["Runner"]
