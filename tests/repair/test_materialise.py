"""Writing an edited model onto fresh TS tasks and capturing it back gives the edited model (in normal form)."""

from __future__ import annotations

import random
import warnings
from functools import partial

import pytest

from ts_explore import gallery, scenarios
from ts_explore.gallery.gemm_family import gemm_family
from ts_explore.reader.materialise import materialise
from ts_explore.repair.candidates import Suspects, candidates
from ts_explore.repair.edits import EditError
from ts_explore.repair.search import normal_form

from repair_support import capture
from task_set_generator import generate
from tiers import scaled


def _scenario(name: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scenarios.get(name).build().verify_kwargs()


BUILDS = {
    **{f"gallery:{n}": c.broken for n, c in gallery.CASES.items()},
    **{f"scenario:{n}": partial(_scenario, n) for n in scenarios.CATALOG},
    "gemm:2x3": partial(gemm_family, 2, 3),
    **{f"generated:{seed}": generate(seed).build for seed in range(scaled(12, 120))},
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_random_edits_round_trip_through_ts(name: str) -> None:
    build = BUILDS[name]
    base = capture(build)
    assert capture(lambda: materialise(base, base, build)) == base  # nothing edited: the same tasks
    edits = candidates(base, Suspects())
    rng = random.Random(name)
    tried = 0
    for edit in rng.sample(edits, min(len(edits), 6)):
        try:
            edited = edit.apply(base)
            fresh = lambda: materialise(base, edited, build)  # noqa: E731
            again = capture(fresh)
        except EditError:
            continue
        except ValueError:  # TS refuses to lower this edit (e.g. a guard outside the loop): not a candidate
            continue
        tried += 1
        assert again.tasks == normal_form(edited).tasks, edit
        assert again.resources == edited.resources or any(r.stages for r in edited.resources), edit
    assert tried or not edits
