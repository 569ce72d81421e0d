"""A repair's source diff: generated from the edit, and recording the patched function gives the repaired tree."""

from __future__ import annotations

from functools import partial

import pytest

import ts_explore
from ts_explore.repair.result import schedule_lines
from ts_explore.repair.source import SourceUnavailable, patched_source

import schedules_for_source as S


def _record(source: str, name: str) -> list[str]:
    namespace = dict(S.__dict__)
    exec(compile(source, "<patched>", "exec"), namespace)  # noqa: S102 - the patched schedule function
    src, smem, dst = S.resources()
    return schedule_lines(ts_explore.record(namespace[name], smem, dst).tree)


@pytest.mark.parametrize("fn", [S.store, S.store_early])
def test_patched_source_records_the_repaired_tree(fn) -> None:
    found = ts_explore.repairs(partial(S.pair, fn))
    assert found, found.tried
    for repair in found:
        try:
            text = patched_source(repair, fn, "Store")
        except SourceUnavailable:
            assert "Store" not in {getattr(e, "task", "") for e in repair.edits}
            continue
        assert _record(text, fn.__name__) == schedule_lines(repair.after.task("Store").schedule), repair.sentence


def test_source_diff_of_the_missing_release() -> None:
    top = ts_explore.repairs(partial(S.pair, S.store))[0]
    diff = top.source_diff({"Store": S.store, "Load": S.load})
    assert "schedules_for_source.py (store)" in diff
    assert "+        smem.release()" in diff and diff.count("\n+") == 2  # the +++ header and the inserted call


def test_control_flow_is_said_to_be_out_of_reach() -> None:
    from ts_explore import gallery

    top = ts_explore.repairs(gallery.get("cross_wait").broken)[0]

    def ping(left, right):
        for _ in range(1):
            right.wait()

    with pytest.raises(SourceUnavailable, match="control flow"):
        top.source_diff({"Ping": ping, "Pong": ping})
