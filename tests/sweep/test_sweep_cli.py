"""``ts-explore sweep``: the CSV/Parquet round trip and the exit codes (0 results, 1 failures, 2 usage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ts_explore import scenarios
from ts_explore.cli import main
from ts_explore.sweeps import config_of


def _run(client: Any, *args: str) -> int:
    return main(["sweep", *args, "--scheduler", client.scheduler.address, "-q"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip(client: Any, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"results{suffix}"
    code = _run(client, "pipelined_copy", "--grid", "stages=1,2", "--grid", "loader=tma,threads",
                "--grid", "store_warps=4,64", "--set", "ctas=2", "-o", str(out))
    assert code == 0, capsys.readouterr().err
    assert "8 of 8 cells (4 safe, 4 refused" in capsys.readouterr().out
    df = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    sc = scenarios.get("pipelined_copy")
    for _, row in df[df["status"] == "safe"].iterrows():
        cfg = config_of(sc, row)
        assert (cfg.stages, cfg.loader.name.lower(), cfg.store_warps, cfg.ctas) == (
            row["stages"], row["loader"], row["store_warps"], 2)


def test_failed_cells_exit_1(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.csv"
    target = f"{Path(__file__).with_name('sweep_scenarios.py')}:GALLERY"  # MODULE:ATTR of a Scenario
    code = _run(client, target, "--grid", "mode=ok,spin", "--timeout", "1", "--no-cache", "-o", str(out))
    assert code == 1
    assert "failed: mode=spin: timed out" in capsys.readouterr().err
    assert pd.read_csv(out)["status"].tolist() == ["safe", "failed"]


@pytest.mark.parametrize("args, message", [
    (["pipelined_copy", "--grid", "stagez=1,2"], "has no setting stagez"),
    (["pipelined_copy", "--grid", "stages"], "--grid takes KEY=V1,V2"),
    (["no_such_scenario", "--grid", "stages=1"], "no scenario named 'no_such_scenario'"),
    (["pipelined_copy", "--grid", "stages=1", "--set", "tile=3"], "tile"),
])
def test_usage_errors_exit_2(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                             message: str) -> None:
    assert _run(client, *args, "-o", str(tmp_path / "r.csv")) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("ts-explore sweep: error:")
    assert main(["sweep", "pipelined_copy", "--grid", "stages=1", "-o", str(tmp_path / "r.txt")]) == 2
