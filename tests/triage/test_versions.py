"""Per agent version: what the failures cost, and findings that rose from one version to the next.

The sessions are real Claude Code transcripts (the lab's recordings of two scenarios: one that
fails with FC-CMD-001, one without a failure), copied under other session ids and versions, so
how many sessions of each version hit the finding is known by construction. The expected
chances are computed here with exact integer arithmetic (``math.comb``), not with the module's
own function.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import subprocess
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage._versions import rise_chance, version_key
from tests._paths import REPO
from tests.triage._data import sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

LAB = REPO / "tests" / "lab" / "fixtures" / "claude-code"
FAILING, CLEAN = "missing-program", "probes-no-output"
SESSION_ID = re.compile(r'"sessionId":"[^"]+"')
VERSION = re.compile(r'"version":"[^"]+"')


def _transcript(scenario: str) -> Path:
    found = sorted((LAB / scenario / "session").rglob("*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def _tokens(path: Path) -> int:
    """Every token of the transcript's API messages, each message counted once at the most
    each field reached (Claude Code writes a message's usage again on each of its blocks)."""
    best: dict[str, list[int]] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage = message.get("usage") or {}
        now = [usage.get(k) or 0 for k in ("input_tokens", "output_tokens",
                                          "cache_read_input_tokens",
                                          "cache_creation_input_tokens")]
        old = best.get(str(message.get("id")), [0, 0, 0, 0])
        best[str(message.get("id"))] = [max(a, b) for a, b in zip(old, now, strict=True)]
    return sum(sum(counts) for counts in best.values())


def _copy(folder: Path, scenario: str, version: str, count: int) -> None:
    """``count`` copies of the scenario's transcript as sessions of Claude Code ``version``."""
    text = _transcript(scenario).read_text()
    assert SESSION_ID.search(text)
    assert VERSION.search(text)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        session = f"{scenario}-{version}-{number}"
        copy = VERSION.sub(f'"version":"{version}"',
                           SESSION_ID.sub(f'"sessionId":"{session}"', text))
        (folder / f"{session}.jsonl").write_text(copy)


def _triage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "failcode", "triage", *args, "--no-cache"],
                          capture_output=True, text=True, check=False)


def _document(*args: str) -> dict[str, Any]:
    done = _triage(*args, "--json")
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _exact_chance(h_old: int, n_old: int, h_new: int, n_new: int) -> Fraction:
    """The one-sided Fisher exact p-value, in fractions of integers."""
    total, hits = n_old + n_new, h_old + h_new
    return sum((Fraction(math.comb(hits, k) * math.comb(total - hits, n_new - k),
                         math.comb(total, n_new))
                for k in range(h_new, min(hits, n_new) + 1)), Fraction(0))


@pytest.mark.parametrize(("h_old", "n_old", "h_new", "n_new"), [
    (0, 12, 1, 1), (0, 3, 2, 2), (0, 10, 2, 2), (1, 12, 9, 12), (9, 12, 1, 12), (3, 40, 9, 41),
    (0, 1, 1, 1), (5, 5, 5, 5), (0, 300, 7, 250),
])
def test_the_chance_of_a_rise_is_fishers_exact_test(h_old: int, n_old: int, h_new: int,
                                                    n_new: int) -> None:
    assert rise_chance(h_old, n_old, h_new, n_new) == pytest.approx(
        float(_exact_chance(h_old, n_old, h_new, n_new)), rel=1e-9, abs=1e-12)


def test_a_finding_that_rose_in_a_version_is_a_regression(tmp_path: Path) -> None:
    """2.1.9: 1 of 12 sessions hit FC-CMD-001; 2.1.10 (after 2.1.9, though not as text):
    9 of 12. A regression in 2.1.10, and in each report."""
    _copy(tmp_path, FAILING, "2.1.9", 1)
    _copy(tmp_path, CLEAN, "2.1.9", 11)
    _copy(tmp_path, FAILING, "2.1.10", 9)
    _copy(tmp_path, CLEAN, "2.1.10", 3)
    document = _document(str(tmp_path))
    [row] = document["regressions"]
    assert (row["code"], row["agent"], row["version"], row["previous"]) == (
        "FC-CMD-001", "claude-code", "2.1.10", "2.1.9")
    assert (row["sessions_hit"], row["sessions"], row["previous_sessions_hit"],
            row["previous_sessions"]) == (9, 12, 1, 12)
    assert _exact_chance(1, 12, 9, 12) < Fraction(1, 20)
    terminal = _triage(str(tmp_path)).stdout
    assert "Regressions" in terminal
    assert "claude-code 2.1.10: 9 of 12 sessions; 2.1.9: 1 of 12 sessions" in terminal
    markdown = _triage(str(tmp_path), "--format", "markdown").stdout
    assert "| 2.1.10 | 9 of 12 | 2.1.9 | 1 of 12 |" in markdown


@pytest.mark.parametrize(("old", "new"), [
    ((9, 12), (1, 12)),  # it fell: the fix worked
    ((0, 12), (1, 1)),   # one session of a new version: 1 in 13 by chance
    ((1, 2), (2, 2)),    # too few sessions to tell
])
def test_a_fall_or_a_rise_within_chance_is_no_regression(tmp_path: Path, old: tuple[int, int],
                                                         new: tuple[int, int]) -> None:
    for version, (hit, sessions) in (("1.0.9", old), ("1.0.10", new)):
        _copy(tmp_path, FAILING, version, hit)
        _copy(tmp_path, CLEAN, version, sessions - hit)
    assert _exact_chance(old[0], old[1], new[0], new[1]) >= Fraction(1, 20)
    document = _document(str(tmp_path))
    assert document["regressions"] == []
    [finding] = [f for f in document["findings"] if f["code"] == "FC-CMD-001"]
    assert finding["sessions"] == old[0] + new[0]


def test_each_version_row_counts_its_sessions_and_what_their_failures_cost(
        tmp_path: Path) -> None:
    """Per version: sessions, those with failures, failures, every token of their turns (summed
    here from the transcripts), and the failures' share of them."""
    _copy(tmp_path, FAILING, "3.0.1", 2)
    _copy(tmp_path, CLEAN, "3.0.1", 3)
    _copy(tmp_path, CLEAN, "3.0.2", 4)
    failing, clean = _tokens(_transcript(FAILING)), _tokens(_transcript(CLEAN))
    assert failing > 0
    assert clean > 0
    document = _document(str(tmp_path))
    rows = document["by_agent"]
    assert set(rows) == {"claude-code 3.0.1", "claude-code 3.0.2"}
    first, second = rows["claude-code 3.0.1"], rows["claude-code 3.0.2"]
    assert (first["sessions"], first["failing_sessions"], second["sessions"],
            second["failing_sessions"], second["failures"]) == (5, 2, 4, 0, 0)
    assert first["tokens"] == 2 * failing + 3 * clean
    assert second["tokens"] == 4 * clean
    per_session = [e["tokens"]["total"] for s in document["sessions"]
                   if s["agent_version"] == "3.0.1" for e in s["failures"]]
    assert first["failures"] == len(per_session) >= 2
    assert first["failure_tokens"] == sum(per_session) > 0
    assert second["failure_tokens"] is None
    assert second["failure_usd"] is None
    by_model = document["by_model"]
    assert sum(row["sessions"] for row in by_model.values()) == 9
    terminal = _triage(str(tmp_path)).stdout
    assert "failures spent" in terminal


def test_regressions_over_the_real_corpora_follow_the_rule() -> None:
    """Every regression the corpora give, and only those: computed here from the document's
    sessions (each session's signatures, by agent version) and findings (their signatures)."""
    document = _document(str(sessions_dir()), str(sessions_2_dir()))
    sessions: dict[tuple[str, str], int] = {}
    signatures_of: dict[tuple[str, str], list[set[str]]] = {}
    for session in document["sessions"]:
        if not session["agent_version"]:
            continue
        key = (session["format"], session["agent_version"])
        sessions[key] = sessions.get(key, 0) + 1
        signatures_of.setdefault(key, []).append(
            {e["failure"]["signature"] for e in session["failures"]})
    assert len(sessions) >= 10
    expected = []
    for finding in document["findings"]:
        if finding["category"] == "transient":
            continue
        mine = set(finding["signatures"])
        for agent in sorted({a for a, _ in sessions}):
            versions = sorted((v for a, v in sessions if a == agent), key=version_key)
            for before, after in itertools.pairwise(versions):
                n_old, n_new = sessions[(agent, before)], sessions[(agent, after)]
                h_old = sum(bool(s & mine) for s in signatures_of[(agent, before)])
                h_new = sum(bool(s & mine) for s in signatures_of[(agent, after)])
                if (Fraction(h_new, n_new) > Fraction(h_old, n_old)
                        and _exact_chance(h_old, n_old, h_new, n_new) < Fraction(1, 20)):
                    expected.append((finding["code"], finding["message"], agent, after, before,
                                     h_new, n_new, h_old, n_old))
    found = [(r["code"], r["message"], r["agent"], r["version"], r["previous"],
              r["sessions_hit"], r["sessions"], r["previous_sessions_hit"],
              r["previous_sessions"]) for r in document["regressions"]]
    assert expected  # the corpora hold one: the comparison is not of two empty lists
    assert found == expected
