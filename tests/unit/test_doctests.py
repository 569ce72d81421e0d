"""The ``>>>`` examples in the verdict, scope, tile and drawing modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ts_explore.model.scope",
    "ts_explore.model.schedule",
    "ts_explore.check.tile_loop",
    "ts_explore.render.tree",
    "ts_explore.render.recording",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
