"""A real browser runs the quickstart: JupyterLab + headless Debian Chromium driven by Playwright.

Starts JupyterLab on 127.0.0.1 (a free port, a random token) serving a copy of
``notebooks/00_quickstart.ipynb``, runs every cell, switches the work-queue
dropdown of the explorer and checks that the drawn schedule changed, that the
deadlock stepper's lanes scroll inside the output instead of being cut, and
that ticking "full size" shows a scaled drawing at its natural width. A
screenshot lands in the test's tmp dir (its path is printed). The server is
always stopped. Skipped with the reason when Chromium or Playwright is absent.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "00_quickstart.ipynb"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; Playwright's own browser builds are not used
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
QUEUE_LABEL = "queue"  # the queue-kind dropdown's description contains this word
SERVER_START_S = 90
KERNEL_IDLE_S = 120
EXPLORER_S = 180
REDRAW_S = 60

KERNEL_STATUS_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
ALL_CELLS_RAN_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext.session || w.sessionContext.session.kernel.status !== 'idle') return false;
  return w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount !== null);
}"""
SCHEDULE_SVG = ".ts-explore-explorer .widget-tab .ts-explore-diagram svg"
NARROW_VIEWPORT = {"width": 700, "height": 1100}  # narrower than the schedule drawing, so it is scaled down
# Where the stepper's lane table ends up: the box that scrolls it (does it hold the step buttons too?), and the
# output's right edge.
LANES_JS = """() => {
  const lanes = document.querySelector('.jp-OutputArea-output .ts-explore-lanes');
  if (!lanes) return null;
  const table = lanes.querySelector('table').getBoundingClientRect();
  const output = lanes.closest('.jp-OutputArea-output');
  let box = lanes;
  while (box !== output) {
    const o = getComputedStyle(box).overflowX;
    if ((o === 'auto' || o === 'scroll') && box.getBoundingClientRect().width + 1 < table.width) break;
    box = box.parentElement;
  }
  return {table_right: table.right, box_right: box.getBoundingClientRect().right, scrolls: box !== output,
          with_buttons: box.querySelector('button') !== null, output_right: output.getBoundingClientRect().right};
}"""
# The drawing's width on screen and its natural width (Graphviz writes it in pt: 96 px per 72 pt).
SVG_WIDTH_JS = """(svg) => {
  const w = svg.getAttribute('width');
  const natural = w.endsWith('pt') ? parseFloat(w) * 96 / 72 : parseFloat(w);
  return {shown: svg.getBoundingClientRect().width, natural: natural};
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LabServer:
    """A JupyterLab process serving ``root``; ``stop()`` kills its whole process group."""

    def __init__(self, root: Path, log_path: Path) -> None:
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        settings = root / ".settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env = dict(os.environ)
        env.update(
            JUPYTERLAB_SETTINGS_DIR=str(root / ".settings"),
            JUPYTER_RUNTIME_DIR=str(root / ".runtime"),
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
            MPLBACKEND="Agg",
        )
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", "--LabApp.expose_app_in_browser=True",
             f"--ServerApp.root_dir={root}"],
            cwd=root, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def log_tail(self, chars: int = 3000) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-chars:]

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"JupyterLab exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        pytest.fail(f"JupyterLab did not answer on {self.url} within {timeout_s} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self._log.close()


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[LabServer]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (`make test` does: apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="Python Playwright is not installed (pip install playwright)")
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)  # the run's outputs never touch the committed notebook
    server = LabServer(root, tmp_path / "jupyterlab.log")
    try:
        server.wait_ready(SERVER_START_S)
        yield server
    finally:
        server.stop()


def _wait(what: str, lab: LabServer, page: Any, fn: Callable[[], Any]) -> Any:
    """Run a Playwright wait; on timeout fail with what we waited for, the page's errors and the server log."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return fn()
    except PlaywrightTimeout:
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        shown = "\n".join(errors.all_inner_texts())[-3000:]
        pytest.fail(f"timed out waiting for {what}.\nerror outputs in the notebook:\n{shown or '(none)'}\n"
                    f"server log:\n{lab.log_tail()}")


def test_quickstart_runs_and_the_queue_dropdown_redraws(lab: LabServer, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(f"{lab.url}/lab/tree/{NOTEBOOK.name}?token={lab.token}&reset", timeout=60_000)
            _wait("the kernel to become idle", lab, page, lambda: page.wait_for_function(
                f"() => ({KERNEL_STATUS_JS})() === 'idle'", timeout=KERNEL_IDLE_S * 1000))
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            _wait("every cell to run", lab, page, lambda: page.wait_for_function(
                ALL_CELLS_RAN_JS, timeout=EXPLORER_S * 1000))
            _wait("the explorer's schedule drawing", lab, page, lambda: page.wait_for_selector(
                SCHEDULE_SVG, state="attached", timeout=REDRAW_S * 1000))
            before = page.locator(SCHEDULE_SVG).first.inner_html()
            status = page.locator(".ts-explore-explorer .ts-explore-status").first.inner_text()
            assert "changes since" not in status, f"back at its start the explorer compares with another setting: {status}"

            dropdown = page.locator(".ts-explore-explorer .widget-dropdown").filter(has_text=QUEUE_LABEL)
            assert dropdown.count() >= 1, "the explorer shows no work-queue dropdown"
            select = dropdown.first.locator("select")
            options = select.locator("option").all_inner_texts()
            current = select.evaluate("s => s.options[s.selectedIndex].text")
            assert {"static", "clc"} <= set(options), f"unexpected work-queue options {options}"
            target = "static" if current == "clc" else "clc"  # both draw a schedule ("none" needs overlaunch=0)
            select.select_option(label=target)
            _wait(f"the schedule to be redrawn after choosing queue {target!r}", lab, page, lambda: page.wait_for_function(
                "([sel, old]) => { const s = document.querySelector(sel); return s && s.innerHTML !== old; }",
                arg=[SCHEDULE_SVG, before], timeout=REDRAW_S * 1000))
            after = page.locator(SCHEDULE_SVG).first.inner_html()
            assert after != before
            assert f"[{target}]" in after, f"the new drawing does not show a {target} work queue"

            lanes = page.evaluate(LANES_JS)
            assert lanes is not None, "the quickstart's Stepper shows no lanes"
            if lanes["table_right"] > lanes["output_right"] + 1:  # wider than the output: the lanes scroll there
                assert lanes["scrolls"] and lanes["box_right"] <= lanes["output_right"] + 2, (
                    f"the deadlock lanes are cut at the output's right edge: {lanes}")
                assert not lanes["with_buttons"], f"the lanes scroll only with the whole stepper: {lanes}"

            page.set_viewport_size(NARROW_VIEWPORT)
            svg = page.locator(SCHEDULE_SVG).first
            fitted = svg.evaluate(SVG_WIDTH_JS)
            assert fitted["shown"] < fitted["natural"] - 2, f"precondition: the drawing is scaled down {fitted}"
            diagram = page.locator(".ts-explore-explorer .widget-tab .ts-explore-diagram").first
            diagram.locator("label").filter(has_text="full size").click()
            _wait("the drawing to grow to its natural width", lab, page, lambda: page.wait_for_function(
                "([sel, w]) => Math.abs(document.querySelector(sel).getBoundingClientRect().width - w) <= 1",
                arg=[SCHEDULE_SVG, fitted["natural"]], timeout=10_000))
            full = svg.evaluate(SVG_WIDTH_JS)
            assert abs(full["shown"] - full["natural"]) <= 1, f"'full size' did not show the natural width: {full}"

            shot = tmp_path / "quickstart.png"
            page.locator(".ts-explore-explorer .widget-tab").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shot))
            print(f"\nscreenshot: {shot}  (browser part took {time.monotonic() - started:.1f} s)")
        finally:
            browser.close()
