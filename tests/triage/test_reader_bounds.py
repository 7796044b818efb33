"""Readers at the edges of their input: exit statuses out of range, and the last record.

Exit statuses (``failcode.triage.readers._text``'s rules, the same in every reader): a status
is read from a JSON integer or from the digits of the format's own text; one outside -2**31..2**32-1
is the input's FC-DATA-003 naming where it is (the line, or the JSON path in a document) and
the value, never a crash and never a status passed on (``from_command`` would fold it into 32
bits: ``2**32`` would read as exit 0); a float, a bool or a string where the format writes an
integer is no status at all. Each case is a real session of the lab or the shared data with
its failing step's status changed (Copilot CLI: a file built from the documented shapes, as
``test_copilot`` does), and the formats that record no status (aider, SWE-agent) and
failcode's own events (a failure taken as it was recorded) show the number is never read.

The last record: a file cut to end exactly after the record that completes its last failing
step (a line, or a document whose array ends with that item), with and without a line break
after it, still gives that step's failure, and the same failures as when anything follows it.
"""

from __future__ import annotations

import json
import re
import shutil
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from failcode import Failure, from_command
from failcode.events import failure_event
from failcode.store import open_store
from failcode.triage import triage
from failcode.triage._record import record
from tests._paths import REPO
from tests.lab.runner import FIXTURES as LAB
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from failcode.triage import TriageResult

BUNDLED = REPO / "src" / "failcode" / "triage" / "data"
EXIT_MIN, EXIT_MAX = -(2**31), 2**32 - 1


def _lab(agent: str, scenario: str = "pytest-failure") -> Path:
    """The one session file (or OpenHands conversation folder) of a lab run."""
    session = LAB / agent / scenario / "session"
    if agent == "openhands":
        return next(session.rglob("base_state.json")).parent
    return next(p for p in sorted(session.rglob("*")) if p.is_file())


def _shared(name: str) -> Path:
    return sessions_dir() / name


def _copy(source: Path, folder: Path) -> Path:
    """``source`` (a file or a conversation folder) copied into ``folder``, same name."""
    target = folder / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return target


def _substitute(path: Path, pattern: str, value: str, *, count: int = 0) -> None:
    """Put ``value`` in place of group 1 of ``pattern`` (every match, or the first
    ``count``), in ``path`` or every event file of a conversation folder."""
    files = sorted((path / "events").glob("event-*.json")) if path.is_dir() else [path]
    found = 0
    for file in files:
        text = file.read_text(encoding="utf-8")
        left = count - found if count else 0
        new, hits = re.subn(pattern, lambda m: m.group(0).replace(m.group(1), value, 1), text,
                            count=left)
        if hits:
            file.write_text(new, encoding="utf-8")
            found += hits
        if count and found >= count:
            break
    assert found, f"{pattern!r} is not in {path}"


# -- Copilot CLI, built from the documented shapes (no real session exists) ------------------
def _copilot_events(result: dict[str, Any], *, zone: str = "Z") -> list[dict[str, Any]]:
    def event(number: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "data": data, "id": f"ev-{number}",
                "timestamp": f"2026-08-05T20:40:{number:02d}.000{zone}",
                "parentId": f"ev-{number - 1}" if number > 1 else None}

    args = {"command": "pytest -q", "description": "run the tests"}
    return [
        event(1, "session.start", {"sessionId": "0c4f1d2e-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
                                   "version": 1, "producer": "copilot-agent",
                                   "copilotVersion": "1.0.78"}),
        event(2, "user.message", {"content": "make the tests pass", "attachments": []}),
        event(3, "assistant.message", {"messageId": "m-1", "content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "bash", "arguments": args, "type": "function"}]}),
        event(4, "tool.execution_start", {"toolCallId": "c1", "toolName": "bash",
                                          "arguments": args}),
        event(5, "tool.execution_complete", {"toolCallId": "c1", "success": True,
                                             "result": result}),
        event(6, "assistant.message", {"messageId": "m-2", "content": "The test fails.",
                                       "toolRequests": []}),
    ]


_PYTEST_OUTPUT = "FAILED tests/test_app.py::test_add - assert 1 == 2\n1 failed in 0.1s\n"


def _copilot_file(folder: Path, result: dict[str, Any]) -> Path:
    path = folder / "0c4f1d2e-5a6b-4c7d-8e9f-0a1b2c3d4e5f" / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in _copilot_events(result)))
    return path


def _copilot_text(folder: Path, value: str) -> Path:
    text = f"{_PYTEST_OUTPUT}<exited with exit code {value}>"
    return _copilot_file(folder, {"content": text, "detailedContent": text})


def _copilot_json(folder: Path, value: str) -> Path:
    path = _copilot_file(folder, {"content": _PYTEST_OUTPUT, "contents": [
        {"type": "shell_exit", "exitCode": "@@", "text": _PYTEST_OUTPUT}]})
    path.write_text(path.read_text().replace('"@@"', value))
    return path


# -- mini-swe-agent 1.x (text actions, the <returncode> tag), as test_reader_versions builds --
def _mini_text(folder: Path, value: str) -> Path:
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": "Fix the test."},
                {"role": "assistant", "content": "THOUGHT: run it\n\n```bash\npytest -q\n```"},
                {"role": "user", "content": f"<returncode>{value}</returncode>\n<output>\n"
                                            f"{_PYTEST_OUTPUT}</output>"}]
    path = folder / "i.traj.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"info": {"mini_version": "1.9.0", "exit_status": "Submitted"},
                                "messages": messages,
                                "trajectory_format": "mini-swe-agent-1"}, indent=2))
    return path


def _from(source: Callable[[], Path], pattern: str, *, count: int = 0,
          ) -> Callable[[Path, str], Path]:
    """A builder: a copy of a real session with ``pattern``'s group 1 set to the value."""
    def build(folder: Path, value: str) -> Path:
        path = _copy(source(), folder)
        _substitute(path, pattern, value, count=count)
        return path
    return build


def _codex_text(folder: Path, value: str) -> Path:
    """The lab's Codex run with the executor's record of the status taken out (its
    ``exit_code`` null), so that the ``Process exited with code N`` text is the status."""
    path = _from(lambda: _lab("codex"), r"Process exited with code (1)\\n")(folder, value)
    _substitute(path, r'"exit_code":(1)\b', "null")
    return path


_OUTPUT_JSONL = "openhands/multi_swe_bench_examples/output.jsonl"
_COMPLETIONS = ("openhands/swebench_verified_claude35_run1/llm_completions/django__django-11087/"
                "litellm_proxy__claude-3-5-sonnet-20241022-1733345045.476485.json")

# (format, where the status is, JSON value or text digits, builder, how the error names it)
SITES: dict[str, tuple[str, bool, Callable[[Path, str], Path], str]] = {
    "claude-code Exit code N": (
        "claude-code", False, _from(lambda: _lab("claude-code"), r"Exit code (1)\\n"),
        r"^line 34: "),
    "codex item_completed exit_code": (
        "codex", True, _from(lambda: _lab("codex"), r'"exit_code":(1)\b'), r"^line \d+: "),
    "codex Process exited with code N": ("codex", False, _codex_text, r"^line \d+: "),
    "copilot-cli shell_exit exitCode": ("copilot-cli", True, _copilot_json, r"^line 5: "),
    "copilot-cli <exited with exit code N>": ("copilot-cli", False, _copilot_text,
                                              r"^line 5: "),
    "gemini-cli Exit Code: N": (
        "gemini-cli", False, _from(lambda: _lab("gemini-cli"), r"Exit Code: (1)\\n"),
        r"^line \d+: "),
    "mini-swe-agent extra.returncode": (
        "mini-swe-agent", True,
        _from(lambda: _lab("mini-swe-agent"), r'\n {8}"returncode": (1),'),
        r"^messages\[\d+\]: "),
    "mini-swe-agent <returncode>": ("mini-swe-agent", False, _mini_text, r"^messages\[3\]: "),
    "openhands V1 exit_code": (
        "openhands", True, _from(lambda: _lab("openhands"), r'"exit_code":(1)\b'),
        r"^item \[\d+\]: "),
    "openhands v0 metadata.exit_code": (
        "openhands", True,
        _from(lambda: _shared("openhands/runtime_trajs/basic_gui_mode.json"),
              r'"exit_code": (0)\b', count=1), r"^item \[\d+\]: "),
    "openhands output.jsonl exit_code": (
        "openhands", True, _from(lambda: _shared(_OUTPUT_JSONL), r'"exit_code":(1)[,}]',
                                 count=1), r"^line \d+, history\[\d+\]: "),
    "openhands [Command finished with exit code N]": (
        "openhands", False, _from(lambda: _shared(_COMPLETIONS),
                                  r"finished with exit code (1)\]", count=1),
        r"^messages\[\d+\]: "),
}
WINDOWED = {"mini-swe-agent <returncode>": 4096,
            "openhands [Command finished with exit code N]": 400}
"""Sites whose reader looks for the status in a bounded part of the text (the first 4 KiB of
an observation, the last 400 characters of a result): a longer number is not seen there."""
JSON_SITES = sorted(name for name, site in SITES.items() if site[1])

# value as written -> how the error quotes it
OUT_OF_RANGE = {"1" + "0" * 30: "~10**30", "-1" + "0" * 30: "-~10**30",
                "4294967296": "4294967296", "-2147483649": "-2147483649"}
HUGE_TEXT = {"9" * 5000: "~10**4999", "-" + "9" * 5000: "-~10**4999"}
HUGE_JSON = {"1" + "0" * 4000: "~10**4000"}
IN_RANGE = ("4294967295", "-2147483648")
NOT_A_STATUS = ("1.5", "true", '"99999999999999999999999"', "1e400", "-1e400")


def _triage(path: Path) -> TriageResult:
    return triage([path])


def _statuses(result: TriageResult) -> list[object]:
    """The exit statuses the failures carry (None where a failure has none)."""
    return [entry.failure.metadata.get("exit_code") for session in result.sessions
            for entry in session.failures]


def _in_range(status: object) -> bool:
    """No status, or an integer status in the range read."""
    return status is None or (type(status) is int and EXIT_MIN <= status <= EXIT_MAX)


def _out_of_range_cases() -> list[tuple[str, str, str]]:
    cases = []
    for name in sorted(SITES):
        huge = HUGE_JSON if SITES[name][1] else {} if name in WINDOWED else HUGE_TEXT
        for value, shown in {**OUT_OF_RANGE, **huge}.items():
            cases.append((name, value, shown))
    return cases


@pytest.mark.parametrize(("site", "value", "shown"), _out_of_range_cases(),
                         ids=lambda v: v if len(v) < 40 else f"{v[:3]}..{len(v)}")
def test_an_exit_status_out_of_range_is_malformed_input(tmp_path: Path, site: str, value: str,
                                                        shown: str) -> None:
    """FC-DATA-003 naming the file, where in it, and the value; no crash, nothing passed on."""
    fmt, _, build, where = SITES[site]
    path = build(tmp_path / "in", value)
    result = _triage(path)
    (item,) = result.inputs
    assert (item.format, item.error_code) == (fmt, "FC-DATA-003"), item.error_message
    message = item.error_message or ""
    assert str(path) in message or path.name in message
    problem = message.split(": ", 1)[1] if ": " in message else message
    assert re.search(where.lstrip("^"), problem), message
    assert f"the exit status is {shown}, not in {EXIT_MIN}..{EXIT_MAX}" in message
    assert all(_in_range(s) for s in _statuses(result))


@pytest.mark.parametrize("site", sorted(WINDOWED))
@pytest.mark.parametrize("value", sorted(HUGE_TEXT))
def test_a_number_longer_than_the_text_read_is_not_a_status(tmp_path: Path, site: str,
                                                            value: str) -> None:
    """Where the reader reads the status from a bounded part of the text, a number too long
    for it is not seen: no crash, and no failure carries it."""
    fmt, _, build, _ = SITES[site]
    result = _triage(build(tmp_path / "in", value))
    assert [(i.format, i.error_code) for i in result.inputs] == [(fmt, None)]
    assert all(_in_range(s) for s in _statuses(result))


@pytest.mark.parametrize("site", sorted(SITES))
@pytest.mark.parametrize("value", IN_RANGE)
def test_an_exit_status_at_the_edge_of_the_range_is_read(tmp_path: Path, site: str,
                                                         value: str) -> None:
    """-2**31 and 2**32-1 (Windows' signed and unsigned 32-bit codes) are statuses."""
    fmt, _, build, _ = SITES[site]
    result = _triage(build(tmp_path / "in", value))
    assert [(i.format, i.error_code) for i in result.inputs] == [(fmt, None)]
    assert int(value) in _statuses(result)


@pytest.mark.parametrize("site", JSON_SITES)
@pytest.mark.parametrize("value", NOT_A_STATUS)
def test_a_status_of_another_type_is_no_status(tmp_path: Path, site: str, value: str) -> None:
    """A float (1e400 is infinite), a bool or a numeric string where the format writes an
    integer is no exit status: the input is read, and no failure carries that value."""
    fmt, _, build, _ = SITES[site]
    result = _triage(build(tmp_path / "in", value))
    assert [(i.format, i.error_code) for i in result.inputs] == [(fmt, None)]
    assert all(_in_range(s) for s in _statuses(result))


def test_a_gemini_signal_out_of_range_is_malformed_input(tmp_path: Path) -> None:
    """Gemini CLI's ``Signal: N`` is the status 128+N: N past 2**32-1-128 is FC-DATA-003."""
    build = _from(lambda: _lab("gemini-cli"), r"(Exit Code: 1)\\n")
    bad = _triage(build(tmp_path / "bad", "Signal: " + "1" + "0" * 30))
    assert [i.error_code for i in bad.inputs] == ["FC-DATA-003"]
    message = bad.inputs[0].error_message or ""
    assert f"the signal is ~10**30, not in 0..{EXIT_MAX - 128}" in message
    good = _triage(build(tmp_path / "good", "Signal: 9"))
    assert [i.error_code for i in good.inputs] == [None]
    assert 137 in _statuses(good)


@pytest.mark.parametrize("fmt", ["aider", "swe-agent"])
def test_formats_without_exit_status_never_read_a_number_as_one(tmp_path: Path,
                                                                fmt: str) -> None:
    """Aider and SWE-agent record no status: a huge ``exit code`` in the output is output (the
    failure is exit 1, from what the output shows)."""
    huge = "1" + "0" * 30
    if fmt == "aider":
        path = tmp_path / ".aider.chat.history.md"
        path.write_text(
            "\n# aider chat started at 2025-03-01 10:00:00\n\n#### /run python app.py  \n\n"
            f"> - exit code: {huge}  \n> Traceback (most recent call last):  \n"
            ">   File \"app.py\", line 1, in <module>  \n"
            "> ModuleNotFoundError: No module named 'flask'  \n")
    else:
        path = tmp_path / "i.traj"
        path.write_text(json.dumps({"trajectory": [{
            "action": "python app.py", "thought": "", "response": "", "state": {},
            "observation": f"exit code {huge}\nTraceback (most recent call last):\n"
                           "  File \"app.py\", line 1, in <module>\n"
                           "ModuleNotFoundError: No module named 'flask'\n"}],
            "history": [], "info": {"exit_status": "submitted"}}))
    result = _triage(path)
    assert [(i.format, i.error_code) for i in result.inputs] == [(fmt, None)]
    assert [e.step for s in result.sessions for e in s.failures] == [0]
    assert all(s in (None, 1) for s in _statuses(result))


def test_failcode_events_never_take_a_status_out_of_range(tmp_path: Path) -> None:
    """failcode's own events carry failures classified when they happened; the event decoder
    refuses a failure whose status does not fit 64 bits (that line's FC-STORE-008, every
    other line read), and the reader reads no status itself."""
    failure = from_command("pytest -q", 1, _PYTEST_OUTPUT)
    assert isinstance(failure, Failure)
    lines = [msgspec.json.encode(failure_event(failure, event="command.failed", session="s",
                                               step=step)) for step in (0, 1)]
    assert b'"exit_code":1' in lines[1]
    lines[1] = lines[1].replace(b'"exit_code":1', b'"exit_code":1' + b"0" * 30)
    path = tmp_path / "run.events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = _triage(path)
    assert [(i.format, i.error_code) for i in result.inputs] == [("failcode-events",
                                                                  "FC-STORE-008")]
    assert "Line 2 of" in (result.inputs[0].error_message or "")
    assert [(e.step, e.failure.metadata.get("exit_code")) for s in result.sessions
            for e in s.failures] == [(0, 1)]


# -- other numbers the readers take from an input ------------------------------------------
@pytest.mark.parametrize("value", ["1e400", "-1e400", "1" + "0" * 30, "true", "NaN", '"x"'])
def test_a_step_time_out_of_range_is_no_time(tmp_path: Path, value: str) -> None:
    """mini-swe-agent 2.x's ``extra.timestamp`` that is no finite time in the years 1..9999 is
    none: the step has no time, and recording it in a store works."""
    path = _from(lambda: _lab("mini-swe-agent"), r'"timestamp": (1767225600)')(
        tmp_path / "in", value)
    result = _triage(path)
    assert [i.error_code for i in result.inputs] == [None]
    assert [e.timestamp for s in result.sessions for e in s.failures] == [None]
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        assert record(result, store) == (sum(
            len(s.failures) + len(s.outcomes) for s in result.sessions), 0)
    finally:
        store.close()


_CLAUDE_RETRY = {"type": "system", "subtype": "api_error", "level": "error",
                 "error": {"status": "@@", "message": "Overloaded"}, "retryAttempt": 1,
                 "sessionId": "00000000-0000-4000-8000-000000000001",
                 "timestamp": "2026-01-01T00:00:09.000Z"}


@pytest.mark.parametrize(("value", "read"), [("1" + "0" * 30, False), ("99", False),
                                             ("true", False), ("529.0", False), ("503", True)])
def test_an_http_status_out_of_range_is_no_status(tmp_path: Path, value: str,
                                                  read: bool) -> None:
    """A provider error's HTTP status that is no integer in 100..599 is left out of what the
    error says (Claude Code's ``api_error`` retry record); the error is still a provider
    error. 503 is read."""
    path = _copy(_lab("claude-code"), tmp_path)
    line = json.dumps(_CLAUDE_RETRY).replace('"@@"', value)
    path.write_text(path.read_text() + line + "\n")
    result = _triage(path)
    assert [i.error_code for i in result.inputs] == [None]
    provider = [e for s in result.sessions for e in s.failures if e.source == "provider"]
    assert [e.failure.code for e in provider] == ["FC-PROV-009"]
    assert (f"Error code: {value} - " in provider[0].evidence) is read


# -- the last record of a stream -------------------------------------------------------------
def _found(result: TriageResult) -> set[tuple[str, int | None, str]]:
    return {(s.session, e.step, e.failure.signature) for s in result.sessions
            for e in s.failures}


def _last_failure(result: TriageResult) -> tuple[str, int | None, str]:
    """The failure of the last failing step (of the last session that has one)."""
    for session in reversed(result.sessions):
        stepped = [e for e in session.failures if e.step is not None]
        if stepped:
            entry = max(stepped, key=lambda e: e.step or 0)
            return session.session, entry.step, entry.failure.signature
    pytest.fail("the sample has no failing step")


def _first(count: int, holds: Callable[[int], bool]) -> int:
    """The least ``k`` in 1..count for which ``holds(k)`` (``holds(count)`` is true)."""
    low, high = 1, count
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _line_samples() -> dict[str, Callable[[Path], Path]]:
    def built_copilot(folder: Path) -> Path:
        text = f"{_PYTEST_OUTPUT}<exited with exit code 1>"
        return _copilot_file(folder, {"content": text, "detailedContent": text})

    def real(source: Callable[[], Path]) -> Callable[[Path], Path]:
        return lambda folder: _copy(source(), folder)

    return {
        "aider add-test.md": real(lambda: _shared("aider/add-test.md")),
        "claude-code": real(lambda: _lab("claude-code")),
        "claude-code shared": real(
            lambda: _shared("claude-code/4e49f16/coverage-test-fix/transcript.jsonl")),
        "codex": real(lambda: _lab("codex")),
        "copilot-cli": built_copilot,
        "gemini-cli": real(lambda: _lab("gemini-cli")),
        "failcode-events": real(lambda: BUNDLED / "c-library-events.events.jsonl"),
        "openhands output.jsonl": real(lambda: _shared(_OUTPUT_JSONL)),
        "openhands infer log": real(lambda: _shared(
            "openhands/swebench_verified_claude35_run1/infer_logs/"
            "instance_django__django-10097.log")),
    }


@pytest.mark.parametrize("sample", sorted(_line_samples()))
def test_the_last_line_of_a_file_is_read(tmp_path: Path, sample: str) -> None:
    """Cut after the line that completes the last failing step (with nothing after it, a
    line break, or CR LF): that failure is there, and so is every failure a following blank
    line would let the reader see."""
    path = _line_samples()[sample](tmp_path / "full")
    full = _triage(path)
    assert [i.error_code for i in full.inputs] == [None]
    target = _last_failure(full)
    records = path.read_text(encoding="utf-8").rstrip("\n").split("\n")

    def cut(count: int, end: str) -> set[tuple[str, int | None, str]]:
        path.write_text("\n".join(records[:count]) + end, encoding="utf-8")
        return _found(_triage(path))

    line = _first(len(records), lambda count: target in cut(count, "\n\n"))
    assert line == 1 or target not in cut(line - 1, "\n\n")  # line ``line`` completes it
    followed = cut(line, "\n\n")
    for end in ("", "\n", "\r\n"):
        assert cut(line, end) == followed, f"cut after line {line} ending {end!r}"
    assert target in followed
    for end in ("", "\n"):  # the whole file, with and without its last line break
        assert cut(len(records), end) == _found(full)


def _array_samples() -> dict[str, tuple[Callable[[], Path], str | None]]:
    """Documents whose steps are the items of one array: (the sample, the array's key, or
    None for a top-level array or a conversation folder's event files)."""
    return {
        "mini-swe-agent 2.x": (lambda: _lab("mini-swe-agent"), "messages"),
        "mini-swe-agent 1.x": (lambda: _shared(
            "mini-swe-agent/deepseek_reasoner_dev/pvlib__pvlib-python-1072.traj.json"),
            "messages"),
        "swe-agent": (lambda: _shared("swe-agent/ctf/crypto/BabyEncryption.traj"),
                      "trajectory"),
        "openhands completions": (lambda: _shared(_COMPLETIONS), "messages"),
        "openhands conversation folder": (lambda: _lab("openhands"), None),
        "gemini-cli document": (lambda: _lab("gemini-cli"), "messages"),
    }


def _gemini_document(path: Path) -> dict[str, Any]:
    """A JSONL recording as the one document earlier Gemini CLI versions wrote."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    header, records = lines[0], [r for r in lines[1:] if "type" in r]
    return {"sessionId": header["sessionId"], "projectHash": header["projectHash"],
            "startTime": header.get("startTime"), "lastUpdated": header.get("startTime"),
            "messages": records}


@pytest.mark.parametrize("sample", sorted(_array_samples()))
def test_the_last_item_of_a_document_is_read(tmp_path: Path, sample: str) -> None:
    """The document cut to end with the item that completes the last failing step (with and
    without a line break after it) gives that failure, and the same failures as with an item
    that is no step (``null``, or an empty event) after it."""
    source, key = _array_samples()[sample]
    folder = tmp_path / "doc"
    if sample.startswith("gemini"):
        document: Any = _gemini_document(source())
        path = folder / "session-2026-01-01T00-00-00000000.json"
        folder.mkdir()
    else:
        path = _copy(source(), folder)
        document = None if path.is_dir() else json.loads(path.read_text(encoding="utf-8"))
    events = sorted((path / "events").glob("event-*.json")) if path.is_dir() else []
    saved = [file.read_text(encoding="utf-8") for file in events]
    items: list[Any] = saved if path.is_dir() else (document[key] if key else document)

    def cut(count: int, *, neutral: bool = False, end: str = "\n") -> set[Any]:
        if path.is_dir():
            for file in (path / "events").glob("event-*.json"):
                file.unlink()
            for file, text in zip(events[:count], saved[:count], strict=True):
                file.write_text(text, encoding="utf-8")
            if neutral:
                (path / "events" / "event-99999-neutral.json").write_text("{}")
        else:
            kept = [*items[:count], *([None] if neutral else [])]
            body = {**document, key: kept} if key else kept
            path.write_text(json.dumps(body, indent=2) + end, encoding="utf-8")
        return _found(_triage(path))

    full = cut(len(items))
    target = _last_failure(_triage(path))
    count = _first(len(items), lambda n: target in cut(n, neutral=True))
    assert count == 1 or target not in cut(count - 1, neutral=True)  # item ``count`` does
    followed = cut(count, neutral=True)
    assert target in followed
    assert cut(count) == followed
    assert cut(count, end="") == followed
    assert cut(len(items), end="") == full
