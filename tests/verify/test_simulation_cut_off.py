"""TS's credit simulation stops after the longest schedule + 100 rounds; verification tells that cut-off apart
from a real imbalance by replaying the rounds to the end (ts_explore.check.lockstep)."""

from __future__ import annotations

from ts_explore.check.lockstep import lockstep
from ts_explore.check.problem import Counter, CreditEffect, SearchProblem, Step
from ts_explore.reader.instance import SearchInput, Searched
from ts_explore.model.findings import CheckOutcome
from ts_explore.reader.checks import check_outcome
from ts_explore.reader.simulation import SIMULATION
from ts_explore.verification.simulation_limit import CUT_OFF, overrule_cut_off

FULL, EMPTY = Counter(0, 0, "commit"), Counter(0, 0, "empty", initial=1)
PRODUCE = (Step(0, "ProducerAcquire", needs=1, effects=(CreditEffect(1, -1),)),
           Step(0, "ProducerCommit", effects=(CreditEffect(0, 1),)))
CONSUME = (Step(0, "ConsumerWait", needs=0, effects=(CreditEffect(0, -1),)),
           Step(0, "ConsumerRelease", effects=(CreditEffect(1, 1),)))
REPORT = "1x ProducerCommit from ring not consumed!"


def failed() -> CheckOutcome:
    return check_outcome(SIMULATION, ValueError(REPORT))


def searched(items_in: int, items_out: int, *, capped: bool = False, found: int = 0) -> Searched:
    problem = SearchProblem(("load", "store"), (PRODUCE * items_in, CONSUME * items_out), ("ring",), (FULL, EMPTY))
    return Searched(SearchInput({}, (), problem, None), {"deadlock": found, "race": 0}, 10, capped, None)


def test_a_balanced_run_longer_than_ts_allows_overrules_the_report_with_a_note() -> None:
    run = searched(120, 120)  # one-stage ring: 4 rounds an item, 480 rounds against TS's 240 + 100
    assert lockstep(run.input.problem).rounds == 480 and lockstep(run.input.problem).ts_limit == 340
    checks = [failed()]
    note = overrule_cut_off(checks, REPORT, [run])
    assert checks == [CheckOutcome(SIMULATION, failed().title, True)]
    assert note is not None and note.kind == CUT_OFF and "340 rounds" in note.message and "480 rounds" in note.message


def test_a_real_imbalance_a_short_run_or_an_unfinished_search_keeps_the_report() -> None:
    for runs in ([searched(121, 120)],  # one item never consumed: a real imbalance
                 [searched(3, 3)],  # balanced but within TS's limit: TS's report would not be the cut-off
                 [searched(120, 120, capped=True)],  # the search did not finish: proves nothing
                 [searched(120, 120, found=1)]):  # the search found something
        checks = [failed()]
        assert overrule_cut_off(checks, REPORT, runs) is None
        assert checks == [failed()]
