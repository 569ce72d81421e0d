"""Every Python block of README.md runs as written, in order, in one IPython shell (``%`` magics work).

Blocks fenced as ```` ```python gpu ```` need a CUDA device: they run where one
is present and are skipped with the reason elsewhere. The value a block ends on
is displayed the way a notebook would (its rich representation must not fail).
The blocks run from the repository root and again from ``notebooks/``, the
folder ``make lab`` opens (a notebook's kernel runs there): a block that reads
a file of the checkout must find it from either. Each block shows what it
promises when pasted into one cell: only its last
expression is displayed there, so a value an earlier line computes and drops
(``v`` or ``deadlock_graph(v)`` alone on a line) fails the test, and so does a
block that ends on nothing to show.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
NOTEBOOKS = ROOT / "notebooks"
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


SHOWING_CALLS = ("print", "display")  # calls that show their argument wherever they stand in a cell
DROPPED = "_readme_dropped_value"


def _shows(node: ast.stmt) -> bool:
    """True for ``print(...)`` / ``display(...)`` statements."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id in SHOWING_CALLS)


def as_one_cell(code: str, line: int) -> tuple[list[str], str]:
    """``(magic lines, code)``: each earlier expression statement's value goes to ``_readme_dropped_value``.

    That is what a notebook does with them when the block is pasted into one
    cell (drops them); the test records what was dropped instead.
    """
    magics = [ln for ln in code.splitlines() if ln.startswith("%")]
    tree = ast.parse("\n".join("" if ln.startswith("%") else ln for ln in code.splitlines()))
    last = tree.body[-1]
    assert isinstance(last, ast.Expr), f"README.md block at line {line} ends on a statement: it shows nothing"
    for stmt in tree.body[:-1]:
        if isinstance(stmt, ast.Expr) and not _shows(stmt):
            where = ast.Constant(line + stmt.lineno - 1)
            stmt.value = ast.Call(ast.Name(DROPPED, ast.Load()), [where, stmt.value], [])
    return magics, ast.unparse(ast.fix_missing_locations(tree))


def _run(blocks_: list[tuple[int, str]]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    dropped: list[tuple[int, str]] = []
    shell.user_ns[DROPPED] = lambda at, value: dropped.append((at, type(value).__name__)) if value is not None else None
    try:
        for line, code in blocks_:
            magics, cell = as_one_cell(code, line)
            for magic in magics:
                shell.run_cell(magic, store_history=False)
            result = shell.run_cell(cell, store_history=False, silent=False)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                pytest.fail(f"README.md block at line {line} raised {type(error).__name__}: {error}\n{code}")
            assert not dropped, (f"README.md block at line {line}: pasted into one cell, the {dropped[0][1]} of line "
                                 f"{dropped[0][0]} is never shown (display() it, or end the block with it)")
            last_shows = _shows(ast.parse(cell).body[-1])
            assert result.result is not None or last_shows, (
                f"README.md block at line {line} ends on a value of None: pasted into one cell it shows nothing")
            _display(result.result)
    finally:
        if "ts_explore" in shell.extension_manager.loaded:
            shell.run_line_magic("unload_ext", "ts_explore")


def test_readme_has_python_blocks_and_one_loads_the_extension() -> None:
    code = "\n".join(c for _, c in blocks(gpu=False))
    assert len(blocks(gpu=False)) >= 3
    assert "%load_ext ts_explore" in code


@pytest.mark.parametrize("folder", [ROOT, NOTEBOOKS], ids=["from the root", "from notebooks"])
def test_every_cpu_block_runs_in_order(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder)
    _run(blocks(gpu=False))


def _checkout_paths(code: str) -> list[str]:
    """String constants of a block that name a file of the checkout relative to the repository root."""
    names = [n.value for n in ast.walk(ast.parse("\n".join("" if ln.startswith("%") else ln
                                                          for ln in code.splitlines())))
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [n for n in names if "/" in n and not n.startswith("/") and (ROOT / n).exists()]


def test_no_block_names_a_file_relative_to_the_root() -> None:
    """A path such as "benchmarks/results/x.json" works from the root only; a notebook runs in notebooks/."""
    found = [(line, p) for line, code in [*blocks(gpu=False), *blocks(gpu=True)] for p in _checkout_paths(code)]
    assert not found, f"README.md blocks name checkout files relative to the root: {found}"


@pytest.mark.gpu
def test_every_gpu_block_runs_in_order() -> None:
    assert blocks(gpu=True), "the README shows a GPU launch"
    _run([*blocks(gpu=False)[:1], *blocks(gpu=True)])
