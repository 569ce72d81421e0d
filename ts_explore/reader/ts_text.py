"""The one place that reads TS's printed text, for the results TS keeps nowhere else.

Everything else in verification uses TS's structured results (CheckResult,
DeadlockInfo, RaceInfo, exceptions as objects). Only these messages exist as
text alone, so they are parsed here, and ``tests/unit/test_ts_text.py`` pins
each format against real TS output:

* "Schedule is blocked!" from the credit simulation (no task names, resource
  names cut to 10 characters);
* the end-of-simulation balance errors ("2x ProducerCommit from smem not consumed!");
* unconditional printouts such as ``[head-loop-overlap] WARNING: ...``;
* the ``Stage(resource)`` operation strings of the checker's interleaving path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BLOCKED_HEADER = "Schedule is blocked!"

# f"  {name[:10]:10} {stage.name:14} {call_id:2} is blocked: {reason}"
_BLOCKED_LINE = re.compile(
    r"^  (?P<resource>.{10}) (?P<stage>[A-Za-z]+)\s+(?P<call>-?\d+) is blocked: (?P<reason>.*)$"
)
_IMBALANCE = (
    (re.compile(r"^(?P<n>\d+)x ProducerCommit from (?P<res>.+) not consumed!$"), "unconsumed-commit"),
    (
        re.compile(r"^(?P<n>\d+)x ProducerAcquire from (?P<res>.+) not matched by ConsumerRelease!$"),
        "acquire-without-release",
    ),
    (
        re.compile(r"^(?P<n>\d+)x ConsumerRelease from (?P<res>.+) not matched by ProducerAcquire!$"),
        "release-without-acquire",
    ),
)
_PRINTED_NOTE = re.compile(r"^\[(?P<kind>[a-z0-9-]+)\] (?P<level>WARNING|NOTE): (?P<text>.*)$")
_HEAD_LOOP = re.compile(r"'(?P<res>[^']*)' has ProducerWork in both HEAD and LOOP of '(?P<task>[^']*)'")
_QUOTED_RESOURCE = re.compile(r"resource '(?P<res>[^']*)'")
PRINTED_NAME_WIDTH = 10  # TS cuts a resource name to this many characters in its blocked lines
_PATH_OP = re.compile(r"^(?P<stage>[A-Za-z]+)\((?P<res>.*)\)$")


@dataclass(frozen=True)
class BlockedLine:
    """One task line of "Schedule is blocked!" (the task itself is not named by TS)."""

    resource_prefix: str  # the resource name, cut to 10 characters by TS
    stage: str  # ScheduleStage name
    call_index: int
    reason: str
    credit: str  # "commit" or "empty"

    def matches(self, resource_name: str) -> bool:
        """Whether a full resource name prints as this (possibly cut) name."""
        return resource_name[:PRINTED_NAME_WIDTH] == self.resource_prefix


def parse_blocked(message: str) -> list[BlockedLine] | None:
    """Parse a "Schedule is blocked!" message; None when the message is something else."""
    lines = message.strip().splitlines()
    if not lines or lines[0].strip() != BLOCKED_HEADER:
        return None
    out: list[BlockedLine] = []
    for line in lines[1:]:
        m = _BLOCKED_LINE.match(line)
        if m is None:
            continue  # the trailing NOTE about runtime domains
        reason = m["reason"]
        out.append(
            BlockedLine(
                resource_prefix=m["resource"].rstrip(),
                stage=m["stage"],
                call_index=int(m["call"]),
                reason=reason,
                credit="commit" if "producer commit credit" in reason else "empty",
            )
        )
    return out


@dataclass(frozen=True)
class ImbalanceLine:
    """An end-of-simulation balance error: how many of what, on which resource."""

    kind: str
    count: int
    resource: str


def parse_imbalance(message: str) -> ImbalanceLine | None:
    """Parse one end-of-simulation balance error; None for any other message."""
    text = message.strip()
    for pattern, kind in _IMBALANCE:
        m = pattern.match(text)
        if m:
            return ImbalanceLine(kind, int(m["n"]), m["res"])
    return None


@dataclass(frozen=True)
class PrintedNote:
    """A ``[kind] WARNING|NOTE: text`` line TS printed."""

    kind: str
    level: str
    text: str
    task: str | None = None
    resource: str | None = None


def parse_printed_notes(output: str) -> list[PrintedNote]:
    """Every ``[kind] WARNING: ...`` / ``[kind] NOTE: ...`` line of captured stdout."""
    notes: list[PrintedNote] = []
    for line in output.splitlines():
        m = _PRINTED_NOTE.match(line.strip())
        if m is None:
            continue
        task = resource = None
        h = _HEAD_LOOP.search(m["text"])
        if h:
            task, resource = h["task"], h["res"]
        else:
            r = _QUOTED_RESOURCE.search(m["text"])
            resource = r["res"] if r else None
        notes.append(PrintedNote(m["kind"], m["level"], m["text"], task, resource))
    return notes


def parse_path_op(op: str) -> tuple[str, str] | None:
    """``"ProducerAcquire(smem_a)"`` -> ``("ProducerAcquire", "smem_a")``."""
    m = _PATH_OP.match(op.strip())
    return (m["stage"], m["res"]) if m else None


__all__ = [
    "BLOCKED_HEADER",
    "BlockedLine",
    "PRINTED_NAME_WIDTH",
    "ImbalanceLine",
    "PrintedNote",
    "parse_blocked",
    "parse_imbalance",
    "parse_path_op",
    "parse_printed_notes",
]
