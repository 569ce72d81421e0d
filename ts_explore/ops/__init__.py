"""Kernels a PyTorch user can call: ``ts_explore.ops.gemm`` and ``ts_explore.ops.attention``.

Both are torch custom ops (``torch.ops.ts_explore.*``) that take torch
tensors on the current stream, work under CUDA-graph capture and
``torch.compile(fullgraph=True)``, and cost a few microseconds of host time
per call (the kernels are called through TVM-FFI). Each new shape class is
proven safe once by the launch gate; compiled kernels are kept on disk
(:mod:`.compile_cache`), so a later process loads them in milliseconds.

torch is imported only when ``gemm`` or ``attention`` is first used, so
``import ts_explore`` (and this package's cache and gate) works without it.
"""

from __future__ import annotations

from typing import Any

from .gate import OpsError

_LAZY = {"gemm": ".gemm_op", "attention": ".attention_op"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        try:
            module = importlib.import_module(_LAZY[name], __name__)
        except ModuleNotFoundError as exc:
            if exc.name in ("torch", "tvm_ffi"):
                raise OpsError(f"ts_explore.ops.{name} needs {exc.name}, which is not installed: install the GPU "
                               "extra (pip install 'ts-explore[torch]', or make install on a machine with an "
                               "NVIDIA GPU)") from None
            raise
        found = globals()[name] = getattr(module, name)  # later lookups skip this function
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def prepared() -> list[Any]:
    """Every kernel this process has prepared for an op call (GEMM, then attention): its config, sizes, grid."""
    import sys

    found: list[Any] = []
    for name in ("gemm_op", "attention_op"):
        module = sys.modules.get(f"{__name__}.{name}")
        if module is not None:
            found.extend(module._PREPARED.values())
    return found


__all__ = ["OpsError", "attention", "gemm", "prepared"]
