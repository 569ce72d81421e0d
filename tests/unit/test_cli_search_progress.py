"""``ts-explore verify`` on a long proof: progress on stderr; Ctrl-C stops the search and exits 130 with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import ts_explore

PACKAGE_ROOT = str(Path(ts_explore.__file__).parents[1])  # this checkout, not an installed copy

FACTORY = '''
from ts_explore.gallery.gemm_family import gemm_family


def seven_tasks():
    return gemm_family(5, 64)
'''


def test_a_long_search_reports_progress_and_ctrl_c_ends_it_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "long_proof.py").write_text(FACTORY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "ts_explore.cli", "verify", "long_proof:seven_tasks",
                             "--checker", "unreduced"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    time.sleep(8)  # imports, TaskManager's own checks, then our unreduced search (millions of states)
    while proc.poll() is None and time.monotonic() < deadline:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.kill()
        out, err = proc.communicate()
    assert proc.returncode == 130, (out, err)
    assert out == "" and "Traceback" not in err, (out, err)
    assert "searching:" in err and "states/s" in err, err
    assert err.strip().splitlines()[-1] == "ts-explore verify: interrupted (Ctrl-C); nothing was proven", err


def test_the_reduced_search_proves_what_the_unreduced_one_cannot_finish(tmp_path: Path) -> None:
    (tmp_path / "long_proof.py").write_text(FACTORY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "ts_explore.cli", "verify", "long_proof:seven_tasks"],
                          cwd=tmp_path, env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("SAFE"), (done.stdout, done.stderr)
    assert "ts-explore checker (partial-order reduced)" in done.stdout
