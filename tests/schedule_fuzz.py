"""A seeded generator of single schedules with bounds at the edges, and the checks each must pass.

``plan(seed)`` draws one schedule plan from ``random.Random(seed)``: optional
persistent loop (with ``skip_if`` and ``skippable()``), head and tail steps, a
domain loop whose bounds are edge values (0, negative, 2**31, 2**63, runtime
DSL values, a per-tile ``get_domain``), guards (iteration predicates with edge
periods, ``when_true``/``when_false`` with TS's keys, explicit keys and plain
Python values), ``range_constexpr`` unrolls, Constexpr literals with edge
values, and now and then a mistake TS rejects (a second domain loop, no
domain loop, a guard outside the loop, a zero step). :func:`check` sends it
through record -> capture -> draw -> display and, when a Task accepts it,
compares the tree rebuilt from the Task with the recorded one.

A plan is plain data (``repr`` reproduces a failure); ``SEEDS`` and
``SOAK_SEEDS`` size the tiers.
"""

from __future__ import annotations

import contextlib
import os
import random
import warnings
from typing import Any

import cutlass
from cutlass.experimental.task_scheduling import when_false, when_true
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

import ts_explore
from tree_compare import same_tree
from ts_explore.model import Section
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue

SEEDS = 1000  # the fast tier (default suite)
SOAK_SEEDS = int(os.environ.get("TS_EXPLORE_SOAK_SCHEDULES", "20000"))

EDGE_INTS = [0, 1, -1, 2, 7, -256, 2**31 - 1, 2**31, -(2**31), 2**63 - 1, 2**63, -(2**63), 2**64]
OPS = ["src.get_item", "dst.set_item", "smem.acquire", "smem.fill", "smem.commit", "smem.wait", "smem.read",
       "smem.release", "sig.produce", "sig.consume", "slot.load", "out.store", "page.advance", "flags.needs_epilogue",
       "epi.epilogue", "tmem.load_subtile"]
AUX = ["page.advance", "flags.needs_epilogue"]


class FuzzTask(Task):
    """Owner of the per-tile bound the generator uses."""

    def get_domain(self, work_tile_coord):  # noqa: ANN001
        return 3


def _bound(rng: random.Random, role: str) -> Any:
    kind = rng.random()
    if role == "step":
        return rng.choice([1, 1, 1, 2, -1, 3, 2**31, -(2**63), 2**63])
    if kind < 0.55:
        return rng.choice(EDGE_INTS) if rng.random() < 0.6 else rng.randint(-3, 9)
    if kind < 0.8:
        return ("Int32", rng.choice([0, 4, -4, 2**31 - 1]))
    return ("get_domain",) if role == "end" else rng.randint(0, 3)


def _ops(rng: random.Random, n: int, pool: list[str] = OPS) -> list[str]:
    return [rng.choice(pool) for _ in range(rng.randint(0, n))]


def plan(seed: int) -> dict[str, Any]:
    """One schedule plan, plain data."""
    rng = random.Random(seed)
    guards = [("first",), ("last",), ("every", rng.choice([1, 2, 3, 2**31]), rng.choice([0, 1, 2**31])),
              ("when_true", rng.choice(["auto", "explicit", "python"])),
              ("when_false", rng.choice(["auto", "explicit"])), ("constexpr", rng.choice([0, 1, 3]))]
    loop = []
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.5:
            loop.append(("op", rng.choice(OPS)))
        else:
            loop.append(("block", rng.choice(guards), _ops(rng, 3)))
    bounds = [_bound(rng, "start"), _bound(rng, "end"), _bound(rng, "step")][: rng.choice([1, 2, 3, 3])]
    if len(bounds) == 1:
        bounds = [_bound(rng, "end")]
    return {
        "persistent": rng.random() < 0.4,
        "skip": rng.random() < 0.5,
        "head": _ops(rng, 2, AUX),
        "pre": _ops(rng, 3),
        "bounds": bounds,
        "unroll": rng.choice([None, None, 1, 4, 2**31]),
        "loop": loop,
        "post": _ops(rng, 3),
        "literal": rng.choice([0, 1, 2**31, 2**63, -1]),
        "mistake": rng.choice([None] * 12 + ["second_loop", "no_loop", "guard_outside", "zero_step"]),
    }


def _value(bound: Any) -> Any:
    if isinstance(bound, tuple) and bound[0] == "Int32":
        return cutlass.Int32(bound[1])
    if isinstance(bound, tuple) and bound[0] == "get_domain":
        return FuzzTask.get_domain
    return bound


class _Interp:
    """Runs a plan against resource proxies, always routing the freshest tokens."""

    def __init__(self, p: dict[str, Any]) -> None:
        self.p = p
        self.tokens: dict[str, Any] = {}

    def op(self, res: dict[str, Any], name: str) -> None:
        obj, meth = name.split(".")
        proxy = res[obj]
        if meth == "set_item" and "item" in self.tokens:
            proxy.set_item(self.tokens.pop("item"))
        elif meth == "fill" and "item" in self.tokens:
            proxy.fill(data=self.tokens.pop("item"))
        elif meth == "store" and "frag" in self.tokens:
            proxy.store(frag=self.tokens.pop("frag"), slot_index=self.p["literal"])
        elif meth == "load":
            self.tokens["frag"] = proxy.load(slot_index=self.p["literal"])
        elif meth == "load_subtile":
            proxy.load_subtile(subtile_idx=self.p["literal"])  # output never routed: badged in the drawing
        elif meth == "get_item":
            self.tokens["item"] = proxy.get_item()
        elif meth == "read":
            self.tokens["val"] = proxy.read()
        elif meth == "needs_epilogue":
            self.tokens["flag"] = proxy.needs_epilogue()
        elif meth not in ("set_item", "fill", "store"):
            getattr(proxy, meth)()

    def block(self, res: dict[str, Any], d: Any, g: tuple, body: list[str]) -> None:
        kind = g[0]
        if kind == "constexpr":
            for _ in cutlass.range_constexpr(g[1]):
                for o in body:
                    self.op(res, o)
            return
        if kind in ("when_true", "when_false"):
            if g[1] == "python":
                cm = when_true(True)
            else:
                if "flag" not in self.tokens:
                    self.tokens["flag"] = res["flags"].needs_epilogue()
                key = {"key": "shared"} if g[1] == "explicit" else {}
                cm = (when_true if kind == "when_true" else when_false)(self.tokens["flag"], **key)
        elif kind == "first":
            cm = d.first_iter()
        elif kind == "last":
            cm = d.last_iter()
        else:
            cm = d.every(g[1], start=g[2])
        with cm:
            for o in body:
                self.op(res, o)

    def loop(self, res: dict[str, Any]) -> None:
        p = self.p
        bounds = [_value(b) for b in p["bounds"]]
        if p["mistake"] == "zero_step":
            bounds = [0, 4, 0]
        with domain_loop(*bounds, unroll=p["unroll"]) as d:
            for item in p["loop"]:
                if item[0] == "op":
                    self.op(res, item[1])
                else:
                    self.block(res, d, item[1], item[2])

    def body(self, res: dict[str, Any], wtl: Any) -> None:
        p = self.p
        if p["mistake"] == "guard_outside":
            with when_true(res["flags"].needs_epilogue()):
                res["page"].advance()
        for o in p["pre"]:
            self.op(res, o)
        with wtl.skippable() if wtl is not None and p["skip"] else contextlib.nullcontext():
            if p["mistake"] != "no_loop":
                self.loop(res)
            if p["mistake"] == "second_loop":
                with domain_loop(0, 2, 1):
                    res["sig"].produce()
        for o in p["post"]:
            self.op(res, o)

    def __call__(self, src, dst, smem, sig, slot, out, page, flags, epi, tmem, wq) -> None:
        res = dict(src=src, dst=dst, smem=smem, sig=sig, slot=slot, out=out, page=page, flags=flags, epi=epi,
                   tmem=tmem, wq=wq)
        for o in self.p["head"]:
            self.op(res, o)
        if not self.p["persistent"]:
            self.body(res, None)
            return
        skip = OversubscribedQueue.skip_work_tile_if if self.p["skip"] else None
        with work_tile_loop(wq, skip_if=skip) as wtl:
            self.body(res, wtl)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()


_RESOURCES: list[Any] = []


def resources() -> list[Any]:
    """The resources every plan records with, built once (recording and Task() only read them)."""
    if not _RESOURCES:
        _RESOURCES.extend(_fresh_resources())
    return _RESOURCES


def _fresh_resources() -> list[Any]:
    return [
        R.GmemSource(name="src"), R.GmemSink(name="dst"),
        R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2)),
        R.Signal(name="sig", pipeline_config=R.async_pipeline(1)),
        R.SlotSource(name="slot"), R.SlotSink(name="out"), R.PageTable(name="page"), R.EpilogueSmem(name="flags"),
        R.EpilogueSmem(name="epi", pipeline_config=R.async_pipeline(1)), R.TmemAcc(name="tmem"),
        R.static_queue(cls=OversubscribedQueue),
    ]


def check(p: dict[str, Any], *, render: bool) -> str:
    """Send one plan through record -> capture -> draw -> display; return what happened (for counts)."""
    res = resources()
    interp = _Interp(p)

    @schedule
    def fuzzed(src, dst, smem, sig, slot, out, page, flags, epi, tmem, wq):
        interp(src, dst, smem, sig, slot, out, page, flags, epi, tmem, wq)

    rec = ts_explore.record(fuzzed, *res)
    repr(rec)
    if rec.schedule is None:  # TS refused to record: one Problem, never an exception
        assert rec.error is not None and rec.error.rule and rec.error.hint, rec
        assert "How to fix" in rec._repr_mimebundle_()["text/html"]
        return f"refused: {rec.error.rule}"
    tree = rec.tree
    uids = [s.uid for s in tree.steps()]
    assert len(set(uids)) == len(uids) and all(r.source in uids and r.destination in uids for r in tree.routes)
    loop = tree.domain_loop()
    if loop is not None:
        loop.trip_count()
        assert all(s.section is Section.LOOP for s in tree.steps() if s.uid in {
            n.uid for n in _walk(loop.body)})
    dot = ts_explore.schedule_graph(rec).source
    assert "digraph" in dot
    bundle = rec._repr_mimebundle_() if render else _bundle_without_dot(rec)
    assert "ts-explore-diagram" in bundle["text/html"] or "ts-explore-nodot" in bundle["text/html"]
    if rec.error is not None:  # recorded, but Task() rejects it: the box above the drawing
        assert bundle["text/html"].index("How to fix") < bundle["text/html"].index("ts-explore-diagram")
        return f"task rejects: {rec.error.rule}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = FuzzTask if any(b == ("get_domain",) for b in p["bounds"]) else Task
        task = cls(src_resources=[r for r in res if r.name in ("src", "slot", "flags", "wq")],
                   dst_resources=[r for r in res if r.name not in ("src", "slot", "flags", "wq")],
                   warp_idx=0, num_warps=1, schedule=rec.schedule, name="fuzz")
    info = ts_explore.capture(task)
    assert same_tree(tree, info.schedule), f"rebuilt tree differs for plan {p!r}"
    ts_explore.schedule_graph(task)
    return "accepted"


def _walk(nodes: Any) -> Any:
    from ts_explore.model import walk_nodes

    return [n for n in walk_nodes(nodes) if hasattr(n, "uid")]


def _bundle_without_dot(rec: Any) -> dict[str, Any]:
    """The display bundle with the SVG step (Graphviz's own) replaced by the DOT text."""
    from ts_explore.render import display

    original = display.to_svg
    display.to_svg = lambda graph: f"<svg><!-- {len(graph.source)} --></svg>"  # type: ignore[assignment]
    try:
        return rec._repr_mimebundle_()
    finally:
        display.to_svg = original  # type: ignore[assignment]


__all__ = ["SEEDS", "SOAK_SEEDS", "check", "plan"]
