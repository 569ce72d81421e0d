"""A pipeline that several consumer tasks read in full: search each consumer alone with the producer.

TS counts the consumers of a pipeline together. With n consumer tasks every
n-th wait takes a commit credit and every n-th release gives back an empty
slot, whoever waits or releases; so one consumer may pass a wait on a credit
another has not used yet and run any number of tiles ahead of it. No number
of searched tiles covers that model, and the tile-loop search of the whole
set (:mod:`ts_explore.check.tile_search`) does not close on it.

The hardware does not pool. Each consumer waits for the commit of the stage
it reads (its own phase of the stage's barrier), and a slot is free again
once *every* consumer has released it. In that model a pipeline ``R`` with one
producer task and consumer tasks that use no other credit-tracked pipeline
(the *shared pool*) splits into *projections*: the task set without all but
one of ``R``'s consumers, where ``R`` has one consumer and TS's counting is
exact. A deadlock of the whole set is a deadlock of one projection:

- take a stuck state of the whole set. If the producer is stuck acquiring a
  slot of ``R``, some consumer ``c`` has not released it: keep ``c``. Else keep
  a consumer that is stuck (if none is, any consumer);
- leaving out the other consumers only leaves out releases that the kept
  consumer's projection no longer requires (they use no other pipeline), so
  the projected run is a run of the projection, and every kept task that was
  stuck is still stuck: the projection deadlocks.

A race between two tasks of which at most one is a consumer of ``R`` is a race
of the projection that keeps that consumer (ownership of what both touch is
the same there); consumers of ``R`` only read ``R``, so two of them race only
on other resources, which :func:`ts_explore.check.projection.project` refuses
when they alias. The argument holds at every tile count, and every
projection has one producer and one consumer per pipeline, so the tile-loop
search of each projection (:mod:`ts_explore.verification.tile_proof`) covers
every number of tiles.

>>> from ts_explore.model import Stage
>>> from ts_explore.model.interleaving import CheckerStep, CreditModel, CreditPool, Lane
>>> def lane(task, *stages):
...     return Lane(task, tuple(CheckerStep(task, i, "ring", s, 0, None, "", None) for i, s in enumerate(stages)))
>>> p = lane("load", Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_COMMIT)
>>> c0, c1 = (lane(f"mma{c}", Stage.CONSUMER_WAIT, Stage.CONSUMER_RELEASE) for c in (0, 1))
>>> model = CreditModel((CreditPool("ring", 0, 2),), consumers=(("ring", 2),))
>>> pool, why = shared_pool((p, c0, c1), model)
>>> pool, why
(SharedPool(resource='ring', producer='load', consumers=('mma0', 'mma1')), '')
>>> lanes, alone = projection((p, c0, c1), model, pool, "mma1")
>>> [lane.task for lane in lanes], alone.consumer_count("ring")
(['load', 'mma1'], 1)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ..model import Stage
from ..model.interleaving import CreditModel, Lane

_PRODUCER = (Stage.PRODUCER_ACQUIRE, Stage.PRODUCER_COMMIT)
_CONSUMER = (Stage.CONSUMER_WAIT, Stage.CONSUMER_RELEASE)


@dataclass(frozen=True)
class SharedPool:
    """A pipeline with one producer task and several consumer tasks that each read every stage."""

    resource: str
    producer: str
    consumers: tuple[str, ...]


def shared_pool(lanes: Sequence[Lane], model: CreditModel) -> tuple[SharedPool | None, str]:
    """The one shared pool of ``lanes`` (one tile of each task), or None and why the projections do not apply."""
    if model.approximate:
        return None, "a PipelineGroup shares credits between resources"
    if any(pool.slot for pool in model.pools):
        return None, "a pipeline keeps one credit pool per stage"
    tracked = {pool.resource for pool in model.pools}
    producers: dict[str, set[str]] = {}
    consumers: dict[str, set[str]] = {}
    for lane in lanes:
        for step in lane.steps:
            if step.tracked and step.resource in tracked:
                if step.stage in _PRODUCER:
                    producers.setdefault(step.resource, set()).add(lane.task)
                elif step.stage in _CONSUMER:
                    consumers.setdefault(step.resource, set()).add(lane.task)
    shared = [r for r, tasks in consumers.items() if len(tasks) > 1]
    if len(shared) != 1:
        return None, f"{len(shared)} pipelines have several consumer tasks (the projections handle one)"
    (name,) = shared
    readers = consumers[name]
    if len(producers.get(name, ())) != 1 or model.producer_count(name) != 1:
        return None, f"{name} has several producer tasks"
    if model.consumer_count(name) != len(readers):
        return None, f"{name} counts {model.consumer_count(name)} consumers per round but {len(readers)} tasks read it"
    for other, tasks in [*producers.items(), *consumers.items()]:
        if other != name and tasks & readers:
            return None, f"a consumer of {name} also uses {other}, so leaving it out changes that pipeline too"
    order = [lane.task for lane in lanes]
    return SharedPool(name, next(iter(producers[name])), tuple(sorted(readers, key=order.index))), ""


def projection(lanes: Sequence[Lane], model: CreditModel, pool: SharedPool,
               keep: str) -> tuple[tuple[Lane, ...], CreditModel]:
    """The lanes and credit model of the projection that keeps consumer ``keep`` of ``pool`` and drops the others."""
    dropped = set(pool.consumers) - {keep}
    consumers = tuple((r, n) for r, n in model.consumers if r != pool.resource)
    return tuple(lane for lane in lanes if lane.task not in dropped), replace(model, consumers=consumers)


__all__ = ["SharedPool", "projection", "shared_pool"]
