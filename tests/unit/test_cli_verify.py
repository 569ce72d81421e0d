"""`ts-explore verify` on scenarios and (tasks, graph) factories; exit 0 safe, 1 unsafe, 2 usage."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ts_explore.cli import main

FACTORIES = textwrap.dedent(
    """
    from ts_explore import gallery

    def safe_pipeline():
        built = gallery.CASES["cross_wait"].fixed()
        return built["tasks"], built["resource_dependency_graph"]

    def deadlocking_pipeline():
        built = gallery.CASES["cross_wait"].broken()
        return built["tasks"], built["resource_dependency_graph"]

    def needs_an_argument(x):
        return x

    NOT_A_FACTORY = 3
    """
)


@pytest.fixture
def factories(tmp_path, monkeypatch):
    (tmp_path / "my_tasks.py").write_text(FACTORIES)
    monkeypatch.chdir(tmp_path)


def test_verify_scenario_default_config_is_safe(capsys) -> None:
    assert main(["verify", "ts_explore.scenarios.persistent:SCENARIO"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("SAFE")
    assert "verifying" in captured.err and "done in" in captured.err, "progress goes to stderr"


def test_verify_scenario_with_settings_as_json(capsys) -> None:
    code = main(["verify", "ts_explore.scenarios.persistent:SCENARIO", "--set", "queue=clc", "--set", "warps=2", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["status"] == "safe"


def test_verify_factories_exit_by_verdict(factories, capsys) -> None:
    assert main(["verify", "my_tasks:safe_pipeline"]) == 0
    assert main(["verify", "my_tasks:deadlocking_pipeline"]) == 1
    assert "UNSAFE" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["verify", "missing_module_xyz:f"], "cannot import module 'missing_module_xyz'"),
        (["verify", "my_tasks:nope"], "has no attribute 'nope'"),
        (["verify", "my_tasks:NOT_A_FACTORY"], "verify needs a scenario or a zero-argument callable"),
        (["verify", "my_tasks:needs_an_argument"], "must take no arguments"),
        (["verify", "ts_explore.scenarios.persistent:SCENARIO", "--set", "queue=teleport"], "queue: 'teleport' is not one of none, static, clc"),
        (["verify", "ts_explore.scenarios.persistent:SCENARIO", "--set", "colour=red"], "has no setting colour; its settings are: queue"),
        (["verify", "my_tasks:safe_pipeline", "--set", "a=1"], "--set only applies to scenarios"),
    ],
)
def test_verify_bad_input_exits_2(factories, argv, message, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("ts-explore")
    assert script.exists(), "pip install -e . should create the ts-explore console script"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True).stdout
    assert "render" in out and "verify" in out and "launch" in out


def test_launch_list_names_the_catalog(capsys) -> None:
    assert main(["launch", "--list"]) == 0
    out = capsys.readouterr().out
    assert "persistent_copy" in out and "grid_stride_copy" in out


def test_launch_without_a_gpu_is_refused_with_exit_3(capsys) -> None:
    from ts_explore.gpu import cuda_unavailable_reason

    if cuda_unavailable_reason() is None:
        pytest.skip("this machine can launch")
    assert main(["launch", "grid_stride_copy", "--size", "4096"]) == 3
    err = capsys.readouterr().err
    assert "cannot launch" in err and "GPU" in err


def test_launch_unknown_scenario_or_setting_exits_2(capsys) -> None:
    assert main(["launch", "no_such_scenario"]) == 2
    assert "no scenario named 'no_such_scenario'" in capsys.readouterr().err
    assert main(["launch", "grid_stride_copy", "--set", "vector=x"]) == 2
    assert "vector width (int32 per access): 'x' is not one of 1, 2, 4" in capsys.readouterr().err
