"""The scenario catalog: configurable schedules the explorer draws and the GPU runs.

Importing this package registers the built-in scenarios in :data:`CATALOG`:
``grid_stride_copy``, ``pipelined_copy``, ``persistent_copy``, ``varlen_copy``,
``guards_demo``, ``hopper_gemm`` and ``hopper_attention``. Register your own with :func:`register`.
"""

from __future__ import annotations

from .base import CATALOG, BuildContext, Built, Scenario, get, knob, register
from .common import SkipRule
from . import attention, gemm, grid_stride, guards, persistent, pipelined, varlen  # noqa: E402,F401  (registers them)
from ..kernels.pipelined import Loader

__all__ = ["CATALOG", "BuildContext", "Built", "Loader", "Scenario", "SkipRule", "get", "knob", "register"]
