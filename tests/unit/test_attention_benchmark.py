"""benchmarks/attention.py on the CPU: the rows it times, when torch's math backend sits out, when a row's timing
has settled, and the closing line's exact form (the issue quotes it)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))  # it imports its timing helpers from benchmarks/gemm.py
_SPEC = importlib.util.spec_from_file_location("attention_benchmark", BENCH / "attention.py")
bench = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["attention_benchmark"] = bench  # its dataclasses look their module up
try:
    _SPEC.loader.exec_module(bench)  # type: ignore[union-attr]
finally:
    sys.path.remove(str(BENCH))

LINE = re.compile(r"hd128 8k: (.+): (\d+) TFLOP/s = (\d\.\d\d)x FA4 \((\d\.\d\d)x cuDNN\); causal (\d\.\d\d)x FA4; "
                  r"worst (\d\.\d\d)x FA4")


def test_every_row_holds_16k_tokens_of_a_2048_wide_model_at_each_seqlen_from_1k_to_16k() -> None:
    rows = bench.cases()
    assert len(rows) == 2 * 2 * 5
    assert {(d, c, s) for d, c, s, _, _ in rows} == {(d, c, s) for d in (64, 128) for c in (False, True)
                                                      for s in (1024, 2048, 4096, 8192, 16384)}
    assert all(b * s == 16384 and h * d == 2048 for d, _, s, b, h in rows)
    assert bench.cases(quick=True) == [(128, False, 8192, 2, 16), (128, True, 8192, 2, 16)]
    # the rows that time the most configs first, so a budget cut leaves out rows of the default pair only
    assert [(d, c, s) for d, c, s, _, _ in rows[:4]] == [(128, False, 8192), (128, True, 8192), (64, False, 8192),
                                                         (64, True, 8192)]


def test_the_math_backend_sits_out_where_its_score_matrix_passes_2_to_the_30_and_says_so() -> None:
    assert bench.math_refusal(4, 16, 4096, 4096) is None  # hd128 4k: 2^30 scores exactly
    said = bench.math_refusal(1, 16, 16384, 16384)
    assert said is not None and "math skipped" in said and "4Gi scores" in said and "16 GiB" in said
    assert bench.math_refusal(8, 32, 2048, 2048) is None and bench.math_refusal(4, 32, 4096, 4096) is not None
    timed = [(d, s) for d, _, s, b, h in bench.cases() if bench.math_refusal(b, h, s, s) is None]
    assert set(timed) == {(128, 1024), (128, 2048), (128, 4096), (64, 1024), (64, 2048)}


def test_a_row_settles_only_once_the_last_runs_agree_within_two_percent_on_every_watched_ratio() -> None:
    steady = {"ours a": 1.0, "ours b": 0.9, "FA4": 1.2, "cuDNN": 1.1, "efficient": 3.0}
    assert bench.settled([steady] * 2, "ours a") == (False, 1.0, "")
    assert bench.settled([steady] * 3, "ours a")[:2] == (True, 0.0)
    drifting = [steady, steady, {**steady, "cuDNN": 1.1 * 1.03}]
    done, worst, whose = bench.settled(drifting, "ours a")
    assert not done and 0.02 < worst < 0.04 and whose == "cuDNN"
    ours_drift = [steady, steady, {**steady, "ours b": 0.9 * 1.05}]
    assert bench.settled(ours_drift, "ours a")[::2] == (False, "ours b")
    # the ratios agree although both sides slowed down together (clocks): that is settled
    assert bench.settled([steady, steady, {k: 1.05 * t for k, t in steady.items()}], "ours a")[0]
    # a backend no target compares against is reported, not waited for
    assert bench.settled([steady, steady, {**steady, "efficient": 3.3}], "ours a")[0]


def test_every_row_times_the_default_tile_with_and_without_static_persistence_and_8k_more_configs() -> None:
    from ts_explore.scenarios import get
    from ts_explore.scenarios.attention import Persistence

    sc = get("hopper_attention")
    labels = [label for label, _ in bench.configs(every=True)]
    assert len(set(labels)) == len(labels)
    assert [o.get("persistence") for _, o in bench.row_configs(128, 1024)] == [Persistence.STATIC, None]
    assert bench.row_configs(128, 8192) == bench.configs() and len(bench.row_configs(128, 8192, every=True)) == 8
    assert [o.get("tile_k") for _, o in bench.row_configs(64, 8192)[4:]] == [None, None, 192, 256]
    assert [o.get("consumer_wgs") for _, o in bench.row_configs(64, 1024, causal=True)] == [None, None, 3, 3]
    for head_dim, timed in ((128, bench.configs(every=True)), (64, bench.hd64_configs())):
        for label, overrides in timed:  # each a config the scenario takes at its head_dim, its label saying what
            cfg = sc.config(head_dim=head_dim, **overrides)
            sc.check(cfg)
            assert ("static" in label) == (cfg.persistence is Persistence.STATIC), label
            assert ("overlap" in label) == cfg.overlap, label
            assert ("ping-pong" in label) == cfg.pingpong, label
            assert f"{cfg.tile_q}x{cfg.tile_k} {cfg.consumer_wgs}wg " in label, label
            assert ("O from registers" in label) == (not cfg.tma_store), label


def test_the_default_pair_runs_with_overlap_and_its_in_order_twins_on_the_rows_issue_38_names() -> None:
    """Every row times the defaults (overlap on, as the scenario and the ops run); hd128 8k causal and not, hd64 8k
    and hd128 1k causal time their in-order twins beside them; ``--overlap`` runs those rows only, in that order,
    with nothing else."""
    from ts_explore.scenarios import get

    pair = bench.configs()[:2]
    assert [label for label, _ in pair] == ["128x128 2wg ping-pong static overlap", "128x128 2wg ping-pong overlap"]
    assert all(o["overlap"] == get("hopper_attention").config().overlap for _, o in pair)
    twins = bench.in_order_twins()
    assert all(not o["overlap"] for _, o in twins)
    assert [label for label, _ in twins] == ["128x128 2wg ping-pong static in order", "128x128 2wg ping-pong in order"]
    for d, causal, s in bench.OVERLAP_ROWS:
        timed = bench.row_configs(d, s, causal=causal)
        assert all(t in timed for t in twins) and all(t in timed for t in pair), (d, causal, s)
        assert bench.row_configs(d, s, causal=causal, overlap=True) == (
            pair + twins + bench.register_store_twins() + (bench.hd64_rows() if d == 64 else []))
    assert all(o["overlap"] for _, o in bench.row_configs(64, 1024, causal=True))
    assert all(o.get("tma_store", True) for _, o in bench.row_configs(64, 1024, causal=True))
    assert [(d, c, s) for d, c, s, _, _ in bench.cases(overlap=True)] == list(bench.OVERLAP_ROWS)
    assert all(b * s == 16384 and h * d == 2048 for d, _, s, b, h in bench.cases(overlap=True))


def test_every_config_the_benchmark_times_is_proven_safe_on_its_cpu_view() -> None:
    """A config our checker finds a deadlock in (two consumers without ping-pong under static persistence wait on
    each other's Q buffer) is not one to time: TS's own build check refused it at 8k on the H200."""
    from ts_explore import verify
    from ts_explore.scenarios import get

    sc = get("hopper_attention")
    for head_dim, timed in ((128, bench.configs(every=True)), (64, bench.hd64_configs())):
        for label, overrides in timed:
            verdict = verify(**sc.build(sc.config(head_dim=head_dim, **overrides)).verify_kwargs())
            assert verdict.status.value == "safe", (label, verdict.summary())


def _row(d: int, causal: bool, s: int, config: str, rate: float, fa4: float, cudnn: float) -> object:
    return bench.Row(d, causal, s, config, rate, {"FA4": fa4, "cuDNN": cudnn, "flash": 1.6})


def test_the_closing_line_names_the_best_config_at_hd128_8k_and_the_worst_row_against_fa4() -> None:
    rows = [_row(128, False, 8192, "128x128 2wg ping-pong", 543.2, 0.83, 0.90),
            _row(128, False, 8192, "128x128 2wg", 500.0, 0.77, 0.83),
            _row(128, True, 8192, "128x128 2wg ping-pong", 510.0, 0.84, 1.02),
            _row(64, True, 1024, "128x128 2wg ping-pong", 208.0, 0.61, 0.62)]
    line = bench.closing_line(rows)
    assert line == ("hd128 8k: 128x128 2wg ping-pong: 543 TFLOP/s = 0.83x FA4 (0.90x cuDNN); causal 0.84x FA4; "
                    "worst 0.61x FA4")
    assert LINE.fullmatch(line)
    assert not bench.targets_met(rows)
    assert bench.targets_met([_row(128, c, 8192, "x", 700.0, 1.01, 1.2) for c in (False, True)])


def test_without_fa4_the_closing_line_keeps_its_form_with_n_a_and_the_targets_are_not_met() -> None:
    rows = [bench.Row(128, c, 8192, "128x128 2wg ping-pong", 543.0, {"cuDNN": 0.9}) for c in (False, True)]
    line = bench.closing_line(rows)
    assert line == "hd128 8k: 128x128 2wg ping-pong: 543 TFLOP/s = n/a FA4 (0.90x cuDNN); causal n/a FA4; worst n/a FA4"
    assert not bench.targets_met(rows)


def test_a_report_prints_each_line_and_has_it_in_its_file_before_the_run_ends(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.txt"
    emit = bench.Report(str(path))
    emit("# header")
    emit("128  False   8192  row")
    assert path.read_text() == "# header\n128  False   8192  row\n"  # a run cut off here keeps both lines
    emit.close()
    assert capsys.readouterr().out == "# header\n128  False   8192  row\n"
    bench.Report(None)("printed only")
    assert capsys.readouterr().out == "printed only\n"
