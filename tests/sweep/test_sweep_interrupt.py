"""Ctrl-C of ``ts-explore sweep`` in a terminal: one line, no worker's KeyboardInterrupt traceback (the terminal
sends SIGINT to every process of the job, the workers included), and the next run resumes from the cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import sweep_scenarios as ss
from ts_explore.sweeps import sweep

ROOT = Path(__file__).resolve().parents[2]
NAPPING = '''
import time
from dataclasses import dataclass

from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob


@dataclass(frozen=True)
class Config:
    n: int = knob(2, min=1, max=50, label="iterations")


def build(cfg, ctx):
    time.sleep(0.5)
    kwargs = deadlocks.cross_wait(False, 2)
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])


sc = Scenario(name="napping", title="half a second per cell", config_type=Config, build_fn=build)
'''


def _cached_rows(cache: Path) -> int:
    return sum(f.read_text(errors="replace").count('{"key": ') for f in cache.glob("sweeps/*.jsonl"))


@pytest.mark.slow
def test_ctrl_c_prints_one_line_and_the_next_run_resumes(client: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "napping.py").write_text(NAPPING)
    cache = tmp_path / "cache"
    env = {**os.environ, "TS_EXPLORE_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "ts_explore.cli", "sweep", "napping.py:sc", "--grid", "n=" + ",".join(
        str(n) for n in range(1, 9)), "--workers", "2", "-q", "-o", "r.csv"]
    # a session of its own: SIGINT to its process group is what Ctrl-C in a terminal does
    job = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _cached_rows(cache) < 2 and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.2)
        assert job.poll() is None, job.communicate()
        os.killpg(job.pid, signal.SIGINT)
        out, err = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(10)
    lines = [line for line in err.splitlines() if line.strip()]
    assert job.returncode == 1 and len(lines) == 1, err
    assert lines[0].startswith("interrupted: the rows computed so far are written and cached")
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    kept = _cached_rows(cache)
    assert 2 <= kept < 8
    # the next run (here in-process, on the suite's cluster) computes only what the interrupted one did not
    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(cache))
    again = sweep(ss.load_user_scenario(tmp_path / "napping.py"), {"n": list(range(1, 9))}, client=client,
                  progress=False)
    assert len(again) == 8 and set(again["status"]) == {"safe"} and int(again["cached"].sum()) == kept


def _sigint_handler() -> str:
    return repr(signal.getsignal(signal.SIGINT))


def _preloads(dask_worker: Any) -> list[str]:
    return [p.name for p in dask_worker.preloads]


def test_workers_ignore_ctrl_c_also_after_a_restart(client: Any) -> None:
    from ts_explore.sweeps import worker_setup
    from ts_explore.sweeps.cluster import WORKER_SETUP

    ignored = repr(signal.SIG_IGN)
    assert set(client.run(_sigint_handler).values()) == {ignored}  # the first workers inherit it
    # a worker the nanny starts again after a crash inherits nothing: every worker preloads the setup
    assert all(WORKER_SETUP in names for names in client.run(_preloads).values())
    previous = signal.getsignal(signal.SIGINT)
    try:
        worker_setup.dask_setup(None)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
