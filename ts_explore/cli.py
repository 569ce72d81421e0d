"""``ts-explore`` command line: ``ts-explore verify TARGET [--json]``.

TARGET is ``gallery:NAME`` (the broken schedule; ``gallery:NAME:fixed`` for its
twin) or ``module:function``, a function returning ``dict(tasks=...,
resource_dependency_graph=...)`` or an object with ``verify_kwargs()`` (a
scenario's ``Built``). Exit status: 0 safe, 1 unsafe or not proven, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Sequence


def _load_target(target: str) -> dict[str, Any]:
    if target.startswith("gallery:"):
        from . import gallery

        _, name, *rest = target.split(":")
        case = gallery.get(name)
        return case.fixed() if rest == ["fixed"] else case.broken()
    module_name, sep, attr = target.partition(":")
    if not sep or not attr:
        raise ValueError(f"TARGET must be gallery:NAME or module:function, got {target!r}")
    value = getattr(importlib.import_module(module_name), attr)
    value = value() if callable(value) else value
    if hasattr(value, "verify_kwargs"):
        value = value.verify_kwargs()
    if not isinstance(value, dict) or "tasks" not in value:
        raise ValueError(f"{target} must give dict(tasks=..., resource_dependency_graph=...), got {type(value).__name__}")
    return value


def _verify(args: argparse.Namespace) -> int:
    from .capture.verify import verify

    try:
        kwargs = _load_target(args.target)
    except (ValueError, KeyError, ImportError, AttributeError) as exc:
        print(f"ts-explore verify: {exc}", file=sys.stderr)
        return 2
    verdict = verify(**kwargs)
    if args.json:
        print(json.dumps(verdict.to_dict(), indent=2))
    else:
        print(verdict.summary())
    return 0 if verdict.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ts-explore`` script."""
    parser = argparse.ArgumentParser(prog="ts-explore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("verify", help="verify a task set quietly and print the verdict")
    p.add_argument("target", help="gallery:NAME[:fixed] or module:function")
    p.add_argument("--json", action="store_true", help="print Verdict.to_dict() as JSON")
    p.set_defaults(run=_verify)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
