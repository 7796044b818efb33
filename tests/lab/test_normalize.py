"""tests.lab.normalize: a run's session files become fixtures that name no machine."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._needs import missing
from tests.conftest import DEEP_EXAMPLES
from tests.lab.normalize import LAB_PORT, Normalizer

# --- one run's folders, as the runner names them ---------------------------------------------

ROOT = "/tmp/failcode-lab-k3j9x2qa"
HOME = f"{ROOT}/home"
TMP = f"{ROOT}/tmp"
PROJECT = f"{ROOT}/project"
AGENT = "/srv/lab-agents/claude-code-2.1.197"
USER_HOME = "/home/alice"
PYTHON = f"{USER_HOME}/.pyenv/versions/3.11.7"
PORT = 41234

PATHS = {
    AGENT: "/lab/agent", PROJECT: "/lab/project", HOME: "/lab/home", TMP: "/lab/tmp",
    ROOT: "/lab", PYTHON: "/lab/python", USER_HOME: "/lab/user",
}

UUID_A = "c23fbc12-5e4d-4a3b-9c2d-1e0f9a8b7c6d"
UUID_B = "7d9e0f1a-2b3c-4d5e-8f6a-0b1c2d3e4f5a"
FAKE_1 = "00000000-0000-4000-8000-000000000001"
FAKE_2 = "00000000-0000-4000-8000-000000000002"
SHA_A = "3f786850e387550fdab836ed7e6dc881de23001b"
SHA_B = "89e6c98d92887913cadf06b2adb97f26cde4849b"


def normalizer(paths: dict[str, str] | None = None) -> Normalizer:
    """A fresh normalizer for the run above."""
    return Normalizer(paths=dict(PATHS if paths is None else paths), port=PORT)


def one(text: str) -> str:
    """``text`` normalized as the only file of a run."""
    return normalizer().texts([text])[0]


# --- paths ---------------------------------------------------------------------------------


def test_claude_code_cwd_becomes_lab_project() -> None:
    """The project folder in a Claude Code line becomes ``/lab/project``."""
    line = json.dumps({"type": "user", "cwd": PROJECT, "sessionId": UUID_A,
                       "timestamp": "2026-12-01T18:40:12.345Z"})
    assert json.loads(one(line))["cwd"] == "/lab/project"


@pytest.mark.parametrize(("real", "fake"), [
    (f"{HOME}/.claude.json", "/lab/home/.claude.json"),
    (f"{TMP}/ccY1rAkT.o", "/lab/tmp/ccY1rAkT.o"),
    (f"{AGENT}/bin/claude", "/lab/agent/bin/claude"),
    (f"{PYTHON}/bin/python3.11", "/lab/python/bin/python3.11"),
    (f"{USER_HOME}/.gitconfig", "/lab/user/.gitconfig"),
])
def test_each_run_folder_becomes_its_fixed_path(real: str, fake: str) -> None:
    """HOME, TMPDIR, the agent install, the Python prefix and the user's home get fixed paths."""
    line = "/usr/bin/ld: {}: in function `main'"
    assert one(line.format(real)) == line.format(fake)


def test_claude_code_folder_name_form_is_replaced() -> None:
    """Claude Code's project folder name (non-alphanumerics as ``-``) becomes ``-lab-project``."""
    run = normalizer()
    run.texts([json.dumps({"cwd": PROJECT, "sessionId": UUID_A})])
    name = run.name(f".claude/projects/-tmp-failcode-lab-k3j9x2qa-project/{UUID_A}.jsonl")
    assert name == f".claude/projects/-lab-project/{FAKE_1}.jsonl"


def test_nested_home_is_replaced_as_home_not_as_root_plus_suffix() -> None:
    """A HOME inside the run root becomes HOME's fixed path, whatever order the map lists them."""
    run = normalizer({ROOT: "/lab/root", HOME: "/lab/home"})
    assert run.texts([f"{HOME}/.claude.json -tmp-failcode-lab-k3j9x2qa-home"]) == [
        "/lab/home/.claude.json -lab-home"]


def test_python_under_the_user_home_is_replaced_as_python() -> None:
    """A Python prefix inside the user's home is the Python, not the home plus a suffix."""
    assert one(f"{PYTHON}/lib/python3.11/site.py") == "/lab/python/lib/python3.11/site.py"


def test_a_word_containing_the_user_home_name_is_kept() -> None:
    """``rootdir`` stays when the user's home is ``/root``: only the path is replaced."""
    run = normalizer({"/root": "/lab/user"})
    assert run.texts(["rootdir: /lab/project", "cd /root/x"]) == [
        "rootdir: /lab/project", "cd /lab/user/x"]


@pytest.mark.parametrize("text", ["pytest --rootdir=tests", "mount /rootfs on /mnt"])
def test_a_path_is_replaced_only_as_a_whole_component(text: str) -> None:
    """A user home ``/root`` leaves ``--rootdir`` and ``/rootfs`` as they are."""
    assert normalizer({"/root": "/lab/user"}).texts([text]) == [text]


# --- port, host ----------------------------------------------------------------------------


def test_stub_port_becomes_8765() -> None:
    """The stub's port on 127.0.0.1 or localhost becomes 8765."""
    text = f"--openai-api-base http://127.0.0.1:{PORT}/v1 (localhost:{PORT})"
    assert one(text) == f"--openai-api-base http://127.0.0.1:{LAB_PORT}/v1 (localhost:{LAB_PORT})"


@pytest.mark.parametrize("text", [
    "postgresql://127.0.0.1:5432/app", f"localhost:{PORT}5 refused", f"listening on :{PORT}0",
])
def test_a_port_that_is_not_the_stubs_is_kept(text: str) -> None:
    """Another port, or a longer number starting with the stub's, is left alone."""
    assert one(text) == text


def test_host_name_becomes_lab_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's host name becomes ``lab-host``."""
    monkeypatch.setattr(socket, "gethostname", lambda: "build-7f3a")
    text = '{"hostname":"build-7f3a","prompt":"alice@build-7f3a:~$ make"}'
    assert one(text) == '{"hostname":"lab-host","prompt":"alice@lab-host:~$ make"}'


# --- UUIDs and long hex ids ----------------------------------------------------------------


def test_uuids_are_numbered_by_first_appearance() -> None:
    """The first UUID seen is ...-000000000001, the second ...-000000000002."""
    text = f'{{"uuid":"{UUID_B}","parentUuid":"{UUID_A}","sessionId":"{UUID_B}"}}'
    assert one(text) == f'{{"uuid":"{FAKE_1}","parentUuid":"{FAKE_2}","sessionId":"{FAKE_1}"}}'


def test_same_uuid_gets_same_replacement_in_two_files_of_one_run() -> None:
    """One ``texts`` call numbers the UUIDs of all its files together."""
    first, second = normalizer().texts([f'{{"sessionId":"{UUID_A}"}}',
                                        f'{{"id":"{UUID_B}","sessionId":"{UUID_A}"}}'])
    assert first == f'{{"sessionId":"{FAKE_1}"}}'
    assert second == f'{{"id":"{FAKE_2}","sessionId":"{FAKE_1}"}}'


def test_different_uuids_get_different_replacements() -> None:
    """Distinct UUIDs never share a replacement."""
    uuids = [f"{n:08x}-5e4d-4a3b-9c2d-1e0f9a8b7c6d" for n in range(0xabc00000, 0xabc00000 + 20)]
    out = one(" ".join(uuids)).split()
    assert len(set(out)) == 20


def test_an_uppercase_uuid_is_the_same_uuid() -> None:
    """A UUID written in upper case gets the replacement of its lower-case form."""
    assert one(f"{UUID_A} {UUID_A.upper()}") == f"{FAKE_1} {FAKE_1}"


def test_git_sha_in_a_sentence_is_numbered_consistently() -> None:
    """A 40-hex SHA becomes a numbered id of the same length; the same SHA, the same id."""
    out = one(f"HEAD is now at {SHA_A} fix\nmerge {SHA_B} into {SHA_A}.")
    fake_a, fake_b = "0" * 38 + "f1", "0" * 38 + "f2"
    assert out == f"HEAD is now at {fake_a} fix\nmerge {fake_b} into {fake_a}."


@pytest.mark.parametrize("text", [
    "short sha abc1234 ok", "number 12345678901234567890", "word facadebeefcafedeadbeef",
])
def test_short_hex_and_hex_without_digit_or_letter_is_kept(text: str) -> None:
    """A hex token under 16 digits, or one with no digit or no letter, is not an id."""
    assert one(text) == text


# --- Codex, Gemini, aider ------------------------------------------------------------------


CODEX_UUID = "019ad1f2-5a3b-7c4d-8e5f-0123456789ab"


def test_codex_rollout_line_epoch_under_time_key_becomes_2026_01_01() -> None:
    """``"started_at":1796149773`` (seconds) becomes 2026-01-01's epoch."""
    line = '{"type":"turn_context","payload":{"started_at":1796149773,"createdAt":1796149773123}}'
    assert one(line) == (
        '{"type":"turn_context","payload":{"started_at":1767225600,"createdAt":1767225600000}}')


def test_an_epoch_like_number_under_another_key_is_kept() -> None:
    """A 10-digit number under a key that names no time is left alone."""
    line = '{"size":1796149773,"input_tokens":1796149773}'
    assert one(line) == line


def test_codex_rollout_name_gets_the_lab_day_and_numbered_uuid() -> None:
    """The date folders and the time in a rollout's name go to 2026-01-01, its UUID numbered."""
    run = normalizer()
    run.texts([f'{{"type":"session_meta","payload":{{"id":"{CODEX_UUID}","cwd":"{PROJECT}"}}}}'])
    name = run.name(f"sessions/2026/12/01/rollout-2026-12-01T18-40-12-{CODEX_UUID}.jsonl")
    assert name == f"sessions/2026/01/01/rollout-2026-01-01T00-00-00-{FAKE_1}.jsonl"


def test_codex_rollout_name_with_uuid_starting_with_four_digits() -> None:
    """A rollout whose UUID starts with four digits (UUIDv7 of 2025) is normalized alike."""
    uuid = "0199d4a2-5a3b-7c4d-8e5f-0123456789ab"
    run = normalizer()
    run.texts([f'{{"payload":{{"id":"{uuid}"}}}}'])
    name = run.name(f"sessions/2026/12/01/rollout-2026-12-01T18-40-12-{uuid}.jsonl")
    assert name == f"sessions/2026/01/01/rollout-2026-01-01T00-00-00-{FAKE_1}.jsonl"


def test_codex_chunk_id_and_wall_time_are_fixed() -> None:
    """Codex's ``Chunk ID:`` becomes 000000 and ``Wall time:`` 0.0000 seconds."""
    text = "Chunk ID: 3f2a1b\nWall time: 0.0513 seconds\nProcess exited with code 1"
    assert one(text) == "Chunk ID: 000000\nWall time: 0.0000 seconds\nProcess exited with code 1"


@pytest.mark.parametrize(("line", "expected"), [
    ('{"duration_ms":1532}', '{"duration_ms":0}'),
    ('{"durationMs": 87}', '{"durationMs": 0}'),
    ('{"elapsed":3.25}', '{"elapsed":0}'),
    ('{"api_latency":412}', '{"api_latency":0}'),
])
def test_durations_become_zero(line: str, expected: str) -> None:
    """A number under a duration-like key becomes 0."""
    assert one(line) == expected


def test_gemini_pgid_and_pid_become_4242() -> None:
    """Gemini's ``Process Group PGID: N`` and a ``"pid"`` value become 4242."""
    line = ('{"output":"Exit Code: 126\\nProcess Group PGID: 12345\\n","pid": 9876}')
    assert one(line) == '{"output":"Exit Code: 126\\nProcess Group PGID: 4242\\n","pid": 4242}'


def test_codex_process_id_becomes_4242() -> None:
    """Codex's ``"process_id": "N"`` (a string) becomes 4242."""
    assert one('{"type":"CommandExecution","process_id":"71230"}') == (
        '{"type":"CommandExecution","process_id":"4242"}')


def test_codex_current_date_becomes_the_lab_day() -> None:
    """Codex's ``<current_date>`` and ``"current_date"`` become 2026-01-01."""
    line = '{"text":"<current_date>2026-12-01</current_date>","current_date":"2026-12-01"}'
    assert one(line) == (
        '{"text":"<current_date>2026-01-01</current_date>","current_date":"2026-01-01"}')


def gemini_run(uuid: str) -> Normalizer:
    """A run that has normalized one Gemini chat line naming session ``uuid``."""
    run = normalizer()
    run.texts([f'{{"sessionId":"{uuid}","startTime":"2026-12-01T18:40:12.345Z"}}'])
    return run


def test_gemini_file_name_gets_the_lab_time_and_uuid_prefix() -> None:
    """``session-<time>-<8 hex of the session UUID>`` gets the lab time and the fake's prefix."""
    run = gemini_run(UUID_A)
    name = run.name(".gemini/tmp/project/chats/session-2026-12-01T18-40-c23fbc12.jsonl")
    assert name == ".gemini/tmp/project/chats/session-2026-01-01T00-00-00000000.jsonl"


@pytest.mark.parametrize("prefix", ["12c23fbc", "65d3f0a1"])
def test_gemini_file_name_whose_prefix_starts_with_two_digits(prefix: str) -> None:
    """A session UUID that starts with two digits gives the same name shape as any other."""
    run = gemini_run(prefix + UUID_A[8:])
    name = run.name(f".gemini/tmp/project/chats/session-2026-12-01T18-40-{prefix}.jsonl")
    assert name == ".gemini/tmp/project/chats/session-2026-01-01T00-00-00000000.jsonl"


def test_uuid_prefix_in_an_earlier_file_of_the_run_is_replaced() -> None:
    """An 8-hex prefix of a run's UUID is replaced whichever file shows the full UUID first."""
    first, _ = normalizer().texts(["resuming session c23fbc12", f'{{"sessionId":"{UUID_A}"}}'])
    assert first == "resuming session 00000000"


def test_an_8_hex_token_that_begins_no_uuid_is_kept() -> None:
    """A short hex token that is not a run UUID's prefix stays."""
    run = gemini_run(UUID_A)
    assert run.texts(["commit 1a2b3c4d on main"]) == ["commit 1a2b3c4d on main"]


def test_aider_markdown_header_gets_the_lab_time() -> None:
    """aider's ``# aider chat started at`` time becomes 2026-01-01 00:00:00."""
    header = "\n# aider chat started at 2026-12-01 18:40:12\n\n> Aider v0.86.2  \n"
    assert one(header) == "\n# aider chat started at 2026-01-01 00:00:00\n\n> Aider v0.86.2  \n"


# --- ISO-8601 times ------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "fake"), [
    ("2026-12-01T18:40:12.345Z", "2026-01-01T00:00:00.000Z"),
    ("2026-12-01T18:40:12.123456789Z", "2026-01-01T00:00:00.000000000Z"),
    ("2026-12-01T18:40:12+00:00", "2026-01-01T00:00:00+00:00"),
    ("2026-12-01 18:40:12", "2026-01-01 00:00:00"),
    ("2026-12-01T18:40", "2026-01-01T00:00"),
    ("2026-12-01T18-40-12", "2026-01-01T00-00-00"),
    ("2026-12-01T18-40", "2026-01-01T00-00"),
])
def test_an_iso_time_keeps_its_shape(raw: str, fake: str) -> None:
    """Separators, precision and zone survive; the value becomes the run's first lab instant."""
    assert one(f"at {raw} done") == f"at {fake} done"


def test_three_times_out_of_order_keep_their_order() -> None:
    """The n-th distinct instant becomes 00:00:00 plus n seconds, whatever order the text has."""
    text = ("2026-12-01T18:41:30.000Z 2026-12-01T18:40:10.000Z 2026-12-01T18:40:20.000Z")
    assert one(text) == "2026-01-01T00:00:02.000Z 2026-01-01T00:00:00.000Z 2026-01-01T00:00:01.000Z"


def test_instants_are_ordered_across_the_files_of_one_run() -> None:
    """The order of instants spans every file of a ``texts`` call."""
    out = normalizer().texts(['{"timestamp":"2026-12-01T18:40:20.000Z"}',
                              "# aider chat started at 2026-12-01 18:40:10"])
    assert out == ['{"timestamp":"2026-01-01T00:00:01.000Z"}',
                   "# aider chat started at 2026-01-01 00:00:00"]


def test_one_instant_in_two_shapes_maps_to_one_lab_instant() -> None:
    """The same instant written two ways gets the same lab instant, each in its own shape."""
    text = "2026-12-01T18:40:12.000Z 2026-12-01 18:40:05 2026-12-01 18:40:12"
    assert one(text) == "2026-01-01T00:00:01.000Z 2026-01-01 00:00:00 2026-01-01 00:00:01"


# --- JSON and idempotence ------------------------------------------------------------------

SESSION = "\n".join([
    json.dumps({"parentUuid": None, "type": "user", "uuid": UUID_A, "sessionId": UUID_B,
                "cwd": PROJECT, "timestamp": "2026-12-01T18:40:12.345Z",
                "message": {"role": "user", "content": f"see {HOME}/.claude.json"}}),
    json.dumps({"timestamp": "2026-12-01T18:40:13.001Z", "type": "session_meta",
                "payload": {"id": CODEX_UUID, "started_at": 1796149773, "duration_ms": 1532,
                            "base_url": f"http://127.0.0.1:{PORT}/v1",
                            "output": "Chunk ID: 3f2a1b\nWall time: 0.0513 seconds\n"
                                      f"HEAD is now at {SHA_A}"}}),
    json.dumps({"sessionId": UUID_A, "startTime": "2026-12-01T18:40:11.000Z", "pid": 9876,
                "content": [{"text": "Process Group PGID: 12345", "file": f"{TMP}/x.o"}],
                "rollout": f"sessions/2026/12/01/rollout-2026-12-01T18-40-12-{CODEX_UUID}"}),
])


def shape(value: Any) -> Any:
    """The keys and nesting of a JSON value, with its leaves reduced to their kind."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    return "number" if isinstance(value, int | float) else type(value).__name__


def test_json_stays_valid_json_with_the_same_keys() -> None:
    """Every JSONL line still parses, with the same keys and nesting."""
    for before, after in zip(SESSION.splitlines(), one(SESSION).splitlines(), strict=True):
        assert shape(json.loads(after)) == shape(json.loads(before))


def test_the_sample_session_names_no_run_folder() -> None:
    """After normalization the sample names none of the run's folders, port or real day."""
    out = one(SESSION)
    assert ROOT not in out
    assert str(PORT) not in out
    assert "2026-12-01" not in out
    assert "2026/12/01" not in out


def test_normalizing_a_normalized_text_changes_nothing() -> None:
    """A fresh normalizer of the same run leaves a normalized session as it is."""
    once = one(SESSION)
    assert one(once) == once


FRAGMENTS = [
    PROJECT, f"{HOME}/.claude.json", f"{TMP}/ccY1rAkT.o", f"{AGENT}/bin/claude",
    f"{PYTHON}/bin/python3.11", f"{USER_HOME}/.gitconfig", "-tmp-failcode-lab-k3j9x2qa-project",
    UUID_A, UUID_B, CODEX_UUID, "c23fbc12", SHA_A, SHA_B,
    "2026-12-01T18:40:12.345Z", "2026-12-01T18:40:05.000Z", "2026-12-01 18:40:12",
    "2026-11-30T23:59:59+00:00", "2026-12-01T18-40", "2026-12-01T18-40-12",
    '"started_at":1796149773', '"timestamp_ms":1796149773123', '"duration_ms":1532',
    '"pid": 9876', "Process Group PGID: 12345", "Chunk ID: 3f2a1b", "Wall time: 0.0513 seconds",
    "sessions/2026/12/01/", f"http://127.0.0.1:{PORT}/v1", "127.0.0.1:5432",
]
fragments = st.one_of(st.sampled_from(FRAGMENTS), st.from_regex(r"[a-z]{1,8}", fullmatch=True))
session_texts = st.builds(lambda parts, sep: sep.join(parts),
                          st.lists(fragments, max_size=30), st.sampled_from([" ", "\n", ", "]))


def _idempotent(text: str) -> None:
    once = one(text)
    assert one(once) == once


@settings(max_examples=50)
@given(session_texts)
def test_normalizing_is_idempotent_on_session_like_text(text: str) -> None:
    """Any mix of paths, UUIDs, times, ids and words normalizes to a fixed point."""
    _idempotent(text)


@pytest.mark.deep
@settings(max_examples=DEEP_EXAMPLES, derandomize=False)
@given(session_texts)
def test_normalizing_is_idempotent_on_session_like_text_deep(text: str) -> None:
    """Idempotence over a large example budget (the ``deep`` CI job)."""
    _idempotent(text)


# --- the committed fixtures ----------------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures"
_ISO_DAY = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?:[T ]|-(?=\d{2}-\d{2}))\d{2}[:-]\d{2}")
_DAY_FOLDER = re.compile(r"(?<!\d)(20\d\d/[01]\d/[0-3]\d)/")


def session_files() -> list[tuple[str, str]]:
    """Each committed session file (and kept stdout), as (path under fixtures/, text); missing
    if there are none."""
    found = []
    for session in sorted(FIXTURES.glob("*/*/session")):
        for path in sorted(session.rglob("*")):
            try:
                text = path.read_text(errors="surrogateescape")
            except (FileNotFoundError, IsADirectoryError):  # a folder, or a run rewriting it
                continue
            found.append((str(path.relative_to(FIXTURES)), text))
    for meta in sorted(FIXTURES.glob("*/*/meta.json")):  # an agent's stdout kept beside them
        kept = json.loads(meta.read_text()).get("stdout")
        if kept and (meta.parent / kept).is_file():
            found.append((str((meta.parent / kept).relative_to(FIXTURES)),
                          (meta.parent / kept).read_text(errors="surrogateescape")))
    if not found:
        missing(f"no committed session files under {FIXTURES}/*/*/session/")
    return found


def offenders(pattern: re.Pattern[str], *, names: bool = False, allowed: str = "") -> list[str]:
    """``file: match`` for every hit of ``pattern`` in the fixtures' texts (or their names),
    but those whose first group is ``allowed``."""
    return [f"{name}: {match.group(0)!r}" for name, text in session_files()
            for match in pattern.finditer(name if names else text)
            if not allowed or match.group(1) != allowed]


def test_fixtures_name_no_host() -> None:
    """No committed session file contains this machine's host name as a word."""
    host = socket.gethostname()
    if host in {"", "localhost", "lab-host"}:  # names no machine
        host = "\0"
    hits = offenders(re.compile(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])"))
    assert not hits, "\n".join(hits)


def test_fixtures_name_no_real_home() -> None:
    """No committed session file contains a path in this user's real home."""
    hits = offenders(re.compile(rf"(?<![\w.-]){re.escape(str(Path.home()))}/"))
    assert not hits, "\n".join(hits)


def test_fixtures_name_no_tmp_path() -> None:
    """No committed session file contains a path under ``/tmp/`` (``/lab/tmp/`` is the fake)."""
    hits = offenders(re.compile(r"(?<![\w.-])/tmp/"))
    assert not hits, "\n".join(hits)


def test_fixtures_have_times_on_the_lab_day_only() -> None:
    """Every ISO time in a committed session file is on 2026-01-01."""
    hits = offenders(_ISO_DAY, allowed="2026-01-01")
    assert not hits, "\n".join(hits)


def test_fixture_file_names_are_on_the_lab_day_only() -> None:
    """Every ISO time in a committed session file's name is on 2026-01-01."""
    hits = offenders(_ISO_DAY, names=True, allowed="2026-01-01")
    assert not hits, "\n".join(hits)


def test_fixture_file_names_have_the_lab_day_folder_only() -> None:
    """Every date folder in a committed session file's path is 2026/01/01."""
    hits = offenders(_DAY_FOLDER, names=True, allowed="2026/01/01")
    assert not hits, "\n".join(hits)
