"""Helpers for Graphviz labels: HTML-like label tables, escaping, wrapping long plain labels."""

from __future__ import annotations

import textwrap

TITLE_WIDTH = 80  # characters per line of a drawing's title before it wraps


def esc(text: str) -> str:
    """Escape text for a Graphviz HTML-like label."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def html_label(rows: list[str]) -> str:
    """Stack already-escaped rows in a borderless table: ``<...>`` label text."""
    body = "".join(f"<tr><td>{row}</td></tr>" for row in rows)
    return f'<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{body}</table>>'


def wrap(text: str, width: int = TITLE_WIDTH) -> str:
    r"""A plain label broken into lines of at most ``width`` characters (Graphviz ``\n`` breaks).

    >>> print(wrap("changes since the last safe configuration: 3 steps added", 30))
    changes since the last safe\nconfiguration: 3 steps added
    """
    return "\\n".join(line for part in text.split("\\n") for line in (textwrap.wrap(part, width) or [""]))


__all__ = ["esc", "html_label", "wrap"]
