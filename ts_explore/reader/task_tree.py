"""Rebuild a Task's schedule tree from what the Task itself keeps, whenever it was built.

``Task(schedule=tree)`` lowers the recorded tree to flat head/loop/tail lists
and drops the tree. Everything the drawing needs survives on the Task:
routes (``slot_routing``), Constexpr literals (``constexpr_work_kwargs``),
the skippable region (``skippable_*_slots``), steps hoisted outside the
work-tile loop (``pre_work_loop_head_slots`` / ``post_work_loop_tail_slots``),
guards with their condition's resource, method and result (``OpaqueCondition``),
and each work method's outputs (the resource class's ``returns=``). So no
hook on ``Task.__init__`` is needed and the import order of ts_explore does
not matter.

What the lists cannot say: the schedule function's name, and where two
adjacent blocks of the same kind were separate ``with`` blocks (they run the
same either way and are drawn as one). Anything else that cannot be matched
is listed in ``ScheduleTree.unrecovered`` and shown in the drawing's title.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from cutlass.experimental.task_scheduling import enums as ts_enums
from cutlass.experimental.task_scheduling import resources as ts_resources
from cutlass.experimental.task_scheduling.enums import ScheduleStageType

from ..model import (
    Block,
    BlockKind,
    Bound,
    BoundKind,
    Condition,
    DomainLoop,
    Literal,
    Node,
    QueueKind,
    Route,
    ScheduleTree,
    Section,
    SkipKind,
    SkipPredicate,
    Stage,
    Step,
    WorkTileLoop,
)
from .names import STAGE_FAMILY, NameOf



# -- TS values a schedule holds, as model values (also read by :mod:`.schedule`) ---------------------------


def _callable_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return name.replace("<locals>.", "")


def bound_of(value: Any) -> Bound:
    """Describe one ``domain_loop`` bound: trace-time int, per-tile method, or runtime value."""
    if isinstance(value, bool):
        return Bound.of_int(int(value))
    if isinstance(value, int):
        return Bound.of_int(value)
    if callable(value):
        return Bound(BoundKind.DYNAMIC, f"{_callable_name(value)}(tile)")
    inner = getattr(value, "value", None)
    type_name = type(value).__name__
    if isinstance(inner, int) and not isinstance(inner, bool):
        return Bound(BoundKind.RUNTIME, f"{type_name}({inner})", inner)
    return Bound(BoundKind.RUNTIME, f"<runtime {type_name}>")


def bounds_of(*values: Any) -> tuple[Bound, ...]:
    """:func:`bound_of` for each of a ``domain_loop``'s bounds (start, end, step) at once."""
    return tuple(bound_of(v) for v in values)


def skip_predicate_of(skip_if: Any, work_queue: Any) -> SkipPredicate | None:
    """Describe a ``skip_if`` predicate: a queue method, a function or a lambda."""
    if skip_if is None:
        return None
    qualname = getattr(skip_if, "__qualname__", "") or ""
    name = _callable_name(skip_if)
    if qualname.endswith("<lambda>"):
        return SkipPredicate(SkipKind.LAMBDA, "lambda", _lambda_source(skip_if))
    fn_name = getattr(skip_if, "__name__", "")
    if any(getattr(cls, fn_name, None) is skip_if for cls in type(work_queue).__mro__):
        return SkipPredicate(SkipKind.QUEUE_METHOD, name)
    return SkipPredicate(SkipKind.FUNCTION, name)


def _lambda_source(fn: Any) -> str | None:
    try:
        text = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        return None
    start = text.find("lambda")
    if start < 0:
        return None
    snippet = text[start:]
    colon = snippet.find(":")
    if colon < 0:
        return None
    depth = 0
    for i in range(colon + 1, len(snippet)):  # the body ends at an unbalanced ')' or a top-level ','
        ch = snippet[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return snippet[:i].strip()
            depth -= 1
        elif ch in ",\n" and depth == 0:
            return snippet[:i].strip()
    return snippet.strip()


def literal_text(value: Any) -> str:
    """A Constexpr literal as the drawing shows it (``repr`` for Python values)."""
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    inner = getattr(value, "value", None)
    if isinstance(inner, (bool, int, float)):
        return f"{type(value).__name__}({inner!r})"
    return repr(value)


def condition_of(cond: Any, name_of: NameOf, producer: Callable[[Any, Any, Any], int | None]) -> Condition | None:
    """The model of a ``when_true``/``when_false`` condition; None for a plain Python value (numbered by the caller).

    ``producer(resource, method label, result name)`` finds the uid of the
    step that produced the value. TS's own keys embed ``id(resource)``; they
    are shown as ``resource.method.result`` instead. A key the user passed
    (``key="shared"``) is kept and marked explicit.
    """
    resource, key = cond.resource, cond.key
    if resource is not None:
        auto_key = isinstance(key, tuple) and len(key) == 3 and key[0] == id(resource)
        res_name = name_of(resource)
        return Condition(
            key=f"{res_name}.{cond.method_label}.{cond.result_name}" if auto_key else _key_text(key),
            resource=res_name,
            method=cond.method_label,
            variable=cond.result_name,
            step=producer(resource, cond.method_label, cond.result_name),
            explicit_key=not auto_key,
        )
    if isinstance(key, tuple) and key and key[0] == "__opaque__":
        return None
    return Condition(key=_key_text(key), explicit_key=True)


def _key_text(key: Any) -> str:
    """A user's condition key as text: strings as they are, anything else by ``repr``."""
    return key if isinstance(key, str) else repr(key)


_STAGE_TYPE = {Section.HEAD: ScheduleStageType.Head, Section.LOOP: ScheduleStageType.Loop,
               Section.TAIL: ScheduleStageType.Tail}


def _returns(resource: Any, label: str | None) -> tuple[str, ...]:
    """The task-local variables a work method declares with ``returns=`` (what recording gave the step)."""
    if label is None:
        return ()
    cls = type(resource)
    registry = ts_resources._collect_named_work_fns(cls, ts_resources._CONSUMER_WORK_FNS_ATTR)
    method = getattr(cls, registry.get(label, ""), None)
    names = getattr(method, "_consumer_return_var_names", None)
    return tuple(names()) if callable(names) else ()


class _Rebuild:
    """One pass over a Task's lists, producing the tree the user recorded (as far as TS kept it)."""

    def __init__(self, task: Any, name_of: NameOf) -> None:
        self.task = task
        self.name_of = name_of
        self.uid = 0
        self.slots: dict[tuple[int, Any, Any, int], int] = {}  # (id(res), stage, stage type, call id) -> uid
        self.steps_so_far: list[tuple[Any, Step]] = []  # (TS resource, step) in order, for condition producers
        self.python_conditions = 0
        self.unrecovered: list[str] = []
        self.literals = task.constexpr_work_kwargs or {}

    def step(self, res: Any, stage: Any, cid: int, label: Any, section: Section) -> Step:
        st = Stage(stage.value)
        key = (id(res), stage, _STAGE_TYPE[section], cid)
        literals = tuple(Literal(k, literal_text(v)) for k, v in (self.literals.get(key) or {}).items())
        family = self.name_of.fixed_family.get(id(res)) or STAGE_FAMILY[st]
        step = Step(self.uid, self.name_of[id(res)], st, label, cid, section, family, literals,
                    _returns(res, label))
        self.slots[key] = self.uid
        self.steps_so_far.append((res, step))
        self.uid += 1
        return step

    # -- guards ----------------------------------------------------------------------
    def block(self, guard: Any, condition: Condition | None, body: list[Node]) -> Block | None:
        if guard == ts_enums.LoopGuard.FirstIter or guard is ts_enums.FIRST_ITER:
            return Block(BlockKind.FIRST_ITER, tuple(body))
        if guard == ts_enums.LoopGuard.LastIter or guard is ts_enums.LAST_ITER:
            return Block(BlockKind.LAST_ITER, tuple(body))
        if isinstance(guard, ts_enums.Every):
            return Block(BlockKind.EVERY, tuple(body), period=guard.period, start=guard.start)
        if isinstance(guard, ts_enums.OpaqueCondition):
            kind = BlockKind.WHEN_FALSE if guard.negated else BlockKind.WHEN_TRUE
            return Block(kind, tuple(body), condition=condition)
        self.unrecovered.append(f"a loop guard of kind {type(guard).__name__}")
        return None

    def condition(self, cond: Any) -> Condition:
        def producer(resource: Any, label: str | None, result: str | None) -> int | None:
            for res, step in reversed(self.steps_so_far):
                if res is resource and (step.label or step.stage.value) == label and result in step.returns:
                    return step.uid
            return None

        found = condition_of(cond, self.name_of, producer)
        if found is None:
            self.python_conditions += 1
            return Condition(key=f"python value #{self.python_conditions}")
        return found

    def loop_body(self) -> tuple[Node, ...]:
        body: list[Node] = []
        run: tuple[Any, Condition | None, list[Node]] | None = None
        for res, stage, cid, guard, label in self.task.loop_schedule_list:
            always = guard == ts_enums.LoopGuard.Always
            if run is not None and (always or run[0] != guard):
                body.extend(self.close(run))
                run = None
            if always:
                body.append(self.step(res, stage, cid, label, Section.LOOP))
                continue
            if run is None:  # the condition's producer is a step before the block
                cond = self.condition(guard) if isinstance(guard, ts_enums.OpaqueCondition) else None
                run = (guard, cond, [])
            run[2].append(self.step(res, stage, cid, label, Section.LOOP))
        if run is not None:
            body.extend(self.close(run))
        return tuple(body)

    def close(self, run: tuple[Any, Condition | None, list[Node]]) -> list[Node]:
        block = self.block(*run)
        return [block] if block is not None else list(run[2])

    # -- the whole tree --------------------------------------------------------------
    def domain_loop(self) -> DomainLoop:
        t = self.task
        end = t.domain_getter if t.domain_getter is not None else t.domain
        return DomainLoop(*bounds_of(t.domain_start, end, t.step), t.unroll, self.loop_body())

    def run(self) -> ScheduleTree:
        t = self.task
        wq = getattr(t, "work_queue", None)
        pre_slots, post_slots = set(t.pre_work_loop_head_slots), set(t.post_work_loop_tail_slots)
        head = [(e, (id(e[0]), e[1], e[2]) in t.skippable_head_slots) for e in t.head_schedule_list]
        tail = [(e, (id(e[0]), e[1], e[2]) in t.skippable_tail_slots) for e in t.tail_schedule_list]
        outside = [e for e, _ in head if (id(e[0]), e[1], e[2]) in pre_slots] if wq is not None else []
        after = [e for e, _ in tail if (id(e[0]), e[1], e[2]) in post_slots] if wq is not None else []
        head = [(e, s) for e, s in head if not any(e is o for o in outside)]
        tail = [(e, s) for e, s in tail if not any(e is o for o in after)]
        body: list[Node] = [self.step(r, s, c, lbl, Section.HEAD) for r, s, c, lbl in outside]
        inner: list[tuple[bool, Node]] = [(skip, self.step(r, s, c, lbl, Section.HEAD)) for (r, s, c, lbl), skip in head]
        inner.append((t.skip_if is not None, self.domain_loop()))
        inner += [(skip, self.step(r, s, c, lbl, Section.TAIL)) for (r, s, c, lbl), skip in tail]
        nodes = _group_skippable(inner)
        post = [self.step(r, s, c, lbl, Section.TAIL) for r, s, c, lbl in after]
        if wq is not None:
            name = self.name_of(wq)  # a call: the queue may be on no step list
            loop = WorkTileLoop(name, self.name_of.queue_kinds[id(wq)] or QueueKind.STATIC,
                                skip_predicate_of(t.skip_if, wq), tuple(nodes))
            body += [loop, *post]
        else:
            body += nodes
        resources = tuple(dict.fromkeys(self.name_of[id(r)] for r in [*t.src_resources, *t.dst_resources]))
        return ScheduleTree(name=t.name or "task", resources=resources, body=tuple(body), routes=self.routes(),
                            from_lists=True, unrecovered=tuple(dict.fromkeys(self.unrecovered)))

    def routes(self) -> tuple[Route, ...]:
        out: list[Route] = []
        lost = 0
        for writer, groups in (self.task.slot_routing or {}).items():
            source = self.slots.get(writer)
            for variables, destinations in groups:
                for dst in destinations:
                    res, stage, stage_type, cid = dst
                    target = self.slots.get((id(res), stage, stage_type, cid))
                    for var in variables or ():
                        src_name, arg = (var, var) if isinstance(var, str) else var
                        if source is None or target is None:
                            lost += 1
                            continue
                        out.append(Route(source, src_name, target, arg))
        if lost:
            self.unrecovered.append(f"{lost} route(s) between steps TS does not list")
        return tuple(sorted(out, key=lambda r: (r.source, r.destination, r.argument)))


def _group_skippable(items: list[tuple[bool, Node]]) -> list[Node]:
    """Consecutive skippable nodes go into one ``skippable()`` block; the rest stay as they are."""
    out: list[Node] = []
    run: list[Node] = []
    for skippable, node in items:
        if skippable:
            run.append(node)
            continue
        if run:
            out.append(Block(BlockKind.SKIPPABLE, tuple(run)))
            run = []
        out.append(node)
    if run:
        out.append(Block(BlockKind.SKIPPABLE, tuple(run)))
    return out


def tree_of_task(task: Any, name_of: NameOf) -> ScheduleTree:
    """The schedule tree a Task was built from, rebuilt from the Task (see the module docstring)."""
    return _Rebuild(task, name_of).run()


def trees_of_tasks(tasks: list[Any], name_of: NameOf) -> tuple[ScheduleTree, ...]:
    """:func:`tree_of_task` for every task of a set, in one pass."""
    return tuple(_Rebuild(task, name_of).run() for task in tasks)


__all__ = ["bound_of", "bounds_of", "condition_of", "literal_text", "skip_predicate_of", "tree_of_task",
           "trees_of_tasks"]
