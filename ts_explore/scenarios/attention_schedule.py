"""The TS schedules of the attention tasks: the loader and one consumer warpgroup.

Kept apart from the scenario's knobs so each reads as the kernel's loop does;
a consumer's steps are :class:`Consumer`'s methods, one per technique
(ping-pong's turns, overlap's lagged P·V, the epilogue).
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
    """One consumer warpgroup's schedule (see the module docstring), recorded by :class:`Consumer`.

    Planted mistakes: ``broken_turn`` makes ``mma0`` wait for the turn before its first block too (neither
    consumer hands it over first); ``early_release`` releases each K stage before waiting for its S GEMM.
    """
    has_take, has_hand, has_wq = take is not None, hand is not None, wq is not None
    resources = [q, k, v, out, *([take] if has_take else []), *([hand] if has_hand else []), *([wq] if has_wq else [])]

    def mma(*proxies: Any) -> None:
        it = iter(proxies)
        me = Consumer(next(it), next(it), next(it), next(it), next(it) if has_take else None,
                      next(it) if has_hand else None, first=first, overlap=overlap, broken_turn=broken_turn,
                      early_release=early_release)
        wq = next(it) if has_wq else None
        if wq is None:
            me.tile(n_kv)
            return
        with work_tile_loop(wq):
            me.tile(n_kv)
            next_work_tile(wq)

    mma.__name__ = "mma"
    return schedule(mma)(*resources)


class Consumer:
    """The steps one consumer warpgroup records on its proxies, one method per technique.

    A tile is :meth:`start_tile`, one :meth:`block` per K/V block, then
    :meth:`epilogue`. Within a block, ping-pong (``take``/``hand`` given: the
    turn pipelines) is :meth:`take_turn_before`, :meth:`hand_turn` and
    :meth:`take_last_hand_over`; overlap (``overlap=True``) is
    :meth:`overlapped_pv` and :meth:`finish_overlapped` where the in-order
    block runs :meth:`finish_in_order`. The register values (``acc`` for O,
    ``probs`` for P, ``stats``) pass between the methods as the steps'
    task-local variables.
    """

    def __init__(self, q: Any, k: Any, v: Any, out: Any, take: Any, hand: Any, *, first: bool, overlap: bool,
                 broken_turn: bool = False, early_release: bool = False) -> None:
        self.q, self.k, self.v, self.out, self.take, self.hand = q, k, v, out, take, hand
        self.first, self.overlap, self.broken_turn, self.early_release = first, overlap, broken_turn, early_release

    def tile(self, n_kv: Any) -> None:
        """One work tile: wait for Q, reset the statistics and O, walk the K/V blocks, store O."""
        stats, probs = self.start_tile()
        acc = self.v.clear()
        with domain_loop(0, n_kv, 1) as it:
            acc, probs, stats = self.block(it, acc, probs, stats)
        self.epilogue(acc, stats)

    def start_tile(self) -> tuple[Any, Any]:
        """Wait for this warpgroup's Q rows; fresh statistics (with overlap also P's registers)."""
        self.q.try_wait()
        self.q.wait()
        if self.overlap:
            stats, probs = self.q.init_overlapped()
            return stats, probs
        return self.q.init(), None

    def block(self, it: Any, acc: Any, probs: Any, stats: Any) -> tuple[Any, Any, Any]:
        """One K/V block: S = Q·K[j]ᵀ, (overlap: P·V of block j-1), the softmax, P·V; the turns around the GEMMs."""
        self.k.try_wait()
        self.k.wait()
        self.take_turn_before(it)
        scores = self.k.qk()
        if self.overlap:
            acc = self.overlapped_pv(it, probs, acc, stats)
        if self.hand is not None:
            self.hand_turn()
        self.release_k()
        probs, stats = self.q.softmax(scores=scores, stats=stats)
        if self.overlap:
            acc = self.finish_overlapped(it, probs, acc, stats)
        else:
            acc = self.finish_in_order(probs, acc, stats)
        self.take_last_hand_over(it)
        return acc, probs, stats

    def release_k(self) -> None:
        """Wait for the S GEMM, then free the K stage (the planted ``early_release`` frees it first)."""
        if self.early_release:
            self.k.release()
            self.k.wait_s()
        else:
            self.k.wait_s()
            self.k.release()

    def epilogue(self, acc: Any, stats: Any) -> None:
        """Free the Q rows and store O with its log-sum-exp."""
        self.q.release()
        self.out.store(acc_o=acc, stats=stats)

    # -- in order: the block's own P·V follows its softmax ---------------------------------------------------
    def finish_in_order(self, probs: Any, acc: Any, stats: Any) -> Any:
        acc = self.pv(probs, acc, stats)
        self.v.wait_o()
        self.v.release()
        return acc

    # -- overlap: P·V of block j-1 is issued after S[j], so the softmax of block j runs under it ---------------
    def overlapped_pv(self, it: Any, probs: Any, acc: Any, stats: Any) -> Any:
        """From the second block on: the previous block's P·V, issued right after this block's S GEMM."""
        with it.every(1, start=1):
            acc = self.pv(probs, acc, stats)
        return acc

    def finish_overlapped(self, it: Any, probs: Any, acc: Any, stats: Any) -> Any:
        """Wait for the previous block's P·V and free its V stage; the last block issues its own P·V too."""
        with it.every(1, start=1):
            self.v.wait_o()
            self.v.release()
        with it.last_iter():
            acc = self.pv(probs, acc, stats)
            self.v.wait_o()
            self.v.release()
        return acc

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

    def take_last_hand_over(self, it: Any) -> None:
        """mma0, after its last block: take the other warpgroup's hand-over of its last block (none without
        blocks), so every hand-over is taken."""
        if self.take is not None and self.first:
            with it.last_iter():
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


__all__ = ["Consumer", "consumer_schedule", "load_schedule"]
