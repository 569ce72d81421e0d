"""ts_explore.ops without torch or a GPU: the compile cache's keys and files, the shape-class gate, and the
messages that name what is wrong with an op's arguments."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ts_explore.kernels import attention, gemm
from ts_explore.model.plan import DeviceLimits
from ts_explore.ops import OpsError, compiled
from ts_explore.ops.checks import explain_attention, explain_gemm, explain_scales
from ts_explore.ops.compile_cache import CacheKey, DiskCache, cache_root, load_shared, shared_library, source_digest
from ts_explore.ops.gate import ShapeGate, shape_class
from ts_explore.ops.launch_index import LaunchIndex, record_name
from ts_explore.scenarios.gemm import GemmFault

H200 = DeviceLimits.h200()
GEMM = compiled.scenario("hopper_gemm")


# ---- the compile cache -----------------------------------------------------------------------------------


def key(**change: Any) -> CacheKey:
    fields = dict(kernel="gemm", config="cfg", arch="sm_90a", dsl="4.8.1", code="abc", options="--enable-tvm-ffi")
    return CacheKey(**{**fields, **change})


@pytest.mark.parametrize("field", ["kernel", "config", "arch", "dsl", "code", "options"])
def test_a_change_to_any_key_field_names_another_file(field: str) -> None:
    assert key().digest == key().digest
    assert key(**{field: "changed"}).digest != key().digest
    assert key(**{field: "changed"}).symbol.isidentifier()


def test_the_code_digest_follows_the_kernel_source(tmp_path: Path) -> None:
    (tmp_path / "kernels").mkdir()
    source = tmp_path / "kernels" / "gemm.py"
    source.write_text("x = 1\n")
    before = source_digest(["kernels"], tmp_path)
    assert source_digest(["kernels"], tmp_path) == before
    source.write_text("x = 2\n")
    assert source_digest(["kernels"], tmp_path) != before


def test_the_key_holds_the_config_and_the_installed_dsl() -> None:
    cfg = compiled.default_gemm_config().resolved((1000, 1032, 520), 132)
    found = CacheKey.of("gemm", cfg, "sm_90a", "--enable-tvm-ffi")
    assert found.config == repr(cfg) and found.dsl == "4.8.1" and len(found.code) == 64
    other = CacheKey.of("gemm", compiled.default_gemm_config().resolved((8192, 8192, 8192), 132), "sm_90a")
    assert other.digest != found.digest


class FakeDsl:
    """Stands in for cute.compile / export_to_c / load_module: counts compiles, writes the config's text."""

    def __init__(self) -> None:
        self.compiled: list[str] = []

    def compile(self, text: str) -> Any:
        self.compiled.append(text)
        return text

    @staticmethod
    def export(compiled: Any, path: Path, symbol: str) -> None:
        path.write_text(f"{symbol}:{compiled}")

    @staticmethod
    def load(path: Path, symbol: str) -> Any:
        return path.read_text()


def cache(root: Path, dsl: FakeDsl) -> DiskCache:
    return DiskCache(root, load=dsl.load, export=dsl.export)


def test_a_second_process_loads_what_the_first_compiled(tmp_path: Path) -> None:
    dsl = FakeDsl()
    first = cache(tmp_path, dsl).function(key(), lambda: dsl.compile("A"))
    assert not first.hit and dsl.compiled == ["A"] and first.function == f"{key().symbol}:A"
    again = cache(tmp_path, dsl)  # a new process: nothing loaded yet, the file is on disk
    second = again.function(key(), lambda: dsl.compile("A"))
    assert second.hit and again.compiles == 0 and second.function == first.function
    third = again.function(key(config="other"), lambda: dsl.compile("B"))
    assert not third.hit and dsl.compiled == ["A", "B"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"{key().symbol}.o", f"{key(config='other').symbol}.o"])


def test_a_failed_export_leaves_no_file_behind(tmp_path: Path) -> None:
    def broken(compiled: Any, path: Path, symbol: str) -> None:
        path.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        DiskCache(tmp_path, load=FakeDsl.load, export=broken).function(key(), lambda: "A")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(importlib.util.find_spec("tvm_ffi") is None, reason="needs apache-tvm-ffi (the torch extra)")
def test_the_dsl_gemm_compiles_for_tvm_ffi_exports_and_loads_back(tmp_path: Path) -> None:
    import shutil

    cfg = compiled.default_gemm_config().resolved((1000, 1032, 520), 132)
    first = compiled.gemm_function(cfg, "sm_90a", DiskCache(tmp_path))
    again = DiskCache(tmp_path)
    second = compiled.gemm_function(cfg, "sm_90a", again)
    assert not first.hit and second.hit and again.compiles == 0
    assert type(second.function).__name__ == "Function" and second.seconds < 1.0
    if shutil.which("cc"):  # the shared library TVM-FFI loads without the DSL
        assert shared_library(first.path).exists()
        assert type(load_shared(shared_library(first.path), first.path.stem)).__name__ == "Function"


def test_the_cache_root_is_the_launchers_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ts_explore.gpu import user_cache

    for env in ({"TS_EXPLORE_CACHE_DIR": str(tmp_path)}, {"XDG_CACHE_HOME": str(tmp_path)}, {}):
        monkeypatch.delenv("TS_EXPLORE_CACHE_DIR", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert cache_root() == user_cache.cache_root()


# ---- launch records ----------------------------------------------------------------------------------------


def test_a_launch_record_is_named_by_everything_the_launch_depends_on() -> None:
    base = dict(op="gemm", config="default", shape=(1000, 1032, 520), dtype="bf16", sms=132, cc=(9, 0))
    name = record_name(**base)
    assert record_name(**base) == name
    for field, other in (("op", "attention"), ("config", "cfg-1"), ("shape", (1000, 1032, 528)), ("dtype", "fp8"),
                         ("sms", 114), ("cc", (10, 0))):
        assert record_name(**{**base, field: other}) != name


def test_a_launch_record_is_read_back_only_while_its_library_exists(tmp_path: Path) -> None:
    index = LaunchIndex(tmp_path / "launches")
    library = tmp_path / "k.so"
    library.write_text("")
    index.put("abc", {"library": str(library), "symbol": "ts_gemm_x", "grid": [2, 1, 36]})
    assert index.get("abc")["grid"] == [2, 1, 36] and index.get("other") is None
    library.unlink()
    assert index.get("abc") is None


# ---- the gate ----------------------------------------------------------------------------------------------


def gate(root: Any = False) -> ShapeGate:
    return ShapeGate(GEMM, gemm.plan, root=root)


def test_the_gate_proves_each_shape_class_once() -> None:
    g = gate()
    cfg = compiled.default_gemm_config().resolved((2048, 1024, 512), 132)
    g.admit(cfg, (2048, 1024, 512), H200)
    assert g.proofs == 1
    g.admit(cfg, (2048, 1024, 512), H200)
    g.admit(cfg, (2040, 1024, 512), H200)  # the same tiles per CTA and k-blocks: the same class
    assert g.proofs == 1
    g.admit(cfg, (2048, 1024, 4096), H200)  # 64 k-blocks a tile: a new class
    assert g.proofs == 2


def test_the_class_is_what_each_cta_group_runs() -> None:
    cfg = compiled.default_gemm_config().resolved((2048, 1024, 512), 132)
    same = [shape_class(gemm.plan(cfg, s, H200), cfg) for s in ((2048, 1024, 512), (2040, 1024, 512))]
    assert same[0] == same[1]
    assert shape_class(gemm.plan(cfg, (2048, 1024, 520), H200), cfg) != same[0]  # 9 k-blocks, not 8


def test_a_proof_on_disk_spares_a_new_process_the_search(tmp_path: Path) -> None:
    cfg = compiled.default_gemm_config().resolved((1000, 1032, 520), 132)
    gate(tmp_path).admit(cfg, (1000, 1032, 520), H200)
    fresh = gate(tmp_path)
    fresh.admit(cfg, (1000, 1032, 520), H200)
    assert fresh.proofs == 0 and len(list(tmp_path.glob("*.json"))) == 1


def test_the_gate_refuses_a_class_it_cannot_prove(tmp_path: Path) -> None:
    from ts_explore.kernels.gemm_geometry import TileShape
    from ts_explore.scenarios.gemm import GemmMode

    cfg = GEMM.config(mode=GemmMode.PINGPONG, tile=TileShape.T128x128, stages=6, fault=GemmFault.PINGPONG_BROKEN)
    g = gate(tmp_path)
    with pytest.raises(OpsError, match="not proven safe"):
        g.admit(cfg, (1024, 1024, 512), H200)
    with pytest.raises(OpsError, match="not proven safe"):
        g.admit(cfg, (1024, 1024, 512), H200)  # refused again: only SAFE is remembered
    assert list(tmp_path.glob("*.json")) == []


def test_attention_classes_follow_the_kv_loop() -> None:
    g = ShapeGate(compiled.scenario("hopper_attention"), attention.plan, root=False)
    cfg = compiled.attention_config(128, False)
    g.admit(cfg, (2, 8, 1024, 1024, 128), H200)
    g.admit(cfg, (2, 8, 1024, 1024, 128), H200)
    assert g.proofs == 1


# ---- argument checks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    type: str = "cuda"
    index: int | None = 0


@dataclass
class Fake:
    """A tensor's metadata, as the checks read it."""

    shape: tuple[int, ...]
    dtype: str = "torch.bfloat16"
    strides: tuple[int, ...] | None = None
    device: Device = Device()
    ptr: int = 1 << 20

    def stride(self) -> tuple[int, ...]:
        if self.strides is not None:
            return self.strides
        out, step = [], 1
        for size in reversed(self.shape):
            out.append(step)
            step *= size
        return tuple(reversed(out))

    def data_ptr(self) -> int:
        return self.ptr


def column_major(k: int, n: int, **kw: Any) -> Fake:
    return Fake((k, n), strides=(1, k), **kw)


def test_good_gemm_operands_pass() -> None:
    explain_gemm(Fake((1000, 520)), column_major(520, 1032))
    explain_gemm(Fake((1000, 528), "torch.float8_e4m3fn"), column_major(528, 1032, dtype="torch.float8_e4m3fn"))


@pytest.mark.parametrize(("a", "b", "cause"), [
    (Fake((1000, 520), "torch.float16"), column_major(520, 1032), "a is torch.float16"),
    (Fake((1000, 520)), column_major(520, 1032, dtype="torch.float8_e4m3fn"), "both operands must have one dtype"),
    (Fake((1000, 520), device=Device("cpu", None)), column_major(520, 1032), "a is on cpu.*a.cuda()"),
    (Fake((1000, 520)), column_major(520, 1032, device=Device("cuda", 1)), "b is on cuda:1.*same GPU"),
    (Fake((1000, 520)), Fake((520, 1032)), "column-major.*w.t()"),
    (Fake((1000, 520), strides=(1, 1000)), column_major(520, 1032), "a must be row-major"),
    (Fake((1000, 512)), column_major(520, 1032), "a's columns must equal b's rows"),
    (Fake((1000, 520)), column_major(520, 1030), "N=1030 is not a multiple of 8"),
    (Fake((1000, 516)), column_major(516, 1032), "K=516 is not a multiple of 8"),
    (Fake((2, 1000, 520)), column_major(520, 1032), "3 dimensions.*reshape"),
    (Fake((1000, 520), ptr=(1 << 20) + 2), column_major(520, 1032), "16-byte aligned"),
])
def test_bad_gemm_operands_name_the_cause(a: Fake, b: Fake, cause: str) -> None:
    with pytest.raises(OpsError, match=cause):
        explain_gemm(a, b)


def test_a_wrong_out_and_wrong_scales_name_the_cause() -> None:
    with pytest.raises(OpsError, match="out must be a contiguous 1000x1032"):
        explain_gemm(Fake((1000, 520)), column_major(520, 1032), out=Fake((1032, 1000)))
    with pytest.raises(OpsError, match="gemm writes bf16"):
        explain_gemm(Fake((1000, 520)), column_major(520, 1032), out=Fake((1000, 1032), "torch.float32"))
    with pytest.raises(OpsError, match="pass both scale_a and scale_b"):
        explain_scales(True, 1.0, None)
    with pytest.raises(OpsError, match="float8_e4m3fn operands only"):
        explain_scales(False, 0.5, 0.5)


@pytest.mark.parametrize(("q", "k", "cause"), [
    (Fake((2, 256, 4, 128), "torch.float16"), Fake((2, 256, 4, 128)), "q is torch.float16"),
    (Fake((2, 256, 4, 32)), Fake((2, 256, 4, 32)), "head_dim 32 is not built"),
    (Fake((2, 256, 4, 128)), Fake((2, 256, 2, 128)), "k has shape"),
    (Fake((2, 256, 4, 128)), Fake((2, 256, 4, 128), strides=(131072, 128, 32768, 1)), "k must be contiguous"),
    (Fake((256, 4, 128)), Fake((256, 4, 128)), "3 dimensions.*transpose"),
])
def test_bad_attention_inputs_name_the_cause(q: Fake, k: Fake, cause: str) -> None:
    with pytest.raises(OpsError, match=cause):
        explain_attention(q, k, Fake(k.shape) if len(k.shape) == 4 else k)


def test_good_attention_inputs_pass() -> None:
    explain_attention(Fake((2, 200, 4, 64)), Fake((2, 777, 4, 64)), Fake((2, 777, 4, 64)), out=Fake((2, 200, 4, 64)))


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed here")
def test_without_torch_the_package_imports_and_the_ops_name_the_extra() -> None:
    import ts_explore.ops as ops

    with pytest.raises(OpsError, match=r"ts-explore\[torch\]"):
        ops.gemm  # noqa: B018


def test_the_ops_attention_persists_where_every_launched_walk_is_proven() -> None:
    from ts_explore.kernels.attention_geometry import Persistence

    assert compiled.attention_config(128, False).persistence is Persistence.STATIC  # the faster kernel at 8k
    assert compiled.attention_config(64, True).persistence is Persistence.NONE  # causal walks mix K/V lengths
    base = compiled.scenario("hopper_attention").config(persistence=Persistence.NONE)
    assert compiled.attention_config(128, False, base).persistence is Persistence.NONE  # a given config wins


@pytest.mark.parametrize(("head_dim", "causal", "seqlen_q", "wgs"), [
    (128, False, 8192, 2), (128, True, 8192, 2), (64, False, 1024, 2), (64, False, 2048, 3), (64, True, 2048, 2),
    (64, True, 4096, 3)])
def test_the_ops_attention_picks_three_warpgroups_at_head_dim_64_where_they_ran_faster(
        head_dim: int, causal: bool, seqlen_q: int, wgs: int) -> None:
    cfg = compiled.attention_config(head_dim, causal, seqlen_q=seqlen_q)
    assert (cfg.consumer_wgs, cfg.tile_q) == (wgs, 64 * wgs)
    compiled.scenario("hopper_attention").check(cfg)  # a config the scenario lays out


def test_a_launch_record_names_the_kernel_the_op_picks() -> None:
    from ts_explore.ops.attention_policy import attention_knobs

    short, tall = attention_knobs(64, True, 2048), attention_knobs(64, True, 4096)
    assert dict(tall)["persistence"] == "none"  # three consumers: one CTA per tile, whose proof is quick
    assert short != tall  # a causal call at 4096 rows never loads the record of the two-warpgroup kernel
    assert attention_knobs(64, True, 4096) == attention_knobs(64, True, 8192)
