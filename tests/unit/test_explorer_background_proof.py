"""A proof longer than an update's quick pass goes on in the background and can be cancelled."""

from __future__ import annotations

from dataclasses import dataclass

from ts_explore.app.explorer import Explorer
from ts_explore.app.proof import needs_background_proof
from ts_explore.gallery.gemm_family import gemm_family
from ts_explore.kernels.contract import BuildContext, Built
from ts_explore.scenarios import Scenario, knob


@dataclass(frozen=True)
class Family:
    loaders: int = knob(3, min=1, max=5, label="loader tasks")
    iterations: int = knob(16, min=1, max=64, label="iterations")


def _build(cfg: Family, ctx: BuildContext) -> Built:
    case = gemm_family(cfg.loaders, cfg.iterations)
    return Built(tasks=case["tasks"], resource_dependency_graph=case["resource_dependency_graph"])


GEMM_SHAPED = Scenario(name="gemm_shaped_test", title="GEMM-shaped family", config_type=Family, build_fn=_build)


def test_a_capped_quick_pass_is_proven_in_the_background() -> None:
    ex = Explorer(GEMM_SHAPED, debounce_s=0, foreground_states=20)  # the quick pass stops after 20 states
    assert ex.state == "verifying" or not ex.proof.running  # (the proof may already be done)
    assert ex.wait_for_proof(timeout=120)
    assert ex.verdict is not None and ex.verdict.ok and ex.state == "idle", ex.verdict
    assert max(r.states for r in ex.verdict.scope.runs) > 20, "the verdict is the background search's"
    assert ex.proof.widget.layout.display == "none"
    seen = []
    ex.observe(lambda change: seen.append(change["new"]), names="state")
    ex.set(iterations=32)
    assert ex.wait_for_proof(timeout=120) and ex.verdict.ok
    assert seen[:2] == ["verifying", "idle"] or "verifying" in seen, seen


def test_cancel_leaves_the_verdict_not_proven() -> None:
    ex = Explorer(GEMM_SHAPED, debounce_s=0, foreground_states=20, loaders=5, iterations=64)
    ex.proof.cancel()
    assert ex.wait_for_proof(timeout=120)
    v = ex.verdict
    assert v is not None and not v.ok and v.status.value == "inconclusive"
    assert any("cancelled" in r for r in v.reasons), v.reasons
    assert not needs_background_proof(ex._outcome), "a cancelled proof does not start again by itself"
