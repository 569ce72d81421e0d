"""Small persistent task sets for the tile-loop search: aliased rings whose phases drift from tile to tile.

``persistent_set(rings, plans)`` builds fresh TS objects: every ring is an
AsyncAsync-pipelined shared-memory tile at a byte offset (equal offsets
alias), every plan one task whose work-tile loop runs its uses in order. A
use ``(ring, side, count)`` runs ``count`` rounds of ``acquire, write,
commit`` ("produce"), ``wait, read, release`` ("consume") or both ("own");
a name starting with ``pipe`` is a token pipe (a pipelined buffer that
shares no bytes with anything). A ring of ``S`` stages used ``u`` times a
tile starts tile ``t`` at slot ``(t * u) mod S``.
"""

from __future__ import annotations

import warnings
from typing import Any

from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule, work_tile_loop
from cutlass.experimental.task_scheduling.task import Task

from ts_explore.gallery import resources as G
from ts_explore.gallery.gemm_family import GemmBuffer
from ts_explore.seed_examples import resources as R

Use = tuple[str, str, int]


def _rounds(proxy: Any, side: str, pipe: bool) -> None:
    write, read = ("fill", "drain") if pipe else ("write_tile", "read_tile")
    if side in ("produce", "own"):
        proxy.acquire()
        getattr(proxy, write)()
        proxy.commit()
    if side in ("consume", "own"):
        proxy.wait()
        getattr(proxy, read)()
        proxy.release()


def persistent_set(rings: dict[str, tuple[int, int]], plans: dict[str, list[Use]]) -> dict[str, Any]:
    """``verify(**persistent_set(...))``: ``rings`` name -> (stages, byte offset); ``plans`` task -> uses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objs: dict[str, Any] = {}
        for name, (stages, offset) in rings.items():
            cfg = R.async_pipeline(stages, 32, 32)
            objs[name] = GemmBuffer(name=name, pipeline_config=cfg) if name.startswith("pipe") else \
                G.AliasedTile(name=name, pipeline_config=cfg, smem_offset=offset)
        wq = R.static_queue(name="wq")
        tasks, feeds = [], {}
        for i, (task, uses) in enumerate(plans.items()):
            names = list(dict.fromkeys(u[0] for u in uses))
            src = [n for n in names if any(u[0] == n and u[1] in ("consume", "own") for u in uses)]
            dst = [n for n in names if any(u[0] == n and u[1] in ("produce", "own") for u in uses)]

            def body(*res: Any, uses: list[Use] = uses, names: list[str] = names) -> None:
                proxy = dict(zip(names, res))
                queue = res[-1]
                with work_tile_loop(queue):
                    with domain_loop(0, 1, 1):
                        for ring, side, count in uses:
                            for _ in range(count):
                                _rounds(proxy[ring], side, ring.startswith("pipe"))
                    queue.try_wait()
                    queue.wait()
                    queue.get_and_advance_work_tile()
                    queue.release()

            body.__name__ = body.__qualname__ = f"{task.lower()}_tiles"
            tree = schedule(body)(*(objs[n] for n in names), wq)
            tasks.append(Task([objs[n] for n in src] + [wq], [objs[n] for n in dst], i, 1, schedule=tree, name=task))
            for d in dst:
                feeds.setdefault(d, set()).update(s for s in src if s != d)
        used = {n for plan in plans.values() for n, _s, _c in plan}
        graph = {objs[n]: [objs[s] for s in sorted(feeds.get(n, ()))] for n in sorted(used)}
        graph[wq] = []
    return {"tasks": tasks, "resource_dependency_graph": graph}


__all__ = ["persistent_set"]
