"""One small local Dask cluster (2 single-threaded worker processes) per test process, closed at the end,
and a private results cache per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed", reason="sweeps need Dask: pip install 'ts-explore[sweep]'")
pytest.importorskip("pandas", reason="sweeps need pandas: pip install 'ts-explore[sweep]'")


@pytest.fixture(scope="session")
def client() -> Iterator[Any]:
    import cloudpickle

    import sweep_scenarios
    from ts_explore.sweeps import start_cluster

    cloudpickle.register_pickle_by_value(sweep_scenarios)
    c = start_cluster(workers=2)
    try:
        yield c
    finally:
        cluster = c.cluster
        c.close()
        cluster.close()


@pytest.fixture()
def scheduler(client: Any) -> Iterator[str]:
    """The test cluster's scheduler address, its TLS credentials in the Dask configuration (as `--scheduler` reads them)."""
    import dask

    sec = client.security
    with dask.config.set({"distributed.comm.tls.ca-file": sec.tls_ca_file,
                          "distributed.comm.tls.client.cert": sec.tls_client_cert,
                          "distributed.comm.tls.client.key": sec.tls_client_key,
                          "distributed.comm.require-encryption": True}):
        yield client.scheduler.address


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TS_EXPLORE_CACHE_DIR", str(folder))
    return folder
