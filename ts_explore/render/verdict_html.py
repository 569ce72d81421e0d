"""A compact HTML table for a Verdict: each check pass/fail, then findings and caveats in words."""

from __future__ import annotations

import html

from typing import TYPE_CHECKING

from ..model._verdict_text import imbalance_text
from . import style

if TYPE_CHECKING:  # Verdict._repr_html_ calls this module: no import back at run time
    from ..model.verdict import Verdict

_STATUS_COLOR = {"safe": style.PASS_COLOR, "unsafe": style.FAIL_COLOR, "inconclusive": style.WARN_COLOR}


def _row(mark: str, color: str, title: str, detail: str) -> str:
    return (
        f"<tr><td style='color:{color};font-weight:bold;text-align:center'>{mark}</td>"
        f"<td style='text-align:left'>{html.escape(title)}</td>"
        f"<td style='text-align:left;white-space:pre-wrap'>{html.escape(detail)}</td></tr>"
    )


def verdict_html(v: Verdict, *, raw: bool = True) -> str:
    """Checks table + findings; the TS printout folded away under "raw output"."""
    color = _STATUS_COLOR[v.status.value]
    first = v.summary().splitlines()[0]
    if first.lower().startswith(f"{v.status.value}: "):  # the status is already in capitals: say it once
        first = first[len(v.status.value) + 2:]
    head = (
        f"<div style='font-weight:bold;color:{color};margin:4px 0'>"
        f"{html.escape(v.status.value.upper())}: {html.escape(first)}</div>"
    )
    rows = []
    for c in v.failed_checks:
        detail = c.message.strip().splitlines()[0] if c.message.strip() else c.error_type
        if c.hint:
            detail += f"\nfix: {c.hint}"
        rows.append(_row("&#10007;", style.FAIL_COLOR, c.title, detail))
    passed = [c.title for c in v.checks if c.passed]
    if passed:
        rows.append(_row("&#10003;", style.PASS_COLOR, f"{len(passed)} checks passed", ", ".join(passed)))
    for b in v.simulation_blocked:
        rows.append(_row("&#9888;", style.FAIL_COLOR, "credit simulation: blocked", b.sentence))
    for imb in v.imbalances:
        rows.append(_row("&#9888;", style.FAIL_COLOR, "credit simulation: unbalanced", imbalance_text(imb)))
    for run in v.runs:
        findings = (*run.deadlocks, *run.races, *run.pdl_violations)
        text = f"{run.states_explored} states, {run.complete_count} complete" + (
            ", stopped at the state cap" if run.hit_state_limit else "")
        mark, col = ("&#10003;", style.PASS_COLOR) if not findings else ("&#10007;", style.FAIL_COLOR)
        rows.append(_row(mark, col, f"exhaustive search: {run.label} (by {run.run_by})", text))
    covered = v.scope.tiles_covered if v.scope is not None else ""
    if covered:  # persistent schedules: which work-tile counts the verdict speaks for
        proven = covered.startswith(("every", "exactly"))
        rows.append(_row("&#10003;" if proven else "?", style.PASS_COLOR if proven else style.WARN_COLOR,
                         "work tiles covered", covered))
        for f in findings:
            steps = f" ({len(f.interleaving)} moves to reach it)" if f.interleaving else ""
            rows.append(_row("&#9888;", style.FAIL_COLOR, f"  {f.kind}", f.describe() + steps))
    for d in v.domain_notes if v.rejected else ():
        rows.append(_row("?", style.WARN_COLOR, f"domain of {d.task}",
                         f"{d.bounds}: not Python ints; TS checked {d.checked_iterations} iteration(s): "
                         "possibly a false positive"))
    for reason in v.reasons:
        rows.append(_row("?", style.WARN_COLOR, "not proven", reason))
    for n in v.warnings:
        rows.append(_row("!", style.WARN_COLOR, n.kind, n.message))
    table = (
        "<table style='border-collapse:collapse;font-size:12px'>"
        "<tr><th></th><th style='text-align:left'>check</th><th style='text-align:left'>details</th></tr>"
        + "".join(rows) + "</table>"
    )
    scope = v.scope
    extra = ""
    if scope is not None:
        extra += (
            "<details><summary>what was searched</summary>"
            f"<div style='font-size:12px;max-width:60em'>{html.escape(scope.sentence())}</div></details>"
        )
    if raw and v.raw_output.strip():
        extra += (
            "<details><summary>raw output</summary><pre style='font-size:11px;max-height:300px;overflow:auto'>"
            f"{html.escape(v.raw_output)}</pre></details>"
        )
    return f"<div class='ts-explore-verdict' style='font-family:sans-serif'>{head}{table}{extra}</div>"


__all__ = ["verdict_html"]
