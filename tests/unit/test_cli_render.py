"""`ts-explore render` draws what MODULE:ATTR names, and explains bad input with exit 2."""

from __future__ import annotations

import textwrap

import pytest

from ts_explore.cli import main

MODULE = textwrap.dedent(
    """
    from cutlass.experimental.task_scheduling.schedule_builder import schedule, domain_loop
    from ts_explore.seed_examples import resources as R
    from ts_explore.seed_examples import seed

    src, dst = R.GmemSource(name="src"), R.GmemSink(name="dst")

    @schedule
    def copy(src, dst):
        with domain_loop(0, 4, 1):
            dst.set_item(src.get_item())

    SCHEDULE = copy(src, dst)
    RECORDING = seed.guarded()
    NUMBER = 42

    def make_recording():
        return seed.static_persistent()
    """
)


@pytest.fixture
def module(tmp_path, monkeypatch):
    path = tmp_path / "my_sched.py"
    path.write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    return path


@pytest.mark.parametrize("attr", ["SCHEDULE", "RECORDING", "make_recording"])
def test_render_writes_svg(module, tmp_path, attr, capsys) -> None:
    out = tmp_path / f"{attr}.svg"
    assert main(["render", f"my_sched:{attr}", "-o", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml")
    assert "wrote" in capsys.readouterr().out


def test_render_from_a_py_path(module, tmp_path) -> None:
    out = tmp_path / "copy.dot"
    assert main(["render", f"{module}:SCHEDULE", "-o", str(out)]) == 0
    assert "src.get_item" in out.read_text()


@pytest.mark.parametrize(
    "target,message",
    [
        ("no_such_module:X", "cannot import module 'no_such_module'"),
        ("my_sched:MISSING", "has no attribute 'MISSING'"),
        ("my_sched:NUMBER", "cannot draw my_sched:NUMBER"),
        ("my_sched", "expected MODULE:ATTR"),
    ],
)
def test_render_bad_input_exits_2_with_a_reason(module, tmp_path, target, message, capsys) -> None:
    assert main(["render", target, "-o", str(tmp_path / "x.svg")]) == 2
    assert message in capsys.readouterr().err


def test_render_bad_suffix_exits_2(module, tmp_path, capsys) -> None:
    assert main(["render", "my_sched:SCHEDULE", "-o", str(tmp_path / "x.jpg")]) == 2
    assert ".svg" in capsys.readouterr().err
