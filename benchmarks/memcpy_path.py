"""What a device-to-device copy is measured against: is cudaMemcpyAsync an SM kernel here, and what do SM kernels reach?

    python benchmarks/memcpy_path.py          (needs torch with CUDA; prints one table)

Times, in one process with CUDA events: ``dst.copy_(src)`` (cudaMemcpyAsync
for contiguous tensors), torch's own elementwise kernels moving the same
bytes (``torch.neg``, an int32 -> float32 ``copy_``), write-only fills and a
read-only sum; both copies with the destination shifted by a few offsets and
at several sizes; and each copy issued on a second stream while a large
matmul holds every SM on the first. A copy-engine transfer would finish
while the matmul runs; a copy that waits for it runs on the SMs.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

N = 1 << 27  # int32 elements of the main buffers: 512 MiB each
OFFSETS = (0, 1024, 4096 // 4 * 16, (1 << 20) // 4, (3 << 20) // 4 + 64)  # destination shifts, in int32
SIZES_MIB = (64, 128, 256, 1024, 2048)
MATMUL = 16384  # square bf16 matmul that holds every SM while a copy is issued beside it


def median_ms(torch: Any, run: Callable[[], Any], reps: int = 20) -> float:
    """Median CUDA-event time of ``run`` on the current stream, after three warm-up calls."""
    stream = torch.cuda.current_stream()
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, stop in events:
        start.record(stream)
        run()
        stop.record(stream)
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(stop) for start, stop in events)
    return times[len(times) // 2]


def kinds_of_traffic(torch: Any, src: Any, dst: Any) -> None:
    """The copy, torch's elementwise kernels over the same bytes, write-only fills and a read-only sum."""
    as_float = torch.empty(N, dtype=torch.float32, device="cuda")
    both, one = 8 * N, 4 * N
    tests = {
        "memcpy (copy_)": (lambda: dst.copy_(src), both),
        "elementwise int->float copy": (lambda: as_float.copy_(src), both),
        "neg (elementwise)": (lambda: torch.neg(src, out=dst), both),
        "fill zero_ (write only)": (lambda: dst.zero_(), one),
        "fill_(7) (write only)": (lambda: dst.fill_(7), one),
        "sum (read only)": (lambda: src.sum(), one),
    }
    for name, (run, nbytes) in tests.items():
        ms = median_ms(torch, run)
        print(f"{name:32s} {ms:8.4f} ms  {nbytes / ms / 1e6:7.0f} GB/s", flush=True)


def shifted_destinations(torch: Any, src: Any) -> None:
    """memcpy and an elementwise kernel into views of one buffer shifted by :data:`OFFSETS`."""
    big = torch.empty(N + (1 << 22), dtype=torch.int32, device="cuda")
    for off in OFFSETS:
        dst = big[off:off + N]
        copy = median_ms(torch, lambda: dst.copy_(src))
        neg = median_ms(torch, lambda: torch.neg(src, out=dst))
        print(f"dst offset {off * 4:9d} B: memcpy {8 * N / copy / 1e6:6.0f} GB/s, neg {8 * N / neg / 1e6:6.0f} GB/s",
              flush=True)


def sizes(torch: Any) -> None:
    """memcpy and an elementwise kernel at each of :data:`SIZES_MIB`."""
    for mib in SIZES_MIB:
        n = mib * 2**20 // 4
        src = torch.empty(n, dtype=torch.int32, device="cuda")
        dst = torch.empty_like(src)
        copy = median_ms(torch, lambda: dst.copy_(src))
        neg = median_ms(torch, lambda: torch.neg(src, out=dst))
        print(f"{mib:5d} MiB: memcpy {8 * n / copy / 1e6:6.0f} GB/s, neg {8 * n / neg / 1e6:6.0f} GB/s", flush=True)
        del src, dst


def beside_a_matmul(torch: Any, src: Any, dst: Any) -> None:
    """Each copy on stream B while a matmul holding every SM runs on stream A: does it wait for the matmul?"""
    x = torch.randn(MATMUL, MATMUL, dtype=torch.bfloat16, device="cuda")
    y = torch.randn_like(x)
    stream_a, stream_b = torch.cuda.Stream(), torch.cuda.Stream()
    for what, run in (("memcpy", lambda: dst.copy_(src)), ("neg", lambda: torch.neg(src, out=dst))):
        torch.cuda.synchronize()
        a0, a1, b0, b1 = (torch.cuda.Event(enable_timing=True) for _ in range(4))
        with torch.cuda.stream(stream_a):
            a0.record(stream_a)
            torch.mm(x, y)
            a1.record(stream_a)
        time.sleep(0.002)
        with torch.cuda.stream(stream_b):
            b0.record(stream_b)
            run()
            b1.record(stream_b)
        torch.cuda.synchronize()
        print(f"concurrent: matmul {a0.elapsed_time(a1):.3f} ms on A; {what} on B took {b0.elapsed_time(b1):.3f} ms, "
              f"ended {a0.elapsed_time(b1):.3f} ms after the matmul started", flush=True)


def main() -> int:
    try:
        import torch
    except ImportError:
        print("memcpy_path.py needs torch with CUDA (pip install torch); nothing was measured", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("memcpy_path.py needs a CUDA GPU; this machine has none, nothing was measured", file=sys.stderr)
        return 2
    torch.cuda.init()
    src = torch.randint(0, 1 << 30, (N,), dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    kinds_of_traffic(torch, src, dst)
    shifted_destinations(torch, src)
    sizes(torch)
    beside_a_matmul(torch, src, dst)
    print(torch.cuda.get_device_name(), torch.version.cuda)
    return 0


if __name__ == "__main__":
    sys.exit(main())
