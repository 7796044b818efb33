"""Refusals, interrupts and declined approvals of Claude Code and Codex CLI are outcomes
(cancelled or rejected actions), never failures, built from the agents' own strings.

The texts come from the lab's pinned binaries (Claude Code 2.1.x and Codex are native
executables: their strings are read from the file in the lab cache, which
``python -m tests.lab install`` fills); each is fed to the reader in the shape the agent writes
it, and every real transcript or rollout of both corpora that holds one is checked to report
it as that outcome at that step.
"""

from __future__ import annotations

import json
import mmap
import re
import subprocess
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode.triage import triage
from tests._needs import missing, need_tool
from tests.lab.agents import agents
from tests.triage._data import SESSIONS, SESSIONS_2, sessions_2_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_PLACEHOLDER: Final = re.compile(rb"\$\{[^}]{1,60}\}")


def _binary(agent: str, *parts: str) -> bytes:
    """The pinned agent's native executable, as bytes (mapped, not copied)."""
    pinned = agents()[agent]
    path = pinned.install_dir.joinpath(*parts)
    if not path.exists():
        missing(f"{agent} {pinned.version} is not installed: python -m tests.lab install")
    with path.open("rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)[:]


@pytest.fixture(scope="module")
def claude() -> bytes:
    return _binary("claude-code", "node_modules", "@anthropic-ai", "claude-code-linux-x64",
                   "claude")


@pytest.fixture(scope="module")
def codex() -> bytes:
    return _binary("codex", "node_modules", "@openai", "codex-linux-x64", "vendor",
                   "x86_64-unknown-linux-musl", "bin", "codex")


def _rendered(binary: bytes, template: bytes) -> str:
    """``template`` (a regex of the binary's text, ``${...}`` for its placeholders) found in
    the binary, with each placeholder filled as a call to Bash would fill it."""
    pattern = re.escape(template).replace(rb"\$\{\.\.\.\}", rb"\$\{[^}]{1,60}\}")
    found = re.search(pattern, binary)
    assert found is not None, f"{template!r} is not in the pinned binary any more"
    return _PLACEHOLDER.sub(b"Bash", found.group(0)).decode()


# (the binary's text, is_error, the outcome it is)
CLAUDE_TEXTS: Final = [
    (b"Claude requested permissions to use ${...}, but you haven't granted it yet.", True,
     "rejected_action"),
    (b"Claude requested permissions to read from ${...}, but you haven't granted it yet.",
     True, "rejected_action"),
    (b"Claude requested permissions to write to ${...}, but you haven't granted it yet.",
     True, "rejected_action"),
    (b"Claude requested permissions to edit ${...} which is a sensitive file.", True,
     "rejected_action"),
    (b"Claude requested permissions to glob ${...}, which appears to be a UNC pattern", True,
     "rejected_action"),
    (b"Permission to use ${...} with command ${...} has been denied.", True,
     "rejected_action"),
    ((b"Permission to use ${...} has been denied because Claude Code is running in don't ask "
     b"mode."), True, "rejected_action"),
    (b"Permission to edit ${...} has been denied.", True, "rejected_action"),
    (b"Permission to read ${...} has been denied.", True, "rejected_action"),
    (b"Permission for this action has been denied. Reason: ", True, "rejected_action"),
    ((b"Permission for this action was denied by the Claude Code auto mode classifier. "
     b"Reason: "), True, "rejected_action"),
    (b"Hook denied tool use for ${...}", True, "rejected_action"),
    (b"File is in a directory that is denied by your permission settings.", True,
     "rejected_action"),
    (b"The user doesn't want to proceed with this tool use. The tool use was rejected", True,
     "cancelled"),
    (b"The user doesn't want to take this action right now.", True, "cancelled"),
    (b"Permission for this tool use was denied. The tool use was rejected", True, "cancelled"),
    (b"[Request interrupted by user for tool use]", False, "cancelled"),
    (b"The operation was aborted", True, "cancelled"),
]


def _claude_session(tmp_path: Path, text: str, is_error: bool) -> Path:
    base = {"sessionId": "5d1c7f0e-2b1a-4c3d-9e8f-0a1b2c3d4e5f", "version": "2.1.197",
            "cwd": "/lab/project", "isSidechain": False}
    lines = [
        {**base, "type": "user", "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "clean the build"}},
        {**base, "type": "assistant", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Bash",
              "input": {"command": "rm -rf build"}}]}},
        {**base, "type": "user", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": text,
              "is_error": is_error}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _outcome_at(path: Path, step: int) -> tuple[list[str], list[str]]:
    (session,) = triage([str(path)]).to_dict()["sessions"]
    return ([o["outcome"]["type"] for o in session["outcomes"] if o["step"] == step],
            [f["failure"]["code"] for f in session["failures"] if f["step"] == step])


@pytest.mark.parametrize(("template", "is_error", "outcome"), CLAUDE_TEXTS,
                         ids=lambda v: v.decode()[:40] if isinstance(v, bytes) else str(v))
def test_claude_codes_own_refusal_texts_are_outcomes(
        claude: bytes, tmp_path: Path, template: bytes, is_error: bool, outcome: str) -> None:
    """Each refusal, rejection or interrupt text of the pinned binary, as a Bash result."""
    text = _rendered(claude, template)
    outcomes, failures = _outcome_at(_claude_session(tmp_path, text, is_error), 0)
    assert (outcomes, failures) == ([outcome], [])


CODEX_TEXTS: Final = [
    (b"exec command rejected by user", "cancelled"),
    (b"patch rejected by user", "cancelled"),
    (b"aborted by user", "cancelled"),
    (b"command aborted by user", "cancelled"),
    (b"aborted before dispatch", "cancelled"),
    (b"writing is blocked by read-only sandbox; rejected by user approval settings",
     "rejected_action"),
    (b"writing outside of the project; rejected by user approval settings",
     "rejected_action"),
]


def _codex_rollout(tmp_path: Path, name: str, text: str) -> Path:
    def line(kind: str, payload: dict[str, Any], second: int) -> str:
        return json.dumps({"timestamp": f"2026-01-01T00:00:0{second}.000Z", "type": kind,
                           "payload": payload}) + "\n"
    arguments = ({"cmd": "rm -rf build"} if name == "exec_command"
                 else {"input": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"})
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        line("session_meta", {"id": "019b0000-0000-7000-8000-000000000001",
                              "cli_version": "0.171.0", "cwd": "/lab/project"}, 0)
        + line("response_item", {"type": "function_call", "name": name,
                                 "arguments": json.dumps(arguments), "call_id": "c1"}, 1)
        + line("response_item", {"type": "function_call_output", "call_id": "c1",
                                 "output": text}, 2))
    return path


@pytest.mark.parametrize(("text", "outcome"), CODEX_TEXTS, ids=lambda v: str(v)[:40])
@pytest.mark.parametrize("tool", ["exec_command", "apply_patch"])
def test_codexs_own_refusal_texts_are_outcomes(
        codex: bytes, tmp_path: Path, text: bytes, outcome: str, tool: str) -> None:
    """Each declined, interrupted or refused text of the pinned binary, as a call's output."""
    assert text in codex, f"{text!r} is not in the pinned binary any more"
    outcomes, failures = _outcome_at(_codex_rollout(tmp_path, tool, text.decode()), 0)
    assert (outcomes, failures) == ([outcome], [])


# -- every real file that holds one ------------------------------------------------------------
_CLAUDE_MARKS: Final = re.compile(
    r"^(?:The user doesn't want to (?:proceed with this tool use|take this action right now)"
    r"|\[Request interrupted by user|<tool_use_error>(?:Cancelled: |Sibling tool call errored))")
_CODEX_MARKS: Final = re.compile(r"^(?:exec command|patch) rejected by user|aborted by user\s*\Z")


def _files(folder: str) -> Iterator[Path]:
    for root in (SESSIONS, sessions_2_dir()):
        yield from sorted(p for p in (root / folder).rglob("*.jsonl") if p.is_file())


def _claude_marked(path: Path) -> list[tuple[str, int]]:
    """(session, step) of each tool result that is a person's rejection, an interrupt or a
    cancelled call, counted as the transcript numbers steps."""
    steps: dict[str, int] = {}
    marked = []
    for line in path.read_text(errors="replace").splitlines():
        entry = json.loads(line) if line.strip() else {}
        session = entry.get("sessionId")
        content = (entry.get("message") or {}).get("content") if entry.get(
            "type") == "user" else None
        for block in content if isinstance(content, list) and session else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                body = block.get("content")
                text = body if isinstance(body, str) else "\n".join(
                    str(b.get("text", "")) for b in body or () if isinstance(b, dict))
                if _CLAUDE_MARKS.match(text.lstrip()):
                    marked.append((session, steps.get(session, 0)))
                steps[session] = steps.get(session, 0) + 1
    return marked


def test_every_real_claude_code_rejection_and_interrupt_is_cancelled() -> None:
    """In both corpora, each such tool result is a cancelled step, never a failure."""
    wrong, seen = [], 0
    for path in _files("claude-code"):
        marked = _claude_marked(path)
        if not marked:
            continue
        sessions = {s["session"]: s for s in triage([str(path)]).to_dict()["sessions"]}
        for session, step in marked:
            seen += 1
            got = sessions[session]
            outcomes = [o["outcome"]["type"] for o in got["outcomes"] if o["step"] == step]
            failures = [f["failure"]["code"] for f in got["failures"] if f["step"] == step]
            if outcomes != ["cancelled"] or failures:
                wrong.append(f"{path.relative_to(path.parents[4])} step {step}: "
                             f"{outcomes} {failures}")
    assert seen >= 10, "the corpora hold rejections and interrupts"
    assert wrong == []


def test_every_real_codex_decline_and_abort_is_cancelled() -> None:
    """In both corpora, each declined or interrupted call of a rollout is a cancelled step."""
    wrong, seen = [], 0
    for path in _files("codex"):
        steps: dict[str, int] = {}
        marked = []
        for line in path.read_text(errors="replace").splitlines():
            entry = json.loads(line) if line.strip() else {}
            payload = entry.get("payload", entry)
            if payload.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
                steps[str(payload.get("call_id") or payload.get("id"))] = len(steps)
            elif payload.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = payload.get("output")
                if isinstance(output, str) and _CODEX_MARKS.search(output.strip()):
                    marked.append(steps[str(payload.get("call_id"))])
        if not marked:
            continue
        (session,) = triage([str(path)]).to_dict()["sessions"]
        for step in marked:
            seen += 1
            outcomes = [o["outcome"]["type"] for o in session["outcomes"] if o["step"] == step]
            failures = [f["failure"]["code"] for f in session["failures"] if f["step"] == step]
            if outcomes != ["cancelled"] or failures:
                wrong.append(f"{path.name} step {step}: {outcomes} {failures}")
    assert seen >= 2, "the corpora hold declined and interrupted calls"
    assert wrong == []


def test_the_second_corpus_is_read_in_place() -> None:
    """Both agents' folders are there."""
    assert (SESSIONS_2 / "claude-code").is_dir()
    assert (SESSIONS_2 / "codex").is_dir()


@pytest.mark.parametrize(("mode", "kind"), [(0o644, "env_error"), (None, "tool_error")])
def test_a_tools_helper_that_cannot_start_is_a_failure_not_a_refusal(
        tmp_path: Path, mode: int | None, kind: str) -> None:
    """Node's own spawn error (the ripgrep behind Claude Code's Glob and Grep not executable,
    or not there) as a Glob result: the tool failed in its environment."""
    node = need_tool("node")
    helper = tmp_path / "rg"
    if mode is not None:
        helper.write_text("#!/bin/sh\n")
        helper.chmod(mode)
    done = subprocess.run(
        [node, "-e", ("require('child_process').spawn(process.argv[1])"
                     ".on('error', e => console.log(e.message))"), str(helper)],
        capture_output=True, text=True, check=True, timeout=60)
    message = done.stdout.strip()
    assert message.startswith("spawn "), message
    path = _claude_session(tmp_path, message, is_error=True)
    text = path.read_text().replace('"name": "Bash", "input": {"command": "rm -rf build"}',
                                    '"name": "Glob", "input": {"pattern": "*.py"}')
    path.write_text(text)
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert [(f["step"], f["failure"]["kind"]) for f in session["failures"]] == [(0, kind)]
    assert session["outcomes"] == []


@pytest.mark.parametrize(("tail", "ended"), [
    ([], "submitted"),
    ([("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "and the docs?"}]})], "unknown"),
    ([("event_msg", {"type": "turn_aborted", "reason": "interrupted"})], "unknown"),
    ([("response_item", {"type": "function_call", "name": "exec_command",
                         "arguments": "{\"cmd\": \"ls\"}", "call_id": "c2"})], "unknown"),
])
def test_an_interactive_rollout_without_task_complete_ends_on_its_last_word(
        tmp_path: Path, tail: list[tuple[str, dict[str, Any]]], ended: str) -> None:
    """The interactive CLI's rollouts of 0.6x to 0.8x keep no ``task_complete``: an answer
    with no call pending is ``submitted``, a prompt, an interrupt or a call after it is not."""
    path = _codex_rollout(tmp_path, "exec_command", "Exit code: 0\nOutput:\nok\n")
    lines = [("response_item", {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "Done: the build is clean."}]}), *tail]
    with path.open("a") as out:
        for kind, payload in lines:
            out.write(json.dumps({"timestamp": "2026-01-01T00:00:05.000Z", "type": kind,
                                  "payload": payload}) + "\n")
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert session["ended"]["status"] == ended
