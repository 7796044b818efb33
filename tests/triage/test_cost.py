"""What failures cost (``failcode.triage.analysis._cost``): tokens, dollars, time, ``--rank``.

The token counts are checked against sums this file computes from the logs itself, with its
own reading of each format (never failcode's readers): every real Claude Code, Codex and
Gemini CLI session of both corpora and of the lab. Dollars come from genai-prices, the
maintained price table, asked here directly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from failcode.triage import triage
from tests._paths import REPO
from tests.triage._data import sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

FIXTURES = REPO / "tests" / "lab" / "fixtures"
KEYS = ("input", "output", "cache_read", "cache_write")


def _files(agent: str, suffixes: tuple[str, ...] = (".jsonl",)) -> list[Path]:
    roots = [sessions_dir() / agent, sessions_2_dir() / agent, FIXTURES / agent]
    found = sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                   if p.is_file() and p.suffix in suffixes and p.name not in (
                       "stream.jsonl", "exec.jsonl", "meta.json"))
    assert found, agent
    return found


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _claude_code_sums(path: Path) -> dict[str, list[int]]:
    """Per session id: each API message counted once, at the most each field reached."""
    best: dict[tuple[str, str], list[int]] = {}
    for entry in _lines(path):
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage = message.get("usage") or {}
        now = [usage.get("input_tokens") or 0, usage.get("output_tokens") or 0,
               usage.get("cache_read_input_tokens") or 0,
               usage.get("cache_creation_input_tokens") or 0]
        key = (str(entry.get("sessionId")), str(message.get("id")))
        best[key] = [max(a, b) for a, b in zip(best.get(key, [0, 0, 0, 0]), now, strict=True)]
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (session, _), counts in best.items():
        sums[session] = [a + b for a, b in zip(sums[session], counts, strict=True)]
    return dict(sums)


def _codex_sums(path: Path) -> list[int]:
    """The session's last running totals: input without its cached part, output, cached."""
    total: dict[str, int] = {}
    for entry in _lines(path):
        payload = entry.get("payload") or {}
        if entry.get("type") == "event_msg" and payload.get("type") == "token_count":
            total = (payload.get("info") or {}).get("total_token_usage") or total
    cached = total.get("cached_input_tokens", 0)
    return [total.get("input_tokens", 0) - cached, total.get("output_tokens", 0), cached, 0]


def _gemini_sums(path: Path) -> list[int]:
    """Each model record once (a record written again: its last version)."""
    records: dict[str, dict[str, Any]] = {}
    values = _lines(path) if path.suffix == ".jsonl" else json.loads(
        path.read_text(encoding="utf-8")).get("messages", [])
    for value in values:
        for record in [value, *((value.get("$set") or {}).get("messages") or [])]:
            if isinstance(record, dict) and record.get("type") == "gemini" and "id" in record:
                records[record["id"]] = record
    sums = [0, 0, 0, 0]
    for record in records.values():
        tokens = record.get("tokens") or {}
        cached = tokens.get("cached", 0)
        sums[0] += tokens.get("input", 0) - cached + tokens.get("tool", 0)
        sums[1] += tokens.get("output", 0) + tokens.get("thoughts", 0)
        sums[2] += cached
    return sums


def _tokens(session: Any) -> list[int]:
    return [getattr(session.tokens, key) for key in KEYS] if session.tokens else [0, 0, 0, 0]


def test_claude_code_tokens_are_the_messages_counted_once() -> None:
    """Every real Claude Code transcript: per session, the tokens triage counts are the sums
    of each API message's usage, counted once at the most each field reached."""
    checked = 0
    for path in _files("claude-code"):
        expected = _claude_code_sums(path)
        got: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for session in triage([path]).sessions:
            got[session.session] = [a + b for a, b in zip(got[session.session],
                                                           _tokens(session), strict=True)]
        for name, sums in got.items():
            assert sums == expected.get(name, [0, 0, 0, 0]), (path, name)
            checked += any(sums)
    assert checked >= 25


def test_codex_tokens_are_the_last_running_totals() -> None:
    """Every real Codex rollout: the session's tokens are its last running totals."""
    checked = 0
    for path in _files("codex"):
        (session,) = triage([path]).sessions
        assert _tokens(session) == _codex_sums(path), path
        checked += session.tokens is not None
    assert checked >= 10


def test_gemini_cli_tokens_are_the_model_records() -> None:
    """Every real Gemini CLI chat (JSON and JSON lines): the tokens of its model records."""
    checked = 0
    for path in _files("gemini-cli", (".json", ".jsonl")):
        result = triage([path])
        if result.inputs[0].format != "gemini-cli":
            continue
        (session,) = result.sessions
        assert _tokens(session) == _gemini_sums(path), path
        checked += session.tokens is not None
    assert checked >= 3


def _charged(path: Path) -> dict[int, list[int]]:
    """Claude Code: per step, the tokens of the turns that read its result (up to the next
    user line), each API message once."""
    steps, current = 0, -1
    best: dict[str, list[int]] = {}
    owner: dict[str, int] = {}
    for entry in _lines(path):
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if entry.get("type") == "user":
            results = [b for b in content if isinstance(b, dict)
                       and b.get("type") == "tool_result"] if isinstance(content, list) else []
            steps += len(results)
            current = steps - 1 if results else -1
        elif entry.get("type") == "assistant" and not entry.get("isApiErrorMessage"):
            usage = message.get("usage") or {}
            key = str(message.get("id"))
            now = [usage.get("input_tokens") or 0, usage.get("output_tokens") or 0,
                   usage.get("cache_read_input_tokens") or 0,
                   usage.get("cache_creation_input_tokens") or 0]
            best[key] = [max(a, b) for a, b in zip(best.get(key, [0, 0, 0, 0]), now,
                                                   strict=True)]
            owner.setdefault(key, current)
    out: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for key, counts in best.items():
        out[owner[key]] = [a + b for a, b in zip(out[owner[key]], counts, strict=True)]
    return out


def test_a_failure_costs_the_turns_that_read_it() -> None:
    """Every real Claude Code transcript with one session: each failing step's tokens are
    those of the turns after its result and before the next user line; its dollars are
    genai-prices' for those turns (within rounding), with the table's model named."""
    checked = 0
    for path in _files("claude-code"):
        sessions = triage([path]).sessions
        if len(sessions) != 1:
            continue
        charged = _charged(path)
        first_at: set[int | None] = set()
        if sessions[0].tokens is None:  # no turn recorded at all (a run the provider refused)
            assert not any(charged.values())
            assert all(entry.tokens is None for entry in sessions[0].failures)
            continue
        for entry in sessions[0].failures:
            if entry.step in first_at or entry.step is None:
                continue  # a step's turns are its first failure's
            first_at.add(entry.step)
            assert entry.tokens is not None
            assert [getattr(entry.tokens, key) for key in KEYS] == charged.get(
                entry.step, [0, 0, 0, 0]), (path, entry.step)
            models = {str((e.get("message") or {}).get("model")) for e in _lines(path)
                      if e.get("type") == "assistant"} - {"<synthetic>"}
            if entry.tokens.total and entry.usd is not None and len(models) == 1:
                model = models.pop()
                whole = calc_price(PriceUsage(
                    input_tokens=entry.tokens.input + entry.tokens.cache_read
                    + entry.tokens.cache_write, output_tokens=entry.tokens.output,
                    cache_read_tokens=entry.tokens.cache_read,
                    cache_write_tokens=entry.tokens.cache_write), model_ref=model)
                assert entry.priced_as == whole.model.id
                # priced turn by turn; the same rates on the sum (no tier is reached here)
                assert entry.usd == pytest.approx(float(whole.total_price), rel=1e-6)
                checked += 1
    assert checked >= 20


def _cli(*args: str, code: str = "") -> dict[str, Any]:
    program = (f"{code}\nfrom failcode.cli import main\n"
               "main(sys.argv[1:], prog_name='failcode')")
    done = subprocess.run([sys.executable, "-c", "import sys\n" + program, "triage", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("rank", ["cost", "tokens", "time"])
def test_rank_orders_what_to_fix_first(rank: str) -> None:
    """--rank cost|tokens|time: the findings with the measure first, most first; those
    without it after, in the default order; the document names the order and the table."""
    corpus = sessions_2_dir()
    document = _cli(str(corpus / "claude-code"), str(corpus / "codex"), "--json",
                    "--no-cache", "--rank", rank)
    assert document["rank"] == rank
    assert document["prices"].startswith("genai-prices ")
    measure = {"cost": lambda f: f["usd"],
               "tokens": lambda f: f["tokens"] and f["tokens"]["total"],
               "time": lambda f: f["recovery_s"]}[rank]
    values = [measure(f) for f in document["findings"]]
    known = [v for v in values if v is not None]
    assert len(known) >= 20
    assert values[:len(known)] == sorted(known, reverse=True)
    default = _cli(str(corpus / "claude-code"), str(corpus / "codex"), "--json", "--no-cache")
    assert "rank" not in default

    def same(findings: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
        return sorted((f["code"], f["message"], f["count"]) for f in findings)

    assert same(default["findings"]) == same(document["findings"])  # only the order changes
    assert [f["code"] for f in default["findings"]] != [f["code"] for f in document["findings"]]


def test_logs_without_tokens_say_unknown_never_zero() -> None:
    """aider and SWE-agent record no tokens per turn (SWE-agent only a session's total):
    every session's and failure's tokens and dollars are null, and the document names no
    table (mini-swe-agent and OpenHands: tests/triage/test_cost_formats.py)."""
    roots = [sessions_dir() / name for name in ("aider", "swe-agent")]
    document = _cli(*map(str, roots), "--json", "--no-cache")
    failures = [e for s in document["sessions"] for e in s["failures"]]
    assert len(failures) > 100
    assert all(e["tokens"] is None and e["usd"] is None for e in failures)
    assert all(s["tokens"] is None for s in document["sessions"])
    assert all(f["usd"] is None and f["usd_unknown"] == f["count"]
               for f in document["findings"])
    assert "prices" not in document


def test_without_the_price_table_dollars_are_unknown() -> None:
    """genai-prices not importable: tokens still counted, every dollar null, ``prices``
    null (never a guess)."""
    corpus = sessions_2_dir() / "codex"
    document = _cli(str(corpus), "--json", "--no-cache",
                    code="sys.modules['genai_prices'] = None")
    failures = [e for s in document["sessions"] for e in s["failures"]]
    assert any(e["tokens"] and e["tokens"]["total"] for e in failures)
    assert all(e["usd"] is None for e in failures if e["tokens"] and e["tokens"]["total"])
    assert document["prices"] is None


def test_the_terminal_report_shows_what_was_spent() -> None:
    """The summary's finding says its dollars, tokens and time, and the heading the order."""
    corpus = sessions_2_dir() / "codex"
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", str(corpus),
                           "--no-cache", "--rank", "cost"], capture_output=True, text=True,
                          check=False)
    assert "by dollars)" in done.stdout
    assert "    spent: $" in done.stdout
    assert " tokens" in done.stdout
