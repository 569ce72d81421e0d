"""Package-level import direction: each package imports only packages below it in the README's map.

``test_import_cycles`` finds cycles between modules; a package can still
point the wrong way (the model drawing itself through ``render``) without one.
Every import counts, lazy ones included, as that test reads them; imports made
for annotations only (``if TYPE_CHECKING:``) do not, since they run no code
of the package they name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("_cycles", Path(__file__).with_name("test_import_cycles.py"))
_CYCLES = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(_CYCLES)  # type: ignore[union-attr]

# package -> the packages it may import (the layers of the README's map; data flows one way)
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "check": {"model"},
    "analysis": {"model"},
    "reader": {"model", "check", "analysis"},
    "verification": {"model", "check", "analysis", "reader"},
    "render": {"model", "analysis"},
    "seed_examples": {"reader", "model"},
    "gallery": {"reader", "model", "seed_examples"},
    "kernels": {"model", "reader"},
    "scenarios": {"model", "analysis", "kernels", "verification"},
    "repair": {"model", "check", "reader", "verification"},
    "gpu": {"model", "analysis", "reader", "verification", "render", "kernels", "scenarios"},
    "ops": {"model", "kernels", "scenarios", "gpu"},
    "sweeps": {"model", "verification", "gpu", "scenarios"},
    "tuning": {"model", "gpu", "scenarios", "sweeps"},
    "app": {"model", "analysis", "reader", "verification", "render", "gallery", "scenarios", "gpu", "sweeps", "repair"},
    "cli_targets": {"app", "scenarios"},  # what a CLI target names: a scenario, a factory, a drawable
    "cli": {"model", "verification", "render", "app", "gpu", "scenarios", "sweeps", "tuning", "reader", "repair",
            "cli_targets"},
}


def package_imports() -> dict[str, set[str]]:
    """``{package: packages its modules import}``, folded from the module graph (the root package left out)."""
    out: dict[str, set[str]] = {}
    for module, targets in _CYCLES.import_graph(types=False).items():
        me = module.split(".")[1]
        out.setdefault(me, set()).update(t.split(".")[1] for t in targets if t.split(".")[1] != me)
    return out


def test_the_layers_are_a_dag() -> None:
    assert _CYCLES.cycles({k: set(v) for k, v in ALLOWED.items()}) == []


def test_every_package_has_a_layer() -> None:
    assert set(package_imports()) <= set(ALLOWED), sorted(set(package_imports()) - set(ALLOWED))


def test_packages_import_only_downwards() -> None:
    wrong = {p: sorted(t - ALLOWED[p]) for p, t in package_imports().items() if t - ALLOWED.get(p, set())}
    assert not wrong, f"imports against the layering: {wrong}"


def test_the_model_draws_nothing() -> None:
    found = package_imports()
    assert not found.get("model", set()) & {"render", "app", "analysis"}
    assert not found.get("analysis", set()) & {"render", "app"}

