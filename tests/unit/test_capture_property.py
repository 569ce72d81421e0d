"""Property: capture (and drawing) never crashes on a schedule TS accepts.

Hypothesis generates schedule *plans* (HEAD ops, optional persistent loop with
skippable regions, a domain loop with guards and runtime conditions, trace-time
Python loops, TAIL ops); one interpreter records each plan through TS.
"""

from __future__ import annotations

import os
from typing import Any

from cutlass.experimental.task_scheduling import when_false, when_true
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ts_explore
from tree_compare import same_tree
from tiers import scaled
from ts_explore.seed_examples import resources as R
from ts_explore.seed_examples.seed import OversubscribedQueue
from ts_explore.model import DomainLoop, Section, walk_nodes

# more examples in the soak tier (TS_EXPLORE_SOAK=1), or exactly N with TS_EXPLORE_PROPERTY_EXAMPLES=N
EXAMPLES = int(os.environ.get("TS_EXPLORE_PROPERTY_EXAMPLES", scaled(120, 2500)))

AUX_OPS = ["page.advance", "epi.needs_epilogue"]
OPS = [
    "src.get_item", "dst.set_item", "smem.acquire", "smem.try_acquire", "smem.fill", "smem.commit",
    "smem.wait", "smem.try_wait", "smem.read", "smem.release", "sig.produce", "sig.consume",
    "slot.load", "out.store", "page.advance", "epi.needs_epilogue", "epi.epilogue",
]

ops = st.lists(st.sampled_from(OPS), max_size=5)
guard = st.one_of(
    st.just(("first",)), st.just(("last",)),
    st.tuples(st.just("every"), st.integers(1, 4), st.integers(0, 3)),
    st.just(("when_true",)), st.just(("when_false",)), st.just(("py_loop",)),
)
loop_item = st.one_of(st.sampled_from(OPS).map(lambda o: ("op", o)), st.tuples(st.just("block"), guard, ops))
plan_strategy = st.fixed_dictionaries({
    "persistent": st.booleans(),
    "skip": st.booleans(),
    "head": st.lists(st.sampled_from(AUX_OPS), max_size=2),
    "pre": ops,
    "bounds": st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(1, 3)),
    "unroll": st.sampled_from([None, 1, 2]),
    "loop": st.lists(loop_item, max_size=6),
    "post": ops,
    "constexpr_repeat": st.integers(0, 2),
})


class _Interp:
    """Runs a plan against resource proxies, always routing the freshest tokens."""

    def __init__(self, p: dict[str, Any]) -> None:
        self.p = p
        self.tokens: dict[str, Any] = {}

    def op(self, res: dict[str, Any], name: str) -> None:
        obj, meth = name.split(".")
        proxy = res[obj]
        if meth == "set_item":
            if "item" in self.tokens:
                proxy.set_item(self.tokens.pop("item"))
        elif meth == "fill":
            if "item" in self.tokens:
                proxy.fill(data=self.tokens.pop("item"))
        elif meth == "store":
            if "frag" in self.tokens:
                proxy.store(frag=self.tokens.pop("frag"), slot_index=len(self.tokens))
        elif meth == "load":
            self.tokens["frag"] = proxy.load(slot_index=1)
        elif meth == "get_item":
            self.tokens["item"] = proxy.get_item()
        elif meth == "read":
            self.tokens["val"] = proxy.read()
        elif meth == "needs_epilogue":
            self.tokens["flag"] = proxy.needs_epilogue()
        else:
            getattr(proxy, meth)()

    def block(self, res: dict[str, Any], d: Any, g: tuple, body: list[str]) -> None:
        kind = g[0]
        if kind == "py_loop":
            for _ in range(2):
                for o in body:
                    self.op(res, o)
            return
        if kind in ("when_true", "when_false"):
            if "flag" not in self.tokens:
                self.tokens["flag"] = res["epi"].needs_epilogue()
            cm = (when_true if kind == "when_true" else when_false)(self.tokens["flag"])
        elif kind == "first":
            cm = d.first_iter()
        elif kind == "last":
            cm = d.last_iter()
        else:
            cm = d.every(g[1], start=g[2])
        with cm:
            for o in body:
                self.op(res, o)

    def body(self, res: dict[str, Any], wtl: Any) -> None:
        p = self.p
        for o in p["pre"]:
            self.op(res, o)
        inner = wtl.skippable() if wtl is not None and p["skip"] else None
        if inner is not None:
            inner.__enter__()
        with domain_loop(*p["bounds"], unroll=p["unroll"]) as d:
            for item in p["loop"]:
                if item[0] == "op":
                    self.op(res, item[1])
                else:
                    self.block(res, d, item[1], item[2])
        for _ in range(p["constexpr_repeat"]):
            self.op(res, "slot.load")
            self.op(res, "out.store")
        if inner is not None:
            inner.__exit__(None, None, None)
        for o in p["post"]:
            self.op(res, o)

    def __call__(self, src, dst, smem, sig, slot, out, page, epi, wq) -> None:
        res = dict(src=src, dst=dst, smem=smem, sig=sig, slot=slot, out=out, page=page, epi=epi, wq=wq)
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


def _resources() -> list[Any]:
    return [
        R.GmemSource(name="src"), R.GmemSink(name="dst"),
        R.SmemBuffer(name="smem", pipeline_config=R.async_pipeline(2)),
        R.Signal(name="sig", pipeline_config=R.async_pipeline(1)),
        R.SlotSource(name="slot"), R.SlotSink(name="out"), R.PageTable(name="page"),
        R.EpilogueSmem(name="epi", pipeline_config=R.async_pipeline(1)),
        R.static_queue(cls=OversubscribedQueue),
    ]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_strategy)
def test_capture_never_crashes_on_accepted_schedules(plan: dict[str, Any]) -> None:
    resources = _resources()
    interp = _Interp(plan)

    @schedule
    def generated(src, dst, smem, sig, slot, out, page, epi, wq):
        interp(src, dst, smem, sig, slot, out, page, epi, wq)

    rec = ts_explore.record(generated, *resources)
    if not rec.ok:  # TS rejected the plan: the failure must be data, never an exception
        event(f"rejected: {rec.error.rule}")
        assert rec.error.rule and rec.error.hint
        return
    tree = rec.tree
    event("accepted by TS")
    assert len(tree.steps()) == len(list(_iter_ts_steps(rec.schedule)))
    uids = [s.uid for s in tree.steps()]
    assert len(set(uids)) == len(uids)
    assert all(r.source in uids and r.destination in uids for r in tree.routes)
    loops = [n for n in tree.walk() if isinstance(n, DomainLoop)]
    in_loop = {s.uid for lp in loops for s in walk_nodes(lp.body) if hasattr(s, "stage")}
    assert all((s.section is Section.LOOP) == (s.uid in in_loop) for s in tree.steps())
    assert "digraph" in ts_explore.schedule_graph(rec).source
    try:
        task = Task(src_resources=[resources[0], resources[-1]], dst_resources=resources[1:-1],
                    warp_idx=0, num_warps=1, schedule=rec.schedule, name="gen")
    except Exception:  # noqa: BLE001 - Task() has its own rules; capture is what we test
        event("Task() rejected")
        return
    event("Task() accepted")
    info = ts_explore.capture(task)
    assert same_tree(tree, info.schedule), "the tree rebuilt from the Task differs from the recorded one"
    assert len(info.expanded) == len(tree.steps())


def _iter_ts_steps(schedule: Any):
    from cutlass.experimental.task_scheduling import schedule_builder as sb

    return sb._iter_steps(schedule)
