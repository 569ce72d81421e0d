"""``ts_explore.ops.gemm``: the catalog's Hopper GEMM as a torch custom op (bf16, and fp8 e4m3 with scales).

``gemm(a, b)`` is ``a @ b`` for ``a`` (M, K) row-major and ``b`` (K, N)
column-major, i.e. ``b = w.t()`` of an (N, K) ``nn.Linear`` weight, so
``gemm(x, w.t())`` computes ``x @ w.t()`` the way ``torch.matmul(x, w.t())``
does, in bf16 with fp32 accumulation. With float8_e4m3fn operands it computes
``(scale_a·scale_b)·(a @ b)`` in bf16 (``scale_a``, ``scale_b``: floats).

Each new shape's launch plan is proven by the gate once per shape class
(:mod:`.gate`), its kernel loaded from the compile cache or compiled into it
(:mod:`.compiled`); then a call checks its tensors with a few comparisons
and calls the kernel's TVM-FFI host on the current stream. The same code
runs as the custom ops ``torch.ops.ts_explore.gemm`` and ``gemm_out`` (with
fake implementations), so ``torch.compile(fullgraph=True)`` and CUDA-graph
capture see an ordinary op. There is no backward: differentiating through it
raises :class:`NotImplementedError` saying so.
"""

# No ``from __future__ import annotations`` here: torch.library reads the custom ops' annotations as objects.

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch

from .checks import explain_gemm, explain_scales
from .compile_cache import load_shared, shared_library
from .gate import OpsError
from .launch_index import INDEX, record_name
from .routing import device_key, direct
from .tuned import default_config, tables_digest

_BF16, _FP8 = torch.bfloat16, torch.float8_e4m3fn
DEFAULT = "default"
_CONFIGS: dict[str, Any] = {}  # config key (the op's ``config`` string) -> a hopper_gemm config
_KEYS: dict[Any, str] = {}
_GATE: list[Any] = []


def gate() -> Any:
    """The GEMM's :class:`~.gate.ShapeGate` (made on first use: it imports the scenario and the kernel's plan)."""
    if not _GATE:
        from ..kernels import gemm as kernel
        from . import compiled
        from .gate import ShapeGate

        _GATE.append(ShapeGate(compiled.scenario("hopper_gemm"), kernel.plan))
    return _GATE[0]


def config_key(config: Any) -> str:
    """The string the custom op takes for ``config``: None (tile by shape), a hopper_gemm config, or a key."""
    if config is None:
        return DEFAULT
    if isinstance(config, str):
        if config != DEFAULT and config not in _CONFIGS:
            raise OpsError(f"config {config!r} is not a known GEMM config key; pass a hopper_gemm config "
                           "(ts_explore.get('hopper_gemm').config(...)) or None for the tile picked by shape")
        return config
    key = _KEYS.get(config)
    if key is None:
        if type(config).__name__ != "HopperGemm":
            raise OpsError(f"config must be a hopper_gemm config (ts_explore.get('hopper_gemm').config(...)), got "
                           f"{type(config).__name__}")
        from . import compiled

        compiled.scenario("hopper_gemm").check(config)
        key = "cfg-" + hashlib.sha256(repr(config).encode()).hexdigest()[:16]
        _KEYS[config], _CONFIGS[key] = key, config
    return key


def _base_config(key: str, fp8: bool) -> Any:
    from ..kernels.gemm_geometry import DType
    from . import compiled

    if key == DEFAULT:
        return compiled.default_gemm_config(fp8)
    cfg = _CONFIGS[key]
    if (cfg.dtype is DType.FP8) != fp8:
        raise OpsError(f"the config is dtype={cfg.dtype.short} but the operands are "
                       f"{'float8_e4m3fn' if fp8 else 'bfloat16'}; pass a config with the operands' dtype")
    return cfg


@dataclass(frozen=True)
class Prepared:
    """One shape's kernel, proven and loaded: what a call needs besides its tensors."""

    fn: Any  # the TVM-FFI host
    key: str  # the config key it was asked with
    m: int
    n: int
    k: int
    grid: tuple[int, int, int]
    out_shape: tuple[int, int]
    fp8: bool
    device: int
    sms: int
    from_record: bool  # loaded from a launch record of an earlier process (proven and compiled there)
    tables: str = ""  # the tuning tables' digest that chose the default config (empty: none, or a config given)

    @property
    def config(self) -> Any:
        """The concrete config the kernel was compiled from (rebuilt on demand: a record holds only its text)."""
        base = _base_config(self.key, self.fp8)
        if self.key != DEFAULT:
            return base.resolved((self.m, self.n, self.k), self.sms)
        return default_config(base, (self.m, self.n, self.k), self.sms, self.tables)[0]


_PREPARED: dict[tuple, Prepared] = {}


def forget_defaults() -> None:
    """Forget which config each shape runs by default (``ts_explore.tune`` calls this after writing a table; a
    table another process wrote is seen by a process that calls this, or by the next process)."""
    for lookup in [k for k in _PREPARED if k[-1] == DEFAULT]:
        del _PREPARED[lookup]


def _record(m: int, n: int, k: int, fp8: bool, key: str, index: int, tables: str) -> tuple[str, int]:
    sms, cc = device_key(index)
    chosen = f"{key} tuning {tables}" if tables else key  # a record answers only for the tables that chose it
    return record_name("gemm", chosen, (m, n, k), "fp8" if fp8 else "bf16", sms, cc), sms


def prepare(a: torch.Tensor, b: torch.Tensor, key: str = DEFAULT, scale_a: Any = None,
            scale_b: Any = None) -> Prepared:
    """Check, then take a launch record of an earlier process, else prove (once per shape class) and load or
    compile, for the shapes of ``a`` and ``b``."""
    explain_gemm(a, b)
    fp8 = a.dtype is _FP8
    explain_scales(fp8, scale_a, scale_b)
    (m, k), n = a.shape, b.shape[1]
    index = a.get_device()
    tables = tables_digest() if key == DEFAULT else ""
    name, sms = _record(m, n, k, fp8, key, index, tables)
    found = INDEX.get(name) if key == DEFAULT else None  # a config object's key is this process's own
    if found is not None:
        fn = load_shared(Path(found["library"]), found["symbol"])
        return Prepared(fn, key, m, n, k, tuple(found["grid"]), (m, n), fp8, index, sms, True, tables)
    from ..kernels import gemm as kernel
    from . import compiled
    from .device import arch, limits, require_launchable

    limits_ = limits(index)
    base = _base_config(key, fp8)
    cfg = (default_config(base, (m, n, k), limits_.sms, tables)[0] if key == DEFAULT
           else base.resolved((m, n, k), limits_.sms))
    require_launchable("hopper_gemm", cfg, index)
    gate().admit(cfg, (m, n, k), limits_)
    loaded = compiled.gemm_function(cfg, arch(limits_))
    grid = tuple(kernel.grid(cfg, (m, n, k), limits_.sms))
    library = shared_library(loaded.path)
    if key == DEFAULT and library.exists():
        INDEX.put(name, {"library": str(library), "symbol": loaded.path.stem, "grid": grid, "config": repr(cfg)})
    return Prepared(loaded.function, key, m, n, k, grid, (m, n), fp8, index, limits_.sms, False, tables)


def _refuse(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None, p: Prepared, cause: Exception) -> None:
    """Raise the message naming why TVM-FFI refused these tensors (it checks them against the compiled placeholders)."""
    explain_gemm(a, b, out)
    raise OpsError(f"the tensors do not fit the {p.m}x{p.n}x{p.k} GEMM prepared for their shapes: a must be "
                   "contiguous, b column-major, out contiguous bf16, all 16-byte aligned on one GPU "
                   f"(the kernel's check said: {cause})") from cause


def run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None, key: str, scale_a: Any = None,
        scale_b: Any = None) -> torch.Tensor:
    """The op's implementation: C = a @ b on the current stream (into ``out`` when given).

    The tensors go to the compiled function as they are: TVM-FFI checks their dtype, device, shapes, strides and
    alignment against the placeholders the kernel was compiled with, in C, and launches on torch's current stream.
    """
    lookup = (a.shape, b.shape, a.dtype, a.get_device(), key)  # b's dtype: TVM-FFI checks it
    p = _PREPARED.get(lookup)
    if p is None:
        p = _PREPARED[lookup] = prepare(a, b, key, scale_a, scale_b)
    if out is None:  # new_empty: the cheapest allocation measured on an H200 host (2.2 µs; torch.empty 3.0)
        out = a.new_empty(p.out_shape, dtype=_BF16) if p.fp8 else a.new_empty(p.out_shape)
    gx, gy, gz = p.grid
    try:
        if p.fp8:
            if scale_a is None or scale_b is None:
                explain_scales(True, scale_a, scale_b)
            p.fn(a, b, out, float(scale_a), float(scale_b), gx, gy, gz)
        else:
            if scale_a is not None or scale_b is not None:
                explain_scales(False, scale_a, scale_b)
            p.fn(a, b, out, gx, gy, gz)
    except OpsError:
        raise
    except Exception as cause:  # TVM-FFI's refusal (ValueError, TypeError, ...): name the tensor and the fix
        _refuse(a, b, out, p, cause)
    return out


def gemm(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None, config: Any = None,
         scale_a: float | None = None, scale_b: float | None = None) -> torch.Tensor:
    """``a @ b`` with the TS GEMM: ``a`` (M, K) row-major, ``b`` (K, N) column-major (``w.t()``), bf16 out.

    float8_e4m3fn operands need ``scale_a`` and ``scale_b`` (floats; a
    1-element tensor is read with ``.item()``, which waits for the GPU and so
    cannot be captured in a CUDA graph). ``config``: a hopper_gemm config
    (default: the tile picked by shape). Wrong dtype, device, layout or shape
    raises :class:`~ts_explore.ops.OpsError` naming it.
    """
    key = DEFAULT if config is None else config_key(config)
    if direct(a, b) and (out is None or type(out) is torch.Tensor):
        return run(a, b, out, key, scale_a, scale_b)
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise OpsError(f"gemm takes torch tensors, got {type(a).__name__} and {type(b).__name__}")
    sa = None if scale_a is None else float(scale_a)
    sb = None if scale_b is None else float(scale_b)
    if out is None:
        return torch.ops.ts_explore.gemm(a, b, sa, sb, key)
    torch.ops.ts_explore.gemm_out(a, b, out, sa, sb, key)
    return out


NO_BACKWARD = ("ts_explore.ops.gemm has no backward (it is not built yet): it is a forward-only kernel; for "
               "training use torch.matmul, or call gemm on tensors that do not require grad (torch.no_grad(), "
               "x.detach())")


@torch.library.custom_op("ts_explore::gemm", mutates_args=())
def gemm_op(a: torch.Tensor, b: torch.Tensor, scale_a: Optional[float], scale_b: Optional[float],
            config: str) -> torch.Tensor:
    """C = a @ b (see :func:`gemm`)."""
    return run(a, b, None, config, scale_a, scale_b)


@gemm_op.register_fake
def _gemm_fake(a: torch.Tensor, b: torch.Tensor, scale_a: Optional[float], scale_b: Optional[float],
               config: str) -> torch.Tensor:
    explain_gemm(a, b, pointers=False)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=_BF16)


@torch.library.custom_op("ts_explore::gemm_out", mutates_args=("out",))
def gemm_out_op(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scale_a: Optional[float],
                scale_b: Optional[float], config: str) -> None:
    """out = a @ b (see :func:`gemm`)."""
    run(a, b, out, config, scale_a, scale_b)


@gemm_out_op.register_fake
def _gemm_out_fake(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, scale_a: Optional[float],
                   scale_b: Optional[float], config: str) -> None:
    explain_gemm(a, b, out, pointers=False)


def _no_backward(ctx: Any, *grads: Any) -> Any:
    raise NotImplementedError(NO_BACKWARD)


def _no_context(ctx: Any, inputs: Any, output: Any) -> None:
    return None


gemm_op.register_autograd(_no_backward, setup_context=_no_context)  # torch takes no formula for the out= op


def prepared(a: torch.Tensor, b: torch.Tensor, config: Any = None) -> Prepared:
    """The kernel a call on these shapes runs (proven and loaded now if new): its config, grid and function."""
    key = config_key(config)
    lookup = (a.shape, b.shape, a.dtype, a.get_device(), key)
    if lookup not in _PREPARED:
        _PREPARED[lookup] = prepare(a, b, key, 1.0 if a.dtype is _FP8 else None, 1.0 if a.dtype is _FP8 else None)
    return _PREPARED[lookup]


__all__ = ["NO_BACKWARD", "Prepared", "config_key", "forget_defaults", "gate", "gemm", "gemm_op", "gemm_out_op",
           "prepared", "run"]
