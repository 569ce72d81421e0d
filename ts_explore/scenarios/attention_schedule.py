"""The TS schedules of the attention tasks: the loader and one consumer warpgroup.

Kept apart from the scenario's knobs so each reads as the kernel's loop does;
a consumer's steps are :class:`Consumer`'s methods, one per technique
(ping-pong's turns, overlap's lagged P·V, the epilogue).
A consumer's K/V iteration, with intra-warpgroup overlap (FlashAttention-3)::

    (first j) wait K[0]; [take the turn]; issue S[0]; [hand the turn over]
              wait S[0]; release K[0]; P[0], stats = softmax(S[0], stats)
    (j >= 1)  wait K[j]; [take the turn]; issue S[j] = Q·K[j]ᵀ
              wait V[j-1]; issue O = O·rescale[j-1] + P[j-1]·V[j-1]; [hand the turn over]
              wait S[j] (the P·V runs on); release K[j]; P[j], stats = softmax(S[j], stats) in fp32
              wait for the P·V; release V[j-1]; pack P[j] into the registers the P·V read
    (last j)  wait V[j]; O = O·rescale[j] + P[j]·V[j]; wait; release V[j]

Each guarded block issues its WGMMA groups and waits for them itself, so the
code the kernel runs for it is straight-line around every group: ptxas keeps
the WGMMAs asynchronous only where each path from a group's issue reaches its
wait, and no register a group in flight reads or writes is redefined before
(P is packed after the P·V that read it completed). A single loop with the
lagged P·V in one guarded block and its wait in another (the schedule before
this one) made ptxas serialise every WGMMA (C7513, C7519).

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

import warnings
from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop

from .attention_store import hand_over
from .common import next_work_tile

FAULTS = frozenset({"broken_turn", "early_release", "early_v_release", "s_wait_before_pv"})


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
                      first: bool, overlap: bool, faults: frozenset[str] = frozenset(), hand_over: bool = False
                      ) -> Any:
    """One consumer warpgroup's schedule (see the module docstring), recorded by :class:`Consumer`.

    ``faults`` plants mistakes (:data:`FAULTS`): ``broken_turn`` makes ``mma0`` wait for the turn before its
    first block too (neither consumer hands it over first); ``early_release`` releases each K stage before
    waiting for its S GEMM; with overlap, ``early_v_release`` frees V[j-1] right after issuing the lagged P·V,
    and ``s_wait_before_pv`` waits for S down to one group before that P·V is issued (so the S GEMM, the newest
    group, is still reading K when K is released). ``hand_over``: the epilogue hands O to the store task through
    ``out``'s pipeline (the TMA-store epilogue) instead of storing it.
    """
    has_take, has_hand, has_wq = take is not None, hand is not None, wq is not None
    resources = [q, k, v, out, *([take] if has_take else []), *([hand] if has_hand else []), *([wq] if has_wq else [])]

    def mma(*proxies: Any) -> None:
        it = iter(proxies)
        me = Consumer(next(it), next(it), next(it), next(it), next(it) if has_take else None,
                      next(it) if has_hand else None, first=first, overlap=overlap, faults=faults,
                      hand_over=hand_over)
        wq = next(it) if has_wq else None
        if wq is None:
            me.tile(n_kv)
            return
        with work_tile_loop(wq):
            me.tile(n_kv)
            next_work_tile(wq)

    mma.__name__ = "mma"
    with warnings.catch_warnings():
        # With overlap, Consumer.start_tile sets the V ring's own copy of P, which no step takes as a routed input.
        warnings.filterwarnings("ignore", message=r"v_smem\.clear_overlapped\(\) produces 'probs'")
        return schedule(mma)(*resources)


class Consumer:
    """The steps one consumer warpgroup records on its proxies, one method per technique.

    A tile is :meth:`start_tile`, one :meth:`block` per K/V block, then
    :meth:`epilogue`. Within a block, ping-pong (``take``/``hand`` given: the
    turn pipelines) is :meth:`take_turn_before`, :meth:`hand_turn` and
    :meth:`take_hand_over_back`; overlap (``overlap=True``) splits the loop
    into :meth:`first_block` and :meth:`later_block`, and the last block
    issues its own P·V (:meth:`finish_in_order`, as every in-order block
    does). The register values (``acc`` for O, ``probs`` for P, ``stats``)
    pass between the methods as the steps' task-local variables.
    """

    def __init__(self, q: Any, k: Any, v: Any, out: Any, take: Any, hand: Any, *, first: bool, overlap: bool,
                 faults: frozenset[str] = frozenset(), hand_over: bool = False) -> None:
        unknown = set(faults) - FAULTS
        if unknown:
            raise ValueError(f"unknown planted fault(s) {sorted(unknown)}; known: {sorted(FAULTS)}")
        self.q, self.k, self.v, self.out, self.take, self.hand = q, k, v, out, take, hand
        self.first, self.overlap, self.faults, self.hand_over = first, overlap, frozenset(faults), hand_over
        self.broken_turn, self.early_release = "broken_turn" in faults, "early_release" in faults

    def tile(self, n_kv: Any) -> None:
        """One work tile: wait for Q, reset the statistics and O, walk the K/V blocks, store O."""
        stats, acc = self.start_tile()
        probs = None  # the first block's softmax gives P its first value
        with domain_loop(0, n_kv, 1) as it:
            acc, probs, stats = self.block(it, acc, probs, stats)
        self.epilogue(acc, stats)

    def start_tile(self) -> tuple[Any, Any]:
        """Wait for this warpgroup's Q rows; fresh statistics and O = 0.

        With overlap also the V ring's copy of P (``clear_overlapped``): the compiler sees a path where the
        lagged P·V reads it before the tile's first block wrote it, and without a value set here, inside this
        warpgroup's code, that path reached the other warpgroup's P (the ring is shared), the two shared P's
        registers, and ptxas serialised every WGMMA (C7512).
        """
        self.q.try_wait()
        self.q.wait()
        stats = self.q.init()
        if self.overlap:
            acc, _ = self.v.clear_overlapped()
            return stats, acc
        return stats, self.v.clear()

    def block(self, it: Any, acc: Any, probs: Any, stats: Any) -> tuple[Any, Any, Any]:
        """One K/V block: in order (S, softmax, P·V) or, with overlap, :meth:`first_block` / :meth:`later_block`
        and the last block's own P·V; mma0 takes the last hand-over at the end."""
        if self.overlap:
            with it.first_iter():
                probs, stats = self.first_block(stats)
            with it.every(1, start=1):
                acc, probs, stats = self.later_block(acc, probs, stats)
            with it.last_iter():
                acc = self.finish_in_order(probs, acc, stats)
                stats = self.q.last_stats(stats=stats)  # the epilogue's writer runs whichever block came last
                self.take_hand_over_back()
            return acc, probs, stats
        self.k.try_wait()
        self.k.wait()
        self.take_turn_before(it)
        scores = self.k.qk()
        if self.hand is not None:
            self.hand_turn()
        self.release_k()
        probs, stats = self.q.softmax(scores=scores, stats=stats)
        acc = self.finish_in_order(probs, acc, stats)
        with it.last_iter():
            self.take_hand_over_back()
        return acc, probs, stats

    def release_k(self, wait: str = "wait_s") -> None:
        """Wait for the S GEMM (``wait``: the K ring's step that does), then free the K stage (the planted
        ``early_release`` frees it first)."""
        if self.early_release:
            self.k.release()
            getattr(self.k, wait)()
        else:
            getattr(self.k, wait)()
            self.k.release()

    def epilogue(self, acc: Any, stats: Any) -> None:
        """Free the Q rows and store O with its log-sum-exp, or (``hand_over``) write them into the warpgroup's O
        buffer and commit it to the store task (:func:`~.attention_store.hand_over`)."""
        self.q.release()
        if self.hand_over:
            hand_over(self.out, acc, stats)
        else:
            self.out.store(acc_o=acc, stats=stats)

    # -- in order: the block's own P·V follows its softmax ---------------------------------------------------
    def finish_in_order(self, probs: Any, acc: Any, stats: Any) -> Any:
        acc = self.pv(probs, acc, stats)
        self.v.wait_o()
        self.v.release()
        return acc

    # -- overlap: P·V of block j-1 is issued after S[j], so the softmax of block j runs under it ---------------
    # Each guarded block issues its WGMMA groups and waits for them itself, in straight-line code: ptxas pairs a
    # group with its wait only along one path, and writes P's registers (pack) only after the GEMM reading them.
    def first_block(self, stats: Any) -> tuple[Any, Any]:
        """Block 0: S[0], its softmax and P; no P·V is in flight yet (mma0 starts with the turn)."""
        self.k.try_wait()
        self.k.wait()
        if self.take is not None and not (self.first and not self.broken_turn):
            self.take_turn()
        scores = self.k.qk()
        if self.hand is not None:
            self.hand_turn()
        self.release_k()
        probs, stats = self.q.softmax(scores=scores, stats=stats)
        return probs, stats

    def later_block(self, acc: Any, probs: Any, stats: Any) -> tuple[Any, Any, Any]:
        """Block j >= 1: issue S[j], then the lagged P·V of block j-1; the softmax of block j runs while that
        P·V does; then wait for it, free V[j-1] and pack P[j] into the registers it read."""
        self.k.try_wait()
        self.k.wait()
        if self.take is not None:
            self.take_turn()
        scores = self.k.qk()
        if "s_wait_before_pv" in self.faults:
            self.release_k("wait_s_keep_pv")
        acc = self.pv(probs, acc, stats)
        if "early_v_release" in self.faults:
            self.v.release()
        if self.hand is not None:
            self.hand_turn()
        if "s_wait_before_pv" not in self.faults:
            self.release_k("wait_s_keep_pv")
        weights, stats = self.q.softmax_unpacked(scores=scores, stats=stats)
        self.v.wait_o()
        if "early_v_release" not in self.faults:
            self.v.release()
        probs = self.q.pack(weights=weights)
        return acc, probs, stats

    # -- ping-pong: mma0 and mma1 pass the right to issue WGMMA through the turn pipelines --------------------
    def take_turn_before(self, it: Any) -> None:
        """Take the turn before the S GEMM (mma0 starts with it: from its second block on)."""
        if self.take is None:
            return
        if self.first and not self.broken_turn:
            with it.every(1, start=1):  # mma0 starts with the turn
                self.take_turn()
        else:
            self.take_turn()

    def take_hand_over_back(self) -> None:
        """mma0, after its last block (in a ``last_iter`` block): take the other warpgroup's hand-over of its
        last block (none without blocks), so every hand-over is taken."""
        if self.take is not None and self.first:
            self.take_turn()

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
        """Wait for the V stage and issue O += P·V."""
        self.v.try_wait()
        self.v.wait()
        return self.v.pv(probs=probs, acc_o=acc, stats=stats)


__all__ = ["Consumer", "FAULTS", "consumer_schedule", "load_schedule"]
