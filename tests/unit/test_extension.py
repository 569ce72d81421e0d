"""%load_ext ts_explore: schedules, tasks, task managers and recordings display as SVG."""

from __future__ import annotations

import contextlib
import io

import pytest
from cutlass.experimental.task_scheduling.task_manager import TaskManager
from IPython.core.interactiveshell import InteractiveShell

import ts_explore
from ts_explore.seed_examples import seed
from test_capture import _two_task_pipeline


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    for mime in ("text/html", "image/svg+xml"):
        ip.display_formatter.formatters[mime].enabled = True
    yield ip
    ip.run_line_magic("unload_ext", "ts_explore") if "ts_explore" in ip.extension_manager.loaded else None


def _formats(ip, obj):
    data, _ = ip.display_formatter.format(obj)
    return data


def test_schedule_task_and_manager_display_as_inline_svg(shell) -> None:
    rec = seed.static_persistent()
    before = _formats(shell, rec.schedule)
    assert "image/svg+xml" not in before
    shell.run_line_magic("load_ext", "ts_explore")
    shell.run_line_magic("reload_ext", "ts_explore")  # idempotent
    data = _formats(shell, rec.schedule)
    assert data["image/svg+xml"].lstrip().startswith("<?xml") or "<svg" in data["image/svg+xml"]
    assert "<svg" in data["text/html"] and "wq.get_and_advance_work_tile" in data["text/html"]
    assert data["text/plain"].startswith("Schedule("), "text/plain is kept"

    tasks, graph = _two_task_pipeline()
    assert "Task Load" in _formats(shell, tasks[0])["text/html"]
    with contextlib.redirect_stdout(io.StringIO()):
        tm = TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
    html = _formats(shell, tm)["text/html"]
    assert "resource dependency graph" in html and "Task Store" in html


def test_recording_displays_diagram_or_error_box_without_extension(shell) -> None:
    ok = _formats(shell, seed.guarded())
    assert "<svg" in ok["text/html"]
    bad = ts_explore.record(lambda src: src.get_itme(), seed.R.GmemSource(name="src"))
    html = _formats(shell, bad)["text/html"]
    assert "Did you mean get_item()" in html and "<svg" not in html


def test_unload_restores_plain_display(shell) -> None:
    shell.run_line_magic("load_ext", "ts_explore")
    shell.run_line_magic("unload_ext", "ts_explore")
    assert "image/svg+xml" not in _formats(shell, seed.guarded().schedule)


def test_display_falls_back_to_dot_text_when_graphviz_is_missing(shell, monkeypatch) -> None:
    import graphviz

    from ts_explore.render import display

    display._svg_for_source.cache_clear()

    def missing(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(graphviz.Source, "pipe", missing)
    bundle = seed.guarded()._repr_mimebundle_()
    assert "apt-get install graphviz" in bundle["text/plain"] and "digraph" in bundle["text/plain"]
    display._svg_for_source.cache_clear()
