"""The persistent tile-set generator: deterministic, real TS objects every call, the shapes it promises."""

from __future__ import annotations

import math

from cutlass.experimental.task_scheduling.resources import PipelineGroup, WorkQueue
from tile_brute import unrolled
from tile_sets import GROUP, RING, drift, tile_set, tile_sets

SETS = tile_sets(400)


def test_same_seed_same_spec_and_fresh_objects():
    assert tile_set(11) == tile_set(11) and tile_set(11) != tile_set(12)
    spec = tile_set(11)
    a, b = spec.build(), spec.build()
    assert [t.name for t in a["tasks"]] == [t.name for t in b["tasks"]]
    assert not {id(t) for t in a["tasks"]} & {id(t) for t in b["tasks"]}
    assert not {id(r) for r in a["resource_dependency_graph"]} & {id(r) for r in b["resource_dependency_graph"]}


def test_every_set_is_persistent_ts_tasks_over_one_static_queue():
    for spec in SETS[:120]:
        tasks = spec.build()["tasks"]
        assert all(t.is_persistent for t in tasks), spec.describe()
        queues = {id(r) for t in tasks for r in t.src_resources if isinstance(r, WorkQueue)}
        assert len(queues) == 1, spec.describe()
        assert all((t.skip_if is not None) == spec.skip_if for t in tasks), spec.describe()


def test_the_generator_covers_its_promises():
    features = {f for s in SETS for f in s.features}
    for wanted in ("aliased rings", "rings drifting in phase", "token pipe", "gate", "pipeline group",
                   "plain tile", "skip_if", "skippable head", "head/tail work"):
        assert wanted in features, wanted
    rings = [(s, b) for s in SETS for b in s.buffers if b.kind == RING]
    assert {b.stages for _, b in rings} == {1, 2, 3, 4}
    assert {s.uses_per_tile(b.name, "produce") for s, b in rings} == {1, 2, 3}
    assert {b.offset for _, b in rings} >= {0, 256, 512, 1024}  # full, partial and no overlap
    drifting = [s for s in SETS if len({(s.buffer(b).stages, s.uses_per_tile(b, "produce"))
                                        for b in (x.name for x in s.buffers if x.kind == RING)}) > 1]
    assert len(drifting) > len(SETS) // 2, "most sets alias rings of different stage counts or uses per tile"
    assert any(len(s.tasks) == 3 for s in SETS) and any(len(s.tasks) == 2 for s in SETS)
    groups = [s for s in SETS if any(b.kind == GROUP for b in s.buffers)]
    built = groups[0].build()["tasks"]
    assert any(isinstance(getattr(r, "pipeline_group", None), PipelineGroup)
               for t in built for r in t.src_resources)


def test_tiles_needed_is_twice_the_longest_period_plus_the_lead_and_at_least_8():
    for spec in SETS[:80]:
        assert spec.tiles_needed() == max(8, 2 * spec.longest_period() + spec.lead())
    spec = drift(4, 3)
    assert spec.period("ring0") == 4 and spec.period("ring1") == 3
    assert spec.lead() == 2  # a one-slot token: ceil(1 stage / 1 use) + 1 tiles ahead at most
    assert spec.tiles_needed() == 10


def test_a_set_prints_as_a_description():
    text = drift(4, 3).describe()
    assert text.splitlines()[0].startswith("tile set 0:")
    assert "ring0: ring x4 @0, period 4" in text and "T1 (1 it): head - ; loop pipe.consumex1 ring1.ownx1" in text
    assert "tiles needed: 10 (period 4, lead 2)" in text


def test_the_brute_force_finds_the_race_that_needs_five_tiles():
    spec = drift(4, 3)  # ring phases (t mod 4) and (t mod 3) meet first when one task leads at tile 4
    found = unrolled(spec.build, spec.tiles_needed())
    assert found.answer == "race" and dict(found.first_tiles) == {"race": 5}
    assert math.lcm(4, 3) == 12  # the phases repeat only after 12 tiles: two or three tiles show nothing
    assert unrolled(spec.build, 4).answer == "safe"
    assert unrolled(drift(4, 4).build, 10).answer == "safe"  # equal rings stay a tile apart forever
