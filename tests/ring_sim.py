"""A discrete-event producer/consumer ring that writes a Timeline, for testing the stall report and the model.

One CTA: a producer task (``load``, ``producer_warps`` warps) acquires a slot
(blocking until the consumer released the item ``stages`` before), loads for
``load_ns`` (split over its warps), commits for ``commit_ns``; the item is full
``latency_ns`` after the load ends. A consumer task (``store``,
``consumer_warps`` warps) waits for it (blocking), works ``work_ns`` (split over
its warps), releases for ``release_ns``. Every warp of a task runs the same
times; the waits are exactly the time a warp is blocked, so the sums are known.
"""

from __future__ import annotations

from dataclasses import dataclass

from ts_explore.model import Family, Section, Stage
from ts_explore.model.timeline import TaskWarps, Timeline, TimelineEvent


@dataclass(frozen=True)
class Ring:
    stages: int = 2
    items: int = 48
    load_ns: int = 200
    commit_ns: int = 20
    latency_ns: int = 1500
    work_ns: int = 400
    release_ns: int = 20
    producer_warps: int = 1
    consumer_warps: int = 4


def simulate(r: Ring, cta: int = 0) -> Timeline:
    """The ring's events for one CTA (times in ns from 0)."""
    released: list[int] = []
    producer: list[tuple[str, Stage, Family, int, int, int]] = []  # (label, stage, family, iteration, start, end)
    consumer: list[tuple[str, Stage, Family, int, int, int]] = []
    full: list[int] = []
    load = r.load_ns // r.producer_warps
    work = r.work_ns // r.consumer_warps
    # The producer runs ahead of the consumer by at most ``stages`` items: interleave the two in item order.
    tp = tc = 0
    for k in range(r.items):
        free = released[k - r.stages] if k >= r.stages else 0
        got = max(tp, free)
        producer.append(("smem.acquire", Stage.PRODUCER_ACQUIRE, Family.ACQUIRE, k, tp, got))
        producer.append(("smem.load", Stage.PRODUCER_WORK, Family.PRODUCER_WORK, k, got, got + load))
        producer.append(("smem.commit", Stage.PRODUCER_COMMIT, Family.COMMIT, k, got + load, got + load + r.commit_ns))
        tp = got + load + r.commit_ns
        full.append(got + load + r.latency_ns)
        # the consumer can only run item k once it is full; item k's release frees slot k for item k + stages
        ready = max(tc, full[k])
        consumer.append(("smem.wait", Stage.CONSUMER_WAIT, Family.WAIT, k, tc, ready))
        consumer.append(("smem.read", Stage.CONSUMER_WORK, Family.CONSUMER_WORK, k, ready, ready + work))
        end = ready + work + r.release_ns
        consumer.append(("smem.release", Stage.CONSUMER_RELEASE, Family.RELEASE, k, ready + work, end))
        released.append(end)
        tc = end
    steps = {"smem.acquire": 0, "smem.load": 1, "smem.commit": 2, "smem.wait": 0, "smem.read": 1, "smem.release": 2}
    events = []
    warps = ([("load", w, producer) for w in range(r.consumer_warps, r.consumer_warps + r.producer_warps)]
             + [("store", w, consumer) for w in range(r.consumer_warps)])
    for task, warp, rows in warps:
        for label, stage, family, k, start, end in rows:
            events.append(TimelineEvent(task, cta, warp, steps[label], label, stage, family, Section.LOOP, k, cta,
                                        start, end))
    tasks = (TaskWarps("store", 0, r.consumer_warps),
             TaskWarps("load", r.consumer_warps, r.consumer_warps + r.producer_warps))
    return Timeline("ring", tuple(events), tasks)


def span(r: Ring) -> int:
    return simulate(r).span_ns
