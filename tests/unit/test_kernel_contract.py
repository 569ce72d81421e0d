"""Every catalog kernel module keeps the contract of ``ts_explore.kernels.contract``, signatures included."""

from __future__ import annotations

import importlib
import inspect
import types

import pytest

from ts_explore.kernels import contract
from ts_explore.scenarios import CATALOG

KERNELS = sorted({sc.kernel for sc in CATALOG.values() if sc.kernel})


def _parameters(fn) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def _accepts(fn, protocol_fn) -> bool:
    """``fn`` takes the protocol method's parameters, by name and kind, in order (it may take more)."""
    mine, theirs = _parameters(fn), _parameters(protocol_fn)
    return mine[: len(theirs)] == theirs or all(p in mine for p in theirs)


@pytest.mark.parametrize("name", KERNELS)
def test_catalog_kernels_are_kernel_modules(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(module, contract.KernelModule) and contract.missing_members(module) == []
    assert isinstance(module, (contract.HostChecked, contract.DeviceChecked))
    for protocol in (contract.TracedKernel, contract.HostChecked, contract.DeviceChecked):
        if protocol is contract.TracedKernel and not contract.traceable(module):
            continue
        if isinstance(module, protocol):
            for member in ("plan", "compile", "host_problem", "device_problem"):
                if hasattr(protocol, member) and hasattr(module, member):
                    assert _accepts(getattr(module, member), getattr(protocol, member)), f"{name}.{member}"
    for member, params in contract.OPTIONAL.items():
        found = contract.optional(module, member)
        if found is not None:
            assert [p for p, _ in _parameters(found)][: len(params)] == list(params), f"{name}.{member}"


def test_a_module_without_the_checks_is_told_what_it_lacks() -> None:
    sketch = types.ModuleType("sketch_kernel")
    sketch.plan = lambda cfg, size, limits, registers=None: None
    assert contract.missing_members(sketch) == ["compile", "host_problem (or device_problem)"]
    with pytest.raises(KeyError, match="optional kernel-module member"):
        contract.optional(sketch, "plan")
