"""A session's total cost as its log records it (``recorded_usd``: the readers' "Cost" rules).

Every real file of the formats that write one total per session (Claude Code's stream-json,
mini-swe-agent, SWE-agent, OpenHands' records, Harbor's ATIF trials, aider's chat history) in
both corpora, and the lab's fixtures of those formats, go through ``failcode triage --json``
once; each session's ``recorded_usd`` is checked against the total this file reads from the
file with its own few lines of JSON or text reading (never failcode's readers): 0 (nothing
priced) and no total are null. The rows per model and agent version add the sessions' totals
up. Copies of real files with the total changed to a value no other field holds show the
total is what triage read, and that no failure is charged it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pytest

from tests._paths import REPO
from tests.triage._data import sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

LAB = REPO / "tests" / "lab" / "fixtures"
ODD = 12.345678
"""A total no real file records, nor any sum of a file's other prices."""

Totals = dict[tuple[str, str], float | None]
"""The total each session's file records, by (path, session name); None: none, or 0."""


def _triage(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", *args, "--no-cache"],
                          capture_output=True, text=True, check=False)
    assert done.returncode in (0, 2), done.stderr
    return done


def _document(paths: list[Path]) -> dict[str, Any]:
    return json.loads(_triage(*map(str, paths), "--json").stdout)  # type: ignore[no-any-return]


def _price(value: object) -> float | None:
    """A recorded total as the document gives it: a positive number, rounded to 6 places."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return round(float(value), 6)


def _files(pattern: str, *roots: Path) -> list[Path]:
    found = sorted(p for root in roots if root.is_dir() for p in root.rglob(pattern))
    assert found, pattern
    return found


# each format's own reading ------------------------------------------------------------------


def _stream_totals(path: Path) -> Totals:
    """Per session id: the last result line's ``total_cost_usd``."""
    out: Totals = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        for entry in value if isinstance(value, list) else [value]:
            if not isinstance(entry, dict) or not isinstance(entry.get("session_id"), str):
                continue
            key = (str(path), entry["session_id"])
            out.setdefault(key, None)
            if entry.get("type") == "result":
                out[key] = _price(entry.get("total_cost_usd"))
    return out


def _stats_total(path: Path) -> Totals:
    """mini-swe-agent and SWE-agent: ``info.model_stats.instance_cost``, one session named by
    ``instance_id`` (in ``info`` for SWE-agent), else the file's stem."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "attempts" not in data  # a retry agent's file: none in the corpora
    info = data.get("info") or {}
    name = data.get("instance_id") or info.get("instance_id")
    if not isinstance(name, str):
        name = path.name.removesuffix(".json").removesuffix(".traj")
    return {(str(path), name): _price((info.get("model_stats") or {}).get("instance_cost"))}


def _openhands_totals(path: Path) -> Totals:
    """An ``output.jsonl``: each record's ``metrics.accumulated_cost``; any other file of
    OpenHands records none."""
    if path.name != "output.jsonl":
        return {}
    return {(str(path), record["instance_id"]): _price(
                (record.get("metrics") or {}).get("accumulated_cost"))
            for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _atif_total(path: Path) -> Totals:
    """A trajectory's ``final_metrics.total_cost_usd``, else its trial result's
    ``agent_result.cost_usd``; named by the trial."""
    data = json.loads(path.read_text(encoding="utf-8"))
    result_path = path.parent.parent / "result.json"
    result = json.loads(result_path.read_text(encoding="utf-8")) if result_path.is_file() else {}
    total = _price((data.get("final_metrics") or {}).get("total_cost_usd")) or _price(
        (result.get("agent_result") or {}).get("cost_usd"))
    return {(str(path), result.get("trial_name") or data["session_id"]): total}


AIDER_COST = re.compile(r"^> Tokens: .*Cost: \$[\d.]+ (?:message|request), \$([\d.]+) session")


def _aider_totals(path: Path) -> dict[tuple[str, str], list[float | None]]:
    """Per run (``# aider chat started at <time>``, named by the time): the last ``Tokens:``
    line's session cost, in file order."""
    out: dict[tuple[str, str], list[float | None]] = defaultdict(list)
    current: list[float | None] | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("# aider chat started at "):
            current = out[(str(path), line.removeprefix("# aider chat started at ")[:19])]
            current.append(None)
        elif current is not None and (found := AIDER_COST.match(line)):
            current[-1] = _price(float(found.group(1)))
    return out


# the corpora, triaged once ------------------------------------------------------------------


def _stream_files() -> list[Path]:
    return (_files("claude-code.txt", sessions_2_dir() / "claude-stream-json")
            + _files("stream.jsonl", LAB / "claude-code"))


def _mini_files() -> list[Path]:
    return (_files("*.traj.json", sessions_dir() / "mini-swe-agent",
                   sessions_2_dir() / "mini-swe-agent")
            + _files("lab.traj.json", LAB / "mini-swe-agent"))


def _swe_files() -> list[Path]:
    return _files("*.traj", sessions_dir() / "swe-agent", sessions_2_dir() / "swe-agent")


def _openhands_dir() -> Path:
    return sessions_dir() / "openhands"


def _atif_files() -> list[Path]:
    return _files("trajectory.json", sessions_2_dir() / "harbor-atif")


def _aider_files() -> list[Path]:
    return [p for p in _files("*.md", sessions_dir() / "aider", sessions_2_dir() / "aider",
                              LAB / "aider")
            if p.name not in ("SOURCES.md", "meta.json")]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The ``--json`` document of every file of these formats."""
    return _document([*_stream_files(), *_mini_files(), *_swe_files(), _openhands_dir(),
                      LAB / "openhands", *_atif_files(), *_aider_files()])


def _expected(document: dict[str, Any]) -> list[tuple[dict[str, Any], float | None]]:
    """Every session of the document with the total its file records (the readings above;
    OpenHands' files other than records and aider's text before a heading: none)."""
    totals: Totals = {}
    for path in _stream_files():
        totals |= _stream_totals(path)
    for path in [*_mini_files(), *_swe_files()]:
        totals |= _stats_total(path)
    for path in _files("*", _openhands_dir()):
        totals |= _openhands_totals(path)
    for path in _atif_files():
        totals |= _atif_total(path)
    runs: dict[tuple[str, str], list[float | None]] = {}
    for path in _aider_files():
        runs |= _aider_totals(path)
    out = []
    for session in document["sessions"]:
        key = (session["path"], session["session"])
        if session["format"] == "aider":
            out.append((session, runs[key].pop(0) if key in runs else None))
        elif session["format"] == "openhands":
            out.append((session, totals.get(key)))
        else:
            assert key in totals, key
            out.append((session, totals[key]))
    return out


def _sessions(document: dict[str, Any], fmt: str) -> list[dict[str, Any]]:
    found = [s for s in document["sessions"] if s["format"] == fmt]
    assert found, fmt
    return found


def _check(document: dict[str, Any], fmt: str) -> tuple[int, int]:
    """Each session's ``recorded_usd`` of the format is its file's total; how many sessions
    recorded one and how many none."""
    pairs = [(s, total) for s, total in _expected(document) if s["format"] == fmt]
    assert pairs, fmt
    for session, total in pairs:
        assert session["recorded_usd"] == total, (session["path"], session["session"])
    recorded = sum(total is not None for _, total in pairs)
    return recorded, len(pairs) - recorded


def _zero_totals(paths: list[Path]) -> int:
    """How many of the files' ``info.model_stats.instance_cost`` are 0."""
    return sum(((json.loads(p.read_text(encoding="utf-8")).get("info") or {}).get(
        "model_stats") or {}).get("instance_cost") == 0 for p in paths)


def test_stream_json_sessions_record_the_last_result_total(document: dict[str, Any]) -> None:
    """Every real stream-json run and lab fixture: a session's total is its last result
    line's ``total_cost_usd``; a run cut off before any result, or a 0, records none."""
    recorded, unknown = _check(document, "claude-stream-json")
    assert recorded >= 40
    assert unknown >= 3


def test_mini_swe_agent_sessions_record_their_instance_cost(document: dict[str, Any]) -> None:
    """Every real mini-swe-agent trajectory and lab fixture: the total is
    ``info.model_stats.instance_cost``; 0 (litellm could not price the calls) is none."""
    recorded, unknown = _check(document, "mini-swe-agent")
    assert recorded >= 10
    assert unknown >= _zero_totals(_mini_files()) >= 2


def test_swe_agent_sessions_record_their_instance_cost(document: dict[str, Any]) -> None:
    """Every real SWE-agent trajectory: the total is ``info.model_stats.instance_cost``
    (never ``total_cost``, the whole run's); 0 is none."""
    recorded, unknown = _check(document, "swe-agent")
    assert recorded >= 1
    assert unknown >= _zero_totals(_swe_files()) >= 4


def test_openhands_sessions_record_their_records_cost(document: dict[str, Any]) -> None:
    """Every real OpenHands file and the lab's conversation folders: an ``output.jsonl``
    record's total is its ``metrics.accumulated_cost`` (0.0 in every real one: none); event
    arrays, conversation folders and completions files (whose ``cost`` is one call's) record
    none."""
    _check(document, "openhands")
    sessions = [s for s in document["sessions"] if s["format"] == "openhands"]
    assert sum(s["path"].endswith("output.jsonl") for s in sessions) >= 3
    assert sum("llm_completions" in s["path"] for s in sessions) >= 2
    assert sum(s["path"].startswith(str(LAB)) for s in sessions) >= 10


def test_atif_trials_record_no_total_when_their_files_have_none(
        document: dict[str, Any]) -> None:
    """Every real Harbor trial: no trajectory has ``final_metrics.total_cost_usd`` and every
    trial result's ``agent_result.cost_usd`` is null, so no session records a total."""
    recorded, unknown = _check(document, "harbor-atif")
    assert (recorded, unknown) == (0, len(_atif_files()))


def test_aider_runs_record_their_last_session_cost(document: dict[str, Any]) -> None:
    """Every real aider chat history: a run's total is its last ``Tokens:`` line's ``$Y
    session``; a run without one (or $0.00) records none, and so does the text before the
    first heading."""
    recorded, _ = _check(document, "aider")
    assert recorded >= 100


def test_rows_add_up_the_sessions_totals(document: dict[str, Any]) -> None:
    """Per model and per agent version, ``recorded_usd`` is the sum of the totals the
    sessions' files record and ``recorded_sessions`` how many recorded one."""
    rows: dict[tuple[str, str], list[float]] = defaultdict(list)
    for session, total in _expected(document):
        names = [("by_model", session["model"])] if session["model"] is not None else []
        if session["agent_version"]:
            names.append(("by_agent", f"{session['format']} {session['agent_version']}"))
        for name in names:
            rows[name].extend([total] if total is not None else [])
    checked = 0
    for (table, name), totals in rows.items():
        row = document[table][name]
        assert row["recorded_sessions"] == len(totals), (table, name)
        if totals:
            assert row["recorded_usd"] == pytest.approx(sum(totals), abs=1e-5), (table, name)
            checked += 1
        else:
            assert row["recorded_usd"] is None, (table, name)
    assert checked >= 4
    assert len(rows) > checked


# copies of real files with the total changed ------------------------------------------------


def _copy_json(path: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def _only_session(path: Path) -> dict[str, Any]:
    (session,) = _document([path])["sessions"]
    return session  # type: ignore[no-any-return]


def test_stream_json_reads_the_last_results_total(tmp_path: Path) -> None:
    """A real run whose last result line records $12.345678: the session's total, and no
    failure costs it."""
    path = next(p for p in _stream_files()
                if sum('"type":"result"' in line or '"type": "result"' in line
                       for line in p.read_text(encoding="utf-8").splitlines()) >= 2)
    lines = path.read_text(encoding="utf-8").splitlines()
    last = max(i for i, line in enumerate(lines) if '"result"' in line
               and json.loads(line).get("type") == "result")
    entry = json.loads(lines[last])
    entry["total_cost_usd"] = ODD
    lines[last] = json.dumps(entry)
    copy = tmp_path / "claude-code.txt"
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before, after = _only_session(path), _only_session(copy)
    assert after["recorded_usd"] == ODD
    assert before["recorded_usd"] not in (None, ODD)
    assert [f["usd"] for f in after["failures"]] == [f["usd"] for f in before["failures"]]


def test_mini_swe_agent_reads_instance_cost_not_the_turns(tmp_path: Path) -> None:
    """A real trajectory whose ``instance_cost`` is $12.345678 while its responses' costs are
    unchanged: that is the session's total, and the failures cost what their turns did."""
    path = next(p for p in _mini_files() if "sqlfluff" in p.name)
    copy = _copy_json(path, tmp_path / path.name,
                      lambda d: d["info"]["model_stats"].__setitem__("instance_cost", ODD))
    before, after = _only_session(path), _only_session(copy)
    assert after["recorded_usd"] == ODD
    assert [f["usd"] for f in after["failures"]] == [f["usd"] for f in before["failures"]]
    assert ODD not in [f["usd"] for f in after["failures"]]


def test_swe_agent_reads_instance_cost(tmp_path: Path) -> None:
    """A real trajectory that recorded 0 (none), given ``instance_cost`` $12.345678."""
    path = next(p for p in _swe_files() if p.name == "BabyEncryption.traj")
    copy = _copy_json(path, tmp_path / path.name,
                      lambda d: d["info"]["model_stats"].__setitem__("instance_cost", ODD))
    assert _only_session(path)["recorded_usd"] is None
    assert _only_session(copy)["recorded_usd"] == ODD


def test_openhands_reads_the_records_accumulated_cost(tmp_path: Path) -> None:
    """A real record whose ``metrics.accumulated_cost`` is $12.345678 (its actions'
    ``llm_metrics`` unchanged, 0.0): the session's total."""
    path = _files("output.jsonl", _openhands_dir())[0]
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    record["metrics"]["accumulated_cost"] = ODD
    copy = tmp_path / "output.jsonl"
    copy.write_text(json.dumps(record) + "\n", encoding="utf-8")
    session = _only_session(copy)
    assert session["recorded_usd"] == ODD
    assert all(f["usd"] is None for f in session["failures"])


def _trial_copy(tmp_path: Path, *, total: float | None, result_cost: float | None) -> Path:
    """A real trial folder copied, its trajectory's ``final_metrics.total_cost_usd`` and its
    result's ``agent_result.cost_usd`` set (None: left as they are)."""
    path = _atif_files()[0]
    trial = tmp_path / path.parent.parent.name
    trial.mkdir()
    shutil.copy(path.parent.parent / "result.json", trial / "result.json")
    if result_cost is not None:
        _copy_json(trial / "result.json", trial / "result.json",
                   lambda d: d["agent_result"].__setitem__("cost_usd", result_cost))
    return _copy_json(path, trial / "agent" / "trajectory.json",
                      lambda d: d["final_metrics"].__setitem__("total_cost_usd", total)
                      if total is not None else None)


def test_atif_reads_final_metrics_total(tmp_path: Path) -> None:
    """A real trial whose trajectory's ``final_metrics.total_cost_usd`` is $12.345678 (its
    result's ``cost_usd`` another value): the trajectory's total wins."""
    copy = _trial_copy(tmp_path, total=ODD, result_cost=1.5)
    assert _only_session(copy)["recorded_usd"] == ODD


def test_atif_reads_the_trial_results_cost(tmp_path: Path) -> None:
    """A real trial whose trajectory has no total and whose result's
    ``agent_result.cost_usd`` is $12.345678, with or without the trajectory beside it."""
    copy = _trial_copy(tmp_path, total=None, result_cost=ODD)
    assert _only_session(copy)["recorded_usd"] == ODD
    copy.unlink()
    assert _only_session(copy.parent.parent / "result.json")["recorded_usd"] == ODD


def test_aider_reads_the_last_session_cost(tmp_path: Path) -> None:
    """A real chat history whose last ``Tokens:`` line says $12.345678 session: the total of
    the run it is in."""
    path = next(p for p in _aider_files() if any(AIDER_COST.match(line) for line in
                                                  p.read_text(encoding="utf-8").splitlines()))
    lines = path.read_text(encoding="utf-8").splitlines()
    last = max(i for i, line in enumerate(lines) if AIDER_COST.match(line))
    lines[last] = re.sub(r"\$[\d.]+ session", f"${ODD} session", lines[last])
    copy = tmp_path / path.name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    heading = next(line for line in reversed(lines[:last])
                   if line.startswith("# aider chat started at "))
    name = heading.removeprefix("# aider chat started at ")[:19]
    runs = [s for s in _document([copy])["sessions"] if s["session"] == name]
    assert runs[-1]["recorded_usd"] == ODD
    assert ODD not in [s["recorded_usd"] for s in _document([path])["sessions"]]


def test_reports_show_totals_of_rows_without_tokens(tmp_path: Path) -> None:
    """A Harbor trial records no tokens: its agent version's row still says what the session
    cost as recorded, in the terminal and in Markdown."""
    copy = _trial_copy(tmp_path, total=ODD, result_cost=None)
    assert _only_session(copy)["tokens"] is None
    terminal = _triage(str(copy)).stdout
    assert f"sessions cost ${ODD:,.3f} as recorded (1 of 1)" in terminal
    markdown = _triage(str(copy), "--format", "markdown").stdout
    assert f"| ${ODD:,.3f} as recorded (1 of 1) |" in markdown
