"""How the package's main paths move through its rooms: module visits per call, and the package import graph.

Prints, for three user actions,

* ``verify(tasks)``: the gallery's ``cross_wait`` (broken) and the GEMM family
  of 3 loaders at 8 iterations (a SAFE proof);
* ``launch(scenario)``: ``launch("pipelined_copy")`` as far as it gets on this
  machine (on a CPU it plans and proves every instance, then stops at "no
  CUDA device");
* an explorer change: ``Explorer("pipelined_copy").set(stages=...)``;

how many times each ts_explore module is *entered*: a Python call into a
module whose nearest ts_explore caller lives in another module (or outside
the package: TS calling back in). Resuming a generator does not count.

Two numbers per module:

* ``entries`` (strict): every such call.
* ``visits``: the entries that hand the module work to do, i.e. calls of its
  functions and methods. Not counted as visits: the methods ``@dataclass``
  generates (``__init__``, ``__eq__``, ``__hash__``, ``__repr__``, ...:
  building or comparing a frozen value whose class the module defines, as
  ``reader.search_input`` does for each step of a ``check.problem.Step``) and
  ``property`` getters (reading a derived field of such a value, e.g.
  ``Searched.unsafe``), and what the import system runs (a module's body on
  its first import, an import hook asked to find a module: the launch
  result's display hooks are attached by one, ``app.hooks``). Building a
  value is using the module's vocabulary, and importing a module is not
  handing it work: neither enters its room; the issue's target ("visits no
  module more than three times") is read on ``visits``.
Then the module import cycles (every import, lazy ones and those made only for
annotations included, as ``tests/unit/test_import_cycles.py`` reads them),
the package-level import graph (folded to ``ts_explore.<package>`` from the
imports that run, as ``tests/unit/test_package_layers.py`` reads them), its
cycles, the largest modules and those over the 400-line limit
(``tests/unit/test_module_sizes.py``).

    python scripts/house_metrics.py            # the text report
    python scripts/house_metrics.py --json out.json
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import inspect
import json
import sys
import threading
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PACKAGE = ROOT / "ts_explore"
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _module_of(frame: Any, cache: dict[Any, str | None]) -> str | None:
    code = frame.f_code
    found = cache.get(code, "?")
    if found == "?":
        name = frame.f_globals.get("__name__", "")
        found = cache[code] = name if name == "ts_explore" or name.startswith("ts_explore.") else None
    return found


def _value_accessors() -> set[Any]:
    """Code objects of every ``property`` getter of a class defined in a loaded ts_explore module."""
    found: set[Any] = set()
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "ts_explore" or name.startswith("ts_explore.")):
            continue
        for cls in vars(module).values():
            if not isinstance(cls, type) or getattr(cls, "__module__", "") != name:
                continue
            for attr in vars(cls).values():
                fget = getattr(attr, "fget", None) if isinstance(attr, property) else None
                if fget is not None and hasattr(fget, "__code__"):
                    found.add(fget.__code__)
    return found


def _is_value_use(code: Any, accessors: set[Any]) -> bool:
    """A dataclass-generated method (its code compiled from a string) or a property getter: not a visit."""
    return code.co_filename.startswith("<") or code in accessors


def _run_by_import(frame: Any) -> bool:
    """Called by the import system (a module body run on first import, a finder consulted): not a visit."""
    back = frame.f_back
    return back is not None and back.f_globals.get("__name__", "").startswith("importlib")


def count_entries(action: Callable[[], Any]) -> tuple[collections.Counter, collections.Counter, Any,
                                                      collections.Counter]:
    """Run ``action``; count module entries and visits (see the module docstring) in every thread it starts.

    Also counts, per module, the distinct ways in: (calling function, called
    function) pairs that cross into it, however often each is taken (a loop
    over search runs counts once).
    """
    counts: collections.Counter = collections.Counter()
    visits: collections.Counter = collections.Counter()
    accessors = _value_accessors()
    edges: set[tuple[str, Any, Any]] = set()
    cache: dict[Any, str | None] = {}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        me = _module_of(frame, cache)
        if me is None:
            return
        if frame.f_code.co_flags & _RESUMABLE and frame.f_lasti > 0:
            return  # a generator resumed, not a new call
        caller = frame.f_back
        while caller is not None and _module_of(caller, cache) is None:
            caller = caller.f_back
        if caller is None or _module_of(caller, cache) != me:
            counts[me] += 1
            if not _is_value_use(frame.f_code, accessors) and not _run_by_import(frame):
                visits[me] += 1
            edges.add((me, caller.f_code if caller is not None else None, frame.f_code))

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        result = action()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    ways = collections.Counter(me for me, _caller, _callee in edges)
    return counts, ways, result, visits


def _verify_cross_wait() -> Any:
    from ts_explore import gallery, verify

    return verify(**gallery.get("cross_wait").broken()).status.value


def _verify_gemm_family() -> Any:
    from ts_explore import verify
    from ts_explore.gallery.gemm_family import gemm_family

    return verify(**gemm_family(3, 8)).status.value


def _launch() -> Any:
    from ts_explore import launch
    from ts_explore.gpu.errors import LaunchError

    try:
        result = launch("pipelined_copy", sizes=[1 << 20])
    except LaunchError as exc:
        return f"LaunchError({exc.reason})"
    return f"ran: {result.verdict}"


def _explorer_change() -> Callable[[], Any]:
    """An explorer built (not measured); the returned change is what is measured."""
    from ts_explore import Explorer

    ex = Explorer("pipelined_copy", debounce_s=0)
    stages = 2 if ex.config.stages != 2 else 3

    def change() -> Any:
        ex.set(stages=stages)
        ex.wait_for_proof(60)
        return ex.verdict.status.value if ex.verdict is not None else ex.state

    return change


def _load_import_graph() -> Callable[[], dict[str, set[str]]]:
    spec = importlib.util.spec_from_file_location("_cycles", ROOT / "tests" / "unit" / "test_import_cycles.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.import_graph, module.cycles


def module_cycles() -> list[list[str]]:
    """Modules that import each other, annotation-only imports included (the circles of the house)."""
    import_graph, cycles = _load_import_graph()
    return cycles(import_graph())


def package_graph() -> tuple[dict[str, dict[str, int]], list[list[str]]]:
    """``{package: {package it imports: how many module imports}}`` and the package-level cycles, from the
    imports that run (those made only for annotations left out, as the layering test reads them)."""
    import_graph, cycles = _load_import_graph()
    folded: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for module, targets in import_graph(types=False).items():
        me = ".".join(module.split(".")[:2])
        for target in targets:
            them = ".".join(target.split(".")[:2])
            if them != me:
                folded[me][them] += 1
    graph = {k: dict(sorted(v.items())) for k, v in sorted(folded.items())}
    return graph, cycles({k: set(v) for k, v in graph.items()})


MODULE_LIMIT = 400  # lines; tests/unit/test_module_sizes.py holds the package to it


def module_sizes() -> list[tuple[str, int]]:
    """Every module of the package with its lines, the longest first."""
    sizes = [(str(p.relative_to(ROOT)), len(p.read_text(encoding="utf-8").splitlines()))
             for p in PACKAGE.rglob("*.py")]
    return sorted(sizes, key=lambda s: (-s[1], s[0]))


def largest_modules(n: int = 8) -> list[tuple[str, int]]:
    return module_sizes()[:n]


def measure() -> dict[str, Any]:
    import ts_explore  # noqa: F401 - imports are not what is measured
    from ts_explore.gallery import get

    get("cross_wait")
    out: dict[str, Any] = {"actions": {}}
    _verify_cross_wait()  # warm caches and lazy imports, so every action is measured as a second call
    for name, action in (("verify(cross_wait broken)", _verify_cross_wait),
                         ("verify(gemm_family(3, 8))", _verify_gemm_family),
                         ("launch('pipelined_copy')", _launch)):
        counts, ways, result, visits = count_entries(action)
        out["actions"][name] = {"result": str(result), "entries": dict(counts.most_common()),
                                "visits": dict(visits.most_common()), "ways_in": dict(ways.most_common())}
    counts, ways, result, visits = count_entries(_explorer_change())
    out["actions"]["Explorer('pipelined_copy').set(stages=...)"] = {"result": str(result),
                                                                  "entries": dict(counts.most_common()),
                                                                  "visits": dict(visits.most_common()),
                                                                  "ways_in": dict(ways.most_common())}
    graph, found = package_graph()
    out["module_cycles"] = module_cycles()
    out["package_graph"] = graph
    out["package_cycles"] = found
    out["largest_modules"] = largest_modules()
    out["modules_over_limit"] = [[p, n] for p, n in module_sizes() if n > MODULE_LIMIT]
    return out


def report(data: dict[str, Any]) -> str:
    lines = []
    for name, action in data["actions"].items():
        entries = action["entries"]
        packages: collections.Counter = collections.Counter()
        for module, n in entries.items():
            packages[".".join(module.split(".")[:2])] += n
        top = max(entries.values()) if entries else 0
        visits = action.get("visits", {})
        most = max(visits.items(), key=lambda kv: kv[1]) if visits else ("-", 0)
        lines.append(f"== {name} -> {action['result']}")
        lines.append(f"   {len(entries)} modules entered, {sum(entries.values())} entries, most entered: {top}; "
                     f"{sum(visits.values())} visits, most visited: {most[1]} ({most[0]})")
        lines.append("   by package: " + ", ".join(f"{p.split('.')[-1]} {n}" for p, n in packages.most_common()))
        ways = action["ways_in"]
        lines.append("   entries   visits  ways-in  module (ways in: distinct calling/called function pairs)")
        for module, n in list(entries.items())[:14]:
            lines.append(f"   {n:7d}  {visits.get(module, 0):7d}  {ways.get(module, 0):7d}  {module}")
        over = [f"{m} {v}" for m, v in visits.items() if v > 3]
        lines.append("   visited more than 3 times: " + (", ".join(over) if over else "none"))
    mod = data.get("module_cycles", [])
    lines.append("== module import cycles: " + ("; ".join(" <-> ".join(c) for c in mod) if mod else "none"))
    lines.append("== package import graph (package -> packages it imports: module imports that run)")
    for package, targets in data["package_graph"].items():
        lines.append(f"   {package.split('.')[-1]:14s} -> " +
                     ", ".join(f"{t.split('.')[-1]} {n}" for t, n in targets.items()))
    cyc = data["package_cycles"]
    lines.append("== package-level cycles: " + ("; ".join(" <-> ".join(c) for c in cyc) if cyc else "none"))
    lines.append("== largest modules: " + ", ".join(f"{p} {n}" for p, n in data["largest_modules"]))
    over = data.get("modules_over_limit", [])
    lines.append(f"== modules over {MODULE_LIMIT} lines: " + (", ".join(f"{p} {n}" for p, n in over) if over
                                                              else "none"))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    args = parser.parse_args()
    data = measure()
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(report(data))


if __name__ == "__main__":
    main()
