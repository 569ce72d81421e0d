"""The CLI's exit-code table: verify 0 / 1 / 4, 2 for usage, load, factory or config errors, quiet closed pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ts_explore.cli import EXIT_INCONCLUSIVE, VERIFY_EXIT, emit, main

TARGETS = textwrap.dedent(
    """
    import cutlass
    from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
    from cutlass.experimental.task_scheduling.task import Task
    from ts_explore import gallery
    from ts_explore.seed_examples import resources as R

    def safe_pair():
        built = gallery.CASES["cross_wait"].fixed()
        return built["tasks"], built["resource_dependency_graph"]

    def safe_dict():
        return gallery.CASES["cross_wait"].fixed()

    def runtime_bound():
        smem = R.Signal(name="smem", pipeline_config=R.async_pipeline(1))

        @schedule
        def producer(smem):
            with domain_loop(0, cutlass.Int32(4), 1):
                smem.acquire(); smem.produce(); smem.commit()

        @schedule
        def consumer(smem):
            with domain_loop(0, cutlass.Int32(4), 1):
                smem.wait(); smem.consume(); smem.release()

        tasks = [Task([], [smem], 0, 1, schedule=producer(smem), name="P"),
                 Task([smem], [], 1, 1, schedule=consumer(smem), name="C")]
        return tasks, {smem: []}

    def raises():
        raise RuntimeError("the buffers live on the GPU")

    def not_tasks():
        return [1, 2], {}
    """
)


@pytest.fixture
def targets(tmp_path, monkeypatch):
    (tmp_path / "cli_targets.py").write_text(TARGETS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_exit_table_is_one_mapping():
    assert VERIFY_EXIT == {"safe": 0, "unsafe": 1, "inconclusive": 4}


def test_inconclusive_prints_its_word_and_exits_4(targets, capsys):
    assert main(["verify", "cli_targets:runtime_bound"]) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out
    assert out.startswith("INCONCLUSIVE\n") and "not proven" in out and "UNSAFE" not in out
    assert main(["verify", "cli_targets:runtime_bound", "--json"]) == EXIT_INCONCLUSIVE
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "inconclusive" and data["reasons"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["verify", "cli_targets:raises"],
         "the factory cli_targets:raises raised RuntimeError: the buffers live on the GPU"),
        (["verify", "cli_targets:not_tasks"], "verify(tasks=...) takes TS Task objects; got int"),
        (["verify", "ts_explore.scenarios.grid_stride:SCENARIO", "--set", "elements=-256"],
         "elements (CPU view): '-256' is not one of 64, 128"),
        (["verify", "ts_explore.scenarios.pipelined:SCENARIO", "--set", "stages=0"], "is out of range"),
        (["render", "cli_targets:raises", "-o", "x.svg"], "raised RuntimeError"),
    ],
)
def test_user_and_config_errors_are_one_line_exit_2(targets, argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"ts-explore {argv[0]}: error:")


def test_a_scenario_build_that_raises_is_exit_2(targets, capsys):
    (targets / "cli_scenario.py").write_text(textwrap.dedent(
        """
        from dataclasses import dataclass
        from ts_explore.scenarios import Scenario

        @dataclass(frozen=True)
        class Nothing:
            size: int = 1

        def build(cfg, ctx):
            raise ValueError("this view cannot be built")

        SCENARIO = Scenario(name="cli_broken", title="broken", config_type=Nothing, build_fn=build)
        """
    ))
    assert main(["verify", "cli_scenario:SCENARIO"]) == 2
    assert "building scenario 'cli_broken' raised ValueError: this view cannot be built" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["cli_targets:safe_pair", "cli_targets:safe_dict",
                                    "ts_explore.gallery:cross_wait.broken", "ts_explore.scenarios.persistent:SCENARIO"])
def test_render_accepts_every_target_verify_accepts(targets, target, capsys):
    assert main(["verify", target]) in (0, 1, 4)
    out = targets / "drawn.dot"
    assert main(["render", target, "-o", str(out)]) == 0, capsys.readouterr().err
    assert "digraph" in out.read_text() and "Task " in out.read_text()


def test_callables_can_be_set_from_the_shell(capsys):
    argv = ["verify", "ts_explore.scenarios.persistent:SCENARIO", "--set", "skip=custom",
            "--set", "skip_fn=even tiles", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert main(argv[:-3] + ["--set", "skip_fn=lambda t: t % 3 == 0", "--json"]) == 2
    err = capsys.readouterr().err
    assert "is not one of its named choices" in err and "never run as code" in err and len(err.splitlines()) == 1


def test_emit_survives_a_closed_reader(monkeypatch, tmp_path):
    class Closed:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            return os.open(tmp_path / "sink", os.O_WRONLY | os.O_CREAT)

    monkeypatch.setattr(sys, "stdout", Closed())
    emit("x" * 10)  # does not raise


def test_json_into_head_ends_quietly():
    # ~100 kB of JSON: far more than a pipe holds, so the writer meets the closed pipe
    cmd = (f"{sys.executable} -m ts_explore.cli verify ts_explore.scenarios.persistent:SCENARIO --json | head -1; "
           "exit ${PIPESTATUS[0]}")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=300)
    assert done.stdout.strip() == "{"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0


def test_a_refused_launch_does_not_say_done(capsys):
    """A scenario whose kernel is not built is refused; the progress line says it stopped, not that it finished."""
    from ts_explore.cli import EXIT_REFUSED

    assert main(["launch", "hopper_attention"]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "cannot launch" in err and "stopped after" in err and "done in" not in err


@pytest.mark.parametrize("argv, syntax", [
    (["grid_stride_copy", "--size", "-1"], "it takes int32 elements, a positive whole number, e.g. --size 16777216"),
    (["grid_stride_copy", "--size", "1e6"], "it takes int32 elements"),
    (["hopper_gemm", "--size", "4096"], "it takes a GEMM shape MxNxK, e.g. --size 4096x4096x4096"),
    (["hopper_gemm", "--size", "4096x4096"], "it takes a GEMM shape MxNxK"),
    (["hopper_gemm", "--size", "4096x0x4096"], "it takes a GEMM shape MxNxK"),
    (["hopper_attention", "--size", "4x16x2048x2048"], "it takes an attention shape BxHxSQxSKVxD"),
    (["hopper_gemm", "--size", "4096x4096x4100"], "K=4100 is not a multiple of 8"),  # the kernel's own refusal
    (["grid_stride_copy", "--reps", "0"], "--reps takes a positive number"),
])
def test_a_bad_launch_size_is_a_usage_error_naming_the_syntax(argv, syntax, capsys):
    assert main(["launch", *argv]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("compiling and launching")]
    assert len(err) == 1 and err[0].startswith("ts-explore launch: error: ") and syntax in err[0], err
    assert "sizes=[" not in err[0], "the shell's syntax, not Python's"


@pytest.mark.parametrize("argv, sizes", [
    (["hopper_gemm", "--size", "4096x4096x4096", "--size", "1024X2048x512"], ((4096, 4096, 4096), (1024, 2048, 512))),
    (["hopper_attention", "--size", "4x16x2048x2048x128"], ((4, 16, 2048, 2048, 128),)),
    (["grid_stride_copy", "--size", "1024", "--size", "4096"], (1024, 4096)),
    (["hopper_gemm"], None),  # the kernel's own default shape
    (["grid_stride_copy"], (1 << 24,)),
])
def test_launch_sizes_take_the_scenarios_own_form(argv, sizes, monkeypatch, capsys):
    import ts_explore.gpu as gpu

    seen = {}

    def fake_launch(scenario, config, *, sizes, reps, force):
        seen["sizes"] = sizes
        raise gpu.LaunchError("no_device", "no CUDA device visible; launches need an NVIDIA GPU")

    monkeypatch.setattr(gpu, "launch", fake_launch)
    assert main(["launch", *argv]) == 3
    assert seen["sizes"] == sizes
    assert "cannot launch: [no_device]" in capsys.readouterr().err


def test_a_launch_without_a_gpu_says_it_needs_one(monkeypatch, capsys):
    import importlib
    from types import SimpleNamespace

    probe_module = importlib.import_module("ts_explore.gpu.probe")
    monkeypatch.setattr(probe_module, "probe", lambda: SimpleNamespace(
        ok=False, reason="no_device", message="no CUDA device visible", limits=None))
    assert main(["launch", "hopper_gemm", "--size", "4096x4096x4096"]) == 3
    err = capsys.readouterr().err
    assert "cannot launch" in err and "GPU" in err
