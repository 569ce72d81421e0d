"""The checker input built from our model equals the one built from TS tasks (parity), for the instance and its edits."""

from __future__ import annotations

import random

import pytest

from ts_explore.check.from_model import NotSupported, problem_from_model
from ts_explore.reader.materialise import materialise
from ts_explore.reader.search_facts import capture_run_facts
from ts_explore.reader.search_input import search_problem
from ts_explore.repair.candidates import Suspects, candidates
from ts_explore.repair.edits import EditError

from repair_support import capture
from test_materialise import BUILDS


# instances the model path must build (the rest may refuse, naming the construct)
SUPPORTED = {n for n in BUILDS if n.startswith(("gallery:", "generated:"))}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_model_built_problem_equals_ts_built_problem(name: str) -> None:
    build = BUILDS[name]
    base = capture(build)
    d = build()
    try:
        runs = capture_run_facts(d["tasks"], d["resource_dependency_graph"], base)
    except NotSupported as exc:  # said, with the construct named; the search then goes through TS
        assert str(exc) and name not in SUPPORTED, exc
        return
    for kwargs, facts in runs:
        try:
            assert problem_from_model(base, facts, rebuild_all=True) == facts.base
        except NotSupported:  # only place-dependent entries (aliased or domain-interleaved) may refuse
            assert facts.varying
    rng = random.Random(name)
    edits = candidates(base, Suspects())
    for edit in rng.sample(edits, min(len(edits), 6)):
        try:
            edited = edit.apply(base)
            fresh = materialise(base, edited, build)
        except (EditError, ValueError):
            continue
        for kwargs, facts in runs:
            try:
                mine = problem_from_model(edited, facts)
            except NotSupported:
                continue
            assert mine == search_problem(fresh["tasks"], **kwargs), edit
