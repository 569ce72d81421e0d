"""Where ts-explore keeps files for the user between sessions (sweep results, tuning tables).

``$TS_EXPLORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ts-explore``, else
``~/.cache/ts-explore``: one rule, read by the sweeps' results cache and by the
tuning tables that ``launch`` consults.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """The user's cache folder for ts-explore (not created here)."""
    if os.environ.get("TS_EXPLORE_CACHE_DIR"):
        return Path(os.environ["TS_EXPLORE_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ts-explore"


__all__ = ["cache_root"]
