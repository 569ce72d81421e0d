"""``tile='by shape'``: one compiled GEMM per tile the launch plan picks, compiled on first use.

A config with ``tile=TileShape.BY_SHAPE`` has no tile until it meets a shape:
:meth:`~ts_explore.scenarios.gemm.HopperGemm.resolved` asks
:func:`~ts_explore.kernels.gemm_tile_pick.pick_tile`, the one function that
chooses, and the launch plan shows its choice. :class:`ByShape` is what
``gemm.compile`` returns for such a config: it is called exactly like a
compiled GEMM (``fn(a, b, c, M, N, K, grid_x, grid_y, grid_z, stream)``; fp8:
``fn(a, b, c, scale_a, scale_b, M, N, ...)``) and
runs the kernel of the tile picked for (M, N, K) on this GPU's SM count, so
the grid the caller computed (``gemm.grid``, same pick) matches the kernel.
"""

from __future__ import annotations

from typing import Any, Callable


def device_sms() -> int:
    """Multiprocessors of the current context's GPU (the count every plan and grid here is made for)."""
    from cuda.bindings import driver as cu

    err, dev = cu.cuCtxGetDevice()
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"no current CUDA context ({err}); make one (torch.cuda.init(), or launch through "
                           "ts_explore.launch) before calling a 'by shape' GEMM")
    err, sms = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cannot read the SM count ({err})")
    return int(sms)


class ByShape:
    """Compiled GEMMs of one 'by shape' config, one per resolved tile (``compile_one(cfg)`` makes each)."""

    def __init__(self, cfg: Any, compile_one: Callable[[Any], Any], sms: Callable[[], int] = device_sms) -> None:
        self.cfg = cfg
        self._compile_one = compile_one
        self._sms = sms
        self.compiled: dict[Any, Any] = {}  # resolved config -> compiled function

    def config_for(self, shape: tuple[int, int, int]) -> Any:
        """The concrete config the kernel for ``shape`` is compiled from."""
        return self.cfg.resolved(tuple(int(v) for v in shape), self._sms())

    def function_for(self, shape: tuple[int, int, int]) -> Any:
        """The compiled function for ``shape`` (compiled now if its tile is new)."""
        cfg = self.config_for(shape)
        if cfg not in self.compiled:
            self.compiled[cfg] = self._compile_one(cfg)
        return self.compiled[cfg]

    def __call__(self, *args: Any) -> Any:
        # (a, b, c, [scale_a, scale_b,] M, N, K, ...): an fp8 config's scales come after the pointers
        first = 3 + self.cfg.dtype.scale_args
        m, n, k = args[first:first + 3]
        return self.function_for((int(m), int(n), int(k)))(*args)


__all__ = ["ByShape", "device_sms"]
