"""Verification rules: checks of ours for effects TS's model does not see, run by :func:`ts_explore.verify`.

A verification rule takes the captured :class:`~ts_explore.model.TaskSet`
and returns a :class:`~ts_explore.model.verdict.CheckOutcome`; a failed one
makes the verdict UNSAFE like a failed TS check. It is a class with a
``name`` (the check's name in the verdict), a ``not_modelled`` sentence (the
effect it covers, for the scope) and ``__call__(task_set)``
(:class:`VerificationRule`). Adding one is one module in this package and
one line in :data:`VERIFICATION_RULES`; a scenario hands configured instances
to ``verify`` through ``Built.rules``.

Not to be confused with: *grammar problems* (TS refuses to record a schedule,
:data:`ts_explore.reader.problems.GRAMMAR_PROBLEMS`), *Task-time problems*
(a ``Task`` refuses a recorded schedule,
:data:`ts_explore.reader.task_problems.TASK_TIME_PROBLEMS`), *TS checks*
(TaskManager's own, :data:`ts_explore.reader.checks.TS_CHECKS`) and the
*search semantics* (what each step does to credits, :mod:`ts_explore.check`).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

from ...model import TaskSet
from ...model.findings import CheckOutcome
from .async_reads import AsyncReadRule


@runtime_checkable
class VerificationRule(Protocol):
    """A check of ours: the captured task set in, a :class:`CheckOutcome` out."""

    name: str
    not_modelled: str

    def __call__(self, task_set: TaskSet) -> CheckOutcome: ...


# every verification rule of ts-explore: its check name -> its class (one line per rule)
VERIFICATION_RULES: dict[str, type] = {
    AsyncReadRule.name: AsyncReadRule,
}


def rule_name(rule: Callable[..., Any]) -> str:
    """The check name of a rule: a registered rule's ``name``, else a plain function's ``__name__``."""
    return getattr(rule, "name", None) or getattr(rule, "__name__", None) or type(rule).__name__


def run_rules(rules: tuple[Callable[[TaskSet], CheckOutcome], ...], task_set: TaskSet | None,
              capture_error: str = "") -> tuple[CheckOutcome, ...]:
    """Each rule's outcome; a rule that cannot run (no capture, or it raised) is a failed check naming why.

    Registered rules and plain functions ``TaskSet -> CheckOutcome`` both run.
    """
    out = []
    for rule in rules:
        name = rule_name(rule)
        if task_set is None:
            out.append(CheckOutcome(name, name.replace("_", " "), False, "the task set could not be captured "
                                    f"({capture_error or 'no cause recorded'}), so this rule could not run",
                                    hint="fix what the capture failed on (the message says what), then verify again"))
            continue
        try:
            out.append(rule(task_set))
        except Exception as exc:  # noqa: BLE001 - a broken rule must not crash the notebook
            out.append(CheckOutcome(name, name.replace("_", " "), False, f"{type(exc).__name__}: {exc}",
                                    error_type=type(exc).__name__, hint="the rule itself failed; report it"))
    return tuple(out)


__all__ = ["VERIFICATION_RULES", "AsyncReadRule", "VerificationRule", "rule_name", "run_rules"]
