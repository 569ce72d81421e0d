"""Launch sizes typed as text (``ts-explore launch --size``): whatever form the scenario's kernel takes.

A copy takes int32 elements (``16777216``), the GEMM a shape ``MxNxK``
(``4096x4096x4096``, the form ``tune --shapes`` takes), attention
``BxHxSQxSKVxD`` (batch, heads, seqlen_q, seqlen_kv, head_dim). The form comes
from the kernel's ``DEFAULT_SIZES``; a size of another form is refused here,
in the shell's syntax, before anything is planned or compiled.

>>> from ts_explore.scenarios import get
>>> sizes_from_text(get("hopper_gemm"), ["4096x4096x1024", "256X256x64"])
((4096, 4096, 1024), (256, 256, 64))
>>> sizes_from_text(get("grid_stride_copy"), ["1024"]), sizes_from_text(get("grid_stride_copy"), None)
((1024,), (16777216,))
>>> sizes_from_text(get("hopper_gemm"), ["4096"])
Traceback (most recent call last):
...
ts_explore.gpu.sizes.SizeSyntaxError: --size '4096' is not a size of hopper_gemm: it takes a GEMM shape MxNxK, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import LaunchError
from .plan import kernel_module

DEFAULT_ELEMENTS = 1 << 24  # a copy's size when none is given: 16M int32 elements (64 MiB)

# how a size is typed, by the number of values the kernel's sizes hold (None: one int)
SYNTAX = {None: ("int32 elements, a positive whole number", "16777216"),
          3: ("a GEMM shape MxNxK", "4096x4096x4096"),
          5: ("an attention shape BxHxSQxSKVxD (batch, heads, seqlen_q, seqlen_kv, head_dim)", "4x16x2048x2048x128")}


class SizeSyntaxError(ValueError):
    """A ``--size`` that is not of the form the scenario's kernel takes; the message names the form."""


def size_arity(scenario: Any) -> int | None:
    """How many values one size of ``scenario`` holds (None: one int, as the copies take)."""
    try:
        defaults = getattr(kernel_module(scenario), "DEFAULT_SIZES", None)
    except LaunchError:
        return None  # no kernel: the launch says so in its own words
    return len(defaults[0]) if defaults and isinstance(defaults[0], tuple) else None


def sizes_from_text(scenario: Any, texts: Sequence[str] | None) -> tuple[Any, ...] | None:
    """``--size`` values as the scenario's sizes; None (the kernel's own default shape) or 16M elements without."""
    arity = size_arity(scenario)
    if not texts:
        return None if arity is not None else (DEFAULT_ELEMENTS,)
    what, example = SYNTAX.get(arity, (f"{arity} positive whole numbers joined by 'x'", "x".join(["64"] * (arity or 1))))
    out: list[Any] = []
    for text in texts:
        try:
            values = tuple(int(p) for p in text.strip().lower().split("x"))
        except ValueError:
            values = ()
        if len(values) != (arity or 1) or min(values) < 1:
            raise SizeSyntaxError(f"--size {text!r} is not a size of {scenario.name}: it takes {what}, e.g. "
                                  f"--size {example} (repeat --size for more sizes)")
        out.append(values if arity is not None else values[0])
    return tuple(out)


__all__ = ["DEFAULT_ELEMENTS", "SYNTAX", "SizeSyntaxError", "size_arity", "sizes_from_text"]
