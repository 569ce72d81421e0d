"""The examples in the sweep modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["ts_explore.sweeps.grid", "ts_explore.sweeps.table", "ts_explore.sweeps.command",
                                    "ts_explore.sweeps.cache", "ts_explore.sweeps.engine",
                                    "ts_explore.app.sweep_tab"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
