"""Checks made before anything reaches the GPU: the verifier's verdict and the hardware a config needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenarios.base import Scenario


@dataclass(frozen=True)
class Gate:
    """The verifier's answer for one config."""

    ok: bool
    summary: str


def verdict_for(scenario: Scenario, config: Any) -> Gate:
    """Build the config on the CPU (its own view: ``elements``, ``tiles``...) and run :func:`ts_explore.verify`."""
    from ..reader.verify import verify

    try:
        built = scenario.build(config)
    except Exception as exc:  # a bad config or a schedule that does not record
        return Gate(False, f"{type(exc).__name__}: {exc}")
    verdict = verify(**built.verify_kwargs())
    return Gate(bool(verdict.ok), verdict.summary())


def required_cc(config: Any) -> tuple[int, int, str] | None:
    """The compute capability a config needs to run, and why (None: any sm_90 GPU)."""
    from ..model import QueueKind

    if getattr(config, "queue", None) is QueueKind.CLC:
        return (10, 0, "CLC dynamic persistence (cluster launch control) needs an sm_100+ GPU; "
                       "the schedule still records and verifies on this machine")
    return None


__all__ = ["Gate", "required_cc", "verdict_for"]
