"""A script that launches without a ``__main__`` guard gets told why its launch worker died."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ASK = """
from ts_explore.gpu.worker import WorkerHandle
reply = WorkerHandle().request({"op": "device"}, 60)
print("REPLY", sorted(reply))
"""


def _run(script: str, tmp_path: Path) -> str:
    path = tmp_path / "launch_script.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return done.stdout + done.stderr


@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_learns_to_guard_its_launches(tmp_path: Path, guarded: bool) -> None:
    body = ASK if not guarded else "if __name__ == '__main__':\n" + textwrap.indent(ASK, "    ")
    out = _run(body, tmp_path)
    if guarded:
        assert "REPLY" in out and "Error" not in out, out
    else:
        assert "REPLY" not in out, out
        told = next(line for line in out.splitlines() if "[worker_died]" in line)
        assert "while starting" in told and 'if __name__ == "__main__":' in told, told
        assert "[script_guard]" in out, out  # the worker's own error names the cause too
