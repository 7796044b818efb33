"""Issue 23, items 3-5: text that is safe everywhere, redaction on every path in, and a terminal
that is not an attack surface.

Each test failed on the code as it was before the fix. The
input-shaped classes are Hypothesis properties over real session files from
``../shared/data/agent-sessions/`` (read in place, copied into ``tmp_path`` and altered there):
NUL, lone surrogates, control characters, rich markup and planted secrets injected at random
places, then every output rendered. The invariants: no exception escapes, every output encodes
as UTF-8, nothing printed holds a raw control character, nothing printed holds the secret.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import failcode.events
from failcode import FC, CauseLink, EntityRef, Failure, NoMatch, RejectedAction, Veto
from failcode.events import (
    Event,
    EventProblem,
    JsonlSink,
    failure_event,
    outcome_event,
    read_events,
)
from failcode.triage import triage
from failcode.triage.report._drill import render_finding, render_session
from failcode.triage.report._html import render_html
from failcode.triage.report._markdown import render_markdown
from failcode.triage.report._stream import JsonDocument, Summary
from failcode.triage.report._terminal import Out, render_summary, safe
from tests._paths import REPO
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from failcode.triage import TriageResult

MAX_STEP = getattr(failcode.events, "MAX_STEP", 2**31 - 1)  # (so the file imports on old code)
SECRET_BODY = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
SECRETS = (f"sk-proj-{SECRET_BODY}Q1w2E3r4", f"ghp_{SECRET_BODY}")
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PAYLOADS = ("\x00", "\ud800", "\udcff", "\x1b[31m", "\x1b]0;pwned\x07", "\x9b", "\r",
            "[/x]", "[link=https://e.vil]click[/link]", "[bold red]", *SECRETS)
SMALL = ("aider/add-test.md", "swe-agent/ctf/pwn/warmup.traj",
         "mini-swe-agent/deepseek_reasoner_dev/pvlib__pvlib-python-1154.traj.json",
         "claude-code/4e49f16/coverage-test-fix/transcript.jsonl",
         "openhands/runtime_trajs/basic_gui_mode.json")
SLOW = settings(max_examples=40, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _outputs(result: TriageResult) -> dict[str, str]:
    """Every output of one triage result, as text: summary, drill-downs, Markdown, HTML."""
    texts: dict[str, str] = {}
    buffer = io.StringIO()
    render_summary(result, file=buffer, verbose=True)
    texts["summary"] = buffer.getvalue()
    summary = Summary.of(result, top=10, keep_all=True)
    texts["markdown"] = render_markdown(summary)
    texts["html"] = render_html(result)
    buffer = io.StringIO()
    for rank, finding in enumerate(summary.tables.findings.ranked(), 1):
        render_finding(finding, rank, Out(buffer))
    for session in result.sessions:
        render_session(session, summary.tables.findings, Out(buffer))
    texts["drill"] = buffer.getvalue()
    return texts


def _json(result: TriageResult) -> str:
    parts: list[str] = []
    JsonDocument.write_result(result, parts.append)
    return "".join(parts)


def _assert_inert(texts: dict[str, str], secrets: tuple[str, ...] = SECRETS) -> None:
    for name, text in texts.items():
        text.encode("utf-8")  # a lone surrogate would raise here, as printing does
        raw = RAW_CONTROL.findall(text.replace("\n", ""))
        assert not raw, (name, raw[:5])
        for secret in secrets:
            assert secret not in text, (name, secret)
            assert SECRET_BODY not in text, (name, "a secret's body")


# ---------------------------------------------------------------------------------------------
# 3. text that is safe everywhere: NUL (and lone surrogates) replaced at record construction

dirty_text = st.text(st.sampled_from("ab \x00\ud800\udfff\u00e9"), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(key=dirty_text, value=dirty_text, detail=dirty_text, remedy=dirty_text,
       cause=dirty_text, ref=dirty_text)
def test_nul_is_replaced_in_every_string_field_of_a_failure(  # noqa: PLR0917 - Hypothesis
        key: str, value: str, detail: str, remedy: str, cause: str, ref: str) -> None:
    failure = FC.STORE_EVENT_MALFORMED.failure(
        surface="events.read", params={"file": value, "line": 1, "problem": value},
        detail=detail if detail.strip() else "d", context={key: value, "k": value},
        metadata={key: value})
    failure = msgspec.structs.replace(
        failure, remedy=remedy if remedy.strip() else "r",
        cause=(CauseLink(type="x" + cause, message=cause),),
        evidence_refs=(EntityRef(type="log" + ref, id=ref),))
    text = failure.to_json()
    assert "\\u0000" not in text
    assert "\x00" not in text
    text.encode("utf-8")
    decoded = Failure.from_json(json.dumps(failure.to_dict() | {"detail": "a\x00b"}))
    assert decoded.detail == "a\ufffdb"


def test_nul_is_replaced_in_outcomes_and_events() -> None:
    outcome = NoMatch(probe="gr\x00ep", context={"session\x00": "s\x00"})
    assert outcome.probe == "gr\ufffdep"
    assert dict(outcome.context) == {"session\ufffd": "s\ufffd"}
    assert RejectedAction(action="a\x00", reason="r\udc80").reason == "r\ufffd"
    assert Veto(reason="v\x00", by="b\x00").by == "b\ufffd"
    event = outcome_event(outcome, session="se\x00ss", source="src\x00")
    assert event.session == "se\ufffdss"
    assert event.source == "src\ufffd"
    line = event.to_json()
    assert b"\\u0000" not in line
    assert Event.from_json(line.replace(b"se\xef\xbf\xbdss", b"se\\u0000ss")).session \
        == "se\ufffdss"


def test_a_nul_event_written_by_a_sink_holds_no_nul(tmp_path: Path) -> None:
    """What a sink writes is what a store keeps: PostgreSQL refuses NUL in text."""
    failure = FC.STORE_EVENT_MALFORMED.failure(
        surface="events.read", params={"file": "f\x00", "line": 1, "problem": "p\x00"},
        detail="a\x00b", context={"command": "c\x00"})
    path = tmp_path / "e.jsonl"
    with JsonlSink(path) as sink:
        sink.emit(failure_event(failure, event="tool.failed", session="s\x00", step=1))
    data = path.read_bytes()
    assert b"\\u0000" not in data
    assert b"\x00" not in data
    assert [type(item) for item in read_events(path)] == [Event]


# integers bounded at decoding, with a typed error naming file, line, value and range

@pytest.mark.parametrize("step", [10**30, MAX_STEP + 1, -1, 2**64])
def test_a_huge_step_is_that_lines_typed_error(tmp_path: Path, step: int) -> None:
    good = failure_event(FC.STORE_EVENT_MALFORMED.failure(
        surface="events.read", params={"file": "x", "line": 1, "problem": "p"}),
        event="tool.failed", session="s1", step=1)
    bad = json.loads(good.to_json())
    bad["step"] = step
    path = tmp_path / "events.jsonl"
    path.write_text(good.to_json().decode() + "\n" + json.dumps(bad) + "\n")
    items = list(read_events(path))
    assert isinstance(items[0], Event)
    problem = items[1]
    assert isinstance(problem, EventProblem)
    assert problem.line == 2
    assert f"0..{MAX_STEP}" in problem.problem
    shown = "~10**" if step.bit_length() > 64 else str(step)
    assert shown in problem.problem
    result = triage([path])
    item = result.inputs[0]
    assert item.error_code == "FC-STORE-008"
    assert "Line 2" in (item.error_message or "")
    assert f"0..{MAX_STEP}" in (item.error_message or "")
    assert result.sessions[0].steps == 2  # the good line was read


def test_a_huge_version_or_exit_status_is_a_typed_problem(tmp_path: Path) -> None:
    good = outcome_event(NoMatch(probe="grep", exit_code=1), session="s", step=0)
    line = json.loads(good.to_json())
    huge_version = dict(line, version=10**30)
    huge_exit = json.loads(good.to_json())
    huge_exit["outcome"]["exit_code"] = 10**30
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (line, huge_version, huge_exit)) + "\n")
    items = list(read_events(path))
    assert [type(x).__name__ for x in items] == ["Event", "EventProblem", "EventProblem"]
    for problem in items[1:]:
        assert isinstance(problem, EventProblem)
        problem.failure()  # the FC-STORE-008 record builds (a 10**30 param refused it)


# ---------------------------------------------------------------------------------------------
# 3. lone surrogates (and control characters, markup) in paths reach every output unharmed

def _hostile_copy(tmp_path: Path, relative: str, folder: bytes, name: bytes) -> Path:
    source = sessions_dir() / relative
    target = os.path.join(os.fsencode(tmp_path), folder, name)  # noqa: PTH118 - bytes path
    os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120
    shutil.copyfile(source, target)
    return tmp_path


HOSTILE_NAMES = (b"p\xff\x1b[31m[", b"x]q\x9b\x07[link=https://e.vil]n[/link]")


def test_surrogates_and_markup_in_paths_reach_every_output_unharmed(tmp_path: Path) -> None:
    root = _hostile_copy(tmp_path, SMALL[2], HOSTILE_NAMES[0],
                         HOSTILE_NAMES[1] + b".traj.json")
    result = triage([root])
    assert result.sessions, result.inputs
    assert "\udcff" in result.sessions[0].path  # the undecodable byte, as os.fsdecode gives it
    _assert_inert(_outputs(result))


def test_the_terminal_summary_of_a_surrogate_path_prints_under_strict_utf8(
        tmp_path: Path) -> None:
    root = _hostile_copy(tmp_path, SMALL[2], HOSTILE_NAMES[0],
                         HOSTILE_NAMES[1] + b".traj.json")
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    for extra in ([], ["--format", "markdown"], ["--finding", "1"],
                  ["--html", str(tmp_path / "r.html")]):
        done = subprocess.run([sys.executable, "-m", "failcode", "triage", str(root), "-j", "1",
                               *extra], capture_output=True, env=env, timeout=120, check=False,
                              cwd=REPO)
        assert b"Traceback" not in done.stderr, (extra, done.stderr[-600:])
        assert done.returncode == 0, (extra, done.stderr[-600:])
        out = done.stdout.decode("utf-8")
        assert not RAW_CONTROL.findall(out.replace("\n", "")), extra
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert not RAW_CONTROL.findall(html.replace("\n", ""))


def test_json_of_a_surrogate_path_encodes(tmp_path: Path) -> None:
    root = _hostile_copy(tmp_path, SMALL[2], b"p\xff", b"q.traj.json")
    _json(triage([root])).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# 4. redaction on every path in: a failcode-events file another program wrote

def _foreign_events(path: Path, secret: str) -> None:
    """Events as a program that never redacted would write them: the secret in the session,
    the source, the detail, the context's command, an outcome's reason, a ref id."""
    failure = FC.STORE_EVENT_MALFORMED.failure(
        surface="events.read", params={"file": "x", "line": 1, "problem": "p"})
    lines = []
    for step in range(3):
        event = json.loads(failure_event(failure, event="command.failed", session="s",
                                         step=step).to_json())
        event["failure"]["detail"] = f"curl -H 'Authorization: Bearer {secret}' failed"
        event["failure"]["context"] = {"command": f"deploy --token {secret}",
                                       "triage.evidence": f"key {secret}"}
        event["evidence_refs"] = [{"type": "log", "id": secret}]
        event["session"] = f"run-{secret}"
        lines.append(event)
    outcome = json.loads(outcome_event(RejectedAction(action="a", reason="r"),
                                       session="s", step=4).to_json())
    outcome["outcome"]["reason"] = f"refused {secret}"
    outcome["outcome"]["action"] = f"use {secret}"
    lines.append(outcome)
    bad = dict(lines[0], step="not a step", source=secret)
    path.write_text("\n".join(json.dumps(line) for line in [*lines, bad]) + "\n")


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_in_a_foreign_events_file_reach_no_output(tmp_path: Path, secret: str) -> None:
    path = tmp_path / "foreign.jsonl"
    _foreign_events(path, secret)
    result = triage([path])
    assert result.sessions
    assert result.sessions[0].failures
    assert result.inputs[0].error_code == "FC-STORE-008"  # the bad last line
    texts = _outputs(result)
    texts["json"] = _json(result)
    _assert_inert(texts, (secret,))
    with JsonlSink(tmp_path / "copy.jsonl") as sink:  # and the events read stay redacted
        for item in read_events(path, redacted=True):
            if isinstance(item, Event):
                assert secret not in item.to_json().decode()
                sink.emit(item)


def test_event_problems_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"version": 1, "event": f"Bad {SECRETS[1]}", "event_id": "x",
                                "ts": "2024-01-01T00:00:00Z"}) + "\n"
                    + f'{{"version": 1, "event": "{SECRETS[0]}\n')
    problems = [item for item in read_events(path) if isinstance(item, EventProblem)]
    assert problems
    for problem in problems:
        assert SECRET_BODY not in problem.problem
        assert SECRET_BODY not in problem.failure().message
    assert SECRET_BODY not in (EventProblem(file="f", line=1, kind="malformed",
                                            problem=SECRETS[0]).problem)


# ---------------------------------------------------------------------------------------------
# 5. the terminal is not an attack surface (rich markup, control characters)

def test_rich_output_prints_markup_and_controls_inert(monkeypatch: pytest.MonkeyPatch) -> None:
    from failcode.cli import _output

    monkeypatch.setenv("FORCE_COLOR", "1")
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200, highlight=False)
    monkeypatch.setattr(_output, "_console", lambda _err: console)
    _output.table(["path", "n"], [["runs/a[/x]b", "1"], ["[link=https://e.vil]f[/link]", "2"],
                                  ["e\x1b]0;t\x07\x1b[2J", "3"]])
    _output.echo("folder [link=https://e.vil]x[/link] [/x] \x1b[2J\x00")
    printed = buffer.getvalue()
    assert "[/x]" in printed
    assert "[link=https://e.vil]" in printed
    assert "\x1b]8;" not in printed  # no OSC 8 hyperlink
    assert "\x1b[2J" not in printed
    assert "\x07" not in printed
    assert "\x00" not in printed
    assert "\\x1b" in printed


def test_piped_cli_output_escapes_controls(capsys: pytest.CaptureFixture[str]) -> None:
    from failcode.cli import _output

    _output.table(["path"], [["a\x1b[31mb\x00"]])
    _output.echo("c\x1b[2Jd\re\x9b")
    out = capsys.readouterr().out
    assert not RAW_CONTROL.findall(out.replace("\n", ""))
    assert "a\\x1b[31mb\\x00" in out


def test_safe_escapes_and_redacts() -> None:
    assert safe("a\x1bb") == "a\\x1bb"
    assert safe("a\udcffb") == "a\ufffdb"
    assert safe("x\x00\x9b\x7f") == "x\\x00\\x9b\\x7f"
    assert SECRET_BODY not in safe(f"run {SECRETS[1]}")


# ---------------------------------------------------------------------------------------------
# the property: hostile text injected at random places in real session files

def _inject(data: bytes, offsets: list[int], payloads: list[str], *, json_file: bool) -> bytes:
    """``data`` with each payload put at an offset: in a JSON file, at the start of the next
    string value after the offset (JSON-escaped, so the file stays JSON); else raw."""
    out = data
    for offset, payload in sorted(zip(offsets, payloads, strict=True), reverse=True):
        at = offset % max(1, len(out))
        if json_file:
            found = out.find(b': "', at)
            if found < 0:
                found = out.find(b': "')
            if found < 0:
                continue
            at = found + 3
            piece = json.dumps(payload)[1:-1].encode("ascii")
        else:
            piece = payload.encode("utf-8", "surrogateescape") if not any(
                "\ud800" <= c <= "\udfff" for c in payload) else b"\xff\xfe"
        out = out[:at] + piece + out[at:]
    return out


@SLOW
@given(index=st.integers(0, len(SMALL) - 1),
       offsets=st.lists(st.integers(0, 10**7), min_size=1, max_size=8),
       choices=st.lists(st.integers(0, len(PAYLOADS) - 1), min_size=8, max_size=8))
def test_hostile_text_anywhere_in_a_real_session_reaches_no_output(
        tmp_path: Path, index: int, offsets: list[int], choices: list[int]) -> None:
    relative = SMALL[index]
    data = (sessions_dir() / relative).read_bytes()
    payloads = [PAYLOADS[choice] for choice in choices[: len(offsets)]]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    name = os.fsencode(folder / relative.replace("/", "_"))
    with open(name, "wb") as handle:  # noqa: PTH123
        handle.write(_inject(data, offsets, payloads,
                             json_file=not relative.endswith(".md")))
    shutil.copyfile(sessions_dir() / SMALL[(index + 1) % len(SMALL)],
                    folder / ("clean-" + SMALL[(index + 1) % len(SMALL)].replace("/", "_")))
    result = triage([folder])
    clean = next(i for i in result.inputs if "clean-" in i.path)
    assert clean.error_code is None, clean  # the other input is unaffected
    _assert_inert(_outputs(result), tuple(p for p in PAYLOADS if p in SECRETS))


def test_a_secret_in_a_session_name_reaches_no_output(tmp_path: Path) -> None:
    """A Claude Code transcript whose session id quotes a token (the lab's real run, its id
    replaced): the name is redacted in --json as everywhere else."""
    fixture = next((REPO / "tests" / "lab" / "fixtures" / "claude-code" / "missing-module"
                    / "session").rglob("*.jsonl"))
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = fixture.read_text().replace("00000000-0000-4000-8000-000000000001", f"run-{token}")
    path = tmp_path / "transcript.jsonl"
    path.write_text(text)
    result = triage([path])
    assert result.sessions
    assert token not in _json(result)
