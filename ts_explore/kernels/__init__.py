"""TS kernels of the scenario catalog, one module per family.

Each module holds the DSL resources a scenario builds (real work bodies) and a
``compile_copy(cfg, on_built=None)`` that traces the scenario's own build
function inside ``@cute.kernel`` and compiles it, so the launched schedule is
the recorded one. Compiling needs no GPU (``CUTE_DSL_ARCH=sm_90a``).

The GEMM (``gemm``) receives the scenario object instead: ``compile(scenario,
cfg, *, arch=None, on_built=None)``, with its shared pieces in ``gemm_geometry``
(pure arithmetic) and one module per technique (see :mod:`.gemm`).
"""
