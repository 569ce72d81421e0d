"""Guards and conditions: first_iter / last_iter / every(k) blocks and a data-dependent when_true."""

from __future__ import annotations

from dataclasses import dataclass

from cutlass.experimental.task_scheduling import when_true
from cutlass.experimental.task_scheduling.enums import Every
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ..kernels.guards import Log, Tape
from .base import BuildContext, Built, Scenario, knob, register
from .common import compact, require, tensor


@dataclass(frozen=True)
class GuardsDemo:
    """Knobs of the guard demo: the domain and which guarded blocks exist."""

    start: int = knob(0, min=0, max=255, label="domain start")
    end: int = knob(12, min=1, max=256, label="domain end")
    step: int = knob(1, min=1, max=16, label="domain step")
    unroll: int = knob(1, min=1, max=8, label="unroll")
    first: bool = knob(True, label="first_iter() block")
    last: bool = knob(True, label="last_iter() block")
    every: bool = knob(True, label="every() block")
    every_period: int = knob(3, min=1, max=64, label="every: period")
    every_start: int = knob(1, min=0, max=64, label="every: first iteration")
    when: bool = knob(True, label="when_true(marked) block",
                      help="runs only when the element read is a multiple of the modulus")
    modulus: int = knob(4, min=1, max=64, label="when_true: modulus")

    @property
    def width(self) -> int:
        """Elements per row: every offset the domain can reach."""
        return self.end

    def iterations(self) -> list[int]:
        return list(range(self.start, self.end, self.step))


def check(cfg: GuardsDemo) -> None:
    """Reject empty or unreadable domains, naming the control and the fix."""
    require(cfg.start < cfg.end, f"domain start {cfg.start} is not below domain end {cfg.end}: "
            f"domain_loop({cfg.start}, {cfg.end}, {cfg.step}) runs no iteration",
            "pick a domain start below the domain end", "start")
    require(len(cfg.iterations()) <= 256, "more than 256 iterations make the verifier slow",
            "shorten the domain or raise the domain step", "step")


def inactive(cfg: GuardsDemo) -> dict[str, str]:
    """Controls that change nothing for this config, and why."""
    off = {}
    if not cfg.every:
        off.update(every_period="the every() block is off", every_start="the every() block is off")
    if not cfg.when:
        off["modulus"] = "the when_true(marked) block is off"
    return off


def build(cfg: GuardsDemo, ctx: BuildContext) -> Built:
    """One one-warp task: copy each element, then the guarded tag blocks."""
    tape = Tape(name="tape", data=tensor(ctx, "src"), width=cfg.width, modulus=cfg.modulus)
    log = Log(name="log", out=tensor(ctx, "out"), flags=tensor(ctx, "flags"), width=cfg.width)

    @schedule
    def guarded_copy(tape: Tape, log: Log) -> None:
        with domain_loop(cfg.start, cfg.end, cfg.step, unroll=cfg.unroll) as d:
            item = tape.read()
            log.copy(item=item)
            if cfg.first:
                with d.first_iter():
                    log.tag_first()
            if cfg.last:
                with d.last_iter():
                    log.tag_last()
            if cfg.every:
                with d.every(cfg.every_period, start=cfg.every_start):
                    log.tag_every()
            if cfg.when:
                flag = tape.marked()
                with when_true(flag, key="marked"):
                    log.tag_marked()

    task = Task(name="guarded", src_resources=[tape], dst_resources=[log], warp_idx=0, num_warps=1,
                schedule=guarded_copy(tape, log))
    notes = () if ctx.on_gpu else (_fired(cfg),)
    return Built(tasks=[task], resource_dependency_graph={log: [tape]}, notes=notes)


def _fired(cfg: GuardsDemo) -> str:
    its = cfg.iterations()
    n = len(its)
    parts = []
    if cfg.first:
        parts.append(f"first_iter at offset {its[0]}")
    if cfg.last:
        parts.append(f"last_iter at offset {its[-1]}")
    if cfg.every:
        every = Every(cfg.every_period, cfg.every_start)
        parts.append(f"every at offsets {compact([o for k, o in enumerate(its) if every.fires(k, n)])}")
    if cfg.when:
        parts.append(f"when_true where the element is a multiple of {cfg.modulus}")
    return f"{n} iterations; " + "; ".join(parts or ["no guarded blocks"])


SCENARIO = register(Scenario(
    name="guards_demo",
    title="Guards and conditions",
    config_type=GuardsDemo,
    build_fn=build,
    check_fn=check,
    inactive_fn=inactive,
    description="A copy loop with first_iter, last_iter, every(k) and a data-dependent when_true block; "
                "on the GPU each block leaves a bit in a flags array the host checks.",
    kernel="ts_explore.kernels.guards",
))
