"""launch(keep_output=...) on the CPU: a wrong value and an output too large to bring back are refused with the fix,
before any GPU is looked for."""

from __future__ import annotations

import pytest

from ts_explore.gpu import KEEP_LIMIT_BYTES, LaunchError, launch


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_keep_output_takes_only_true_or_false(value: object) -> None:
    with pytest.raises(LaunchError) as err:
        launch("grid_stride_copy", sizes=[1 << 10], keep_output=value)
    assert err.value.reason == "bad_argument"
    assert f"keep_output must be True or False, got {value!r}" in str(err.value) and "numpy" in str(err.value)


@pytest.mark.parametrize("name,sizes", [
    ("grid_stride_copy", [1 << 29, 1 << 29, 1]),  # 2 GiB + 4 bytes of int32 outputs
    ("hopper_gemm", [(32768, 16392, 64)]),  # C as float32: just over 2 GiB
])
def test_outputs_too_large_to_bring_back_are_refused_before_the_gpu(name: str, sizes: list) -> None:
    with pytest.raises(LaunchError) as err:
        launch(name, sizes=sizes, keep_output=True)
    assert err.value.reason == "bad_argument" and "keep_output=True would bring about" in str(err.value)
    assert f"at most {KEEP_LIMIT_BYTES / 2**30:.0f} GiB" in str(err.value) and "check=True" in str(err.value)
