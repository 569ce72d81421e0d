"""The attention's TMA-store epilogue on the CPU: the store task the checker sees, its planted race, the knob.

With ``tma_store`` on (the default) each consumer warpgroup hands O to the
task ``store`` through a one-stage pipeline of its own (``o0``, ``o1``); the
store task TMA-stores each buffer and releases it only after waiting for the
store's read of shared memory. Releasing right after issuing the store (the
planted ``O_EARLY_RELEASE``) lets the consumer write its next tile into a
buffer the TMA engine may still be reading: the async-read rule reports it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenario_support import captured, ident
from ts_explore.analysis.async_reads import check_async_reads
from ts_explore.model import Stage
from ts_explore.scenarios import get
from ts_explore.scenarios.attention import AttentionFault, Persistence
from ts_explore.scenarios.attention_store import STORE_SCOPE_NOTE, store_reads
from ts_explore.scenarios.knobs import ConfigError
from ts_explore.verification.verify import verify

SC = get("hopper_attention")
STATIC = Persistence.STATIC


def _steps(task: Any) -> list[tuple[str, str]]:
    return [(s.resource, s.label or s.stage.value) for s in task.schedule.steps()]


@pytest.mark.parametrize("overrides", [dict(), dict(persistence=STATIC), dict(consumer_wgs=1, tile_q=64),
                                       dict(causal=True, q_tile=2), dict(overlap=False), dict(head_dim=64)],
                         ids=ident)
def test_each_consumer_hands_o_to_the_store_task_which_releases_it_after_the_read(overrides: dict[str, Any]) -> None:
    cfg = SC.config(**overrides)
    ts = captured(SC, cfg)
    names = [t.name for t in ts.tasks]
    assert names == ["load", "store", *(f"mma{c}" for c in range(cfg.consumer_wgs))]
    tasks = {t.name: t for t in ts.tasks}
    assert (tasks["load"].warp_start, tasks["load"].warp_end) == (0, 2)
    assert (tasks["store"].warp_start, tasks["store"].warp_end) == (2, 4)
    for c in range(cfg.consumer_wgs):
        mine = [s for s in tasks["store"].schedule.steps()
                if s.resource == f"o{c}" and s.stage is not Stage.CONSUMER_TRY_WAIT and s.label != "flush"]
        order = [s.stage if s.stage is Stage.CONSUMER_RELEASE or s.stage is Stage.CONSUMER_WAIT else s.label
                 for s in mine]
        # wait for the buffer, issue its store, wait for the reads, then release it
        assert order == [Stage.CONSUMER_WAIT, "store", "drain", Stage.CONSUMER_RELEASE], order
        assert (f"o{c}", "stage") in _steps(tasks[f"mma{c}"])
        assert check_async_reads(ts, store_reads(f"o{c}", cfg.consumer_wgs)).safe
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "safe", verdict.summary()
    assert STORE_SCOPE_NOTE in verdict.scope.not_modelled
    assert any("TMA-store epilogue" in n for n in SC.build(cfg).notes)


@pytest.mark.parametrize("overrides", [dict(), dict(persistence=STATIC), dict(consumer_wgs=1, tile_q=64),
                                       dict(overlap=False, pingpong=False)], ids=ident)
def test_releasing_an_o_buffer_before_its_store_has_read_it_is_reported_as_a_race(overrides: dict[str, Any]) -> None:
    cfg = SC.config(fault=AttentionFault.O_EARLY_RELEASE, **overrides)
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert verdict.status.value == "unsafe", verdict.summary()
    assert "async reads of o0" in verdict.summary() and "'store'" in verdict.summary()
    report = check_async_reads(captured(SC, cfg), store_reads("o0", cfg.consumer_wgs))
    first = report.findings[0]
    assert (first.task, first.tile, first.read_tile) == ("store", 0, 0), first
    # the same config without the fault is proven
    assert verify(**SC.build(SC.config(**overrides)).verify_kwargs()).status.value == "safe"


def test_the_store_fault_needs_the_tma_store_on_and_says_so() -> None:
    with pytest.raises(ConfigError, match="tma_store"):
        SC.check(SC.config(fault=AttentionFault.O_EARLY_RELEASE, tma_store=False))


def test_without_the_tma_store_the_consumers_store_o_themselves_and_the_loader_keeps_its_warpgroup() -> None:
    cfg = SC.config(tma_store=False)
    ts = captured(SC, cfg)
    assert [t.name for t in ts.tasks] == ["load", "mma0", "mma1"]
    assert (ts.tasks[0].warp_start, ts.tasks[0].warp_end) == (0, 4)
    assert ("o0", "store") in _steps(ts.tasks[1])
    assert not any("TMA-store epilogue" in n for n in SC.build(cfg).notes)
    assert verify(**SC.build(cfg).verify_kwargs()).status.value == "safe"


@settings(max_examples=12, deadline=None)
@given(sq=st.integers(1, 600), skv=st.integers(1, 600), causal=st.booleans(), wgs=st.sampled_from([1, 2]),
       static=st.booleans(), pick=st.integers(0, 10 ** 6))
def test_every_recorded_instance_keeps_the_store_tasks_releases_behind_its_reads(sq: int, skv: int, causal: bool,
                                                                                wgs: int, static: bool,
                                                                                pick: int) -> None:
    """Whatever the sizes, the viewed tile and the persistence: the store task waits for each buffer once per
    tile, and each release follows the read wait (the async-read rule), so the checker's verdict carries no
    finding (SAFE, or INCONCLUSIVE where the instance is not one the search covers)."""
    tq = 64 * wgs
    m = pick % -(-sq // tq)
    cfg = SC.config(seqlen_q=sq, seqlen_kv=skv, tile_q=tq, consumer_wgs=wgs, causal=causal, q_tile=m,
                    persistence=STATIC if static else Persistence.NONE)
    ts = captured(SC, cfg)
    store = next(t for t in ts.tasks if t.name == "store")
    waits = [s for s in store.schedule.steps() if s.stage is Stage.CONSUMER_WAIT and s.resource != "tiles"]
    assert sorted(s.resource for s in waits) == [f"o{c}" for c in range(wgs)]
    for c in range(wgs):
        assert check_async_reads(ts, store_reads(f"o{c}", wgs)).safe
    verdict = verify(**SC.build(cfg).verify_kwargs())
    assert not verdict.findings, verdict.summary()
