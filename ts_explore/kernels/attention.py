"""The Hopper attention forward kernel: compile once per config, run any (batch, heads, seqlen_q, seqlen_kv).

``compile(scenario, cfg)`` traces the scenario's own ``build`` inside
``@cute.kernel`` (the launched task set is the drawn one) and returns a
function of raw pointers and sizes::

    fn(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, batch, heads, seqlen_q, seqlen_kv, grid_x, grid_y, grid_z, stream)

Q, K, V and O are bf16 ``(batch, seqlen, heads, head_dim)``, contiguous; the
kernel views each as ``(seqlen, head_dim, heads, batch)`` so one TMA atom over
a ``(rows, head_dim)`` tile serves every head and batch (V as ``(head_dim,
seqlen, ...)``, the MN-major operand of the P·V GEMM). TMA zero-fills rows
past either seqlen; the softmax masks keys past ``seqlen_kv`` (and, causal,
past each row's bottom-right-aligned diagonal); the epilogue stores only rows
before ``seqlen_q``. LSE is fp32 ``(batch, heads, seqlen_q)``. The softmax
scale is 1/sqrt(head_dim). A work tile is ``(head, batch, z)`` with ``z`` the Q tile
(causal: the last Q tile first, so the longest tiles start first; causal under
static persistence every other wave of the grid walks that order backwards,
:func:`~.attention_geometry.snake`, so the CTAs' totals come out nearly equal).
"""

# No ``from __future__ import annotations`` here: the DSL reads kernel annotations as objects.

from typing import Any, Callable

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.nvgpu import cpasync

from ..model.plan import DeviceLimits, Instance, LaunchPlan
from .attention_geometry import HEAD_DIMS, Persistence, cta_walk, flops, kv_blocks, l2_group, q_tiles
from .attention_reference import (
    SDPA_BACKENDS, error_map, make_inputs, mismatches, reference, sdpa_references, visible,
)
from .attention_tiles import IN_DTYPE, MAX_SEQLEN, WG_ROWS, smem_layouts
from .build import compile_options, default_stream, gmem_ptr
from .common import kernel_context, run_built
from .host import DeviceProblem, SizeError
from .trace import address, recorder_for

Shape = tuple  # (batch, heads, seqlen_q, seqlen_kv, head_dim)
DEFAULT_SIZES = ((4, 16, 2048, 2048, 128),)  # what launch() runs when given no sizes
H200_DENSE_BF16_TFLOPS = 989.0  # vendor datasheet, dense (no sparsity)


def features(cfg: Any) -> frozenset:
    """Hardware features this config's kernel uses (:data:`ts_explore.gpu.safety.FEATURES`)."""
    return frozenset({"wgmma"})


def launch_refusal(cfg: Any, arch: Any = "sm_90a") -> Any:
    """Why ``cfg`` must not be launched (None: it may). The CPU view records and verifies anyway."""

    if cfg.tile_q // cfg.consumer_wgs != WG_ROWS:
        return (f"a consumer warpgroup owning {cfg.tile_q // cfg.consumer_wgs} rows (two WGMMA row blocks) is not "
                f"built: the kernel gives each consumer warpgroup 64 rows; use tile_q={WG_ROWS * cfg.consumer_wgs}")
    if cfg.persistence is Persistence.STATIC and cfg.causal:
        return ("causal attention under static persistence is not launched: a CTA's walk mixes Q tiles of different "
                "K/V loop lengths, which the proof does not cover (INCONCLUSIVE), and on an H200 walks with tiles that "
                "see no key after longer ones came out wrong; use persistence='none' with causal (the CPU view "
                "records and verifies the persistent schedule)")
    return None


def grid(cfg: Any, shape: Shape, sms: int) -> tuple:
    """The CUDA grid: one CTA per (head, batch, Q tile) (Q tiles slowest), or (static persistence) one per SM."""

    b, h, sq, _, _ = shape
    tiles_q = q_tiles(sq, cfg.tile_q)
    if cfg.persistence is Persistence.STATIC:
        return (1, 1, min(sms, h * b * tiles_q))
    return (h, b, tiles_q)


def compile(scenario: Any, cfg: Any, *, arch: Any = None, on_built: Any = None, trace: Any = None) -> Any:
    """Trace ``scenario.build(cfg, ...)`` inside the kernel and compile it (no GPU needed for sm_90a).

    With a ``trace`` spec the kernel is instrumented (:mod:`ts_explore.kernels.trace`) and the compiled
    function takes the ``events, progress`` buffer addresses after the stream.
    """
    scenario.check(cfg)
    refusal = launch_refusal(cfg, arch)
    if refusal is not None:
        raise ValueError(refusal)
    host = host_function(scenario, cfg, on_built, trace)
    args = [gmem_ptr(0, IN_DTYPE)] * 4 + [gmem_ptr(0, cutlass.Float32)]
    args += [cutlass.Int32(128)] * 7
    args.append(default_stream())
    if trace is not None:
        args += [cutlass.Int64(0), cutlass.Int64(0)]
    return cute.compile(host, *args, options=compile_options(arch))


def host_function(scenario: Any, cfg: Any, on_built: Any = None, trace: Any = None) -> Any:
    """The ``@cute.jit`` host function: the 4-mode views, TMA descriptors, then the kernel launch."""

    geo = cfg.geometry()
    hd = cfg.head_dim
    threads = 128 * (1 + cfg.consumer_wgs)

    @cute.kernel
    def kernel(tma_q: cute.CopyAtom, g_q: cute.Tensor, tma_k: cute.CopyAtom, g_k: cute.Tensor,
               tma_v: cute.CopyAtom, g_v: cute.Tensor, g_o: cute.Tensor, tma_o: cute.CopyAtom, g_o_tma: cute.Tensor,
               g_lse: cute.Tensor, seqlen_q: cutlass.Int32, seqlen_kv: cutlass.Int32, heads: cutlass.Int32,
               batch: cutlass.Int32, tiles_q: cutlass.Int32, grid_z: cutlass.Int32, group: cutlass.Int32, sched: Any,
               events: cutlass.Int64, progress: cutlass.Int64) -> None:
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == 0:
            cpasync.prefetch_descriptor(tma_q)
            cpasync.prefetch_descriptor(tma_k)
            cpasync.prefetch_descriptor(tma_v)
        ctx = kernel_context({"tma_q": tma_q, "g_q": g_q, "tma_k": tma_k, "g_k": g_k, "tma_v": tma_v, "g_v": g_v,
                              "g_o": g_o, "tma_o": tma_o, "g_o_tma": g_o_tma, "g_lse": g_lse},
                             {"seqlen_q": seqlen_q, "seqlen_kv": seqlen_kv, "scheduler_params": sched,
                              "work_order": (heads, batch, tiles_q, grid_z, group)})
        run_built(scenario.build(cfg, ctx), on_built, recorder_for(trace, events, progress, every_lane=True))

    @cute.jit
    def host(q_ptr: cute.Pointer, k_ptr: cute.Pointer, v_ptr: cute.Pointer, o_ptr: cute.Pointer,
             lse_ptr: cute.Pointer, batch: cutlass.Int32, heads: cutlass.Int32, seqlen_q: cutlass.Int32,
             seqlen_kv: cutlass.Int32, grid_x: cutlass.Int32, grid_y: cutlass.Int32, grid_z: cutlass.Int32,
             stream: cuda.CUstream, events: Any = None, progress: Any = None) -> None:
        row = cute.assume(heads * hd, divby=hd)  # elements between consecutive tokens
        q_batch = cute.assume(seqlen_q * heads * hd, divby=hd)
        kv_batch = cute.assume(seqlen_kv * heads * hd, divby=hd)
        q = cute.make_tensor(q_ptr, cute.make_layout((seqlen_q, hd, heads, batch), stride=(row, 1, hd, q_batch)))
        o = cute.make_tensor(o_ptr, cute.make_layout((seqlen_q, hd, heads, batch), stride=(row, 1, hd, q_batch)))
        k = cute.make_tensor(k_ptr, cute.make_layout((seqlen_kv, hd, heads, batch), stride=(row, 1, hd, kv_batch)))
        v = cute.make_tensor(v_ptr, cute.make_layout((hd, seqlen_kv, heads, batch), stride=(1, row, hd, kv_batch)))
        lse = cute.make_tensor(lse_ptr, cute.make_layout((seqlen_q, heads, batch),
                                                         stride=(1, seqlen_q, seqlen_q * heads)))
        q_layout, k_layout, v_layout = smem_layouts(geo)
        load = cpasync.CopyBulkTensorTileG2SOp()
        tma_q, g_q = cpasync.make_tiled_tma_atom(load, q, cute.slice_(q_layout, (None, None, 0)), (WG_ROWS, hd))
        tma_k, g_k = cpasync.make_tiled_tma_atom(load, k, cute.slice_(k_layout, (None, None, 0)), (cfg.tile_k, hd))
        tma_v, g_v = cpasync.make_tiled_tma_atom(load, v, cute.slice_(v_layout, (None, None, 0)), (hd, cfg.tile_k))
        # O leaves as Q came in: 64 rows x head_dim per consumer, the same swizzled layout (the TMA-store epilogue)
        tma_o, g_o_tma = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), o,
                                                     cute.slice_(q_layout, (None, None, 0)), (WG_ROWS, hd))
        tiles_q = (seqlen_q + cfg.tile_q - 1) // cfg.tile_q
        sched = utils.PersistentTileSchedulerParams((heads, batch, tiles_q), (1, 1, 1))
        group = l2_group(seqlen_kv, hd, cutlass.max)
        kernel(tma_q, g_q, tma_k, g_k, tma_v, g_v, o, tma_o, g_o_tma, lse, seqlen_q, seqlen_kv, heads, batch, tiles_q,
               grid_z, group, sched, address(events), address(progress)).launch(
            grid=(grid_x, grid_y, grid_z), block=(threads, 1, 1), stream=stream, min_blocks_per_mp=1)

    return host


# ---- the launch plan and the problem the launch worker runs -------------------------------------------------


def problem_shape(cfg: Any, size: Any) -> tuple:
    """``size`` as ``(batch, heads, seqlen_q, seqlen_kv, head_dim)``; SizeError naming the fix otherwise."""
    try:
        shape = tuple(int(v) for v in size)
    except TypeError:
        raise SizeError(f"an attention size is (batch, heads, seqlen_q, seqlen_kv, head_dim), got {size!r}; pass "
                        "e.g. sizes=[(4, 16, 2048, 2048, 128)]") from None
    if len(shape) != 5 or min(shape) < 1:
        raise SizeError(f"an attention size is five positive ints (batch, heads, seqlen_q, seqlen_kv, head_dim), "
                        f"got {size!r}")
    b, h, sq, skv, d = shape
    if d not in HEAD_DIMS:
        raise SizeError(f"head_dim {d} is not laid out: the kernel is built for head_dim "
                        f"{' and '.join(map(str, HEAD_DIMS))}; use one of them")
    if d != cfg.head_dim:
        raise SizeError(f"size has head_dim {d} but the config was compiled for head_dim {cfg.head_dim}; pass "
                        f"head_dim={d} with the config, or a size with head_dim {cfg.head_dim}")
    if max(sq, skv) > MAX_SEQLEN or b * h * max(sq, skv) * d >= 2**31:
        raise SizeError(f"{size!r} has more than 2^31 elements per tensor (or a seqlen over {MAX_SEQLEN}); the "
                        "kernel indexes with 32-bit integers: split the batch")
    return shape


def plan(cfg: Any, size: Any, limits: DeviceLimits, registers: Any = None) -> LaunchPlan:
    """One CTA per (head, batch, Q tile) (or a static persistent walk); the causal mask groups Q tiles by
    the K/V blocks they visit."""

    shape = problem_shape(cfg, size)
    b, h, sq, skv, d = shape
    gx, gy, gz = grid(cfg, shape, limits.sms)
    ctas = gx * gy * gz
    tiles_q = q_tiles(sq, cfg.tile_q)
    per_q_tile = h * b  # CTAs (work tiles) of one Q tile index: consecutive in the grid's linear order

    def extra(n: int) -> dict:
        return {"kv_blocks": n, "seqlen_q": sq, "seqlen_kv": skv}

    if cfg.persistence is Persistence.STATIC:
        instances = persistent_instances(cfg, shape, ctas, extra)
    else:
        groups: list = []  # (first Q tile, last Q tile, K/V blocks)
        for m in range(tiles_q):
            n = kv_blocks(sq, skv, cfg.tile_q, cfg.tile_k, m, cfg.causal)
            if groups and groups[-1][2] == n:
                groups[-1][1] = m
            else:
                groups.append([m, m, n])
        def zs(first: int, last: int) -> range:  # grid z of Q tiles first..last (causal: reversed, longest first)
            if not cfg.causal:
                return range(first, last + 1)
            return range(tiles_q - 1 - last, tiles_q - first)

        instances = tuple(
            Instance(ctas=(range(zs(first, last).start * per_q_tile, zs(first, last).stop * per_q_tile),),
                     view={"block": zs(first, last).start * per_q_tile, "grid": ctas, "extra": extra(n)},
                     work=(f"Q tile{'s' if last > first else ''} {first}{f'-{last}' if last > first else ''}: "
                           + (f"{n} K/V block{'s' if n != 1 else ''}" if n else
                              "no key visible (0 K/V blocks: O = 0, LSE = -inf)")),
                     iterations=n if n else None)
            for first, last, n in groups)
    mask = "causal (bottom-right aligned)" if cfg.causal else "non-causal"
    assumptions = (f"Q[{b}, {sq}, {h}, {d}] against K/V[{b}, {skv}, {h}, {d}], {mask}, scale 1/sqrt({d}): "
                   f"{tiles_q} Q tiles of {cfg.tile_q} rows x {h * b} heads·batches, K/V blocks of {cfg.tile_k}",)
    if cfg.persistence is Persistence.STATIC:
        most, fewest = makespan(cfg, shape, limits.sms)
        order = "tiles longest first, every other wave backwards" if cfg.causal else "one grid's stride apart"
        assumptions += (f"static persistence, {order}: a CTA walks {fewest}-{most} K/V blocks in all",)
    return LaunchPlan(kernel=__name__, size=shape, grid=(gx, gy, gz), threads=128 * (1 + cfg.consumer_wgs),
                      smem_bytes=cfg.geometry().smem_bytes, device=limits, instances=instances, registers=registers,
                      work_units="(batch, heads, seqlen_q, seqlen_kv, head_dim)", assumptions=assumptions)


def persistent_instances(cfg: Any, shape: Shape, ctas: int, extra: Callable[[int], dict]) -> tuple:
    """The CTAs of a static persistent grid grouped by their walk: the K/V blocks of each tile, in order.

    Non-causal every tile has one length, so the groups are the CTAs with one
    tile more and the rest. Causal, the tiles come longest first and each CTA's
    walk mixes lengths once there is more than one wave; the view names the
    walk, so the CPU build records exactly it and the verdict says whether a
    search covers it (tiles of one length: every number of them).
    """
    b, h, sq, skv, _ = shape
    walks: dict[tuple, list] = {}
    for c in range(ctas):
        walk = cta_walk(sq, skv, cfg.tile_q, cfg.tile_k, h * b, cfg.causal, ctas, c)
        spans = walks.setdefault(walk, [])
        if spans and spans[-1].stop == c:
            spans[-1] = range(spans[-1].start, c + 1)
        else:
            spans.append(range(c, c + 1))
    out = []
    for walk, spans in walks.items():
        lengths = sorted(set(walk), reverse=True)
        tiles = f"{len(walk)} tile{'s' if len(walk) != 1 else ''}"
        if len(lengths) == 1:
            work = f"{tiles}, {lengths[0]} K/V block{'s' if lengths[0] != 1 else ''} each"
        else:
            shown = ", ".join(map(str, walk[:8])) + (", ..." if len(walk) > 8 else "")
            work = (f"{tiles} of {shown} K/V blocks ({sum(walk)} in all; tiles of different lengths, which no "
                    "search covers)")
        out.append(Instance(ctas=tuple(spans), view={"block": spans[0].start, "grid": ctas,
                                                    "extra": {**extra(walk[0]), "walk": walk}},
                            work=work, iterations=len(walk)))
    return tuple(out)


def makespan(cfg: Any, shape: Shape, sms: int) -> tuple:
    """(the most, the fewest) K/V blocks one CTA of the grid walks: how evenly the tiles spread over the CTAs."""
    b, h, sq, skv, _ = shape
    _, _, gz = grid(cfg, shape, sms)
    if cfg.persistence is not Persistence.STATIC:
        per = [kv_blocks(sq, skv, cfg.tile_q, cfg.tile_k, m, cfg.causal) for m in range(q_tiles(sq, cfg.tile_q))]
        return max(per), min(per)
    totals = [sum(cta_walk(sq, skv, cfg.tile_q, cfg.tile_k, h * b, cfg.causal, gz, c)) for c in range(gz)]
    return max(totals), min(totals)


def device_problem(fn: Any, cfg: Any, plan: LaunchPlan, stream: Any) -> DeviceProblem:
    """Random-normal bf16 Q, K, V on the GPU; O checked against torch SDPA in fp32, LSE against float64; every
    torch SDPA backend present timed beside on the same tensors."""
    import torch

    b, h, sq, skv, d = plan.size
    q, k, v = make_inputs(plan.size)
    o = torch.empty((b, sq, h, d), device="cuda", dtype=torch.bfloat16)
    lse = torch.empty((b, h, sq), device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    args = kernel_args(q, k, v, o, lse, cfg, plan.device.sms, stream)

    def check() -> tuple:
        from cuda.bindings import driver as cu

        cu.cuStreamSynchronize(stream)
        ref_o, ref_lse = reference(q, k, v, cfg.causal)
        bad_o, bad_lse = mismatches(o, lse, ref_o, ref_lse)
        wrong = int(bad_o.sum()) + int(bad_lse.sum())
        first: tuple = ()
        if wrong:
            idx = torch.nonzero(bad_o.reshape(-1))[:8, 0].tolist()
            got, want = o.float().reshape(-1), ref_o.reshape(-1)
            first = tuple((i, float(want[i]), float(got[i])) for i in idx)
            if not first:
                idx = torch.nonzero(bad_lse.reshape(-1))[:8, 0].tolist()
                first = tuple((i, float(ref_lse.reshape(-1)[i]), float(lse.reshape(-1)[i])) for i in idx)
        heat = error_map(bad_o, bad_lse, cfg.tile_q) if wrong else None
        return wrong, o.numel() + lse.numel(), first, heat

    return DeviceProblem(launch=lambda: fn(*args), check=check, references=sdpa_references(q, k, v, cfg.causal),
                         flops=flops(b, h, sq, skv, d, cfg.causal),
                         bytes_moved=2 * (q.numel() + k.numel() + v.numel() + o.numel()) + 4 * lse.numel(),
                         elements=o.numel(), grid=plan.ctas, shape=f"b{b} h{h} sq{sq} skv{skv} d{d}"
                         + (" causal" if cfg.causal else ""), output="O", args=tuple(args),
                         outputs=lambda: {"O": o.float().cpu().numpy(), "LSE": lse.cpu().numpy()})


# ---- the compiled kernel's arguments on torch tensors ------------------------------------------------------


def kernel_args(q: Any, k: Any, v: Any, o: Any, lse: Any, cfg: Any, sms: int, stream: Any = None) -> list:
    """The compiled kernel's arguments for torch tensors (checked here), the stream last."""
    import torch

    b, sq, h, d = q.shape
    skv = k.shape[1]
    shape = problem_shape(cfg, (b, h, sq, skv, d))
    want = {"Q": (b, sq, h, d), "K": (b, skv, h, d), "V": (b, skv, h, d), "O": (b, sq, h, d)}
    for name, t in (("Q", q), ("K", k), ("V", v), ("O", o)):
        if tuple(t.shape) != want[name]:
            raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {want[name]} (batch, seqlen, heads, "
                             "head_dim)")
        if t.dtype != torch.bfloat16 or not t.is_contiguous() or t.data_ptr() % 16:
            raise ValueError(f"{name} must be a contiguous, 16-byte aligned bf16 CUDA tensor; got {t.dtype}, "
                             f"contiguous={t.is_contiguous()}")
    if tuple(lse.shape) != (b, h, sq) or lse.dtype != torch.float32 or not lse.is_contiguous():
        raise ValueError(f"LSE must be a contiguous fp32 tensor of shape {(b, h, sq)}; got {tuple(lse.shape)} "
                         f"{lse.dtype}")
    gx, gy, gz = grid(cfg, shape, sms)
    if stream is None:
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
    return [gmem_ptr(q.data_ptr(), IN_DTYPE), gmem_ptr(k.data_ptr(), IN_DTYPE), gmem_ptr(v.data_ptr(), IN_DTYPE),
            gmem_ptr(o.data_ptr(), IN_DTYPE), gmem_ptr(lse.data_ptr(), cutlass.Float32),
            *(cutlass.Int32(x) for x in (b, h, sq, skv, gx, gy, gz)), stream]


def launcher(fn: Any, q: Any, k: Any, v: Any, o: Any, lse: Any, cfg: Any, sms: int,
             stream: Any = None) -> Callable[[], None]:
    """A zero-argument launch of a compiled attention kernel on torch tensors (checked once, here)."""
    args = kernel_args(q, k, v, o, lse, cfg, sms, stream)
    return lambda: fn(*args)


__all__ = ["DEFAULT_SIZES", "H200_DENSE_BF16_TFLOPS", "SDPA_BACKENDS", "compile", "device_problem", "error_map",
           "features", "grid", "host_function", "kernel_args", "launch_refusal", "launcher", "make_inputs",
           "makespan", "mismatches", "persistent_instances", "plan", "problem_shape", "reference", "sdpa_references",
           "visible"]
