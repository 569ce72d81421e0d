"""The ops' launch gate: each new shape class is proven once, then remembered; a call never re-proves.

A *shape class* is what the launch plan of a shape says each group of CTAs
runs: the concrete config plus every instance's build view and trip count
(``(Instance.view, Instance.iterations)``). Two shapes with the same class run
the same per-CTA task sets, so one proof covers both. :meth:`ShapeGate.admit`
answers from a dict keyed by the exact shape on every call after the first;
a new shape costs one :func:`plan`; a new class costs one
:func:`ts_explore.gpu.safety.prove` (build, capture and verify every distinct
instance on the CPU).

A proof finished once stays valid while the code that built and checked it
is the same, so proofs are also kept on disk (``<cache root>/proofs/``) keyed
by the class, the DSL version and the digest of the kernel, scenario, model,
reader and checker sources: a new process does not re-prove a class an
earlier one proved. Only SAFE is written down; a class that is not proven
safe is refused with the verifier's reason, in every process.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from ..model.plan import DeviceLimits, LaunchPlan
from .compile_cache import PROOF_CODE, cache_root, code_digest, dsl_version


class OpsError(ValueError):
    """A call of ``ts_explore.ops`` that cannot run; the message names the cause and the fix."""


def shape_class(plan: LaunchPlan, config: Any) -> str:
    """The class of ``plan``'s shape under ``config`` (a string: it is written to disk and hashed)."""
    parts = [repr(config)] + [f"{sorted(_flat(i.view).items())!r}|{i.iterations!r}|{i.vacuous!r}"
                              for i in plan.instances]
    return "\n".join(parts)


def _flat(view: Any) -> dict[str, Any]:
    return {str(k): (sorted(_flat(v).items()) if isinstance(v, dict) else v) for k, v in dict(view).items()}


class ShapeGate:
    """Proves each new shape class of one kernel once; ``admit`` refuses with :class:`OpsError` otherwise.

    ``plan(config, shape, limits)`` is the kernel module's plan; ``prove(config,
    plan)`` returns a GateReport (default: :func:`ts_explore.gpu.safety.prove`
    on ``scenario``). ``root`` is where proofs are kept (None: the user's cache
    folder; ``False``: nowhere, this process only).
    """

    def __init__(self, scenario: Any, plan: Callable[[Any, Any, DeviceLimits], LaunchPlan], *,
                 prove: Callable[[Any, LaunchPlan], Any] | None = None, root: Path | None | bool = None) -> None:
        self.scenario = scenario
        self._plan = plan
        self._prove = prove or self._prove_with_safety
        self._root = root
        self._shapes: dict[Any, str] = {}  # (config, shape, sms) -> its class
        self._classes: dict[str, str] = {}  # class -> verdict summary (proven safe)
        self._known: dict[Any, dict[Any, Any]] = {}  # config -> captured task set -> Verdict (safety.prove's memo)
        self.proofs = 0  # prove() calls this gate made (tests read it)

    def admit(self, config: Any, shape: tuple[int, ...], limits: DeviceLimits) -> None:
        """Return when ``shape`` under ``config`` is proven safe on ``limits``' GPU; else raise OpsError."""
        key = (config, shape, limits.sms)
        if key in self._shapes:
            return
        plan = self._plan(config, shape, limits)
        cls = shape_class(plan, config)
        if cls not in self._classes:
            if not self._proven_on_disk(cls):
                report = self._prove(config, plan)
                self.proofs += 1
                if not report.ok:
                    reason = report.problem or "; ".join(
                        f"{p.instance.describe()}: {(p.summary or p.status).splitlines()[0]}" for p in report.refused_by)
                    raise OpsError(f"{self.scenario.name} at {shape} is not proven safe ({reason}); this shape "
                                   "cannot run through ts_explore.ops: fix the schedule, or pick another config")
                self._write_proof(cls, report.summary())
            self._classes[cls] = "proven"
        self._shapes[key] = cls

    def _prove_with_safety(self, config: Any, plan: LaunchPlan) -> Any:
        from ..gpu.safety import prove

        return prove(self.scenario, config, (plan,), self._known.setdefault(config, {}))

    # ---- proofs on disk ----

    def _proof_path(self, cls: str) -> Path | None:
        if self._root is False:
            return None
        root = Path(self._root) if isinstance(self._root, (str, Path)) else cache_root() / "proofs"
        text = "\n".join((self.scenario.name, dsl_version(), code_digest(PROOF_CODE), cls))
        return root / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    def _proven_on_disk(self, cls: str) -> bool:
        path = self._proof_path(cls)
        if path is None or not path.exists():
            return False
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return False
        return record.get("status") == "safe" and record.get("class") == cls

    def _write_proof(self, cls: str, summary: str) -> None:
        path = self._proof_path(cls)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"status": "safe", "class": cls, "summary": summary}))
            tmp.replace(path)
        except OSError:
            pass  # a read-only cache folder: the proof holds for this process only


__all__ = ["OpsError", "ShapeGate", "shape_class"]
