"""The service tests' own harness: a port taken between choosing it and binding it.

:func:`free_port` answers a port free *now*; another process (a parallel test, an agent's
outgoing connection) may take it before ``failcode serve`` binds it. :meth:`Served.start`
then starts again on a new port instead of failing the test.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from tests.service.conftest import fresh_url, make_served

if TYPE_CHECKING:
    from pathlib import Path


def test_a_port_taken_before_the_bind_is_replaced(tmp_path: Path) -> None:
    for store in fresh_url("sqlite", tmp_path):
        served = make_served(store, tmp_path)
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", served.port))
            taken.listen()
            served.start()
            try:
                assert served.port != taken.getsockname()[1]
                status, _headers, _body = served.request("GET", "/healthz")
                assert status == 200
                assert b"address already in use" in served.log.read_bytes()
            finally:
                served.stop()
