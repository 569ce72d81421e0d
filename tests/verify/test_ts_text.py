"""Pin the formats of the TS texts ts-explore parses, against messages real TS produces."""

from __future__ import annotations

import contextlib
import io

import pytest
import verify_builders as B
from cutlass.experimental.task_scheduling import exhaustive_checker as ec
from cutlass.experimental.task_scheduling.task_manager import TaskManager

from ts_explore import gallery
from ts_explore.reader import checks, ts_search
from ts_explore.reader.ts_text import (
    BlockedLine,
    parse_blocked,
    parse_imbalance,
    parse_path_op,
    parse_printed_notes,
)


def _ts_error(kwargs: dict) -> str:
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(ValueError) as info:
        TaskManager(**kwargs, verbose=False)
    return str(info.value)


def test_schedule_is_blocked_format():
    message = _ts_error(gallery.get("cross_wait").broken())
    lines = parse_blocked(message)
    assert lines == [
        BlockedLine("right", "ConsumerWait", 0,
                    "waiting for producer commit credit; no matching credit is available for this resource", "commit"),
        BlockedLine("left", "ConsumerWait", 0,
                    "waiting for producer commit credit; no matching credit is available for this resource", "commit"),
    ]


def test_blocked_lines_cut_names_to_ten_characters():
    lines = parse_blocked(_ts_error(B.long_names()))
    assert [line.resource_prefix for line in lines] == ["left_buffe", "left_buffe"]
    assert lines[0].matches("left_buffer_rope") and not lines[0].matches("left_buff")


def test_empty_slot_reason():
    lines = parse_blocked(_ts_error(gallery.get("missing_release").broken()))
    assert [(line.resource_prefix, line.stage, line.credit) for line in lines] == [
        ("smem", "ProducerAcquire", "empty"), ("smem", "ConsumerWait", "commit")]


def test_imbalance_formats():
    assert parse_imbalance(_ts_error(gallery.get("producer_longer").broken())) == (
        parse_imbalance("1x ProducerCommit from smem not consumed!"))
    imb = parse_imbalance(_ts_error(gallery.get("producer_longer").broken()))
    assert (imb.kind, imb.count, imb.resource) == ("unconsumed-commit", 1, "smem")
    assert parse_imbalance("2x ProducerAcquire from a b not matched by ConsumerRelease!").kind == (
        "acquire-without-release")
    assert parse_imbalance("3x ConsumerRelease from x not matched by ProducerAcquire!").count == 3
    assert parse_imbalance("Schedule is blocked!") is None
    assert parse_blocked("1x ProducerCommit from smem not consumed!") is None


def test_printed_warning_format():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        TaskManager(**B.head_loop_overlap(), verbose=False)
    (note,) = parse_printed_notes(out.getvalue())
    assert (note.kind, note.level, note.task, note.resource) == ("head-loop-overlap", "WARNING", "Producer", "smem")
    (other,) = parse_printed_notes("[pipeline-thread-check] WARNING: resource 'wq' has opaque cta_layout_vmnk; skip")
    assert (other.kind, other.resource) == ("pipeline-thread-check", "wq")


def test_path_op_format():
    kwargs = gallery.get("missing_release").broken()
    tasks = kwargs["tasks"]
    with contextlib.redirect_stdout(io.StringIO()):
        with pytest.raises(ValueError):
            TaskManager(**kwargs, verbose=False)
    found = ts_search.capture_paths(tasks, {"num_tiles": 1}, ec.check_all_interleavings)
    (kind, cursors, path) = found[0]
    assert kind == "deadlock" and cursors == (7, 4)
    assert path[0] == ("Load", "ConsumerWork(gmem_in)")
    assert parse_path_op(path[2][1]) == ("ProducerAcquire", "smem")
    assert parse_path_op("nonsense") is None


def test_run_check_hook_exists():
    # verify() relies on TaskManager routing every check through _run_check
    assert callable(TaskManager._run_check)
    assert checks.check_name(lambda: TaskManager._verify_ping_pong_resources) == "_verify_ping_pong_resources"
