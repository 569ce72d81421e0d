"""`ts-explore verify ... --repair`: the repairs and their diffs in words and in JSON."""

from __future__ import annotations

import json

from ts_explore.cli import main


def test_verify_repair_prints_proven_repairs_with_diffs(capsys) -> None:
    code = main(["verify", "ts_explore.gallery:missing_release.broken", "--repair"])
    out = capsys.readouterr().out
    assert code == 1  # the verdict is still UNSAFE: the repairs are suggestions
    assert "1. task `Store`: insert `smem.release()` after `gmem_out.set_item()`" in out
    assert "+    smem.release()" in out and "proven SAFE" in out


def test_verify_repair_json_carries_the_repairs(capsys) -> None:
    main(["verify", "ts_explore.gallery:pdl_launch_before_wait.broken", "--repair", "--json"])
    data = json.loads(capsys.readouterr().out)
    top = data["repairs"]["repairs"][0]
    assert top["proof"] == "safe" and "launch_griddep" in top["sentence"] and top["edits"][0]["kind"] == "pdl"
    assert "+" in top["diff"] and data["status"] == "unsafe"


def test_verify_repair_on_a_safe_target_adds_nothing(capsys) -> None:
    assert main(["verify", "ts_explore.gallery:missing_release.fixed", "--repair", "--json"]) == 0
    assert "repairs" not in json.loads(capsys.readouterr().out)
