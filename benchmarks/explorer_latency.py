"""How long the explorer takes from a control change to redrawn panels, per catalog scenario.

    python benchmarks/explorer_latency.py [--repeat N] [--module FILE.py ...]

For every scenario it opens an Explorer (no debounce), then turns each control
through a few values (slider ends and middle, every dropdown option, both
checkbox states, one extra tile length) and back to the default, timing each
change. "cold" clears the per-configuration result cache and the SVG cache
before every change (record + verify + draw + render from scratch); "cached"
replays the same changes with the caches warm. ``--module`` imports extra
files that register scenarios (e.g. your own). Prints a table; the target is a
cold p50 of at most 300 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import ipywidgets as widgets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ts_explore.app import panels  # noqa: E402
from ts_explore.app.explorer import Explorer  # noqa: E402
from ts_explore.render import display  # noqa: E402
from ts_explore.scenarios import CATALOG, Scenario, register  # noqa: E402


def _load(path: str) -> None:
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(path).resolve().parent))
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for value in vars(module).values():
        if isinstance(value, Scenario) and value.name not in CATALOG:
            register(value)


def values_to_try(control: widgets.Widget) -> list[Any]:
    """A few values per control that a user would try."""
    if isinstance(control, widgets.IntSlider):
        mid = (control.min + control.max) // 2
        return list(dict.fromkeys([control.min, mid, control.max]))
    if isinstance(control, widgets.Dropdown):
        return [value for _, value in control.options]
    if isinstance(control, widgets.Checkbox):
        return [not control.value]
    if isinstance(control, widgets.Text) and not control.disabled:
        parts = [p.strip() for p in control.value.split(",") if p.strip()]
        if parts and all(p.lstrip("-").isdigit() for p in parts):
            return [", ".join([*parts, parts[-1]])]
    return []


def _clear_caches(ex: Explorer) -> None:
    ex._cache.clear()
    panels._svg_html_for.cache_clear()
    display._svg_for_source.cache_clear()


def measure(scenario: Scenario, cold: bool) -> tuple[list[float], list[float]]:
    """Seconds per change for one pass over every control: (changes that verified, changes rejected early)."""
    ex = Explorer(scenario, debounce_s=0)
    times: list[float] = []
    rejected: list[float] = []
    for name, control in ex.controls.items():
        default = control.value
        for value in values_to_try(control):
            for target in (value, default):
                if target == control.value:
                    continue
                if cold:
                    _clear_caches(ex)
                updates = ex.updates
                start = time.perf_counter()
                control.value = target
                elapsed = time.perf_counter() - start
                if ex.updates != updates + 1:
                    raise RuntimeError(f"{scenario.name}.{name}: the change did not update the explorer once")
                (times if ex.verdict is not None else rejected).append(elapsed)
    return times, rejected


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1, help="passes over every control (default 1)")
    parser.add_argument("--module", action="append", default=[], help="a .py file that defines scenarios")
    args = parser.parse_args()
    import ts_explore.scenarios  # noqa: F401 - the catalog registers itself on import

    for path in args.module:
        _load(path)
    if not CATALOG:
        print("the scenario catalog is empty: nothing to measure (pass --module FILE.py)")
        return 1
    print(f"explorer latency per control change; {os.cpu_count()} CPU cores, Python {sys.version.split()[0]}")
    print("verified: the change was recorded, verified and drawn; rejected: the scenario's check or TS refused it")
    header = (f"{'scenario':<20} {'verified':>8} {'cold p50':>9} {'cold p90':>9} {'cold max':>9} {'cached p50':>11}"
              f" {'rejected':>9} {'rej. p50':>9}")
    print(header + "\n" + "-" * len(header))
    all_cold: list[float] = []
    all_rejected: list[float] = []
    for name, scenario in sorted(CATALOG.items()):
        cold: list[float] = []
        warm: list[float] = []
        rejected: list[float] = []
        for _ in range(args.repeat):
            verified, refused = measure(scenario, cold=True)
            cold += verified
            rejected += refused
            warm += measure(scenario, cold=False)[0]
        all_cold += cold
        all_rejected += rejected
        print(f"{name:<20} {len(cold):>8} {_ms(cold, 0.5):>9} {_ms(cold, 0.9):>9} {_ms(cold, 1.0):>9} "
              f"{_ms(warm, 0.5):>11} {len(rejected):>9} {_ms(rejected, 0.5):>9}")
    print("-" * len(header))
    print(f"{'all (ms)':<20} {len(all_cold):>8} {_ms(all_cold, 0.5):>9} {_ms(all_cold, 0.9):>9} "
          f"{_ms(all_cold, 1.0):>9} {'':>11} {len(all_rejected):>9} {_ms(all_rejected, 0.5):>9}")
    print(f"target: cold p50 <= 300 ms -> {'met' if statistics.median(all_cold) <= 0.3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
