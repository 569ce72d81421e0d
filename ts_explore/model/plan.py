"""Launch plans: how a kernel is launched for one problem size, and which schedule each CTA runs.

One function computes each of these facts (a kernel module's ``plan``); the
explorer's CPU view, the launch gate and the launcher all read the same
:class:`LaunchPlan`, so the instance a user sees, the instances the verifier
proves and the grid the GPU runs cannot drift apart.

>>> h200 = DeviceLimits.h200()
>>> h200.sms, h200.ctas_per_sm(threads=160, smem_bytes=65 * 1024)
(132, 3)
>>> span_text([range(0, 395), range(396, 400)])
'CTAs 0-394, 396-399'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from .verdict import Verdict


# Labels of the reference operations timed next to a kernel (the launch results and their plots use them).
MEMCPY = "cudaMemcpyAsync D2D"
TORCH = "torch.copy_"
MATMUL = "torch.matmul"

@dataclass(frozen=True)
class DeviceLimits:
    """The resources a launch is planned against (a real GPU's, or assumed ones)."""

    name: str
    cc: tuple[int, int]
    sms: int
    max_threads_per_sm: int = 2048
    max_ctas_per_sm: int = 32
    smem_per_sm: int = 228 * 1024
    smem_per_cta: int = 227 * 1024  # opt-in maximum for one CTA
    regs_per_sm: int = 65536
    assumed: bool = False  # True: not read from a GPU (the plan is an estimate)

    @classmethod
    def h200(cls) -> DeviceLimits:
        """An NVIDIA H200 (SXM): what a plan assumes on a machine without a GPU."""
        return cls(name="NVIDIA H200 (assumed)", cc=(9, 0), sms=132, assumed=True)

    def ctas_per_sm(self, threads: int, smem_bytes: int = 0, registers: int | None = None) -> int:
        """How many CTAs of this shape fit on one SM at once (at least 1).

        >>> DeviceLimits.h200().ctas_per_sm(threads=1024, registers=64)
        1
        """
        fits = [self.max_ctas_per_sm, self.max_threads_per_sm // max(1, threads)]
        if smem_bytes:
            fits.append(self.smem_per_sm // (smem_bytes + 1024))  # 1 KiB reserved per CTA
        if registers:
            fits.append(self.regs_per_sm // (max(1, registers) * max(32, threads)))
        return max(1, min(fits))


@dataclass(frozen=True)
class Instance:
    """A set of CTAs (and threads) that run the same schedule instance.

    ``view`` holds what the scenario's CPU build needs to record exactly this
    instance (``block``, ``thread``, ``grid`` and runtime values such as
    ``n_tiles``); ``work`` says in words what each of them does.
    """

    ctas: tuple[range, ...]
    view: Mapping[str, Any]
    work: str
    iterations: int | None = None  # domain-loop trips of the representative (None: not a single number)
    threads: tuple[range, ...] = ()  # per-thread schedules: which global thread indices (block * threads + thread)
    where: str = ""  # who runs it, in words, when CTA ranges do not say it (e.g. "segments of length 17")

    @property
    def count(self) -> int:
        """How many CTAs run this instance."""
        return sum(len(r) for r in self.ctas)

    @property
    def vacuous(self) -> bool:
        """True when the instance does no work at all (its domain runs 0 iterations)."""
        return self.iterations == 0

    def describe(self) -> str:
        """``CTAs 0-394: 83 tiles`` / ``threads 0-99 (CTAs 0-0): 4 vectors``."""
        where = self.where or span_text(self.ctas)
        if self.threads and not self.where:
            where = f"{span_text(self.threads, 'threads')} ({where})"
        return f"{where}: {self.work}"


@dataclass(frozen=True)
class TileOwners:
    """Which CTA runs each work tile, as the kernel's plan decides: tile ``t`` on CTA ``t % ctas``.

    One tile per CTA is ``ctas == tiles``; ``ctas == 0``: tiles are handed out
    at run time (a dynamic queue), so no CTA is known beforehand.

    >>> TileOwners(tiles=7, ctas=5).owner(6), TileOwners(tiles=7, ctas=0).owner(6)
    (1, None)
    """

    tiles: int
    ctas: int

    def owner(self, tile: int) -> int | None:
        """The CTA that runs ``tile`` (None: decided at run time)."""
        return tile % self.ctas if self.ctas else None


@dataclass(frozen=True)
class LaunchPlan:
    """How one problem size launches: grid, block, resources, and the distinct per-CTA instances."""

    kernel: str  # the kernel module
    size: Any  # elements (copies) or a problem shape
    grid: tuple[int, int, int]
    threads: int
    smem_bytes: int
    device: DeviceLimits
    instances: tuple[Instance, ...]
    registers: int | None = None  # per thread, from the compiled kernel when known
    assumptions: tuple[str, ...] = ()
    tile_owners: TileOwners | None = None  # which CTA runs each work tile (None: the kernel does not say)
    work_units: str = "elements"

    @property
    def ctas(self) -> int:
        """CTAs launched in all."""
        x, y, z = self.grid
        return x * y * z

    @property
    def estimate(self) -> bool:
        """True when the device or the registers were assumed rather than read from a GPU and a compiled kernel."""
        return self.device.assumed or self.registers is None

    def summary(self) -> str:
        """A few lines in words: the launch shape, the assumptions, each instance."""
        head = (f"{self.ctas} CTAs x {self.threads} threads, {self.smem_bytes} B shared memory per CTA "
                f"on {self.device.name}")
        if self.registers is not None:
            head += f", {self.registers} registers per thread"
        lines = [head + (" (estimate)" if self.estimate else "")]
        lines.extend(f"  assumes {a}" for a in self.assumptions)
        lines.extend(f"  {i.describe()}" for i in self.instances)
        return "\n".join(lines)


@dataclass(frozen=True)
class ProvenInstance:
    """An instance of a launch and what verifying its representative found."""

    instance: Instance
    status: str  # "safe" | "unsafe" | "inconclusive" | "vacuous"
    summary: str
    verdict: Verdict | None = field(default=None, compare=False, repr=False)  # None: no work, nothing verified

    def describe(self) -> str:
        """``CTAs 0-394: 83 tiles - proven``."""
        word = {"safe": "proven", "vacuous": "no work"}.get(self.status, self.status)
        return f"{self.instance.describe()} - {word}"


@dataclass(frozen=True)
class GateReport:
    """What the launch gate proved about every distinct instance of a launch."""

    plans: tuple[LaunchPlan, ...]
    proven: tuple[ProvenInstance, ...] = field(default=())
    problem: str = ""  # the config or the build failed before anything was verified

    @property
    def ok(self) -> bool:
        """True when every instance with work was proven safe."""
        return not self.problem and all(p.status in ("safe", "vacuous") for p in self.proven)

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """The Verdicts the gate proved, one per distinct instance (equal instances share one)."""
        found = {id(p.verdict): p.verdict for p in self.proven if p.verdict is not None}
        return tuple(found.values())

    @property
    def refused_by(self) -> tuple[ProvenInstance, ...]:
        """The instances that were not proven."""
        return tuple(p for p in self.proven if p.status not in ("safe", "vacuous"))

    def summary(self) -> str:
        """One line per distinct instance (``CTAs 0-394: 83 tiles - proven``)."""
        if self.problem:
            return self.problem
        return "\n".join(p.describe() for p in self.proven) or "nothing to verify"


def runs_of(values: tuple[int, ...]) -> list[range]:
    """Sorted ints as ranges of consecutive values: ``(0, 1, 2, 5)`` -> ``[range(0, 3), range(5, 6)]``."""
    out: list[range] = []
    for v in values:
        if out and out[-1].stop == v:
            out[-1] = range(out[-1].start, v + 1)
        else:
            out.append(range(v, v + 1))
    return out


def span_text(spans: tuple[range, ...] | list[range], word: str = "CTAs") -> str:
    """Ranges in words: ``CTAs 0-394, 396-399`` / ``CTA 7``."""
    parts = []
    count = 0
    for r in spans:
        if not len(r):
            continue
        count += len(r)
        parts.append(str(r.start) if len(r) == 1 else f"{r.start}-{r[-1]}")
    if not word:
        return ", ".join(parts)
    label = word[:-1] if count == 1 and word.endswith("s") else word
    return f"{label} {', '.join(parts)}" if parts else f"no {word}"


__all__ = ["MATMUL", "MEMCPY", "TORCH", "DeviceLimits", "GateReport", "Instance", "LaunchPlan", "ProvenInstance", "TileOwners",
           "runs_of", "span_text"]
