"""Generated persistent task sets against brute force: no SAFE answer where some tile count reaches a finding.

Each set of :mod:`tile_sets` is verified (default, and with ``cross_check=True``
where the default says SAFE) and searched unrolled to every tile count
1..N, N = max(8, 2 * longest ring period + largest lead) (:mod:`tile_brute`).
The assertion messages print the counts: sets, race-free sets, wrong SAFE
answers, and the share of race-free sets still proven SAFE (target >= 90 %).
``benchmarks/tile_proof_rate.py`` prints the same counts.

Tiers: 300 sets by default (about 40 s on one core), 5,000 with
``TS_EXPLORE_SOAK=1``.
"""

from __future__ import annotations

import pytest
from tile_brute import tally
from tiers import scaled

SETS = scaled(300, 5000)
TARGET_SHARE = 0.9
# The default verify still answers SAFE on some of these sets: the tile-shift argument of analysis/tiles.py
# takes tiles as interchangeable once credits balance, yet a ring's slot phase carries from tile to tile.
# When the search over tile-boundary states replaces it, this turns False and the test asserts 0 wrong SAFE
# answers and the share for the default verify too (until then, that it still has them: a fix shows).
DEFAULT_HAS_WRONG_SAFE = True


@pytest.mark.slow
def test_no_set_with_a_finding_is_called_safe():
    counts = tally(range(SETS))
    assert counts.sets == SETS and counts.race_free >= SETS // 20, counts.text()
    assert not counts.wrong_checked, counts.text()
    assert counts.share(checked=True) >= TARGET_SHARE, counts.text()
    assert bool(counts.wrong_safe) == DEFAULT_HAS_WRONG_SAFE, counts.text()
    if not DEFAULT_HAS_WRONG_SAFE:
        assert counts.share() >= TARGET_SHARE, counts.text()
