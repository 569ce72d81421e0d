"""``ts-explore verify``: summary or JSON, exit status by verdict."""

from __future__ import annotations

import json

from ts_explore.cli import main


def test_verify_json(capsys):
    assert main(["verify", "gallery:cross_wait", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["status"] == "unsafe"
    assert data["runs"][0]["deadlocks"][0]["cycle"] == ["Ping", "Pong", "Ping"]


def test_verify_summary_and_fixed_twin(capsys):
    assert main(["verify", "gallery:cross_wait:fixed"]) == 0
    assert capsys.readouterr().out.startswith("safe:")


def test_verify_module_function(capsys):
    assert main(["verify", "verify_builders:head_loop_overlap"]) == 0
    capsys.readouterr()


def test_bad_target_is_a_usage_error(capsys):
    assert main(["verify", "nonsense"]) == 2
    assert "gallery:NAME or module:function" in capsys.readouterr().err
    assert main(["verify", "gallery:nope"]) == 2
