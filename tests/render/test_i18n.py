"""Localization: complete catalogs, matching placeholders, no stale extraction, golden text."""

from __future__ import annotations

import gettext

import msgspec
import pytest

from failcode import FC, FC_CATALOG, render_user
from failcode.codes._registry import template_fields
from failcode.render._i18n import (
    DOMAIN,
    LOCALE_DIR,
    UI_TEXT,
    available_languages,
    code_text,
    locale_from_env,
    message_id,
    ui_text,
)
from tests._needs import missing
from tests._paths import TESTS

SHIPPED = ("de",)
REGENERATE = "python -m failcode.render._i18n update"
GOLDEN = TESTS / "golden" / "render"


def _babel() -> None:
    try:
        import babel  # noqa: F401
    except ImportError:
        missing("babel is not installed")


def _catalog(language: str) -> gettext.GNUTranslations:
    with (LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.mo").open("rb") as handle:
        return gettext.GNUTranslations(handle)


def _required_ids() -> list[tuple[str, str]]:
    ids = [(message_id(spec.code, field), getattr(spec, field))
           for spec in FC_CATALOG if not spec.retired
           for field in ("message", "remedy", "impact") if getattr(spec, field) is not None]
    return ids + list(UI_TEXT.items())


@pytest.mark.parametrize("language", SHIPPED)
def test_shipped_language_is_complete(language: str) -> None:
    """Every code's message, remedy and impact and every renderer string is translated."""
    catalog = _catalog(language)
    missing = [msgid for msgid, _english in _required_ids() if catalog.gettext(msgid) == msgid]
    assert not missing, (f"{language} lacks {len(missing)} messages, e.g. {missing[:5]}; run "
                         f"`{REGENERATE}` and translate the empty or fuzzy entries of "
                         f"src/failcode/render/locale/{language}/LC_MESSAGES/failcode.po")


@pytest.mark.parametrize("language", SHIPPED)
def test_translations_keep_the_placeholders(language: str) -> None:
    """A translation uses exactly the {placeholders} of its English source."""
    catalog = _catalog(language)
    wrong = [msgid for msgid, english in _required_ids()
             if set(template_fields(catalog.gettext(msgid))) != set(template_fields(english))]
    assert not wrong


def test_english_po_matches_the_catalog() -> None:
    """The committed English .po is the extraction of the current catalog (not stale)."""
    _babel()
    from failcode.render._i18n import extract_english

    committed = (LOCALE_DIR / "en" / "LC_MESSAGES" / "failcode.po").read_text(encoding="utf-8")
    assert committed == extract_english(), f"stale extraction: run `{REGENERATE}`"


@pytest.mark.parametrize("language", ["en", *SHIPPED])
def test_committed_mo_is_compiled_from_the_po(language: str) -> None:
    """Each committed .mo is exactly what its .po compiles to."""
    _babel()
    from failcode.render._i18n import compiled_mo

    mo = LOCALE_DIR / language / "LC_MESSAGES" / "failcode.mo"
    assert mo.read_bytes() == compiled_mo(language), f"stale .mo: run `{REGENERATE}`"


def test_available_languages_lists_the_shipped_ones() -> None:
    """English and every shipped language are available."""
    assert set(available_languages()) >= {"en", *SHIPPED}


@pytest.mark.parametrize(("locale", "expected"), [
    ("de", "Die API-Zugangsdaten für OpenAI wurden abgelehnt."),
    ("de_DE.UTF-8", "Die API-Zugangsdaten für OpenAI wurden abgelehnt."),
    ("de-AT", "Die API-Zugangsdaten für OpenAI wurden abgelehnt."),
    ("fr", "The API credentials for OpenAI were rejected."),
    (None, "The API credentials for OpenAI were rejected."),
])
def test_code_text_follows_the_locale(locale: str | None, expected: str) -> None:
    """A code's message renders in the locale, falling back to English for other languages."""
    assert code_text(FC.PROV_AUTH.spec, "message", {"provider": "OpenAI"}, locale) == expected


def test_missing_param_renders_visibly() -> None:
    """A required field the params lack renders as {field} instead of raising."""
    assert code_text(FC.CMD_NOT_FOUND.spec, "message", {}, "de") == (
        "Das Programm {program} ist nicht installiert oder nicht im PATH.")


@pytest.mark.parametrize(("locale", "expected"), [
    (None, "The provider rejected the API credentials."),
    ("de", "Der Anbieter hat die API-Zugangsdaten abgelehnt."),
])
def test_missing_optional_param_renders_its_variant(locale: str | None, expected: str) -> None:
    """An optional param left out selects the code's variant sentence in every language."""
    assert code_text(FC.PROV_AUTH.spec, "message", {}, locale) == expected


@pytest.mark.parametrize(("environ", "expected"), [
    ({"LANG": "de_DE.UTF-8"}, "de_DE.UTF-8"),
    ({"LANGUAGE": "de:en", "LANG": "en_US.UTF-8"}, "de"),
    ({"LC_ALL": "C.UTF-8", "LANG": "de_DE.UTF-8"}, "en"),
    ({}, "en"),
])
def test_locale_from_env(environ: dict[str, str], expected: str) -> None:
    """The language comes from LANGUAGE, LC_ALL, LC_MESSAGES, LANG in gettext's order."""
    assert locale_from_env(environ) == expected


def test_ui_text_is_german_in_german() -> None:
    """The renderer's own strings are translated."""
    assert ui_text("ui.why", "de", impact="x") == "Warum das wichtig ist: x"


def _golden_failures() -> list[object]:
    failures = [
        FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"}),
        FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "Anthropic"}),
        FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"}),
        FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"}),
    ]
    return [msgspec.structs.replace(f, error_id="fc-golden") for f in failures]


@pytest.mark.parametrize("language", ["en", *SHIPPED])
def test_golden_user_text(language: str) -> None:
    """User text of a handful of codes matches the reviewed golden text of the language."""
    expected = (GOLDEN / f"{language}.txt").read_text(encoding="utf-8").split("---\n")
    rendered = [render_user(f, locale=language) for f in _golden_failures()]  # type: ignore[arg-type]
    assert rendered == expected
