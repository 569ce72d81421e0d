"""A sweep started where its worker processes cannot start fails within seconds with the fix, not after
minutes of start timeouts: a script with no main guard (each worker re-runs it), a script read from
standard input (a worker cannot read it again). The error carries the workers' own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ts_explore.sweeps import SweepError, bootstrap

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = 'import ts_explore\ndf = ts_explore.sweep("pipelined_copy", {"stages": [1, 2]}, progress=False, cache=False)\n'
GUARDED = 'import ts_explore\nif __name__ == "__main__":\n    ts_explore.sweep("pipelined_copy", {"stages": [1]})\n'
LIMIT_S = 90  # generous for two Python starts on a busy 2-core machine; the old behaviour took minutes


def _python(args: list[str], cwd: Path, stdin: str | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TS_EXPLORE_CACHE_DIR": str(cwd / "cache")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=LIMIT_S * 2)
    return done, time.monotonic() - start


@pytest.mark.slow
def test_a_script_without_a_main_guard_fails_fast_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "sweep_it.py").write_text(SCRIPT)
    done, took = _python(["sweep_it.py"], tmp_path)
    assert done.returncode == 1 and took < LIMIT_S
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ts_explore.sweeps.errors.SweepError: the sweep's worker processes cannot start")
    assert "starts a sweep at its top level" in last and 'under if __name__ == "__main__":' in last
    assert "[worker error: " in last and "busy" not in done.stderr


@pytest.mark.slow
def test_a_script_piped_on_stdin_fails_fast_with_the_fix(tmp_path: Path) -> None:
    done, took = _python(["-"], tmp_path, stdin=SCRIPT)
    assert done.returncode == 1 and took < LIMIT_S
    last = done.stderr.strip().splitlines()[-1]
    assert "read from standard input" in last and "Save the program to a file" in last
    assert "[worker error: FileNotFoundError" in last


def _as_main(monkeypatch: pytest.MonkeyPatch, script: Path) -> None:
    """Make the check see ``script`` as this program's main module (as `python script.py` would)."""
    data = {"sys_path": list(sys.path), "dir": str(script.parent), "init_main_from_path": str(script)}
    monkeypatch.setattr(bootstrap, "_preparation", lambda: dict(data))


def test_the_error_carries_the_workers_own_and_a_guarded_script_passes(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    guarded = tmp_path / "guarded.py"
    guarded.write_text(GUARDED)
    _as_main(monkeypatch, guarded)
    bootstrap.check_bootstrap()  # its workers start: no error
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(SCRIPT)
    _as_main(monkeypatch, unguarded)
    with pytest.raises(SweepError) as err:
        bootstrap.check_bootstrap()
    assert "\n" not in str(err.value) and "starts a sweep at its top level" in str(err.value)
    worker = err.value.worker_error
    assert worker is not None and worker.startswith("Traceback") and "unguarded.py" in worker
    assert "started a sweep while a worker process was starting" in worker
