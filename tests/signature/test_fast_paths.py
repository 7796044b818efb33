"""Normalization's and redaction's fast paths give exactly what their slow paths give.

Each fast path skips rules that provably cannot apply; these tests compare it with the slow
path (every rule) on generated words and texts, with and without secrets and volatile tokens.
The private functions under test are imported from their modules here, in one place.
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode import Kind, normalize_message, redact, sign
from failcode.signature import _normalize, _redact, _signature

# pieces words and texts are made of: numbers, punctuation around them, the shapes each token
# rule reads (dates, hosts, ids, paths, units, models), non-ASCII digits and case folds
_WORD_PIECES = st.sampled_from([
    "0", "7", "12", "007", "0000000", "1234567", "2024", "-", "_", ".", ":", "/", "\\", "[", "]",
    "'", '"', "`", "(", ")", "{", "}", ",", ";", "!", "?", "x", "a", "e", "f", "Z", "T", "ms",
    "s", "h", "m", "MB", "KiB", "k", "bytes", "0x", "req_", "trace-", "span_", "corr-", "gpt-",
    "claude-", "o1", "test_", ".py", ".c", "::", "app-", "user_", "srv", "tmp", "deadbeef",
    "utf8", "E501", "TS2304", "\u00b2", "\u0663", "\u0131", "É", "µs", "v2", "<int>", "<tmp>",
])
words = st.lists(_WORD_PIECES | st.text(max_size=3), max_size=8).map("".join).filter(
    lambda w: w and not any(c.isspace() for c in w))
cores = st.lists(_WORD_PIECES, min_size=1, max_size=8).map("".join).filter(
    lambda w: not any(c.isspace() for c in w))

# fake secrets of several families, and look-alikes and gates without a secret
_SECRET_PIECES = st.sampled_from([
    "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "sk-proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8x",
    "AKIA" + "ABCDEFGHIJKLMNOP", "password=hunter2", "token: s3cr3t-T0ken-value",
    "https://user:p%40ss@example.com/x", "Bearer abcdefghijklmnopqrstuvwx12",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n", "api_key%3Dabcdef123456",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "xoxb-1234567890-abcdef",
    "KeyError", "keyboard", "passing", "tokens", "english", "glob", "-p", "-u", "sig",
    "s3.amazonaws.com", "%20", "%", "amz",
])
_PLAIN_PIECES = st.sampled_from([
    " ", "\n", "Connection reset by peer", "No such file or directory", "/tmp/run-9b08/x.py",
    "req_97b750923ceb3ffd", "10.0.0.12:8080", "2024-05-01T12:34:56Z", "worker 12 exited",
    "0xdeadbeef", "'user_42'", "at row 3142.", "É", "\u0131", "\ud800", "é",
])
texts = st.lists(_SECRET_PIECES | _PLAIN_PIECES | st.text(max_size=6), max_size=10).map(
    "".join)


@settings(max_examples=1000)
@given(words)
@example("6387.")
@example("'1796121881.402'.")
@example("[1::]")
@example("(0.5)")
@example("١٢")
def test_a_word_normalizes_alike_on_the_fast_and_the_slow_path(word: str) -> None:
    """_classify (numbers first) equals _classify_slow (every rule) on any word."""
    assert _normalize._classify(word) == _normalize._classify_slow(word)


@settings(max_examples=1000)
@given(cores)
@example("app-781")
@example("req_1234abcd")
@example("gpt-4o")
@example("deadbeef-dead-beef-dead-beefdeadbeef")
@example("/srv/app-781/src/main.py")
@example("/10.0.0.1")
@example("/10.0.0.1:8080")
@example("localhost:9571")
@example("+5s")
@example("-12ms")
@example("fe80::1")
def test_a_core_normalizes_alike_on_the_fast_and_the_slow_path(core: str) -> None:
    """_classify_core (plain cores first) equals _classify_core_slow on any core."""
    assert _normalize._classify_core(core) == _normalize._classify_core_slow(core)


# the model-name rule as one search: the family at the start or after "/", "." or ":"
_MODEL_ONE_SEARCH = re.compile("(?i)(?:^|[/.:])" + _normalize._MODEL_FAMILY)


@settings(max_examples=1000)
@given(cores)
@example("gpt-4o")
@example("openai/gpt-4o")
@example("x.claude")
@example("models:o3")
@example("PHI3")
@example("gpt.x")
@example("xgpt-4")
def test_the_model_check_finds_what_one_search_finds(core: str) -> None:
    """_names_model (a match at the start, a set-led search inside) equals one search."""
    assert _normalize._names_model(core) == (_MODEL_ONE_SEARCH.search(core) is not None)


@settings(max_examples=1000)
@given(cores)
@example("2024-01-02")
@example("12:30:01")
@example("10.0.0.1")
@example("1.5s")
@example("12MB")
@example("deadbeef-dead-beef-dead-beefdeadbeef")
def test_the_token_rules_in_one_pattern_pick_the_first_rule_that_matches(core: str) -> None:
    """The combined token pattern names the first rule, in order, that matches the core."""
    first = next((placeholder for placeholder, rx in _normalize._TOKEN_RULES
                  if rx.fullmatch(core)), None)
    m = _normalize._TOKEN_ANY.fullmatch(core)
    assert (None if m is None else _normalize._TOKEN_PLACEHOLDERS[m.lastindex - 1]) == first


@settings(max_examples=500)
@given(st.lists(words | _PLAIN_PIECES, max_size=12).map(" ".join))
def test_a_message_normalizes_alike_with_every_word_on_the_slow_path(message: str) -> None:
    """normalize_message equals the slow path for every word of any message."""
    _normalize._clear_caches()
    fast = normalize_message(message)
    module = vars(_normalize)
    saved = module["_classify"], module["_classify_core"]
    _normalize._clear_caches()
    module["_classify"], module["_classify_core"] = (_normalize._classify_slow,
                                                     _normalize._classify_core_slow)
    try:
        slow = normalize_message(message)
    finally:
        module["_classify"], module["_classify_core"] = saved
        _normalize._clear_caches()
    assert fast == slow


@settings(max_examples=1000)
@given(texts)
def test_redaction_skips_no_secret_on_its_fast_path(text: str) -> None:
    """redact (gate prescan first) equals the slow path on text with and without secrets."""
    assert redact(text) == _redact._redact_slow(text)


@settings(max_examples=500)
@given(texts, st.integers(min_value=0, max_value=64))
def test_a_slice_holding_the_whole_text_is_its_redaction(text: str, extra: int) -> None:
    """redact_slice from 0 to at least the decoded text's end equals redact of all of it."""
    end = (len(text) if text.isascii() else 3 * len(text)) + extra
    assert _redact.redact_slice(text, 0, end) == redact(text)


def test_only_the_path_rules_before_the_id_rule_are_gated_by_a_slash() -> None:
    """Text with no slash or backslash can skip exactly the whole-text rules before <id>."""
    rules = _normalize._TEXT_RULES
    first = _normalize._FIRST_ID_RULE
    assert rules[first][0] == "<id>"
    assert all("/" in g or "\\" in g for rule in rules[:first] for g in rule[2])
    assert not any("/" in g or "\\" in g for rule in rules[first:] for g in rule[2])


_OPTIONAL = st.sampled_from([None, 0, 1, 1.0, True, "", "1", "E0425", "policy"])


@settings(max_examples=300)
@given(st.sampled_from(list(Kind)), st.sampled_from(["python", "llm.openai"]),
       st.sampled_from([None, "src/a.py"]), st.lists(st.tuples(_OPTIONAL, _OPTIONAL, _OPTIONAL),
                                                      min_size=1, max_size=4))
def test_the_factory_signature_equals_sign_whatever_was_signed_before(
        kind: Kind, surface: str, location: str | None,
        optionals: list[tuple[object, object, object]]) -> None:
    """sign_value (prefixes kept per combination) equals sign(...).value in any order."""
    for status, diagnostic, blocker in optionals:
        fast = _signature.sign_value(kind, surface, "boom", location, message="worker 3 died",
                                     status=status, diagnostic=diagnostic, blocker=blocker)
        assert fast == sign(kind, surface, "boom", location, message="worker 3 died",
                            status=status, diagnostic=diagnostic, blocker=blocker).value
