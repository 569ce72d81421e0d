"""What a command-line target names, for every subcommand: a catalog scenario or ``MODULE:ATTR``.

:func:`load_target` finds the object, :func:`resolve` turns it into ``verify``
keyword arguments or a drawable (``--set`` through the scenario's one
coercion), and user code that fails becomes one :class:`UsageError` line
(exit 2). A bare path is neither form: :func:`file_without_attr` names the
form to use and the top-level names the file defines, read by parsing the
file, so that nothing in it runs before the user picks one.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence


class UsageError(Exception):
    """A problem with the command line or the thing it names (exit 2)."""


def load_target(spec: str) -> Any:
    """What a command's target names: a catalog scenario (``pipelined_copy``) or ``MODULE:ATTR``.

    MODULE is a dotted name or a .py path. Every command resolves its target
    here, so each accepts what the others do.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep:
        from .scenarios import CATALOG

        if spec in CATALOG:
            return CATALOG[spec]
        if spec.endswith(".py") or "/" in spec or os.sep in spec:
            raise UsageError(file_without_attr(spec))
        raise UsageError(f"no scenario named {spec!r} (the catalog has: {', '.join(sorted(CATALOG))}); "
                         "expected MODULE:ATTR (e.g. my_kernels:copy_schedule) or a catalog name")
    if not module_name or not attr:
        raise UsageError(f"expected MODULE:ATTR (e.g. my_kernels:copy_schedule), got {spec!r}")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            if not path.exists():
                raise UsageError(f"no such file: {module_name}")
            mod_spec = importlib.util.spec_from_file_location(path.stem, path)
            assert mod_spec is not None and mod_spec.loader is not None
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[path.stem] = module
            mod_spec.loader.exec_module(module)
        else:
            sys.path.insert(0, str(Path.cwd()))
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except ModuleNotFoundError as exc:
        raise UsageError(f"cannot import module {module_name!r}: {exc}. Run from the folder that holds it, or pass a .py path.") from exc
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
        raise UsageError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def parse_settings(scenario: Any, pairs: Sequence[str]) -> Any:
    """``--set key=value`` pairs through the scenario's one coercion (labels in errors, knob ranges, checks)."""
    from .scenarios.knobs import ConfigError, configure

    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise UsageError(f"--set takes key=value, got {pair!r}")
        values[key.strip()] = raw
    try:
        return configure(scenario, values)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _scenario_type() -> type:
    from .scenarios import Scenario

    return Scenario


def _users(what: str, call: Callable[[], Any]) -> Any:
    """Run user code (a factory, a scenario build); its exception becomes one line (exit 2)."""
    try:
        return call()
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's code failed: say so in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(f"{what} raised {type(exc).__name__}" + (f": {first}" if first else "")) from None


def _materialize(obj: Any, spec: str) -> Any:
    """Call zero-argument factories; leave objects (and @schedule functions) alone."""
    import inspect

    scenario_type = _scenario_type()
    if not callable(obj) or isinstance(obj, (type, scenario_type)) or hasattr(obj, "__wrapped__"):
        return obj
    try:
        inspect.signature(obj).bind()
    except TypeError as exc:
        raise UsageError(f"{spec!r} must take no arguments: {exc}") from None
    except ValueError:  # no signature (a builtin): just call it
        pass
    return _users(f"the factory {spec}", obj)


def _verify_kwargs_of(value: Any) -> dict[str, Any] | None:
    """``verify`` keyword arguments from what a target gives: a dict, a (tasks, graph) pair or a Built."""
    if isinstance(value, dict) and "tasks" in value:
        return dict(value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        return {"tasks": list(value[0]), "resource_dependency_graph": value[1]}
    if hasattr(value, "verify_kwargs"):
        return value.verify_kwargs()
    return None


def resolve(spec: str, settings: Sequence[str] = ()) -> tuple[dict[str, Any] | None, Any]:
    """What ``spec`` names, for ``verify`` (its keyword arguments, or None) and for ``render`` (a drawable)."""
    obj = load_target(spec)
    if isinstance(obj, _scenario_type()):
        config = parse_settings(obj, settings)
        built = _users(f"building scenario {obj.name!r}", lambda: obj.build(config))
        return built.verify_kwargs(), None
    if settings:
        raise UsageError("--set only applies to scenarios")
    value = _materialize(obj, spec)
    return _verify_kwargs_of(value), value


def verify_kwargs(spec: str, settings: Sequence[str] = ()) -> dict[str, Any]:
    """``verify``'s keyword arguments for what ``spec`` names, or a UsageError saying what it needs."""
    kwargs, value = resolve(spec, settings)
    if kwargs is None:
        raise UsageError(
            "verify needs a scenario or a zero-argument callable returning (tasks, resource_dependency_graph), "
            f"dict(tasks=..., resource_dependency_graph=...) or a Built; got {type(value).__name__}"
        )
    return kwargs


def drawable(spec: str, settings: Sequence[str]) -> Any:
    """What ``render`` draws for ``spec``: a scenario's or factory's task set, else the object itself."""
    kwargs, value = resolve(spec, settings)
    if kwargs is not None:
        from .app.drawings import task_set

        return task_set(kwargs)
    return value


def file_without_attr(spec: str) -> str:
    """The message for a bare file path: which object in the file to name, with the names it defines.

    The file is parsed, not run, so naming its objects executes none of its code.
    """
    path = Path(spec)
    if not path.is_file():
        return f"no such file: {spec} (a target is a catalog name or MODULE:ATTR, e.g. my_kernels.py:make_tasks)"
    if path.suffix != ".py":
        return f"{spec} is not a .py file: a target is a catalog name or MODULE:ATTR, e.g. my_kernels.py:make_tasks"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=spec)
    except (SyntaxError, UnicodeDecodeError) as exc:
        return f"{spec} is not Python that parses ({type(exc).__name__}: {exc}); fix it, then pass {spec}:ATTR"
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    names = [n for n in dict.fromkeys(names) if not n.startswith("_")]
    defines = f"; it defines {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}" if names else ""
    example = names[0] if names else "make_tasks"
    return (f"{spec} is a file: name the object in it after a colon, e.g. {spec}:{example} (a Schedule, Task, "
            f"TaskManager, or a zero-argument function returning (tasks, graph)){defines}")


__all__ = ["UsageError", "drawable", "file_without_attr", "load_target", "parse_settings", "resolve", "verify_kwargs"]
