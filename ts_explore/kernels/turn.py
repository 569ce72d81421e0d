"""A data-less one-slot pipeline that hands the right to issue WGMMA from one consumer warpgroup to another.

Ping-pong kernels (attention's FlashAttention-3 order) order two warpgroups'
tensor-core work. (The GEMM's ping-pong needs none: its consumers read one
ring in order, see ``ts_explore.scenarios.gemm_pingpong``.) Writing the
order as a TS pipeline, rather than as a bare named barrier, lets TS and our
checker see it: ``hand_over`` is the producer step (commit = "my GEMMs are
issued"), ``take`` the consumer step (wait = "the other's are"). The pipeline's
own mbarriers do the synchronisation, so both bodies are empty on the GPU.
"""

# No ``from __future__ import annotations`` here: the DSL reads the resources' field annotations as objects.

from dataclasses import dataclass

import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.experimental.task_scheduling.enums import WorkAttr
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource,
    PipelineConfig,
    StageInfo,
    consumer_work,
    producer_work,
)

WARPGROUP_THREADS = 128


def turn_pipeline(threads: int = WARPGROUP_THREADS, cta_layout_vmnk: tuple[int, int, int, int] = (1, 1, 1, 1)
                  ) -> PipelineConfig:
    """A one-slot thread-to-thread pipeline: every thread of one warpgroup hands, every thread of the other takes.

    The turn stays inside its CTA; ``cta_layout_vmnk`` only repeats the kernel's cluster shape, which TS
    requires to be the same for every pipeline of a kernel.
    """
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, threads),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, threads), cta_layout_vmnk=cta_layout_vmnk)


@dataclass(kw_only=True)
class Turn(MemoryResource):
    """The right to issue WGMMA, handed from one consumer warpgroup to the other (carries no data)."""

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def hand_over(self, stage_info: StageInfo) -> None:
        """This warpgroup's GEMMs are issued: the other may issue its own (the commit signals it)."""
        pass

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def take(self, stage_info: StageInfo) -> None:
        """The other warpgroup has issued its GEMMs: this one may issue now (the wait made sure)."""
        pass


__all__ = ["Turn", "turn_pipeline"]
