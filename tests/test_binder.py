"""The binder/ configuration installs ts-explore into a fresh environment that runs the quickstart.

repo2docker itself needs Docker; this test does what it does with the files that
matter: a fresh venv with nothing in it, ``binder/requirements.txt`` installed
from the repository root (which pulls every dependency from the package index),
then the quickstart notebook executed with that environment's kernel.

The default tier installs with ``uv`` (a fresh resolve and install, but wheels
it downloaded before are reused from its cache: seconds instead of minutes);
the soak tier (``TS_EXPLORE_SOAK=1``) installs with pip, as repo2docker does.
Without ``uv`` the pip route is taken in the default tier too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tiers import soak

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_name_graphviz_python_and_the_project() -> None:
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")
    reqs = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-e .[sweep]" in reqs, ("with a binder/ folder repo2docker does not install the project by itself; the "
                                   "sweep extra runs notebook 11")


def _uv() -> str | None:
    """The uv next to this interpreter (the test extra installs it), else one on PATH."""
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.exists() else shutil.which("uv")


def _install_command(py: Path) -> tuple[str, list[str]]:
    uv = None if soak() else _uv()
    if uv is not None:
        return "uv", [uv, "pip", "install", "-q", "--python", str(py), "-r", str(BINDER / "requirements.txt")]
    return "pip", [str(py), "-m", "pip", "install", "-q", "-r", str(BINDER / "requirements.txt")]


@pytest.mark.slow
def test_binder_environment_imports_and_runs_the_quickstart(tmp_path: Path) -> None:
    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` is missing (binder/apt.txt installs it on Binder)")
    venv = tmp_path / "binder-venv"
    py = venv / "bin" / "python"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for leak in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(leak, None)
    installer, command = _install_command(py)
    subprocess.run([sys.executable, "-m", "venv", *(["--without-pip"] if installer == "uv" else []), str(venv)],
                   check=True)
    install = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert install.returncode == 0, f"{installer} install failed:\n{install.stderr[-3000:]}"
    probe = subprocess.run(
        [str(py), "-c", "import sys, ts_explore, graphviz, ipywidgets, jupyterlab; "
                        "print(ts_explore.__file__); print(sys.prefix)"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    where, prefix = probe.stdout.split()
    assert where.startswith(str(ROOT)), "binder installs this checkout (-e .)"
    assert Path(prefix) == venv, "the fresh environment, not the one running the tests"
    out = tmp_path / "quickstart.executed.ipynb"
    run = subprocess.run(
        [str(py), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=300", "--output", str(out), str(ROOT / "notebooks" / "00_quickstart.ipynb")],
        cwd=ROOT / "notebooks", env={**env, "MPLBACKEND": "Agg"}, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = json.loads(out.read_text())
    texts, mimes = [], set()
    for cell in executed["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            data = output.get("data", {})
            mimes |= set(data)
            texts.append("".join(data.get("text/plain", "")))
    joined = "\n".join(texts)
    assert "application/vnd.jupyter.widget-view+json" in mimes, "the explorer widget was displayed"
    assert "safe" in joined and "persistent_copy" in joined
