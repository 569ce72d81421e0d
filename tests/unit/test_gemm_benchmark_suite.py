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


def test_full_suite_is_the_issues_llm_projections_square_and_awkward_shapes() -> None:
    full = bench.SUITE["full"]
    # 8192^3 and 4096^3, 3 token counts x 8 projections, 2 awkward shapes; 4096^3 is the 8B O projection at 4096
    # tokens and 8192^3 the 70B O projection at 8192
    assert len(full) == len(set(full)) == 2 + 24 + 2 - 2
    llm = {(n, k) for m, n, k in full if m in (4096, 8192, 16384) and (m, n, k) not in bench.SQUARE}
    assert llm == {(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),  # Llama-3-8B: QKV, O, gate/up, down
                   (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)}  # Llama-3-70B
    assert {m for m, _, _ in full} >= {4096, 8192, 16384} and sum(1 for m, _, _ in full if m == 16384) == 8
    assert {(4096,) * 3, (8192,) * 3, (5000, 3080, 4136), (1000, 1032, 520)} <= set(full)
    assert all(shape_refusal(s) is None for s in full) and set(bench.SUITE["quick"]) <= set(full)
    for m, n, k in (bench.TAILS, bench.SMALL):  # tails in M, N and K of the 128x256x64 tile
        assert m % 128 and n % 256 and k % 64
    assert bench.shape_name((16384, 57344, 8192)) == "16384x57344x8192 (70B gate/up)"
    assert bench.shape_name((4096, 4096, 4096)) == "4096x4096x4096 (8B O)"
    assert set(bench.QUACK_TUNED_SHAPES) <= set(full) and len(bench.QUACK_TUNED_SHAPES) == 3
    assert bench.TARGET in bench.QUACK_TUNED_SHAPES


def test_each_shape_runs_three_configs_and_8192_cubed_the_new_tiles_beside_the_best_earlier() -> None:
    labels = [label for label, _ in bench.configs()]
    assert set(bench.SUITE_CONFIGS) <= set(labels) and set(bench.TARGET_CONFIGS) <= set(labels)
    at_target = bench.labels_for(bench.TARGET, labels, "full")
    assert set(at_target) == set(bench.TARGET_CONFIGS) and set(bench.SUITE_CONFIGS) <= set(at_target)
    assert {"pingpong 128x192 4st static 2x1 swz8", "128x192 2wg 5st static swz8", "256x192 2wg 3st static swz8",
            "128x256 2wg 4st static 2x1 swz8"} <= set(at_target)
    assert bench.labels_for((4096, 6144, 4096), labels, "full") == list(bench.SUITE_CONFIGS)
    assert len(bench.labels_for((4096, 6144, 4096), labels, "quick")) == 2
    small = bench.labels_for(bench.SMALL, labels, "full")
    assert set(bench.SUITE_CONFIGS) < set(small) and "128x128 2wg 4st no-queue 2x1" in small


def test_the_tails_suite_times_by_shape_beside_the_pick_before_fitted_widths_and_their_variants() -> None:
    """--suite tails: the two awkward shapes, where 'by shape' now narrows the tile; the rows beside it are the tile it
    picked before (128x256 and 128x128, both in 2x1 clusters) and the fitted widths' variants, none of them the same
    kernel as 'by shape'."""
    from ts_explore.scenarios import get

    sc = get("hopper_gemm")
    labels = [label for label, _ in bench.configs()]
    known = dict(bench.configs())
    assert bench.SUITE["tails"] == [bench.TAILS, bench.SMALL]
    for shape, before in ((bench.TAILS, "128x256 2wg 4st static 2x1"), (bench.SMALL, "128x128 2wg 4st static 2x1")):
        timed = bench.labels_for(shape, labels, "tails")
        assert timed == list(bench.TAILS_CONFIGS[shape]) and timed[:2] == ["by shape", before]
        kernels = [sc.config(**known[label]).resolved(shape, 132) for label in timed]
        assert len(set(kernels)) == len(kernels), "each row times a kernel of its own"
        assert kernels[0].tile_n and not kernels[1].tile_n, "by shape narrows; the earlier pick does not"


def test_every_config_is_accepted_by_the_scenario() -> None:
    from ts_explore.scenarios import get

    sc = get("hopper_gemm")
    refused = []
    for label, overrides in bench.configs():
        try:
            sc.check(sc.config(**overrides))
        except ValueError as exc:
            refused.append(f"{label}: {exc}")
    assert not refused, refused


def test_named_shapes_and_configs_time_every_pair() -> None:
    """--shapes with --configs: a large-tile config named for a suite shape is timed there, not dropped."""
    named = ["128x256 2wg 4st static swz8 handoff", "128x128 2wg 4st static 1x2"]
    assert bench.labels_for((4096, 6144, 4096), named, "full") == []
    assert bench.labels_for((4096, 6144, 4096), named, "full", every=True) == named


def test_each_row_is_judged_against_the_faster_of_torch_and_quack() -> None:
    names = ["torch.matmul", "QuACK", "QuACK tuned"]
    assert bench.best_of(names, (1.04, 0.97, 1.01)) == (1.04, 0.97), "QuACK's faster variant: the lower ratio"
    assert bench.best_of(["torch.matmul"], (1.04,)) == (1.04, None)
    assert bench.Best("x", 600.0, 1.04, 0.97).ratio == 0.97 and bench.Best("x", 600.0, 0.98).ratio == 0.98


def test_the_last_line_and_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    best = {"8192x8192x8192": bench.Best("swz8", 712.34, 1.071, 1.052), "4096x6144x4096": bench.Best("by", 600.0, 1.05,
                                                                                                     1.03),
            "1000x1032x520": bench.Best("by shape", 160.0, 0.99, 1.2)}
    names = ["8192x8192x8192 (70B O)", "4096x6144x4096 (8B QKV)", "1000x1032x520"]
    assert bench.report(best, names) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "8192³: swz8: 712.3 TFLOP/s = 1.07x torch.matmul, 1.05x QuACK; suite geomean 1.02x; worst 0.99x"
    assert re.fullmatch(r"8192³: .+: [\d.]+ TFLOP/s = \d\.\d\dx torch\.matmul, \d\.\d\dx QuACK; suite geomean "
                        r"\d\.\d\dx; worst \d\.\d\dx", last)
    assert bench.report({**best, "1000x1032x520": bench.Best("by shape", 150.0, 0.94, 1.3)}, names) == 1  # < 0.95x
    assert bench.report({**best, "8192x8192x8192": bench.Best("swz8", 700.0, 1.07, 1.04)}, names) == 1  # QuACK wins
    assert bench.report({k: v for k, v in best.items() if k != "1000x1032x520"}, names) == 1  # a shape not timed
    capsys.readouterr()
    bench.report(best, names, "QuACK not installed (no module named 'quack'): timing torch.matmul only")
    assert "QuACK not installed" in capsys.readouterr().out


def test_without_quack_the_benchmark_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_quack(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith("quack"):
            raise ImportError("No module named 'quack'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_quack)
    fn, why = bench.quack_gemm()
    assert fn is None and "QuACK not installed" in why and "torch.matmul only" in why and "quack-kernels" in why


def test_bad_shapes_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--shapes", "4096x4096"]) == 2
    assert "three positive integers" in capsys.readouterr().err


def test_an_unknown_config_label_exits_2_naming_the_labels(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--configs", "by shape", "128x256 swz8"]) == 2
    err = capsys.readouterr().err
    assert "--configs '128x256 swz8': not a config label" in err and "'128x256 2wg 4st static swz8'" in err
