"""Write the committed H200 artefacts of the timeline work: example traces and hang diagnoses.

    python scripts/trace_examples.py OUT_DIR

Launches the pipelined copy (two tasks), the static persistent copy and the
Hopper GEMM (load and MMA warpgroups, two tiles per CTA) with
every step of CTAs 0 and 1 traced and saves each timeline as Chrome trace-event JSON
(``<scenario>.h200.trace.json``); then forces each deadlocking fault of the
pipelined copy and writes the hang diagnoses, predicted beside measured, to
``hang_diagnoses.h200.txt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ts_explore.gpu import HangError, launch
from ts_explore.model import QueueKind
from ts_explore.model.timeline import TraceSpec
from ts_explore.scenarios.pipelined import PipelineFault

PIPELINED = dict(ctas=132, stages=4, tile=4096)
PERSISTENT = dict(queue=QueueKind.STATIC, ctas=132, overlaunch=2)
FAULT = dict(ctas=4, stages=4, tile=4096)
GEMM_SHAPE = (4096, 2048, 512)  # 256 tiles of 128 x 256 over 132 CTAs: two tiles each for CTAs 0-1, 8 k-blocks


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name, overrides, size in (("pipelined_copy", PIPELINED, 1 << 22), ("persistent_copy", PERSISTENT, 1 << 22),
                                  ("hopper_gemm", {}, GEMM_SHAPE)):
        r = launch(name, sizes=[size], reps=5, trace=TraceSpec(stages="all", start=0), **overrides)
        timeline = r.timeline
        assert timeline is not None and r.ok, r.summary()
        path = timeline.save(out / f"{name}.h200.trace.json")
        print(f"{path.name}: {timeline.summary()}")
        print(r.compare().summary().splitlines()[0])
        print(timeline.table().text())
    lines = []
    for fault in (PipelineFault.CONSUMER_EXTRA, PipelineFault.NO_RELEASE):
        try:
            launch("pipelined_copy", sizes=[32 * 4096], fault=fault, force=True, timeout=10, reps=1, **FAULT)
            lines.append(f"{fault.name}: finished (no hang)")
        except HangError as exc:
            lines.append(f"pipelined_copy, fault={fault.name}, 32 tiles over 4 CTAs, 4 stages:")
            lines.extend(exc.report.lines())
        lines.append("")
    (out / "hang_diagnoses.h200.txt").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
