"""The seeded task-set generator: deterministic, always buildable, fresh objects, broad coverage."""

from __future__ import annotations

from task_set_generator import MUTATIONS, generate, generate_many


def test_same_seed_same_spec_and_fresh_objects():
    assert generate(7) == generate(7)
    assert generate(7) != generate(8)
    spec = generate(7)
    a, b = spec.build(), spec.build()
    assert [t.name for t in a["tasks"]] == [t.name for t in b["tasks"]]
    assert not {id(t) for t in a["tasks"]} & {id(t) for t in b["tasks"]}
    assert not {id(r) for r in a["resource_dependency_graph"]} & {id(r) for r in b["resource_dependency_graph"]}


def test_every_spec_builds_into_ts_tasks_within_its_limits():
    for spec in generate_many(150, first_seed=500):
        case = spec.build()
        tasks = case["tasks"]
        assert 2 <= len(tasks) <= 5, spec.describe()
        assert all(1 <= t.iterations <= 9 for t in spec.tasks)  # 8, +1 for a longer consumer
        used = {id(r) for t in tasks for r in [*t.src_resources, *t.dst_resources]}
        assert used <= {id(r) for r in case["resource_dependency_graph"]}, "graph covers every resource"


def test_limits_are_respected():
    for spec in generate_many(60, max_tasks=3, max_iterations=2, max_stages=1):
        assert len(spec.tasks) <= 3
        assert all(t.iterations <= 3 for t in spec.tasks)
        assert all(r.stages == 1 for r in spec.resources if r.kind in ("async", "tma", "tile"))


def test_the_generator_covers_its_promises():
    specs = list(generate_many(600))
    features = {f for s in specs for f in s.features}
    for wanted in ("aliasing", "guard", "opaque", "persistent", "persistent+skip_if", "dma", "head/tail",
                   "pdl wait->launch", "pdl launch first", "two consumers"):
        assert wanted in features, wanted
    assert {s.intent for s in specs} == set(MUTATIONS)
    kinds = {r.kind for s in specs for r in s.resources}
    assert {"async", "tma", "tile", "plain_tile", "dma_tile", "umma", "flags", "pdl_wait", "pdl_launch",
            "queue"} <= kinds
    assert {r.stages for s in specs for r in s.resources if r.kind == "async"} == {1, 2, 3, 4}
    assert {t.iterations for s in specs for t in s.tasks} >= set(range(1, 9))
    text = specs[0].describe()
    assert text.startswith("seed 0:") and "T0" in text
