"""``ts-explore verify --cross-check`` in text mode says whether and how it cross-checked, and both answers."""

from __future__ import annotations

from ts_explore.cli import main


def test_text_output_says_how_it_was_cross_checked(capsys):
    assert main(["verify", "tile_sets:STEADY.build", "--cross-check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SAFE")
    line = next(x for x in out.splitlines() if x.startswith("cross-check: "))
    assert "an independent explicit-state search agreed on every run" in line
    assert "Tiles cross-checked: an unrolled search of every count 1-6 (period 4 + lead 2" in line


def test_text_output_names_both_answers_of_a_disagreement(capsys):
    code = main(["verify", "tile_sets:RACE_AT_5.build", "--cross-check"])
    out = capsys.readouterr().out
    assert code != 0 and not out.startswith("SAFE")
    if out.startswith("INCONCLUSIVE"):  # the first answer missed the race: the tile cross-check disagrees
        line = next(x for x in out.splitlines() if x.startswith("cross-check: "))
        assert "the verification says safe, the unrolled search says race (first found: race at 5 tiles)" in line


def test_without_cross_check_the_text_output_has_no_cross_check_line(capsys):
    assert main(["verify", "tile_sets:STEADY.build"]) == 0
    assert "cross-check:" not in capsys.readouterr().out


def test_text_output_names_both_answers_when_the_second_engine_disagrees(capsys, monkeypatch):
    from ts_explore.check import cross
    from ts_explore.check.oracle import OracleResult

    monkeypatch.setattr(cross, "explore", lambda problem, **_: OracleResult(frozenset({"race"}), (), 7, True))
    assert main(["verify", "ts_explore.gallery:cross_wait.fixed", "--cross-check"]) != 0
    out = capsys.readouterr().out
    assert out.startswith("INCONCLUSIVE")
    line = next(x for x in out.splitlines() if x.startswith("cross-check: "))
    assert "disagreed on normal" in line and "says safe" in line and "says race" in line
