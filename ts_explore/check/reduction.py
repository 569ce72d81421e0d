"""Stubborn sets: which enabled tasks a state must branch on (the partial-order reduction).

Computed per state from static tables (:mod:`ts_explore.check.tables`), at
task granularity: a set ``S`` of unfinished tasks is closed under the
clauses of :data:`CLAUSES` (SEMANTICS.md, "The reduction"):

* ``take``: for a task in ``S`` whose next step is **enabled** and takes a
  credit from counter ``x``, every task that may still take from ``x``;
* ``alias``: for a task in ``S`` whose enabled step touches an alias group
  (ownership lists or a point access), every task that may still touch it;
* ``give``: for a task in ``S`` whose next step is **disabled**, every task
  that may still give the credit it needs;
* ``pdl``: for a PDL launch held back because no PDL wait ran yet, every
  task with a PDL wait still ahead;

and the ``proviso``: the branch set must contain an invisible step (no
ownership change, no point access, no PDL wait while none ran, no take
from a counter a point-access step or a PDL launch needs) unless it is
every enabled step.
The branch set is the enabled part of the closed ``S`` with the fewest
enabled steps. Giving a credit, local work, ``try_*`` probes, WorkQueue
steps and PDL waits conflict with nothing, so a task whose next step is one
of those and is invisible forms ``S`` alone (the fast path).

:data:`DISABLED` leaves clauses out, for the tests that show each one is
needed; it is empty in real use. The soundness argument is in SEMANTICS.md.
"""

from __future__ import annotations

from .tables import Tables

#: The closure rules and the proviso, by name (see the package's SEMANTICS.md, "The reduction").
CLAUSES = frozenset({"take", "alias", "give", "pdl", "proviso"})
#: Clauses switched off, for tests that show each one is needed; always empty in real use.
DISABLED: frozenset[str] = frozenset()


def branch_set(t: Tables, cur: list[int], enabled: list[int], held_back: list[int], flag: bool) -> list[int]:
    """The enabled tasks to explore at a state (``enabled`` in task order; all of it when nothing smaller is sound).

    ``held_back`` are tasks stopped at a PDL launch because no PDL wait ran yet.
    """
    if len(enabled) <= 1:
        return enabled
    vis = t.visible
    pdlw = t.pdl_wait
    off = DISABLED
    if off:
        return _branch_set(t, cur, enabled, held_back, flag, off)
    # fast path: a step that conflicts with nothing and cannot end a violation
    for v in enabled:
        c = cur[v]
        if not t.dec_bits[v][c] and not t.group_bits[v][c] and not vis[v][c] and (flag or not pdlw[v][c]):
            return [v]
    return _branch_set(t, cur, enabled, held_back, flag, off)


def _branch_set(
    t: Tables, cur: list[int], enabled: list[int], held_back: list[int], flag: bool, off: frozenset[str]
) -> list[int]:
    """The smallest closed set's enabled part, over every enabled seed (``off``: clauses left out)."""
    vis = t.visible
    pdlw = t.pdl_wait
    take, alias, give, pdl = ("take" not in off, "alias" not in off, "give" not in off, "pdl" not in off)
    proviso = "proviso" not in off
    enabled_set = set(enabled)
    held_set = set(held_back)
    unfinished = [u for u in range(t.n) if cur[u] < t.lens[u]]
    fut_dec = [t.fut_dec[u][cur[u]] for u in range(t.n)]
    fut_inc = [t.fut_inc[u][cur[u]] for u in range(t.n)]
    fut_grp = [t.fut_groups[u][cur[u]] for u in range(t.n)]
    best: list[int] = enabled
    for seed in enabled:
        members = {seed}
        stack = [seed]
        while stack:
            v = stack.pop()
            c = cur[v]
            if v in enabled_set:
                d = t.dec_bits[v][c] if take else 0
                g = t.group_bits[v][c] if alias else 0
                if not (d or g):
                    continue
                add = [u for u in unfinished if u not in members and (fut_dec[u] & d or fut_grp[u] & g)]
            elif v in held_set:
                if not pdl:
                    continue
                add = [u for u in unfinished if u not in members and t.fut_pdl_wait[u][cur[u]]]
            else:
                if not give:
                    continue
                x = t.need_bit[v][c]
                add = [u for u in unfinished if u not in members and fut_inc[u] & x]
            members.update(add)
            stack.extend(add)
            if len(members & enabled_set) >= len(best):
                break
        chosen = [u for u in enabled if u in members]
        if len(chosen) >= len(best):
            continue
        if not proviso or any(not vis[u][cur[u]] and (flag or not pdlw[u][cur[u]]) for u in chosen):
            best = chosen
            if len(best) == 1:
                break
    return best


__all__ = ["CLAUSES", "DISABLED", "branch_set"]
