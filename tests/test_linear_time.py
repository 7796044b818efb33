"""Issue 23, item 10: linear time on every text that reaches redaction, normalization or the
decoders, for every input class built from the rules themselves.

The classes are found by construction, not by example. For every rule of the tables (the
redaction rules ``_redact._RULES``, the provider families ``_redact._FAMILIES``, the assignment
scanner's stems and key names, the PEM scanner; the normalization rules ``_TEXT_RULES`` and
``_TOKEN_RULES``; every pattern of the classification modules) the words it reacts to are read
from the rule: its gates, prefixes and context words, and every literal its regex holds (from
the parsed pattern, alternations expanded). Each word is followed by each separator of a class
(space, ``=``, ``:``, ``-``, ``_``, ``.``, ``/``, quotes, newline, tab, ``&``, ``,``,
none; each also URL-encoded or JSON-escaped where the rules read that form) and the run
repeated to the size measured.

One test per (rule, separator class): the growth ratio (``tests/_growth_alarm.py``) of 16
times the input, 2 KiB against 32 KiB of each run, stays under ``LIMIT``. Each run is measured
on its own (a quadratic run among linear ones would vanish in their sum): a quick screen of
every run, then :func:`growth` on each run the screen puts over the bound, which decides. A
redaction or normalization class is one run per word and separator of the class. A
classification pattern is one test: one run per separator class, each cycling through all the
words of the pattern, given to ``classify_text`` (as a message and as a traceback) and to
``from_command`` (as its standard error).

Found this way, and quadratic before the fix: the assignment scanner on a name it then rejects
(a bare ``key``, ``key`` glued to a word, ``oauth``, a name inside a URL's user part or an
ARN) followed by an opening URL-encoded quote (``key=%22key=%22…``, ``oauth=%27…``): the value
was read to its end for every name (32 KiB: 0.6 s, x3.5 per doubling). And, quadratic up
to a family's length bound (2000 characters): prefixes packed into one body run (``sl.sl.…``)
each re-read the run for the placeholder test (5.5 s per MiB of such runs).
"""

from __future__ import annotations

import gc
import re
import re._constants as sre_constants
import re._parser as sre_parser
import time
from typing import TYPE_CHECKING, Any

import pytest

from failcode import classify_text, from_command
from failcode._lazy_re import _LazyPattern
from failcode.classification import (
    _classify,
    _command,
    _parsers,
    _providers,
    _purpose,
)
from failcode.signature import _normalize, _redact
from failcode.signature._normalize import normalize_message
from failcode.signature._redact import redact
from tests._growth_alarm import LIMIT, fill, growth

# growth-ratio checks are slow: the deep step runs them (.ci/run: pytest -m deep)
pytestmark = pytest.mark.deep

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType

SMALL = 2 * 1024
LARGE = 32 * 1024

SEPARATORS: dict[str, tuple[str, ...]] = {
    # each class as written and as the rules also read it: URL-encoded, JSON-escaped
    "space": (" ", "%20"),
    "equals": ("=", "%3D"),
    "colon": (":", "%3A"),
    "dash": ("-",),
    "underscore": ("_",),
    "dot": (".",),
    "slash": ("/",),
    "quotes": ('"', "'", "%22", "%27", '\\"'),
    "newline": ("\n", "\\n"),
    "tab": ("\t",),
    "ampersand": ("&", "%26"),
    "comma": (",",),
    "none": ("",),
}


# --- the words of a rule, read from the rule ----------------------------------------------

_MAX_EXPANSIONS = 64
_MAX_CHOICES = 6
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


def _alternatives(items: Iterable[tuple[Any, Any]]) -> set[str] | None:
    """Every string a purely literal piece of a parsed pattern matches, or None when the piece
    holds anything else (a class, an unbounded repeat, a look-around)."""
    out = {""}
    for op, av in items:
        if op is sre_constants.LITERAL:
            out = {s + chr(av) for s in out}
        elif (op is sre_constants.IN and len(av) <= _MAX_CHOICES
              and all(item is sre_constants.LITERAL for item, _ in av)):
            out = {s + chr(c) for s in out for _, c in av}  # [Dd], [pousr]
        elif op is sre_constants.SUBPATTERN:
            inner = _alternatives(av[3])
            if inner is None:
                return None
            out = {s + a for s in out for a in inner}
        elif op is sre_constants.BRANCH:
            inner = set()
            for branch in av[1]:
                found = _alternatives(branch)
                if found is None:
                    return None
                inner |= found
            out = {s + a for s in out for a in inner}
        elif op in _REPEATS and av[0] == 0 and av[1] == 1:  # an optional literal
            inner = _alternatives(av[2])
            if inner is None:
                return None
            out |= {s + a for s in out for a in inner}
        else:
            return None
        if len(out) > _MAX_EXPANSIONS:
            return None
    return out


def literals(pattern: str, flags: int = 0) -> set[str]:
    """The literal words of a regex (two characters or more): each maximal run of literal
    pieces, its alternations and small character sets expanded (``gh[pousr]_``: ``ghp_``…)."""
    found: set[str] = set()

    def walk(items: Iterable[tuple[Any, Any]]) -> None:
        current = {""}
        for op, av in items:
            alts = _alternatives([(op, av)])
            if alts is not None and len(current) * len(alts) <= _MAX_EXPANSIONS:
                current = {s + a for s in current for a in alts}
                continue
            found.update(word for word in current if len(word) >= 2)
            current = {""}
            for inner in _children(op, av):
                walk(inner)
        found.update(word for word in current if len(word) >= 2)

    walk(sre_parser.parse(pattern, flags))
    return found


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns of one parsed regex item (a group's, each branch, a repeat's body, an
    atomic group, a lookaround's)."""
    if op is sre_constants.SUBPATTERN:
        return [av[3]]
    if op is sre_constants.BRANCH:
        return list(av[1])
    if op in _REPEATS:
        return [av[2]]
    if op is sre_constants.ATOMIC_GROUP:
        return [av]
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return [av[1]]
    return []


def _group(name: str, pattern: object) -> set[str]:
    """The literal strings the named group of a pattern matches (alternations expanded)."""
    parsed = sre_parser.parse(*_source(pattern))
    index = parsed.state.groupdict[name]
    found: set[str] = set()

    def walk(items: Iterable[tuple[Any, Any]]) -> None:
        for op, av in items:
            if op is sre_constants.SUBPATTERN and av[0] == index:
                found.update(_alternatives(av[3]) or ())
            for inner in _children(op, av):
                walk(inner)

    walk(parsed)
    assert found, name
    return found


def _source(pattern: object) -> tuple[str, int]:
    if isinstance(pattern, _LazyPattern):
        return pattern.__dict__["_source"]  # type: ignore[no-any-return]
    assert isinstance(pattern, re.Pattern)
    return pattern.pattern, pattern.flags


def _words_of(pattern: object, *extra: str) -> tuple[str, ...]:
    return tuple(sorted(literals(*_source(pattern)) | {word for word in extra if word}))


def redaction_rules() -> dict[str, tuple[str, ...]]:
    """Every redaction rule and its words: gates and pattern literals, family prefixes and
    context words, the assignment stems and the key names, the PEM markers."""
    rules = {rule.name: _words_of(rule.pattern, *rule.gates, rule.need, *rule.need_any)
             for rule in _redact._RULES}
    for family in _redact._FAMILIES:
        rules[f"family:{family.name}"] = tuple(sorted({*family.prefixes, *family.context}))
    # the scanner's names, alone and with each separator its tail reads (``password=``)
    names = {*_redact._STEMS, "password", "passwd", "passphrase"}
    keys = {prefix + "key" for prefix in _redact._KEY_PREFIXES}
    tails = _group("sep", _redact._ASSIGN_TAIL)
    rules["assignment"] = tuple(sorted(
        names | keys | {name + sep for name in names for sep in tails}))
    rules["pem_private_key"] = tuple(sorted(
        _words_of(_redact._PEM_BEGIN, _redact._PEM_END, "PRIVATE KEY", _redact._PEM_GATE)
        + _words_of(_redact._PEM_END_LINE)))
    return rules


def normalization_rules() -> dict[str, tuple[str, ...]]:
    """Every normalization rule and its words: gates and pattern literals."""
    rules = {f"text:{k}:{placeholder}": _words_of(rx, *gates)
             for k, (placeholder, rx, gates) in enumerate(_normalize._TEXT_RULES)}
    rules.update({f"token:{k}:{placeholder}": _words_of(rx)
                  for k, (placeholder, rx) in enumerate(_normalize._TOKEN_RULES)})
    return {name: words for name, words in rules.items() if words}


def _patterns(module: ModuleType) -> dict[str, object]:
    """Every compiled (or lazy) pattern a module holds, in its tables too."""
    out: dict[str, object] = {}

    def visit(name: str, value: object, depth: int) -> None:
        if isinstance(value, _LazyPattern | re.Pattern):
            out[name] = value
        elif depth < 4 and isinstance(value, tuple | list):
            for k, item in enumerate(value):
                visit(f"{name}[{k}]", item, depth + 1)
        elif depth < 4 and isinstance(value, dict):
            for key, item in value.items():
                visit(f"{name}[{key!r}]", item, depth + 1)

    for name, value in vars(module).items():
        if not name.startswith("__"):
            visit(name, value, 0)
    return out


def classification_rules() -> dict[str, tuple[str, ...]]:
    """Every pattern of the classification modules and its literal words."""
    rules: dict[str, tuple[str, ...]] = {}
    for module in (_classify, _command, _parsers, _providers, _purpose):
        short = module.__name__.rsplit(".", 1)[1]
        for name, pattern in _patterns(module).items():
            words = _words_of(pattern)
            if words:
                rules[f"{short}:{name}"] = words
    return rules


REDACTION = redaction_rules()
NORMALIZATION = normalization_rules()
CLASSIFICATION = classification_rules()


def _cases(rules: dict[str, tuple[str, ...]]) -> list[Any]:
    return [pytest.param(rule, sep, id=f"{rule}-{sep}")
            for rule in sorted(rules) for sep in SEPARATORS]


def _owned(rules: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], list[str]]:
    """The units each (rule, separator class) measures: its own, less those an earlier class
    (in the tests' order) builds too (``key=`` + ``%22`` is both the assignment scanner's and
    the query rule's). Fixed by the tables, not by which tests run, so every unit is measured
    by exactly one test."""
    seen: set[str] = set()
    owned: dict[tuple[str, str], list[str]] = {}
    for rule in sorted(rules):
        for sep, seps in SEPARATORS.items():
            units = [unit for unit in _units(rules[rule], seps) if unit not in seen]
            seen.update(units)
            owned[rule, sep] = units
    return owned


def _units(words: Iterable[str], separators: Iterable[str]) -> list[str]:
    """One unit per word and separator: the word, then the separator."""
    return [unit for unit in dict.fromkeys(w + sep for w in words for sep in separators) if unit]


REDACTION_UNITS = _owned(REDACTION)
NORMALIZATION_UNITS = _owned(NORMALIZATION)


def _cost(function: Callable[[str], object], text: str) -> float:
    start = time.process_time()
    function(text)
    return time.process_time() - start


def _screen(function: Callable[[str], object], unit: str) -> float:
    """A quick growth ratio of one unit (best of three small calls, one large call, the
    collector off). It only picks the units :func:`growth` then measures properly: a noisy
    machine makes it too high, never much too low."""
    small, large = fill(unit, SMALL), fill(unit, LARGE)
    gc.disable()
    try:
        best = min(_cost(function, small) for _ in range(3))  # the first warms caches
        return _cost(function, large) / max(best, 1e-7)
    finally:
        gc.enable()


def _assert_linear(name: str, function: Callable[[str], object], units: Iterable[str]) -> None:
    """Every unit's run grows at most ``LIMIT`` times over 16 times the size, by
    :func:`growth` for every unit the quick screen puts over the bound. Each unit is measured
    on its own: one quadratic run among many linear ones would be diluted in their sum."""
    suspects = [unit for unit in units if _screen(function, unit) > LIMIT]
    ratios = {unit: growth(function, fill(unit, SMALL), fill(unit, LARGE)) for unit in suspects}
    slow = {unit: f"{ratio:.0f}x" for unit, ratio in ratios.items() if ratio > LIMIT}
    assert not slow, (f"{name}: {LARGE // 1024} KiB of these runs cost more than {LIMIT:.0f}x "
                      f"{SMALL // 1024} KiB: {slow}")


# --- the tests ------------------------------------------------------------------------------


def test_every_table_yields_classes() -> None:
    """The generator reads every rule: each redaction rule, family, normalization rule and
    classification pattern gives words (a rule read as empty would go untested)."""
    assert len(REDACTION) == len(_redact._RULES) + len(_redact._FAMILIES) + 2
    assert all(REDACTION.values())
    assert {"AKIA", "ghp_", "key", "api_key", "sk-ant-", "gsk_", "mistral"} <= {
        word for words in REDACTION.values() for word in words}
    assert len(NORMALIZATION) >= len(_normalize._TEXT_RULES)
    assert len(CLASSIFICATION) >= 50


@pytest.mark.parametrize(("rule", "sep"), _cases(REDACTION))
def test_redaction_is_linear(rule: str, sep: str) -> None:
    """redact over each run of a redaction rule's words and a separator class grows linearly."""
    _assert_linear(f"{rule}/{sep}", redact, REDACTION_UNITS[rule, sep])


def _normalized(text: str) -> object:
    """The normalization rules on the whole text (``normalize_message`` reads at most
    ``MAX_CHARS``, so its growth alone proves nothing): the public call, each text rule's
    substitution (behind its gates) and the word pass, with the word cache cleared (no memo
    answers). Redaction, its first step, is measured by the redaction classes."""
    _normalize._clear_caches()
    body = text
    for placeholder, rx, gates in _normalize._TEXT_RULES:
        if any(gate in body for gate in gates):  # as normalize_message runs them
            body = rx.sub(r"\g<1>" + placeholder, body)
    return normalize_message(text), _normalize._tokens(body)


@pytest.mark.parametrize(("rule", "sep"), _cases(NORMALIZATION))
def test_normalization_is_linear(rule: str, sep: str) -> None:
    """The normalization rules over each run of a rule's words and a separator class grow
    linearly, uncapped."""
    _assert_linear(f"{rule}/{sep}", _normalized, NORMALIZATION_UNITS[rule, sep])


def _classified(text: str) -> object:
    return (classify_text("Exception", text),
            classify_text("ValueError", "x", traceback=text),
            from_command(["sh", "-c", "make"], 2, stderr=text, purpose="build"))


def _cycles(words: Iterable[str]) -> list[str]:
    """One unit per separator class: the words in turn, each followed by each separator of
    the class."""
    return ["".join(word + s for word in words for s in seps) for seps in SEPARATORS.values()]


@pytest.mark.parametrize("rule", sorted(CLASSIFICATION))
def test_classification_is_linear(rule: str) -> None:
    """classify_text (message, traceback) and from_command (stderr) over runs cycling through
    a classification pattern's words, one per separator class, grow linearly."""
    words = CLASSIFICATION[rule]
    _assert_linear(rule, _classified, _cycles(words))


# --- the classes that were quadratic, by name -------------------------------------------------

REJECTED_NAMES = {
    "bare_key_url_quote": "key=%22",
    "bare_key_url_apostrophe": "key=%27",
    "glued_key": "xkey=%22",
    "quote_before_key": "%22key=",
    "oauth": "oauth=%22",
    "auth_after_escape": "=%27auth",
    "userinfo_token": "://token=%22",
}


@pytest.mark.parametrize("unit", REJECTED_NAMES.values(), ids=REJECTED_NAMES.keys())
def test_rejected_assignment_names_are_linear(unit: str) -> None:
    """A name the assignment scanner rejects no longer reads the value after it: 16 times
    the text costs at most LIMIT times as much (was quadratic)."""
    assert growth(redact, fill(unit, 4096), fill(unit, 65536)) <= LIMIT


def test_family_bodies_share_their_placeholder_test() -> None:
    """Prefixes packed into one long body run (``sl.sl.…``: a Dropbox prefix inside its own
    body class) are tested for a placeholder once per run, not once per prefix: 64 KiB of runs
    of 1800 characters cost about what 64 KiB of runs of 150 do (each prefix re-read its run,
    up to the family's 2000-character bound: 10 times as much)."""
    short = fill("sl." * 50 + " ", 65536)
    long = fill("sl." * 600 + " ", 65536)
    assert growth(redact, short, long) <= 6
