"""scripts/house_metrics.py names the house's circles and its modules over the limit, as the tests read them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("house_metrics", ROOT / "scripts" / "house_metrics.py")
METRICS = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(METRICS)  # type: ignore[union-attr]


def _report(**extra: object) -> str:
    data = {"actions": {}, "package_graph": {}, "package_cycles": [], "largest_modules": [], **extra}
    return METRICS.report(data)


def test_the_report_names_module_cycles_and_long_modules() -> None:
    text = _report(module_cycles=[["ts_explore.a", "ts_explore.b"]], modules_over_limit=[["ts_explore/a.py", 401]])
    assert "== module import cycles: ts_explore.a <-> ts_explore.b" in text
    assert "== modules over 400 lines: ts_explore/a.py 401" in text
    assert "module import cycles: none" in _report(module_cycles=[], modules_over_limit=[])


def test_the_house_has_no_circle_and_no_module_over_the_limit() -> None:
    assert METRICS.module_cycles() == []
    assert [m for m in METRICS.module_sizes() if m[1] > METRICS.MODULE_LIMIT] == []
    assert METRICS.package_graph()[1] == []


def test_an_import_is_an_entry_not_a_visit() -> None:
    """A module body run by the import system counts as an entry of the module, not as a visit."""
    import importlib

    from ts_explore.kernels import gemm_tile_scheduler as module  # functions only: reloading it rebinds them

    entries, _ways, _result, visits = METRICS.count_entries(lambda: importlib.reload(module))
    assert entries[module.__name__] >= 1 and visits[module.__name__] == 0
    from ts_explore.kernels.gemm_geometry import Geometry

    geo = Geometry(128, 256, 4, 2)
    _entries, _ways, _result, visits = METRICS.count_entries(lambda: module.work_units((512, 512, 64), geo))
    assert visits[module.__name__] == 1  # a call is a visit
