"""The one exception every launch refusal or failure raises."""

from __future__ import annotations


class LaunchError(RuntimeError):
    """A launch that was refused or did not complete; ``reason`` is a stable slug.

    Reasons: ``no_kernel``, ``bad_config``, ``unverified``, ``no_cuda_python``,
    ``no_driver``, ``no_device``, ``needs_sm100``, ``bad_size``, ``unpicklable``, ``repair_not_launchable``,
    ``compile_failed``, ``launch_failed``, ``timeout``, ``worker_died``, ``script_guard`` (raised in a
    worker that re-runs an unguarded script). The message names the cause
    and the fix; the notebook (and the launcher) stay usable afterwards.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __str__(self) -> str:
        return f"[{self.reason}] {self.args[0]}"


# Reasons that mean this machine cannot launch at all (no CUDA Python, driver or device): a script
# that measures kernels stops at the first one instead of filling a table with nothing.
NO_GPU = frozenset({"no_cuda_python", "no_driver", "no_device"})


__all__ = ["LaunchError", "NO_GPU"]
