"""Brute force for persistent task sets: search every tile count 1..N unrolled, and compare with ``verify``.

:func:`unrolled` builds TS's own N-tile checker input for each N
(:func:`ts_explore.reader.search_input.search_problem` with ``num_tiles=N``:
each task's expanded schedule repeated N times, ring slots and generations
counted over the whole concatenation) and searches it with ts-explore's
engine over every interleaving (``reduce=False``), the skipped-tile variant
too when a task has ``skip_if``. Nothing of ``analysis/tiles.py`` is used:
the only claim is "this N-tile instance has (or has no) deadlock, race or PDL
violation".

:func:`compare` runs ``verify`` (the default, or with keywords such as
``cross_check=True``) and the brute force on fresh objects, and returns a
:class:`Compared` row; ``wrong_safe`` is the bug this harness exists to
catch: a SAFE answer where some tile count reaches a finding.

Entry points::

    from tile_sets import tile_set
    from tile_brute import compare, tally
    row = compare(tile_set(17))              # one set
    counts = tally(range(300))               # many: counts and the wrong SAFE seeds
    print(counts.text())
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tile_sets import TileSetSpec, tile_set

from ts_explore import verify
from ts_explore.check.engine import search
from ts_explore.reader.search_input import search_problem

BRUTE_STATES = 2_000_000  # per run; a capped run makes the row "unknown", never race-free
VERIFY_STATES = 20_000  # per search of verify: keeps one slow proof from holding up the whole tally


@dataclass(frozen=True)
class Unrolled:
    """What the unrolled searches found: finding kinds, the smallest tile count of each, and whether all finished."""

    kinds: frozenset[str]
    first_tiles: tuple[tuple[str, int], ...]  # (kind, smallest N reaching it)
    complete: bool  # every run finished (or stopped at a finding)
    tiles: int  # the largest N searched
    states: int

    @property
    def answer(self) -> str:
        """``safe``, ``not proven`` or the kinds joined by ``+``."""
        if self.kinds:
            return "+".join(sorted(self.kinds))
        return "safe" if self.complete else "not proven"


def _problem(tasks: list[Any], n: int, skipped: bool) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search_problem(tasks, num_tiles=n, skipped_tile=skipped)


def unrolled(build: Callable[[], dict[str, Any]], tiles: int, *, skip: bool = False,
             max_states: int = BRUTE_STATES) -> Unrolled:
    """Search 1..``tiles`` tiles (each also skipped-tile with ``skip``), stopping at the first finding.

    A race or PDL violation reachable at some N is reachable at every larger N (a
    state of the N-tile run is one of the larger run too, where a finished task has
    moved on to a further tile: its next access only adds pairs), so one search over
    every interleaving at ``tiles`` finds them all. A deadlock is not monotone in N:
    each N is searched, with the reduced engine (which loses no deadlock, see
    ``check/SEMANTICS.md``; the unreduced search at ``tiles`` confirms the race half
    without it).
    """
    first: dict[str, int] = {}
    states = 0
    complete = True
    variants = (False, True) if skip else (False,)
    tasks = build()["tasks"]  # reading the checker input leaves the tasks as they were (no TaskManager here)

    def run(n: int, reduce: bool) -> None:
        nonlocal states, complete
        for skipped in variants:
            result = search(_problem(tasks, n, skipped), reduce=reduce, early_exit=True, max_states=max_states)
            states += result.states_explored
            for f in result.findings:
                first.setdefault(f.kind, n)
            complete &= bool(result.findings) or result.complete

    for n in range(1, tiles + 1):
        run(n, reduce=True)
        if first:
            break
    if not first:
        run(tiles, reduce=False)
    return Unrolled(frozenset(first), tuple(sorted(first.items())), complete, tiles, states)


@dataclass(frozen=True)
class Compared:
    """One set: verify's answer (without and with ``cross_check=True``), the brute force's, and wrong SAFEs."""

    seed: int
    status: str  # verify's default answer: safe | unsafe | inconclusive
    checked: str  # with cross_check=True (run only where the default says SAFE: it can only take SAFE away)
    brute: Unrolled
    reasons: tuple[str, ...] = ()  # the cross-checked verdict's reasons

    @property
    def wrong_safe(self) -> bool:
        """The default ``verify`` said SAFE and some tile count reaches a finding."""
        return self.status == "safe" and bool(self.brute.kinds)

    @property
    def wrong_checked(self) -> bool:
        """``verify(..., cross_check=True)`` said SAFE and some tile count reaches a finding."""
        return self.checked == "safe" and bool(self.brute.kinds)

    @property
    def race_free(self) -> bool:
        """The brute force finished every tile count and found nothing."""
        return not self.brute.kinds and self.brute.complete

    def text(self, spec: TileSetSpec | None = None) -> str:
        """The row in words, with the set's description when given."""
        line = (f"seed {self.seed}: verify {self.status.upper()} (cross-checked: {self.checked.upper()}), brute "
                f"force over 1..{self.brute.tiles} tiles {self.brute.answer}"
                + (f" (first at {dict(self.brute.first_tiles)} tiles)" if self.brute.kinds else ""))
        return line + ("\n" + spec.describe() if spec is not None else "")


def compare(spec: TileSetSpec, max_states: int = VERIFY_STATES) -> Compared:
    """``verify`` (and, where it says SAFE, ``verify(..., cross_check=True)``) beside :func:`unrolled`.

    ``max_states`` caps each of verify's searches (a capped search is INCONCLUSIVE, never SAFE, so the cap
    can lower the share proven but cannot hide a wrong SAFE).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = verify(**spec.build(), max_states=max_states)
        checked = verify(**spec.build(), cross_check=True, max_states=max_states) if v.ok else v
    brute = unrolled(spec.build, spec.tiles_needed(), skip=spec.skip_if)
    return Compared(spec.seed, v.status.value, checked.status.value, brute, tuple(checked.reasons))


@dataclass
class Tally:
    """Counts over many sets (what the default-tier test asserts and the benchmark prints)."""

    sets: int = 0
    race_free: int = 0  # the brute force finished every tile count and found nothing
    proven: int = 0  # race-free sets the default verify proved SAFE
    proven_checked: int = 0  # ... and verify(..., cross_check=True)
    unsafe: int = 0  # sets the brute force found a finding in
    unknown: int = 0  # the brute force was capped
    rows: list[Compared] = field(default_factory=list)
    specs: dict[int, TileSetSpec] = field(default_factory=dict)

    def add(self, row: Compared, spec: TileSetSpec) -> None:
        """Count one compared set."""
        self.sets += 1
        if row.race_free:
            self.race_free += 1
            self.proven += row.status == "safe"
            self.proven_checked += row.checked == "safe"
        elif row.brute.kinds:
            self.unsafe += 1
        else:
            self.unknown += 1
        if row.wrong_safe or row.wrong_checked:
            self.rows.append(row)
            self.specs[row.seed] = spec

    @property
    def wrong_safe(self) -> list[Compared]:
        """Sets the default verify called SAFE that have a finding at some tile count."""
        return [r for r in self.rows if r.wrong_safe]

    @property
    def wrong_checked(self) -> list[Compared]:
        """Sets verify(..., cross_check=True) called SAFE that have a finding at some tile count."""
        return [r for r in self.rows if r.wrong_checked]

    def share(self, checked: bool = False) -> float:
        """The share of race-free sets proved SAFE (by the default verify, or with the cross-check)."""
        proven = self.proven_checked if checked else self.proven
        return proven / self.race_free if self.race_free else 1.0

    def text(self) -> str:
        """The counts, then each wrong SAFE with its set."""
        lines = [
            f"{self.sets} sets: {self.race_free} free of findings at every tile count 1..N, {self.unsafe} with a "
            f"finding, {self.unknown} capped",
            f"default verify: {len(self.wrong_safe)} wrong SAFE; proved {self.proven} of the {self.race_free} "
            f"race-free sets SAFE ({100 * self.share():.1f} %)",
            f"verify(cross_check=True): {len(self.wrong_checked)} wrong SAFE; proved {self.proven_checked} of the "
            f"{self.race_free} race-free sets SAFE ({100 * self.share(True):.1f} %)",
        ]
        return "\n".join([*lines, *(r.text(self.specs[r.seed]) for r in self.rows)])


def tally(seeds: Iterable[int], max_states: int = VERIFY_STATES) -> Tally:
    """:func:`compare` over the sets of ``seeds``."""
    out = Tally()
    for seed in seeds:
        spec = tile_set(seed)
        out.add(compare(spec, max_states), spec)
    return out


__all__ = ["BRUTE_STATES", "VERIFY_STATES", "Compared", "Tally", "Unrolled", "compare", "tally", "unrolled"]
