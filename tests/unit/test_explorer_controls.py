"""Controls generated from any config dataclass, and the launch panel's decisions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import ipywidgets as widgets
import pytest

from ts_explore.app import controls as ctl
from ts_explore.app.launch_panel import LaunchPanel, launch_blockers
from ts_explore.gpu.probe import Probe, parse, probe
from ts_explore.model.plan import DeviceLimits
from ts_explore.scenarios import get
from ts_explore.model import QueueKind, TaskSet
from ts_explore.scenarios import knob
from ts_explore.scenarios.knobs import knobs
from ts_explore.scenarios.varlen import VarlenCopy


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


@dataclass(frozen=True)
class Mixed:
    n: int = knob(0, min=0, max=3)
    free: int = 5  # no hints: a range around the default
    ratio: float = knob(0.5, min=0, max=1)
    name: str = "tile"
    mode: Mode = Mode.SAFE
    flag: bool = True
    lengths: tuple[int, ...] = ()
    table: dict = field(default_factory=dict, hash=False, compare=False)


def test_every_supported_type_gets_its_widget() -> None:
    c = ctl.make_controls(Mixed())
    assert isinstance(c["n"], widgets.IntSlider) and (c["n"].min, c["n"].max) == (0, 3)
    assert isinstance(c["free"], widgets.IntSlider) and c["free"].min <= 5 <= c["free"].max
    assert isinstance(c["ratio"], widgets.FloatSlider) and not c["ratio"].continuous_update
    assert isinstance(c["name"], widgets.Text) and c["name"].value == "tile"
    assert isinstance(c["mode"], widgets.Dropdown) and c["mode"].value is Mode.SAFE
    assert isinstance(c["flag"], widgets.Checkbox)
    assert isinstance(c["lengths"], widgets.Text) and c["lengths"].value == ""
    assert c["table"].disabled  # shown, not editable


def test_read_config_round_trips_and_parses_ints() -> None:
    config = Mixed()
    c = ctl.make_controls(config)
    c["n"].value, c["mode"].value, c["lengths"].value = 2, Mode.FAST, " 4, 8,2 "
    new = ctl.read_config(config, c)
    assert (new.n, new.mode, new.lengths, new.flag) == (2, Mode.FAST, (4, 8, 2), True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", ()), ("(1, 2)", (1, 2)), ("[3]", (3,)), ("5,", (5,)), ("-1, 0", (-1, 0))],
)
def test_parse_ints_accepts_python_like_spellings(text: str, expected: tuple[int, ...]) -> None:
    assert ctl.parse_ints("lengths", text) == expected


def test_parse_ints_names_the_field_and_the_fix() -> None:
    with pytest.raises(ctl.ConfigValueError, match=r"lengths: '2\.5' .* e\.g\. 4, 8, 2"):
        ctl.parse_ints("lengths", "1, 2.5")
    knob = next(k for k in knobs(VarlenCopy) if k.name == "lengths")
    with pytest.raises(ctl.ConfigValueError, match="segment lengths: -1 is out of range; every entry must be between 0 and 65536"):
        ctl.coerce_values(VarlenCopy(), {"lengths": "3, -1"})
    assert knob.min == 0


def test_non_dataclass_config_is_refused() -> None:
    with pytest.raises(TypeError, match="must be a dataclass"):
        ctl.field_types(int)


def _device(cc: tuple[int, int], name: str) -> Probe:
    return Probe(None, name, DeviceLimits(name=name, cc=cc, sms=132))


SM90 = _device((9, 0), "NVIDIA H200")
SM100 = _device((10, 0), "NVIDIA B200")
CLC_SET = TaskSet(tasks=(), resources=(), edges=())
CLC = get("persistent_copy").config(queue=QueueKind.CLC)


def test_launch_blockers_name_every_reason() -> None:
    none = Probe("no_driver", "no NVIDIA driver on this machine")
    assert launch_blockers(CLC_SET, none) == ["no NVIDIA driver on this machine"]
    assert launch_blockers(CLC_SET, SM90) == []
    persistent = get("persistent_copy")
    (clc,) = launch_blockers(CLC_SET, SM90, persistent, CLC)
    assert "CLC dynamic persistence" in clc and "needs an sm_100+ GPU" in clc and "sm_90" in clc
    assert launch_blockers(CLC_SET, SM100, persistent, CLC) == []
    gemm = get("hopper_gemm")
    (wgmma,) = launch_blockers(CLC_SET, SM100, gemm, gemm.config())
    assert "WGMMA needs an sm_90a GPU" in wgmma, "one rule per kernel, asked by the panel too"
    assert "does not verify" in launch_blockers(None, SM100)[0]
    assert "sm_80" in launch_blockers(CLC_SET, _device((8, 0), "A100"))[0]

    class RecordOnly:
        name, kernel = "sketch", None

    assert "has no GPU kernel" in launch_blockers(CLC_SET, SM90, RecordOnly())[0]


def test_launch_button_runs_the_launcher_and_shows_its_result() -> None:
    calls = []

    class Result:
        def summary(self) -> str:
            return "1.23 ms, matches the reference"

    def launch(scenario, config):
        calls.append((scenario, config))
        return Result()

    panel = LaunchPanel(launch=launch, probe=lambda: SM90)
    panel.update("scenario", "config", CLC_SET)
    assert not panel.button.disabled and "Ready" in panel.reasons.value
    panel.button.click()
    assert calls == [("scenario", "config")] and "matches the reference" in panel.result.value

    def broken(scenario, config):
        raise RuntimeError("compile failed: unsupported operation")

    panel = LaunchPanel(launch=broken, probe=lambda: SM90)
    panel.update("scenario", "config", CLC_SET)
    panel.button.click()
    assert "compile failed" in panel.result.value and not panel.button.disabled


def test_probe_answers_are_understood() -> None:
    h200 = parse('{"reason": null, "name": "NVIDIA H200", "count": 1, "cc": [9, 0], "sms": 132, "threads": 2048, '
                 '"ctas": 32, "smem_sm": 233472, "smem_cta": 232448, "regs": 65536}')
    assert h200.ok and h200.limits.cc == (9, 0) and h200.limits.sms == 132 and not h200.limits.assumed
    assert "pip install" in parse('{"reason": "no_cuda_python"}').message
    assert "no NVIDIA driver" in parse('{"reason": "no_driver", "detail": "libcuda.so"}').message
    assert "no CUDA device" in parse('{"reason": "no_device"}').message
    assert parse("Traceback: boom").reason == "probe_failed"


def test_probe_on_this_machine_gives_a_device_or_a_reason() -> None:
    found = probe()
    assert found.ok == (found.limits is not None) and (found.ok or found.message)


def test_user_callable_opens_its_box_with_a_named_function_and_never_runs_typed_text() -> None:
    from ts_explore.app.explorer import Explorer
    from ts_explore.gpu.worker import portable_config
    from ts_explore.scenarios import SkipRule
    from ts_explore.scenarios.persistent import SKIP_FUNCTIONS

    ex = Explorer("persistent_copy", debounce_s=0)
    box = ex.controls["skip_fn"]
    assert box.disabled and "only skip rule 'user callable' uses it" in box.tooltip
    assert "'even tiles'" in box.placeholder and list(box.options) == list(SKIP_FUNCTIONS)
    ex.controls["skip"].value = SkipRule.CUSTOM  # as a user picks it
    assert not box.disabled and box.value == "every 4th tile"
    assert ex.error is None and ex.verdict.ok and ex.adjusted == (
        "skip rule: user callable set to every 4th tile: skip rule 'user callable' has no function",)
    box.value = "even tiles"
    assert ex.error is None and ex.verdict.ok
    assert ex.config.skip_fn is SKIP_FUNCTIONS["even tiles"] and ex.config.skip_fn(4) and not ex.config.skip_fn(3)
    portable_config(ex.config)  # the launch worker can receive it
    box.value = "__import__('os').system('touch pwned') or (lambda tile: True)"
    assert "is not one of its named choices" in ex.error and "never run as code" in ex.error
    box.value = "odd tiles"
    assert ex.error is None and ex.verdict.ok, "the app responds again after bad input"
    ex.set(skip_fn=None)  # from code the value given is kept, so nothing resolves it: the check explains
    assert "has no function" in ex.error and "pass one from Python" in ex.error


def test_a_python_error_in_a_function_set_from_code_shows_its_line() -> None:
    from ts_explore.app.explorer import Explorer

    ex = Explorer("persistent_copy", debounce_s=0, skip="user callable", skip_fn=lambda tile: tile // 0 == 1)
    assert ex.problem is not None and ex.problem.rule == "python-error"
    assert "tile // 0 == 1" in ex.problem.hint
    assert ex.message.value.count("How to fix") == 1
