"""When TS's credit simulation stopped at its round limit, not at an imbalance.

TS simulates the tasks in lock-step rounds for the longest schedule's length
plus 100 rounds, then compares credit totals. A schedule whose tasks take
turns for long stretches (consumers that hand a turn back and forth through
a pipeline, each running a long loop in its turn) needs more rounds, and TS reports the credits the
remaining rounds would consume as "not consumed". Such a report is overruled
here only when all of this holds for every search run of the verification:

* our engine searched it to the end (no cap, no cancel) and found nothing;
* :func:`ts_explore.check.lockstep.lockstep` replays it in TS's rounds, without
  the limit, to the end with every credit back at its start;
* at least one replay needs more rounds than TS allows (so TS was cut off).

Anything else keeps TS's report. The overruled check passes with a note
that says what TS reported and why it does not stand.
"""

from __future__ import annotations

from ..check.lockstep import lockstep
from ..model.findings import CheckOutcome, Note
from ..reader.instance import Searched
from ..reader.simulation import SIMULATION
from ..reader.ts_text import parse_imbalance

CUT_OFF = "simulation-cut-off"


def overrule_cut_off(checks: list[CheckOutcome], message: str | None, searched: list[Searched]) -> Note | None:
    """Mark the simulation check passed (in ``checks``) when its failure ``message`` is TS's round limit; the note,
    or None (``message``: the simulation's failure as TS raised it, None when it passed)."""
    at = next((i for i, c in enumerate(checks) if c.name == SIMULATION and not c.passed), None)
    if at is None or message is None or not searched:
        return None
    if parse_imbalance(message) is None:
        return None
    if any(s.capped or s.input.problem is None or any(s.findings.values()) for s in searched):
        return None
    replays = [lockstep(s.input.problem) for s in searched if s.input.problem is not None]
    if not all(r.balanced for r in replays) or not any(r.beyond_ts_limit for r in replays):
        return None
    longest = max(replays, key=lambda r: r.rounds)
    checks[at] = CheckOutcome(SIMULATION, checks[at].title, True)
    first_line = message.strip().splitlines()[0]
    return Note(CUT_OFF, (
        f"TS's credit simulation stopped at its limit of {longest.ts_limit} rounds (the longest schedule + 100) and "
        f"reported '{first_line}'; replayed in the same rounds to the end ({longest.rounds} rounds), every credit "
        "comes back, and the exhaustive search found no deadlock or race: the report is the cut-off, not an "
        "imbalance"))


__all__ = ["CUT_OFF", "overrule_cut_off"]
