"""Every grammar error becomes a Problem naming the rule, a fix, and the culprit line."""

from __future__ import annotations

import inspect

import pytest

import broken_schedules
from broken_schedules import CASES, NOT_SCHEDULES, TASK_CASES
from ts_explore import Recording


def _marked_line(fn) -> tuple[int, str]:
    lines, start = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if "# <-" in text:
            return start + offset, text.rstrip()
    raise AssertionError(f"{fn.__name__} has no '# <-' marker")


@pytest.mark.parametrize("rule", sorted(CASES))
def test_grammar_error_is_a_problem(rule: str, golden) -> None:
    rec = CASES[rule]()
    assert isinstance(rec, Recording)
    assert not rec.ok and rec.schedule is None
    problem = rec.error
    assert problem.rule == rule, problem
    assert problem.hint and problem.hint != problem.message
    line, text = _marked_line(CASES[rule])
    assert problem.filename == broken_schedules.__file__
    assert problem.line == line, f"points at line {problem.line}, culprit is {line}: {text.strip()}"
    assert problem.source == text
    golden(
        f"errors/{rule}.txt",
        f"rule: {problem.rule}\ntype: {problem.error_type}\nmessage: {problem.message}\n"
        f"hint: {problem.hint}\nsource: {problem.source.strip()}\n",
    )
    html = rec._repr_mimebundle_()["text/html"]
    assert "How to fix" in html and problem.rule in html


def _golden_text(problem) -> str:
    return (f"rule: {problem.rule}\ntype: {problem.error_type}\nmessage: {problem.message}\n"
            f"hint: {problem.hint}\nsource: {problem.source.strip()}\n")


@pytest.mark.parametrize("rule", sorted(TASK_CASES))
def test_task_time_rejection_is_a_problem_and_the_schedule_still_draws(rule: str, golden) -> None:
    rec = TASK_CASES[rule]()
    assert not rec.ok and rec.error is not None and rec.schedule is not None
    problem = rec.error
    assert problem.rule == rule, problem
    assert problem.hint and problem.hint != problem.message
    line, text = _marked_line(TASK_CASES[rule])
    assert (problem.filename, problem.line, problem.source) == (broken_schedules.__file__, line, text)
    golden(f"errors/{TASK_CASES[rule].__name__.replace('_', '-')}.txt", _golden_text(problem))
    bundle = rec._repr_mimebundle_()
    html = bundle["text/html"]
    assert html.index("How to fix") < html.index("rejects it") < html.index("ts-explore-diagram")
    assert problem.rule in html and rec.tree.steps()
    assert bundle["text/plain"].startswith(f"[{rule}]")


@pytest.mark.parametrize("name", sorted(NOT_SCHEDULES))
def test_non_schedules_are_a_problem(name: str, golden) -> None:
    rec = NOT_SCHEDULES[name]()
    assert not rec.ok and rec.schedule is None and rec.tree is None
    problem = rec.error
    assert problem.rule in ("not-a-schedule", "async-or-generator-schedule")
    line, text = _marked_line(NOT_SCHEDULES[name])
    assert (problem.line, problem.source) == (line, text)
    golden(f"errors/{name}.txt", _golden_text(problem))
    assert "How to fix" in rec._repr_mimebundle_()["text/html"]
