"""A bare ``.py`` path as a target (``ts-explore verify broken.py``) is answered about the file, not the catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from ts_explore.cli import main

BROKEN = '''
from ts_explore import gallery

def make_tasks():
    return gallery.get("missing_release").broken()

RAN = print("this file was run")
'''


@pytest.mark.parametrize("command", ["verify", "render"])
def test_a_bare_path_names_the_objects_to_pick(command: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("broken.py").write_text(BROKEN)
    extra = ["-o", "out.dot"] if command == "render" else []
    assert main([command, "broken.py", *extra]) == 2
    out = capsys.readouterr()
    assert "no scenario named" not in out.err and "this file was run" not in out.out
    assert "broken.py:make_tasks" in out.err and "it defines make_tasks, RAN" in out.err, out.err
    assert main(["verify", "broken.py:make_tasks"]) == 1, "the named form verifies it (UNSAFE)"


def test_a_missing_file_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "sub/broken.py"]) == 2
    err = capsys.readouterr().err
    assert "no such file: sub/broken.py" in err and "no scenario named" not in err, err


def test_a_path_that_is_not_python_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("notes").mkdir()
    Path("notes/plan.md").write_text("# not code")
    assert main(["verify", "notes/plan.md"]) == 2
    assert "notes/plan.md is not a .py file" in capsys.readouterr().err
