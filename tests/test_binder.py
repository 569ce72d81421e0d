"""The binder/ configuration installs ts-explore into a fresh environment that runs the quickstart.

repo2docker itself needs Docker; this test does what it does with the files that
matter: a fresh venv, `pip install -r binder/requirements.txt` from the repository
root, then the quickstart notebook executed with that environment's kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_name_graphviz_python_and_the_project() -> None:
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")
    reqs = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-e ." in reqs, "with a binder/ folder repo2docker does not install the project by itself"


@pytest.mark.slow
def test_binder_environment_imports_and_runs_the_quickstart(tmp_path: Path) -> None:
    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` is missing (binder/apt.txt installs it on Binder)")
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "-r", str(BINDER / "requirements.txt")],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    probe = subprocess.run(
        [str(py), "-c", "import ts_explore, graphviz, ipywidgets, jupyterlab; print(ts_explore.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.strip().startswith(str(ROOT)), "binder installs this checkout (-e .)"
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
