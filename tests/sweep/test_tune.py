"""Tuning on a 2-process local cluster with a fake measuring engine: the pick per shape is the fastest proven,
correct config; an unproven one is skipped with its reason; a re-run measures nothing twice; a worker that dies
mid-run is survived and its cell measured on the next run; launch runs the table's pick per size and says so;
``ts-explore tune`` parses and refuses as it should."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cloudpickle
import pytest

import tune_fakes
from tune_fakes import FAKE, fake_launch
from ts_explore.cli import main
from ts_explore.tuning import run as tuning_run
from ts_explore.gpu.tuning_table import TuningTable

cloudpickle.register_pickle_by_value(tune_fakes)
GPU = {"gpu": "Fake GPU", "driver": "1.0"}
SHAPES = ["256x256x64", "256x256x128"]


def _tune(client: Any, log: Path, configs: list[dict[str, Any]], **kw: Any) -> TuningTable:
    return tuning_run.tune(FAKE, SHAPES, [{**c, "log": str(log)} for c in configs], client=client, gpu=GPU,
                           engine=fake_launch, progress=False, **kw)


def _measured(log: Path) -> list[str]:
    return sorted(line.rsplit(" tuned=", 1)[0] for line in log.read_text().splitlines()) if log.exists() else []


def test_picks_fastest_proven_correct_and_resumes(client: Any, tmp_path: Path, cache_dir: Path) -> None:
    log = tmp_path / "measured.log"
    configs = [{"speed": 2}, {"speed": 5}, {"speed": 9, "broken": True}, {"speed": 1, "wrong": True}]
    table = _tune(client, log, configs)
    assert table.path.parent == cache_dir / "tuning" and table.path.name == "fake_tuned_gemm.Fake_GPU.1.0.json"
    picks = table.picks()
    # K=64: faster with speed, but speed 9 deadlocks (unproven) -> speed 5; else slower with speed, and the
    # fastest (speed 1) computes a wrong C -> speed 2
    assert (picks["256x256x64"].config["speed"], picks["256x256x64"].tflops) == (5, 500.0)
    assert (picks["256x256x128"].config["speed"], picks["256x256x128"].tflops) == (2, 800.0)
    df = table.frame()
    unproven = df[df["outcome"] == "unproven"]
    assert len(unproven) == 2 and unproven["reason"].str.contains("not proven (unsafe)", regex=False).all()
    assert set(df[df["outcome"] == "wrong"]["config"].str.contains("wrong=True")) == {True}
    assert df["picked"].sum() == 2
    assert "tuned=False" in log.read_text() and len(_measured(log)) == 6  # the unproven one never launched
    # resume: a new table object reads the file; nothing is measured again, one new candidate is
    again = _tune(client, log, [*configs, {"speed": 6}])
    assert len(_measured(log)) == 8 and again.pick("256x256x64").config["speed"] == 6
    # --fresh measures everything again
    _tune(client, log, configs[:1], fresh=True)
    assert len(_measured(log)) == 10 and len(TuningTable("fake_tuned_gemm", "Fake GPU", "1.0").rows) == 2


def test_a_dying_worker_is_survived_and_its_cell_measured_again(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "measured.log"
    configs = [{"speed": 3}, {"speed": 4, "die": True}]
    table = _tune(client, log, configs, retries=0)
    failed = table.last_run[table.last_run["status"] == "failed"]  # the dying cell (and any it took down)
    assert len(failed) >= 1 and failed["reason"].str.contains("worker running it died").any()
    assert len(table.rows) == 4 - len(failed)  # failed cells are not kept ...
    again = _tune(client, log, configs)  # ... so the next run measures them, and only them
    assert len(again.rows) == 4 and again.last_run["status"].tolist() == ["safe"] * len(failed)
    (tmp_path / "measured.log.died").unlink()  # it dies once more: the retry in the same run measures it
    fresh = _tune(client, log, configs, fresh=True)
    first = fresh.last_run[fresh.last_run["attempt"] == 0]
    retried = fresh.last_run[fresh.last_run["attempt"] == 1]
    # A dying worker takes down the cell that killed it and any other it held at the time: each is retried.
    assert len(first) == 4 and 1 <= len(retried) == int((first["status"] == "failed").sum())
    assert (retried["status"] != "failed").all()
    assert len(fresh.rows) == 4 and fresh.pick("256x256x128").config["speed"] == 3


def _fake_result(sc: Any, cfg: Any, sizes: tuple[Any, ...]) -> Any:
    from ts_explore.gpu import LaunchResult, SizeRun, Timing
    from ts_explore.gpu.device import DeviceInfo

    runs = tuple(SizeRun(s[0] * s[1], 0, 1, Timing("kernel", (1.0,), 0, 2 * s[0] * s[1] * s[2]), shape=f"{s}")
                 for s in sizes)
    return LaunchResult(sc.name, cfg, DeviceInfo("Fake GPU", (9, 0), 132, None, 0), runs, 0.0, 1.0, True, "proven")


def test_launch_runs_each_sizes_pick_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import ts_explore.gpu as gpu
    from ts_explore import scenarios

    sc = scenarios.get("hopper_gemm")
    table = TuningTable("hopper_gemm", "Fake GPU", "1.0")
    for shape, values, tflops in (("4096x4096x4096", {"swizzle": 8}, 661.0), ("4096x4096x4096", {}, 640.0),
                                  ("8192x8192x1024", {"tile": "t256x128"}, 600.0),
                                  ("8192x8192x1024", {"dtype": "fp8"}, 1200.0)):  # computes something else
        table.put({"shape": shape, "config": values, "outcome": "measured", "tflops": tflops})
    monkeypatch.setattr("ts_explore.gpu.tuned.this_gpu", lambda: ("Fake GPU", "1.0"))
    from ts_explore.tuning import table_for

    assert table_for("hopper_gemm").pick("4096x4096x4096").config == {"swizzle": 8}  # the notebook's view
    assert table_for("pipelined_copy") is None
    calls: list[tuple[Any, tuple[Any, ...]]] = []

    def one(sc: Any, cfg: Any, sizes: tuple[Any, ...], *args: Any, **kw: Any) -> Any:
        calls.append((cfg, sizes))
        return _fake_result(sc, cfg, sizes)

    monkeypatch.setattr(gpu, "_launch_one", one)
    sizes = [(4096, 4096, 4096), (1024, 1024, 1024), (8192, 8192, 1024)]
    result = gpu.launch("hopper_gemm", sizes=sizes)
    assert [(c.swizzle, c.tile.name, s) for c, s in calls] == [
        (8, "T128x256", ((4096, 4096, 4096),)), (1, "T128x256", ((1024, 1024, 1024),)),
        (1, "T256x128", ((8192, 8192, 1024),))]
    assert [r.shape for r in result.runs] == [str(s) for s in sizes]  # in the order asked
    text = result.summary()
    assert "4096x4096x4096: tuned: swizzle=8 (table hopper_gemm.Fake_GPU.1.0.json, measured 661 TFLOP/s)" in text
    assert "8192x8192x1024: tuned: tile=t256x128" in text and "1024x1024x1024: tuned" not in text
    for kwargs in ({"config": sc.config(stages=3)}, {"stages": 4}, {"tuned": False}):
        calls.clear()
        assert gpu.launch("hopper_gemm", sizes=sizes[:1], **kwargs).tuned == ()
        assert calls[0][0].swizzle == 1  # an explicit config (or overrides) wins; tuned=False turns it off
    calls.clear()
    assert gpu.launch("hopper_gemm", sc.default_config(), sizes=sizes[:1]).tuned and calls[0][0].swizzle == 8


@pytest.mark.parametrize("args, message", [
    (["hopper_gemm", "--shapes", "4096x4096"], "'4096x4096' is not a GEMM shape"),
    (["hopper_gemm", "--shapes", "4096xAxB"], "three positive integers joined by 'x'"),
    (["no_such", "--shapes", "64x64x64"], "no scenario named 'no_such'"),
    (["hopper_gemm", "--shapes", "64x64x64", "--configs", "nope"], "neither a preset of hopper_gemm"),
    (["pipelined_copy", "--shapes", "64x64x64", "--configs", "nope"], "presets: none for this scenario"),
])
def test_cli_usage_errors(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
                          message: str) -> None:
    import importlib
    from types import SimpleNamespace

    probe_module = importlib.import_module("ts_explore.gpu.probe")  # the attribute ts_explore.gpu.probe is the function
    monkeypatch.setattr(probe_module, "probe", lambda: SimpleNamespace(ok=False, message="no GPU here"))
    assert main(["tune", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ts-explore tune: error:") and message in err and len(err.strip().splitlines()) == 1


def test_cli_without_a_gpu_exits_3(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib
    from types import SimpleNamespace

    probe_module = importlib.import_module("ts_explore.gpu.probe")
    monkeypatch.setattr(probe_module, "probe", lambda: SimpleNamespace(ok=False, message="no GPU here"))
    assert main(["tune", "hopper_gemm", "--shapes", "64x64x64"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("ts-explore tune: error:") and "none usable (no GPU here)" in err and "run it where" in err


def test_cli_tunes_and_prints_the_picks(client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    real = tuning_run.tune
    monkeypatch.setattr(tuning_run, "tune", lambda *a, **kw: real(*a, **kw, client=client, gpu=GPU,
                                                                 engine=fake_launch))
    configs = tmp_path / "configs.json"
    configs.write_text('[{"speed": 3}, {"speed": 7}]')
    target = f"{Path(__file__).with_name('tune_fakes.py')}:FAKE"  # MODULE:ATTR of a Scenario
    assert main(["tune", target, "--shapes", *SHAPES, "--configs", str(configs), "-q"]) == 0
    out = capsys.readouterr().out
    assert "256x256x64: speed=7: 700.0 TFLOP/s = 1.400x torch.matmul" in out
    assert "256x256x128: speed=3: 700.0 TFLOP/s" in out
