"""scripts/trace_phases.py reads the committed H200 traces: the ping-pong GEMM's epilogues lie inside the other
consumer's mainloop, and attention's consumers take the S GEMM in turns."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
phases = runpy.run_path(str(ROOT / "scripts" / "trace_phases.py"), run_name="trace_phases")
RESULTS = ROOT / "benchmarks" / "results"


def _rows(lines: list[str]) -> list[list[str]]:
    return [line.split() for line in lines[1:]]


def test_each_ping_pong_epilogue_runs_under_the_other_consumers_mainloop() -> None:
    timeline = phases["load_trace"](RESULTS / "hopper_gemm_pingpong.h200.trace.json")
    rows = _rows(phases["gemm_phases"](timeline))
    loops = {(int(u), c): (float(a), float(b)) for u, c, kind, a, b in rows if kind == "mainloop"}
    units = sorted({u for u, _ in loops})
    covered = 0
    for u, c, kind, a, b in rows:
        if kind != "epilogue":
            continue
        other = "mma1" if c == "mma0" else "mma0"
        # mma0's epilogue of a unit runs while mma1 finishes the same unit; mma1's while mma0 starts the next
        under = loops.get((int(u), other) if c == "mma0" else (units[min(units.index(int(u)) + 1, len(units) - 1)],
                                                                  other))
        if under and under[0] <= float(a) and float(b) <= under[1]:
            covered += 1
    assert covered >= 2 * len(units) - 2  # all but the last unit's two epilogues
    starts = [(a, c) for (u, c), (a, _) in sorted(loops.items(), key=lambda kv: kv[1][0])]
    assert [c for _, c in starts] == ["mma0", "mma1"] * len(units)  # the mainloops take turns


def test_attention_consumers_issue_their_s_gemms_in_turns() -> None:
    timeline = phases["load_trace"](RESULTS / "hopper_attention.h200.trace.json")
    issued = [row[0] for row in _rows(phases["attention_steps"](timeline)) if row[1] == "k_smem.qk"]
    assert issued == ["mma0", "mma1"] * (len(issued) // 2) and len(issued) >= 6


def test_a_trace_without_two_consumers_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert phases["main"]([str(RESULTS / "pipelined_copy.h200.trace.json")]) == 2
    assert "neither a cooperative GEMM" in capsys.readouterr().err


def test_the_cooperative_gemm_trace_says_how_long_no_mainloop_runs() -> None:
    timeline = phases["load_trace"](RESULTS / "hopper_gemm.h200.trace.json")
    lines = phases["cooperative_phases"](timeline)
    kinds = [row[1] for row in _rows(lines[:-1])]
    assert kinds == ["mainloop", "epilogue"] * (len(kinds) // 2) and len(kinds) >= 4
    loops = [(float(r[2]), float(r[3])) for r in _rows(lines[:-1]) if r[1] == "mainloop"]
    idle = sum(b[0] - a[1] for a, b in zip(loops, loops[1:]))
    said = float(lines[-1].split()[3])
    assert lines[-1].startswith("no mainloop running: ") and abs(said - idle) < 0.02  # from the rounded rows
