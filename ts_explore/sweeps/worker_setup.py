"""Preloaded by every worker process of a local sweep cluster (``distributed.worker.preload``).

Ctrl-C in a terminal reaches every process of the foreground job, the
cluster's workers included; the client alone handles it (it stops the sweep
and closes the cluster). A worker that is started again after a crash does
not inherit the ignored SIGINT the first ones got at start, so each worker
ignores it here, and none prints a KeyboardInterrupt traceback.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def ignore_ctrl_c() -> bool:
    """Ignore SIGINT in this process; False where that cannot be set (not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return True


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, called as the worker starts."""
    ignore_ctrl_c()


__all__ = ["dask_setup", "ignore_ctrl_c"]
