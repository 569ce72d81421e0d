"""On a CUDA GPU: a copy broken with its ``fault`` control, repaired by the top proven repair, launches and is exact.

Run alone: ``python3 -m pytest -m gpu -q tests/gpu/test_repair_launch_gpu.py`` (one compile, one small size).
Without a GPU it is skipped with the reason (tests/conftest.py).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import ts_explore
from ts_explore.gpu import LaunchError, launch
from ts_explore.kernels.host import pattern
from ts_explore.scenarios import get
from ts_explore.scenarios.pipelined import PipelineFault

pytestmark = pytest.mark.gpu

SIZE = (1 << 18) + 7  # a partial last tile and 3 leftover elements: the CTAs run different instances
TIMEOUT_S = 60.0  # a repaired kernel that hung would be killed after this


def test_the_top_repair_of_a_broken_copy_launches_and_copies_exactly() -> None:
    sc = get("pipelined_copy")
    cfg = sc.config(fault=PipelineFault.NO_RELEASE, ctas=8)
    build = lambda: sc.build(cfg).verify_kwargs()  # noqa: E731
    verdict = ts_explore.verify(**build())
    assert verdict.status.value == "unsafe"
    top = ts_explore.repairs(verdict, build)[0]
    assert top.proof.ok
    with pytest.raises(LaunchError) as refused:  # the broken schedule itself is refused before the GPU
        launch(sc, cfg, sizes=[SIZE])
    assert refused.value.reason == "unverified"

    started = time.monotonic()
    result = launch(sc, cfg, sizes=[SIZE], reps=2, warmup=1, timeout=TIMEOUT_S, repair=top, references=False,
                    keep_output=True)
    elapsed = time.monotonic() - started
    run = result.runs[0]
    assert result.gate.ok and not result.forced  # every repaired instance proven before launch
    assert result.ok and run.mismatches and all(m.count == 0 for m in run.mismatches), result.summary()
    assert np.array_equal(run.outputs["dst"], pattern(SIZE))  # the copy is exact, element for element
    assert run.kernel.median_ms > 0 and elapsed < TIMEOUT_S  # the run finished: no hang
