"""A launch's ``timeout`` bounds the kernel's runs; the compile before them gets its own allowance."""

from __future__ import annotations

from typing import Any

import pytest

from ts_explore import gpu
from ts_explore.gpu import LaunchError, launch


class _SlowCompiler:
    """A worker whose compile outlasts whatever it is given: it reports the timeout the way the real one does."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, float]] = []

    def request(self, message: dict[str, Any], timeout: float, on_timeout: str = "") -> dict[str, Any]:
        self.asked.append((message["op"], timeout))
        raise LaunchError("timeout", f"did not finish in {timeout:g} s; the worker was killed. {on_timeout}")


@pytest.mark.parametrize("timeout", [10.0, 900.0])
def test_a_short_kernel_timeout_does_not_cut_the_compile_short(monkeypatch: pytest.MonkeyPatch,
                                                                timeout: float) -> None:
    worker = _SlowCompiler()
    monkeypatch.setattr(gpu, "_WORKER", worker)
    monkeypatch.setattr(gpu, "cuda_unavailable_reason", lambda: None)
    with pytest.raises(LaunchError) as caught:
        launch("grid_stride_copy", sizes=[1 << 16], timeout=timeout)
    allowed = max(timeout, gpu.COMPILE_S)
    assert worker.asked == [("prepare", allowed)]
    assert f"did not finish in {allowed:g} s" in str(caught.value)
    assert "Compiling grid_stride_copy took that long" in str(caught.value)
