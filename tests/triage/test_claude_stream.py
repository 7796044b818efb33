"""Claude Code's headless output (``claude -p --output-format stream-json --verbose``), checked
against the message types Claude Code's own Agent SDK declares for it.

The oracle for the shapes is ``sdk.d.ts`` of ``@anthropic-ai/claude-agent-sdk`` at the version
built with the lab's pinned Claude Code (its ``package.json`` says ``claudeCodeVersion``),
installed into the lab cache with npm on first use. Its ``SDKMessage`` union is parsed for the
``type``/``subtype`` literals of every member; every line of every real stream (the second
corpus's Harbor runs and the lab's kept stdout) must be one of them, and every ``result``
subtype it declares must have an ending in the reader.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import TYPE_CHECKING, Final

import pytest

from failcode.triage import triage
from failcode.triage.readers._claude_stream import _LIMITS, _TERMINAL
from tests._needs import missing
from tests.lab.agents import agents, cache_dir
from tests.lab.runner import FIXTURES
from tests.triage._data import SESSIONS_2, sessions_2_dir

if TYPE_CHECKING:
    from pathlib import Path

SDK: Final = "@anthropic-ai/claude-agent-sdk"
SDK_VERSION: Final = "0.3.332"
"""The SDK released with Claude Code 2.1.332, the lab's pin (checked below)."""

_DECL = re.compile(r"^(?:export )?declare type (\w+)(?:<[^=]*>)? = ", re.MULTILINE)
_FIELD = re.compile(r"^    (type|subtype): ([^;]+);$", re.MULTILINE)
_LITERAL = re.compile(r"'([^']*)'")


def sdk_dir() -> Path:
    """The SDK package folder in the lab cache, installed with npm when it is not there."""
    root = cache_dir() / "oracles" / f"claude-agent-sdk-{SDK_VERSION}"
    package = root / "node_modules" / "@anthropic-ai" / "claude-agent-sdk"
    if (root / ".complete").exists() and (package / "sdk.d.ts").exists():
        return package
    npm = shutil.which("npm")
    if npm is None:
        missing("npm is not installed (the Claude Agent SDK's types are the oracle)")
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(root), "--no-audit", "--no-fund",
                           "--loglevel=error", "--ignore-scripts", "--omit=optional",
                           f"{SDK}@{SDK_VERSION}"], capture_output=True, text=True,
                          check=False, timeout=600)
    if done.returncode != 0 or not (package / "sdk.d.ts").exists():
        missing(f"{SDK}@{SDK_VERSION} did not install: {done.stderr.strip()[-500:]}")
    (root / ".complete").write_text(SDK_VERSION + "\n")
    return package


def _declarations(text: str) -> dict[str, str]:
    """Each top-level ``declare type NAME = ...`` of a d.ts file: its text up to the next."""
    found = list(_DECL.finditer(text))
    return {m.group(1): text[m.end():found[i + 1].start() if i + 1 < len(found) else None]
            for i, m in enumerate(found)}


def _shapes(name: str, decls: dict[str, str], seen: set[str]) -> set[tuple[str, str | None]]:
    """The (type, subtype) literals a type admits: its object's own ``type``/``subtype``
    fields, and those of the SDK types it is a union or intersection of."""
    if name in seen or name not in decls:
        return set()
    seen.add(name)
    body = decls[name]
    out: set[tuple[str, str | None]] = set()
    for ref in re.findall(r"\b(SDK\w+)\b", body.split("{", 1)[0]):
        out |= _shapes(ref, decls, seen)
    if "{" in body:
        fields: dict[str, str] = {}
        for key, value in _FIELD.findall(body):
            fields.setdefault(key, value)
        subtypes: list[str | None] = [*_LITERAL.findall(fields.get("subtype", ""))] or [None]
        out |= {(kind, sub) for kind in _LITERAL.findall(fields.get("type", ""))
                for sub in subtypes}
    return out


@pytest.fixture(scope="module")
def dts() -> str:
    return (sdk_dir() / "sdk.d.ts").read_text()


@pytest.fixture(scope="module")
def declared(dts: str) -> set[tuple[str, str | None]]:
    return _shapes("SDKMessage", _declarations(dts), set())


def _streams() -> list[Path]:
    corpus = sorted(p for p in (sessions_2_dir() / "claude-stream-json").rglob("*")
                    if p.is_file())
    lab = sorted(FIXTURES.glob("claude-code/*/stream.jsonl"))
    assert corpus, "no real stream in the second corpus"
    assert lab, "no kept stdout in the lab: python -m tests.lab run -a claude-code"
    return corpus + lab


def test_the_sdk_is_the_one_released_with_the_lab_pin() -> None:
    """The SDK's ``claudeCodeVersion`` is the lab's pinned Claude Code (move them together)."""
    package = json.loads((sdk_dir() / "package.json").read_text())
    assert package["version"] == SDK_VERSION
    assert package["claudeCodeVersion"] == agents()["claude-code"].version


def test_every_member_of_the_message_union_declares_its_type(dts: str) -> None:
    """The parse of ``sdk.d.ts`` finds a ``type`` literal in each member of ``SDKMessage``."""
    decls = _declarations(dts)
    members = re.findall(r"\b(SDK\w+)\b", decls["SDKMessage"])
    assert len(members) >= 20, members
    assert [m for m in members if not _shapes(m, decls, set())] == []


def test_every_real_stream_line_is_a_message_the_sdk_declares(
        declared: set[tuple[str, str | None]]) -> None:
    """Every line of every real stream has a declared ``type`` (and ``subtype``)."""
    kinds = {kind for kind, _ in declared}
    wrong = []
    for path in _streams():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            entry = json.loads(line)
            kind, sub = entry.get("type"), entry.get("subtype")
            with_sub = {s for k, s in declared if k == kind}
            if kind not in kinds or (None not in with_sub and sub not in with_sub):
                wrong.append(f"{path}:{number}: type {kind!r} subtype {sub!r}")
    assert wrong == []


def test_every_declared_result_subtype_has_an_ending(
        declared: set[tuple[str, str | None]]) -> None:
    """The reader maps each ``result`` subtype the SDK declares (a new one fails here)."""
    results = {sub for kind, sub in declared if kind == "result"}
    assert results == {*_LIMITS, "success", "error_during_execution"}


def test_every_declared_terminal_reason_is_known_to_the_reader(dts: str) -> None:
    """The reader says of each ``TerminalReason`` the SDK declares whether it decides the
    ending (a new reason fails here until someone reads what it means)."""
    declared = set(_LITERAL.findall(_declarations(dts)["TerminalReason"].split(";", 1)[0]))
    assert "completed" in declared
    assert declared == set(_TERMINAL)


def test_a_prompt_too_long_result_is_the_context_window(tmp_path: Path) -> None:
    """A result the SDK ends with ``terminal_reason: prompt_too_long`` (the lab's success
    result of a real run, ended so) is the provider's context window."""
    stream = FIXTURES / "claude-code" / "missing-module" / "stream.jsonl"
    entries = [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]
    entries[-1] |= {"is_error": True, "terminal_reason": "prompt_too_long",
                    "result": "Prompt is too long"}
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert session["ended"]["status"] == "provider_error"
    assert session["ended"]["failure"]["code"] == "FC-PROV-006"  # context-too-large


def test_every_real_stream_is_read_and_ends_on_its_result() -> None:
    """No input error; a run ends ``unknown`` exactly when it has no ``result`` line (cut
    off), else as its last result says (``submitted`` for the corpus's successes)."""
    for path in _streams():
        result = triage([str(path)]).to_dict()
        assert [i["error"] for i in result["inputs"]] == [None], path
        (session,) = result["sessions"]
        assert session["format"] == "claude-stream-json"
        last = [json.loads(line) for line in path.read_text().splitlines()
                if '"type":"result"' in line][-1:]
        if not last:
            assert session["ended"]["status"] == "unknown", path
        elif last[0]["subtype"] == "success" and not last[0]["is_error"]:
            assert session["ended"]["status"] == "submitted", path


@pytest.mark.parametrize(("scenario", "status", "kind"), [
    ("turn-limit", "limit", "agent_error"),
    ("provider-fatal-500", "provider_error", "provider_error"),
    ("provider-fatal-429", "provider_error", "provider_error"),
])
def test_an_error_result_decides_the_ending(scenario: str, status: str, kind: str) -> None:
    """The lab's runs that stopped on a turn limit or a fatal provider fault end so."""
    path = FIXTURES / "claude-code" / scenario / "stream.jsonl"
    if not path.exists():
        pytest.fail(f"{path} missing: python -m tests.lab run -a claude-code -s {scenario}")
    (session,) = triage([str(path)]).to_dict()["sessions"]
    assert session["ended"]["status"] == status
    assert session["ended"]["failure"]["kind"] == kind


def test_the_json_output_is_read_like_the_stream(tmp_path: Path) -> None:
    """``--output-format json``: one result object (or, with ``--verbose``, the messages as
    one array) gives the run's ending, and the array its steps too."""
    stream = FIXTURES / "claude-code" / "missing-module" / "stream.jsonl"
    entries = [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]
    array, single = tmp_path / "verbose.json", tmp_path / "result.json"
    array.write_text(json.dumps(entries) + "\n")
    single.write_text(json.dumps(entries[-1]) + "\n")
    def seen(path: Path) -> tuple[object, ...]:
        (session,) = triage([str(path)]).to_dict()["sessions"]
        return (session["steps"], session["ended"]["status"],
                [(f["step"], f["failure"]["code"]) for f in session["failures"]])

    assert seen(array) == seen(stream)
    assert seen(stream)[2], "the run chosen has a failing step"
    (alone,) = triage([str(single)]).to_dict()["sessions"]
    assert alone["ended"]["status"] == "submitted"


def test_the_corpus_is_where_the_tests_expect_it() -> None:
    """The second corpus's stream folder is read in place."""
    assert (SESSIONS_2 / "claude-stream-json").is_dir()
