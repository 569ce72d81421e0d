"""What the explorer's controls offer a user, for the tests that walk every offered value.

Both walks (``test_explorer_choices``: each value and dependent pairs;
``test_explorer_combinations``: every fault x queue combination) read the
controls the same way and differ only in which slider positions they try.
"""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as widgets

# the catalog scenarios the walks cover (the GEMM's walk lives in test_gemm_cpu)
BUILT_IN = ["grid_stride_copy", "guards_demo", "hopper_attention", "persistent_copy", "pipelined_copy", "varlen_copy"]


def offered(control: widgets.Widget, positions: Callable[[list[int]], list[int]]) -> list[Any]:
    """What a control lets a user pick now: dropdown options, both checkbox states, the slider ``positions`` chooses.

    >>> offered(widgets.Checkbox(), list)
    [False, True]
    >>> offered(widgets.IntSlider(min=1, max=4), lambda values: values[-1:])
    [4]
    """
    if control.disabled:
        return []
    if isinstance(control, widgets.Dropdown):
        return [v for _, v in control.options]
    if isinstance(control, widgets.Checkbox):
        return [False, True]
    if isinstance(control, widgets.IntSlider):
        return positions(list(range(control.min, control.max + 1, control.step)))
    return []  # text boxes: free text, checked when typed
