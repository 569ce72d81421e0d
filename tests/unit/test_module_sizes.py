"""No module of the package is over 400 lines: a module holds one job, and a longer one has grown a second.

When a module outgrows the limit, split it by what its parts do (as the GEMM
and attention kernels are split by technique), not by moving lines around.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ts_explore"
LIMIT = 400


def oversized(root: Path, limit: int = LIMIT) -> dict[str, int]:
    """``{module path: lines}`` of every ``.py`` file under ``root`` longer than ``limit`` lines."""
    sizes = {str(p.relative_to(root.parent)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(root.rglob("*.py"))}
    return {path: n for path, n in sizes.items() if n > limit}


def test_the_check_finds_a_long_module(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * LIMIT)
    (package / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert oversized(package) == {"pkg/long.py": LIMIT + 1}


def test_no_module_is_over_400_lines() -> None:
    found = oversized(PACKAGE)
    assert not found, "modules over 400 lines (split each by what its parts do): " + ", ".join(
        f"{path} {n}" for path, n in sorted(found.items(), key=lambda kv: -kv[1]))
