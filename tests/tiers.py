"""Test tiers: the default tier (``make test``, CI) and the soak tier behind ``TS_EXPLORE_SOAK=1``.

Soak tests are marked ``soak`` and skipped with the reason unless the variable is
set; a test that merely runs longer in the soak tier asks :func:`soak` or
:func:`scaled` for its size.
"""

from __future__ import annotations

import os

SOAK_VARIABLE = "TS_EXPLORE_SOAK"


def soak() -> bool:
    """True when the soak tier was asked for (``TS_EXPLORE_SOAK=1``)."""
    return os.environ.get(SOAK_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


def scaled(default: int, soaked: int) -> int:
    """``soaked`` in the soak tier, else ``default``."""
    return soaked if soak() else default
