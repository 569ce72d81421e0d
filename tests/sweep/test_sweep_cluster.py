"""Sweeps on a 2-process local cluster: rows equal one-by-one verification, misbehaving cells become
failed rows without a retry storm, cancel keeps rows and a re-run resumes from the cache."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any


import sweep_scenarios as ss
from ts_explore import scenarios, verify
from ts_explore.sweeps import Sweep, config_of, sweep
from ts_explore.sweeps.grid import expand


def _one_by_one(scenario: Any, config: Any) -> tuple[str, int]:
    verdict = verify(**scenario.build(config).verify_kwargs())
    return verdict.status.value, sum(r.states_explored for r in verdict.runs)


def test_rows_equal_one_by_one_verification(client: Any) -> None:
    grid = {"pattern": ["cross_wait", "missing_release", "self_wait"], "broken": [False, True], "n": [2, 5]}
    df = sweep(ss.GALLERY, grid, client=client, progress=False)
    assert len(df) == 12 and df.attrs["knobs"] == ["pattern", "broken", "n"]
    assert set(df["status"]) >= {"safe", "unsafe", "refused"}
    for _, row in df.iterrows():
        if row["status"] == "refused":
            assert row["pattern"] == "self_wait" and row["n"] == 5 and "lower n" in row["reason"]
            continue
        status, states = _one_by_one(ss.GALLERY, config_of(ss.GALLERY, row))
        assert (row["status"], row["states"]) == (status, states), row.to_dict()
        assert (row["reason"] == "") == (status == "safe")
    assert df["worker"].dropna().nunique() == 2  # both workers took cells


def test_catalog_grid_and_coercion_messages(client: Any) -> None:
    sc = scenarios.get("pipelined_copy")
    df = sweep("pipelined_copy", {"stages": "1, 4", "store_warps": [4, 64], "loader": ["tma", "threads"]},
               client=client, progress=False)
    refused = df[df["status"] == "refused"]
    assert set(refused["store_warps"]) == {64}
    assert refused["reason"].str.contains("warps of the store task").all()
    threads = df[(df["loader"] == "threads") & (df["store_warps"] == 4)]
    assert set(threads["status"]) == {"safe"}
    for _, row in df[df["status"] == "safe"].iterrows():
        cfg = config_of(sc, row, ["stages", "store_warps", "loader"])
        assert row["states"] == _one_by_one(sc, cfg)[1]


def test_misbehaving_cells_fail_once_and_the_sweep_completes(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "builds.log"
    grid = [{"mode": "kill"}, {"mode": "sleep"}, {"mode": "spin"}, {"mode": "ok"},
            {"mode": "ok", "broken": True}, {"mode": "ok", "n": 3}]
    base = ss.GALLERY.config(log=str(log))
    df = sweep(ss.GALLERY, grid, base=base, client=client, timeout=1.5, progress=False)
    by_mode = {(r["mode"], r["broken"], r["n"]): r for _, r in df.iterrows()}
    assert by_mode[("ok", False, 2)]["status"] == "safe"
    assert by_mode[("ok", True, 2)]["status"] == "unsafe"
    assert by_mode[("ok", False, 3)]["status"] == "safe"
    spin = by_mode[("spin", False, 2)]
    assert spin["status"] == "failed" and "timed out" in spin["reason"]
    for mode in ("kill", "sleep"):
        row = by_mode[(mode, False, 2)]
        assert row["status"] == "failed" and "worker running it died" in row["reason"], row["reason"]
    # each misbehaving build ran exactly once: no retry on another worker
    modes = sorted(line.split()[0] for line in log.read_text().splitlines())
    assert modes == ["kill", "sleep", "spin"]
    # the cluster recovered: both workers are back and take new cells
    again = sweep(ss.GALLERY, {"n": [1, 3]}, client=client, progress=False, cache=False)
    assert set(again["status"]) == {"safe"}


def test_cancel_keeps_rows_and_a_rerun_resumes(client: Any) -> None:
    grid = {"mode": ["slow"], "n": [1, 2, 3, 4, 5, 6], "broken": [False, True]}
    run = Sweep(ss.GALLERY, grid, client=client, progress=False)
    seen: list[str] = []

    def stop_after_three(cell: Any, row: dict[str, Any]) -> None:
        seen.append(row["key"])
        if len(seen) == 3:
            threading.Thread(target=run.cancel).start()  # as the explorer's Stop button does

    first = run.run(on_row=stop_after_three)
    assert first.attrs["cancelled"] and 3 <= len(first) < 12
    second = sweep(ss.GALLERY, grid, client=client, progress=False)
    assert len(second) == 12 and not second.attrs["cancelled"]
    assert set(second[second["cached"]]["key"]) == set(first["key"])
    assert second.set_index("key").loc[first["key"], "status"].tolist() == first["status"].tolist()


def test_keyboard_interrupt_returns_the_rows_so_far(client: Any) -> None:
    grid = {"mode": ["slow"], "n": [1, 2, 3, 4, 5, 6]}

    def interrupt(cell: Any, row: dict[str, Any]) -> None:
        raise KeyboardInterrupt  # what Ctrl-C raises in the waiting loop

    df = Sweep(ss.GALLERY, grid, client=client, progress=False, cache=False).run(on_row=interrupt)
    assert df.attrs["cancelled"] and len(df) == 1


def test_keys_follow_the_config_not_the_spelling() -> None:
    a = expand(scenarios.get("pipelined_copy"), {"loader": ["tma"], "stages": ["4"]})
    b = expand(scenarios.get("pipelined_copy"), [{"stages": 4}])
    c = expand(scenarios.get("pipelined_copy"), {"stages": [5]})
    assert a[0].key == b[0].key != c[0].key


def test_a_second_client_in_the_process_does_not_confuse_the_sweep(client: Any) -> None:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    other = Client(cluster)  # now the default client, on its cluster's own event loop
    try:
        result: list[Any] = []
        worker = threading.Thread(target=lambda: result.append(
            sweep(ss.GALLERY, {"n": [1, 2, 3, 4, 5, 6], "pattern": list(ss.PATTERNS)}, client=client, progress=False,
                  cache=False)))
        worker.start()
        worker.join(60)  # with completions tracked on the wrong loop, the sweep hung here
        assert result and len(result[0]) == 24 and set(result[0]["status"]) == {"safe", "refused"}
    finally:
        other.close()
        cluster.close()
