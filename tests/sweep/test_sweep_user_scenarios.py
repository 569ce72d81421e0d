"""Users' own scenarios in sweeps: a file given by path, one added with register(), one built in a notebook.

They run on workers that cannot import them by name (shipped by value), from the API, the CLI and the
explorer's Sweep tab; a module the workers cannot load is one error before any cell; and editing a
scenario's code is never answered from the cache of its old code."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

import sweep_scenarios as ss
from ts_explore.cli import main
from ts_explore.scenarios import CATALOG, Scenario, register
from ts_explore.sweeps import Sweep, SweepError, sweep
from ts_explore.sweeps.identity import scenario_code


def test_an_edited_file_scenario_is_not_answered_from_the_cache(scheduler: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = ss.user_scenario_file(tmp_path, "edited_user_scenario")
    out = tmp_path / "r.csv"
    args = ["sweep", f"{path}:sc", "--grid", "n=1,2", "--scheduler", scheduler, "-q", "-o", str(out)]
    assert main(args) == 0, capsys.readouterr().err  # the workers cannot import the file: it travels by value
    assert "(2 safe; 0 from the cache)" in capsys.readouterr().out
    assert main(args) == 0
    assert "(2 safe; 2 from the cache)" in capsys.readouterr().out
    ss.user_scenario_file(tmp_path, "edited_user_scenario", broken=True)  # the user edits it: now it deadlocks
    assert main(["verify", f"{path}:sc"]) == 1
    capsys.readouterr()
    assert main(args) == 0
    assert "(2 unsafe; 0 from the cache)" in capsys.readouterr().out


def _notebook_scenario(source: str) -> Scenario:
    """A scenario defined as a notebook cell defines it: in a module with no file."""
    module = types.ModuleType("__main__")  # what cloudpickle and the identity see in a notebook
    exec(compile(source, "<cell>", "exec"), module.__dict__)
    return module.__dict__["sc"]


NOTEBOOK = '''
from dataclasses import dataclass
from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob

def pattern(n):
    return deadlocks.cross_wait({broken}, n)

@dataclass(frozen=True)
class Config:
    n: int = knob(2, min=1, max=6, label="iterations")

def build(cfg, ctx):
    kwargs = pattern(cfg.n)
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])

sc = Scenario(name="notebook_scenario", title="t", config_type=Config, build_fn=build)
'''


def test_the_cache_key_covers_the_scenarios_own_code(tmp_path: Path) -> None:
    first = scenario_code(_notebook_scenario(NOTEBOOK.format(broken=False)))
    same = scenario_code(_notebook_scenario(NOTEBOOK.format(broken=False)))
    helper_edited = scenario_code(_notebook_scenario(NOTEBOOK.format(broken=True)))  # only the helper changed
    assert first.digest and first == same
    assert helper_edited.digest != first.digest
    a = Sweep(_notebook_scenario(NOTEBOOK.format(broken=False)), {"n": [1]}, progress=False)
    b = Sweep(_notebook_scenario(NOTEBOOK.format(broken=True)), {"n": [1]}, progress=False)
    a._open_cache(None)
    b._open_cache(None)
    assert a.cache is not None and b.cache is not None and a.cache.path != b.cache.path
    # two build functions of one file differ too, and so do two versions of a file
    path = ss.user_scenario_file(tmp_path, "identity_file")
    one = ss.load_user_scenario(path)
    other = Scenario(name=one.name, title=one.title, config_type=one.config_type, build_fn=ss.build)
    before = scenario_code(one).digest
    assert before != scenario_code(other).digest
    ss.user_scenario_file(tmp_path, "identity_file", broken=True)
    assert scenario_code(ss.load_user_scenario(path)).digest != before
    assert scenario_code(CATALOG["pipelined_copy"]).digest == ""  # ts-explore's own: pinned by its commit


def test_a_notebook_scenario_sweeps_and_its_edit_is_recomputed(client: Any) -> None:
    df = sweep(_notebook_scenario(NOTEBOOK.format(broken=False)), {"n": [1, 2]}, client=client, progress=False)
    assert df["status"].tolist() == ["safe", "safe"]
    edited = sweep(_notebook_scenario(NOTEBOOK.format(broken=True)), {"n": [1, 2]}, client=client, progress=False)
    assert edited["status"].tolist() == ["unsafe", "unsafe"] and not edited["cached"].any()


@pytest.fixture()
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """A scenario added with register(), from a module the workers cannot import (notebook 07's way)."""
    sc = ss.load_user_scenario(ss.user_scenario_file(tmp_path, "registered_user_scenario"))
    monkeypatch.delitem(CATALOG, sc.name, raising=False)
    register(sc)
    yield sc
    CATALOG.pop(sc.name, None)


def test_a_registered_scenario_sweeps_by_name(client: Any, registered: Scenario) -> None:
    df = sweep(registered.name, {"n": [1, 2, 3]}, client=client, progress=False, cache=False)
    assert df["status"].tolist() == ["safe"] * 3, df["reason"].tolist()


def test_a_registered_scenario_sweeps_from_the_explorers_tab(client: Any, registered: Scenario) -> None:
    from ts_explore.app.explorer import Explorer
    from ts_explore.app.sweep_tab import SweepTab

    tab = SweepTab(Explorer(registered.name, debounce_s=0), client=client)
    tab.x.value, tab.y.value = "n", "broken"
    tab.x_values.value, tab.y_values.value = "1, 2", "off, on"
    tab.run(wait=True)
    assert "done: 2 safe, 2 unsafe" in tab.message.value, tab.message.value
    assert tab._cells[("on", "2")].description == "unsafe" and tab._cells[("off", "1")].description == "safe"


def test_a_worker_that_cannot_import_the_scenario_is_one_error_up_front(client: Any, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from ts_explore.sweeps import identity

    sc = ss.load_user_scenario(ss.user_scenario_file(tmp_path, "uninstalled_user_scenario"))
    # as if the scenario's module were an installed package the workers lack: it travels by reference
    monkeypatch.setattr(identity, "is_user_module", lambda module: False)
    with pytest.raises(SweepError) as err:
        sweep(sc, {"n": [1, 2]}, client=client, progress=False, cache=False)
    text = str(err.value)
    assert "\n" not in text and "cannot load scenario 'uninstalled_user_scenario'" in text
    assert "No module named 'uninstalled_user_scenario'" in text and "PYTHONPATH" in text
    assert err.value.worker_error == "ModuleNotFoundError: No module named 'uninstalled_user_scenario'"


STABLE = '''
from dataclasses import dataclass, field

from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob


def half(n):
    return max(1, n // 2)


@dataclass(frozen=True)
class Config:
    n: int = knob(2, min=1, max=6, label="iterations")
    pattern: str = knob("cross_wait", options=("cross_wait", "self_wait"), label="pattern")
    shrink: object = field(default=half)  # a function-valued setting: its code counts, not its address


def build(cfg, ctx, *, kinds=object()):
    if cfg.pattern not in {"cross_wait", "self_wait", "missing_release"}:  # a set constant: no hash-seeded order
        raise ValueError(cfg.pattern)
    kwargs = getattr(deadlocks, cfg.pattern)(False, cfg.shrink(cfg.n))
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])


sc = Scenario(name="stable", title="t", config_type=Config, build_fn=build)
'''


def test_the_code_digest_is_the_same_in_every_process(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "stable_scenario.py").write_text(STABLE)
    probe = ("import sys; from ts_explore.cli import load_target; from ts_explore.sweeps.identity import scenario_code; "
             "print(scenario_code(load_target(sys.argv[1])).digest)")
    root = str(Path(__file__).resolve().parents[2])
    digests = set()
    for seed in ("1", "2"):  # another hash seed orders a set's strings another way
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        done = subprocess.run([sys.executable, "-c", probe, f"{tmp_path / 'stable_scenario.py'}:sc"], env=env,
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1 and len(digests.pop()) == 16
