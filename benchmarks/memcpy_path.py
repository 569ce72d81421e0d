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
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("memcpy_path.py needs torch with CUDA (pip install torch); nothing was measured")
if not torch.cuda.is_available():
    sys.exit("memcpy_path.py needs a CUDA GPU; this machine has none, nothing was measured")
torch.cuda.init()
N = 1 << 27  # int32 -> 512 MiB
src = torch.randint(0, 1 << 30, (N,), dtype=torch.int32, device="cuda")
dst = torch.empty_like(src)
dstf = torch.empty(N, dtype=torch.float32, device="cuda")
nbytes = 8 * N

def med(f, reps=20, stream=None):
    s = stream or torch.cuda.current_stream()
    for _ in range(3): f()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record(s); f(); b.record(s)
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) for a, b in ev)
    return t[len(t) // 2]

tests = {
    "memcpy (copy_)": (lambda: dst.copy_(src), nbytes),
    "elementwise int->float copy": (lambda: dstf.copy_(src), nbytes),
    "neg (elementwise)": (lambda: torch.neg(src, out=dst), nbytes),
    "fill zero_ (write only)": (lambda: dst.zero_(), 4 * N),
    "fill_(7) (write only)": (lambda: dst.fill_(7), 4 * N),
    "sum (read only)": (lambda: src.sum(), 4 * N),
}
for name, (f, b) in tests.items():
    ms = med(f)
    print(f"{name:32s} {ms:8.4f} ms  {b / ms / 1e6:7.0f} GB/s", flush=True)

# offsets: memcpy vs elementwise on shifted views
big = torch.empty(N + (1 << 22), dtype=torch.int32, device="cuda")
for off in (0, 1024, 4096 // 4 * 16, (1 << 20) // 4, (3 << 20) // 4 + 64):
    d = big[off:off + N]
    ms1 = med(lambda: d.copy_(src)); ms2 = med(lambda: torch.neg(src, out=d))
    print(f"dst offset {off * 4:9d} B: memcpy {nbytes / ms1 / 1e6:6.0f} GB/s, neg {nbytes / ms2 / 1e6:6.0f} GB/s", flush=True)

# sizes
for mib in (64, 128, 256, 1024, 2048):
    n = mib * 2**20 // 4
    a = torch.empty(n, dtype=torch.int32, device="cuda"); c = torch.empty_like(a)
    ms1 = med(lambda: c.copy_(a)); ms2 = med(lambda: torch.neg(a, out=c))
    print(f"{mib:5d} MiB: memcpy {8 * n / ms1 / 1e6:6.0f} GB/s, neg {8 * n / ms2 / 1e6:6.0f} GB/s", flush=True)
    del a, c

# concurrency: a matmul that holds every SM on stream A; memcpy / neg on stream B
M = 16384
x = torch.randn(M, M, dtype=torch.bfloat16, device="cuda"); y = torch.randn_like(x)
sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
for what, f in (("memcpy", lambda: dst.copy_(src)), ("neg", lambda: torch.neg(src, out=dst))):
    torch.cuda.synchronize()
    a0, a1, b0, b1 = (torch.cuda.Event(enable_timing=True) for _ in range(4))
    with torch.cuda.stream(sa):
        a0.record(sa); torch.mm(x, y); a1.record(sa)
    time.sleep(0.002)
    with torch.cuda.stream(sb):
        b0.record(sb); f(); b1.record(sb)
    torch.cuda.synchronize()
    print(f"concurrent: matmul {a0.elapsed_time(a1):.3f} ms on A; {what} on B took {b0.elapsed_time(b1):.3f} ms, "
          f"ended {a0.elapsed_time(b1):.3f} ms after the matmul started", flush=True)
print(torch.cuda.get_device_name(), torch.version.cuda)
