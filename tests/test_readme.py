"""Every Python block of README.md runs as written, in order, in one IPython shell (``%`` magics work).

Blocks fenced as ```` ```python gpu ```` need a CUDA device: they run where one
is present and are skipped with the reason elsewhere. The value a block ends on
is displayed the way a notebook would (its rich representation must not fail).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(gpu: bool) -> list[tuple[int, str]]:
    """``(line number, code)`` of the README's Python blocks, GPU-only ones or the others."""
    text = README.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        if ("gpu" in m.group(1).split()) == gpu:
            out.append((text.count("\n", 0, m.start()) + 1, m.group(2)))
    return out


def _display(value: Any) -> None:
    """What Jupyter does with a cell's last value; a representation that raises fails the test."""
    if value is None:
        return
    if hasattr(value, "_repr_mimebundle_"):
        bundle = value._repr_mimebundle_()
        assert bundle, f"{type(value).__name__} displays nothing"
    elif hasattr(value, "_repr_html_"):
        assert value._repr_html_()
    else:
        repr(value)


def _run(blocks_: list[tuple[int, str]]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        for line, code in blocks_:
            result = shell.run_cell(code, store_history=False, silent=False)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                pytest.fail(f"README.md block at line {line} raised {type(error).__name__}: {error}\n{code}")
            _display(result.result)
    finally:
        if "ts_explore" in shell.extension_manager.loaded:
            shell.run_line_magic("unload_ext", "ts_explore")


def test_readme_has_python_blocks_and_one_loads_the_extension() -> None:
    code = "\n".join(c for _, c in blocks(gpu=False))
    assert len(blocks(gpu=False)) >= 3
    assert "%load_ext ts_explore" in code


def test_every_cpu_block_runs_in_order() -> None:
    _run(blocks(gpu=False))


@pytest.mark.gpu
def test_every_gpu_block_runs_in_order() -> None:
    assert blocks(gpu=True), "the README shows a GPU launch"
    _run([*blocks(gpu=False)[:1], *blocks(gpu=True)])
