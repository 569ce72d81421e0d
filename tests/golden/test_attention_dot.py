"""Golden DOT of the attention schedule: a consumer warpgroup's loop and the pipelines between the tasks."""

from __future__ import annotations

import subprocess

import pytest

import ts_explore
from ts_explore.scenarios import get


def _task_set(overlap: bool) -> ts_explore.TaskSet:
    sc = get("hopper_attention")
    return ts_explore.task_set(sc.build(sc.config(overlap=overlap)).verify_kwargs())


@pytest.mark.parametrize("overlap", [True, False], ids=["overlap", "no_overlap"])
def test_attention_schedule_dot_is_golden_and_renders(overlap: bool, golden) -> None:
    dot = ts_explore.schedule_graph(_task_set(overlap)).source
    assert dot == ts_explore.schedule_graph(_task_set(overlap)).source, "same schedule must give the same DOT"
    golden(f"dot/attention_{'overlap' if overlap else 'no_overlap'}.dot", dot)
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    assert "<svg" in svg


def test_attention_dependency_dot_is_golden(golden) -> None:
    golden("dot/attention_dependencies.dot", ts_explore.dependency_graph(_task_set(True)).source)
