"""A verdict says when its search counted several consumers of one pipeline together, as TS does and the GPU does not."""

from __future__ import annotations

from ts_explore import verify
from ts_explore.model.interleaving import CreditModel, CreditPool
from ts_explore.scenarios import get
from ts_explore.verification.scope import pooled_consumers


def _verdict(name: str):
    sc = get(name)
    return verify(**sc.build(sc.default_config()).verify_kwargs())


def test_a_pipeline_read_by_two_consumer_tasks_is_named_in_what_is_not_modelled() -> None:
    verdict = _verdict("hopper_attention")  # two consumer warpgroups read every K and V stage
    notes = [n for n in verdict.scope.not_modelled if "does not pool" in n]
    assert len(notes) == 1 and "k_smem, v_smem" in notes[0], verdict.scope.not_modelled
    assert "does not pool the consumers of k_smem, v_smem" in verdict.scope.sentence()  # what the user reads


def test_one_consumer_per_pipeline_says_nothing_of_pooling() -> None:
    verdict = _verdict("pipelined_copy")
    assert not any("does not pool" in n for n in verdict.scope.not_modelled), verdict.scope.not_modelled


def test_the_sentence_names_only_the_pipelines_with_several_consumers() -> None:
    model = CreditModel((CreditPool("ring", 0, 2), CreditPool("c", 0, 1)), consumers=(("ring", 2), ("c", 1)))
    text = pooled_consumers(model)
    assert text is not None and "of ring:" in text and " c," not in text
    assert pooled_consumers(CreditModel((CreditPool("c", 0, 1),))) is None
    assert pooled_consumers(None) is None
