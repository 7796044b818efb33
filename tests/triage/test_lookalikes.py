"""Detection given files that only resemble a format.

Each reader detects its format by content (the first :data:`HEAD_BYTES`). Three classes:

- every real session of every format is detected as that format and no other (the readers
  are tried most specific first, so a reader placed too early takes another's files);
- a real session whose values were replaced by values of other types at random places (the
  keys detection looks for are still there) never raises, never costs the inputs beside it,
  and never becomes an empty session: it is read, or it is that input's typed FC-DATA error;
- text that carries a format's words without its structure (a chat export, a log quoting
  records, a markdown note about aider) is not a session: named, an FC-DATA-002 error;
  found by walking a folder, skipped and counted.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcode.triage import triage
from failcode.triage.readers import HEAD_BYTES, detect
from tests.lab.runner import FIXTURES
from tests.triage import test_copilot as copilot
from tests.triage._data import labels, sessions_dir, without_error_ids

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])

# the session lab's agent folders and the format each one's sessions are
LAB_FORMATS = {"aider": "aider", "claude-code": "claude-code", "codex": "codex",
               "gemini-cli": "gemini-cli", "mini-swe-agent": "mini-swe-agent",
               "openhands": "openhands"}
# the labelled real sessions' top folder and their format
REAL_FORMATS = {"aider": "aider", "claude-code": "claude-code",
                "mini-swe-agent": "mini-swe-agent", "openhands": "openhands",
                "swe-agent": "swe-agent"}


def _lab_files() -> list[tuple[str, Path]]:
    return [(fmt, path) for agent, fmt in LAB_FORMATS.items()
            for path in sorted((FIXTURES / agent).rglob("*"))
            if path.is_file() and "session" in path.parts
            and path.name not in {"meta.json", "base_state.json"} and path.stat().st_size]


def _copilot_file(tmp_path: Path) -> Path:
    return copilot._write(tmp_path, [
        copilot.START, copilot._prompt(), *copilot._bash("c1", "pytest -q"),
        copilot._shell_result("c1", "1 failed, 2 passed\n", 1),
        *copilot._answer()])


def test_every_session_of_every_format_is_detected_as_that_format(tmp_path: Path) -> None:
    """The lab's sessions of every agent it drives, the labelled real sessions of five formats
    and a Copilot CLI session: each detected as its own format."""
    root = sessions_dir()
    samples = [*_lab_files(),
               *((REAL_FORMATS[p.split("/")[0]], root / p) for p in labels()),
               ("copilot-cli", _copilot_file(tmp_path))]
    wrong = []
    for fmt, path in samples:
        with path.open("rb") as stream:
            reader = detect(stream.read(HEAD_BYTES))
        if path.name.startswith("event-") and fmt == "openhands":
            continue  # one event of a V1 conversation folder: read with its folder
        if reader is None or reader.name != fmt:
            wrong.append((str(path), fmt, reader and reader.name))
    assert wrong == []
    assert {fmt for fmt, _ in samples} == {*LAB_FORMATS.values(), *REAL_FORMATS.values(),
                                           "copilot-cli"}


# -- values of other types in a real session ------------------------------------------------

def _jsonl(path: Path) -> Callable[[], list[Any]]:
    return lambda: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _lab(agent: str, pattern: str, scenario: str = "pytest-failure") -> Path:
    return next((FIXTURES / agent / scenario / "session").rglob(pattern))


LOOKALIKE_BASES: dict[str, Callable[[], Path]] = {
    "claude-code": lambda: _lab("claude-code", "*.jsonl"),
    "codex": lambda: _lab("codex", "rollout-*.jsonl"),
    "gemini-cli": lambda: _lab("gemini-cli", "session-*.jsonl"),
    "mini-swe-agent": lambda: _lab("mini-swe-agent", "*.traj.json"),
    "swe-agent": lambda: sessions_dir() / "swe-agent/ctf/pwn/warmup.traj",
    "openhands": lambda: sessions_dir() / "openhands/runtime_trajs/basic_gui_mode.json",
}

_OTHER_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                          st.floats(allow_nan=False), st.text(max_size=20),
                          st.lists(st.integers(), max_size=3),
                          st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (paths of keys and indexes), the root excluded."""
    out: list[tuple[Any, ...]] = []
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, inner in items:
        out.append((*path, key))
        out.extend(_places(inner, (*path, key)))
    return out


def _set(document: Any, place: tuple[Any, ...], value: Any) -> None:
    for key in place[:-1]:
        document = document[key]
    document[place[-1]] = value


@pytest.mark.parametrize("fmt", list(LOOKALIKE_BASES))
@_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), replacements=st.lists(_OTHER_VALUES, min_size=1,
                                                             max_size=6))
def test_a_session_with_values_of_other_types_is_read_or_its_typed_error(
        tmp_path: Path, fmt: str, seed: int, replacements: list[Any]) -> None:
    """Values replaced at random places: triage never raises, the inputs beside it read as
    alone, and the damaged one is either sessions with something in them or FC-DATA-00x."""
    base = LOOKALIKE_BASES[fmt]()
    lines = base.suffix == ".jsonl"
    document: Any = _jsonl(base)() if lines else json.loads(base.read_text())
    rng = random.Random(seed)
    places = _places(document)
    for value in replacements:
        _set(document, rng.choice(places), value)
        places = _places(document)
    damaged = tmp_path / f"damaged{base.suffix}"
    text = ("".join(json.dumps(r) + "\n" for r in document) if lines
            else json.dumps(document))
    damaged.write_text(text)
    good = LOOKALIKE_BASES["claude-code" if fmt != "claude-code" else "codex"]()
    alone = triage([good])
    result = triage([good, damaged])
    assert [without_error_ids(s.to_dict()) for s in result.sessions if s.path == str(good)] == [
        without_error_ids(s.to_dict()) for s in alone.sessions]
    item = next(i for i in result.inputs if i.path == str(damaged))
    sessions = [s for s in result.sessions if s.path == str(damaged)]
    if item.error_code is None:
        assert sessions, item
        for session in sessions:
            assert (session.steps or session.failures or session.outcomes
                    or session.status != "unknown"), session.to_dict()
    else:
        assert item.error_code.startswith("FC-DATA-00"), item


# -- words of a format without its structure -----------------------------------------------

LOOKALIKE_TEXTS: dict[str, str] = {
    # an OpenAI-style chat export: role/content records, like several agents' messages
    "chat-export.jsonl": "".join(json.dumps(r) + "\n" for r in [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": "```bash\npytest -q\n```"}]),
    # a service's own JSON log, with type/message/sessionId keys of its own
    "service.jsonl": "".join(json.dumps(r) + "\n" for r in [
        {"type": "request", "message": "GET /", "sessionId": "abc", "status": 500},
        {"type": "response", "message": "error", "sessionId": "abc"}]),
    # a note quoting a Claude Code record and a trajectory's keys, in prose
    "notes.md": ('We saw lines like {"type": "assistant", "message": {"content": []}} and '
                 'a trajectory with "trajectory": [] and "history": [] in it.\n'),
    # a markdown file that talks about aider
    "aider-notes.md": "# aider chat notes\n\nWe ran `aider --yes` on the repo.\n",
    # a JSON document with a messages list that is not a trajectory
    "messages.json": json.dumps({"messages": ["hello", "world"], "info": "none"}),
    # a Codex-looking record type in a different envelope
    "rollout-notes.jsonl": json.dumps({"kind": "session_meta", "text": "not a rollout"}) + "\n",
    # a CSV with a header naming the fields agents use
    "events.jsonl": "type,timestamp,payload\nsession_meta,2026-01-01,{}\n",
}


@pytest.mark.parametrize("name", list(LOOKALIKE_TEXTS))
def test_text_with_a_formats_words_is_not_a_session(tmp_path: Path, name: str) -> None:
    """Named, an FC-DATA-002 error and no session; in a folder, skipped and counted."""
    path = tmp_path / "named" / name
    path.parent.mkdir()
    path.write_text(LOOKALIKE_TEXTS[name])
    named = triage([path])
    assert [i.error_code for i in named.inputs] == ["FC-DATA-002"], named.inputs
    assert named.sessions == []
    folder = tmp_path / "walked"
    folder.mkdir()
    (folder / name).write_text(LOOKALIKE_TEXTS[name])
    good = folder / "z.jsonl"
    good.write_bytes(LOOKALIKE_BASES["claude-code"]().read_bytes())
    walked = triage([folder])
    assert walked.skipped == [str(folder / name)]
    assert [i.path for i in walked.inputs] == [str(good)]
