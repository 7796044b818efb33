"""normalize_message: volatile data becomes placeholders, identity stays."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import NORMALIZE_VERSION, PLACEHOLDERS, normalize_message
from failcode.signature._normalize import CUT_MARKER, MAX_CHARS
from tests._growth import growth
from tests._growth_alarm import LIMIT
from tests._growth_alarm import growth as growth_alarm
from tests._needs import missing
from tests._paths import SHARED

if TYPE_CHECKING:
    from pathlib import Path

LOGHUB = SHARED / "data" / "loghub2k"


def loghub_dir() -> Path:
    """The Loghub-2k sample, or a skip (a failure on CI, where it must be present)."""
    if not (LOGHUB / "formats.json").exists():
        missing("Loghub-2k data not present")
    return LOGHUB


# --- the table: volatile data -----------------------------------------------------------

VOLATILE = [
    ("2024-05-01T12:34:56.789Z build failed", "<ts> build failed"),
    ("2024-05-01 12:34:56,789 ERROR boom", "<ts> ERROR boom"),
    ("Jun 14 15:16:01 combo sshd[19939]: auth failure", "<ts> combo sshd[<int>]: auth failure"),
    ("[Sun Dec 04 04:47:44 2005] [notice] ok", "[<ts>] [notice] ok"),
    ("Date: Sun, 06 Nov 1994 08:49:37 GMT", "Date: <ts>"),
    ("retry on Monday", "retry on <ts>"),
    ("/tmp/tmpab12/config/settings.toml not found", "<tmp>/config/settings.toml not found"),
    ("open('/tmp/pytest-of-bob/x.txt')", "open('<tmp>/x.txt')"),
    ("/var/folders/xy/abc123/T/tmpq1/a.py", "<tmp>/a.py"),
    ("/private/var/folders/xy/abc123/T/tmpq1/a.py", "<tmp>/a.py"),
    ("/home/alice/proj/x.py", "<home>/proj/x.py"),
    ("/Users/alice/proj/x.py", "<home>/proj/x.py"),
    ("C:\\Users\\alice\\proj\\x.py", "<home>\\proj\\x.py"),
    ("C:\\Users\\alice\\AppData\\Local\\Temp\\tmpz9\\x.py", "<tmp>\\x.py"),
    ("worker pid=4242 exited", "worker pid=<int> exited"),
    ("listening on 127.0.0.1:8080", "listening on <ip>:<int>"),
    ("connect to [::1]:5432 refused", "connect to [<ip>]:<int> refused"),
    ("id 123e4567-e89b-12d3-a456-426614174000 gone", "id <uuid> gone"),
    ("segfault at 0x7ffd5e8c9a10", "segfault at <hex>"),
    ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8 bad", "commit <hex> bad"),
    ("request id: abc-123-def failed", "request id: <id> failed"),
    ("x-request-id=Q7XyZ2 failed", "x-request-id=<id> failed"),
    ("openai error req_8f3a9c2b1d", "openai error req_<id>"),
    ("openai error req_AAAAAAAAAAAAAAAAAAAB", "openai error req_<id>"),
    ("see req_handler_main", "see req_handler_main"),
    ("at 5-01-01T00:00:00Z", "at <ts>"),
    ("src/foo.c:12:5: error: expected ';'", "src/foo.c:<int>:<int>: error: expected ';'"),
    ("src/app.py:1:80: E501 line too long", "src/app.py:<int>:<int>: E501 line too long"),
    ("/build/2024-01-02T03:04:05Z/v2/x.py", "/build/<ts>/v<int>/x.py"),
    ("timed out after 1.5s", "timed out after <duration>"),
    ("timed out after 300ms", "timed out after <duration>"),
    ("took 12 seconds", "took <duration>"),
    ("file is 12 MB", "file is <size>"),
    ("wrote 4KiB", "wrote <size>"),
    ("3 tests failed", "<int> tests failed"),
    ("Authorization: Bearer abcdefghijklmnop123456", "Authorization: Bearer <secret>"),
    ("a  b\t\tc\n\nd", "a b c d"),
]


@pytest.mark.parametrize(("raw", "expected"), VOLATILE)
def test_volatile_data_becomes_placeholders(raw: str, expected: str) -> None:
    """Each kind of volatile data is replaced by its named placeholder."""
    assert normalize_message(raw) == expected


IDENTITY = [
    "undefined reference to 'foo_bar2'",
    "undefined reference to `foo_bar'",
    "ModuleNotFoundError: No module named 'requests2'",
    "FAILED tests/test_x.py::test_login_v2 - AssertionError",
    "FAILED tests/test_x.py::test_case_2",
    "F401 'os' imported but unused",
    "error TS2304: Cannot find name 'foo'.",
    "error[E0425]: cannot find value `x` in this scope",
    "error 'x' is defined but never used no-unused-vars",
    "model gpt-4o-2024-08-06 is overloaded",
    "model claude-3-5-sonnet-20241022 not found",
    "CONFLICT (content): Merge conflict in src/migrations/0002_auto.py",
    "utf8 codec can't decode byte",
]


@pytest.mark.parametrize("raw", IDENTITY)
def test_identity_stays_verbatim(raw: str) -> None:
    """Symbols, modules, test names, lint codes, model names and files keep their digits."""
    assert normalize_message(raw) == raw


def test_version_and_placeholders_are_exported() -> None:
    """The rule version and the placeholder set are public constants."""
    assert NORMALIZE_VERSION == "n1"
    assert set(PLACEHOLDERS) >= {
        "<int>", "<hex>", "<uuid>", "<ip>", "<tmp>", "<home>", "<ts>",
        "<duration>", "<size>", "<id>", "<secret>",
    }  # fmt: skip
    assert all(p.startswith("<") and p.endswith(">") for p in PLACEHOLDERS)


def test_bytes_are_decoded_with_replacement() -> None:
    """Invalid UTF-8 in bytes never raises; it becomes U+FFFD."""
    assert normalize_message(b"bad \xff byte at 0x10") == "bad \ufffd byte at <hex>"


def test_nul_and_control_characters_become_spaces() -> None:
    """NUL and other control characters are whitespace for normalization."""
    assert normalize_message("a\x00b\x07c") == "a b c"


# --- the cap ---------------------------------------------------------------------------------


def test_long_message_is_cut_and_marked() -> None:
    """Text past MAX_CHARS is dropped and the cut is recorded with ' <cut>'."""
    out = normalize_message("word " * 10_000)
    assert out.endswith(" " + CUT_MARKER)
    assert len(out) <= MAX_CHARS + len(CUT_MARKER) + 1


def test_cut_depends_only_on_the_head() -> None:
    """Two long messages with the same head normalize alike whatever follows."""
    head = "error: " + "x " * 600
    assert normalize_message(head + "A" * 10_000) == normalize_message(head + "B" * 5)


def test_long_bytes_are_cut_before_decoding() -> None:
    """A 10 MB bytes message is cut too."""
    out = normalize_message(b"y " * 5_000_000)
    assert out.endswith(" " + CUT_MARKER)


def test_short_message_has_no_cut_marker() -> None:
    """A message within the cap gets no marker."""
    assert CUT_MARKER not in normalize_message("short message 42")


# --- properties ------------------------------------------------------------------------------

messages = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs", "Cc")),
    max_size=300,
)
volatile_bits = st.sampled_from(
    ["2024-01-02T03:04:05Z", "Jan  2 03:04:05", "0x7ffd1234", "/tmp/tmpab12/x", "pid=77",
     "127.0.0.1:8080", "123e4567-e89b-12d3-a456-426614174000", "req_9a8b7c6d5e", "12 MB",
     "/home/bob/src", "1.5s", "foo.c:12:5:", "ghp_" + "a1B2" * 9]
)  # fmt: skip


@given(messages)
def test_normalize_is_idempotent(text: str) -> None:
    """Normalizing twice gives the same text as normalizing once."""
    once = normalize_message(text)
    assert normalize_message(once) == once


@given(
    st.lists(st.one_of(volatile_bits, st.from_regex(r"[a-z]{1,8}", fullmatch=True)), max_size=30)
)
def test_normalize_is_idempotent_on_log_like_text(words: list[str]) -> None:
    """Idempotence holds on text full of volatile tokens."""
    once = normalize_message(" ".join(words))
    assert normalize_message(once) == once


@given(st.text(max_size=3000))
def test_normalize_is_idempotent_across_the_cut(text: str) -> None:
    """Idempotence holds for messages longer than the cap."""
    once = normalize_message(text * 3)
    assert normalize_message(once) == once


TEMPLATES = [
    "build failed at {} in step compile",
    "worker {} exited with status 1",
    "ERROR {} connection refused",
    "see {}/config/settings.toml for details",
]
timestamps = st.builds(
    lambda y, mo, d, h, mi, s, form: form.format(y=y, mo=mo, d=d, h=h, mi=mi, s=s),
    st.integers(1990, 2099), st.integers(1, 12), st.integers(1, 28),
    st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
    st.sampled_from(["{y}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z",
                     "{y}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.123",
                     "Mar {d:2} {h:02}:{mi:02}:{s:02}"]),
)  # fmt: skip
uuids = st.uuids().map(str)
tempdirs = st.from_regex(r"/tmp/tmp[a-z0-9_]{4,10}", fullmatch=True)
pids = st.integers(1, 4_000_000).map(lambda n: f"pid={n}")
ports = st.integers(1, 65535).map(lambda n: f"10.0.0.1:{n}")
VOLATILE_KINDS = {
    "timestamp": timestamps,
    "uuid": uuids,
    "tmp": tempdirs,
    "pid": pids,
    "port": ports,
}


@pytest.mark.parametrize("kind", sorted(VOLATILE_KINDS))
@pytest.mark.parametrize("template", TEMPLATES)
@settings(max_examples=40)
@given(data=st.data())
def test_volatile_value_never_changes_the_output(
    kind: str, template: str, data: st.DataObject
) -> None:
    """Two different values of one volatile kind in one message normalize alike."""
    a = data.draw(VOLATILE_KINDS[kind])
    b = data.draw(VOLATILE_KINDS[kind])
    assert normalize_message(template.format(a)) == normalize_message(template.format(b))


identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True)
IDENTITY_TEMPLATES = {
    "symbol": (identifiers, "undefined reference to '{}'"),
    "module": (identifiers, "ModuleNotFoundError: No module named '{}'"),
    "test": (identifiers.map(lambda s: "test_" + s), "FAILED tests/test_a.py::{} - assert 0"),
    "lint": (st.from_regex(r"(E|W|F|TS|SC|PLR)[0-9]{3,4}", fullmatch=True), "x.py:1:1: {} bad"),
    "model": (
        st.tuples(st.sampled_from(["gpt-4o", "claude-3-5-sonnet", "gemini-1.5-pro"]),
                  st.integers(20230101, 20251231)).map(lambda t: f"{t[0]}-{t[1]}"),
        "model {} is not available",
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(IDENTITY_TEMPLATES))
@given(data=st.data())
def test_distinct_identities_never_collide(kind: str, data: st.DataObject) -> None:
    """Two different names of one identity kind normalize to different texts."""
    strategy, template = IDENTITY_TEMPLATES[kind]
    a = data.draw(strategy)
    b = data.draw(strategy.filter(lambda x: x != a))
    assert normalize_message(template.format(a)) != normalize_message(template.format(b))


@given(st.text())
def test_never_raises_on_text(text: str) -> None:
    """Any str normalizes to a str."""
    assert isinstance(normalize_message(text), str)


@given(st.binary())
def test_never_raises_on_bytes(raw: bytes) -> None:
    """Any bytes normalize to a str."""
    assert isinstance(normalize_message(raw), str)


def test_lone_surrogates_do_not_raise() -> None:
    """Text with a lone surrogate normalizes to text that encodes as UTF-8."""
    out = normalize_message("bad \ud800 char 12")
    assert out.endswith(" char <int>")
    out.encode("utf-8")


# --- ReDoS: a correctness bound against catastrophic backtracking, not a speed test ------

ADVERSARIAL = {
    "equals": "=" * (1 << 20),
    "pem": "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * (1 << 20),
    "jwt_heads": "eyJ." * (1 << 18),
    "one_token": "a1" * (1 << 19),
    "digits": "7" * (1 << 20),
    "colons": "1:" * (1 << 19),
    "dots": "1." * (1 << 19),
    "dashes": "a-" * (1 << 19),
    "slashes": "/tmp/" * (1 << 18),
}


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_grows_linearly(name: str) -> None:
    """normalize_message on 1 MiB of an adversarial shape costs at most ~20x its 64 KiB case
    (its cap makes it nearly constant), and a cut is marked."""
    unit = ADVERSARIAL[name][:64]
    ratio, bound = growth(normalize_message, unit)
    assert ratio <= bound, f"{name}: 64 KiB -> 1 MiB grew {ratio:.0f}x (bound {bound:.0f}x)"
    assert normalize_message(ADVERSARIAL[name]).endswith(CUT_MARKER)


@pytest.mark.parametrize("name", ["equals", "jwt_heads", "digits"])
def test_adversarial_input_within_the_cap_grows_linearly(name: str) -> None:
    """The rules themselves stay linear below the cap: 16 times the text (64 characters to the
    cap) costs at most LIMIT times as much; each call gets a fresh text, so no cache answers."""
    counter = itertools.count()

    def fresh(text: str) -> object:
        return normalize_message(f"{text}{next(counter)}")

    small = ADVERSARIAL[name][: (MAX_CHARS - 1) // 16]
    large = ADVERSARIAL[name][: MAX_CHARS - 1 - 8]
    ratio = growth_alarm(fresh, small, large)
    assert ratio <= LIMIT, f"{name}: 16x the text cost {ratio:.0f}x (bound {LIMIT:.0f}x)"


# --- on real logs --------------------------------------------------------------------------


def test_normalized_groups_rarely_mix_events_on_loghub() -> None:
    """On Loghub-2k content, at least 95% of lines share their normalized text only with
    lines of the same true event (normalization does not over-merge)."""
    import csv

    data = loghub_dir()
    pure = total = 0
    for system_dir in sorted(p for p in data.iterdir() if p.is_dir()):
        name = system_dir.name
        with (system_dir / f"{name}_2k.log_structured.csv").open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        events: dict[str, set[str]] = defaultdict(set)
        keys = [normalize_message(r["Content"]) for r in rows]
        for k, r in zip(keys, rows, strict=True):
            events[k].add(r["EventId"])
        sizes = Counter(keys)
        pure += sum(n for k, n in sizes.items() if len(events[k]) == 1)
        total += len(rows)
    assert total >= 16 * 2000
    assert pure / total >= 0.95
