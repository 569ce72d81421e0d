"""A :class:`SearchProblem` compiled for speed: states packed into one int, per-step effect tables.

A state is one Python int holding, in bit fields from the low end: every
task's cursor, every credit counter, every tally (TS's total counts) and the
PDL-wait flag. Counters never go negative (a decrement needs a positive
counter) and never exceed their initial value plus the increments the lanes
contain, so fixed-width fields cannot overflow or borrow. A step without
tallies or PDL effect is then a single addition (``state + delta``) and its
guard a single ``and`` (``state & need_mask``: the counter is positive iff
its field has a bit set).

The reduction's static tables live here too: for every task and cursor, the
counters its remaining steps may decrement or increment, the alias groups
they touch and whether a PDL wait is still ahead (suffix unions, so a
task's whole future is one lookup).
"""

from __future__ import annotations

from dataclasses import dataclass

from .problem import SearchProblem, Step


def _width(bound: int) -> int:
    return max(1, bound.bit_length())


def _alias_groups(problem: SearchProblem) -> list[int]:
    """Group id per resource: resources connected by aliasing share one (union-find)."""
    parent = list(range(len(problem.resources)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for table in (problem.alias, problem.prod_alias, problem.cons_alias):
        for r, others in enumerate(table):
            for o in others:
                parent[find(r)] = find(o)
    return [find(r) for r in range(len(problem.resources))]


def footprint(step: Step) -> set[int]:
    """Resources whose ownership entries a step reads or changes."""
    out: set[int] = set()
    op = step.held
    if op is not None:
        if op.own:
            out.add(step.resource)
        out.update(m for m, _ in op.merge_release)
        out.update(m for m, _ in op.fused_wait)
        out.update(op.tag_commit)
        out.update(op.clear_wait)
    if step.point is not None:
        out.add(step.resource)
    return out


@dataclass
class Tables:
    """Packed layout and per-(task, cursor) tables; index ``len(lane)`` of each table is "done"."""

    n: int
    lens: list[int]
    cursor_shift: list[int]
    cursor_mask: list[int]
    counter_shift: list[int]
    counter_mask: list[int]
    tally_shift: list[int]
    tally_mask: list[int]
    flag_bit: int
    initial: int
    need: list[list[int]]  # field mask of the counter that must be positive; 0: never blocks
    delta: list[list[int]]  # the addition that makes a plain step
    slow: list[list[bool]]  # tallies or a PDL wait: applied by :meth:`advance`
    launch: list[list[bool]]
    track_held: bool  # ownership state matters (some resources alias)
    held: list[list[bool]]  # the step changes ownership state
    # reduction tables (bit sets)
    dec_bits: list[list[int]]  # counter this step takes a credit from
    need_bit: list[list[int]]
    group_bits: list[list[int]]  # alias groups this step touches (ownership state)
    visible: list[list[bool]]  # may end a race (ownership / point access step)
    pdl_wait: list[list[bool]]
    fut_dec: list[list[int]]
    fut_inc: list[list[int]]
    fut_groups: list[list[int]]
    fut_pdl_wait: list[list[bool]]

    def cursors(self, state: int) -> tuple[int, ...]:
        """Every task's cursor in a packed state."""
        return tuple((state >> s) & m for s, m in zip(self.cursor_shift, self.cursor_mask))

    def counter_values(self, state: int) -> tuple[int, ...]:
        """Every credit counter in a packed state."""
        return tuple((state >> s) & m for s, m in zip(self.counter_shift, self.counter_mask))

    def flag(self, state: int) -> bool:
        """True once a PDL wait ran (or is assumed)."""
        return bool((state >> self.flag_bit) & 1)

    def advance(self, state: int, problem: SearchProblem, task: int, cursor: int) -> int:
        """The state after ``task`` runs the step at ``cursor`` (tallies and PDL flag included)."""
        step = problem.lanes[task][cursor]
        state += 1 << self.cursor_shift[task]
        for e in step.effects:
            if e.tally < 0:
                state += e.delta << self.counter_shift[e.counter]
                continue
            shift = self.tally_shift[e.tally]
            count = ((state >> shift) & self.tally_mask[e.tally]) + 1
            state += 1 << shift
            if count % e.every == 0:
                state += e.delta << self.counter_shift[e.counter]
        if step.pdl_wait:
            state |= 1 << self.flag_bit
        return state


def compile_problem(problem: SearchProblem) -> Tables:
    """Lay out the packed state and precompute every step's guard, effect and reduction facts."""
    n = len(problem.lanes)
    lens = [len(lane) for lane in problem.lanes]
    n_cnt = len(problem.counters)
    bound = [c.initial for c in problem.counters]
    tally_bound = [0] * problem.tallies
    for lane in problem.lanes:
        for step in lane:
            for e in step.effects:
                if e.delta > 0:
                    bound[e.counter] += 1
                if e.tally >= 0:
                    tally_bound[e.tally] += 1
    shift = 0
    cursor_shift, cursor_mask = [], []
    for length in lens:
        w = _width(length)
        cursor_shift.append(shift)
        cursor_mask.append((1 << w) - 1)
        shift += w
    counter_shift, counter_mask = [], []
    for b in bound:
        w = _width(b)
        counter_shift.append(shift)
        counter_mask.append((1 << w) - 1)
        shift += w
    tally_shift, tally_mask = [], []
    for b in tally_bound:
        w = _width(b)
        tally_shift.append(shift)
        tally_mask.append((1 << w) - 1)
        shift += w
    flag_bit = shift
    initial = sum(c.initial << counter_shift[k] for k, c in enumerate(problem.counters))
    if problem.assume_pdl_wait_completed:
        initial |= 1 << flag_bit

    track_held = problem.race_check
    groups = _alias_groups(problem)
    # a take that could disable a step with a point access (or a PDL launch) could remove an access (or end a
    # PDL violation): such a take is visible
    point_counters = {
        s.needs for lane in problem.lanes for s in lane if (s.point is not None or s.pdl_launch) and s.needs >= 0
    }
    t = Tables(
        n, lens, cursor_shift, cursor_mask, counter_shift, counter_mask, tally_shift, tally_mask, flag_bit, initial,
        [], [], [], [], track_held, [], [], [], [], [], [], [], [], [], [],
    )
    for task, lane in enumerate(problem.lanes):
        need, delta, slow, launch, held = [], [], [], [], []
        dec, needb, grp, vis, pdlw = [], [], [], [], []
        for step in lane:
            need.append(counter_mask[step.needs] << counter_shift[step.needs] if step.needs >= 0 else 0)
            plain = all(e.tally < 0 for e in step.effects) and not step.pdl_wait
            d = 1 << cursor_shift[task]
            if plain:
                d += sum(e.delta << counter_shift[e.counter] for e in step.effects)
            delta.append(d)
            slow.append(not plain)
            launch.append(step.pdl_launch)
            changes_held = track_held and step.held is not None
            held.append(changes_held)
            dec.append(1 << step.needs if step.needs >= 0 else 0)
            needb.append(1 << step.needs if step.needs >= 0 else 0)
            g = 0
            if track_held:
                for r in footprint(step):
                    g |= 1 << groups[r]
            grp.append(g)
            vis.append((track_held and (step.held is not None or step.point is not None)) or step.needs in point_counters)
            pdlw.append(step.pdl_wait)
        # the "done" sentinel
        for table, value in ((need, 0), (delta, 0), (slow, False), (launch, False), (held, False), (dec, 0),
                             (needb, 0), (grp, 0), (vis, False), (pdlw, False)):
            table.append(value)
        t.need.append(need)
        t.delta.append(delta)
        t.slow.append(slow)
        t.launch.append(launch)
        t.held.append(held)
        t.dec_bits.append(dec)
        t.need_bit.append(needb)
        t.group_bits.append(grp)
        t.visible.append(vis)
        t.pdl_wait.append(pdlw)
        fd, fi, fg, fp = [0] * (len(lane) + 1), [0] * (len(lane) + 1), [0] * (len(lane) + 1), [False] * (len(lane) + 1)
        for c in range(len(lane) - 1, -1, -1):
            step = lane[c]
            inc = 0
            for e in step.effects:
                if e.delta > 0:
                    inc |= 1 << e.counter
            fd[c] = fd[c + 1] | dec[c]
            fi[c] = fi[c + 1] | inc
            fg[c] = fg[c + 1] | grp[c]
            fp[c] = fp[c + 1] or step.pdl_wait
        t.fut_dec.append(fd)
        t.fut_inc.append(fi)
        t.fut_groups.append(fg)
        t.fut_pdl_wait.append(fp)
    assert n_cnt == len(counter_shift)
    return t


__all__ = ["Tables", "compile_problem", "footprint"]
