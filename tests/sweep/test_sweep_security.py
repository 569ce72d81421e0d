"""The local sweep cluster is reachable by its owner only: TLS with a certificate made for it, everything on
127.0.0.1 (the dashboard too); a process that connects without that certificate runs nothing on it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import psutil
import pytest


def test_scheduler_workers_and_dashboard_listen_on_localhost_over_tls(client: Any) -> None:
    assert client.scheduler.address.startswith("tls://127.0.0.1:")
    workers = client.scheduler_info()["workers"]
    assert workers and all(address.startswith("tls://127.0.0.1:") for address in workers)
    dashboard = urlparse(client.cluster.dashboard_link)
    assert dashboard.hostname == "127.0.0.1"
    listening = {c.laddr.port: c.laddr.ip for c in psutil.Process().net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN}
    assert listening.get(dashboard.port) == "127.0.0.1"  # the socket itself, not only the link
    assert listening.get(int(client.scheduler.address.rsplit(":", 1)[1])) == "127.0.0.1"


def test_a_process_without_the_clusters_certificate_cannot_connect(client: Any) -> None:
    from distributed import Client
    from distributed.security import Security

    address = client.scheduler.address
    with pytest.raises(OSError):  # plain TCP: the scheduler speaks TLS only
        Client(address.replace("tls://", "tcp://"), timeout="5s")
    with pytest.raises(OSError, match="certificate"):  # TLS, with a certificate of its own
        Client(address, security=Security.temporary(), timeout="5s")
    assert client.submit(sum, [1, 2]).result(timeout=30) == 3  # the owner still can
