"""What decides a scenario's results besides its config: the scenario's own code, and the user modules it uses.

A sweep caches rows per environment (:mod:`.cache`); ts-explore's own code and
the DSL are pinned there by their versions, commit and local edits
(:func:`.cache.source_identity`). A user scenario (a ``.py`` file, a module of
the user's package, a notebook) is code ts-explore does not version, so
:func:`scenario_code` walks it and digests everything that can change a verdict:

- each of the scenario's functions (``build_fn``, ``check_fn``,
  ``inactive_fn``): its module, qualified name and compiled code (names,
  constants and bytecode, nested functions included; not file names or line
  numbers, so a notebook's restart keeps the digest);
- its config class: its name and every field's name, type and default;
- every function and class those reach through global names, closures and
  defaults, recursively, when defined outside installed libraries (a
  notebook's helper functions);
- the source file of every user module reached: the scenario's own module,
  every loaded module of its package and any module it imports that lives
  outside installed libraries (a helper beside the script).

Installed libraries (site-packages, the standard library) and ts-explore
itself are not walked. The same walk lists the user modules a worker process
cannot import by name (a file loaded by path, a folder missing from the
workers' ``sys.path``): :func:`ship_by_value` has cloudpickle send them by
value, so a registered or file scenario runs on any worker.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import sysconfig
import types
from collections.abc import Iterable
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

OWN_PACKAGE = __name__.split(".")[0]


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[Path, ...]:
    """Folders of installed code: the standard library and every site-packages folder."""
    import site

    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(getattr(site, "getsitepackages", lambda: [])())
    paths.add(getattr(site, "getusersitepackages", lambda: None)())
    roots = []
    for p in paths:
        if p:
            try:
                roots.append(Path(p).resolve())
            except OSError:
                continue
    return tuple(roots)


def is_user_module(module: types.ModuleType) -> bool:
    """True for a module of the user's own code: not ts-explore, not built in, not in an installed library."""
    name = getattr(module, "__name__", "") or ""
    if name == OWN_PACKAGE or name.startswith(OWN_PACKAGE + "."):
        return False
    path = getattr(module, "__file__", None)
    if path is None:  # built in, a namespace package, or a notebook's __main__ (its functions are walked one by one)
        return name == "__main__"
    try:
        resolved = Path(path).resolve()
    except OSError:
        return False
    return not any(resolved.is_relative_to(root) for root in _library_roots())


def stable_text(value: Any) -> str:
    """Text for ``value`` that is the same in every process: no addresses, no hash-seeded set order.

    >>> stable_text(frozenset({"b", "a"})), stable_text(len), stable_text((1, {2}))
    ("frozenset('a','b')", 'builtins.len', '(1,set(2))')
    """
    if isinstance(value, (frozenset, set)):
        return f"{type(value).__name__}({','.join(sorted(stable_text(v) for v in value))})"
    if isinstance(value, (tuple, list)):
        return f"({','.join(stable_text(v) for v in value)})"
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{stable_text(k)}:{stable_text(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{value.__module__}.{value.__qualname__}"
    return _ADDRESS.sub("", repr(value))


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _code_digest(code: types.CodeType, h: Any) -> None:
    """Feed what a code object computes into ``h``: bytecode, names, constants; nested code the same way."""
    h.update(code.co_name.encode())
    h.update(code.co_code)
    for group in (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars):
        h.update(repr(group).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_digest(const, h)
        else:
            h.update(stable_text(const).encode())


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _module_source(module: types.ModuleType) -> bytes:
    path = getattr(module, "__file__", None)
    if not path:
        return b""
    try:
        return Path(path).read_bytes()
    except OSError:
        return f"unreadable:{path}".encode()


@dataclass(frozen=True)
class CodeIdentity:
    """The walk's result: one digest over everything listed in the module docstring, and the user modules seen."""

    digest: str  # empty when the scenario is all ts-explore code (its commit and edits pin it)
    modules: tuple[str, ...]  # names of the user modules reached, sorted

    def module_objects(self) -> list[types.ModuleType]:
        """The modules themselves (those still loaded)."""
        return [sys.modules[n] for n in self.modules if n in sys.modules]


class _Walk:
    """Collects the user code reachable from some roots (functions, classes, modules)."""

    def __init__(self) -> None:
        self.parts: dict[str, bytes] = {}
        self.modules: dict[str, types.ModuleType] = {}
        self._seen: set[int] = set()
        self._stack: list[Any] = []

    def run(self, roots: Iterable[Any]) -> "_Walk":
        self._stack.extend(r for r in roots if r is not None)
        while self._stack:
            obj = self._stack.pop()
            if id(obj) in self._seen:
                continue
            self._seen.add(id(obj))
            if isinstance(obj, types.ModuleType):
                self._module(obj)
            elif isinstance(obj, functools.partial):
                self._stack.extend([obj.func, *obj.args, *obj.keywords.values()])
            elif isinstance(obj, types.MethodType):
                self._stack.append(obj.__func__)
            elif isinstance(obj, types.FunctionType):
                self._function(obj)
            elif isinstance(obj, type):
                self._class(obj)
        return self

    def _place(self, obj: Any) -> tuple[bool, types.ModuleType | None]:
        """(whether ``obj`` is user code, the loaded module it was defined in or None).

        Code run outside any loaded module (a notebook's cells, ``exec``) is
        user code with no module: only what it reaches counts.
        """
        name = getattr(obj, "__module__", None) or ""
        module = sys.modules.get(name)
        if isinstance(obj, types.FunctionType):
            genuine = module is not None and obj.__globals__ is vars(module)
        else:
            genuine = module is not None and hasattr(module, obj.__qualname__.split(".")[0])
        if not genuine:
            return name.split(".")[0] != OWN_PACKAGE, None
        return is_user_module(module), module

    def _function(self, fn: types.FunctionType) -> None:
        user, module = self._place(fn)
        if not user:
            return
        h = hashlib.sha256()
        _code_digest(fn.__code__, h)
        h.update(stable_text((fn.__defaults__, fn.__kwdefaults__)).encode())
        self.parts[f"function {fn.__module__}.{fn.__qualname__}"] = h.digest()
        if module is not None:
            self._stack.append(module)
        for name in _global_names(fn.__code__):
            if name in fn.__globals__:
                self._push(fn.__globals__[name])
            elif name in sys.modules:  # `import helper` inside the function
                self._push(sys.modules[name])
        for cell in fn.__closure__ or ():
            try:
                self._push(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        self._stack.extend(v for v in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())
                           if callable(v))

    def _class(self, cls: type) -> None:
        user, module = self._place(cls)
        if not user:
            return
        text = [cls.__qualname__]
        if is_dataclass(cls):
            text += [f"{f.name}:{stable_text(f.type)}={stable_text(f.default)}" for f in fields(cls)]
            self._stack.extend(f.default for f in fields(cls) if callable(f.default))  # a function-valued knob
        self.parts[f"class {cls.__module__}.{cls.__qualname__}"] = "\n".join(text).encode()
        if module is not None:
            self._stack.append(module)
        for value in vars(cls).values():  # its methods (a build helper may live on the config class)
            value = getattr(value, "__func__", value)  # staticmethod, classmethod
            if isinstance(value, types.FunctionType):
                self._stack.append(value)

    def _module(self, module: types.ModuleType) -> None:
        if not is_user_module(module) or getattr(module, "__file__", None) is None:
            return  # a notebook's __main__: only the functions it reached count (done one by one)
        self.modules[module.__name__] = module
        self.parts[f"module {module.__name__}"] = hashlib.sha256(_module_source(module)).digest()
        package = module.__name__.split(".")[0]
        if getattr(module, "__package__", None):  # every loaded module of the scenario's package
            self._stack.extend(m for n, m in list(sys.modules.items())
                               if m is not None and (n == package or n.startswith(package + ".")))
        for value in list(vars(module).values()):  # what it imports from beside it (helpers of a script)
            if isinstance(value, types.ModuleType):
                self._stack.append(value)
            elif isinstance(value, (types.FunctionType, type)):
                owner = sys.modules.get(getattr(value, "__module__", "") or "")
                if owner is not None and owner is not module:
                    self._stack.append(owner)

    def _push(self, value: Any) -> None:
        if isinstance(value, (types.ModuleType, types.FunctionType, type, functools.partial, types.MethodType)):
            self._stack.append(value)


def code_identity(roots: Iterable[Any]) -> CodeIdentity:
    """The digest of the user code reachable from ``roots`` and the user modules it lives in."""
    walk = _Walk().run(roots)
    if not walk.parts:
        return CodeIdentity("", ())
    h = hashlib.sha256()
    for name in sorted(walk.parts):
        h.update(name.encode() + b"\0" + walk.parts[name] + b"\0")
    return CodeIdentity(h.hexdigest()[:16], tuple(sorted(walk.modules)))


def scenario_roots(scenario: Any) -> list[Any]:
    """Where a scenario's code starts: its functions and its config class."""
    return [scenario.build_fn, scenario.check_fn, scenario.inactive_fn, scenario.config_type]


def is_own(scenario: Any) -> bool:
    """True when all of a scenario's code is ts-explore's (a built-in: every worker registers it by name)."""
    return all((getattr(root, "__module__", "") or "").split(".")[0] == OWN_PACKAGE
               for root in scenario_roots(scenario) if root is not None)


def scenario_code(scenario: Any) -> CodeIdentity:
    """:func:`code_identity` of a scenario (see the module docstring for what it covers)."""
    return code_identity(scenario_roots(scenario))


def ship_by_value(identity: CodeIdentity) -> list[str]:
    """Have cloudpickle send the user modules of ``identity`` by value; the names registered.

    A module a worker can import by name would also travel by reference, but
    a worker's ``sys.path`` is not the client's (a script loaded by its path,
    a notebook's folder): by value, the worker needs nothing but ts-explore.
    ``__main__`` is always sent by value by cloudpickle and is left alone.
    """
    import cloudpickle

    registered = []
    for module in identity.module_objects():
        if module.__name__ == "__main__":
            continue
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:  # not in sys.modules under its own name (already replaced): it travels by reference
            continue
        registered.append(module.__name__)
    return registered


__all__ = ["CodeIdentity", "code_identity", "is_own", "is_user_module", "scenario_code", "scenario_roots",
           "ship_by_value", "stable_text"]
