"""Launch plots stay readable with many long problem labels (GEMM shapes): tick labels never overlap."""

from __future__ import annotations

import pytest

from ts_explore.gpu.result import DeviceInfo, LaunchResult, SizeRun
from ts_explore.gpu.timing import MATMUL, Timing
from ts_explore.render.launch_plots import rate_per_problem, timing_distribution
from ts_explore.scenarios import get

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (16384, 1024, 4096), (1000, 1032, 520)]


def gemm_like(shapes: list[tuple[int, int, int]]) -> LaunchResult:
    """A result shaped as the GEMM notebook's five problems, from known timings."""
    runs = []
    for i, (m, n, k) in enumerate(shapes):
        flops = 2 * m * n * k
        kernel = Timing("kernel", (1.0 + i, 1.1 + i, 1.2 + i), 2 * (m * k + n * k + m * n), flops=flops)
        ref = Timing(MATMUL, tuple(t * 0.95 for t in kernel.times_ms), kernel.bytes_moved, flops=flops)
        runs.append(SizeRun(m * n, kernel.bytes_moved, 132, kernel, (ref,), shape=f"{m}x{n}x{k}"))
    device = DeviceInfo(name="Test GPU", cc=(9, 0), sms=132, peak_gbps=4800.0, total_bytes=1 << 37)
    return LaunchResult("hopper_gemm", get("hopper_gemm").default_config(), device, tuple(runs), 0.0, 1.0, True, "ok")


def _overlaps(fig) -> list[tuple[str, str]]:
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    ticks = [t for t in fig.axes[0].get_xticklabels() if t.get_text()]
    boxes = sorted(((t.get_window_extent(renderer), t.get_text()) for t in ticks), key=lambda b: b[0].x0)
    return [(a[1], b[1]) for a, b in zip(boxes, boxes[1:]) if a[0].x1 > b[0].x0]


@pytest.mark.parametrize("plot", [rate_per_problem, timing_distribution])
def test_long_shape_labels_do_not_overlap(plot) -> None:
    fig = plot(gemm_like(SHAPES))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [f"{m}x{n}x{k}" for m, n, k in SHAPES]
    assert not _overlaps(fig), f"overlapping x labels: {_overlaps(fig)}"


def test_short_labels_stay_level() -> None:
    fig = rate_per_problem(gemm_like(SHAPES[:2]))
    assert all(t.get_rotation() == 0 for t in fig.axes[0].get_xticklabels())
