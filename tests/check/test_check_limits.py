"""What a user sees when a search cannot finish, and the counterexamples it returns.

A capped or cancelled search is never reported safe; progress is reported
while it runs; every counterexample replays move by move to the state it
names; the reduction proves the GEMM-shaped family where TS's search stops
at its cap.
"""

from __future__ import annotations

import threading
import warnings

import pytest
from check_cases import HAND_MADE
from cutlass.experimental.task_scheduling import exhaustive_checker as ec

from ts_explore.check import search
from ts_explore.check.tables import compile_problem
from ts_explore.gallery.gemm_family import gemm_family
from ts_explore.reader.search_input import search_problem


def _problem(n_loaders: int = 2, iterations: int = 6, deadlock: bool = False):
    return search_problem(gemm_family(n_loaders, iterations, deadlock=deadlock)["tasks"])


@pytest.mark.parametrize("reduce", [True, False])
def test_a_capped_search_is_not_safe(reduce):
    result = search(_problem(), reduce=reduce, max_states=5)
    assert result.hit_cap and not result.complete and not result.proven_safe
    assert result.states_explored == 5


def test_a_cancelled_search_is_not_safe():
    cancel = threading.Event()
    seen = []

    def progress(states, rate, elapsed):
        seen.append((states, rate, elapsed))
        cancel.set()  # the user presses "stop" after the first report

    result = search(_problem(3, 16), reduce=False, progress=progress, progress_every_s=0.0, cancel=cancel)
    assert result.cancelled and not result.complete and not result.proven_safe
    assert seen and 0 < seen[0][0] < result.states_explored + 1 and seen[0][1] > 0
    assert result.states_explored < 10_000  # it stopped soon after the request
    stopped = threading.Event()
    stopped.set()
    run = search(_problem(3, 16), reduce=False, cancel=stopped)  # stopped before it starts
    assert run.cancelled and not run.proven_safe and not run.complete


def test_progress_reports_states_rate_and_time():
    seen = []
    result = search(_problem(2, 8), reduce=False, progress=lambda *a: seen.append(a), progress_every_s=0.0)
    assert result.proven_safe
    states = [s for s, _, _ in seen]
    assert states == sorted(states) and states[-1] == result.states_explored
    assert all(rate > 0 and elapsed >= 0 for _, rate, elapsed in seen)


def test_bad_cap_is_refused_with_its_cause():
    with pytest.raises(ValueError, match="max_states must be a non-negative int"):
        search(_problem(), max_states=-1)


def _replay(problem, moves):
    """Run the moves through the engine's own step rules; the cursors at the end (each move must be enabled)."""
    t = compile_problem(problem)
    state = t.initial
    for task, step in moves:
        assert t.cursors(state)[task] == step, "a move out of program order"
        need = t.need[task][step]
        assert not need or state & need, f"move {task}:{step} taken without a credit"
        state = t.advance(state, problem, task, step)
    return t.cursors(state)


@pytest.mark.parametrize("name", [n for n in sorted(HAND_MADE) if n.endswith(":broken") or "deadlock" in n])
@pytest.mark.parametrize("reduce", [True, False])
def test_counterexamples_replay_to_their_state(name, reduce):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = HAND_MADE[name]()
        problem = search_problem(tasks, num_tiles=2 if "skipped" in name or "workqueue" in name else 1,
                                 skipped_tile="skipped" in name)
    result = search(problem, reduce=reduce, early_exit=False, max_states=200_000)
    for finding in result.findings:
        assert _replay(problem, finding.path) == finding.cursors


def _path_words(problem, moves):
    """A path of moves in the words of TS's path recorder: ``[(task, "Stage(resource)"), ...]``."""
    return [(problem.tasks[m.task], problem.step_text(m.task, m.step)) for m in moves]


def test_counterexample_is_as_short_as_ts_finds():
    problem = search_problem(HAND_MADE["gallery:missing_release:broken"]())
    unreduced = search(problem, reduce=False)
    from ts_explore.reader.ts_search import capture_paths

    ts_paths = capture_paths(HAND_MADE["gallery:missing_release:broken"](), {}, ec.check_all_interleavings)
    found = unreduced.findings[0]
    assert [(found.kind, found.cursors, _path_words(problem, found.path))] == ts_paths  # same BFS, same words
    reduced = search(search_problem(HAND_MADE["gallery:missing_release:broken"]()))
    assert len(reduced.findings[0].path) == len(ts_paths[0][2])


def test_the_reduction_proves_what_ts_stops_on():
    tasks = gemm_family(3, 16)["tasks"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = ec.check_all_interleavings(tasks, max_states=20_000)
    assert ts.hit_state_limit  # TS's answer at this cap: not proven
    ours = search(_problem(3, 16))
    assert ours.proven_safe and ours.states_explored < 1_000
    problem = _problem(3, 16, deadlock=True)
    broken = search(problem)
    assert not broken.proven_safe and len(broken.deadlocks) == 1
    found = broken.deadlocks[0]
    blocked = {(problem.tasks[k], problem.lanes[k][found.cursors[k]].stage) for k in found.blocked}
    assert ("Loader2", "ProducerAcquire") in blocked and ("Mma", "ConsumerWait") in blocked


def test_docstring_examples_run():
    import doctest

    from ts_explore.check import engine
    from ts_explore.gallery import gemm_family as family

    for module in (engine, family):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__
