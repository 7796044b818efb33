"""Every code's message and remedy reads well, with and without its optional params, in every
shipped language: capitalized, one sentence, no doubled words, no empty placeholders."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from failcode import FC, FC_CATALOG, available_languages, classify_http, classify_text
from failcode.render._i18n import code_text  # the one private helper: renders a code in a locale

_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
# German repeats an article as a relative pronoun ("in der der Agent läuft"): correct there
_GRAMMATICAL_REPEATS = {"de": {"der", "die", "das", "sie"}}
_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-ZÄÖÜ]")


def _cases() -> list[Any]:
    cases = []
    for spec in FC_CATALOG:
        if spec.retired:
            continue
        for size in range(len(spec.optional) + 1):
            for missing in itertools.combinations(spec.optional, size):
                params = {k: v for k, v in spec.example_params.items() if k not in missing}
                label = "-".join(("without", *missing)) if missing else "all"
                cases.append(pytest.param(spec, params, id=f"{spec.code}-{label}"))
    return cases


def problems_of(text: str, language: str = "en") -> list[str]:
    """What is wrong with one rendered sentence (empty: it reads well)."""
    found = []
    if "{" in text or "}" in text:
        found.append("an unfilled placeholder")
    if not text[:1].isupper():
        found.append("does not start with a capital letter")
    if not text.endswith((".", "?", "!")):
        found.append("does not end a sentence")
    if _SENTENCE_BREAK.search(text):
        found.append("more than one sentence")
    allowed = _GRAMMATICAL_REPEATS.get(language, set())
    found.extend(f"doubled word {m.group(0)!r}" for m in _DOUBLED.finditer(text)
                 if m.group(1).lower() not in allowed)
    if "(unknown" in text.lower() or "()" in text:
        found.append("an '(unknown)' placeholder value")
    if re.search(r"\s[.,;:!?]|\s\s|[:;,]\s*[.!?]$|^\W", text):
        found.append("an empty gap where a value should be")
    return found


@pytest.mark.parametrize("language", available_languages())
@pytest.mark.parametrize(("spec", "params"), _cases())
def test_message_and_remedy_read_well(spec: Any, params: dict[str, Any], language: str) -> None:
    """Message and remedy are one well-formed sentence, whichever optional params are left out."""
    locale = None if language == "en" else language
    for field in ("message", "remedy"):
        text = code_text(spec, field, params, locale)
        if text is None:
            continue
        assert problems_of(text, language) == [], f"{spec.code} {field} [{language}]: {text!r}"


@pytest.mark.parametrize(("spec", "params"), _cases())
def test_built_record_reads_well(spec: Any, params: dict[str, Any]) -> None:
    """A record built without its optional params has a well-formed message and remedy."""
    failure = FC(spec.code).failure(surface="t", params=params)
    assert problems_of(failure.message) == [], failure.message
    if failure.remedy is not None:
        assert problems_of(failure.remedy) == [], failure.remedy


@pytest.mark.parametrize("sentence", [
    "The the provider rate-limited the request.", "the provider rate-limited the request.",
    "The prompt exceeds the context window of (unknown).", "The program  is not installed.",
    "No such file: .", "The module {module} is missing.", "It failed. Retry later.",
])
def test_the_checks_catch_what_reads_badly(sentence: str) -> None:
    """Each check finds the defect it names (so a passing catalog means something)."""
    assert problems_of(sentence)


@pytest.mark.parametrize("make", [
    lambda: classify_http(429, {}),
    lambda: classify_http(500, "upstream failed"),
    lambda: classify_text("openai.NotFoundError", "Error code: 404 - not found"),
    lambda: classify_text("TimeoutError", "timed out", surface="llm"),
    lambda: classify_text("PermissionError", "permission denied"),
    lambda: classify_text("ModuleNotFoundError", "import failed"),
], ids=["429-bare", "500-text", "404-no-model", "timeout-llm", "eacces-no-path", "no-module"])
def test_classifiers_without_a_name_produce_readable_messages(make: Any) -> None:
    """A classifier that cannot name the provider, model, path or module still writes a
    sentence that reads well."""
    failure = make()
    assert problems_of(failure.message) == [], failure.message
    if failure.remedy is not None:
        assert problems_of(failure.remedy) == [], failure.remedy
