"""The Verdict's checks beyond TaskManager's: the exhaustive search's outcome, the caller's rules, notes.

:func:`exhaustive_check` makes the search runs one check, failed at the
first run that found something (in TaskManager's order); :func:`analysis_check`
says that reading TS's results failed (INCONCLUSIVE, not a TS rejection); :mod:`.rules`
runs the verification rules of ours (``verify(rules=...)``);
:func:`unconsumed_outputs` notes work results nothing uses; :func:`raw_output`
is what the "raw output" panel shows.
"""

from __future__ import annotations

from ..model import Family, TaskSet
from ..model.verdict import CheckOutcome, Note
from ..reader.checks import ANALYSIS, check_hint, check_title
from ..reader.instance import Searched

EXHAUSTIVE = "_exhaustive_aliasing_races"  # TS's name for the check its search is
_KINDS = {"deadlock": ("deadlock", "deadlocks"), "race": ("aliasing race", "aliasing races"),
          "pdl-order": ("PDL launch-before-wait violation", "PDL launch-before-wait violations")}


def _label(s: Searched, persistent: bool) -> str:
    details = [f"{s.input.num_tiles} tile{'' if s.input.num_tiles == 1 else 's'}"] if persistent else []
    details += [f"{k}={v}" for k, v in s.input.opaque]
    return s.input.variant + (f" ({', '.join(details)})" if details else "")


def exhaustive_check(searched: list[Searched], persistent: bool) -> CheckOutcome:
    """TS's exhaustive check as our searches answered it: passed, or failed naming the first failing run."""
    first = next((s for s in searched if s.unsafe), None)
    if first is None:
        return CheckOutcome(EXHAUSTIVE, check_title(EXHAUSTIVE), True)
    found = ", ".join(f"{n} {_KINDS[k][n != 1]}" for k, n in first.findings.items() if n)
    lines = [f"the exhaustive search found {found} in the {_label(first, persistent)} run "
             f"after exploring {first.states} states"]
    if first.run is not None:
        lines += [f"  {b.reason}" for d in first.run.deadlocks for b in d.blocked]
        lines += [f"  {r.describe()}" for r in first.run.races]
        lines += [f"  {p.describe()}" for p in first.run.pdl_violations]
    return _failed(EXHAUSTIVE, "ValueError", "\n".join(lines))


def analysis_check(error_type: str, message: str) -> CheckOutcome:
    """The failed check saying that ts-explore could not read TS's results (``error_type: message``)."""
    return _failed(ANALYSIS, error_type, message)


def _failed(name: str, error_type: str, message: str) -> CheckOutcome:
    return CheckOutcome(name=name, title=check_title(name), passed=False, message=message.strip() or error_type,
                        error_type=error_type, hint=check_hint(name))


def unconsumed_outputs(task_set: TaskSet) -> list[Note]:
    """Work calls whose returned variables feed no route and no condition (TS warns only while recording)."""
    notes = []
    for info in task_set.tasks:
        tree = info.schedule
        used = {r.source for r in tree.routes} | {
            b.condition.step for b in tree.blocks() if b.condition is not None and b.condition.step is not None
        }
        for step in tree.steps():
            # a WorkQueue's work_tile feeds the next tile inside TS, never a route
            if step.returns and step.uid not in used and step.family is not Family.QUEUE:
                notes.append(Note("unconsumed-output",
                                  f"{info.name}: {step.title} returns {', '.join(step.returns)} but no later step "
                                  "uses it", info.name, step.resource))
    return notes


def raw_output(printed: str, checks: tuple[CheckOutcome, ...], warnings_text: list[str],
               capture_error: str = "") -> str:
    """TS's printout, each failed check's message, the warnings, and a failed capture's cause."""
    parts = [printed.rstrip()]
    failed = [c for c in checks if not c.passed]
    if failed:
        parts.append("\n".join(f"--- {c.name} ({c.error_type}) ---\n{c.message}" for c in failed))
    if warnings_text:
        parts.append("--- warnings ---\n" + "\n".join(warnings_text))
    if capture_error:
        parts.append(f"--- capturing the task set failed ---\n{capture_error}")
    return "\n\n".join(p for p in parts if p)


__all__ = ["EXHAUSTIVE", "analysis_check", "exhaustive_check", "raw_output", "unconsumed_outputs"]
