"""Which attention kernel the op runs for a call: knobs picked from head_dim, the mask and seqlen_q, as plain data.

Kept free of the DSL so a launch record's name can say which kernel it stands
for without importing the scenarios: when the pick changes, the record's name
changes with it, and a record written for an earlier pick never answers.

The picks, from ``benchmarks/results/attention.h100.txt`` (TFLOP/s, one
process, side by side), and what the first call's proof costs (one CPU core):

- Two consumer warpgroups with static persistence where the mask lets every
  launched walk be proven: non-causal (613 against 604 at hd128 8k, 532
  against 481 at hd128 1k). Causal walks mix K/V loop lengths per CTA, which
  no search covers, so causal calls keep one CTA per tile.
- head_dim 64, from 2048 query rows (4096 causal): three consumer warpgroups
  (192-row Q tiles), one CTA per tile: 440 against 392 at 2k, 531 against 403
  at 8k, 553 against 426 at 16k non-causal; 371 against 338 at 4k, 475 against
  396 at 16k causal. Below those lengths two warpgroups ran faster (376 against
  347 at 1k, 299 against 293 at 2k causal). One CTA per tile, because the
  tile-loop search of three consumers in a ring under static persistence
  visits 5.5 million states at 8k (99 s, 2 GiB) where one tile's search takes
  0.4 s, for 2 % more speed (543 against 531).
"""

from __future__ import annotations

THREE_WG_FROM = 2048  # non-causal head_dim 64 calls take the three-warpgroup tile from this seqlen_q on
THREE_WG_CAUSAL_FROM = 4096  # ... and causal ones from this


def attention_knobs(head_dim: int, causal: bool, seqlen_q: int) -> tuple[tuple[str, object], ...]:
    """The scenario knobs of the op's kernel for this call, sorted by name (hashable, printable)."""
    knobs: dict[str, object] = {"head_dim": head_dim, "causal": bool(causal),
                                "persistence": "none" if causal else "static"}
    if head_dim == 64 and seqlen_q >= (THREE_WG_CAUSAL_FROM if causal else THREE_WG_FROM):
        knobs.update(tile_q=192, consumer_wgs=3, persistence="none")
    return tuple(sorted(knobs.items()))


__all__ = ["THREE_WG_CAUSAL_FROM", "THREE_WG_FROM", "attention_knobs"]
