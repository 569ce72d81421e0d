"""A local cluster whose workers start slowly ("Nanny failed to start" on a busy machine) does not fail a
sweep: it is started again with longer timeouts, and when the last attempt fails too the error says why and
what to do. The failure is simulated: no worker process starts here."""

from __future__ import annotations

import copy
import logging
from typing import Any

import dask
import distributed
import pytest

from ts_explore.sweeps import cluster
from ts_explore.sweeps.cluster import START_TIMEOUTS_S, SweepError, start_cluster


class SlowCluster:
    """Stands in for ``LocalCluster``: fails like a nanny that did not start within its timeout ``fails`` times."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.attempts: list[tuple[float, Any]] = []  # (connect timeout in the config, death_timeout given)

    def __call__(self, **kwargs: Any) -> "SlowCluster":
        connect = dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))
        self.attempts.append((connect, kwargs.get("death_timeout")))
        if len(self.attempts) <= self.fails:
            raise RuntimeError("Nanny failed to start.")
        return self


@pytest.fixture()
def slow(monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(fails: int) -> SlowCluster:
        fake = SlowCluster(fails)
        monkeypatch.setattr(distributed, "LocalCluster", fake)
        monkeypatch.setattr(distributed, "Client", lambda c, **kwargs: ("client of", c))
        return fake

    return make


def test_a_slow_start_is_retried_with_longer_timeouts(slow: Any, caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # a cluster started earlier in this process may have reconfigured logging and disabled existing loggers
    monkeypatch.setattr(logging.getLogger(cluster.__name__), "disabled", False)
    caplog.set_level(logging.WARNING, logger=cluster.__name__)
    fake = slow(fails=len(START_TIMEOUTS_S) - 1)
    assert start_cluster(workers=2) == ("client of", fake)
    assert fake.attempts == [(t, t) for t in START_TIMEOUTS_S], "each attempt allows workers longer to start"
    assert "starting it again" in caplog.text and "Nanny failed to start" in caplog.text


def test_a_cluster_that_never_starts_says_why_and_what_to_do(slow: Any) -> None:
    fake = slow(fails=len(START_TIMEOUTS_S))
    with pytest.raises(SweepError) as err:
        start_cluster(workers=2)
    assert len(fake.attempts) == len(START_TIMEOUTS_S)
    text = str(err.value)
    assert "did not start in 3 attempts" in text and "Nanny failed to start" in text
    assert "workers=1" in text and "client=" in text
    assert isinstance(err.value.__cause__, RuntimeError)


def test_no_gpu_for_a_launch_sweep_is_not_retried(monkeypatch: pytest.MonkeyPatch, slow: Any) -> None:
    fake = slow(fails=0)
    calls = []

    def no_gpu() -> int:
        calls.append(1)
        raise SweepError("launch=True needs a CUDA GPU")

    monkeypatch.setattr(cluster, "visible_gpus", no_gpu)
    saved = copy.deepcopy(dask.config.config)  # a launch cluster sets worker.daemon for the process: undo it
    try:
        with pytest.raises(SweepError, match="needs a CUDA GPU"):
            start_cluster(launch=True)
    finally:
        dask.config.config.clear()
        dask.config.config.update(saved)
    assert calls == [1] and fake.attempts == []
