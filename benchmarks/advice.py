"""Does the advice hold on the GPU? Mistuned and default catalog configs, their stalls, top-3 advice, measured.

    python3 benchmarks/advice.py [--reps 30] [--only TEXT]

For each config: one launch with ``trace=True`` (the instrumented first run
records two CTAs; the timed repetitions run the plain build; the reference
copies are timed too, and cap a copy's predicted gain), its stall
report (``timeline.stalls()``), and ``r.advise(top=3)``: control changes
ranked by the ring model's predicted speedup, each accepted by the
scenario's coercion and proven SAFE on every instance of its launch. Each
suggestion is then launched at the same size and timed the same way: CUDA
events around each launch after warm-up, the median of ``--reps``
repetitions of the plain build. The config itself is timed twice (its own
traced launch and once more after its suggestions) and the measured speedup
of a suggestion is the mean of those two medians over the suggestion's
median.

The copies run one CTA per SM (``ctas=132``: as the committed H200 traces
ran, so a CTA's ring is what bounds it; with ``ctas=0`` the GPU fills with
CTAs and occupancy hides a short ring). The mistuned configs are the
pipelined copy with 1 SMEM stage, with 1 store warp, the bulk both-ways copy
with 1 stage, and the GEMM with 2 A/B stages; the default configs are the
catalog's (copies at one CTA per SM).

The output ends with the three target lines, the last being::

    top suggestion >= 10% faster: N % of M mistuned configs

Targets: >= 80 % of mistuned configs >= 10 % faster with the top suggestion;
no config's top suggestion slower by more than 2 %; predicted and measured
speedups order the top 3 the same way in >= 70 % of the configs with two or
more suggestions. Exit status: 0 when all three hold, 1 when not, 2 when
this machine has no GPU (or nothing could run).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

COPY = 1 << 26  # int32 elements: 256 MiB, about 124 tiles of 4096 per CTA at one CTA per SM
GEMM = (4096, 4096, 4096)
ONE_PER_SM = 132

# (label, scenario, overrides, size, mistuned)
CONFIGS: list[tuple[str, str, dict[str, Any], Any, bool]] = [
    ("pipelined copy, 1 stage", "pipelined_copy", dict(stages=1, ctas=ONE_PER_SM), COPY, True),
    ("pipelined copy, 1 store warp", "pipelined_copy", dict(store_warps=1, ctas=ONE_PER_SM), COPY, True),
    ("pipelined bulk both ways, 1 stage", "pipelined_copy",
     dict(storer="tma", store_warps=1, stages=1, ctas=ONE_PER_SM), COPY, True),
    ("GEMM 128x256, 2 stages", "hopper_gemm", dict(stages=2), GEMM, True),
    ("pipelined copy (default)", "pipelined_copy", dict(ctas=ONE_PER_SM), COPY, False),
    ("pipelined bulk both ways (default stages)", "pipelined_copy",
     dict(storer="tma", store_warps=1, ctas=ONE_PER_SM), COPY, False),
    ("persistent copy (default)", "persistent_copy", dict(ctas=ONE_PER_SM), COPY, False),
    ("grid-stride copy (default)", "grid_stride_copy", dict(ctas=ONE_PER_SM), COPY, False),
    ("GEMM 128x256 (default, 4 stages)", "hopper_gemm", {}, GEMM, False),
]
TARGET_FASTER, TARGET_SLOWER, TARGET_RANK = 0.80, 0.02, 0.70


def _median_ms(name: str, config: Any, size: Any, reps: int) -> float:
    from ts_explore.gpu import launch

    return launch(name, config, sizes=[size], reps=reps, warmup=5, references=False).runs[0].kernel.median_ms


def _same_order(suggestions: list[Any]) -> bool | None:
    """Whether predicted and measured speedups order the suggestions the same way (None: fewer than two)."""
    if len(suggestions) < 2:
        return None
    by_predicted = sorted(range(len(suggestions)), key=lambda i: -suggestions[i].predicted)
    by_measured = sorted(range(len(suggestions)), key=lambda i: -suggestions[i].measured)
    return by_predicted == by_measured


def run_config(label: str, name: str, overrides: dict[str, Any], size: Any, reps: int) -> dict[str, Any]:
    """Launch traced, report the stalls, advise, launch each suggestion; the row for the summary."""
    from dataclasses import replace

    from ts_explore.gpu import launch

    # with the reference copies timed, a copy's predicted gain is capped at the fastest copy of the same bytes
    result = launch(name, sizes=[size], reps=reps, warmup=5, trace=True, **overrides)
    before = result.runs[0].kernel.median_ms
    advice = result.advise(top=3)
    measured = []
    for s in advice.suggestions:
        measured.append((s, _median_ms(name, s.config, size, reps)))
    after = _median_ms(name, result.config, size, reps)
    base = (before + after) / 2
    suggestions = [replace(s, measured=base / ms) for s, ms in measured]
    print(f"== {label}: {name} {overrides or '(defaults)'} at {size}")
    print(f"   {before:.4f} ms (traced launch's plain build), {after:.4f} ms (again after the suggestions)")
    print("   " + advice.stalls.text().replace("\n", "\n   "))
    for p in advice.profiles:
        print(f"   model: {p.explain()}")
    if not suggestions:
        print("   advice: no change predicted to gain 5 % or more")
    for i, (s, (_, ms)) in enumerate(zip(suggestions, measured), 1):
        print(f"   {i}. {s.change_text()}: predicted {s.predicted:.2f}x, measured {s.measured:.2f}x ({ms:.4f} ms)"
              f" - {s.reason}")
    for change, why in advice.passed_over[:4]:
        print(f"   not offered: {change} ({why})")
    sys.stdout.flush()
    return {"label": label, "top": suggestions[0] if suggestions else None, "order": _same_order(suggestions),
            "base": base, "device": result.device.name}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="", metavar="TEXT", help="run only configs whose label contains TEXT")
    args = parser.parse_args(argv)
    from ts_explore.gpu import LaunchError, cuda_unavailable_reason
    from ts_explore.gpu.errors import NO_GPU

    unavailable = cuda_unavailable_reason()
    if unavailable is not None:
        print(f"benchmarks/advice.py needs a GPU: {unavailable[1]}; run it on a machine with an NVIDIA GPU "
              "(sm_90 or newer)", file=sys.stderr)
        return 2
    chosen = [c for c in CONFIGS if args.only.lower() in c[0].lower()]
    if not chosen:
        parser.error(f"no config label contains {args.only!r}; labels: {', '.join(c[0] for c in CONFIGS)}")
    print(f"# python3 benchmarks/advice.py --reps {args.reps}")
    print(f"# timing: CUDA events around each launch of the plain build after 5 warm-up launches, median of "
          f"{args.reps}; a config is timed before and after its suggestions and the mean of the two is its time")
    rows, mistuned = [], {c[0] for c in CONFIGS if c[4]}
    for label, name, overrides, size, _ in chosen:
        try:
            rows.append(run_config(label, name, overrides, size, args.reps))
        except LaunchError as exc:
            print(f"{label}: {exc}", file=sys.stderr)
            if exc.reason in NO_GPU:
                return 2
            rows.append({"label": label, "top": None, "order": None, "base": float("nan"), "error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - one config's failure is a row of the report, not the end of it
            print(f"== {label}: FAILED {type(exc).__name__}: {exc}")
            rows.append({"label": label, "top": None, "order": None, "base": float("nan"), "error": str(exc)})
    if not any("error" not in r for r in rows):
        return 2
    print()
    print(f"{'config':44s} {'top suggestion':30s} {'predicted':>9s} {'measured':>9s}  same order")
    for r in rows:
        top = r["top"]
        order = {None: "-", True: "yes", False: "no"}[r["order"]]
        shown = top.change_text() if top else ("(failed)" if "error" in r else "(none)")
        print(f"{r['label']:44s} {shown:30s} "
              f"{f'{top.predicted:.2f}x' if top else '-':>9s} {f'{top.measured:.2f}x' if top else '-':>9s}  {order}")
    slower = [r for r in rows if r["top"] is not None and r["top"].measured < 1 - TARGET_SLOWER]
    ranked = [r["order"] for r in rows if r["order"] is not None]
    mis = [r for r in rows if r["label"] in mistuned]
    faster = [r for r in mis if r["top"] is not None and r["top"].measured >= 1.10]
    share_rank = statistics.mean(ranked) if ranked else float("nan")
    share_fast = len(faster) / len(mis) if mis else 0.0
    print(f"top suggestion slower by more than {100 * TARGET_SLOWER:.0f}%: {len(slower)} of {len(rows)} configs")
    print(f"predicted and measured order the top 3 the same: {100 * share_rank:.0f} % of {len(ranked)} configs "
          "with two or more suggestions")
    print(f"top suggestion >= 10% faster: {100 * share_fast:.0f} % of {len(mis)} mistuned configs")
    met = share_fast >= TARGET_FASTER and not slower and (not ranked or share_rank >= TARGET_RANK)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
