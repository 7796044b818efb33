"""``failcode webhook add`` refuses what the service refuses: a receiver on a loopback,
link-local or private address, unless ``FAILCODE_WEBHOOK_ALLOW`` names its network; the
refusal is one clear line naming the URL and why, never a traceback, and nothing is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.service.conftest import failcode

if TYPE_CHECKING:
    from pathlib import Path


def _add(url: str, store: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failcode", "webhook", "add", url, "--project", "web",
         "--on", "new_finding", "--store", store],
        capture_output=True, text=True, timeout=120, check=False,
        env={**{k: v for k, v in os.environ.items() if k != "FAILCODE_WEBHOOK_ALLOW"}, **env})


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://169.254.169.254/latest",
                                 "https://10.1.2.3/alerts"])
def test_an_internal_receiver_is_refused_unless_allowed(url: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'control.db'}"
    failcode("project", "create", "web", store=store)
    refused = _add(url, store)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    host = url.split("/")[2].split(":", maxsplit=1)[0]
    assert host in refused.stderr, refused.stderr
    assert failcode("webhook", "list", "--project", "web", store=store) == (
        "(nothing stored matches)")
    network = {"127.0.0.1": "127.0.0.1/32", "169.254.169.254": "169.254.0.0/16",
               "10.1.2.3": "10.0.0.0/8"}[host]
    allowed = _add(url, store, FAILCODE_WEBHOOK_ALLOW=network)
    assert allowed.returncode == 0, allowed.stderr
    assert host in failcode("webhook", "list", "--project", "web", store=store)
