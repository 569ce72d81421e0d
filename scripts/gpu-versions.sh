#!/usr/bin/env bash
# What the GEMM runs of the GPU machine record first: the GPU, its driver and top SM clock, the commit, the package
# versions the kernels and references come from, and whether QuACK imports (without it the GEMM benchmark times
# torch.matmul only, and says so). Prints to stdout:  bash scripts/gpu-versions.sh >> "$OUT/<run>_env.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1
git log --oneline -1 2> /dev/null
python3 - <<'EOF'
import importlib.metadata as md
for dist in ("torch", "nvidia-cutlass-dsl", "quack-kernels", "apache-tvm-ffi"):
    try:
        print(f"{dist} {md.version(dist)}")
    except md.PackageNotFoundError:
        print(f"{dist} not installed")
try:
    import quack.gemm_interface  # noqa: F401
    print("quack.gemm_interface imports")
except Exception as exc:  # the benchmark then times torch.matmul only, and says so
    print(f"quack.gemm_interface does not import: {type(exc).__name__}: {exc}")
EOF
