"""What a command-line target that names a file, not an object in it, gets told (``ts-explore verify broken.py``).

A target is a catalog name or ``MODULE:ATTR``; a bare path is neither. The
answer names the form to use and the top-level names the file defines, read
by parsing the file, so that nothing in it runs before the user picks one.
"""

from __future__ import annotations

import ast
from pathlib import Path


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


__all__ = ["file_without_attr"]
