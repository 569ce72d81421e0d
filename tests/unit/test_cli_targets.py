"""Every ``ts-explore`` command resolves its target the same way: a bare catalog name or ``MODULE:ATTR``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ts_explore.cli import build_parser, load_target, main
from ts_explore.scenarios import CATALOG
from ts_explore.sweeps.command import _scenario

# the other arguments each command requires, so that only its target is in question
REQUIRED = {"render": ["-o", "out.dot"], "sweep": ["-o", "cells.csv"], "tune": ["--shapes", "64x64x64"]}


def commands_with_a_target() -> list[str]:
    """The sub-commands whose first positional argument names what to work on (read from the parser)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(name for name, parser in sub.choices.items()
                  if any(not a.option_strings and a.dest in ("target", "scenario") for a in parser._actions))


def test_the_commands_that_take_a_target_are_known() -> None:
    assert commands_with_a_target() == ["launch", "render", "sweep", "tune", "verify"]


@pytest.mark.parametrize("command", commands_with_a_target())
def test_an_unknown_name_gets_the_one_resolver_message(command: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([command, "no_such_scenario", *REQUIRED.get(command, [])]) == 2
    err = capsys.readouterr().err
    assert "no scenario named 'no_such_scenario'" in err and "MODULE:ATTR" in err, err


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_a_catalog_name_is_the_catalog_scenario(name: str) -> None:
    assert load_target(name) is CATALOG[name]
    assert _scenario(name, load_target) is CATALOG[name]  # what `sweep` resolves through the command line


def test_verify_and_render_take_a_bare_catalog_name(tmp_path: Path, capsys) -> None:
    assert main(["verify", "pipelined_copy", "--set", "ctas=2"]) == 0
    assert capsys.readouterr().out.startswith("SAFE")
    out = tmp_path / "pipelined.dot"
    assert main(["render", "pipelined_copy", "-o", str(out)]) == 0
    assert "digraph" in out.read_text() and "Task load" in out.read_text()
