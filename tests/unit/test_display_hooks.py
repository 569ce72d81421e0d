"""A launch result draws itself in a notebook through ``app.hooks``, like the model's classes, without the GPU
package importing its renderers and without ``import ts_explore`` loading the GPU package."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    import ts_explore
    assert "ts_explore.gpu" not in sys.modules, "import ts_explore loaded the GPU package"
    from ts_explore.app.hooks import _AttachOnImport, attach
    attach()  # a second call installs no second finder
    assert sum(isinstance(f, _AttachOnImport) for f in sys.meta_path) == 1
    from ts_explore.gpu.result import LaunchResult
    assert not any(isinstance(f, _AttachOnImport) for f in sys.meta_path), "the finder stays after its work"
    print(LaunchResult._repr_html_.__module__, LaunchResult.plot_comparison.__module__)
    """
)


def test_a_launch_result_gets_its_display_hooks_when_first_imported() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ts_explore.app.hooks", "ts_explore.app.hooks"]


def test_the_result_module_imports_no_renderer() -> None:
    source = (ROOT / "ts_explore" / "gpu" / "result.py").read_text(encoding="utf-8")
    assert "render" not in source
