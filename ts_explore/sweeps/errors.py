"""The one error a sweep raises when it cannot start or finish, with the fix in its message."""

from __future__ import annotations


class SweepError(RuntimeError):
    """A sweep that cannot start (missing packages, no GPU for a launch sweep, a bad grid); names the fix.

    ``worker_error`` holds what a worker process printed when it could not
    start (None otherwise).
    """

    def __init__(self, message: str, worker_error: str | None = None) -> None:
        super().__init__(message)
        self.worker_error = worker_error


__all__ = ["SweepError"]
