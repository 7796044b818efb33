"""The service's events door on a line nested too deep (issue 36, item 9): that line is the
answer's problem and the other lines are stored, never a 500. A real ``failcode serve``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from failcode import FC
from failcode.events import failure_event
from tests.service.conftest import running

if TYPE_CHECKING:
    from pathlib import Path


def test_a_line_nested_too_deep_is_that_lines_problem_at_the_door(tmp_path: Path) -> None:
    """A body whose second and third lines nest JSON 5,000 levels deep: 200, two events
    stored, one FC-STORE-008 problem naming each deep line."""
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    good = [failure_event(failure, event="command.failed", session="s", step=i)
            for i in range(2)]
    deep = [b'{"a": ' * 5000 + b"1" + b"}" * 5000,  # no event at all
            b'{"version": 1, "event": "x", "params": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001]
    body = b"\n".join([good[0].to_json(), *deep, good[1].to_json()]) + b"\n"
    with running("sqlite", tmp_path) as service:
        status, _headers, raw = service.request(
            "POST", "/v1/events", key=service.keys["ingest"], body=body,
            headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, raw[:500]
    answer = json.loads(raw)
    assert (answer["received"], answer["new"], answer["rejected"]) == (4, 2, 2)
    assert [problem["code"] for problem in answer["problems"]] == ["FC-STORE-008"] * 2
    assert [problem["message"].split(" of ")[0] for problem in answer["problems"]] == [
        "Line 2", "Line 3"]
