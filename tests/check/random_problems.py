"""Seeded random :class:`SearchProblem` instances, written directly (no TS objects).

TS-built task sets only produce the step sequences TS's pipelines allow;
the checker's semantics is defined for any lane, and these problems reach
shapes TS rarely builds: ownership steps on aliased resources in any order,
waits and acquires of different tasks on one slot, shared every-n-th
tallies, PDL waits and launches anywhere, PipelineGroup merge releases and
fused-merge waits over several members, completion commits and waits that
tag and clear DMA reads by generation, domain-interleaved resources. Used to look for cases where a
reduction clause is needed, and by the differential tests of the two
engines.
"""

from __future__ import annotations

import random

from ts_explore.check.problem import (
    ACQUIRE,
    CONS,
    CONSUME,
    PROD,
    PRODUCE,
    RELEASE,
    SLOTLESS,
    WAIT,
    Counter,
    CreditEffect,
    HeldOp,
    SearchProblem,
    Step,
)

_OPS = ("acquire", "produce", "commit", "wait", "consume", "release", "local", "pdl_wait", "pdl_launch",
        "merge_release", "fused_wait")


def random_problem(seed: int, max_tasks: int = 4, max_steps: int = 6) -> SearchProblem:
    """The problem of ``seed``: 2-``max_tasks`` tasks of 1-``max_steps`` steps over 2-3 resources."""
    rng = random.Random(seed)
    n_res = rng.randint(2, 3)
    aliased = frozenset(r for r in range(n_res) if rng.random() < 0.7)
    alias = [set() for _ in range(n_res)]
    for a in aliased:
        for b in aliased:
            if a < b and rng.random() < 0.7:
                alias[a].add(b)
                alias[b].add(a)
        if rng.random() < 0.5:
            alias[a].add(a)
    table = tuple(frozenset(s) for s in alias)
    counters = tuple(Counter(r, 0, "commit", rng.randint(0, 1)) for r in range(n_res)) + tuple(
        Counter(r, 0, "empty", rng.randint(1, 2)) for r in range(n_res)
    )
    every = [rng.choice((1, 1, 2)) for _ in range(2 * n_res)]
    tally_of: dict[tuple[int, int], int] = {}  # one tally per (counter, direction), as TS counts

    def effect(counter: int, delta: int) -> CreditEffect:
        if every[counter] == 1:
            return CreditEffect(counter, delta)
        tally = tally_of.setdefault((counter, delta), len(tally_of))
        return CreditEffect(counter, delta, tally, every[counter])

    dma = frozenset(r for r in aliased if rng.random() < 0.25)
    lanes = []
    for _ in range(rng.randint(2, max_tasks)):
        lane = []
        for _ in range(rng.randint(1, max_steps)):
            op = rng.choice(_OPS)
            r = rng.randrange(n_res)
            slot = rng.choice((0, 0, 1, SLOTLESS))
            own = r in aliased
            commit, empty = r, n_res + r
            members = tuple((m, rng.choice((0, 1))) for m in sorted(rng.sample(range(n_res), rng.randint(1, n_res))))
            if op == "merge_release":
                lane.append(Step(r, "ConsumerRelease", effects=(effect(empty, +1),),
                                 held=HeldOp(merge_release=members)))
            elif op == "fused_wait":
                lane.append(Step(r, "ConsumerWait", commit, (effect(commit, -1),), held=HeldOp(fused_wait=members)))
            elif op == "acquire":
                lane.append(Step(r, "ProducerAcquire", empty, (effect(empty, -1),),
                                 held=HeldOp(ACQUIRE, slot) if own else None))
            elif op == "produce":
                lane.append(Step(r, "ProducerWork", point=(slot, PROD) if own else None,
                                 held=HeldOp(PRODUCE, slot, closes_window=rng.random() < 0.2) if own else None))
            elif op == "commit":
                tagged = tuple(sorted(dma & set(rng.sample(range(n_res), 1)))) if rng.random() < 0.5 else ()
                held = HeldOp(tag_commit=tagged, generation=rng.randint(0, 1)) if tagged else None
                lane.append(Step(r, "ProducerCommit", effects=(effect(commit, +1),), held=held))
            elif op == "wait":
                cleared = tuple(sorted(dma & set(rng.sample(range(n_res), 1)))) if rng.random() < 0.5 else ()
                held = HeldOp(WAIT if own else "", slot, clear_wait=cleared, generation=rng.randint(0, 1))
                lane.append(Step(r, "ConsumerWait", commit, (effect(commit, -1),),
                                 held=held if own or cleared else None))
            elif op == "consume":
                write = rng.random() < 0.2
                lane.append(Step(r, "ConsumerWork", point=(slot, PROD if write else CONS) if own else None,
                                 held=HeldOp(CONSUME, slot, write_phase=write) if own else None))
            elif op == "release":
                lane.append(Step(r, "ConsumerRelease", effects=(effect(empty, +1),),
                                 held=HeldOp(RELEASE, slot) if own else None))
            elif op == "pdl_wait":
                lane.append(Step(r, "PdlWait", pdl_wait=True))
            elif op == "pdl_launch":
                lane.append(Step(r, "PdlLaunch", pdl_launch=True))
            else:
                lane.append(Step(r, "ProducerAuxWork"))
        lanes.append(tuple(lane))
    return SearchProblem(
        tasks=tuple(f"T{i}" for i in range(len(lanes))),
        lanes=tuple(lanes),
        resources=tuple(f"r{i}" for i in range(n_res)),
        counters=counters,
        tallies=len(tally_of),
        alias=table,
        prod_alias=table,
        cons_alias=table,
        aliased=aliased,
        race_check=any(table),
        dma_consumers=dma,
        domain_interleaved=frozenset(r for r in aliased if rng.random() < 0.2),
        assume_pdl_wait_completed=rng.random() < 0.1,
    )


__all__ = ["random_problem"]
