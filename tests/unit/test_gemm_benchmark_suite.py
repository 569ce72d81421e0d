"""benchmarks/gemm.py's shape suite and report, on the CPU: the issue's LLM shapes, tails that really are
tails, the configs each shape runs, and the last line's exact form."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from ts_explore.kernels.gemm_geometry import shape_refusal

_SPEC = importlib.util.spec_from_file_location("gemm_benchmark", Path(__file__).parents[2] / "benchmarks" / "gemm.py")
bench = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["gemm_benchmark"] = bench  # its dataclasses look their module up
_SPEC.loader.exec_module(bench)  # type: ignore[union-attr]


def test_full_suite_has_the_llm_projections_and_the_square_shapes() -> None:
    full = bench.SUITE["full"]
    assert len(full) == len(set(full)) == 6 + 16 - 1  # 4096^3 is the 8B O projection at 4096 tokens
    llm = {(n, k) for m, n, k in full if m in (4096, 16384) and (m, n, k) not in bench.SQUARE}
    assert llm == {(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),  # Llama-3-8B: QKV, O, gate/up, down
                   (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)}  # Llama-3-70B
    assert sum(1 for m, _, _ in full if m == 16384) == 9  # 8 projections + 16384x1024x4096
    assert {(4096,) * 3, (8192,) * 3, (8192, 8192, 1024), (16384, 1024, 4096)} <= set(full)
    assert all(shape_refusal(s) is None for s in full) and set(bench.SUITE["quick"]) <= set(full)
    for m, n, k in (bench.TAILS, bench.SMALL):  # tails in M, N and K of the 128x256x64 tile
        assert m % 128 and n % 256 and k % 64
    assert bench.shape_name((16384, 57344, 8192)) == "16384x57344x8192 (70B gate/up)"
    assert bench.shape_name((4096, 4096, 4096)) == "4096x4096x4096 (8B O)"


def test_each_shape_runs_a_few_configs_and_8192_cubed_all() -> None:
    labels = [label for label, _ in bench.configs()]
    assert set(bench.SUITE_CONFIGS) <= set(labels)  # the suite's fixed configs exist
    assert bench.labels_for(bench.TARGET, labels, "full") == [x for x in labels if x not in bench.SMALL_ONLY]
    assert bench.labels_for((4096, 6144, 4096), labels, "full") == list(bench.SUITE_CONFIGS)
    assert len(bench.labels_for((4096, 6144, 4096), labels, "quick")) == 2
    small = bench.labels_for(bench.SMALL, labels, "full")
    assert set(bench.SUITE_CONFIGS) < set(small) and "128x128 2wg 4st no-queue 2x1" in small


def test_named_shapes_and_configs_time_every_pair() -> None:
    """--shapes with --configs: a large-tile config named for a suite shape is timed there, not dropped."""
    named = ["128x256 2wg 4st static swz8 handoff", "128x128 2wg 4st static 1x2"]
    assert bench.labels_for((8192, 8192, 1024), named, "full") == []
    assert bench.labels_for((8192, 8192, 1024), named, "full", every=True) == named


def test_the_last_line_and_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    best = {"8192x8192x8192": ("swz8", 712.34, 1.071), "4096x6144x4096": ("by shape", 600.0, 1.02),
            "1000x1032x520": ("by shape", 160.0, 0.93)}
    names = ["8192x8192x8192", "4096x6144x4096 (8B QKV)", "1000x1032x520"]
    assert bench.report(best, names) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "8192³: swz8: 712.3 TFLOP/s = 1.07x torch.matmul; suite geomean 1.01x; worst 0.93x"
    assert re.fullmatch(r"8192³: .+: [\d.]+ TFLOP/s = \d\.\d\dx torch\.matmul; suite geomean \d\.\d\dx; "
                        r"worst \d\.\d\dx", last)
    assert bench.report({**best, "1000x1032x520": ("by shape", 150.0, 0.85)}, names) == 1  # below 0.90x
    assert bench.report({k: v for k, v in best.items() if k != "1000x1032x520"}, names) == 1  # a shape not timed


def test_bad_shapes_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--shapes", "4096x4096"]) == 2
    assert "three positive integers" in capsys.readouterr().err


def test_an_unknown_config_label_exits_2_naming_the_labels(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--configs", "by shape", "128x256 swz8"]) == 2
    err = capsys.readouterr().err
    assert "--configs '128x256 swz8': not a config label" in err and "'128x256 2wg 4st static swz8'" in err
