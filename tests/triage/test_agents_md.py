"""``failcode triage --format agents-md`` and ``--fix-file`` (issue 38, item 2): the block's
instructions against the ``--json`` document of the same run, on the real sessions and the lab
fixtures, and the file changes in a real git repository (nothing without ``--apply``, the
user's bytes and line endings kept, a second run a no-op, broken markers exit 2).
"""

from __future__ import annotations

import dataclasses
import json
import re
import string
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from failcode import FC_CATALOG
from failcode.triage import triage
from failcode.triage._result import Tables
from failcode.triage.report._agents_md import FirstParams, block_lines, table
from failcode.triage.report._terminal import safe, sample_paths
from tests._paths import REPO
from tests.triage._data import sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

LAB = REPO / "tests" / "lab" / "fixtures"
MISSING_MODULE = LAB / "mini-swe-agent" / "missing-module" / "session"
MISSING_PROGRAM = LAB / "mini-swe-agent" / "missing-program" / "session"
TRANSIENT = LAB / "claude-code" / "provider-fatal-500" / "session"
USER_TEXT = "# Rules for agents\n\nUse 4 spaces; never commit secrets.\n"
EXTRA = {"code", "message", "remedy", "command", "pip_package"}
"""The names a wording may use besides its code's params (the data file's comment)."""
SECRET = "ghp_" + "Zq8Lw2Vt5Xy7Na3Mb6Pc9Rd1Se4Tf0Ug2Vh"


def _run(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess (one process: the machine is shared)."""
    return subprocess.run([sys.executable, "-m", "failcode", "triage", *map(str, args),
                           "--jobs", "1"], capture_output=True, text=True, cwd=cwd,
                          check=False, timeout=300)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "core.autocrlf=false", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a committed AGENTS.md written by its user."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "AGENTS.md").write_text(USER_TEXT)
    _git(root, "add", "AGENTS.md")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "rules")
    return root


def _block(inputs: Path, *, top: int = 10, status: int = 0) -> list[str]:
    done = _run(inputs, "--format", "agents-md", "--top", top)
    assert done.returncode == status, done.stderr
    return done.stdout.splitlines()


def _bullets(block: list[str]) -> list[str]:
    return [line for line in block if line.startswith("- ")]


def _first_params(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per signature, the params of its first failure in the document (sessions in order)."""
    first: dict[str, dict[str, Any]] = {}
    for session in document["sessions"]:
        for entry in session["failures"]:
            first.setdefault(entry["failure"]["signature"], entry["failure"]["params"])
    return first


def _names(line: str, finding: dict[str, Any], params: dict[str, Any]) -> bool:
    """Whether an instruction names the finding: a value of its params as a code span (or,
    three characters or more, as text in a message), or its remedy."""
    values = [safe(value) for value in params.values()]
    return (any(f"`{value.replace('`', chr(39))}`" in line for value in values)
            or any(value in line for value in values if len(value) > 2)
            or (bool(finding["remedy"]) and safe(finding["remedy"]) in line))


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _worded(finding: dict[str, Any], params: dict[str, Any]) -> bool:
    """Whether the table words the finding (a wording whose params the finding has), or the
    finding has a remedy to fall back on."""
    templates = table()["templates"]
    keys = [f"{finding['code']} {name}={value}" for name, value in sorted(params.items())]
    template = next((templates[key] for key in [*keys, finding["code"]] if key in templates), "")
    fits = bool(template) and _placeholders(template) <= set(params) | EXTRA
    return fits or bool(finding["remedy"])


def _check_against_json(inputs: Path) -> list[str]:
    """The block of a run checked against its --json document; returns the bullets."""
    done = _run(inputs, "--json")
    document = json.loads(done.stdout)
    block = _block(inputs, top=1000, status=done.returncode)
    acts, person = set(table()["acts"]["categories"]), set(table()["acts"]["person"])
    findings = document["findings"]
    eligible = [f for f in findings if f["category"] in acts and f["code"] not in person]
    others = [f for f in findings if f not in eligible]
    first = _first_params(document)
    assert block[0] == "<!-- failcode:begin -->"
    assert block[-1] == "<!-- failcode:end -->"
    assert "--format agents-md" in block[1]
    bullets = _bullets(block)
    assert len(bullets) == len(set(bullets)) == len(block) - 4  # header, blank line, markers
    assert bullets, f"no instruction from {len(eligible)} findings the agent acts on"
    # each bullet names the next worded finding the agent or the environment acts on
    worded = [f for f in eligible if _worded(f, first[f["signatures"][0]])]
    at = 0
    for line in bullets:
        while at < len(worded) and not _names(line, worded[at],
                                              first[worded[at]["signatures"][0]]):
            at += 1
        assert at < len(worded), f"{line!r} names no finding after the one ranked {at}"
        at += 1
    # every such finding with a wording or a remedy is named (a duplicate by an earlier line)
    for finding in worded:
        params = first[finding["signatures"][0]]
        assert any(_names(line, finding, params) for line in bullets), finding["message"]
    # the retry's, a person's and a developer's findings get no line
    for finding in others:
        assert not any(safe(finding["message"]) in line for line in bullets), finding
    return bullets


@pytest.mark.parametrize("corpus", ["sessions", "sessions-2", "lab"])
def test_the_instructions_name_what_the_findings_name(corpus: str) -> None:
    """On the real corpora and every lab fixture: one line per finding the agent or the
    environment acts on, in rank order, naming what the finding names."""
    inputs = {"sessions": sessions_dir, "sessions-2": sessions_2_dir,
              "lab": lambda: LAB}[corpus]()
    _check_against_json(inputs)


def test_top_keeps_the_first_lines() -> None:
    """``--top N``: the first N lines of the longer block, no more."""
    inputs = sessions_2_dir()
    status = _run(inputs, "--format", "agents-md", "--top", 1).returncode
    every = _bullets(_block(inputs, top=1000, status=status))
    assert len(every) > 3
    assert _bullets(_block(inputs, top=3, status=status)) == every[:3]


def test_a_block_without_instruction_says_so() -> None:
    """Only a provider's failures: the block says in one line that it has no instruction."""
    document = json.loads(_run(TRANSIENT, "--json").stdout)
    assert document["findings"]
    assert {f["category"] for f in document["findings"]} <= {"transient", "user", "defect"}
    block = _block(TRANSIENT)
    assert len(block) == 4
    assert block[2] == table()["block"]["none"].format(findings=len(document["findings"]))
    assert not block[2].startswith("- ")


def test_a_run_without_findings_says_so() -> None:
    """A session in which nothing failed (its probes found nothing): the block's one line says
    the run has no failure, not that it has findings without an instruction."""
    inputs = LAB / "mini-swe-agent" / "probes-no-output" / "session"
    document = json.loads(_run(inputs, "--json").stdout)
    assert document["sessions"]
    assert document["findings"] == []
    block = _block(inputs)
    assert block[2:] == [table()["block"]["clean"], "<!-- failcode:end -->"]


def test_fix_file_without_apply_changes_nothing(repo: Path) -> None:
    """``--fix-file`` shows the diff that appends the block, and leaves the file alone."""
    path = repo / "AGENTS.md"
    before = path.stat()
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", cwd=repo)
    assert done.returncode == 0, done.stderr
    added = [line[1:] for line in done.stdout.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added == ["", *_block(MISSING_MODULE)]
    assert done.stdout.startswith("--- a/AGENTS.md\n+++ b/AGENTS.md\n")
    assert "--apply" in done.stderr
    assert path.read_text() == USER_TEXT
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert _git(repo, "status", "--porcelain") == ""


def test_apply_writes_then_is_a_no_op(repo: Path) -> None:
    """``--apply``: the diff shown is the change git sees, the mode is kept; a second run
    prints no change and leaves the bytes and the mtime alone."""
    path = repo / "AGENTS.md"
    path.chmod(0o640)
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == USER_TEXT + "\n" + "\n".join(_block(MISSING_MODULE)) + "\n"
    assert (path.stat().st_mode & 0o777) == 0o640
    shown = [line for line in done.stdout.splitlines() if line.startswith(("+", "-", " "))]
    seen = [line for line in _git(repo, "diff").splitlines()[4:]
            if line.startswith(("+", "-", " "))]
    assert shown[2:] == seen
    assert sorted(p.name for p in repo.iterdir()) == [".git", "AGENTS.md"]  # no temporary
    written, stamp = path.read_bytes(), path.stat().st_mtime_ns
    again = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""
    assert "no change" in again.stderr
    assert path.read_bytes() == written
    assert path.stat().st_mtime_ns == stamp


def test_a_missing_file_is_created(repo: Path) -> None:
    """A fix file that does not exist: the diff from /dev/null, then the block alone."""
    done = _run(MISSING_PROGRAM, "--fix-file", "CLAUDE.md", "--apply", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- /dev/null\n+++ b/CLAUDE.md\n")
    assert (repo / "CLAUDE.md").read_text() == "\n".join(_block(MISSING_PROGRAM)) + "\n"


def test_a_blank_line_at_the_end_is_not_doubled(repo: Path) -> None:
    """A file that ends with a blank line gets the block right after it."""
    path = repo / "AGENTS.md"
    path.write_text(USER_TEXT + "\n")
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == USER_TEXT + "\n" + "\n".join(_block(MISSING_MODULE)) + "\n"


def test_the_text_outside_the_markers_is_kept_byte_for_byte(repo: Path) -> None:
    """A CRLF file with a stale block between the user's text: the block is replaced, every
    other byte is kept, and every line of the new block ends with CRLF."""
    before = "# Rules\r\n\r\nUse tabs.\r\n\r\n"
    after = "\r\n## More\r\nKeep this\ttab and this \u00e9, no newline at the end"
    stale = "<!-- failcode:begin -->\r\nold header\r\n- old line\r\n<!-- failcode:end -->"
    path = repo / "AGENTS.md"
    path.write_bytes((before + stale + after).encode())
    done = _run(MISSING_PROGRAM, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 0, done.stderr
    block = "\r\n".join(_block(MISSING_PROGRAM))
    assert path.read_bytes() == (before + block + after).encode()
    assert "-- old line" in done.stdout  # the removed line, in the diff
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b"")


def test_appending_to_a_crlf_file_keeps_crlf(repo: Path) -> None:
    """A CRLF file without a block and without a final line break: one blank line, then the
    block, all in CRLF."""
    path = repo / "AGENTS.md"
    path.write_bytes(b"# Rules\r\nBe brief.")
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 0, done.stderr
    block = "\r\n".join(_block(MISSING_MODULE))
    assert path.read_bytes() == f"# Rules\r\nBe brief.\r\n\r\n{block}\r\n".encode()
    assert "\\ No newline at end of file" in done.stdout


@pytest.mark.parametrize(("text", "line"), [
    ("# Rules\n\n<!-- failcode:begin -->\n- a line\n", 3),
    ("x\n".join(["<!-- failcode:begin -->\n<!-- failcode:end -->\n"] * 2), 4),
    ("x\ny\n<!-- failcode:end -->\n", 3),
    ("<!-- failcode:begin -->\n<!-- failcode:begin -->\n<!-- failcode:end -->\n", 2),
])
def test_broken_markers_are_exit_2_naming_the_line(repo: Path, text: str, line: int) -> None:
    """A begin without an end, two blocks, an end without a begin: exit 2, the file and the
    line named, the file untouched, no traceback."""
    path = repo / "AGENTS.md"
    path.write_text(text)
    stamp = path.stat().st_mtime_ns
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 2, done.stderr
    assert f"error: AGENTS.md:{line}: " in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert path.read_text() == text
    assert path.stat().st_mtime_ns == stamp


def test_an_unwritable_file_is_a_clear_error(repo: Path) -> None:
    """A file the atomic write cannot replace (its temporary file's name would be too long
    for the file system, even for root): one line naming it, exit 1, the file untouched."""
    path = repo / ("a" * 250 + ".md")
    path.write_text(USER_TEXT)
    done = _run(MISSING_MODULE, "--fix-file", path.name, "--apply", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert f"error: cannot write {path.name}: " in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text() == USER_TEXT
    assert sorted(p.name for p in repo.iterdir()) == sorted([".git", "AGENTS.md", path.name])


def test_a_file_that_is_not_text_is_exit_2(repo: Path) -> None:
    """A fix file that is not UTF-8: named with the byte, exit 2, untouched."""
    path = repo / "AGENTS.md"
    path.write_bytes(b"# R\xe9gles\n")
    done = _run(MISSING_MODULE, "--fix-file", "AGENTS.md", "--apply", cwd=repo)
    assert done.returncode == 2
    assert "error: cannot read AGENTS.md: not UTF-8 text (byte 3)" in done.stderr
    assert path.read_bytes() == b"# R\xe9gles\n"


@pytest.mark.parametrize("args", [["--apply"], ["--fix-file", "AGENTS.md", "--json"],
                                  ["--fix-file", "AGENTS.md", "--format", "markdown"]])
def test_usage_errors(repo: Path, args: list[str]) -> None:
    """``--apply`` without ``--fix-file``, ``--fix-file`` with another stdout: usage errors,
    nothing read or written."""
    done = _run(MISSING_MODULE, *args, cwd=repo)
    assert done.returncode == 2
    assert "Usage:" in done.stderr
    assert args[-1] in done.stderr.splitlines()[-1] or args[0] in done.stderr
    assert (repo / "AGENTS.md").read_text() == USER_TEXT


def test_a_secret_in_a_command_is_redacted_end_to_end(tmp_path: Path) -> None:
    """A token in a real session's command never reaches the block (nor the fix file)."""
    source = next(MISSING_PROGRAM.rglob("*.traj.json"))
    text = source.read_text()
    assert text.count("nonexistent-tool build") > 1
    session = tmp_path / "secret.traj.json"
    session.write_text(text.replace("nonexistent-tool build",
                                    f"GITHUB_TOKEN={SECRET} nonexistent-tool build"))
    block = "\n".join(_block(session))
    assert SECRET not in block
    assert "`GITHUB_TOKEN=<secret> nonexistent-tool build`" in block
    done = _run(session, "--fix-file", tmp_path / "AGENTS.md", "--apply")
    assert SECRET not in done.stdout + (tmp_path / "AGENTS.md").read_text()


def test_the_block_redacts_what_a_reader_let_through() -> None:
    """A secret in a failure's command and params (as a reader that missed it would pass
    them on) is redacted by the block itself."""
    session = next(iter(triage([next(MISSING_PROGRAM.rglob("*.traj.json"))]).sessions))
    entry = session.failures[0]
    assert entry.failure.code == "FC-CMD-001"
    failure = msgspec.structs.replace(entry.failure, params={"program": f"tool {SECRET}"})
    session.failures[0] = dataclasses.replace(
        entry, failure=failure, evidence=f"curl -H 'Authorization: Bearer {SECRET}' x")
    tables = Tables()
    tables.add(session)
    params = FirstParams(tables.findings)
    params.add(session)
    block = "\n".join(block_lines(tables.findings.ranked(), params, top=10))
    assert SECRET not in block
    assert block.count("<secret>") == 2


def test_every_wording_fits_its_code() -> None:
    """The table's keys are codes of the categories that get a line (or a code and one param
    value), and each wording uses only that code's params and the documented names."""
    acts = set(table()["acts"]["categories"])
    specs = {spec.code: spec for spec in FC_CATALOG}
    for key, template in table()["templates"].items():
        used = _placeholders(template)
        if key == "fallback":
            assert used <= EXTRA
            continue
        code, _, value = key.partition(" ")
        spec = specs[code]
        assert str(spec.category) in acts, key
        params = set(re.findall(r"{(\w+)}", spec.message))
        assert used <= params | EXTRA, (key, used - params - EXTRA)
        if value:
            assert value.split("=", 1)[0] in params, key
    assert set(table()["acts"]["person"]) <= set(specs)


def test_the_data_file_is_not_a_sample_session() -> None:
    """The table sits beside the shipped sessions without being triaged as one."""
    assert sample_paths()
    assert all(not label.endswith(".toml") for _, label in sample_paths())
