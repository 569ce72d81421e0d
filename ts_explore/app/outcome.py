"""One explorer update without widgets: check, build (record), verify and draw one configuration.

Anything that goes wrong on the way becomes data in the :class:`Outcome`
(a refused config with its own fix, a TS grammar problem, a verifier that
could not run), so the panel can show it and the next change works again.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..model import Problem, TaskSet
from ..model.verdict import Verdict
from ..reader import problem_from_exception
from ..verification.verify import verify
from ..render.tree import schedule_graph
from ..scenarios.base import BuildContext, Built, Scenario
from ..scenarios.choices import refusal
from ..scenarios.knobs import ConfigError

GENERIC_CHECK_HINT = "Change the settings the message names."


@dataclass(frozen=True)
class Outcome:
    """What one configuration gave: a verdict and drawing, or the error that stopped it."""

    config: Any
    verdict: Verdict | None = None
    task_set: TaskSet | None = None
    dot: str | None = None
    problem: Problem | None = None  # TS rejected the schedule (grammar / Task construction)
    error: str | None = None  # bad input, impossible combination, or a failed verification call
    hint: str = ""
    notes: tuple[str, ...] = ()
    captions: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict is not None and self.task_set is not None and bool(self.verdict.ok)

    def drawing(self) -> Any:
        """The Schedule tab's graph (blocked steps marked, the scenario's captions on their frames)."""
        assert self.task_set is not None and self.verdict is not None
        return schedule_graph(self.task_set, highlight=self.verdict.highlight_keys(), captions=self.captions)


def _verify(built: Built, **search: Any) -> Verdict:
    """Verify a freshly built task set; the one place the explorer asks for a Verdict."""
    return verify(**built.verify_kwargs(), **search)


def compute(scenario: Scenario, config: Any, build_context: BuildContext, *, max_states: int | None = None,
            progress: Any = None, cancel: Any = None) -> Outcome:
    """Check, build, verify and draw ``config`` of ``scenario``; never raises for the user's mistakes.

    ``max_states``, ``progress`` and ``cancel`` go to our checker (the quick
    pass of an update caps its search; a background proof reports and stops).
    """
    start = time.perf_counter()
    refused = refusal(scenario, config)
    if refused is not None:
        if refused.hint:
            return Outcome(config, error=refused.cause, hint=refused.hint)
        return Outcome(config, error=str(refused), hint="" if ";" in str(refused) else GENERIC_CHECK_HINT)
    try:
        built = scenario.build(config, build_context)
    except ConfigError as exc:  # the scenario's own refusal while building: its cause and fix, not a TS error
        return Outcome(config, error=exc.cause, hint=exc.hint or GENERIC_CHECK_HINT)
    except Exception as exc:  # noqa: BLE001 - a grammar error is data
        return Outcome(config, problem=problem_from_exception(exc))
    try:
        verdict = _verify(built, max_states=max_states, progress=progress, cancel=cancel)
    except Exception as exc:  # noqa: BLE001 - misuse of verify itself
        return Outcome(config, error=f"verification could not run: {type(exc).__name__}: {exc}",
                       hint="The scenario built tasks TaskManager cannot take; check the scenario's build().")
    task_set = verdict.task_set
    if task_set is None:  # capture failed: the verdict stands, there is nothing to draw
        return Outcome(config, verdict=verdict, error="the tasks verified but could not be captured for drawing",
                       hint="Report this with the configuration.")
    out = Outcome(config, verdict=verdict, task_set=task_set, notes=tuple(built.notes),
                  captions=dict(getattr(built, "captions", {}) or {}))
    return dataclasses.replace(out, dot=out.drawing().source, seconds=time.perf_counter() - start)


__all__ = ["GENERIC_CHECK_HINT", "Outcome", "compute"]
