"""The scenario catalog: configurable schedules the explorer draws and the GPU runs."""

from __future__ import annotations

from .base import CATALOG, BuildContext, Built, Scenario, get, knob, register

__all__ = ["CATALOG", "BuildContext", "Built", "Scenario", "get", "knob", "register"]
