"""What the repair search returns: proven repairs, ranked, and what was tried."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..model import TaskSet
from ..model.verdict import Verdict
from .edits import Edit, adds_stage


@dataclass(frozen=True)
class Repair:
    """A small edit of the recorded schedules that ts-explore proved SAFE, with TS's ``TaskManager`` agreeing.

    ``before`` is the broken task set, ``model`` the edited one (uids of
    ``before`` kept, inserted steps numbered after them) and ``after`` its
    normal form: what capturing :meth:`task_set` gives. ``proof`` is the SAFE
    verdict of ``verify`` on the materialised repair.
    """

    edits: tuple[Edit, ...]
    sentences: tuple[str, ...]
    before: TaskSet
    model: TaskSet
    after: TaskSet
    proof: Verdict
    added_bytes: int = 0
    order: int = 0  # when the search found it (ties in the ranking keep this order)
    build: Callable[[], dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        return f"Repair({self.sentence!r}, {self.size} step(s) touched)"

    @property
    def sentence(self) -> str:
        """The repair in words, one clause per edit."""
        return "; then ".join(self.sentences)

    @property
    def size(self) -> int:
        """Steps (or loop headers, or pipelines) the repair touches."""
        return sum(len(e.touched()) for e in self.edits)

    @property
    def adds_stage(self) -> bool:
        return any(adds_stage(e) for e in self.edits)

    def rank_key(self) -> tuple[int, bool, int, int, int]:
        """Fewest steps touched, then a move over an added stage, then the least shared memory added."""
        return (self.size, self.adds_stage, self.added_bytes, len(self.edits), self.order)

    def touched(self) -> dict[str, set[int]]:
        """Per task, the uids in :attr:`model` of the steps the repair moved, inserted or changed."""
        out: dict[str, set[int]] = {}
        base = {t.name: {s.uid: s for s in t.schedule.steps()} for t in self.before.tasks}
        for info in self.model.tasks:
            old_tree = self.before.task(info.name).schedule
            changed = {s.uid for s in info.schedule.steps() if base[info.name].get(s.uid) != s}
            old_order = [s.uid for s in old_tree.steps()]
            new_order = [s.uid for s in info.schedule.steps() if s.uid in base[info.name]]
            changed |= _moved(old_order, new_order)
            changed |= {u for t, u in (p for e in self.edits for p in e.touched()) if t == info.name and u >= 0}
            if changed:
                out[info.name] = changed
        return out

    def marks(self) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
        """Changed steps per task: uids in :attr:`before` (moved or removed) and in :attr:`after` (moved or new)."""
        from .tree_ops import normal_uids

        before: dict[str, set[int]] = {}
        after: dict[str, set[int]] = {}
        for name, uids in self.touched().items():
            old = {s.uid for s in self.before.task(name).schedule.steps()}
            before[name] = {u for u in uids if u in old}
            renumber = normal_uids(self.model.task(name).schedule)
            after[name] = {renumber[u] for u in uids if u in renumber}
        return before, after

    def diff(self) -> str:
        """A unified diff of each changed task's schedule, written as the calls a ``@schedule`` makes."""
        import difflib

        out: list[str] = []
        for old, new in zip(self.before.tasks, self.after.tasks):
            if old.schedule == new.schedule:
                continue
            out += difflib.unified_diff(schedule_lines(old.schedule), schedule_lines(new.schedule),
                                        f"task {old.name} (before)", f"task {new.name} (repaired)", lineterm="")
        for old_r, new_r in zip(self.before.resources, self.after.resources):
            if old_r.stages != new_r.stages:
                out += [f"--- {old_r.name}: {old_r.stages} stages", f"+++ {new_r.name}: {new_r.stages} stages"]
        return "\n".join(out)

    def source_diff(self, functions: dict[str, Callable[..., Any]]) -> str:
        """The unified diff of the ``@schedule`` functions (``{task name: function}``) this repair changes.

        Raises :class:`~ts_explore.repair.source.SourceUnavailable` saying why when it cannot be written.
        """
        from .source import source_diff

        return source_diff(self, functions)

    def task_set(self) -> dict[str, Any]:
        """Fresh ``dict(tasks=..., resource_dependency_graph=...)`` of the repaired schedule, ready for ``verify``."""
        if self.build is None:
            raise ValueError("this repair has no builder to make fresh tasks from; it was loaded without one")
        from ..reader.materialise import materialise

        return materialise(self.before, self.model, self.build)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the sentence, each edit as data, size, added bytes and the proof's scope in words."""
        return {
            "sentence": self.sentence,
            "edits": [{"kind": e.kind, **_plain(dataclasses.asdict(e))} for e in self.edits],  # type: ignore[call-overload]
            "steps_touched": self.size,
            "adds_stage": self.adds_stage,
            "added_smem_bytes": self.added_bytes,
            "diff": self.diff(),
            "proof": self.proof.status.value,
            "proof_scope": self.proof.scope.sentence() if self.proof.scope else "",
        }


def schedule_lines(tree: Any) -> list[str]:
    """A schedule as indented lines of calls and ``with`` blocks (what a diff of it shows).

    >>> from ts_explore.model import Bound, DomainLoop, ScheduleTree
    >>> schedule_lines(ScheduleTree("s", (), (DomainLoop(Bound.of_int(0), Bound.of_int(4), Bound.of_int(1), None, ()),)))
    ['with domain_loop(0, 4, 1):']
    """
    from ..model import Block, DomainLoop, Step, WorkTileLoop
    from .edits import call_text

    lines: list[str] = []

    def walk(nodes: Any, depth: int) -> None:
        pad = "    " * depth
        for node in nodes:
            if isinstance(node, Step):
                lines.append(pad + call_text(node))
            elif isinstance(node, DomainLoop):
                lines.append(pad + f"with domain_loop({node.start.text}, {node.end.text}, {node.step.text}):")
                walk(node.body, depth + 1)
            elif isinstance(node, WorkTileLoop):
                lines.append(pad + f"with {node.title.split(' [')[0]}:")
                walk(node.body, depth + 1)
            elif isinstance(node, Block):
                lines.append(pad + f"with {node.title}:")
                walk(node.body, depth + 1)

    walk(tree.body, 0)
    return lines


def _moved(old: list[int], new: list[int]) -> set[int]:
    """Steps whose place in execution order changed: those outside a longest common subsequence."""
    n, m = len(old), len(new)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if old[i] == new[j] else max(table[i + 1][j], table[i][j + 1])
    keep: set[int] = set()
    i = j = 0
    while i < n and j < m:
        if old[i] == new[j]:
            keep.add(old[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return set(new) - keep


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return getattr(value, "value", value)


@dataclass(frozen=True)
class Repairs:
    """The ranked proven repairs of one verdict, and what the search tried (also when it found nothing)."""

    repairs: tuple[Repair, ...]
    tried: str
    checked: int = 0
    proved: int = 0
    seconds: float = 0.0
    exhausted: bool = False  # every candidate within the depth was tried
    cancelled: bool = False

    def __iter__(self) -> Iterator[Repair]:
        return iter(self.repairs)

    def __len__(self) -> int:
        return len(self.repairs)

    def __getitem__(self, index: int) -> Repair:
        return self.repairs[index]

    def __bool__(self) -> bool:
        return bool(self.repairs)

    def __repr__(self) -> str:
        return f"Repairs({len(self.repairs)} proven; {self.tried})"

    def summary(self) -> str:
        """One line per repair (ranked), then what was tried."""
        lines = [f"{i}. {r.sentence} ({r.size} step(s) touched"
                 + (f", +{r.added_bytes} B shared memory" if r.added_bytes else "") + ")"
                 for i, r in enumerate(self.repairs, 1)]
        return "\n".join([*lines, self.tried])

    def to_dict(self) -> dict[str, Any]:
        return {"repairs": [r.to_dict() for r in self.repairs], "tried": self.tried, "checked": self.checked,
                "seconds": self.seconds, "exhausted": self.exhausted, "cancelled": self.cancelled}


__all__ = ["Repair", "Repairs", "schedule_lines"]
