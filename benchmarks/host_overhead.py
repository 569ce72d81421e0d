"""Host cost of one call of ts_explore.ops.gemm / attention beside torch.matmul and SDPA, eager speed at a small
shape, and how fast a new process starts on a cached shape class.

    python benchmarks/host_overhead.py [--out FILE]

Host cost: the wall time of 500 back-to-back calls (no synchronisation in
between, so the CPU only enqueues while the GPU catches up behind it),
divided by 500; the best of 21 rounds (the machine's other tenants make single
rounds noisy). Each op is measured at a small shape
(where the kernel takes a few microseconds) and at 1000x1032x520 for the
GEMM. Beside ours: torch.matmul, SDPA (flash backend, (b, h, s, d) layout),
the custom op through torch's dispatcher (``torch.ops.ts_explore.gemm``), and
the DSL's default call path (``cute.compile`` without TVM-FFI, the compiled
function called with its converted arguments, as ``launch()`` and the
benchmarks call it), and FlashAttention-4's CuTe DSL forward on the same
tensors where it is installed. The "part" rows split our calls: the TVM-FFI
host alone, the output's allocation, the Python before it, and a TVM-FFI call
of nothing with the same arguments (the conversion cost alone).

Eager speed: 200 calls after a warm-up, CUDA events around all of them, on
the current stream: TFLOP/s per call as a user's eager loop sees it, against
torch.matmul timed the same way, alternating 5 times (median). Also inside one
CUDA graph of the 200 calls each, for the kernel's own speed.

Cache hit: a fresh process (torch already imported and CUDA initialised)
calls ops.gemm at 1000x1032x520 with an empty compile cache, then a second
one with the cache the first left: seconds from ``import ts_explore.ops`` to
the synchronised result.

The report ends with ``host per call: gemm N.N µs, attention N.N µs
(torch.matmul N.N µs, SDPA N.N µs); compile cache hit N.N s``. Exit status 0
when both ops cost at most 10 µs, the cache hit takes at most 2 s and the
eager GEMM reaches 0.8x torch.matmul at 1000x1032x520; 1 otherwise; 2 without
a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
SMALL_GEMM, EAGER_GEMM = (128, 128, 64), (1000, 1032, 520)
SMALL_ATTENTION = (1, 4, 128, 128, 64)  # batch, heads, seqlen_q, seqlen_kv, head_dim
CALLS, ROUNDS = 500, 21
HOST_LIMIT_US, START_LIMIT_S, EAGER_RATIO = 10.0, 2.0, 0.8


def host_us(call: Callable[[], Any], sync: Callable[[], None]) -> float:
    """Best-of-ROUNDS wall time per call of CALLS back-to-back calls, in µs."""
    for _ in range(100):
        call()
    sync()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            call()
        best = min(best, (time.perf_counter() - start) / CALLS)
        sync()
    return best * 1e6


def eager_us(call: Callable[[], Any], torch: Any, calls: int = 200) -> float:
    """µs per call of ``calls`` eager calls, CUDA events around all of them."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / calls


def graph_us(call: Callable[[], Any], torch: Any, calls: int = 200) -> float:
    """µs per call inside one CUDA graph of ``calls`` calls (the median of 5 replays)."""
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    times = []
    for _ in range(5):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / calls)
    return statistics.median(times)


START_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import torch
    a = torch.randn(1000, 520, device="cuda").bfloat16(); w = torch.randn(1032, 520, device="cuda").bfloat16()
    torch.cuda.synchronize()
    start = time.perf_counter()
    from ts_explore import ops
    ops.gemm
    imported = time.perf_counter()
    ops.gemm(a, w.t()); torch.cuda.synchronize()
    done = time.perf_counter()
    compiled = sys.modules.get("ts_explore.ops.compiled")
    print(json.dumps({"seconds": done - start, "ops_import": imported - start, "first_call": done - imported,
                      "compiles": compiled.CACHE.compiles if compiled else 0, "dsl": "cutlass" in sys.modules}))
""")


def process_start(cache: str) -> dict[str, Any]:
    env = {**os.environ, "TS_EXPLORE_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", START_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    if done.returncode:
        raise RuntimeError(f"the start-up process failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def dsl_default_calls(torch: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The GEMM and attention through the DSL's default call path (what launch() and the benchmarks call)."""
    from ts_explore.kernels import attention, gemm
    from ts_explore.scenarios import get
    from ts_explore.ops.compiled import default_gemm_config, attention_config

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sc = get("hopper_gemm")
    m, n, k = EAGER_GEMM
    cfg = default_gemm_config().resolved(EAGER_GEMM, sms)
    a, w = gemm.make_inputs(EAGER_GEMM)
    c = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
    g = gemm.launcher(gemm.compile(sc, cfg), a, w, c, cfg, sms)
    b, h, sq, skv, d = SMALL_ATTENTION
    acfg = attention_config(d, False, seqlen_q=sq)
    q, kk, v = attention.make_inputs(SMALL_ATTENTION)
    o, lse = torch.empty_like(q), torch.empty((b, h, sq), device="cuda", dtype=torch.float32)
    at = attention.launcher(attention.compile(get("hopper_attention"), acfg), q, kk, v, o, lse, acfg, sms)
    return g, at


def ffi_nop() -> Callable[..., Any] | None:
    """TVM-FFI's registered no-op (None when this TVM-FFI has none): what a call costs before any kernel."""
    try:
        import tvm_ffi

        return tvm_ffi.get_global_func("testing.nop")
    except Exception:  # an older TVM-FFI without its testing functions
        return None


def fa4_call(q: Any, k: Any, v: Any) -> Callable[[], Any] | None:
    """FlashAttention-4's CuTe DSL forward on the same tensors (None, with a note on stderr, when not installed)."""
    try:
        from flash_attn.cute import flash_attn_func
    except Exception as exc:  # not staged on this machine: the row is left out
        print(f"FlashAttention-4 not importable ({type(exc).__name__}: {exc}); its row is left out", file=sys.stderr)
        return None
    flash_attn_func(q, k, v)  # compiles once
    return lambda: flash_attn_func(q, k, v)


def dlpack_path() -> str:
    """How TVM-FFI converts torch tensors here: the C exchange API (fast) or the Python __dlpack__ protocol."""
    import torch
    import tvm_ffi  # noqa: F401  (importing it installs the exchange API where torch lacks it)

    fast = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    return "C DLPack exchange API" if fast else "the Python __dlpack__ protocol (no C exchange API)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("no torch: this benchmark needs a CUDA GPU and the torch extra", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA GPU visible", file=sys.stderr)
        return 2
    import torch.nn.functional as F

    from ts_explore import ops
    from ts_explore.kernels import attention, gemm

    lines = [f"# python3 benchmarks/host_overhead.py   ({torch.cuda.get_device_name(0)}, torch {torch.__version__}; "
             f"TVM-FFI converts tensors through {dlpack_path()})"]

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    sync = torch.cuda.synchronize
    small = {}
    for shape in (SMALL_GEMM, EAGER_GEMM):
        a, w = gemm.make_inputs(shape)
        small[shape] = (a, w, w.t())
    a, w, b = small[SMALL_GEMM]
    b_, h, sq, skv, d = SMALL_ATTENTION
    q, k, v = attention.make_inputs(SMALL_ATTENTION)
    qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))  # SDPA's (b, h, s, d)

    say("")
    say("host cost per call (best of 21 rounds of 500 back-to-back calls), µs")
    rows: list[tuple[str, Callable[[], Any]]] = [
        (f"ops.gemm {'x'.join(map(str, SMALL_GEMM))}", lambda: ops.gemm(a, b)),
        (f"torch.ops.ts_explore.gemm {'x'.join(map(str, SMALL_GEMM))} (dispatcher)",
         lambda: torch.ops.ts_explore.gemm(a, b, None, None, "default")),
        (f"torch.matmul {'x'.join(map(str, SMALL_GEMM))}", lambda: torch.matmul(a, b)),
    ]
    ea, ew, eb = small[EAGER_GEMM]
    rows += [(f"ops.gemm {'x'.join(map(str, EAGER_GEMM))}", lambda: ops.gemm(ea, eb)),
             (f"torch.matmul {'x'.join(map(str, EAGER_GEMM))}", lambda: torch.matmul(ea, eb))]
    shape_a = "x".join(map(str, SMALL_ATTENTION))
    rows += [(f"ops.attention {shape_a}", lambda: ops.attention(q, k, v)),
             (f"torch.ops.ts_explore.attention {shape_a} (dispatcher)",
              lambda: torch.ops.ts_explore.attention(q, k, v, False)),
             (f"SDPA {shape_a}", lambda: F.scaled_dot_product_attention(qt, kt, vt))]
    from ts_explore.ops.gemm_op import prepared as gemm_prepared
    from ts_explore.ops.gemm_op import run as gemm_run
    from ts_explore.ops.routing import direct

    p = gemm_prepared(a, b)
    c = torch.empty(p.out_shape, dtype=torch.bfloat16, device="cuda")
    rows += [
        ("  part: the TVM-FFI host alone (tensors in, grid precomputed)", lambda: p.fn(a, b, c, *p.grid)),
        ("  part: torch.empty of C", lambda: torch.empty(p.out_shape, dtype=torch.bfloat16, device=a.device)),
        ("  part: a.new_empty of C", lambda: a.new_empty(p.out_shape)),
        ("  part: ops' run() into a given C", lambda: gemm_run(a, b, c, "default")),
        ("  part: direct()", lambda: direct(a, b)),
    ]
    from ts_explore.ops.attention_op import prepared as attention_prepared
    from ts_explore.ops.attention_op import run as attention_run

    pa = attention_prepared(q, k, v)
    o = torch.empty_like(q)
    rows += [
        ("  part: the attention's TVM-FFI host alone (O, LSE given)", lambda: pa.fn(q, k, v, o, pa.scratch_lse, *pa.grid)),
        ("  part: torch.empty_like of O", lambda: torch.empty_like(q)),
        ("  part: ops' attention run() into a given O", lambda: attention_run(q, k, v, o, False, False)),
        ("  part: direct(q, k, v)", lambda: direct(q, k, v)),
    ]
    nop = ffi_nop()
    if nop is not None:  # TVM-FFI's own cost of a call with the attention's arguments, no kernel behind it
        rows.append(("  part: a TVM-FFI call of nothing with the same 5 tensors, 3 ints",
                     lambda: nop(q, k, v, o, pa.scratch_lse, 1, 1, 1)))
    fa4 = fa4_call(q, k, v)
    if fa4 is not None:
        rows.append((f"FlashAttention-4 (CuTe DSL) {shape_a}", fa4))
    dsl_gemm, dsl_attention = dsl_default_calls(torch)
    rows += [(f"DSL default call path, gemm {'x'.join(map(str, EAGER_GEMM))} (before)", dsl_gemm),
             (f"DSL default call path, attention {shape_a} (before)", dsl_attention)]
    host: dict[str, float] = {}
    for label, call in rows:
        host[label] = host_us(call, sync)
        say(f"  {label:<62} {host[label]:7.1f}")

    say("")
    say(f"eager speed at {'x'.join(map(str, EAGER_GEMM))} (200 calls between two events; median of 5 alternations)")
    flops = 2 * EAGER_GEMM[0] * EAGER_GEMM[1] * EAGER_GEMM[2]
    ours, theirs = [], []
    for _ in range(5):
        ours.append(eager_us(lambda: ops.gemm(ea, eb), torch))
        theirs.append(eager_us(lambda: torch.matmul(ea, eb), torch))
    o_us, t_us = statistics.median(ours), statistics.median(theirs)
    eager_ratio = t_us / o_us
    say(f"  ops.gemm      {o_us:6.2f} µs/call  {flops / o_us / 1e6:6.1f} TFLOP/s")
    say(f"  torch.matmul  {t_us:6.2f} µs/call  {flops / t_us / 1e6:6.1f} TFLOP/s")
    say(f"  eager ratio   {eager_ratio:.2f}x torch.matmul")
    g_o, g_t = graph_us(lambda: ops.gemm(ea, eb), torch), graph_us(lambda: torch.matmul(ea, eb), torch)
    say(f"  in a CUDA graph: ops.gemm {g_o:.2f} µs ({flops / g_o / 1e6:.1f} TFLOP/s), torch.matmul {g_t:.2f} µs "
        f"({flops / g_t / 1e6:.1f} TFLOP/s): {g_t / g_o:.2f}x")
    from ts_explore.ops.gemm_op import prepared

    p = prepared(ea, eb)
    say(f"  ops.gemm ran {p.config.tile.value} tiles, {p.config.cluster.value} cluster, grid {p.grid}")

    say("")
    with tempfile.TemporaryDirectory(prefix="ts-explore-start-") as cache:
        cold, warm = process_start(cache), process_start(cache)
    say(f"a new process, import ts_explore.ops to the first result at {'x'.join(map(str, EAGER_GEMM))}:")
    for name, run in (("empty compile cache", cold), ("cached shape class ", warm)):
        say(f"  {name}: {run['seconds']:.2f} s ({run['compiles']} compiles): import ts_explore.ops "
            f"{run['ops_import']:.2f} s, first call {run['first_call']:.2f} s; the DSL "
            f"{'imported' if run['dsl'] else 'not imported'}")

    g_host = host[f"ops.gemm {'x'.join(map(str, SMALL_GEMM))}"]
    a_host = host[f"ops.attention {shape_a}"]
    say("")
    say(f"host per call: gemm {g_host:.1f} µs, attention {a_host:.1f} µs (torch.matmul "
        f"{host[f'torch.matmul {chr(120).join(map(str, SMALL_GEMM))}']:.1f} µs, SDPA {host[f'SDPA {shape_a}']:.1f} µs); "
        f"compile cache hit {warm['seconds']:.1f} s")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    ok = (g_host <= HOST_LIMIT_US and a_host <= HOST_LIMIT_US and warm["seconds"] <= START_LIMIT_S
          and warm["compiles"] == 0 and eager_ratio >= EAGER_RATIO)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
