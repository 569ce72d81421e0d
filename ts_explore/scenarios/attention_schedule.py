"""The TS schedules of the attention tasks: the loader and one consumer warpgroup.

Kept apart from the scenario's knobs so each reads as the kernel's loop does.
A consumer's K/V iteration, with intra-warpgroup overlap (FlashAttention-3)::

    wait K[j]; [take the turn]; issue S[j] = Q·K[j]ᵀ
    (j >= 1) wait V[j-1]; issue O = O·rescale[j-1] + P[j-1]·V[j-1]
    [hand the turn over]; wait S[j]; release K[j]; P[j], stats = softmax(S[j], stats)
    (j >= 1) wait for P·V; release V[j-1]
    (last j) wait V[j]; O = O·rescale[j] + P[j]·V[j]; wait; release V[j]

Without overlap the P·V GEMM of block j follows its softmax in the same
iteration. Each register value lives in one task-local variable that the
steps read and write in place, so it carries from one iteration to the next:
O in ``v_smem``'s ``acc_o`` (cleared per tile), the row statistics (max, sum
and the factor the next P·V rescales O by) in the Q tile's ``stats``.

With ping-pong, ``mma0`` takes the turn from the second block on (it starts
with it) and takes the last hand-over at the end of its last
block, so every hand-over is taken, and a Q tile with no K/V block (causal)
waits for none.
"""

from __future__ import annotations

from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop

from .common import next_work_tile


def load_schedule(src: Any, qs: list[Any], k: Any, v: Any, wq: Any, n_kv: Any) -> Any:
    """Q of every consumer once per tile, then K[j] and V[j] for each block j."""
    resources = [src, *qs, k, v, *([wq] if wq is not None else [])]
    nq = len(qs)

    def load(*proxies: Any) -> None:
        src, qs, (k, v) = proxies[0], proxies[1:1 + nq], proxies[1 + nq:3 + nq]
        wq = proxies[3 + nq] if len(proxies) > 3 + nq else None
        if wq is None:
            tile(src, qs, k, v)
            return
        with work_tile_loop(wq):
            tile(src, qs, k, v)
            next_work_tile(wq)

    def tile(src: Any, qs: Any, k: Any, v: Any) -> None:
        q_block = src.tile()
        for q in qs:
            q.try_acquire()
            q.acquire()
            q.load(q_block=q_block)
            q.commit()
        with domain_loop(0, n_kv, 1):
            q_block, kv_block = src.locate()
            for ring in (k, v):
                ring.try_acquire()
                ring.acquire()
                ring.load(q_block=q_block, kv_block=kv_block)
                ring.commit()

    return schedule(load)(*resources)


def consumer_schedule(q: Any, k: Any, v: Any, out: Any, take: Any, hand: Any, wq: Any, n_kv: Any, *,
                      first: bool, overlap: bool, broken_turn: bool = False, early_release: bool = False) -> Any:
    """One consumer warpgroup's schedule (see the module docstring).

    Planted mistakes: ``broken_turn`` makes ``mma0`` wait for the turn before its first block too (neither
    consumer hands it over first); ``early_release`` releases each K stage before waiting for its S GEMM.
    """
    has_take, has_hand, has_wq = take is not None, hand is not None, wq is not None
    resources = [q, k, v, out, *([take] if has_take else []), *([hand] if has_hand else []), *([wq] if has_wq else [])]

    def mma(*proxies: Any) -> None:
        it = iter(proxies)
        r = _Roles(next(it), next(it), next(it), next(it), next(it) if has_take else None,
                   next(it) if has_hand else None)
        wq = next(it) if has_wq else None
        if wq is None:
            tile(r)
            return
        with work_tile_loop(wq):
            tile(r)
            next_work_tile(wq)

    def tile(r: _Roles) -> None:
        r.q.try_wait()
        r.q.wait()
        if overlap:
            stats, probs = r.q.init_overlapped()
        else:
            stats = r.q.init()
        acc = r.v.clear()
        with domain_loop(0, n_kv, 1) as it:
            r.k.try_wait()
            r.k.wait()
            if r.take is not None:
                if first and not broken_turn:
                    with it.every(1, start=1):  # mma0 starts with the turn
                        r.take_turn()
                else:
                    r.take_turn()
            scores = r.k.qk()
            if overlap:
                with it.every(1, start=1):
                    acc = r.pv(probs, acc, stats)
            if r.hand is not None:
                r.hand_turn()
            if early_release:
                r.k.release()
                r.k.wait_s()
            else:
                r.k.wait_s()
                r.k.release()
            probs, stats = r.q.softmax(scores=scores, stats=stats)
            if overlap:
                with it.every(1, start=1):
                    r.v.wait_o()
                    r.v.release()
                with it.last_iter():
                    acc = r.pv(probs, acc, stats)
                    r.v.wait_o()
                    r.v.release()
            else:
                acc = r.pv(probs, acc, stats)
                r.v.wait_o()
                r.v.release()
            if r.take is not None and first:
                with it.last_iter():
                    r.take_turn()  # the other warpgroup's hand-over of its last block (none without blocks)
        r.q.release()
        r.out.store(acc_o=acc, stats=stats)

    mma.__name__ = "mma"
    return schedule(mma)(*resources)


class _Roles:
    """The proxies one consumer's schedule records on, with the multi-step idioms it repeats."""

    def __init__(self, q: Any, k: Any, v: Any, out: Any, take: Any, hand: Any) -> None:
        self.q, self.k, self.v, self.out, self.take, self.hand = q, k, v, out, take, hand

    def take_turn(self) -> None:
        self.take.try_wait()
        self.take.wait()
        self.take.take()
        self.take.release()

    def hand_turn(self) -> None:
        self.hand.try_acquire()
        self.hand.acquire()
        self.hand.hand_over()
        self.hand.commit()

    def pv(self, probs: Any, acc: Any, stats: Any) -> Any:
        self.v.try_wait()
        self.v.wait()
        return self.v.pv(probs=probs, acc_o=acc, stats=stats)


__all__ = ["consumer_schedule", "load_schedule"]
