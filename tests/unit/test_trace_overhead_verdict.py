"""The trace-overhead benchmark never reports a bound as met that it did not measure."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ts_explore.gpu import LaunchError

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "trace_overhead.py"


def _benchmark(launch: Any) -> dict[str, Any]:
    """The script's namespace with ``launch`` standing in for the real launcher."""
    namespace = runpy.run_path(str(SCRIPT), run_name="benchmark")
    namespace["main"].__globals__["launch"] = launch
    return namespace


def _measured(ratio: float, ok: bool = True) -> Any:
    """A launch result whose traced / plain ratio is ``ratio``."""
    run = SimpleNamespace(kernel=SimpleNamespace(median_ms=0.1), overhead=lambda: ratio, timeline=None)
    return SimpleNamespace(runs=[run], device=SimpleNamespace(name="GPU", arch="sm_90"), ok=ok)


def test_a_machine_without_a_gpu_stops_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    def launch(*args: Any, **kwargs: Any) -> Any:
        raise LaunchError("no_driver", "no NVIDIA driver on this machine")

    assert _benchmark(launch)["main"](["--only", "threads"]) == 2
    out = capsys.readouterr()
    assert "no NVIDIA driver" in out.err and "meets" not in out.out


def test_a_failed_cell_is_named_and_fails_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    def launch(name: str, **kwargs: Any) -> Any:
        if kwargs["trace"].ctas == 2 and name == "guards_demo":
            raise LaunchError("compile_failed", "compiling guards_demo failed")
        return _measured(1.01)

    assert _benchmark(launch)["main"]([]) == 1
    out = capsys.readouterr().out
    assert "NOT MEASURED for guards demo (4 MiB)" in out and "meets" not in out


def test_a_wrong_output_does_not_count_as_measured(capsys: pytest.CaptureFixture[str]) -> None:
    assert _benchmark(lambda name, **kwargs: _measured(1.0, ok=name != "varlen_copy"))["main"]([]) == 1
    assert "NOT MEASURED for varlen, static queue" in capsys.readouterr().out


@pytest.mark.parametrize("ratio,status,word", [(1.049, 0, "meets"), (1.051, 1, "ABOVE")])
def test_the_verdict_follows_the_worst_default_column(ratio: float, status: int, word: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    def launch(name: str, **kwargs: Any) -> Any:
        return _measured(ratio if name == "pipelined_copy" and kwargs["trace"].ctas == 2 else 1.0)

    assert _benchmark(launch)["main"](["--only", "pipelined"]) == status
    out = capsys.readouterr().out
    assert f"worst work-step overhead (2 CTAs): {ratio:.3f}x [{word}" in out
    assert "grid-stride" not in out, "--only keeps just the chosen scenarios"


def test_default_only_launches_just_the_default_trace_of_each_chosen_scenario(
        capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[tuple[str, int]] = []

    def launch(name: str, **kwargs: Any) -> Any:
        seen.append((name, kwargs["trace"].ctas))
        return _measured(1.02)

    assert _benchmark(launch)["main"](["--only", "ping-pong", "attention", "--default-only"]) == 0
    assert seen == [("hopper_gemm", 2), ("hopper_attention", 2)]
    out = capsys.readouterr().out
    assert "work, 2 CTAs" in out and "all, all CTAs" not in out and "worst work-step overhead (2 CTAs): 1.020x" in out
