"""On an sm_90 GPU: ``ts_explore.ops`` gives the right numbers as torch ops, eagerly, in CUDA graphs, under
``torch.compile(fullgraph=True)`` and ``torch.library.opcheck``, refuses bad tensors with one clear message,
proves each shape class once, and a new process calling a cached shape class starts within 2 s."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tvm_ffi")

from ts_explore import ops  # noqa: E402
from ts_explore.kernels import attention as attention_kernel  # noqa: E402
from ts_explore.kernels import gemm as gemm_kernel  # noqa: E402
from ts_explore.ops import OpsError, attention_op  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GEMM_SHAPES = [(1000, 1032, 520), (256, 512, 4096), (1, 8, 8), (4096, 4096, 4096), (777, 3080, 136)]


def operands(m: int, n: int, k: int, seed: int = 0) -> tuple:
    """A (M, K) row-major and B = W.t() for W (N, K): B is (K, N) column-major, as ``gemm`` takes it."""
    a, w = gemm_kernel.make_inputs((m, n, k), seed)
    return a, w, w.t()


def assert_gemm_close(c: torch.Tensor, a: torch.Tensor, w: torch.Tensor) -> None:
    ref = gemm_kernel.reference(a, w)
    bad = ~gemm_kernel.close(c, ref, a.shape[1])
    assert int(bad.sum()) == 0, f"{int(bad.sum())} of {c.numel()} elements off; max error " \
                                f"{float((c.float() - ref).abs().max()):.3g}"


@pytest.mark.parametrize("shape", GEMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_matches_an_fp32_product(shape: tuple[int, int, int]) -> None:
    a, w, b = operands(*shape)
    c = ops.gemm(a, b)
    assert c.shape == (shape[0], shape[1]) and c.dtype == torch.bfloat16
    assert_gemm_close(c, a, w)


def test_gemm_writes_into_out_and_runs_on_the_current_stream() -> None:
    """On a side stream, A is written only after a 50 ms sleep: a launch on any other stream would read the zeros."""
    a, w, b = operands(1000, 1032, 520, seed=1)
    late = torch.zeros_like(a)
    out = torch.full((1000, 1032), float("nan"), device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # about 50 ms of GPU cycles
        late.copy_(a)
        got = ops.gemm(late, b, out=out)
    side.synchronize()
    assert got is out
    assert_gemm_close(out, a, w)


def test_attention_runs_on_the_current_stream() -> None:
    q, k, v = attention_kernel.make_inputs((1, 4, 256, 256, 128))
    late = torch.zeros_like(q)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        late.copy_(q)
        o = ops.attention(late, k, v)
    side.synchronize()
    want = ops.attention(q, k, v)
    torch.cuda.synchronize()
    assert torch.equal(o, want)


def test_gemm_fp8_with_scales() -> None:
    from ts_explore.kernels.gemm_geometry import DType

    m, n, k = 1000, 1032, 528
    f8 = gemm_kernel.make_inputs((m, n, k), dtype=DType.FP8)
    c = ops.gemm(f8.a, f8.b.t(), scale_a=float(f8.scale_a), scale_b=float(f8.scale_b))
    ref = gemm_kernel.reference(f8.a, f8.b, f8.scale_a, f8.scale_b)
    bad = ~gemm_kernel.close(c, ref, k, DType.FP8)
    assert int(bad.sum()) == 0
    with pytest.raises(OpsError, match="scale_a and scale_b"):
        ops.gemm(f8.a, f8.b.t())


@pytest.mark.parametrize(("make", "cause"), [
    (lambda a, b: (a.half(), b), "torch.float16"),
    (lambda a, b: (a.cpu(), b), "is on cpu"),
    (lambda a, b: (a, b.contiguous()), "column-major"),
    (lambda a, b: (a[:, :512], b), "a's columns must equal b's rows"),
    (lambda a, b: (a.t(), b), "dimensions|columns|row-major"),
    (lambda a, b: (a, b[:, :1030]), "N=1030 is not a multiple of 8"),
    (lambda a, b: (a[None], b), "3 dimensions"),
])
def test_gemm_refuses_bad_tensors_naming_the_cause(make, cause: str) -> None:
    a, _, b = operands(1000, 1032, 520)
    x, y = make(a, b)
    with pytest.raises(OpsError, match=cause):
        ops.gemm(x, y)


def test_gemm_refuses_a_wrong_out() -> None:
    a, _, b = operands(256, 512, 256)
    with pytest.raises(OpsError, match="out must be a contiguous 256x512"):
        ops.gemm(a, b, out=torch.empty((256, 256), device="cuda", dtype=torch.bfloat16))


ATTENTION_SHAPES = [(2, 8, 1024, 1024, 128), (1, 3, 777, 1000, 64), (2, 4, 129, 513, 128)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", ATTENTION_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_attention_matches_sdpa_and_lse(shape: tuple, causal: bool) -> None:
    q, k, v = attention_kernel.make_inputs(shape, seed=2)
    o, lse = ops.attention(q, k, v, causal=causal, return_lse=True)
    ref_o, ref_lse = attention_kernel.reference(q, k, v, causal)
    bad_o, bad_lse = attention_kernel.mismatches(o, lse, ref_o, ref_lse)
    assert int(bad_o.sum()) == 0 and int(bad_lse.sum()) == 0
    alone = ops.attention(q, k, v, causal=causal)
    assert torch.equal(alone, o)


@pytest.mark.parametrize(("shape", "causal", "wgs"), [((1, 3, 2100, 1000, 64), False, 3),
                                                    ((1, 2, 4101, 4101, 64), True, 3),
                                                    ((1, 2, 2049, 2049, 64), True, 2)])
def test_attention_at_head_dim_64_runs_the_tile_the_op_picks(shape: tuple, causal: bool, wgs: int) -> None:
    q, k, v = attention_kernel.make_inputs(shape, seed=3)
    o, lse = ops.attention(q, k, v, causal=causal, return_lse=True)
    used = attention_op.prepared(q, k, v, causal=causal).config
    assert (used.consumer_wgs, used.tile_q) == (wgs, 64 * wgs)
    bad_o, bad_lse = attention_kernel.mismatches(o, lse, *attention_kernel.reference(q, k, v, causal))
    assert int(bad_o.sum()) == 0 and int(bad_lse.sum()) == 0


def test_attention_refuses_a_causal_shape_the_gate_cannot_prove() -> None:
    # seqlen_q > seqlen_kv, causal: the first Q tiles see no key and run no K/V loop, an instance the verifier
    # reports as doing no work rather than proving; the op refuses it rather than launching it unproven
    q, k, v = attention_kernel.make_inputs((1, 3, 1000, 777, 64))
    with pytest.raises(OpsError, match="not proven safe.*no key visible"):
        ops.attention(q, k, v, causal=True)
    assert ops.attention(q, k, v).shape == q.shape  # not causal: every Q tile sees every key


@pytest.mark.parametrize(("make", "cause"), [
    (lambda q, k, v: (q.float(), k, v), "torch.float32"),
    (lambda q, k, v: (q.transpose(1, 2), k, v), "shape|contiguous"),
    (lambda q, k, v: (q[..., :32].contiguous(), k[..., :32].contiguous(), v[..., :32].contiguous()), "head_dim 32"),
    (lambda q, k, v: (q, k[:, :, :2].contiguous(), v), "k has shape"),
    (lambda q, k, v: (q, k.cpu(), v), "is on cpu"),
])
def test_attention_refuses_bad_tensors_naming_the_cause(make, cause: str) -> None:
    q, k, v = attention_kernel.make_inputs((1, 4, 256, 256, 128))
    with pytest.raises(OpsError, match=cause):
        ops.attention(*make(q, k, v))


def test_both_run_inside_a_cuda_graph() -> None:
    a, w, b = operands(1000, 1032, 520, seed=3)
    q, k, v = attention_kernel.make_inputs((2, 4, 512, 512, 128), seed=3)
    ops.gemm(a, b), ops.attention(q, k, v, causal=True)  # warm: prove, load, first launch outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = ops.gemm(a, b)
        o = ops.attention(q, k, v, causal=True)
    a.copy_(gemm_kernel.make_inputs((1000, 1032, 520), seed=4)[0])
    graph.replay()
    torch.cuda.synchronize()
    assert_gemm_close(c, a, w)
    ref_o, _ = attention_kernel.reference(q, k, v, True)
    assert torch.allclose(o.float(), ref_o, atol=4e-3, rtol=2**-7)


def test_torch_compile_fullgraph() -> None:
    a, w, b = operands(512, 1024, 256, seed=5)
    q, k, v = attention_kernel.make_inputs((1, 4, 256, 256, 64), seed=5)

    def block(x: torch.Tensor, wt: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple:
        y = ops.gemm(x, wt)
        return torch.relu(y), ops.attention(q, k, v, causal=True) * 2

    compiled = torch.compile(block, fullgraph=True)
    y, o = compiled(a, b, q, k, v)
    torch.cuda.synchronize()
    assert torch.equal(y, torch.relu(ops.gemm(a, b)))
    assert torch.equal(o, ops.attention(q, k, v, causal=True) * 2)


def test_opcheck_passes_for_every_op() -> None:
    a, _, b = operands(256, 512, 256)
    q, k, v = attention_kernel.make_inputs((1, 2, 128, 256, 64))
    cases = [
        (torch.ops.ts_explore.gemm.default, (a, b, None, None, "default")),
        (torch.ops.ts_explore.gemm_out.default,
         (a, b, torch.empty((256, 512), device="cuda", dtype=torch.bfloat16), None, None, "default")),
        (torch.ops.ts_explore.attention.default, (q, k, v, False)),
        (torch.ops.ts_explore.attention.default, (q, k, v, True)),
        (torch.ops.ts_explore.attention_out.default, (q, k, v, torch.empty_like(q), False)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args)


def test_backward_says_it_is_not_built() -> None:
    a, _, b = operands(256, 512, 256)
    a.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="has no backward"):
        ops.gemm(a, b).float().sum().backward()
    q, k, v = attention_kernel.make_inputs((1, 2, 128, 128, 64))
    q.requires_grad_(True)
    with pytest.raises(NotImplementedError, match="has no backward"):
        ops.attention(q, k, v).float().sum().backward()


def test_the_gate_proves_a_shape_class_once() -> None:
    from ts_explore.ops import gemm_op as op_gemm

    a, _, b = operands(2048, 1024, 512, seed=6)
    ops.gemm(a, b)
    proofs = op_gemm.gate().proofs
    for _ in range(3):
        ops.gemm(a, b)
    a2, _, b2 = operands(2040, 1024, 512, seed=6)  # same tiles per CTA and k-blocks: the same class
    ops.gemm(a2, b2)
    assert op_gemm.gate().proofs == proofs


def test_a_new_process_calling_a_cached_shape_starts_within_two_seconds(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import json, sys, time
        import torch
        a = torch.randn(1000, 520, device="cuda").bfloat16(); w = torch.randn(1032, 520, device="cuda").bfloat16()
        torch.cuda.synchronize()
        start = time.perf_counter()
        from ts_explore import ops
        c = ops.gemm(a, w.t()); torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        ok = bool(((c.float() - a.float() @ w.float().t()).abs() <= 0.05 + 2**-7 * (a.float() @ w.float().t()).abs()).all())
        compiled = sys.modules.get("ts_explore.ops.compiled")
        print(json.dumps({"seconds": seconds, "compiles": compiled.CACHE.compiles if compiled else 0, "ok": ok}))
    """)
    env = {**os.environ, "TS_EXPLORE_CACHE_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    import json

    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                      check=True, timeout=600).stdout.strip().splitlines()[-1]) for _ in range(2)]
    assert runs[0]["compiles"] == 1 and runs[1]["compiles"] == 0 and runs[0]["ok"] and runs[1]["ok"], runs
    assert runs[1]["seconds"] <= 2.0, runs


def test_launch_times_the_gemm_as_the_benchmarks_do() -> None:
    from ts_explore.gpu import launch
    from ts_explore.gpu.timing import TIMED_S

    result = launch("hopper_gemm", sizes=[(4096, 4096, 4096)], reps=10, tile="by shape")
    run = result.runs[0]
    timed_s = len(run.kernel.times_ms) * run.kernel.median_ms / 1e3
    assert len(run.kernel.times_ms) > 10 and timed_s >= 0.5 * TIMED_S, (len(run.kernel.times_ms), timed_s)
    assert [t.label for t in run.references] == ["torch.matmul"]
    assert len(run.references[0].times_ms) == len(run.kernel.times_ms)  # alternated, round for round
    assert run.sm_clock_mhz is not None and 500 < run.sm_clock_mhz < 2500
    assert f"at SM {run.sm_clock_mhz} MHz" in result.summary()


def test_gemm_without_a_config_runs_this_gpus_tuning_pick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table's pick for the exact shape wins over the plan's pick; a new table is seen after tune's forget."""
    from ts_explore.gpu.tuned import this_gpu
    from ts_explore.gpu.tuning_table import MEASURED, TuningTable
    from ts_explore.kernels.gemm_geometry import Cluster, TileShape
    from ts_explore.ops import gemm_op
    from ts_explore.scenarios import get
    from ts_explore.tuning.run import _canonical

    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(tmp_path))
    a, w, b = operands(1000, 1032, 520, seed=3)
    gemm_op.forget_defaults()
    planned = gemm_op.prepared(a, b).config
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    plan = get("hopper_gemm").config(tile=TileShape.BY_SHAPE).resolved((1000, 1032, 520), sms)
    assert (planned.tile, planned.tile_n, planned.cluster) == (plan.tile, plan.tile_n, plan.cluster)
    assert (planned.tile, planned.cluster) != (TileShape.T128x256, Cluster.C1x1)  # not the table's pick below
    table = TuningTable("hopper_gemm", *this_gpu(), cache_dir=tmp_path)
    pick = _canonical(get("hopper_gemm"), {"tile": TileShape.T128x256, "cluster": Cluster.C1x1})
    table.put({"shape": "1000x1032x520", "config": pick, "outcome": MEASURED, "tflops": 999.0, "ratio": 1.0,
               "reference": "test"})
    gemm_op.forget_defaults()
    p = gemm_op.prepared(a, b)
    assert p.tables and p.config.tile.mn == (128, 256) and p.config.cluster.m == 1, p.config
    assert_gemm_close(ops.gemm(a, b), a, w)
    gemm_op.forget_defaults()
