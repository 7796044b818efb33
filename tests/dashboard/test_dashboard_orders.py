"""The dashboard's orders, against values known by construction over more than one page.

A real ``failcode serve`` on both backends (plain HTTP, no browser) holds 60 sessions, the
``n``-th with ``n`` failures of its own missing program (run here by ``sh``), so ``n`` is also
that program's finding's count and no two rows tie. The sessions page (most failures first)
and the findings page (``sort=count``, most failures first) must list exactly the order the
construction gives, page 1 (50 rows) and page 2 (``offset=50``) alike: a check of a property
of the rows shown (each row not above the one before) holds for a reversed or unsorted list
when all rows are equal, and one page hides an order broken between pages.
"""

from __future__ import annotations

import re
import string
import subprocess
from typing import TYPE_CHECKING

import pytest

from failcode import Failure, from_command
from failcode.events import failure_event
from failcode.service._pages import PAGE
from tests.conftest import BACKENDS
from tests.dashboard.test_dashboard_inputs import raw, sign_in
from tests.service.conftest import running

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.service.conftest import Served

SESSIONS = PAGE + 10


def _name(n: int) -> str:
    """A program name per ``n`` in letters only (a signature ignores digits)."""
    letters = string.ascii_lowercase
    return f"failcode-order-{letters[n // 26]}{letters[n % 26]}"


@pytest.fixture(scope="module", params=BACKENDS)
def seeded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[tuple[Served, dict[str, int]]]:
    """The service, and each session's failures (= its program's finding's count)."""
    tmp = tmp_path_factory.mktemp(f"orders-{request.param}")
    with running(request.param, tmp, extra=("--rate", "1000000")) as served:
        expected: dict[str, int] = {}
        lines = []
        for n in range(1, SESSIONS + 1):
            argv = ["sh", "-c", _name(n)]
            done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, check=False)
            failure = from_command(argv, done.returncode, done.stdout, done.stderr)
            assert isinstance(failure, Failure)
            session = f"order-{_name(n)}"
            expected[session] = n
            lines += [failure_event(failure, event="command.failed", session=session).to_json()
                      for _ in range(n)]
        status, _headers, answer = served.request(
            "POST", "/v1/events", key=served.keys["ingest"], body=b"\n".join(lines) + b"\n",
            headers={"Content-Type": "application/x-ndjson"})
        assert status == 200, answer
        yield served, expected


def _pages(served: Served, path: str, pattern: str) -> list[tuple[str, int]]:
    """(name, failures) of every row of page 1 and page 2 of ``path``."""
    cookie, _csrf = sign_in(served, "read")
    found = []
    for offset in (0, PAGE):
        status, _headers, page = raw(served, "GET", f"{path}offset={offset}",
                                     headers={"Cookie": cookie})
        assert status == 200, page[-2000:]
        found += [(name, int(count)) for name, count in re.findall(pattern, page, re.DOTALL)]
    return found


def test_sessions_are_listed_most_failures_first_across_pages(
        seeded: tuple[Served, dict[str, int]]) -> None:
    served, expected = seeded
    shown = _pages(served, "/ui/sessions?",
                   r'<tr data-failures="(?:\d+)"><td><a href="[^"]*">([^<]+)</a>.*?'
                   r'<td class="n">(\d+)</td>')
    assert shown == sorted(expected.items(), key=lambda item: -item[1])


def test_findings_by_count_are_listed_most_failures_first_across_pages(
        seeded: tuple[Served, dict[str, int]]) -> None:
    served, expected = seeded
    cookie, _csrf = sign_in(served, "read")
    programs = [_name(n) for n in sorted(expected.values(), reverse=True)]
    listed = []
    for offset in (0, PAGE):
        status, _headers, page = raw(served, "GET", f"/ui/?sort=count&offset={offset}",
                                     headers={"Cookie": cookie})
        assert status == 200, page[-2000:]
        listed += re.findall(r"failcode-order-[a-z]{2}", page)
    shown = list(dict.fromkeys(listed))  # each finding's first mention, in page order
    assert shown == programs
