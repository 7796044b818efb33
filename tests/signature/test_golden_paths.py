"""Signatures pinned where users meet them: the factory, classify, classify_text, from_command.

A fixed corpus goes through every entry point a user calls; the signatures (and every
normalization placeholder choice) are pinned in ``tests/golden/``. Any change to a signature or
to a placeholder fails here unless ``SIGNATURE_VERSION`` (which includes the normalization
version) changes with it. To accept a deliberate change: bump the version, then run
``FAILCODE_REGEN_GOLDEN=1 pytest tests/signature/test_golden_paths.py``; that run writes the
files and FAILS on purpose, so regenerating can never make its own test pass; the next run
checks them.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from failcode import (
    FC,
    SIGNATURE_VERSION,
    Failure,
    classify,
    classify_http,
    classify_text,
    explain_signature,
    from_command,
    normalize_message,
    sign,
)
from tests._paths import TESTS

if TYPE_CHECKING:
    from collections.abc import Callable

GOLDEN_SIGNATURES = TESTS / "golden" / "signatures_by_entry_point.json"
GOLDEN_NORMALIZED = TESTS / "golden" / "normalization.json"
REGENERATE = os.environ.get("FAILCODE_REGEN_GOLDEN") == "1"


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - a real raise gives the real traceback
        return caught


def _failure(result: object) -> Failure:
    assert isinstance(result, Failure), result
    return result


# entry point -> case id -> how to make the record (deterministic: no clock, no random input)
CORPUS: dict[str, Callable[[], Failure]] = {
    "factory.cmd_not_found": lambda: FC.CMD_NOT_FOUND.failure(
        surface="shell.run", params={"program": "cargo"}, metadata={"exit_code": 127}),
    "factory.prov_rate_limit": lambda: FC.PROV_RATE_LIMIT.failure(
        surface="llm.complete", params={"provider": "OpenAI"}, metadata={"http_status": 429}),
    "factory.build_failed_location": lambda: FC.BUILD_FAILED.failure(
        surface="cpp.build", params={"program": "gcc"}, location="src/main.c",
        error_class="undefined_reference", metadata={"diagnostic": "ld"}),
    "classify.file_not_found": lambda: _failure(classify(_raised(
        FileNotFoundError(2, "No such file or directory", "config/settings.yaml")))),
    "classify.permission": lambda: _failure(classify(_raised(
        PermissionError(13, "Permission denied", "out/report.txt")))),
    "classify.timeout": lambda: _failure(classify(_raised(TimeoutError("read timed out")))),
    "classify.connection": lambda: _failure(classify(_raised(
        ConnectionRefusedError(111, "Connection refused")))),
    "classify.module": lambda: _failure(classify(_raised(
        ModuleNotFoundError("No module named 'yaml'", name="yaml")))),
    "classify_http.429": lambda: _failure(classify_http(
        429, {"error": {"type": "rate_limit_error", "message": "slow down"}})),
    "classify_http.quota": lambda: _failure(classify_http(
        429, {"error": {"type": "insufficient_quota"}})),
    "classify_http.500": lambda: _failure(classify_http(500, {"error": {"message": "oops"}})),
    "classify_text.rate_limit": lambda: _failure(classify_text(
        "openai.RateLimitError", "Error code: 429 - {'error': {'type': 'rate_limit_error'}}")),
    "classify_text.key_error": lambda: _failure(classify_text("KeyError", "'session_id'")),
    "classify_text.runtime": lambda: _failure(classify_text(
        "RuntimeError", "worker pool exhausted after 3 attempts")),
    "from_command.not_found": lambda: _failure(from_command(
        ["cargo", "build"], 127, stderr="bash: cargo: command not found", purpose="build")),
    "from_command.gcc": lambda: _failure(from_command(
        ["gcc", "-c", "src/a.c"], 1,
        stderr="src/a.c:3:5: error: 'y' undeclared (first use in this function)\n",
        purpose="build")),
    "from_command.pytest": lambda: _failure(from_command(
        "python -m pytest tests", 1,
        stdout="FAILED tests/test_x.py::test_y - assert 1 == 2\n", purpose="test")),
    "from_command.git_merge": lambda: _failure(from_command(
        ["git", "merge", "feature"], 1,
        stdout="CONFLICT (content): Merge conflict in src/app.py\n", purpose="merge")),
    "from_command.timeout": lambda: _failure(from_command(
        ["make", "all"], 124, purpose="build", timed_out=True)),
    "from_command.general": lambda: _failure(from_command(["./deploy.sh"], 3)),
}

# one message per placeholder choice (and identity that must stay verbatim)
NORMALIZATION_CORPUS: dict[str, str] = {
    "ts": "failed at 2026-11-30T12:34:56Z",
    "uuid": "job 123e4567-e89b-12d3-a456-426614174000 failed",
    "tmp": "cannot write /tmp/tmpa1b2c3/out.log",
    "home": "missing /home/alice/.config/app.toml",
    "int": "retried 17 times",
    "hex": "object 0x7f3a9c2b1d40 freed",
    "ip": "connect to 10.1.2.3 port 5432 refused",
    "duration": "timed out after 30.5s",
    "size": "file is 12.5 MB",
    "id": "request req_8f3kLm2QpX failed",
    "secret": "auth with sk-proj-abcdefghijklmnopqrstuvwx123456 failed",
    "symbol": "undefined reference to 'parse_v2'",
    "module": "No module named 'yaml2'",
    "node_id": "FAILED tests/test_io.py::test_read[case-3]",
    "lint": "E501 line too long",
    "model": "model gpt-4o-2024-08-06 not found",
    "file": "cannot open config_v2.json",
}


def _current() -> tuple[dict[str, Any], dict[str, Any]]:
    signatures = {case: make().signature for case, make in sorted(CORPUS.items())}
    normalized = {case: normalize_message(text)
                  for case, text in sorted(NORMALIZATION_CORPUS.items())}
    return ({"version": SIGNATURE_VERSION, "signatures": signatures},
            {"version": SIGNATURE_VERSION, "normalized": normalized})


def test_regeneration_writes_the_files_and_fails() -> None:
    """FAILCODE_REGEN_GOLDEN=1 writes the golden files, then fails: it never passes itself."""
    if not REGENERATE:
        return
    signatures, normalized = _current()
    GOLDEN_SIGNATURES.write_text(json.dumps(signatures, indent=2) + "\n", encoding="utf-8")
    GOLDEN_NORMALIZED.write_text(json.dumps(normalized, indent=2) + "\n", encoding="utf-8")
    pytest.fail("golden files regenerated: review the diff and run again without "
                "FAILCODE_REGEN_GOLDEN")


@pytest.mark.parametrize("path", [GOLDEN_SIGNATURES, GOLDEN_NORMALIZED], ids=lambda p: p.name)
def test_golden_file_pins_the_current_version(path: Any) -> None:
    """The golden files were made by this SIGNATURE_VERSION (else: regenerate deliberately)."""
    golden = json.loads(path.read_text(encoding="utf-8"))
    assert golden["version"] == SIGNATURE_VERSION, (
        f"SIGNATURE_VERSION is {SIGNATURE_VERSION} but {path.name} pins {golden['version']}: "
        "regenerate with FAILCODE_REGEN_GOLDEN=1 once the new version is deliberate")


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_entry_point_signature_is_pinned(case: str) -> None:
    """Each entry point gives the pinned signature for its corpus case."""
    golden = json.loads(GOLDEN_SIGNATURES.read_text(encoding="utf-8"))
    if golden["version"] != SIGNATURE_VERSION:
        pytest.fail(f"{GOLDEN_SIGNATURES.name} pins another version: regenerate it")
    assert CORPUS[case]().signature == golden["signatures"][case], (
        "a signature changed without a new SIGNATURE_VERSION: bump the version (never "
        "silently regroup history)")


def test_golden_signatures_name_every_case() -> None:
    """The golden file has a signature for every corpus case and no other."""
    golden = json.loads(GOLDEN_SIGNATURES.read_text(encoding="utf-8"))
    assert sorted(golden["signatures"]) == sorted(CORPUS)


@pytest.mark.parametrize("case", sorted(NORMALIZATION_CORPUS))
def test_placeholder_choice_is_pinned(case: str) -> None:
    """Each placeholder choice (and each kept identity) is pinned with the version."""
    golden = json.loads(GOLDEN_NORMALIZED.read_text(encoding="utf-8"))
    if golden["version"] != SIGNATURE_VERSION:
        pytest.fail(f"{GOLDEN_NORMALIZED.name} pins another version: regenerate it")
    assert normalize_message(NORMALIZATION_CORPUS[case]) == golden["normalized"][case]


@pytest.mark.parametrize("case", ["ts", "uuid", "tmp", "home", "int", "hex", "ip", "duration",
                                  "size", "id", "secret"])
def test_each_volatile_message_takes_its_own_placeholder(case: str) -> None:
    """The placeholder named by the case id replaces the volatile token (written out here)."""
    assert f"<{case}>" in normalize_message(NORMALIZATION_CORPUS[case])


def test_exit_code_wins_over_http_status() -> None:
    """With both an exit code and an HTTP status in metadata, the exit code is the status
    component (a command's own status beats the provider status it printed)."""
    both = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "curl"},
                                 metadata={"exit_code": 22, "http_status": 503})
    components = {c.name: c for c in explain_signature(both).components}
    assert components["status"].value == "22"
    only_exit = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "curl"},
                                      metadata={"exit_code": 22})
    only_http = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "curl"},
                                      metadata={"http_status": 503})
    assert both.signature == only_exit.signature != only_http.signature


def test_a_component_changes_the_signature_only_when_it_contributes() -> None:
    """A blocker class counts for policy and architecture failures only."""
    assert (sign("build_error", "cpp.build", "failed", blocker="needs_approval").value
            == sign("build_error", "cpp.build", "failed").value)
    assert (sign("policy_error", "tool.run", "denied", blocker="needs_approval").value
            != sign("policy_error", "tool.run", "denied").value)
