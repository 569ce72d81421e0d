"""A scenario and a fake measuring engine for the tuning tests: no GPU, deterministic TFLOP/s per (shape, config).

The engine stands in for ``ts_explore.launch`` on the Dask workers (same call,
the result fields a sweep row reads). It logs every measurement to a file,
kills its worker the first time a ``die`` config is measured, and reports a
``wrong`` config's output as incorrect. The module travels to the workers by
value (``cloudpickle.register_pickle_by_value``).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ts_explore.gallery import deadlocks
from ts_explore.scenarios import Built, Scenario, knob


@dataclass(frozen=True)
class FakeGemm:
    speed: int = knob(1, min=1, max=9, label="speed")
    broken: bool = knob(False, label="broken schedule (deadlocks)")
    wrong: bool = knob(False, label="wrong output")
    die: bool = knob(False, label="kills its worker once")
    log: str = knob("", label="measurement log")


def build(cfg: FakeGemm, ctx: object) -> Built:
    kwargs = deadlocks.cross_wait(cfg.broken, 2)
    return Built(tasks=kwargs["tasks"], resource_dependency_graph=kwargs["resource_dependency_graph"])


FAKE = Scenario(name="fake_tuned_gemm", title="A GEMM-shaped scenario for tuning tests", config_type=FakeGemm,
                build_fn=build, kernel="ts_explore.kernels.gemm")


def rate(shape: tuple[int, int, int], speed: int) -> float:
    """TFLOP/s of a config: faster with speed when K is 64, slower with speed otherwise (picks differ by shape)."""
    return 100.0 * speed if shape[2] == 64 else 100.0 * (10 - speed)


def fake_launch(scenario: Any, config: FakeGemm, *, sizes: Any, reps: int, timeout: float, force: bool,
                tuned: bool) -> Any:
    shape = tuple(sizes[0])
    if config.log:
        with open(config.log, "a") as f:
            f.write(f"{'x'.join(map(str, shape))} speed={config.speed} die={config.die} tuned={tuned}\n")
        marker = config.log + ".died"
        if config.die and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    run = SimpleNamespace(rate=rate(shape, config.speed), unit="TFLOP/s", ratio=lambda: rate(shape, config.speed) / 500,
                          references=(SimpleNamespace(label="torch.matmul"),), elements=shape[0] * shape[1],
                          label="x".join(map(str, shape)))
    return SimpleNamespace(ok=not config.wrong, runs=(run,), compile_s=0.0, first_compile_s=0.0,
                           device=SimpleNamespace(name="Fake GPU"))
