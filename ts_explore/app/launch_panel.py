"""The explorer's launch panel: run the current configuration on the GPU, or say why it cannot.

Whether a launch is possible is decided before the button is enabled: the GPU
launcher must be installed, cuda-python importable, a CUDA device present, and
the device new enough for the schedule (a CLC work queue needs sm_100). The
device is probed once, in a child process, so the notebook's own process never
initialises CUDA (a later launch worker may need to start clean).
"""

from __future__ import annotations

import functools
import html
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

import ipywidgets as widgets

from ..model import QueueKind, TaskSet
from .panels import FAIL_COLOUR, OK_COLOUR, note_html

_PROBE = r"""
import sys
try:
    from cuda.bindings import driver
except ImportError:
    try:
        from cuda import cuda as driver
    except ImportError:
        print("nocuda"); sys.exit(0)
try:
    (err,) = driver.cuInit(0)
except Exception as exc:
    print("nodriver", str(exc).splitlines()[0] if str(exc) else type(exc).__name__); sys.exit(0)
if int(err) != 0:
    print("nodriver", "cuInit returned", int(err)); sys.exit(0)
err, count = driver.cuDeviceGetCount()
if int(err) != 0 or count == 0:
    print("nodevice"); sys.exit(0)
A = driver.CUdevice_attribute
err, major = driver.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0)
err, minor = driver.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0)
err, name = driver.cuDeviceGetName(64, 0)
print("ok", major, minor, name.split(b"\0")[0].decode(errors="replace"))
"""


@dataclass(frozen=True)
class Device:
    """What the probe found: ``capability`` is ``(major, minor)`` when a CUDA device answered."""

    capability: tuple[int, int] | None
    name: str = ""
    problem: str = ""  # why there is no usable device

    @property
    def sm(self) -> int:
        return 10 * self.capability[0] + self.capability[1] if self.capability else 0


@functools.lru_cache(maxsize=1)
def probe_device(timeout_s: float = 30.0) -> Device:
    """Ask a child Python process for CUDA device 0 (cached for the life of this Python process)."""
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout_s,
                             check=False)
    except subprocess.TimeoutExpired:
        return Device(None, problem=f"the CUDA probe did not answer within {timeout_s:.0f} s")
    return parse_probe(out.stdout, out.stderr)


def parse_probe(stdout: str, stderr: str = "") -> Device:
    """Turn the probe's last line (``ok 9 0 NVIDIA H200``, ``nodriver ...``) into a :class:`Device`."""
    words = (stdout.strip().splitlines() or ["failed"])[-1].split(maxsplit=3)
    if words[0] == "ok":
        return Device((int(words[1]), int(words[2])), words[3] if len(words) > 3 else "")
    if words[0] == "nocuda":
        return Device(None, problem="cuda-python is not installed: pip install 'ts-explore[gpu]'")
    if words[0] == "nodriver":
        detail = " ".join(words[1:])
        return Device(None, problem=f"no NVIDIA driver could be loaded ({detail}); launches need a CUDA GPU")
    if words[0] == "nodevice":
        return Device(None, problem="the NVIDIA driver reports no CUDA device")
    return Device(None, problem=f"the CUDA probe failed: {(stderr or stdout).strip()[-300:]}")


def launcher_available() -> bool:
    """True when the GPU launcher (``ts_explore.launch``) is part of this installation."""
    return importlib.util.find_spec("ts_explore.launch") is not None


def launch_blockers(task_set: TaskSet | None, device: Device, has_launcher: bool,
                    scenario: Any = None) -> list[str]:
    """Every reason the current configuration cannot be launched here (empty: it can)."""
    reasons = []
    if scenario is not None and getattr(scenario, "kernel", "") is None:
        reasons.append(f"scenario {scenario.name!r} has no GPU kernel: it can be recorded and verified, not launched")
    if task_set is None:
        reasons.append("the current configuration does not verify; fix it first (see the Verdict tab)")
    if not has_launcher:
        reasons.append("this installation has no GPU launcher (ts_explore.launch)")
    if device.capability is None:
        reasons.append(device.problem)
    elif device.sm < 90:
        reasons.append(f"{device.name} is sm_{device.sm}; TS kernels need sm_90 or newer")
    if task_set is not None and task_set.queue_kind is QueueKind.CLC and device.capability is not None and device.sm < 100:
        reasons.append(f"a CLC work queue needs sm_100 or newer; {device.name} is sm_{device.sm} (choose static)")
    return reasons


class LaunchPanel:
    """A Launch button (disabled with the reasons while a launch is impossible) and the result area."""

    def __init__(self, launch: Callable[[Any, Any], Any] | None = None,
                 probe: Callable[[], Device] = probe_device,
                 has_launcher: Callable[[], bool] = launcher_available) -> None:
        self._launch = launch
        self._probe = probe
        self._has_launcher = has_launcher
        self._target: tuple[Any, Any] | None = None
        self.button = widgets.Button(description="Launch on GPU", icon="play", disabled=True)
        self.reasons = widgets.HTML()
        self.result = widgets.HTML()
        self.button.on_click(self._clicked)
        self.widget = widgets.VBox([self.button, self.reasons, self.result])

    def update(self, scenario: Any, config: Any, task_set: TaskSet | None) -> None:
        """Re-decide whether ``config`` of ``scenario`` can be launched here."""
        self._target = (scenario, config) if task_set is not None else None
        blockers = launch_blockers(task_set, self._probe(), self._has_launcher(), scenario)
        self.button.disabled = bool(blockers)
        if blockers:
            items = "".join(f"<li>{html.escape(r)}</li>" for r in blockers)
            self.reasons.value = (
                f"<div style='color:{FAIL_COLOUR};font-family:sans-serif'>Cannot launch here:<ul>{items}</ul></div>"
            )
        else:
            self.reasons.value = f"<div style='color:{OK_COLOUR};font-family:sans-serif'>Ready to launch.</div>"

    def _clicked(self, _: Any) -> None:
        if self._target is None:
            return
        self.button.disabled = True
        self.result.value = note_html("launching…")
        try:
            launch = self._launch
            if launch is None:
                import ts_explore

                launch = ts_explore.launch
            result = launch(*self._target)
            if hasattr(result, "_repr_html_"):
                self.result.value = result._repr_html_()
            else:
                text = result.summary() if hasattr(result, "summary") else repr(result)
                self.result.value = f"<pre>{html.escape(str(text))}</pre>"
        except Exception as exc:  # noqa: BLE001 - show it, keep the notebook usable
            self.result.value = note_html(f"launch failed: {type(exc).__name__}: {exc}", FAIL_COLOUR)
        finally:
            self.button.disabled = False


__all__ = ["Device", "LaunchPanel", "launch_blockers", "launcher_available", "parse_probe", "probe_device"]
