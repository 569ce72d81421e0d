"""Our checker against TS's ``check_all_interleavings`` on the same instances.

Every hand-made set (gallery broken and fixed, the verification builders,
each seed example as a one-task set, the scenario defaults, small members of
the GEMM-shaped family) and generated sets (``tests/task_set_generator.py``)
are checked in every variant TaskManager runs (each opaque assignment,
normal and skipped tile, two tiles with a WorkQueue), by TS and by ours:

* unreduced, ours must equal TS exactly: verdict, states explored, the
  blocked (task, resource, stage) of every deadlock state, race pairs and
  PDL launches, with and without early exit;
* reduced, ours must give TS's verdict, finding kinds and deadlock states.

Instances whose search passes the cap are skipped.

Tiers: the default run checks ``FAST_SETS`` generated sets of 2-4 tasks and
1-4 iterations. With ``TS_EXPLORE_SOAK=1`` the generated part is the soak
tier instead: 5,000 sets of 2-5 tasks and 1-8 iterations, cap 50,000 states
(about an hour on 2 cores: ``TS_EXPLORE_SOAK=1 pytest -n 2 tests/check``;
``TS_EXPLORE_SOAK_SEED=<n>`` moves the first seed).
"""

from __future__ import annotations

import os

import pytest
from check_cases import HAND_MADE
from check_parity import compare, variants
from task_set_generator import generate

SOAK = os.environ.get("TS_EXPLORE_SOAK") == "1"
FIRST_SEED = int(os.environ.get("TS_EXPLORE_SOAK_SEED", "0")) if SOAK else 0
FAST_SETS, SOAK_SETS = 120, 5000  # the fast sets are the ones test_generated_sets_cover_every_finding_kind vets
SETS = SOAK_SETS if SOAK else FAST_SETS
CHUNK = 50 if SOAK else 20
LIMITS = {"max_tasks": 5, "max_iterations": 8} if SOAK else {"max_tasks": 4, "max_iterations": 4}
CAP = 50_000 if SOAK else 5_000


def _check(name: str, tasks: list, cap: int) -> tuple[int, list[str]]:
    checked, problems = 0, []
    for variant in variants(tasks):
        found = compare(tasks, variant, cap)
        if found is None:
            continue
        checked += 1
        problems += [f"{name} {variant}: {p}" for p in found]
    return checked, problems


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_hand_made_sets_agree_with_ts(name):
    checked, problems = _check(name, HAND_MADE[name](), 200_000)
    assert checked, f"{name}: every variant passed the cap"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("first", range(FIRST_SEED, FIRST_SEED + SETS, CHUNK))
def test_generated_sets_agree_with_ts(first):
    total, problems = 0, []
    for seed in range(first, min(first + CHUNK, FIRST_SEED + SETS)):
        spec = generate(seed, **LIMITS)
        checked, found = _check(f"seed {seed}", spec.build()["tasks"], CAP)
        total += checked
        if found:
            problems.append(spec.describe() + "\n" + "\n".join(found))
    assert total >= CHUNK // 2, f"only {total} variants under the cap in seeds {first}..{first + CHUNK - 1}"
    assert not problems, "\n\n".join(problems)


def test_generated_sets_cover_every_finding_kind():
    """The fast tier is only worth something if it meets safe sets and every kind of finding."""
    from check_parity import run_ts

    kinds: set[str] = set()
    safe = 0
    for seed in range(FAST_SETS):
        tasks = generate(seed, **LIMITS).build()["tasks"]
        for variant in variants(tasks)[:1]:
            facts = run_ts(tasks, max_states=CAP, early_exit=False, **variant)
            kinds |= facts.kinds
            safe += facts.safe and not facts.capped
    assert kinds == {"deadlock", "race", "pdl-order"}
    assert safe >= 20


def test_alias_maps_passed_in_are_honoured():
    """``check_all_interleavings(tasks, alias_map=...)`` overrides the SMEM layout, in both checkers."""
    from ts_explore import gallery

    tasks = gallery.get("smem_alias_race").fixed()["tasks"]  # own bytes: no race by layout
    a, b = (next(r for t in tasks for r in t.dst_resources if r.name == n) for n in ("tile_a", "tile_b"))
    forced = {
        "alias_map": {id(a): {id(b)}, id(b): {id(a)}},
        "prod_alias_map": {id(a): {id(b)}, id(b): {id(a)}},
        "cons_alias_map": {id(a): {id(b)}, id(b): {id(a)}},
        "overlap_descs": {(min(id(a), id(b)), max(id(a), id(b))): "smem[0:64] (forced)"},
    }
    assert not compare(tasks, forced, 10_000)
    from check_parity import run_ours

    assert run_ours(tasks, True, **forced).kinds == {"race"}
    assert run_ours(tasks, True).safe
