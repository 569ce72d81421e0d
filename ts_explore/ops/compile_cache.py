"""A compile cache on disk for the ops' kernels: one object file per (DSL version, kernel code, config, arch).

Compiling a TS kernel (tracing the scenario's build, lowering, ptxas) takes
seconds; loading an object file the DSL exported takes milliseconds. So a
process that calls a config another process already compiled loads it
instead: :meth:`DiskCache.function` looks the key up under
``<cache root>/kernels/`` and compiles (then exports) only on a miss.

The key is a digest of everything that changes the binary:

* the DSL's version (``nvidia-cutlass-dsl``; TS ships inside it),
* the kernel's code: the source of every module of ``ts_explore.kernels``,
  ``ts_explore.scenarios`` and ``ts_explore.model`` (the build traced into the
  kernel reads all three), hashed once per process,
* the config (its ``repr``: the configs are frozen dataclasses of enums and ints),
* the target architecture and the compile options.

A change to any of them gives another file name, so a stale binary is never
loaded; old files stay until the user deletes the folder. Files are written to
a temporary name and renamed into place, so two processes compiling the same
key at once never load a half-written file.

Beside the object file the cache links a shared library (the system's ``cc``
against the DSL's runtime and libtvm_ffi), which TVM-FFI loads without
importing the DSL at all: importing ``cutlass`` takes about 3 s on an H200
machine, so a process that only loads cached kernels starts without it. Where
no C compiler is found the object file is loaded through the DSL instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

PACKAGE = Path(__file__).resolve().parent.parent  # the ts_explore package folder
KERNEL_CODE = ("kernels", "scenarios", "model")  # what the traced build reads
PROOF_CODE = KERNEL_CODE + ("reader", "check", "verification", "analysis")  # ... and what proves it
# How a compiled function is called (torch tensors in, the stream from TVM-FFI's environment): part of every
# cache key and launch record, so a binary of another calling convention is never loaded.
CALLING = "tensors, env stream"


def cache_root() -> Path:
    """The user's ts-explore cache folder: the rule of :func:`ts_explore.gpu.user_cache.cache_root`, restated here
    because importing :mod:`ts_explore.gpu` imports the DSL, which a cached start avoids (a test keeps them equal)."""
    if os.environ.get("TS_EXPLORE_CACHE_DIR"):
        return Path(os.environ["TS_EXPLORE_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ts-explore"


def source_digest(folders: Iterable[str], root: Path = PACKAGE) -> str:
    """sha256 over the path and text of every ``.py`` file under ``root/folder`` for each folder, in order."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def code_digest(folders: tuple[str, ...] = KERNEL_CODE) -> str:
    """:func:`source_digest` of this installation's ``folders``, computed once per process."""
    return source_digest(folders)


@functools.lru_cache(maxsize=1)
def dsl_version() -> str:
    """The installed DSL's version (``nvidia-cutlass-dsl``), or ``unknown`` when its metadata is missing."""
    from importlib import metadata

    try:
        return metadata.version("nvidia-cutlass-dsl")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class CacheKey:
    """What one compiled binary depends on; :attr:`digest` names its file."""

    kernel: str  # e.g. "gemm", "attention"
    config: str  # repr of the concrete config
    arch: str  # e.g. "sm_90a"
    dsl: str  # DSL version
    code: str  # digest of the kernel's source
    options: str = ""  # compile options beyond the arch

    @classmethod
    def of(cls, kernel: str, config: Any, arch: str, options: str = "") -> CacheKey:
        """The key of ``config``'s ``kernel`` for ``arch`` in this installation."""
        return cls(kernel=kernel, config=repr(config), arch=arch, dsl=dsl_version(), code=code_digest(),
                   options=options)

    @property
    def digest(self) -> str:
        text = "\n".join((self.kernel, self.config, self.arch, self.dsl, self.code, self.options))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def symbol(self) -> str:
        """The exported function's name (unique per key, a valid C identifier)."""
        return f"ts_{self.kernel}_{self.digest}"


@dataclass
class Loaded:
    """A function from the cache, and how it got there."""

    function: Any
    hit: bool  # loaded from disk (True) or compiled now (False)
    seconds: float  # compile + export + load, or load alone
    path: Path


class DiskCache:
    """Object files of compiled kernels under ``root`` (default ``<cache root>/kernels``), loaded once per process.

    ``load(path, symbol)`` and ``export(compiled, path, symbol)`` are the DSL's
    (``cute.runtime.load_module``, ``export_to_c``) unless a test passes others.
    """

    def __init__(self, root: Path | None = None, *, load: Callable[[Path, str], Any] | None = None,
                 export: Callable[[Any, Path, str], None] | None = None) -> None:
        self._root = root
        self._load = load or _dsl_load
        self._export = export or _dsl_export
        self._loaded: dict[str, Loaded] = {}
        self.compiles = 0  # compiles this cache ran (for tests and reports)

    @property
    def root(self) -> Path:
        """The folder (``TS_EXPLORE_CACHE_DIR`` is read at use, so tests may point it elsewhere)."""
        return self._root if self._root is not None else cache_root() / "kernels"

    def path(self, key: CacheKey) -> Path:
        return self.root / f"{key.symbol}.o"

    def function(self, key: CacheKey, compile: Callable[[], Any]) -> Loaded:
        """The function of ``key``: from this process, else from disk, else ``compile()`` d, exported and loaded."""
        found = self._loaded.get(key.digest)
        if found is not None:
            return found
        path = self.path(key)
        start = time.perf_counter()
        hit = path.exists()
        if not hit:
            compiled = compile()
            self.compiles += 1
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key.symbol}.", suffix=".o", dir=path.parent)
            os.close(fd)
            try:
                self._export(compiled, Path(tmp), key.symbol)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        loaded = Loaded(self._load(path, key.symbol), hit, time.perf_counter() - start, path)
        self._loaded[key.digest] = loaded
        return loaded


def shared_library(path: Path) -> Path:
    """Where the shared library linked from object file ``path`` is kept."""
    return path.with_suffix(".so")


def link_command(obj: Path, out: Path) -> list[str] | None:
    """The ``cc`` command linking ``obj`` into the shared library ``out`` (None when no C compiler is found)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    import tvm_ffi
    from cutlass.cute.export.aot_config import get_libdir

    runtime, ffi = get_libdir(), os.path.dirname(tvm_ffi.libinfo.find_libtvm_ffi())
    return [compiler, "-shared", "-o", str(out), str(obj), f"-L{runtime}", f"-L{ffi}", "-lcute_dsl_runtime",
            "-ltvm_ffi", f"-Wl,-rpath,{runtime}", f"-Wl,-rpath,{ffi}"]


def _dsl_export(compiled: Any, path: Path, symbol: str) -> None:
    """Export ``compiled`` to object file ``path`` and, where a C compiler is found, link the shared library."""
    compiled.export_to_c(str(path), function_name=symbol)
    command = link_command(path, path.with_suffix(".so.tmp"))
    if command is None:
        return
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode == 0:
        os.replace(path.with_suffix(".so.tmp"), shared_library(path.parent / f"{symbol}.o"))
    elif os.path.exists(path.with_suffix(".so.tmp")):
        os.unlink(path.with_suffix(".so.tmp"))


_MODULES: dict[str, Any] = {}  # loaded shared libraries, kept alive while their functions are in use


def load_shared(path: Path, symbol: str) -> Any:
    """The TVM-FFI function ``symbol`` of shared library ``path`` (no DSL import)."""
    import tvm_ffi

    module = _MODULES.get(str(path))
    if module is None:
        module = _MODULES[str(path)] = tvm_ffi.load_module(str(path))
    return module[symbol]


def _dsl_load(path: Path, symbol: str) -> Any:
    if shared_library(path).exists():
        return load_shared(shared_library(path), symbol)
    import cutlass.cute as cute

    return cute.runtime.load_module(str(path), enable_tvm_ffi=True)[symbol]


__all__ = ["CALLING", "CacheKey", "DiskCache", "KERNEL_CODE", "Loaded", "PROOF_CODE", "cache_root", "code_digest",
           "dsl_version", "link_command", "load_shared", "shared_library", "source_digest"]
