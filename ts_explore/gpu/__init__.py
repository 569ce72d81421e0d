"""Launch a catalog scenario on the GPU: verify, compile (cached), run, time and check it.

``ts_explore.launch("grid_stride_copy", sizes=[1 << 24])`` returns a
:class:`LaunchResult` (``print(r.summary())``; a notebook draws its plots);
``tests/gpu`` and the README run it where a GPU is present.

Refusals and failures are exceptions: :class:`LaunchError` with a ``reason``
slug and a message naming the cause and the fix (no CUDA device, no
cuda-python, a config the verifier rejects, CLC on a GPU below sm_100, a size
the kernel cannot take, a kernel that did not finish in time...). The launch
itself runs in a worker process, so a hung kernel is killed and the notebook
lives on.
"""

from __future__ import annotations

import atexit
import pickle
from typing import Any, Iterable

from ..kernels.contract import traceable
from ..kernels.host import HostProblem
from ..model.plan import DeviceLimits, GateReport, LaunchPlan
from ..scenarios import Scenario, get
from ..scenarios.knobs import ConfigError, configure
from .device import DeviceInfo
from .errors import LaunchError
from .plan import device_limits, kernel_module, launch_plan, plans_for
from .probe import probe
from .reference import Mismatch
from .result import MEMCPY, TORCH, LaunchResult, SizeRun
from .safety import launch_refusal, prove, repair_refusal
from .timing import Timing
from .trace_run import HangError, hang_report, trace_spec
from .tuned import size_picks, wants_table
from .worker import WorkerHandle, portable_config

DEFAULT_SIZES = (1 << 22,)
KEEP_LIMIT_BYTES = 2 << 30  # keep_output brings at most this much back to the calling process
COMPILE_S = 300.0  # preparing (planning, compiling) may take this long, whatever the kernel's own ``timeout``
GRACE_S = 30.0  # the worker reports a hung kernel itself after ``timeout``; the parent kills it this much later
_WORKER = WorkerHandle()
atexit.register(_WORKER.stop)


def cuda_unavailable_reason() -> tuple[str, str] | None:
    """(reason, message) when this machine cannot launch at all; None when a CUDA device is visible."""
    found = probe()
    return None if found.ok else (found.reason or "no_device", found.message)


def _config(sc: Scenario, config: Any, overrides: dict[str, Any]) -> Any:
    try:
        return configure(sc, overrides, base=config)
    except ConfigError as exc:
        raise LaunchError("bad_config", str(exc)) from None


def launch(scenario: str | Scenario, config: Any = None, *, sizes: Iterable[Any] | None = None, reps: int = 20,
           warmup: int = 3, timeout: float = 180.0, force: bool = False, check: bool = True,
           references: bool = True, trace: Any = False, time_trace: bool = False, keep_output: bool = False,
           repair: Any = None, tuned: bool = True, **overrides: Any) -> LaunchResult:
    """Run ``scenario`` with ``config`` (or its defaults plus ``overrides``) once per size.

    Every distinct per-CTA instance of each size's launch plan is verified
    first (:func:`~ts_explore.gpu.safety.prove`); a launch with an instance
    that is not proven safe is refused unless ``force=True``. The kernel is
    compiled (cached) in the launch worker, whose compiled register count
    refines the plans (re-verified if they changed); each size is then checked
    exactly against a host reference (``check``) and timed with CUDA events
    (``warmup`` untimed runs, then ``reps``); ``references`` also times a
    device-to-device ``cudaMemcpyAsync`` of the same bytes (and ``torch.copy_``
    when torch is installed) in the same process. Kernels whose data is made
    on the GPU (the GEMM, attention) are timed as the benchmarks time them:
    alternating with their references on one stream after a warm-up of
    0.3 s, over ``reps`` rounds or as many more as last 0.5 s, with the SM
    clock read while they run (``run.sm_clock_mhz``, in the summary), so a
    notebook shows sustained rather than cold-boost figures.

    ``trace`` (``True``, ``"work"``, or a :class:`~ts_explore.model.timeline.TraceSpec`)
    makes the first run of each size an instrumented build that records every
    step (or only the work steps) per warp: ``result.timeline``. The timed
    repetitions always run the plain build. A kernel that does not finish in
    ``timeout`` s raises :class:`~ts_explore.gpu.trace_run.HangError`; when it was
    instrumented (always, for a launch forced past the verifier) its
    ``report`` names each warp's last blocking step beside the verifier's
    predicted blocked steps. ``timeout`` bounds the kernel's runs, not the
    compile before them: compiling gets ``max(timeout, COMPILE_S)`` s, so a
    short timeout for a forced hang does not cut a slow compile short.
    ``time_trace`` also times the instrumented build
    (``run.traced_timing``, ``run.overhead()``), for overhead tables.

    ``keep_output=True`` hands back what the first (checked) run of each size
    wrote: ``run.outputs`` maps each output's name to a host numpy array
    (not a torch tensor: it crosses from the launch worker): the copies' int32
    outputs, flat, and the GEMM's C as float32 (M x N, its bf16 values widened
    exactly), whose inputs are ``ts_explore.kernels.gemm.make_inputs(shape, seed=0)`` (an fp8 config's:
    ``make_inputs(shape, seed=0, dtype=cfg.dtype)``).

    ``repair`` (a :class:`~ts_explore.repair.Repair` of this scenario's
    schedule, e.g. ``ts_explore.repairs(verdict, build)[0]``) runs the kernel
    with the repair's edits written onto the tasks the kernel's own build
    makes; the gate proves every instance with the same edits written the
    same way, so a repair is launched only where it is proven. Repairs that
    change loop bounds or add a stage are refused (the message says why).

    ``tuned``: with no config given (or the scenario's default config) and no
    overrides, or with only ``tile='by shape'`` (and ``dtype``) chosen, each size whose shape has a pick in this GPU's tuning table
    (``ts_explore.tune``) runs that pick, compiled and proven like any config;
    sizes with different picks are launched one config at a time and their
    runs come back in the order of ``sizes``. ``result.tuned`` (and the
    summary) says which pick each size used. An explicit config always wins;
    ``tuned=False`` turns the lookup off.
    """
    if not isinstance(keep_output, bool):
        raise LaunchError("bad_argument", f"keep_output must be True or False, got {keep_output!r}; pass "
                          "keep_output=True to get each size's outputs back as host numpy arrays")
    sc = get(scenario)
    cfg = _config(sc, config, overrides)
    edits = _repair_edits(repair)
    module = kernel_module(sc)
    sizes = tuple(getattr(module, "DEFAULT_SIZES", DEFAULT_SIZES) if sizes is None else sizes)
    if not sizes:
        raise LaunchError("bad_size", "sizes is empty; pass e.g. sizes=[1 << 22]")
    options = {"reps": reps, "warmup": warmup, "timeout": timeout, "force": force, "check": check,
               "references": references, "trace": trace, "time_trace": time_trace, "keep_output": keep_output}
    picks = size_picks(sc, cfg, sizes) if not edits and wants_table(sc, config, overrides, tuned) else ()
    if not any(p.note for p in picks):
        return _launch_one(sc, cfg, sizes, edits, module, **options)
    groups: dict[Any, list[int]] = {}  # config -> indices of the sizes that run it, in order of first use
    for i, p in enumerate(picks):
        groups.setdefault(p.config, []).append(i)
    done = [(idxs, _launch_one(sc, conf, tuple(sizes[i] for i in idxs), edits, module, **options))
            for conf, idxs in groups.items()]
    return _merged(done, len(sizes), tuple(p.note for p in picks if p.note))


def _launch_one(sc: Scenario, cfg: Any, sizes: tuple[Any, ...], edits: tuple[Any, ...], module: Any, *, reps: int,
                warmup: int, timeout: float, force: bool, check: bool, references: bool, trace: Any,
                time_trace: bool, keep_output: bool) -> LaunchResult:
    """One config at every size: plan, prove, compile, run, time (what :func:`launch` does for each config)."""
    known: dict[Any, Any] = {}  # captured task set -> its Verdict, so a re-planned instance is not verified again
    planned = plans_for(sc, cfg, sizes, device_limits())
    if keep_output:
        _refuse_large_outputs(planned)
    gate = prove(sc, cfg, planned, known, edits)
    _refuse_unless_proven(gate, force, timeout)
    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        raise LaunchError(*unavailable)
    limits = device_limits()
    refusal = launch_refusal(sc, cfg, limits)
    if refusal is not None:
        raise LaunchError(*refusal)
    forced = force and not gate.ok
    spec = trace_spec(trace, forced)
    if spec is not None and not traceable(module):
        if trace:
            raise LaunchError("no_trace", f"kernel module {module.__name__} cannot be instrumented (its compile takes "
                              "no trace=); launch without trace, or add trace support as the catalog kernels do")
        spec = None
    message = {"scenario": sc.name, "kernel": module.__name__, "config": portable_config(cfg), "sizes": sizes,
               "trace": spec, "forced": forced, "edits": edits}
    prepared = _ask({"op": "prepare", **message}, max(timeout, COMPILE_S), gate,
                    what=f"Compiling {sc.name} took that long (launch's timeout bounds the kernel's runs; compiling "
                         f"gets {max(timeout, COMPILE_S):g} s). ")
    plans = prepared["plans"]
    if any(a.instances != b.instances or a.grid != b.grid for a, b in zip(plans, gate.plans)):
        gate = prove(sc, cfg, plans, known, edits)  # registers changed the grid: prove what will run
        _refuse_unless_proven(gate, force, timeout)
    try:
        reply = _ask({"op": "run", **message, "plans": plans, "reps": max(1, int(reps)),
                      "warmup": max(0, int(warmup)), "check": check, "references": references,
                      "kernel_timeout": timeout, "time_trace": bool(time_trace and spec is not None),
                      "keep_output": keep_output},
                     timeout + GRACE_S, gate)
    except HangError as exc:
        exc.report = hang_report(sc, cfg, plans, exc.report, timeout, gate)
        raise
    return LaunchResult(scenario=sc.name, config=cfg, device=reply["device"], runs=reply["runs"],
                        compile_s=prepared["compile_s"], first_compile_s=prepared["first_compile_s"],
                        cache_hit=prepared["cache_hit"], verdict=gate.summary(), forced=force and not gate.ok,
                        plans=plans, gate=gate, edits=edits)


def _merged(done: list[tuple[list[int], LaunchResult]], count: int, notes: tuple[str, ...]) -> LaunchResult:
    """One result from launches of several configs, each over some of the sizes: runs and plans in size order.

    ``config`` is the first size's (its trace, if any, is the one ``timeline`` shows).
    """
    import dataclasses

    runs: list[Any] = [None] * count
    plans: list[Any] = [None] * count
    for idxs, result in done:
        for j, i in enumerate(idxs):
            runs[i] = result.runs[j]
            plans[i] = result.plans[j] if j < len(result.plans) else None
    results = [r for _, r in done]
    first = results[0]
    gates = [r.gate for r in results]
    gate = (GateReport(plans=tuple(p for p in plans if p is not None),
                       proven=tuple(p for g in gates for p in g.proven)) if all(g is not None for g in gates) else None)
    return dataclasses.replace(first, runs=tuple(runs), plans=tuple(p for p in plans if p is not None), gate=gate,
                               verdict="\n".join(r.verdict for r in results),
                               compile_s=sum(r.compile_s for r in results),
                               first_compile_s=max(r.first_compile_s for r in results),
                               cache_hit=all(r.cache_hit for r in results), forced=any(r.forced for r in results),
                               tuned=notes)


def _repair_edits(repair: Any) -> tuple[Any, ...]:
    """The edits of ``repair`` (a Repair, or a sequence of its edits), checked launchable and sendable to the worker."""
    if repair is None:
        return ()
    edits = tuple(getattr(repair, "edits", repair) if not isinstance(repair, (str, bytes)) else ())
    if not edits or not all(callable(getattr(e, "apply", None)) and hasattr(e, "kind") for e in edits):
        raise LaunchError("bad_argument", f"repair= takes a Repair (e.g. ts_explore.repairs(verdict, build)[0]) or "
                          f"its edits, got {type(repair).__name__}; pass repair=None to launch the scenario as it is")
    refusal = repair_refusal(edits)
    if refusal is not None:
        raise LaunchError("repair_not_launchable", refusal)
    try:
        if pickle.loads(pickle.dumps(edits)) != edits:
            raise ValueError("they do not compare equal after a round trip")
    except Exception as exc:  # noqa: BLE001 - say why the worker cannot get them
        raise LaunchError("unpicklable", f"the repair's edits cannot be sent to the launch worker ({exc}); edits "
                          "must be the frozen dataclasses of ts_explore.repair") from None
    return edits


def _refuse_large_outputs(plans: tuple[LaunchPlan, ...]) -> None:
    """LaunchError when keep_output would copy more than KEEP_LIMIT_BYTES to this process (4 bytes an element)."""
    def elements(size: Any) -> int:
        return size[0] * size[1] if isinstance(size, tuple) else int(size)  # (M, N, K): C; else int32 elements

    total = sum(4 * elements(p.size) for p in plans)
    if total > KEEP_LIMIT_BYTES:
        raise LaunchError("bad_argument", f"keep_output=True would bring about {total / 2**30:.1f} GiB of outputs back "
                          f"to this process (at most {KEEP_LIMIT_BYTES / 2**30:.0f} GiB); keep it for fewer or smaller "
                          "sizes, or rely on check=True, which compares every element on the GPU side")


def _refuse_unless_proven(gate: GateReport, force: bool, timeout: float) -> None:
    if gate.ok or force:
        return
    failing = gate.problem or "; ".join(f"{p.describe()}: {p.summary.splitlines()[0] if p.summary else p.status}"
                                        for p in gate.refused_by)
    raise LaunchError("unverified", f"not every instance of this launch is proven safe ({failing}); fix the "
                      f"schedule, or pass force=True to launch it anyway (a hang is killed after {timeout:g} s)")


def _ask(message: dict[str, Any], timeout: float, gate: GateReport, what: str = "") -> dict[str, Any]:
    reply = _WORKER.request(message, timeout, on_timeout=f"{what}The verifier said: {gate.summary()}.")
    if not reply.get("ok"):
        text = reply.get("message", "unknown failure")
        if reply.get("reason") == "timeout":
            raise HangError(f"{text}. The verifier said: {gate.summary()}.", reply.get("hang"))
        if reply.get("traceback"):
            text += "\n" + reply["traceback"]
        raise LaunchError(reply.get("reason", "launch_failed"), text)
    return reply


def device_info(timeout: float = 60.0) -> DeviceInfo:
    """Name, compute capability, SM count and peak bandwidth of the GPU the worker uses."""
    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        raise LaunchError(*unavailable)
    reply = _WORKER.request({"op": "device"}, timeout)
    if not reply.get("ok"):
        raise LaunchError(reply.get("reason", "launch_failed"), reply.get("message", ""))
    return reply["device"]


def shutdown() -> None:
    """Stop the launch worker (its compile cache goes with it)."""
    _WORKER.stop()


__all__ = [
    "DEFAULT_SIZES",
    "KEEP_LIMIT_BYTES",
    "MEMCPY",
    "TORCH",
    "DeviceInfo",
    "DeviceLimits",
    "GateReport",
    "HangError",
    "HostProblem",
    "LaunchPlan",
    "LaunchError",
    "LaunchResult",
    "Mismatch",
    "SizeRun",
    "Timing",
    "cuda_unavailable_reason",
    "device_info",
    "launch",
    "launch_plan",
    "probe",
    "shutdown",
]
