"""Scenarios the sweep tests run on Dask workers: gallery schedules that are safe or deadlock by a knob,
and cells that misbehave on purpose (hang in Python, sleep in native code, kill their worker, run slowly).

The module travels to the workers by value (``cloudpickle.register_pickle_by_value``), so the
workers need not import it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob

PATTERNS = ("cross_wait", "missing_release", "consumer_longer", "self_wait")
MODES = ("ok", "spin", "sleep", "kill", "slow")


@dataclass(frozen=True)
class Gallery:
    pattern: str = knob("cross_wait", options=PATTERNS, label="pattern")
    broken: bool = knob(False, label="broken")
    n: int = knob(2, min=1, max=6, label="iterations")
    mode: str = knob("ok", options=MODES, label="mode")
    log: str = knob("", label="log file", help="a file each misbehaving build appends a line to")


def check(cfg: Gallery) -> None:
    if cfg.pattern == "self_wait" and cfg.n > 4:
        raise ValueError("self_wait takes at most 4 iterations; lower n")


def build(cfg: Gallery, ctx: object) -> Built:
    if cfg.mode != "ok" and cfg.log:
        with open(cfg.log, "a") as f:
            f.write(f"{cfg.mode} {os.getpid()}\n")
    if cfg.mode == "spin":  # a Python loop that never ends: our watchdog interrupts it
        while True:
            pass
    if cfg.mode == "sleep":  # stuck in native code: only ending the worker frees it
        time.sleep(3600)
    if cfg.mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if cfg.mode == "slow":
        time.sleep(0.4)
    kwargs = getattr(deadlocks, cfg.pattern)(cfg.broken, cfg.n)
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])


GALLERY = Scenario(name="sweep_gallery_test", title="Gallery patterns for sweep tests", config_type=Gallery,
                   build_fn=build, check_fn=check)


USER_SCENARIO = '''
"""A user's scenario in a file of its own: safe, or a deadlock when BROKEN is set."""
from dataclasses import dataclass

from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob

BROKEN = {broken}


@dataclass(frozen=True)
class Config:
    n: int = knob(2, min=1, max=6, label="iterations")
    broken: bool = knob(False, label="broken")


def build(cfg, ctx):
    kwargs = deadlocks.cross_wait(BROKEN or cfg.broken, cfg.n)
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])


sc = Scenario(name="{name}", title="a user scenario", config_type=Config, build_fn=build)
'''


def user_scenario_file(folder: Path, stem: str, *, broken: bool = False, name: str | None = None) -> Path:
    """Write a scenario module the sweep's workers cannot import by name (it is not on their path)."""
    path = folder / f"{stem}.py"
    path.write_text(USER_SCENARIO.format(broken=broken, name=name or stem))
    return path


def load_user_scenario(path: Path) -> Scenario:
    """The file's scenario, loaded by path as ``ts-explore ... FILE.py:sc`` loads it."""
    from ts_explore.cli import load_target

    return load_target(f"{path}:sc")
