"""What failures cost where OpenHands, mini-swe-agent and Claude Code's stream-json record it
(``failcode.triage.analysis._cost``, the readers' "Cost" rules).

Every real file of these formats in both corpora (and the lab's stream-json fixtures) is
triaged, and the tokens and dollars triage reports per session, per failing step and over the
findings are checked against sums this file computes from the files with its own reading of
each format (never failcode's readers). Dollars a log records for a turn (mini-swe-agent's
``extra.cost``, OpenHands' ``accumulated_cost``) are the turn's price; other turns are priced
by genai-prices, asked here directly. Copies of real files with one field changed show that
field is what triage read: a value no fallback would give.
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

    from failcode.triage._result import SessionResult

FIXTURES = REPO / "tests" / "lab" / "fixtures"
KEYS = ("input", "output", "cache_read", "cache_write")
NOT_STEPS = {"null", "recall", "agent_state_changed", "agent_condensation"}

Turn = tuple[int, list[int], float | None]
"""A turn: the step whose result it read (-1: none), its tokens, the dollars it recorded."""


def _add(a: list[int], b: list[int]) -> list[int]:
    return [x + y for x, y in zip(a, b, strict=True)]


def _tokens(session: SessionResult) -> list[int] | None:
    return [getattr(session.tokens, key) for key in KEYS] if session.tokens else None


def _per_step(turns: list[Turn]) -> dict[int, tuple[list[int], list[float | None]]]:
    out: dict[int, tuple[list[int], list[float | None]]] = defaultdict(
        lambda: ([0, 0, 0, 0], []))
    for step, tokens, usd in turns:
        counts, prices = out[step]
        out[step] = (_add(counts, tokens), [*prices, usd])
    return out


def _first_failures(session: SessionResult) -> list[Any]:
    """The first failure recorded at each step: the one its turns are charged to."""
    seen: set[int] = set()
    out = []
    for entry in session.failures:
        if entry.step is not None and entry.step not in seen:
            seen.add(entry.step)
            out.append(entry)
    return out


def _table_price(model: str, tokens: list[int]) -> tuple[float, str] | None:
    try:
        found = calc_price(PriceUsage(input_tokens=tokens[0] + tokens[2] + tokens[3],
                                      output_tokens=tokens[1], cache_read_tokens=tokens[2],
                                      cache_write_tokens=tokens[3]), model_ref=model)
    except LookupError:
        return None
    return float(found.total_price), found.model.id


# mini-swe-agent ----------------------------------------------------------------------------


def _mini_files() -> list[Path]:
    roots = [sessions_dir() / "mini-swe-agent", sessions_2_dir() / "mini-swe-agent"]
    found = sorted(p for root in roots if root.is_dir() for p in root.rglob("*.traj.json"))
    assert found
    return found


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _litellm(usage: dict[str, Any]) -> list[int]:
    """Input without the cache's reads and writes (prompt_tokens holds both), output, reads,
    writes."""
    details = usage.get("prompt_tokens_details") or {}
    read = max(details.get("cached_tokens") or 0, usage.get("prompt_cache_hit_tokens") or 0,
               usage.get("cache_read_input_tokens") or 0)
    write = usage.get("cache_creation_input_tokens") or 0
    return [usage["prompt_tokens"] - read - write, usage["completion_tokens"], read, write]


def _mini_turns(data: dict[str, Any]) -> list[Turn]:
    """Each response's usage and cost, owned by the step observed last before it."""
    turns: list[Turn] = []
    steps, current = 0, -1
    for message in data["messages"]:
        extra = message.get("extra") or {}
        role, text = message.get("role"), _text(message.get("content")).lstrip()
        if role == "assistant" and isinstance((extra.get("response") or {}).get("usage"), dict):
            cost = extra.get("cost")
            turns.append((current, _litellm(extra["response"]["usage"]),
                          float(cost) if isinstance(cost, (int, float)) and cost > 0 else None))
        elif role == "user" and (extra.get("interrupt_type") == "FormatError"
                                 or text.startswith("Please always provide EXACTLY ONE")):
            current = -1
        elif role == "tool" or (role == "user" and (
                "returncode" in extra or text.startswith(("<returncode>", "The last command")))):
            current, steps = steps, steps + 1
    return turns


def _response_model(data: dict[str, Any]) -> str:
    (model,) = {m["extra"]["response"]["model"] for m in data["messages"]
                if m.get("role") == "assistant" and "response" in (m.get("extra") or {})}
    return str(model)


def test_mini_swe_agent_sessions_count_each_response_usage() -> None:
    """Every real mini-swe-agent trajectory: the session's tokens are the sum of its
    responses' usage (none recorded: unknown, never 0)."""
    checked = 0
    for path in _mini_files():
        (session,) = triage([path]).sessions
        turns = _mini_turns(json.loads(path.read_text(encoding="utf-8")))
        expected = None
        for _, tokens, _ in turns:
            expected = _add(expected or [0, 0, 0, 0], tokens)
        assert _tokens(session) == expected, path
        assert session.tokens is None or session.tokens.turns == len(turns)
        checked += expected is not None
    assert checked >= 10


def test_mini_swe_agent_recorded_prices_are_its_whole_account() -> None:
    """The per-response prices triage reads add up to the trajectory's own total
    (``info.model_stats.instance_cost``) in every real trajectory that records both: reading
    ``extra.cost`` per response misses no priced call of the agent's."""
    checked = 0
    for path in _mini_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        total = ((data.get("info") or {}).get("model_stats") or {}).get("instance_cost")
        prices = [usd for _, _, usd in _mini_turns(data) if usd is not None]
        if not prices or not isinstance(total, (int, float)):
            continue
        assert sum(prices) == pytest.approx(total, rel=1e-9), path.name
        checked += 1
    assert checked >= 5


def test_mini_swe_agent_failures_cost_what_their_turns_recorded() -> None:
    """Every real mini-swe-agent trajectory: a failing step's tokens are those of the responses
    after its observation, and its dollars the sum of their ``extra.cost``, named as recorded
    by mini-swe-agent."""
    checked = 0
    for path in _mini_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        (session,) = triage([path]).sessions
        charged = _per_step(_mini_turns(data))
        for entry in _first_failures(session):
            if session.tokens is None:
                assert entry.tokens is None
                assert entry.usd is None
                continue
            tokens, prices = charged.get(entry.step, ([0, 0, 0, 0], []))
            assert entry.tokens is not None
            assert [getattr(entry.tokens, key) for key in KEYS] == tokens, (path, entry.step)
            assert all(p is not None for p in prices)  # every real turn recorded a cost
            assert entry.usd == pytest.approx(sum(p or 0.0 for p in prices), rel=1e-9)
            if prices:
                assert entry.priced_as == f"{_response_model(data)}, recorded by mini-swe-agent"
                checked += 1
    assert checked >= 100


def _rewrite_costs(path: Path, tmp_path: Path, cost: Any) -> tuple[Path, dict[str, Any]]:
    """A copy of the trajectory whose n-th response recorded ``cost(n)``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turn = 0
    for message in data["messages"]:
        if message.get("role") == "assistant" and "cost" in (message.get("extra") or {}):
            message["extra"]["cost"] = cost(turn)
            turn += 1
    copy = tmp_path / path.name
    copy.write_text(json.dumps(data), encoding="utf-8")
    return copy, data


def test_mini_swe_agent_recorded_cost_is_the_price(tmp_path: Path) -> None:
    """A trajectory whose responses recorded whole dollars (2, 3, 4...: no price table's):
    each failure costs exactly the dollars of its turns."""
    path = next(p for p in _mini_files() if "sqlfluff" in p.name)
    copy, data = _rewrite_costs(path, tmp_path, lambda n: float(n + 2))
    charged = _per_step(_mini_turns(data))
    (session,) = triage([copy]).sessions
    checked = 0
    for entry in _first_failures(session):
        prices = charged.get(entry.step, ([0, 0, 0, 0], []))[1]
        assert entry.usd == sum(p or 0.0 for p in prices), entry.step
        checked += bool(prices)
    assert checked >= 5


def test_mini_swe_agent_zero_cost_is_no_price(tmp_path: Path) -> None:
    """A trajectory whose responses recorded 0 (litellm could not price them): the turns are
    priced by genai-prices for the response's model, never $0."""
    path = next(p for p in _mini_files() if "sqlfluff" in p.name)
    copy, data = _rewrite_costs(path, tmp_path, lambda n: 0.0)
    model = _response_model(data)
    charged = _per_step(_mini_turns(data))
    (session,) = triage([copy]).sessions
    checked = 0
    for entry in _first_failures(session):
        tokens = charged.get(entry.step, ([0, 0, 0, 0], []))[0]
        if not any(tokens):
            continue
        price = _table_price(model, tokens)
        assert price is not None
        assert entry.usd == pytest.approx(price[0], rel=1e-6)
        assert entry.usd > 0
        assert entry.priced_as == price[1]
        checked += 1
    assert checked >= 5


def test_mini_swe_agent_recorded_cost_needs_no_price_table() -> None:
    """genai-prices not importable: the dollars mini-swe-agent recorded are still each
    failure's, while the document's ``prices`` (the table) is null."""
    path = next(p for p in _mini_files() if "sqlfluff" in p.name)
    program = ("import sys\nsys.modules['genai_prices'] = None\n"
               "from failcode.cli import main\nmain(sys.argv[1:], prog_name='failcode')")
    done = subprocess.run([sys.executable, "-c", program, "triage", str(path), "--json",
                           "--no-cache"], capture_output=True, text=True, check=False)
    assert done.returncode in (0, 2), done.stderr
    document = json.loads(done.stdout)
    assert document["prices"] is None
    charged = _per_step(_mini_turns(json.loads(path.read_text(encoding="utf-8"))))
    (session,) = document["sessions"]
    checked = 0
    for entry in session["failures"]:
        prices = charged.get(entry["step"], ([0, 0, 0, 0], []))[1]
        if prices and entry["tokens"]["turns"]:
            assert entry["usd"] == pytest.approx(sum(p or 0.0 for p in prices), rel=1e-9)
            checked += 1
    assert checked >= 5


# OpenHands ---------------------------------------------------------------------------------


def _openhands_records() -> list[Path]:
    roots = [sessions_dir() / "openhands", sessions_2_dir() / "openhands"]
    found = sorted(p for root in roots if root.is_dir() for p in root.rglob("output.jsonl"))
    assert found
    return found


def _openhands_turns(history: list[dict[str, Any]]) -> list[Turn]:
    """Each action's llm_metrics less the previous action's: one turn, owned by the step
    observed last before it."""
    turns: list[Turn] = []
    steps, current = 0, -1
    before = [0, 0, 0, 0, 0.0]
    for event in history:
        metrics = event.get("llm_metrics")
        if isinstance(event.get("action"), str) and isinstance(metrics, dict):
            usage = metrics["accumulated_token_usage"]
            now = [usage["prompt_tokens"], usage["completion_tokens"],
                   usage["cache_read_tokens"], usage["cache_write_tokens"],
                   metrics["accumulated_cost"]]
            prompt, output, read, write, usd = (n - b for n, b in zip(now, before, strict=True))
            before = now
            turns.append((current, [int(prompt - read - write), int(output), int(read),
                                    int(write)], float(usd) if usd > 0 else None))
        elif isinstance(event.get("observation"), str) and event["observation"] not in NOT_STEPS:
            current, steps = steps, steps + 1
    return turns


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_openhands_sessions_are_the_last_running_totals() -> None:
    """Every real OpenHands record: the session's tokens are its last action's accumulated
    token usage (prompt tokens less the cache's part), and equal the record's ``metrics``."""
    checked = 0
    for path in _openhands_records():
        sessions = {s.session: s for s in triage([path]).sessions}
        for record in _records(path):
            last = [e["llm_metrics"] for e in record["history"]
                    if isinstance(e.get("action"), str) and "llm_metrics" in e]
            session = sessions[record["instance_id"]]
            if not last:
                assert session.tokens is None
                continue
            usage = last[-1]["accumulated_token_usage"]
            read, write = usage["cache_read_tokens"], usage["cache_write_tokens"]
            expected = [usage["prompt_tokens"] - read - write, usage["completion_tokens"],
                        read, write]
            assert _tokens(session) == expected, record["instance_id"]
            total = record["metrics"]["accumulated_token_usage"]
            assert total["prompt_tokens"] + total["completion_tokens"] == sum(expected)
            checked += 1
    assert checked >= 3


def test_openhands_failures_cost_the_turns_that_read_them() -> None:
    """Every real OpenHands record: a failing step's tokens are the increases of the running
    totals after its observation; OpenHands priced none of them (its cost stayed 0) and
    genai-prices does not know the model, so the dollars are unknown, never 0."""
    checked = 0
    for path in _openhands_records():
        sessions = {s.session: s for s in triage([path]).sessions}
        for record in _records(path):
            session = sessions[record["instance_id"]]
            charged = _per_step(_openhands_turns(record["history"]))
            model = record["metadata"]["llm_config"]["model"]
            for entry in _first_failures(session):
                tokens, prices = charged.get(entry.step, ([0, 0, 0, 0], []))
                assert entry.tokens is not None
                assert [getattr(entry.tokens, key) for key in KEYS] == tokens, entry.step
                if any(tokens):
                    assert prices
                    assert all(p is None for p in prices)
                    assert _table_price(model, tokens) is None
                    assert entry.usd is None
                    checked += 1
    assert checked >= 10


def test_openhands_event_arrays_without_metrics_are_unknown() -> None:
    """An OpenHands event array without ``llm_metrics`` (the runtime's recorded session):
    its tokens are unknown, and so are its failures'."""
    path = sessions_dir() / "openhands" / "runtime_trajs" / "basic_gui_mode.json"
    assert "llm_metrics" not in path.read_text(encoding="utf-8")
    for session in triage([path]).sessions:
        assert session.tokens is None
        assert all(e.tokens is None and e.usd is None for e in session.failures)


def test_openhands_recorded_cost_is_the_price(tmp_path: Path) -> None:
    """A real record whose actions' ``accumulated_cost`` grows by whole dollars (the model is
    one genai-prices does not know: no fallback has a price): each failure costs the growth
    over its turns, named as recorded by OpenHands."""
    path = _openhands_records()[0]
    record = _records(path)[0]
    number = 0
    for event in record["history"]:
        if isinstance(event.get("action"), str) and "llm_metrics" in event:
            number += 1
            event["llm_metrics"]["accumulated_cost"] = float(number * (number + 1) // 2)
    copy = tmp_path / "output.jsonl"
    copy.write_text(json.dumps(record) + "\n", encoding="utf-8")
    charged = _per_step(_openhands_turns(record["history"]))
    (session,) = triage([copy]).sessions
    checked = 0
    for entry in _first_failures(session):
        prices = charged.get(entry.step, ([0, 0, 0, 0], []))[1]
        if not prices:
            continue
        assert entry.usd == sum(p or 0.0 for p in prices), entry.step
        assert entry.priced_as is not None
        assert entry.priced_as.endswith(", recorded by openhands")
        checked += 1
    assert checked >= 3


# Claude Code stream-json -------------------------------------------------------------------


def _stream_files() -> list[Path]:
    corpus = sorted((sessions_2_dir() / "claude-stream-json").rglob("claude-code.txt"))
    lab = sorted(FIXTURES.glob("claude-code/*/stream.jsonl"))
    assert corpus
    assert lab
    return corpus + lab


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        out.extend(v for v in (value if isinstance(value, list) else [value])
                   if isinstance(v, dict))
    return out


def _stream_turns(path: Path) -> dict[str, list[Turn]]:
    """Per session id: each API message once (by id, the most each field reached), owned by
    the step of the last tool result before its first line (-1 after a prompt)."""
    best: dict[tuple[str, str], list[int]] = {}
    owner: dict[tuple[str, str], int] = {}
    steps: dict[str, int] = defaultdict(int)
    current: dict[str, int] = defaultdict(lambda: -1)
    for entry in _lines(path):
        sid, message = str(entry.get("session_id")), entry.get("message")
        if not isinstance(message, dict):
            continue
        if entry.get("type") == "user":
            content = message.get("content")
            results = [b for b in content if isinstance(b, dict)
                       and b.get("type") == "tool_result"] if isinstance(content, list) else []
            steps[sid] += len(results)
            current[sid] = steps[sid] - 1 if results else -1
        elif entry.get("type") == "assistant" and not entry.get("error"):
            usage = message.get("usage") or {}
            key = (sid, str(message.get("id")))
            now = [usage.get("input_tokens") or 0, usage.get("output_tokens") or 0,
                   usage.get("cache_read_input_tokens") or 0,
                   usage.get("cache_creation_input_tokens") or 0]
            best[key] = [max(a, b) for a, b in zip(best.get(key, [0, 0, 0, 0]), now,
                                                   strict=True)]
            owner.setdefault(key, current[sid])
    out: dict[str, list[Turn]] = defaultdict(list)
    for key, tokens in best.items():
        if any(tokens):
            out[key[0]].append((owner[key], tokens, None))
    return out


def test_stream_json_sessions_count_each_message_once() -> None:
    """Every real stream-json run and lab fixture: per session, the tokens are the sums of
    each API message's usage counted once (the result line's totals are not added)."""
    checked = 0
    for path in _stream_files():
        turns = _stream_turns(path)
        for session in triage([path]).sessions:
            expected = None
            for _, tokens, _ in turns.get(session.session, []):
                expected = _add(expected or [0, 0, 0, 0], tokens)
            assert _tokens(session) == expected, (path, session.session)
            checked += expected is not None
    assert checked >= 30


def test_stream_json_failures_are_priced_by_the_table_not_the_run_total() -> None:
    """Every real stream-json run and lab fixture: a failing step's tokens are those of the
    messages after its result, priced by genai-prices for the model (within rounding): the
    result line's ``total_cost_usd`` is the run's, charged to no failure."""
    checked = 0
    for path in _stream_files():
        lines = _lines(path)
        turns = _stream_turns(path)
        totals = {e.get("total_cost_usd") for e in lines if e.get("type") == "result"}
        for session in triage([path]).sessions:
            charged = _per_step(turns.get(session.session, []))
            models = {str((e.get("message") or {}).get("model")) for e in lines
                      if e.get("type") == "assistant" and e.get("session_id") == session.session
                      } - {"<synthetic>"}
            for entry in _first_failures(session):
                tokens = charged.get(entry.step, ([0, 0, 0, 0], []))[0]
                if session.tokens is None:  # no message recorded any (the provider refused)
                    assert not any(tokens)
                    assert entry.tokens is None
                    assert entry.usd is None
                    continue
                assert entry.tokens is not None
                assert [getattr(entry.tokens, key) for key in KEYS] == tokens, (
                    path, entry.step)
                if not any(tokens) or len(models) != 1:
                    continue
                price = _table_price(next(iter(models)), tokens)
                assert price is not None
                assert entry.usd == pytest.approx(price[0], rel=1e-6)
                assert entry.priced_as == price[1]
                assert entry.usd not in totals
                checked += 1
    assert checked >= 50


# over the findings -------------------------------------------------------------------------


def test_findings_sum_what_the_files_record() -> None:
    """mini-swe-agent and OpenHands records together, through the CLI's document: the
    findings' tokens and dollars add up to the failing steps' sums computed from the files."""
    mini, records = _mini_files(), _openhands_records()
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", *map(str, mini),
                           *map(str, records), "--json", "--no-cache"],
                          capture_output=True, text=True, check=False)
    assert done.returncode in (0, 2), done.stderr
    document = json.loads(done.stdout)
    expected_tokens, expected_usd = 0, 0.0
    for session in document["sessions"]:
        steps = {e["step"] for e in session["failures"] if e["step"] is not None}
        if session["format"] == "mini-swe-agent":
            path = next(p for p in mini if str(p) == session["path"])
            turns = _mini_turns(json.loads(path.read_text(encoding="utf-8")))
        else:
            (record,) = [r for path in records for r in _records(path)
                         if r["instance_id"] == session["session"]]
            turns = _openhands_turns(record["history"])
        for step, tokens, usd in turns:
            if step in steps:
                expected_tokens += sum(tokens)
                expected_usd += usd or 0.0
    findings = document["findings"]
    assert sum((f["tokens"] or {}).get("total", 0) for f in findings) == expected_tokens
    assert sum(f["usd"] or 0.0 for f in findings) == pytest.approx(expected_usd, abs=1e-5)
    assert expected_usd > 0.1
    recorded = {name for f in findings for name in f["priced_as"]}
    assert recorded
    assert all(name.endswith(", recorded by mini-swe-agent") for name in recorded)

