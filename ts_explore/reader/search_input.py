"""TS ``Task`` objects -> :class:`~ts_explore.check.problem.SearchProblem` (the only TS reading of the checker).

The setup half of TS's ``exhaustive_checker.check_all_interleavings`` is
restated here step by step, calling TS's own helpers wherever they decide
what the search sees, so the lanes are identical by construction:

* each task's lane: ``_expand_task_for_check`` (HEAD + loop x N + TAIL with
  the iteration guards, the opaque assignment, the skipped-tile variant and
  the dynamic-domain fallback length), repeated ``num_tiles`` times, then
  ``_explode_sync_work`` (non-pipelined work split or doubled);
* credit keys: ``_domain_interleaved_resource_ids`` and
  ``_precompute_stage_credit_keys`` (one pool per physical stage for
  domain-interleaved resources), initial empty credits from
  ``_build_initial_cons_credits``, producer/consumer counts with
  ``_count_independent_interleave_lane``;
* alias maps: ``build_alias_info`` (unless passed in), DMA consumers and
  completion pairs from ``_build_consumer_completion_metadata``;
* per-step slots, generations and counts: ``_precompute_schedule_steps``.

Only the result is translated into plain indices; the search itself
(:mod:`ts_explore.check`) never sees a TS object. :func:`read_problems` is the
capture's one call here: every needed run's problem, and the participant
counts the credit model shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling import task_manager as ts_tm
from cutlass.experimental.task_scheduling.enums import ScheduleStage
from cutlass.experimental.task_scheduling.resources import PipelineGroup

from ..model.verdict import CreditModel, CreditPool
from .schedule import NameOf
from ..check.problem import (
    ACQUIRE,
    CONS,
    CONSUME,
    PROD,
    PRODUCE,
    RELEASE,
    WAIT,
    Counter,
    CreditEffect,
    HeldOp,
    SearchProblem,
    Step,
)

# check_all_interleavings keywords this reader understands (verbose and cursor_only_visited only
# change TS's printing and its debugging key; they do not change what is explored)
KNOWN_KWARGS = frozenset(
    {
        "alias_map", "prod_alias_map", "cons_alias_map", "overlap_descs", "max_states", "num_tiles",
        "skipped_tile", "assume_pdl_wait_completed", "verbose", "opaque_assignment", "early_exit",
        "cursor_only_visited",
    }
)


class _Index:
    """Small integers for TS resources, in first-seen order (TS's own resource order first)."""

    def __init__(self, resources: list[Any]) -> None:
        self.ids: dict[int, int] = {}
        self.names: list[str] = []
        for res in resources:
            self.of(res)

    def of(self, res: Any) -> int:
        return self.of_id(id(res), str(getattr(res, "name", "") or type(res).__name__))

    def of_id(self, rid: int, name: str) -> int:
        found = self.ids.get(rid)
        if found is None:
            found = self.ids[rid] = len(self.names)
            self.names.append(name)
        return found

    def resource(self, rid: int, id_to_res: dict[int, Any]) -> int:
        """Index of a TS resource id; an id no task lists (TS still keys credits by it) gets ``?id``."""
        res = id_to_res.get(rid)
        return self.of(res) if res is not None else self.of_id(rid, f"?{rid}")


def _credit_order(
    resources: list[Any], initial_cons: dict, credit_keys: list, producers: dict, consumers: dict, schedules: list
) -> list[tuple[int, int]]:
    """TS's ``credit_key_order``: each resource's keys sorted, then any leftover key."""
    key_set = set(initial_cons)
    for task_keys in credit_keys:
        key_set.update(task_keys)
    key_set.update((rid, 0) for rid in producers)
    key_set.update((rid, 0) for rid in consumers)
    for sched in schedules:
        for entry in sched:
            if isinstance(entry[0], PipelineGroup):
                key_set.update((id(member), 0) for member in entry[0].members)
    order: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for res in resources:
        for key in sorted(k for k in key_set if k[0] == id(res)):
            seen.add(key)
            order.append(key)
    order.extend(k for k in sorted(key_set) if k not in seen)
    return order


def participants(tasks: list[Any]) -> tuple[dict[int, int], dict[int, int]]:
    """Producer and consumer task counts per pipelined resource (TS's ``_num_producers/_num_consumers``)."""
    producers: dict[int, int] = {}
    consumers: dict[int, int] = {}
    for task in tasks:
        for side, counts, stage in (
            (task.dst_resources, producers, ScheduleStage.ProducerCommit),
            (task.src_resources, consumers, ScheduleStage.ConsumerWait),
        ):
            for res in side:
                if (
                    ec._is_tracked(res)
                    and res.pipeline_config is not None
                    and not ts_tm._count_independent_interleave_lane(counts, id(res), task, res, stage)
                ):
                    counts[id(res)] = counts.get(id(res), 0) + 1
    return producers, consumers


class _Tallies:
    """TS's ``total_counts`` buckets as tally indices: one per (bucket, credit key index)."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, int], int] = {}

    def of(self, bucket: str, cidx: int) -> int:
        return self.index.setdefault((bucket, cidx), len(self.index))


def _effect(counter: int, delta: int, every: int, tallies: _Tallies, bucket: str, cidx: int) -> CreditEffect:
    if every == 1:
        return CreditEffect(counter, delta)
    return CreditEffect(counter, delta, tallies.of(bucket, cidx), every)


def _credit_effects(info: Any, n_keys: int, tallies: _Tallies) -> tuple[CreditEffect, ...]:
    """TS's ``_apply_credit_transition`` for one step, as counter effects (commit counters first, then empty)."""
    if not info.has_credit_transition:
        return ()
    commit, empty = 0, n_keys  # counter index = base + credit key index
    if info.is_producer_commit:
        if info.is_fork_group:
            return tuple(_effect(commit + m, +1, n, tallies, "commits", m) for m, n in info.group_member_prod_counts)
        return (_effect(commit + info.credit_idx, +1, info.producer_count, tallies, "commits", info.credit_idx),)
    if info.is_consumer_release:
        if info.is_merge_group:
            return tuple(_effect(empty + m, +1, n, tallies, "releases", m) for m, n in info.group_member_cons_counts)
        return (_effect(empty + info.credit_idx, +1, info.consumer_count, tallies, "releases", info.credit_idx),)
    if info.is_consumer_wait:
        return (_effect(commit + info.credit_idx, -1, info.consumer_count, tallies, "waits", info.credit_idx),)
    if info.is_producer_acquire:
        return (_effect(empty + info.credit_idx, -1, info.producer_count, tallies, "acquires", info.credit_idx),)
    return ()


def _held_op(info: Any, idx: _Index, id_to_res: dict[int, Any]) -> HeldOp | None:
    """TS's ``_HeldStateTracker`` inputs for one step (None: the step never touches ownership state)."""
    if not info.needs_held_update:
        return None

    def res(rid: int) -> int:
        return idx.resource(rid, id_to_res)

    own, slot = "", -1
    if info.in_alias:
        if info.is_producer_acquire:
            own, slot = ACQUIRE, info.producer_slot
        elif info.is_producer_work:
            own, slot = PRODUCE, info.producer_slot
        elif info.is_consumer_wait:
            own, slot = WAIT, info.consumer_slot
        elif info.is_consumer_work:
            own, slot = CONSUME, info.consumer_slot
        elif info.is_consumer_release:
            own, slot = RELEASE, info.consumer_slot
    unpipelined = info.res.pipeline_config is None
    return HeldOp(
        own=own,
        slot=slot,
        write_phase=info.cons_work_phase == "cons_write_phase",
        closes_window=unpipelined and not info.consecutive_same_work,
        merge_release=tuple((res(m), s) for m, s in info.group_member_release_slots)
        if info.is_consumer_release and info.is_merge_group else (),
        fused_wait=tuple((res(m), s) for m, s in info.group_member_wait_slots)
        if info.is_consumer_wait and info.is_fused_merge_group else (),
        tag_commit=tuple(res(r) for r in info.completion_wait_rids) if info.is_producer_commit else (),
        clear_wait=tuple(res(r) for r in info.completion_wait_rids) if info.is_consumer_wait else (),
        generation=info.commit_wait_gen,
    )


def _point(info: Any) -> tuple[int, str] | None:
    """TS's ``_next_point_accesses`` entry for a step (on an aliased resource)."""
    if not info.in_alias:
        return None
    if info.is_point_write:
        return (info.producer_slot, PROD)
    if info.is_point_read:
        return (info.consumer_slot, PROD if info.cons_work_phase == "cons_write_phase" else CONS)
    return None


def search_problem(
    tasks: list[Any],
    alias_map: dict[int, set[int]] | None = None,
    prod_alias_map: dict[int, set[int]] | None = None,
    cons_alias_map: dict[int, set[int]] | None = None,
    overlap_descs: dict[tuple[int, int], str] | None = None,
    num_tiles: int = 1,
    skipped_tile: bool = False,
    assume_pdl_wait_completed: bool = False,
    opaque_assignment: dict | None = None,
    **_ignored: Any,
) -> SearchProblem:
    """The instance ``check_all_interleavings(tasks, **same keywords)`` explores, as a :class:`SearchProblem`."""
    unknown = sorted(set(_ignored) - KNOWN_KWARGS)
    if unknown:
        raise TypeError(
            f"unknown check_all_interleavings argument(s) {', '.join(unknown)}; "
            f"it accepts: {', '.join(sorted(KNOWN_KWARGS))}"
        )
    resources = ec._collect_resources(tasks)
    schedules = [ec._expand_task_for_check(t, skipped_tile, opaque_assignment) for t in tasks]
    if num_tiles > 1:
        schedules = [s * num_tiles for s in schedules]
    if alias_map is None:
        alias_map, prod_alias_map, cons_alias_map, overlap_descs = ec.build_alias_info(resources)
    prod_alias_map = prod_alias_map or {}
    cons_alias_map = cons_alias_map or {}
    overlap_descs = overlap_descs or {}
    id_to_res: dict[int, Any] = {id(r): r for r in resources}
    for res in resources:
        pg = getattr(res, "pipeline_group", None)
        if pg is not None:
            id_to_res[id(pg)] = pg
    completion = ec._build_consumer_completion_metadata(tasks, resources)
    schedules = ec._explode_sync_work(schedules)
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    credit_keys = ts_tm._precompute_stage_credit_keys(tasks, schedules, domain_rids)
    initial_cons = ec._build_initial_cons_credits(resources, domain_rids)
    producers, consumers = participants(tasks)
    order = _credit_order(resources, initial_cons, credit_keys, producers, consumers, schedules)
    key_index = {key: i for i, key in enumerate(order)}
    infos = ec._precompute_schedule_steps(
        tasks, schedules, alias_map, producers, consumers, completion.completion_wait_rids, credit_keys, key_index
    )

    idx = _Index(resources)
    for res in id_to_res.values():
        idx.of(res)

    def res_of(rid: int) -> int:
        return idx.resource(rid, id_to_res)

    n_keys = len(order)
    counters = tuple(Counter(res_of(rid), stage, "commit") for rid, stage in order) + tuple(
        Counter(res_of(rid), stage, "empty", initial_cons.get((rid, stage), 0)) for rid, stage in order
    )
    tallies = _Tallies()
    lanes = []
    for task_infos in infos:
        lane = []
        for info in task_infos:
            needs = -1
            if info.is_blocking and info.track:
                if info.credit_idx < 0:
                    raise RuntimeError(f"{info.stage.name}({info.res.name}) has no credit key; TS's tables changed")
                needs = info.credit_idx if info.is_consumer_wait else n_keys + info.credit_idx
            lane.append(
                Step(
                    resource=idx.of(info.res),
                    stage=info.stage.name,
                    needs=needs,
                    effects=_credit_effects(info, n_keys, tallies),
                    pdl_wait=info.is_pdl_wait,
                    pdl_launch=info.is_pdl_launch,
                    point=_point(info),
                    held=_held_op(info, idx, id_to_res),
                )
            )
        lanes.append(tuple(lane))

    maps = (alias_map or {}, prod_alias_map, cons_alias_map)
    for amap in maps:  # ids only a passed-in alias map mentions get an index before the tables are sized
        for rid, others in amap.items():
            res_of(rid)
            for o in others:
                res_of(o)
    n_res = len(idx.names)

    def table(amap: dict[int, set[int]]) -> tuple[frozenset[int], ...]:
        rows: list[set[int]] = [set() for _ in range(n_res)]
        for rid, others in amap.items():
            rows[idx.ids[rid]].update(idx.ids[o] for o in others)
        return tuple(frozenset(r) for r in rows)

    alias = table(alias_map or {})
    overlaps = []
    for (a, b), text in overlap_descs.items():
        if a in idx.ids and b in idx.ids:
            ia, ib = idx.ids[a], idx.ids[b]
            overlaps.append((min(ia, ib), max(ia, ib), text))
    return SearchProblem(
        tasks=tuple(t.name for t in tasks),
        lanes=tuple(lanes),
        resources=tuple(idx.names),
        counters=counters,
        tallies=len(tallies.index),
        alias=alias,
        prod_alias=table(prod_alias_map),
        cons_alias=table(cons_alias_map),
        overlaps=tuple(overlaps),
        aliased=frozenset(res_of(r) for r in (alias_map or {})),
        race_check=bool(alias_map),
        domain_interleaved=frozenset(res_of(r) for r in domain_rids),
        dma_consumers=frozenset(res_of(r) for r in completion.dma_consumer_rids),
        assume_pdl_wait_completed=assume_pdl_wait_completed,
    )


def credit_model(tasks: list[Any], name_of: NameOf) -> CreditModel:
    """Initial pools and participant counts exactly as ``check_all_interleavings`` sets them up."""
    resources = ec._collect_resources(tasks)
    domain_rids = ts_tm._domain_interleaved_resource_ids(tasks)
    by_id = {id(r): r for r in resources}
    pools = tuple(
        CreditPool(name_of.get(rid) or name_of(by_id[rid]), slot, n)
        for (rid, slot), n in ec._build_initial_cons_credits(resources, domain_rids).items()
        if rid in by_id
    )
    producers, consumers = participants(tasks)
    approximate = any(isinstance(r, PipelineGroup) or getattr(r, "pipeline_group", None) for r in resources)
    return CreditModel(
        pools=pools,
        producers=tuple((name_of.get(k) or name_of(by_id[k]), n) for k, n in producers.items() if k in by_id),
        consumers=tuple((name_of.get(k) or name_of(by_id[k]), n) for k, n in consumers.items() if k in by_id),
        approximate=approximate,
    )


@dataclass(frozen=True)
class ProblemsRead:
    """The checker inputs of an instance's runs and its credit model (the capture's one call here)."""

    problems: tuple[SearchProblem | None, ...]  # per run; None when not asked for or not readable
    errors: tuple[str, ...]  # per run: why its problem could not be read ("" when read)
    credit_model: CreditModel | None  # None when it could not be read
    credit_error: str = ""  # why


def read_problems(tasks: list[Any], runs: list[dict[str, Any]], name_of: NameOf, *, problems: bool = True
                  ) -> ProblemsRead:
    """Each run's :class:`SearchProblem` (``problems=False``: none, TS's own search reads the tasks itself), and
    the credit model the findings are told with."""
    try:
        model: CreditModel | None = credit_model(tasks, name_of)
        credit_error = ""
    except Exception as exc:  # noqa: BLE001 - the searches still run; their findings cannot be told
        model, credit_error = None, f"{type(exc).__name__}: {exc}"
    found: list[SearchProblem | None] = []
    errors: list[str] = []
    for kwargs in runs:
        problem, error = None, ""
        if problems:
            try:
                problem = search_problem(tasks, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the run is then missing from the scope, and said why
                error = f"{type(exc).__name__}: {exc}"
        found.append(problem)
        errors.append(error)
    return ProblemsRead(tuple(found), tuple(errors), model, credit_error)


__all__ = ["KNOWN_KWARGS", "ProblemsRead", "credit_model", "participants", "read_problems", "search_problem"]
