"""One name per kind of rule, each listed in the README; a failed capture's cause reaches the verdict."""

from __future__ import annotations

from pathlib import Path

from ts_explore import gallery, verify
from ts_explore.model.verdict import CheckOutcome
from ts_explore.reader.checks import TS_CHECKS
from ts_explore.reader.problems import GRAMMAR_PROBLEMS
from ts_explore.reader.task_problems import TASK_TIME_PROBLEMS
from ts_explore.reader import tasks as reader_tasks
from ts_explore.verification.rules import VERIFICATION_RULES, VerificationRule

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_readme_names_each_kind_and_its_table() -> None:
    for kind, table in (("grammar problem", "GRAMMAR_PROBLEMS"), ("Task-time problem", "TASK_TIME_PROBLEMS"),
                        ("TS check", "TS_CHECKS"), ("verification rule", "VERIFICATION_RULES")):
        assert f"| {kind} |" in README and f"`{table}`" in README, kind
    assert GRAMMAR_PROBLEMS and TASK_TIME_PROBLEMS and "_exhaustive_aliasing_races" in TS_CHECKS


def test_every_registered_verification_rule_is_one_and_is_named_in_the_readme() -> None:
    for name, cls in VERIFICATION_RULES.items():
        assert cls.name == name and f"`{name}`" in README
        assert cls.not_modelled and isinstance(cls.__new__(cls), VerificationRule)


def test_a_failed_capture_keeps_its_cause_for_the_rules_and_the_raw_output(monkeypatch) -> None:
    def broken_capture(*args, **kwargs):
        raise ValueError("resource 'left' has no pipeline_config")

    def one_task(task_set) -> CheckOutcome:
        return CheckOutcome("one_task", "one task", len(task_set.tasks) == 1)

    monkeypatch.setattr(reader_tasks, "capture_task_set", broken_capture)
    v = verify(**gallery.get("cross_wait").fixed(), rules=[one_task])
    (rule,) = [c for c in v.checks if c.name == "one_task"]
    assert not rule.passed and "no pipeline_config" in rule.message
    assert "capturing the task set failed" in v.raw_output and "no pipeline_config" in v.raw_output
