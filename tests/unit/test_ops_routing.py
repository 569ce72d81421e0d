"""Which calls of ``ts_explore.ops`` skip torch's dispatcher, and which go through the registered custom op.

The shortcut is only for plain eager calls: a torch dispatch mode (a debugging
or counting mode, ``FlopCounterMode``), a function mode, Dynamo tracing, a
tensor subclass or an input that needs a gradient must see the custom op, as
they would without the shortcut. Runs wherever torch is installed (no GPU
needed: it asks only about the tensors' types and torch's state).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from ts_explore.ops.routing import direct  # noqa: E402


class _Passing(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


class _Watching(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


class _Sub(torch.Tensor):
    pass


def test_a_plain_eager_call_takes_the_shortcut() -> None:
    assert direct(torch.zeros(2), torch.zeros(3))


def test_a_dispatch_mode_sees_the_custom_op() -> None:
    with _Passing():
        assert not direct(torch.zeros(2))


def test_a_function_mode_sees_the_custom_op() -> None:
    with _Watching():
        assert not direct(torch.zeros(2))


def test_a_tensor_subclass_sees_the_custom_op() -> None:
    assert not direct(torch.zeros(2), torch.zeros(2).as_subclass(_Sub))


def test_inputs_that_need_a_gradient_see_the_custom_op_unless_grad_is_off() -> None:
    x, w = torch.zeros(2), torch.zeros(2, requires_grad=True)
    assert not direct(x, w)
    with torch.no_grad():
        assert direct(x, w)


def test_dynamo_tracing_sees_the_custom_op() -> None:
    @torch.compile(fullgraph=True, backend="eager")
    def traced(x: torch.Tensor) -> torch.Tensor:
        return x + (0 if direct(x) else 1)

    assert float(traced(torch.zeros(1))[0]) == 1.0
