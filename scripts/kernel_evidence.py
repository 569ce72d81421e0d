"""Write the H200 artefacts of the ping-pong GEMM and the attention kernel: traces and a hang diagnosis.

    python scripts/kernel_evidence.py OUT_DIR

Launches the ping-pong GEMM (two consumer warpgroups on alternate tiles) and
the attention kernel (two consumer warpgroups taking turns) with the work
steps of CTAs 0 and 1 traced, saves each timeline as Chrome trace-event JSON
(``<name>.h200.trace.json``) and prints how it compares with the recorded
schedule; then forces attention's deadlocking fault (a consumer's loop one
K/V block longer than the loader's) and writes the hang diagnosis, predicted
beside measured, to ``attention_hang.h200.txt``. ``--plans`` only prints the
launch plans (no GPU needed), to check the configs before spending device time.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ts_explore.gpu import HangError, launch, launch_plan
from ts_explore.model.timeline import TraceSpec
from ts_explore.scenarios.attention import AttentionFault

PINGPONG = dict(mode="ping-pong", tile="128x128x64", stages=6)
TRACED = (
    ("hopper_gemm_pingpong", "hopper_gemm", PINGPONG, (4096, 4096, 1024)),  # 16 k-blocks a tile, 4 units a CTA
    ("hopper_attention", "hopper_attention", {}, (1, 16, 2048, 2048, 128)),  # 16 K/V blocks a Q tile
)
HANG = dict(sizes=[(1, 2, 512, 512, 128)], fault=AttentionFault.CONSUMER_EXTRA)


def plans() -> int:
    """Each launch's plan, from the CPU: the configs are valid and the gate has what it proves."""
    for name, scenario, overrides, size in TRACED:
        print(f"{name}: {launch_plan(scenario, size, **overrides).summary()}")
    print(f"hang: {launch_plan('hopper_attention', HANG['sizes'][0], fault=HANG['fault']).summary()}")
    return 0


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name, scenario, overrides, size in TRACED:
        r = launch(scenario, sizes=[size], reps=5, trace=TraceSpec(stages="work", start=0), **overrides)
        assert r.ok and r.timeline is not None, r.summary()
        # CTA 0 of the two traced CTAs is kept: the file stays small enough to keep in the repository
        path = r.timeline.only(cta=r.timeline.ctas[0]).save(out / f"{name}.h200.trace.json")
        print(f"{path.name} (CTA {r.timeline.ctas[0]} of): {r.timeline.summary()}")
        print(r.compare().summary().splitlines()[0])
        print(r.timeline.table().text())
    lines = [f"hopper_attention, fault={HANG['fault'].name}, sizes={HANG['sizes']}:"]
    try:
        launch("hopper_attention", force=True, timeout=10, reps=1, **HANG)
        lines.append("finished (no hang)")
    except HangError as exc:
        lines.extend(exc.report.lines())
    (out / "attention_hang.h200.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plans"]:
        sys.exit(plans())
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
