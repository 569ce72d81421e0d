"""TS's printing and warnings, captured per thread without changing what other threads see.

``contextlib.redirect_stdout`` and ``warnings.catch_warnings`` swap
process-wide objects: two threads verifying at once (the explorer's
background proofs and repairs do) restore each other's swaps in the wrong
order, leaving ``sys.stdout`` a StringIO and a warnings filter behind, and
every later output vanishes. Here one routing object stands in for
``sys.stdout``/``sys.stderr`` and one hook for ``warnings.showwarning`` while
any capture is running: what a capturing thread writes or warns goes to that
thread's own buffer, everything else passes through to the stream or hook
that was there before. The last capture to finish puts the originals back.

>>> with captured_output() as out:
...     print("to the buffer")
>>> out.getvalue()
'to the buffer\\n'
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
import warnings
from typing import Any, Iterator

_LOCK = threading.RLock()  # guards installing and removing the routing objects
_LOCAL = threading.local()  # per thread: .buffers (list of StringIO), .warnings (list of modes)
_DROP = object()  # a warnings mode: discard this thread's warnings


class _Routed(io.TextIOBase):
    """A stand-in for ``sys.stdout``/``sys.stderr``: a capturing thread's writes go to its buffer."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def _buffer(self) -> io.StringIO | None:
        buffers = getattr(_LOCAL, "buffers", None)
        return buffers[-1] if buffers else None

    def write(self, text: str) -> int:
        buffer = self._buffer()
        if buffer is not None:
            return buffer.write(text)
        return self.target.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._buffer() is None:
            self.target.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._buffer() is None and bool(getattr(self.target, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # io.TextIOBase answers None for these: the real stream's, as a caller expects
        return getattr(self.target, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self.target, "errors", None)

    @property
    def newlines(self) -> Any:
        return getattr(self.target, "newlines", None)

    def __getattr__(self, name: str) -> Any:  # encoding, buffer, errors, ...: the real stream's
        return getattr(self.target, name)


class _Installed:
    """How many captures are running, and what the routing objects replaced."""

    users = 0
    stdout: _Routed | None = None
    stderr: _Routed | None = None
    showwarning: Any = None
    always: tuple[Any, ...] | None = None  # the filter entry that sends every warning to the hook


def _route_warning(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                   line: str | None = None) -> None:
    """``warnings.showwarning`` while captures run: this thread's mode decides, others pass through."""
    modes = getattr(_LOCAL, "warnings", None)
    mode = modes[-1] if modes else None
    if mode is _DROP:
        return
    if isinstance(mode, list):
        mode.append(warnings.WarningMessage(message, category, filename, lineno, file, line))
        return
    action = _action_without_us(message, category, filename, lineno)  # our "always" entry let it through
    if action == "ignore":
        return
    if action == "error":
        raise message if isinstance(message, Warning) else category(message)
    _Installed.showwarning(message, category, filename, lineno, file, line)


def _action_without_us(message: Any, category: type[Warning], filename: str, lineno: int) -> str:
    """What the filters, less our own entry, do with this warning (for threads that capture nothing)."""
    text = str(message)
    module = filename[:-3] if filename.endswith(".py") else filename
    for entry in warnings.filters:
        if entry is _Installed.always:
            continue
        action, msg, cat, mod, ln = entry
        if ((msg is None or msg.match(text)) and issubclass(category, cat) and (mod is None or mod.match(module))
                and (ln == 0 or ln == lineno)):
            return str(action)
    return str(warnings.defaultaction)


def _install() -> None:
    """The routing stream and hook, and an "always" filter entry so repeats reach every recording (refcounted)."""
    with _LOCK:
        if _Installed.users == 0:
            _Installed.stdout, _Installed.stderr = _Routed(sys.stdout), _Routed(sys.stderr)
            sys.stdout, sys.stderr = _Installed.stdout, _Installed.stderr
            _Installed.showwarning = warnings.showwarning
            warnings.showwarning = _route_warning
            _Installed.always = ("always", None, Warning, None, 0)
            warnings.filters.insert(0, _Installed.always)
            warnings._filters_mutated()  # type: ignore[attr-defined] - what simplefilter calls
        _Installed.users += 1


def _uninstall() -> None:
    with _LOCK:
        _Installed.users -= 1
        if _Installed.users == 0:
            with contextlib.suppress(ValueError):  # someone reset the filters meanwhile
                warnings.filters.remove(_Installed.always)
            warnings._filters_mutated()  # type: ignore[attr-defined]
            _Installed.always = None
            if sys.stdout is _Installed.stdout:  # leave a stream someone else installed meanwhile
                sys.stdout = _Installed.stdout.target
            if sys.stderr is _Installed.stderr:
                sys.stderr = _Installed.stderr.target
            if warnings.showwarning is _route_warning:
                warnings.showwarning = _Installed.showwarning
            _Installed.stdout = _Installed.stderr = _Installed.showwarning = None


def _push(name: str, item: Any) -> None:
    stack = getattr(_LOCAL, name, None)
    if stack is None:
        stack = []
        setattr(_LOCAL, name, stack)
    stack.append(item)


@contextlib.contextmanager
def captured_output() -> Iterator[io.StringIO]:
    """What this thread prints to stdout or stderr, in one buffer; other threads print as before."""
    buffer = io.StringIO()
    _install()
    _push("buffers", buffer)
    try:
        yield buffer
    finally:
        _LOCAL.buffers.pop()
        _uninstall()


@contextlib.contextmanager
def recorded_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Every warning this thread raises (repeats included), as a list; other threads' warnings as before."""
    caught: list[warnings.WarningMessage] = []
    _install()
    _push("warnings", caught)
    try:
        yield caught
    finally:
        _LOCAL.warnings.pop()
        _uninstall()


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    """This thread's warnings discarded (TS repeating what TaskManager already said); others' as before."""
    _install()
    _push("warnings", _DROP)
    try:
        yield
    finally:
        _LOCAL.warnings.pop()
        _uninstall()


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """:func:`captured_output` and :func:`quiet_warnings` at once: TS run for its result, not its printout."""
    with captured_output() as out, quiet_warnings():
        yield out


__all__ = ["captured_output", "quiet", "quiet_warnings", "recorded_warnings"]
