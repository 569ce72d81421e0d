"""pytest at the project root: without torch, the modules of ts_explore.ops that register torch custom ops
(and so import torch) are left out of ``--doctest-modules`` collection; with torch they are collected."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("torch") else [
    "ts_explore/ops/gemm_op.py", "ts_explore/ops/attention_op.py", "ts_explore/ops/routing.py"]
