"""Golden DOT for every gallery wait-for graph, swimlanes, and the drawing entry points."""

from __future__ import annotations

import pytest

import ts_explore
from ts_explore import gallery
from ts_explore.render import style


@pytest.mark.parametrize("name", list(gallery.CASES))
def test_deadlock_graph_golden(gallery_verdicts, golden, name):
    broken, fixed = gallery_verdicts[name]
    golden(f"deadlock_{name}.dot", ts_explore.deadlock_graph(broken).source)
    assert "no deadlock found" in ts_explore.deadlock_graph(fixed).source


@pytest.mark.parametrize("name", ["cross_wait", "missing_release", "smem_alias_race"])
def test_swimlanes_golden(gallery_verdicts, golden, name):
    golden(f"swimlanes_{name}.dot", ts_explore.swimlanes(gallery_verdicts[name][0]).source)


def test_cycle_is_red_and_dead_end_has_a_note(gallery_verdicts):
    dot = ts_explore.deadlock_graph(gallery_verdicts["cycle_of_three"][0]).source
    assert dot.count(f'color="{style.BLOCKED_BORDER}"') >= 6  # 3 "waits for" + 3 "freed by" edges
    assert "cycle: Alpha -> Gamma -> Beta -> Alpha" in dot
    dead_end = ts_explore.deadlock_graph(gallery_verdicts["consumer_longer"][0]).source
    assert "no task commits" in dead_end and f'color="{style.BLOCKED_BORDER}"' not in dead_end


def test_swimlanes_unroll_the_concrete_domain(gallery_verdicts):
    fixed = gallery_verdicts["cross_wait"][1]
    dot = ts_explore.swimlanes(fixed).source
    for it in range(gallery.get("cross_wait").trip_count):
        assert f"iteration {it}" in dot
    assert "blocked here" not in dot
    broken = ts_explore.swimlanes(gallery_verdicts["cross_wait"][0]).source
    assert broken.count("blocked here") == 2 and "needs" in broken


def test_long_lanes_are_folded():
    v = ts_explore.verify(**gallery.get("consumer_longer").broken(trip_count=20))
    dot = ts_explore.swimlanes(v, max_steps=24).source
    assert "more steps" in dot
    assert "blocked here" in dot  # the stuck step is always kept


def test_swimlanes_at_a_given_move(gallery_verdicts):
    v = gallery_verdicts["missing_release"][0]
    dot = ts_explore.swimlanes(v, step=3).source
    assert "after 3 of 11 moves" in dot and "blocked here" not in dot


def test_drawings_need_a_verdict(gallery_verdicts):
    with pytest.raises(TypeError, match="verify"):
        ts_explore.deadlock_graph(gallery.get("cross_wait").broken())
    with pytest.raises(IndexError, match="has 1"):
        ts_explore.swimlanes(gallery_verdicts["cross_wait"][0], finding=3)


def test_drawings_render_to_svg(gallery_verdicts):
    from ts_explore.render.display import to_svg

    v = gallery_verdicts["cycle_of_three"][0]
    assert "<svg" in to_svg(ts_explore.deadlock_graph(v))
    assert "<svg" in to_svg(ts_explore.swimlanes(v))
