"""Turn TS's grammar and construction errors into :class:`Problem` records with a fix.

TS raises ``ScheduleError`` (a ``ValueError``) with prose messages; the table
below maps each known message to a stable rule slug and a hint that says how
to change the schedule. Unknown messages still become a Problem, with a
generic hint, so a new TS message never crashes the notebook.
"""

from __future__ import annotations

import difflib
import linecache
import os
import re
import sysconfig
import traceback
from dataclasses import replace
from types import TracebackType

from ..model import Problem

# Grammar problems: (regex searched in TS's message, the Problem's rule slug, how to fix it). First match wins.
GRAMMAR_PROBLEMS: tuple[tuple[str, str, str], ...] = (
    (r"must be called inside an @schedule function", "outside-schedule",
     "Call domain_loop / work_tile_loop / when_true only inside a function decorated with @schedule."),
    (r"must be passed as `group\.member`", "group-member",
     "Pass a PipelineGroup member as group.member, not the bare member resource."),
    (r"@schedule arguments must be MemoryResource", "not-a-resource",
     "Pass MemoryResource instances (or group.member refs) to the @schedule function."),
    (r"takes 1 to 3 positional bounds", "domain-bounds",
     "Give domain_loop one to three bounds, like range(): (end), (start, end) or (start, end, step)."),
    (r"step must be non-zero", "domain-step-zero", "Use a non-zero step in domain_loop()."),
    (r"must be a value or a callable that returns it; got None", "domain-bound-none",
     "Give every domain_loop bound a value (an int, a DSL value, or MyTask.get_domain)."),
    (r"instance-bound method", "dynamic-bound-instance",
     "Pass the method through the class (MyTask.get_domain), not through a task instance."),
    (r"exactly two required positional parameters", "dynamic-bound-signature",
     "A dynamic bound must be a Task method with exactly (self, work_tile_coord)."),
    (r"cannot be nested inside another domain_loop", "nested-domain-loop",
     "Use one domain_loop per schedule; unroll inner trace-time loops with a plain Python for."),
    (r"work_tile_loop\(\) must be a top-level block", "work-tile-loop-not-top-level",
     "Open work_tile_loop() at the top of the schedule, around the domain loop."),
    (r"at most one work_tile_loop", "two-work-tile-loops", "Merge the bodies into a single work_tile_loop()."),
    (r"not allowed outside work_tile_loop", "step-outside-work-tile-loop",
     "Move pipeline steps inside work_tile_loop(); only auxiliary work and barrier (PDL) steps may sit outside it."),
    (r"no blocks may follow work_tile_loop", "block-after-work-tile-loop",
     "Move the block inside the work_tile_loop() body; nothing but aux/barrier steps may follow it."),
    (r"requires a traced WorkQueue", "work-tile-loop-needs-queue",
     "Pass the WorkQueue resource argument of the schedule to work_tile_loop(wq)."),
    (r"skip_if=\.\.\.\) must be callable", "skip-if-not-callable",
     "Give skip_if a function, a lambda, or an unbound method of the queue class (MyQueue.skip_work_tile_if)."),
    (r"bound to a different WorkQueue", "skip-if-other-queue",
     "Use a predicate of this loop's own WorkQueue."),
    (r"is not a method of WorkQueue", "skip-if-not-queue-method",
     "Pass the method through the queue's class (MyQueue.skip_work_tile_if); TS 4.8.1 rejects bound methods like wq.skip_work_tile_if."),
    (r"skippable\(\) requires an enclosing work_tile_loop", "skippable-needs-skip-if",
     "Give the enclosing work_tile_loop a skip_if= predicate, or drop the skippable() block."),
    (r"skippable\(\) blocks cannot be nested", "nested-skippable", "Use a single skippable() block."),
    (r"domain_loop\(\) must be inside wtl\.skippable", "domain-loop-not-skippable",
     "Wrap the domain loop in `with wtl.skippable():` so skipped tiles skip the data work."),
    (r"WorkQueue operations cannot appear inside a skippable", "workqueue-in-skippable",
     "Move the WorkQueue wait/advance/release after the skippable block: skipped tiles must still run them."),
    (r"handle whose block has already exited", "stale-loop-handle",
     "Use first_iter()/last_iter()/every()/skippable() only inside the with-block of the loop that made the handle."),
    (r"condition is only valid inside a domain_loop|only valid inside domain_loop", "guard-outside-loop",
     "Put first_iter()/last_iter()/every() blocks inside the domain loop."),
    (r"cannot be nested; express independent cadences|cannot be nested inside a per-iteration", "nested-guard",
     "Guards cannot nest: write independent cadences as sibling blocks."),
    (r"cannot negate an iteration predicate", "negated-iteration-guard",
     "when_false() takes runtime conditions only; use a different iteration predicate."),
    (r"condition must be a work-call output", "condition-not-output",
     "Pass when_true/when_false the token of a @consumer_work(returns=...) call, not a pipeline op."),
    (r"condition token is stale", "stale-condition",
     "Use the latest token: the variable was produced again after this token."),
    (r"is a task-local variable, not a work method", "variable-as-method",
     "Produce the variable with a @consumer_work(returns=...) call and route the returned token."),
    (r"WorkQueue does not support", "workqueue-shorthand",
     "Call wq.get_and_advance_work_tile() or wq.fetch_work_tile() instead of consumer_work/producer_work."),
    (r"missing routed input", "missing-input", "Pass the token for every data-flow input of the work method."),
    (r"got unknown argument", "unknown-argument", "Pass only the parameters the work method declares."),
    (r"got multiple values for input", "double-bound-input",
     "Pass each input once, positionally or by keyword."),
    (r"positional data-flow", "too-many-positional", "Pass keyword-only inputs as argument=token."),
    (r"cannot be None; pass the token", "input-none", "Pass the token returned by the producing work call."),
    (r"must be a work-call output token, got", "input-not-token",
     "Route a token returned by a @consumer_work(returns=...) call; literals go to Constexpr parameters."),
    (r"carries no\s+variable", "input-pipeline-token",
     "Pipeline ops (acquire, commit, wait...) return no value; route a work call's output instead."),
    (r"uses a stale handle", "stale-token",
     "Use the latest token: the variable was produced again after this handle was captured."),
    (r"must be a compile-time literal", "constexpr-token",
     "Pass a Python literal to a cutlass.Constexpr parameter, not a token."),
    (r"missing required constexpr", "constexpr-missing", "Pass the required Constexpr keyword literal at the call site."),
    (r"cannot be unpacked|cannot be indexed", "single-output-unpacked",
     "This call returns one token; only multi-output returns=(a, b) calls yield a tuple."),
    (r"collides with the standard pipeline method", "reserved-method-name",
     "Rename the work method: acquire, commit, wait, release... are reserved."),
    (r"a work-method label\s+must be unique", "duplicate-label", "Rename one of the two work methods."),
    (r"declares returns=.*no such task-local variable", "unknown-returns",
     "Declare the TaskLocalVariable on the resource or fix the returns= name."),
    (r"schedule ended with an unclosed block|closed out of order", "unclosed-block",
     "Close every with-block before the schedule function returns."),
    (r"schedule has no static domain|requires `domain_getter", "no-domain-loop",
     "Every task needs a domain_loop (an empty domain_loop(0, 0, 1) for a scheduler task)."),
    (r"only supports a dynamic domain_loop\(\) end", "dynamic-start-step",
     "Only the end bound may be a Task method; give start and step plain values."),
    (r"at most one domain_loop\(\) per schedule", "two-domain-loops",
     "TS 4.8.1 lowers one domain loop per task: merge the loops or split the work into two tasks."),
    (r"Loop guards can only be used", "guard-outside-loop",
     "Put the guarded block inside the domain loop."),
    (r"'unroll' must be a compile-time int", "unroll-not-int",
     "Give domain_loop(..., unroll=) a Python int, or leave unroll out."),
    (r"'skip_if' must accept|'skip_if' is not callable for WorkQueue", "skip-if-shape",
     "Give skip_if a function of (work_tile) or (work_queue, work_tile), or the queue class's method "
     "(MyQueue.skip_work_tile_if)."),
    (r"domain_getter must (accept|be|expose)", "dynamic-domain-name",
     "A per-tile bound must be a method def get_domain(self, work_tile_coord) on your Task subclass, passed as "
     "MyTask.get_domain, and the task built from that subclass; a lambda or another function cannot be the bound."),
    (r"get_domain", "dynamic-domain-name",
     "Name the per-tile bound method get_domain on your Task subclass and build the task from that subclass."),
    (r"Every period|Every start", "bad-every", "Use every(period>0, start>=0) with plain ints."),
    (r"has no work method", "unknown-method", "Check the method name: the message lists the available work methods."),
)


def classify(message: str) -> tuple[str, str]:
    """(rule slug, hint) for a TS error message."""
    for pattern, rule, hint in GRAMMAR_PROBLEMS:
        if re.search(pattern, message, flags=re.S):
            return rule, hint
    return "schedule-error", "Read TS's message above; it names the rule the schedule breaks."


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIRS = tuple(
    os.path.normpath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib")
)


def is_user_code(filename: str) -> bool:
    """True for the user's files and notebook cells; False for TS, ts_explore and Python itself."""
    if filename.startswith("<"):  # a notebook cell, or text the user typed (a lambda in a control) kept for tracebacks
        return filename.startswith("<ipython-input") or bool(linecache.cache.get(filename, (0,))[0])
    path = os.path.normpath(os.path.abspath(filename))
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    if path.startswith(_PACKAGE_DIR):
        return False
    return not path.startswith(_STDLIB_DIRS)


def user_frame(tb: TracebackType | None) -> tuple[str, int] | None:
    """(filename, line) of the innermost traceback frame that is the user's code."""
    best: tuple[str, int] | None = None
    for frame, lineno in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if is_user_code(filename):
            best = (filename, lineno)
    return best


def _did_you_mean(message: str) -> str | None:
    """'Did you mean get_item()?' for a typo'd work method, from TS's list of available ones."""
    m = re.search(r"no work method '([^']+)'\. Available work methods: (.*)\.$", message)
    if not m:
        return None
    close = difflib.get_close_matches(m.group(1), [n.strip() for n in m.group(2).split(",")], n=1)
    return f"Did you mean {close[0]}()? Check the spelling of the work method." if close else None


def problem_from_exception(exc: BaseException) -> Problem:
    """A Problem for any exception raised while recording or building a Task."""
    message = str(exc).strip() or type(exc).__name__
    rule, hint = classify(message)
    own_hint = getattr(exc, "hint", None)
    if rule == "schedule-error" and isinstance(own_hint, str) and own_hint:  # a ConfigError of ours: its own fix
        rule, hint, message = "config-error", own_hint, str(getattr(exc, "cause", message))
    if rule == "unknown-method":
        hint = _did_you_mean(message) or hint
    where = user_frame(exc.__traceback__)  # only the user's own line: TS's or ours would point away from the fix
    line = filename = source = None
    if where is not None:
        filename, line = where
        source = linecache.getline(filename, line).rstrip() or None
    if rule == "schedule-error" and not isinstance(exc, ValueError):
        rule = "python-error"
        hint = f"The schedule function raised {type(exc).__name__} before TS could record it; "
        if source:
            hint += f"fix this line: {source.strip()}"
        elif line is not None:
            hint += f"fix line {line} of {os.path.basename(filename or '')}"
        else:
            hint += "fix the call its message names"
    return Problem(
        rule=rule,
        message=message,
        hint=hint,
        line=line,
        filename=filename,
        source=source,
        error_type=type(exc).__name__,
    )


def located(problem: Problem, filename: str, line: int) -> Problem:
    """The problem pointing at ``filename:line`` (with that line's source)."""
    source = linecache.getline(filename, line).rstrip() or None
    return replace(problem, filename=filename, line=line, source=source)


def not_a_schedule(obj: object) -> Problem | None:
    """A Problem when ``obj`` cannot be a schedule function (None, not callable, async, a generator, a class)."""
    import inspect

    fn = getattr(obj, "__wrapped__", obj)
    if obj is None or not callable(obj):
        what = "None" if obj is None else f"a {type(obj).__name__}"
        return Problem("not-a-schedule", f"record() takes a schedule function, got {what}",
                       "Pass the function itself: record(my_schedule, src, dst), where my_schedule is a def "
                       "(decorated with @schedule or not) that takes the resources.", error_type="TypeError")
    if inspect.isclass(fn):
        return Problem("not-a-schedule", f"record() takes a schedule function, got the class {fn.__name__}",
                       "Pass a def that takes the resources and calls their methods.", error_type="TypeError")
    kind = ("an async def" if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
            else "a generator function (it contains yield)" if inspect.isgeneratorfunction(fn) else None)
    if kind is None:
        return None
    code = getattr(fn, "__code__", None)
    where = {}
    if code is not None:
        where = {"filename": code.co_filename, "line": code.co_firstlineno,
                 "source": linecache.getline(code.co_filename, code.co_firstlineno).rstrip() or None}
    return Problem("async-or-generator-schedule", f"{getattr(fn, '__name__', 'the schedule')} is {kind}: calling it "
                   "returns without running its body, so TS would record nothing",
                   "Write the schedule as a plain def without async or yield; TS runs it once on the CPU to record "
                   "the steps.", error_type="TypeError", **where)


__all__ = ["GRAMMAR_PROBLEMS", "classify", "is_user_code", "located", "not_a_schedule", "problem_from_exception", "user_frame"]
