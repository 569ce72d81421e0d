"""``ts-explore verify`` on gallery cases: summary or JSON, exit status by verdict."""

from __future__ import annotations

import json

from ts_explore.cli import main


def test_verify_json(capsys):
    assert main(["verify", "ts_explore.gallery:cross_wait.broken", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["status"] == "unsafe"
    assert data["runs"][0]["deadlocks"][0]["cycle"] == ["Ping", "Pong", "Ping"]


def test_verify_summary_and_fixed_twin(capsys):
    assert main(["verify", "ts_explore.gallery:cross_wait.fixed"]) == 0
    assert "safe:" in capsys.readouterr().out


def test_verify_module_function(capsys):
    assert main(["verify", "verify_builders:head_loop_overlap"]) == 0
    capsys.readouterr()
