"""Every grammar error becomes a Problem naming the rule, a fix, and the culprit line."""

from __future__ import annotations

import inspect

import pytest

import broken_schedules
from broken_schedules import CASES
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
