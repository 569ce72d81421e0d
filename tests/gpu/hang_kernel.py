"""A scenario whose kernel never finishes (it spins on a flag nobody sets): the watchdog's test subject.

Its schedule is valid, so the verifier passes it; only the work body hangs.
Importing the module registers the ``hang_forever_test`` scenario.
"""

# No ``from __future__ import annotations``: the DSL reads field annotations as objects.

from dataclasses import dataclass
from typing import Any

import cuda.bindings.driver as cuda
import cutlass.cute as cute
import numpy as np
from cutlass.experimental.task_scheduling.resources import MemoryResource, StageInfo, producer_work
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.kernels.build import compile_with_pointers
from ts_explore.kernels.common import run_built
from ts_explore.kernels.host import HostProblem
from ts_explore.model.plan import DeviceLimits, Instance, LaunchPlan
from ts_explore.scenarios import CATALOG, BuildContext, Built, Scenario, knob, register


@dataclass(kw_only=True)
class Spinner(MemoryResource):
    flag: Any = None
    count: Any = None

    @producer_work
    @cute.jit
    def spin(self, stage_info: StageInfo) -> None:
        while self.flag[0] == 0:
            self.count[0] = self.count[0] + 1


@dataclass(frozen=True)
class Hang:
    warps: int = knob(1, min=1, max=1, label="warps")


def build(cfg: Hang, ctx: BuildContext) -> Built:
    spinner = Spinner(name="spinner", flag=ctx.tensors.get("flag"), count=ctx.tensors.get("count"))

    @schedule
    def spin_forever(spinner: Spinner) -> None:
        with domain_loop(0, 1, 1):
            spinner.spin()

    task = Task(name="spin", src_resources=[], dst_resources=[spinner], warp_idx=0, num_warps=1,
                schedule=spin_forever(spinner))
    return Built(tasks=[task], resource_dependency_graph={spinner: []})


def compile(scenario: Any, cfg: Hang, *, arch: Any = None, on_built: Any = None) -> Any:
    @cute.kernel
    def kernel(flag: cute.Tensor, count: cute.Tensor) -> None:
        run_built(scenario.build(cfg, BuildContext(on_gpu=True, tensors={"flag": flag, "count": count})), on_built)

    @cute.jit
    def host(flag_ptr: cute.Pointer, count_ptr: cute.Pointer, stream: cuda.CUstream) -> None:
        kernel(cute.make_tensor(flag_ptr, cute.make_layout(4)),
               cute.make_tensor(count_ptr, cute.make_layout(4))).launch(grid=(1, 1, 1), block=(32, 1, 1),
                                                                        stream=stream)

    return compile_with_pointers(host, pointers=2, ints=0, arch=arch)


def plan(cfg: Hang, size: int, limits: DeviceLimits, registers: Any = None) -> LaunchPlan:
    return LaunchPlan(kernel=__name__, size=size, grid=(1, 1, 1), threads=32, smem_bytes=0, device=limits,
                      instances=(Instance((range(1),), {}, "1 iteration (that never ends)", 1),), registers=registers)


def host_problem(cfg: Hang, plan: LaunchPlan) -> HostProblem:
    zeros = np.zeros(4, dtype=np.int32)
    return HostProblem({"flag": zeros}, {"count": 4}, {"count": zeros}, ("flag", "count"), 16, 4, 1,
                       zero_filled=("count",))


SCENARIO = register(Scenario(name="hang_forever_test", title="Spins forever", config_type=Hang, build_fn=build,
                             kernel="hang_kernel"), replace=True)
assert "hang_forever_test" in CATALOG
