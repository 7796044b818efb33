"""What to fix first (``failcode.triage._findings``), the summary built on it, drill-down,
comparison, ``--fail-on``, Markdown and ``explain`` of a signature.

Real parts: the interpreter running this suite and pytest for the failures whose headlines
and folding are checked, the real sessions of ``../shared/data/agent-sessions/`` for the
report's first screen and the comparison of two halves of that folder, markdown-it-py for the
Markdown, a real SQLite store for ``explain --store``.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import jsonschema
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from failcode import FC, Failure, from_command
from failcode.cli import main
from failcode.triage._findings import Findings, headline
from failcode.triage._result import FailureEntry, Loop, SessionResult
from failcode.triage.analysis._compare import compare
from failcode.triage.report._stream import Summary
from tests._paths import REPO
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False,
                          env=env, timeout=120)


def _failure(argv: list[str], cwd: Path, purpose: str | None = None) -> Failure:
    done = _run(argv, cwd)
    found = from_command(argv, done.returncode, done.stdout, done.stderr, purpose=purpose)
    assert isinstance(found, Failure), done
    return found


def _session(name: str, entries: list[tuple[int, Failure]], loops: list[Loop] | None = None,
             steps: int = 20) -> SessionResult:
    failures = [FailureEntry(step, "command", f"cmd {step}", failure)
                for step, failure in entries]
    return SessionResult(name, f"{name}.traj.json", "mini-swe-agent", steps, "submitted",
                         None, failures, [], loops or [])


# -- headlines --------------------------------------------------------------------------------
def test_a_generic_sentence_gets_the_exception_the_detail_names(tmp_path: Path) -> None:
    """"The command python exited with status 1." says nothing: the headline adds the
    exception line of its real traceback."""
    (tmp_path / "app.py").write_text(
        "class DialectError(Exception):\n    pass\n\n"
        "raise DialectError('Dialect must be expanded before use')\n")
    failure = _failure([sys.executable, "app.py"], tmp_path, "general")
    assert failure.message == "The command python exited with status 1."
    assert headline(failure) == ("The command python exited with status 1: "
                                 "DialectError: Dialect must be expanded before use")


def test_a_specific_sentence_is_kept_as_it_is(tmp_path: Path) -> None:
    """A code whose sentence names what failed keeps it (the module is in it)."""
    failure = _failure([sys.executable, "-c", "import fc_not_installed_anywhere"], tmp_path)
    assert failure.code == FC.CMD_MISSING_MODULE.value
    assert headline(failure) == failure.message == (
        "The module fc_not_installed_anywhere is not installed.")


# -- folding, cost and rank -------------------------------------------------------------------
def test_failing_tests_of_one_template_fold_into_one_finding(tmp_path: Path) -> None:
    """Two real pytest failures of different tests: two signatures, one finding."""
    (tmp_path / "test_calc.py").write_text(textwrap.dedent("""
        def test_add():
            assert 1 + 1 == 3

        def test_sub():
            assert 1 - 1 == 2
    """))
    first = _failure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "test_calc.py::test_add"], tmp_path)
    second = _failure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                       "test_calc.py::test_sub"], tmp_path)
    assert first.signature != second.signature
    findings = Findings()
    findings.add(_session("a", [(1, first), (3, second)]))
    (finding,) = findings.ranked()
    assert (finding.count, finding.sessions, finding.variants) == (2, 1, 2)


def test_cost_counts_failing_steps_and_the_tries_inside_a_loop(tmp_path: Path) -> None:
    """A loop at steps 2, 4, 6 costs 2..6 (five steps); a loop whose steps lie far apart
    costs only its own steps; the same step is counted once."""
    failure = _failure([sys.executable, "-c", "import fc_not_installed_anywhere"], tmp_path)
    close = _session("close", [(2, failure), (4, failure), (6, failure)],
                     [Loop(failure.signature, (2, 4, 6))])
    far = _session("far", [(1, failure), (10, failure), (19, failure)],
                   [Loop(failure.signature, (1, 10, 19))])
    findings = Findings()
    findings.add(close)
    assert findings.ranked()[0].cost == 5
    findings.add(far)
    assert findings.ranked()[0].cost == 5 + 3


def test_findings_rank_by_cost_then_failures(tmp_path: Path) -> None:
    """The costlier finding first, whatever the order they were seen in."""
    cheap = _failure([sys.executable, "-c", "import fc_cheap_missing"], tmp_path)
    costly = _failure([sys.executable, "-c", "raise SystemExit('fc boom')"], tmp_path)
    findings = Findings()
    findings.add(_session("s", [(0, cheap), (5, costly), (6, costly), (7, costly)],
                          [Loop(costly.signature, (5, 6, 7))]))
    ranked = findings.ranked()
    assert [f.code for f in ranked] == [costly.code, cheap.code]
    assert [entry["rank"] for entry in findings.to_list()] == [1, 2]


# -- the report on real sessions ----------------------------------------------------------------
def _first_screen(args: list[str]) -> list[str]:
    """The first 24 lines ``failcode triage`` prints on an 80-column terminal (a real pty)."""
    parent, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", *args], stdout=child,
                          stderr=subprocess.DEVNULL, env=env, check=False, timeout=600)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(parent)
    assert done.returncode == 0
    return b"".join(chunks).decode().replace("\r\n", "\n").split("\n")[:24]


def test_the_first_screen_shows_totals_and_what_to_fix_first() -> None:
    """80 x 24 on the shared sessions: the totals line, then findings with their message,
    who acts, remedy and an example; no line wider than the terminal."""
    screen = _first_screen([str(sessions_dir())])
    text = "\n".join(screen)
    assert screen[0].startswith("failcode triage: ")
    assert " failing steps in " in screen[1]
    assert "What to fix first" in text
    assert text.count(" · cost ") >= 4
    assert text.count("    who acts: ") >= 4
    # a fix that does not fit beside who acts gets a line of its own
    assert " · fix: " in text or "\n    fix: " in text
    for index, line in enumerate(screen[:-1]):
        if line.startswith("    who acts: ") and " · fix: " not in line and screen[
                index + 1].startswith("    fix: "):
            assert len(line) + len(screen[index + 1]) > 80
    assert text.count("e.g. ") >= 4
    assert all(len(line.replace("\x1b[1m", "").replace("\x1b[0m", "")) <= 80
               for line in screen)


def test_piped_output_is_plain_and_never_wraps_a_row() -> None:
    """Piped: no box drawing, no escape sequences, each row one line."""
    done = _run([sys.executable, "-m", "failcode", "triage", str(sessions_dir())], REPO)
    assert done.returncode == 0
    assert not set(done.stdout) & set("─│┃━┏┓└┘├┤╭╮╰╯\x1b")
    rows = [line for line in done.stdout.splitlines() if line.startswith("    e.g. ")]
    assert rows
    assert all(".json" in row or ".md" in row or ".log" in row or ".jsonl" in row
               for row in rows)


def test_json_has_the_ranked_findings() -> None:
    """--json gains findings (ranked, with cost, variants and examples); it validates."""
    run = CliRunner().invoke(main, ["triage", "--json"])
    document = json.loads(run.output)
    jsonschema.validate(document, SCHEMA)
    costs = [finding["cost"] for finding in document["findings"]]
    assert costs == sorted(costs, reverse=True)
    assert sum(f["count"] for f in document["findings"]) == sum(
        len(s["failures"]) for s in document["sessions"])


# -- drill-down ---------------------------------------------------------------------------------
def test_a_finding_lists_every_occurrence() -> None:
    """--finding N: as many occurrences as the finding has failures."""
    document = json.loads(CliRunner().invoke(main, ["triage", "--json"]).output)
    first = document["findings"][0]
    run = CliRunner().invoke(main, ["triage", "--finding", "1"])
    assert run.exit_code == 0, run.output
    assert f"Occurrences ({first['count']})" in run.output
    assert run.output.count("  signature: ") == first["count"]


def test_a_signature_lists_only_its_occurrences() -> None:
    """--signature SIG: that variant's occurrences only."""
    document = json.loads(CliRunner().invoke(main, ["triage", "--json"]).output)
    signature = document["signatures"][0]
    run = CliRunner().invoke(main, ["triage", "--signature", signature["signature"]])
    assert run.exit_code == 0, run.output
    assert run.output.count(f"  signature: {signature['signature']}") == signature["count"]
    assert run.output.count("  signature: ") == signature["count"]


def test_a_session_timeline_has_one_line_per_step_that_failed() -> None:
    """--session NAME: its end, a line per failing step with code and loop membership."""
    document = json.loads(CliRunner().invoke(main, ["triage", "--json"]).output)
    session = next(s for s in document["sessions"] if s["loops"])
    run = CliRunner().invoke(main, ["triage", "--session", session["session"]])
    assert run.exit_code == 0, run.output
    assert run.output.startswith(f"Session {session['session']} ")
    for entry in session["failures"]:
        assert any(line.lstrip().startswith(f"{entry['step']} {entry['failure']['code']}")
                   for line in run.output.splitlines())
    assert "· loop 1" in run.output


@pytest.mark.parametrize("args", [["--finding", "999"], ["--signature", "x:y:z:none:0"],
                                  ["--session", "no-such-session"]])
def test_a_drill_down_into_nothing_is_a_usage_error(args: list[str]) -> None:
    run = CliRunner().invoke(main, ["triage", *args])
    assert run.exit_code == 2
    assert "no " in run.output
    assert "Traceback" not in run.output


# -- comparison ---------------------------------------------------------------------------------
def _halves() -> tuple[list[str], list[str]]:
    folders = sorted(str(p) for p in (sessions_dir() / "mini-swe-agent").iterdir()
                     if p.is_dir())
    return folders[: len(folders) // 2], folders[len(folders) // 2:]


def test_two_halves_of_the_shared_sessions_show_new_and_gone_findings() -> None:
    """One half against the other: findings only one half has are new or gone."""
    old, new = _halves()
    run = CliRunner().invoke(main, ["triage", *new, *[a for p in old for a in ("--baseline", p)],
                                    "--json"])
    assert run.exit_code == 0, run.output
    document = json.loads(run.output)
    jsonschema.validate(document, SCHEMA)
    assert document["sessions"]  # the new run's sessions stream as without a baseline
    statuses = {change["status"] for change in document["comparison"]["changes"]}
    assert {"new", "gone"} <= statuses
    text = CliRunner().invoke(main, ["triage", *new,
                                     *[a for p in old for a in ("--baseline", p)]]).output
    assert "Compared with the baseline" in text
    assert "  new   " in text
    assert "  gone  " in text


def test_a_run_against_itself_changes_nothing_and_passes_every_gate() -> None:
    """The same logs as baseline: every finding same, --fail-on new and regressed exit 0."""
    old, _ = _halves()
    for gate in ("new", "regressed"):
        run = CliRunner().invoke(main, ["triage", *old, *[a for p in old
                                                         for a in ("--baseline", p)],
                                        "--fail-on", gate])
        assert run.exit_code == 0, run.output
        assert "no finding changed" in run.output


def test_fail_on_new_exits_1_when_the_run_has_a_new_finding() -> None:
    old, new = _halves()
    run = CliRunner().invoke(main, ["triage", *new, *[a for p in old for a in ("--baseline", p)],
                                    "--fail-on", "new"])
    assert run.exit_code == 1


def test_fail_on_needs_a_baseline_except_any() -> None:
    assert CliRunner().invoke(main, ["triage", "--fail-on", "new"]).exit_code == 2
    assert CliRunner().invoke(main, ["triage", "--fail-on", "any"]).exit_code == 1


def test_small_counts_are_not_significant(tmp_path: Path) -> None:
    """One session of ten against none of ten is new, but within noise; eight is not."""
    failure = _failure([sys.executable, "-c", "import fc_not_installed_anywhere"], tmp_path)

    def run(hit: int) -> Summary:
        summary = Summary()
        for index in range(10):
            summary.add(_session(f"s{index}", [(0, failure)] if index < hit else []))
        return summary

    (one,) = compare(run(1), run(0)).changes
    assert (one.status, one.significant) == ("new", False)
    (eight,) = compare(run(8), run(0)).changes
    assert (eight.status, eight.significant) == ("new", True)


# -- Markdown -----------------------------------------------------------------------------------
def test_markdown_renders_as_tables_on_a_gfm_renderer() -> None:
    """--format markdown: a real CommonMark + GFM tables renderer makes tables of it; the
    finding rows stay rows (a ``|`` from a log is escaped)."""
    old, new = _halves()
    run = CliRunner().invoke(main, ["triage", *new, *[a for p in old for a in ("--baseline", p)],
                                    "--format", "markdown"])
    assert run.exit_code == 0, run.output
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(run.output)
    assert sum(token.type == "table_open" for token in tokens) >= 3
    html = parser.render(run.output)
    assert "<th>finding</th>" in html
    rows = [line for line in run.output.splitlines() if line.startswith("| 1 |")]
    assert rows
    assert rows[0].count(" | ") + 2 == 7 + 1


# -- explain ------------------------------------------------------------------------------------
def test_explain_takes_a_signature_and_a_store(tmp_path: Path) -> None:
    """explain SIGNATURE: its parts and the codes it can come from; with --store, what the
    store knows of it (its code and the parts recomputed from a stored failure)."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    document = json.loads(CliRunner().invoke(main, ["triage", "--json"]).output)
    signature = document["signatures"][0]
    assert CliRunner().invoke(main, ["triage", "--store", url]).exit_code == 0
    run = CliRunner().invoke(main, ["explain", signature["signature"]])
    assert run.exit_code == 0, run.output
    assert f"  class     {signature['signature'].split(':')[2]}" in run.output
    assert signature["code"] in run.output
    stored = CliRunner().invoke(main, ["explain", signature["signature"], "--store", url])
    assert stored.exit_code == 0, stored.output
    assert f"{signature['code']}, {signature['count']} events" in stored.output
    assert "parts recomputed from a stored failure" in stored.output


# -- the command line -----------------------------------------------------------------------------
def test_a_mistyped_subcommand_gets_a_suggestion() -> None:
    for argv, nearest in ((["triag"], "triage"), (["store", "diagnostcs"], "diagnostics")):
        run = CliRunner().invoke(main, argv)
        assert run.exit_code == 2
        assert "Did you mean" in run.output
        assert nearest in run.output


def test_report_to_without_paths_sends_no_sample(tmp_path: Path) -> None:
    """--report-to with no PATHS nor --home: a usage error (exit 2) saying to name them, and
    nothing reaches the service (the shipped sample is a demo, never a team's data)."""
    import http.server
    import threading

    from failcode.triage.report._terminal import sample_paths

    received: list[str] = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"received": 0, "new": 0, "duplicates": 0, "rejected": 0}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    env = {"FAILCODE_KEY": "fc_ingest_test", "HOME": str(tmp_path)}
    try:
        run = CliRunner().invoke(main, ["triage", "--report-to", url], env=env)
        nothing = list(received)
        named = CliRunner().invoke(main, ["triage", str(sample_paths()[0][0]),
                                          "--report-to", url], env=env)
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    assert run.exit_code == 2, run.output
    assert "--home" in run.output
    assert "never sent" in run.output
    assert nothing == []
    assert named.exit_code == 0, named.output  # the listener does hear an upload
    assert received


def test_dash_reads_standard_input_and_a_file_twice_is_read_once() -> None:
    """``-`` triages what stdin holds; the same file named twice is one input."""
    from failcode.triage.report._terminal import sample_paths

    path = str(sample_paths()[0][0])
    with open(path, "rb") as handle:  # noqa: PTH123 - the file as bytes for stdin
        data = handle.read()
    piped = CliRunner().invoke(main, ["triage", "-", "--json"], input=data)
    assert piped.exit_code == 0, piped.output
    document = json.loads(piped.output)
    assert [item["path"] for item in document["inputs"]] == ["<stdin>"]
    named = json.loads(CliRunner().invoke(main, ["triage", path, "--json"]).output)
    assert document["signatures"] == named["signatures"]
    twice = json.loads(CliRunner().invoke(main, ["triage", path, path, "--json"]).output)
    assert len(twice["inputs"]) == 1


# -- models and agent versions ------------------------------------------------------------------
@pytest.mark.parametrize(("agent", "model", "version"), [
    ("claude-code", "claude-sonnet-4-5", "2.1.332"),
    ("codex", "stub-model", "0.171.0"),
    ("gemini-cli", "gemini-2.5-flash", None),
    ("mini-swe-agent", "openai/stub-model", "2.4.6"),
    ("openhands", "openai/stub-model", None),
])
def test_each_reader_keeps_the_model_and_version_its_log_records(
        agent: str, model: str, version: str | None) -> None:
    """The lab's real runs: the model and the agent's version where the format keeps them."""
    from failcode.triage import triage

    folder = REPO / "tests" / "lab" / "fixtures" / agent / "missing-module" / "session"
    sessions = triage([folder]).sessions
    assert sessions
    assert {(s.model, s.agent_version) for s in sessions} == {(model, version)}


def test_the_summary_breaks_sessions_down_by_model() -> None:
    run = CliRunner().invoke(main, ["triage", str(sessions_dir() / "mini-swe-agent")])
    assert "By model (where the log records it)" in run.output
    assert "deepseek/deepseek-chat" in run.output
    assert "By agent version" in run.output
