"""A user-facing problem: what went wrong, why, how to fix it, and where."""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A schedule the TS grammar (or our own checks) rejected.

    ``rule`` is a short stable slug (``workqueue-in-skippable``); ``message`` is
    TS's own words; ``hint`` says how to fix it; ``line``/``filename``/``source``
    point at the user's code when it could be found.
    """

    rule: str
    message: str
    hint: str
    line: int | None = None
    filename: str | None = None
    source: str | None = None
    error_type: str = "ScheduleError"

    def __str__(self) -> str:
        where = f" (line {self.line}: {self.source.strip()})" if self.line and self.source else ""
        if self.line and not self.source:
            where = f" (line {self.line})"
        return f"[{self.rule}] {self.message}{where}\n  hint: {self.hint}"

    def to_html(self) -> str:
        """An error box for notebooks."""
        loc = ""
        if self.line is not None:
            src = f": <code>{html.escape(self.source.strip())}</code>" if self.source else ""
            loc = f"<div><b>line {self.line}</b>{src}</div>"
        return (
            '<div class="ts-explore-problem" style="border:2px solid #c0392b;'
            'border-radius:6px;padding:8px 12px;background:#fdf2f2;font-family:sans-serif">'
            f'<div style="color:#c0392b;font-weight:bold">{html.escape(self.error_type)}'
            f" &middot; {html.escape(self.rule)}</div>"
            f"<div style='margin:4px 0'>{html.escape(self.message)}</div>"
            f"{loc}"
            f"<div style='margin-top:4px'><b>How to fix:</b> {html.escape(self.hint)}</div>"
            "</div>"
        )


__all__ = ["Problem"]
