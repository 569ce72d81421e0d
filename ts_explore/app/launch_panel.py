"""The explorer's launch panel: run the current configuration on the GPU, or say why it cannot.

Whether a launch is possible is decided before the button is enabled, from the
one CUDA probe (:func:`ts_explore.gpu.probe.probe`, run in a child process so
this process never initialises CUDA) and the architecture rules in
:func:`ts_explore.gpu.safety.launch_refusal`.
"""

from __future__ import annotations

import html
from typing import Any, Callable

import ipywidgets as widgets

from ..gpu.probe import Probe, probe
from ..gpu.safety import launch_refusal, repair_refusal
from ..model import TaskSet
from .panels import FAIL_COLOUR, OK_COLOUR, note_html


def launch_blockers(task_set: TaskSet | None, device: Probe, scenario: Any = None, config: Any = None,
                    force: bool = False, repair: Any = None) -> list[str]:
    """Every reason the current configuration cannot be launched here (empty: it can).

    ``force`` ("launch anyway") lifts only the verifier's objection; ``repair``
    (an applied repair) is refused when its edits cannot be written onto the kernel's build.
    """
    reasons = []
    refused = repair_refusal(repair.edits) if repair is not None else None
    if refused is not None:
        reasons.append(refused)
    if scenario is not None and getattr(scenario, "kernel", "") is None:
        reasons.append(f"scenario {scenario.name!r} has no GPU kernel: the kernel for this scenario is not built "
                       "yet; recording, drawing and verifying it work here")
    if task_set is None and not force:
        reasons.append("the current configuration does not verify; fix it first (see the Verdict tab), or tick "
                       "'launch anyway' to watch it fail (a hang is read and killed)")
    limits = device.limits
    if limits is None:
        reasons.append(device.message)
        return reasons
    refusal = launch_refusal(scenario, config, limits)
    if refusal is not None:
        reasons.append(refusal[1])
    return reasons


class LaunchPanel:
    """A Launch button (disabled with the reasons while a launch is impossible) and the result area."""

    def __init__(self, launch: Callable[..., Any] | None = None,
                 probe: Callable[[], Probe] = probe) -> None:
        self._launch = launch
        self._probe = probe
        self._target: tuple[Any, Any] | None = None
        self._state: tuple[Any, Any, TaskSet | None, Any] | None = None
        self._repair: Any = None
        self.button = widgets.Button(description="Launch on GPU", icon="play", disabled=True)
        self.trace = widgets.Checkbox(value=False, description="trace", indent=False,
                                      tooltip="record every step of each warp of two CTAs and show it beside the "
                                              "schedule's order")
        self.force = widgets.Checkbox(value=False, description="launch anyway", indent=False,
                                      tooltip="launch a configuration the verifier rejects; a hang is read while it "
                                              "hangs, then killed")
        self.reasons = widgets.HTML()
        self.result = widgets.HTML()
        self.button.on_click(self._clicked)
        self.force.observe(lambda _: self._recheck(), names="value")
        self.widget = widgets.VBox([widgets.HBox([self.button, self.trace, self.force]), self.reasons, self.result])

    def _recheck(self) -> None:
        if self._state is not None:
            self.update(*self._state)

    def update(self, scenario: Any, config: Any, task_set: TaskSet | None, repair: Any = None) -> None:
        """Re-decide whether ``config`` of ``scenario`` (with an applied ``repair``'s edits) can be launched here."""
        self._state = (scenario, config, task_set, repair)
        self._repair = repair
        force = bool(self.force.value)
        self._target = (scenario, config) if task_set is not None or (force and config is not None) else None
        blockers = launch_blockers(task_set, self._probe(), scenario, config, force=force, repair=repair)
        self.button.disabled = bool(blockers)
        if blockers:
            items = "".join(f"<li>{html.escape(r)}</li>" for r in blockers)
            self.reasons.value = (
                f"<div style='color:{FAIL_COLOUR};font-family:sans-serif'>Cannot launch here:<ul>{items}</ul></div>"
            )
        else:
            what = "Ready to launch."
            if self._repair is not None:
                what = (f"Ready to launch the repaired schedule ({html.escape(self._repair.sentence)}); every "
                        "instance is proven with the repair before the kernel runs.")
            self.reasons.value = f"<div style='color:{OK_COLOUR};font-family:sans-serif'>{what}</div>"

    def _clicked(self, _: Any) -> None:
        if self._target is None:
            return
        self.button.disabled = True
        self.result.value = note_html("launching…")
        try:
            launch = self._launch
            if launch is None:
                from ..gpu import launch
            extra: dict[str, Any] = {k: True for k, box in (("trace", self.trace), ("force", self.force)) if box.value}
            if self._repair is not None:
                extra["repair"] = self._repair
            result = launch(*self._target, **extra)
            if hasattr(result, "_repr_html_"):
                self.result.value = result._repr_html_() + _comparison_html(result) + _why_slow_html(result)
            else:
                text = result.summary() if hasattr(result, "summary") else repr(result)
                self.result.value = f"<pre>{html.escape(str(text))}</pre>"
        except Exception as exc:  # noqa: BLE001 - show it, keep the notebook usable
            report = getattr(exc, "report", None)
            self.result.value = note_html(f"launch failed: {type(exc).__name__}: {exc}", FAIL_COLOUR) + (
                report._repr_html_() if hasattr(report, "_repr_html_") else "")
        finally:
            self.button.disabled = False


def _comparison_html(result: Any) -> str:
    """The schedule's predicted order beside the measured lanes, when the launch was traced."""
    if getattr(result, "timeline", None) is None or not hasattr(result, "plot_comparison"):
        return ""
    from ..render.timeline_html import png_html

    try:
        return png_html(result.plot_comparison())
    except Exception as exc:  # noqa: BLE001 - the launch itself worked; say why the comparison is missing
        return note_html(f"no comparison with the schedule: {type(exc).__name__}: {exc}", FAIL_COLOUR)


def _why_slow_html(result: Any) -> str:
    """A "Why slow" section when the launch was traced: where warps wait, the critical path, the bound."""
    timeline = getattr(result, "timeline", None)
    if timeline is None or not timeline.events or timeline.spec.stages != "all":
        return ""
    from ..render.stalls import stalls_html

    try:
        body = stalls_html(timeline.stalls())
    except Exception as exc:  # noqa: BLE001 - the launch itself worked; say why the view is missing
        return note_html(f"no stall view: {type(exc).__name__}: {exc}", FAIL_COLOUR)
    return ("<details open><summary style='font-family:sans-serif'><b>Why slow</b> (waits per pipeline; "
            "<code>r.advise()</code> ranks changes proven SAFE)</summary>" + body + "</details>")


__all__ = ["LaunchPanel", "launch_blockers"]
