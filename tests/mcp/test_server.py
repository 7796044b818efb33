"""``failcode mcp``: the real server over stdio, driven by the MCP SDK's own client.

Each tool's answer is compared with what the existing code path gives for the same input: the
``failcode`` command (triage --json, --session, explain, codes docs, store findings --json),
the service's classify door, a running service's ``GET /v1/findings``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import anyio

from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.service.conftest import free_port, running

if TYPE_CHECKING:
    from mcp.types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = Path("tests/lab/fixtures/claude-code")
CARGO = CLAUDE / "cargo-test-failure"
TOOLS = {"triage", "explain", "classify", "findings", "timeline"}


def call(*calls: tuple[str, dict[str, Any]], env: dict[str, str] | None = None,
         ) -> list[CallToolResult]:
    """Start ``python -m failcode mcp`` in the repository, call each tool in turn, stop it."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "failcode", "mcp"],
                                   cwd=str(ROOT), env=env)

    async def main() -> list[CallToolResult]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await session.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(main)


def one(name: str, **arguments: Any) -> CallToolResult:
    return call((name, arguments))[0]


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


def cli(*args: str, env: dict[str, str] | None = None, only: bool = False) -> str:
    """``failcode ARGS``' standard output (any exit status: triage exits 2 on a bad input),
    with ``env`` added to the environment (``only``: as the whole environment)."""
    done = subprocess.run([sys.executable, "-m", "failcode", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False,
                          env=(env or {}) if only else {**os.environ, **(env or {})})
    assert done.stdout, done.stderr
    return done.stdout


_ERROR_ID = re.compile(r"fc-[0-9a-f]{12}-[0-9a-f]+")  # the counter is hex


def stable(value: Any) -> Any:
    """``value`` without what differs on every run: each record's ``error_id`` (a key, or in a
    text)."""
    if isinstance(value, dict):
        return {key: stable(item) for key, item in value.items() if key != "error_id"}
    if isinstance(value, list):
        return [stable(item) for item in value]
    return _ERROR_ID.sub("fc-ID", value) if isinstance(value, str) else value


def without_sessions(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "sessions"}


# -- the server ----------------------------------------------------------------------------------


def test_lists_the_five_tools_each_described_with_typed_inputs() -> None:
    """tools/list names the five tools, each with a description and a typed input schema."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "failcode", "mcp"],
                                   cwd=str(ROOT))

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(main)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description
        assert "Use it" in tool.description
        properties = tool.input_schema["properties"]
        assert properties
        assert all("description" in prop for prop in properties.values()), tool.name
    assert tools["classify"].input_schema["required"] == ["command", "exit_status"]


def test_the_tools_literals_are_failcodes_own() -> None:
    """The purposes and statuses the tools accept are failcode's and the service's lists."""
    from failcode import PURPOSES
    from failcode.mcp._tools import Purpose, Status
    from failcode.service._findings import STATUSES

    assert get_args(Purpose) == PURPOSES
    assert get_args(Status) == STATUSES


def test_without_the_sdk_the_command_says_what_to_install() -> None:
    """Without the mcp package, failcode mcp exits 2 naming the extra, no traceback."""
    code = ("import sys; sys.modules['mcp'] = None; sys.argv = ['failcode', 'mcp']; "
            "from failcode.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert "pip install 'failcode[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr


# -- triage and timeline -------------------------------------------------------------------------


def test_triage_is_the_triage_json_document_cut_to_the_limit() -> None:
    """triage of a folder: triage --json's document, findings and signatures cut to limit,
    the sessions left out and counted."""
    expected = json.loads(cli("triage", str(CLAUDE), "--json"))
    result = one("triage", paths=[str(CLAUDE)], limit=3)
    assert not result.is_error, text(result)
    got = result.structured_content
    assert got is not None
    assert json.loads(text(result)) == got
    assert got["findings"] == expected["findings"][:3]
    assert got["signatures"] == expected["signatures"][:3]
    assert got["blame"] == expected["blame"]
    assert got["outcomes"] == expected["outcomes"]
    assert got["inputs"] == [item for item in expected["inputs"] if item["error"]]
    assert got["omitted"] == {
        "findings": len(expected["findings"]) - 3,
        "signatures": len(expected["signatures"]) - 3,
        "inputs": len(expected["inputs"]), "sessions": len(expected["sessions"]),
        **({"skipped": len(expected["skipped"]) - 3} if len(expected["skipped"]) > 3 else {})}
    assert "sessions" not in got


def test_triage_with_sessions_is_the_whole_document() -> None:
    """triage with sessions and a limit above the counts: triage --json's document as is."""
    expected = json.loads(cli("triage", str(CARGO), "--json"))
    result = one("triage", paths=[str(CARGO)], sessions=True, limit=1000)
    got = result.structured_content
    assert got is not None
    assert got.pop("omitted") == {"inputs": len(expected["inputs"])}  # every one was read
    assert stable(got) == stable({**expected, "inputs": []})


def test_triage_of_a_missing_path_is_a_tool_error() -> None:
    """A path that does not exist is a tool error naming it; the server answers the next."""
    missing, then = call(("triage", {"paths": ["no/such/runs"]}),
                         ("explain", {"code": "FC-CMD-001"}))
    assert missing.is_error
    assert "no such file or folder: no/such/runs" in text(missing)
    assert not then.is_error


def test_triage_with_no_paths_reads_the_agents_own_places(tmp_path: Path) -> None:
    """No paths: the logs at every agent's default place (here a HOME with one Claude Code
    transcript), as triage --home reads them."""
    transcript = next((CARGO / "session" / "claude" / "projects").rglob("*.jsonl"))
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(transcript.parents[2]),
           "PATH": os.environ["PATH"]}
    expected = json.loads(cli("triage", "--home", "--json", env=env, only=True))
    got = call(("triage", {}), env=env)[0].structured_content
    assert got is not None
    # both read through the results cache, as --home does: the CLI first (nothing cached), the
    # tool second (its one input unchanged since)
    assert (expected.pop("cached_inputs"), got.pop("cached_inputs")) == (0, 1)
    assert without_sessions(got) == {**without_sessions(expected), "inputs": [],
                                     "omitted": got["omitted"]}
    assert got["omitted"]["sessions"] == len(expected["sessions"]) == 1


def test_timeline_is_triages_session_drill_down() -> None:
    """timeline: the text triage --session prints, the session's entry of triage --json."""
    log = CARGO / "stream.jsonl"
    document = json.loads(cli("triage", str(log), "--json"))
    name = document["sessions"][0]["session"]
    result = one("timeline", path=str(log), session=name)
    assert not result.is_error, text(result)
    assert text(result) == cli("triage", str(log), "--session", name)
    assert stable(result.structured_content) == stable({"sessions": document["sessions"]})


def test_timeline_errors_name_the_sessions_there_are() -> None:
    """An unknown session, or a log that is no session log, is a tool error saying why."""
    log = CARGO / "stream.jsonl"
    name = json.loads(cli("triage", str(log), "--json"))["sessions"][0]["session"]
    unknown, not_a_log = call(("timeline", {"path": str(log), "session": "nope"}),
                              ("timeline", {"path": str(CARGO / "meta.json")}))
    assert unknown.is_error
    assert f"no session named 'nope' in {log}; its sessions: {name}" in text(unknown)
    assert not_a_log.is_error
    assert "FC-DATA-002" in text(not_a_log)


# -- explain -------------------------------------------------------------------------------------


def test_explain_a_code_is_its_reference_entry_and_explain_text() -> None:
    """explain FC-CMD-001: failcode explain's text, the code's entry of codes docs --format
    json; its slug gives the same."""
    entries = {entry["code"]: entry
               for entry in json.loads(cli("codes", "docs", "--format", "json"))["codes"]}
    by_code, by_slug = call(("explain", {"code": "FC-CMD-001"}),
                            ("explain", {"code": entries["FC-CMD-001"]["slug"]}))
    assert text(by_code) == cli("explain", "FC-CMD-001")
    assert by_code.structured_content == entries["FC-CMD-001"]
    assert by_slug.structured_content == by_code.structured_content


def test_explain_a_signature_lists_the_codes_explain_names() -> None:
    """explain SIGNATURE: its parts and the entries of the codes failcode explain shows (none
    for a signature no code has the kind and class of)."""
    entries = {entry["code"]: entry
               for entry in json.loads(cli("codes", "docs", "--format", "json"))["codes"]}
    signatures = [row["signature"]
                  for row in json.loads(cli("triage", str(CLAUDE), "--json"))["signatures"]]
    shown = {signature: cli("explain", signature) for signature in signatures}
    named = {signature: [code for code in entries if f"\n{code}  " in "\n" + text]
             for signature, text in shown.items()}
    some = next(signature for signature in signatures if named[signature])
    none = next(signature for signature in signatures if not named[signature])
    results = call(*(("explain", {"code": signature}) for signature in (some, none)))
    for signature, result in zip((some, none), results, strict=True):
        got = result.structured_content
        assert got is not None
        kind, surface, error_class, location, digest = signature.split(":")
        assert got == {"signature": signature, "kind": kind, "surface": surface,
                       "error_class": error_class,
                       "location": None if location == "none" else location, "digest": digest,
                       "codes": [entries[code] for code in named[signature]]}


def test_explain_an_unknown_code_suggests_the_nearest() -> None:
    """An unknown code is a tool error with failcode explain's suggestion."""
    done = subprocess.run([sys.executable, "-m", "failcode", "explain", "FC-CMD-01"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    result = one("explain", code="FC-CMD-01")
    assert result.is_error
    suggestion = done.stderr.strip().split("unknown code ", 1)[1]
    assert f"unknown code {suggestion}" in text(result)


# -- classify ------------------------------------------------------------------------------------

NOT_FOUND = {"command": "nonexistent-prog-xyz --flag", "exit_status": 127,
             "stderr": "sh: 1: nonexistent-prog-xyz: not found\n"}


def test_classify_is_the_classify_doors_answer() -> None:
    """classify: the service's classify door's answer for the same command (the records'
    error_id aside: one per record made)."""
    from failcode.service._classify import ClassifyRequest, CommandInput, classify_payload

    expected = classify_payload(ClassifyRequest(command=CommandInput(
        command=NOT_FOUND["command"], exit_code=127, stderr=NOT_FOUND["stderr"]))
    ).model_dump(mode="json")
    got = one("classify", **NOT_FOUND).structured_content
    assert got is not None
    assert got["kind"] == "failure"
    assert stable(got) == stable(expected)


def test_classify_takes_the_purpose_given() -> None:
    """classify with a purpose: the failure from_command makes with that purpose."""
    from failcode import from_command

    output = "FAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed in 0.01s\n"
    expected = from_command("python -m pytest", 1, output, purpose="test")
    got = one("classify", command="python -m pytest", exit_status=1, output=output,
              purpose="test").structured_content
    assert got is not None
    assert (got["code"], got["signature"]) == (expected.code, expected.signature)  # type: ignore[union-attr]


def test_classify_refuses_what_the_door_refuses() -> None:
    """An exit status outside the door's range, or an unknown purpose, is a tool error."""
    too_big, purpose = call(("classify", {"command": "make", "exit_status": 2**40}),
                            ("classify", {"command": "make", "exit_status": 2,
                                          "purpose": "deploy"}))
    assert too_big.is_error
    assert "exit_code" in text(too_big)
    assert purpose.is_error
    assert "purpose" in text(purpose)


# -- findings ------------------------------------------------------------------------------------


def test_findings_of_a_store_are_store_findings_json(tmp_path: Path) -> None:
    """findings of a store triage recorded in: failcode store findings --json's answer."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    cli("triage", str(CLAUDE), "--store", url, "--json")
    expected = json.loads(cli("store", "findings", "--json", "--store", url, "--limit", "5"))
    by_path, by_url = call(("findings", {"store": str(tmp_path / "failcode.db"), "limit": 5}),
                           ("findings", {"store": url, "limit": 5}))
    assert expected["findings"]
    assert by_path.structured_content == expected
    assert by_url.structured_content == expected


def test_findings_of_a_missing_store_is_a_tool_error(tmp_path: Path) -> None:
    """A store file that does not exist is a tool error, and none is made."""
    missing = tmp_path / "none.db"
    result = one("findings", store=str(missing))
    assert result.is_error
    assert f"no store at {missing}" in text(result)
    assert not missing.exists()


def test_findings_of_a_service_are_its_findings_api(tmp_path: Path) -> None:
    """findings with FAILCODE_URL and FAILCODE_KEY: the service's GET /v1/findings; a wrong
    key and a service that does not answer are tool errors."""
    with running("sqlite", tmp_path) as served:
        cli("triage", str(CLAUDE), "--report-to", served.url, "--json",
            env={"FAILCODE_KEY": served.keys["ingest"]})
        status, expected = served.json("GET", "/v1/findings?limit=4", key=served.keys["read"])
        assert status == 200
        assert expected["findings"]
        env = {"FAILCODE_URL": served.url, "FAILCODE_KEY": served.keys["read"],
               "PATH": os.environ["PATH"]}
        got, wrong_key, nobody = call(
            ("findings", {"limit": 4}),
            ("findings", {"key": "not-a-key"}),
            ("findings", {"url": f"http://127.0.0.1:{free_port()}"}), env=env)
    assert got.structured_content == expected
    assert wrong_key.is_error
    assert f"the service at {served.url} answered 401" in text(wrong_key)
    assert nobody.is_error
    assert "does not answer" in text(nobody)
