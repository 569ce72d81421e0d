"""``ts-explore sweep``: the CSV/Parquet round trip and the exit codes (0 results, 1 failures, 2 usage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ts_explore import scenarios
from ts_explore.cli import main
from ts_explore.sweeps import config_of


def _run(scheduler: str, *args: str) -> int:
    return main(["sweep", *args, "--scheduler", scheduler, "-q"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip(scheduler: str, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"results{suffix}"
    code = _run(scheduler, "pipelined_copy", "--grid", "stages=1,2", "--grid", "loader=tma,threads",
                "--grid", "store_warps=4,64", "--set", "ctas=2", "-o", str(out))
    assert code == 0, capsys.readouterr().err
    assert "8 of 8 cells (4 safe, 4 refused" in capsys.readouterr().out
    df = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    sc = scenarios.get("pipelined_copy")
    for _, row in df[df["status"] == "safe"].iterrows():
        cfg = config_of(sc, row)
        assert (cfg.stages, cfg.loader.name.lower(), cfg.store_warps, cfg.ctas) == (
            row["stages"], row["loader"], row["store_warps"], 2)


def test_failed_cells_exit_1(scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.csv"
    target = f"{Path(__file__).with_name('sweep_scenarios.py')}:GALLERY"  # MODULE:ATTR of a Scenario
    code = _run(scheduler, target, "--grid", "mode=ok,spin", "--timeout", "1", "--no-cache", "-o", str(out))
    assert code == 1
    assert "failed: mode=spin: timed out" in capsys.readouterr().err
    assert pd.read_csv(out)["status"].tolist() == ["safe", "failed"]


@pytest.mark.parametrize("args, message", [
    (["pipelined_copy", "--grid", "stagez=1,2"], "has no setting stagez"),
    (["pipelined_copy", "--grid", "stages"], "--grid takes KEY=V1,V2"),
    (["no_such_scenario", "--grid", "stages=1"], "no scenario named 'no_such_scenario'"),
    (["pipelined_copy", "--grid", "stages=1", "--set", "tile=3"], "tile"),
])
def test_usage_errors_exit_2(scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                             message: str) -> None:
    assert _run(scheduler, *args, "-o", str(tmp_path / "r.csv")) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("ts-explore sweep: error:")
    assert main(["sweep", "pipelined_copy", "--grid", "stages=1", "-o", str(tmp_path / "r.txt")]) == 2


@pytest.fixture()
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fails the test if a sweep starts a cluster: a refused option must be refused before anything runs."""
    from ts_explore.sweeps import cluster

    started: list[Any] = []

    def start(*args: Any, **kwargs: Any) -> Any:
        started.append(kwargs)
        raise AssertionError("a cluster was started for a command line that should have been refused")

    monkeypatch.setattr(cluster, "start_cluster", start)
    monkeypatch.setattr(cluster, "local_client", start)
    return started


@pytest.mark.parametrize("option, message", [
    (["--workers", "-1"], "--workers takes a positive number of worker processes, got '-1'"),
    (["--workers", "0"], "--workers takes a positive number"),
    (["--workers", "two"], "--workers takes a positive number"),
    (["--timeout", "nan"], "--timeout takes a positive number of seconds per cell, got 'nan'"),
    (["--timeout", "-1"], "--timeout takes a positive number of seconds"),
    (["--timeout", "0"], "--timeout takes a positive number of seconds"),
    (["--timeout", "inf"], "--timeout takes a positive number of seconds"),
])
def test_bad_options_exit_2_with_one_line_before_any_cell(no_cluster: list[Any], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str], option: list[str],
                                                          message: str) -> None:
    code = main(["sweep", "pipelined_copy", "--grid", "stages=1,2", "-q", "-o", str(tmp_path / "r.csv"), *option])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not no_cluster and not (tmp_path / "r.csv").exists()


def test_an_output_folder_that_does_not_exist_is_refused_up_front(no_cluster: list[Any], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / "dir" / "x.csv"
    assert main(["sweep", "pipelined_copy", "--grid", "stages=1,2", "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the folder {out.parent} does not exist" in err and not no_cluster


def test_the_api_refuses_the_same_values() -> None:
    import math

    from ts_explore.sweeps import SweepError, sweep
    from ts_explore.sweeps.cluster import start_cluster

    for bad in (math.nan, -1, 0, math.inf):
        with pytest.raises(SweepError, match="timeout= takes a positive number of seconds"):
            sweep("pipelined_copy", {"stages": [1]}, timeout=bad, progress=False)
    for bad in (-1, 0, 1.5):
        with pytest.raises(SweepError, match="workers= takes a positive number"):
            start_cluster(workers=bad)  # type: ignore[arg-type]


def test_a_damaged_cache_is_one_warning_and_the_sweep_goes_on(scheduler: str, tmp_path: Path, cache_dir: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.csv"
    args = ["pipelined_copy", "--grid", "stages=1,2,3", "-o", str(out)]
    assert _run(scheduler, *args) == 0
    capsys.readouterr()
    (path,) = (cache_dir / "sweeps").glob("pipelined_copy-*.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b"\xff not text\n", *lines[3:]]))  # one byte ruins the second row
    assert _run(scheduler, *args) == 0
    captured = capsys.readouterr()
    warning = [line for line in captured.err.splitlines() if line]
    assert len(warning) == 1 and str(path) in warning[0] and "skipped line 3: not UTF-8" in warning[0]
    assert warning[0].startswith("ts-explore sweep: warning: ")
    assert "(3 safe; 2 from the cache)" in captured.out and len(pd.read_csv(out)) == 3


def test_a_cache_that_cannot_be_written_still_writes_the_table(scheduler: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(blocked))
    out = tmp_path / "r.csv"
    assert _run(scheduler, "pipelined_copy", "--grid", "stages=1,2", "-o", str(out)) == 0
    captured = capsys.readouterr()
    assert "cannot be written" in captured.err and captured.err.count("\n") == 1
    assert pd.read_csv(out)["status"].tolist() == ["safe", "safe"]
