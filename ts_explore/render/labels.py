"""Helpers for Graphviz HTML-like labels."""

from __future__ import annotations


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


__all__ = ["esc", "html_label"]
