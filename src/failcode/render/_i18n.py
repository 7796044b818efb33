"""Localization: a code's text rendered from (code, params, locale) through gettext catalogs.

Errors cross a pipe as codes and params; the receiving side renders them in its own
language. The code is the same in every language, so one code can be searched.

Message ids are stable per code, never the English text, so a code's text is found by its code
and rewording the English never orphans a translation::

    FC-PROV-003.message     "{provider} rate-limited the request."
    FC-PROV-003.remedy      (only when the code has a remedy)
    FC-PROV-003.impact      "The request is delayed; ..."
    FC-PROV-003.message.without.provider   the variant used when the provider is not known
    ui.why                  the renderer's own strings ("Why it matters: {impact}")

English is the source language: its strings come from the catalog (:mod:`failcode.codes._catalog`)
and from :data:`UI_TEXT`, and ``locale/en/LC_MESSAGES/failcode.po`` is their extraction (a test
fails when it drifts). Other languages are ``locale/<lang>/LC_MESSAGES/failcode.po``, compiled to
``failcode.mo`` beside it; both are committed, so an installed wheel ships working catalogs
without Babel. Regenerate after a catalog change with::

    python -m failcode.render._i18n update

which re-extracts English, merges new ids into every other language (a changed English source
marks the translation fuzzy, and a fuzzy entry is not compiled, so the completeness test fails
until someone translates it), and compiles every ``.mo``. Babel is needed only for that command.

At run time only the standard library's :mod:`gettext` reads the ``.mo`` files, lazily, once per
language.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import gettext
    from collections.abc import Iterator, Mapping

    from failcode.codes._registry import CodeSpec

__all__ = [
    "DOMAIN",
    "LOCALE_DIR",
    "SOURCE_LANGUAGE",
    "UI_TEXT",
    "available_languages",
    "code_text",
    "locale_from_env",
    "message_id",
    "source_messages",
    "ui_text",
]

DOMAIN: Final = "failcode"
LOCALE_DIR: Final = Path(__file__).with_name("locale")
SOURCE_LANGUAGE: Final = "en"
CODE_FIELDS: Final = ("message", "remedy", "impact")

UI_TEXT: Final[Mapping[str, str]] = {
    # the heading of user text: the severity word, the code, the rendered message
    "ui.severity.info": "note",
    "ui.severity.warning": "warning",
    "ui.severity.error": "error",
    "ui.severity.fatal": "fatal error",
    "ui.heading": "{severity} [{code}]: {message}",
    "ui.why": "Why it matters: {impact}",
    "ui.tried": "Tried: {tried}",
    "ui.next.retryable": "Next: the same step may succeed when retried.",
    "ui.next.retryable_after_change": "Next: a retry helps only after something changes.",
    "ui.next.not_retryable": "Next: retrying unchanged fails the same way.",
    "ui.next.unknown": "Next: it is not known whether a retry can succeed.",
    "ui.next.delay": "Next: retrying in {delay} s.",
    # what the decision says happens next (render_user(decision=...)); overrides the above
    "ui.next.action.retry": "Next: retrying now.",
    "ui.next.action.retry_after_change": "Next: retried only after something changes.",
    "ui.next.action.block": "Next: stopped until someone acts.",
    "ui.next.action.escalate": "Next: handed over to someone who can act.",
    "ui.next.action.abort": "Next: the run stops here.",
    "ui.next.action.skip": "Next: this step is skipped.",
    "ui.next.action.cancel": "Next: this step is cancelled.",
    # who must act when the decision stops the run (block, escalate, abort)
    "ui.act.decided": "Action needed from {who}: {remedy}",
    "ui.act.decided.bare": "Action needed from {who}.",
    "ui.who.user": "you",
    "ui.who.developer": "a developer",
    "ui.who.other": "whoever operates the agent",
    "ui.act.user": "Action needed from you: {remedy}",
    "ui.act.environment": "Action needed on the environment: {remedy}",
    "ui.act.transient": "No action needed from you: this is expected to pass on retry.",
    "ui.act.task": "No action needed from you yet: the agent changes its approach.",
    "ui.act.defect": "No action needed from you: this is a defect; report it to a developer.",
    "ui.possible_fix": "Possible fix: {remedy}",
    "ui.evidence": "Evidence: {refs}",
    "ui.reference": "Reference: {error_id}",
    "ui.detail": "Detail:",
    "ui.cut": "[{lines} more lines and {chars} characters cut; the full text is in the "
              "developer detail]",
    "ui.traceback": "Traceback (shown on request):",
    "ui.internal": "An unexpected error occurred.",
    # a rejected action, fed back to the model: short, no code, says what to do
    "ui.rejected": "The action {action} was not carried out: {reason}. Choose a different "
                   "action.",
    "ui.rejected.bare": "The action {action} was not carried out. Choose a different action.",
    "ui.traceback_hint": "Set FAILCODE_TRACEBACK=1 to show the developer detail.",
}
"""The renderer's own strings, by stable id (English source)."""


def message_id(code: str, field: str) -> str:
    """The message id of one field (``message``, ``remedy``, ``impact``) of a code."""
    return f"{code}.{field}"


def _fc_specs() -> list[CodeSpec]:
    from failcode.codes._catalog import FC_CATALOG  # noqa: PLC0415 - the catalog imports much; lazy

    return list(FC_CATALOG)


def source_messages() -> Iterator[tuple[str, str, str]]:
    """Every English source string as (msgid, text, origin): the FC catalog, then the UI."""
    for spec in _fc_specs():
        if spec.retired:
            continue
        for field in CODE_FIELDS:
            text = getattr(spec, field)
            if text is not None:
                yield message_id(spec.code, field), text, f"{spec.code} {field}"
                for key, variant in sorted(spec.variants.items()):
                    if key.startswith(field + ".without."):
                        yield message_id(spec.code, key), variant, f"{spec.code} {key}"
    for msgid, text in UI_TEXT.items():
        yield msgid, text, "renderer"


# ---------------------------------------------------------------------------------------------
# run time


def _languages(locale: str) -> tuple[str, ...]:
    """``de-AT.UTF-8`` -> ``("de_AT", "de")``: the gettext languages to try, most specific first."""
    base = locale.split(".", 1)[0].split("@", 1)[0].replace("-", "_").strip()
    if not base:
        return ()
    lang, _, region = base.partition("_")
    lang = lang.lower()
    return (f"{lang}_{region.upper()}", lang) if region else (lang,)


@functools.cache
def _translation(locale: str) -> gettext.NullTranslations | None:
    """The compiled catalog for ``locale``, or None for English and unknown languages."""
    import gettext  # noqa: PLC0415 - only rendering in a language other than English needs it

    languages = _languages(locale)
    if not languages or languages[-1] == SOURCE_LANGUAGE:
        return None
    try:
        return gettext.translation(DOMAIN, str(LOCALE_DIR), languages=list(languages))
    except OSError:
        return None


def available_languages() -> tuple[str, ...]:
    """The languages with a compiled catalog shipped in the package, plus English."""
    found = {SOURCE_LANGUAGE}
    if LOCALE_DIR.is_dir():
        found.update(path.parent.parent.name
                     for path in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return tuple(sorted(found))


def locale_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The user's message language from LANGUAGE, LC_ALL, LC_MESSAGES or LANG (gettext's order).

    Returns ``"en"`` when none is set or the value is ``C``/``POSIX``.
    """
    import os  # noqa: PLC0415 - keep the module's import cost at nothing

    env = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            first = value.split(":", 1)[0]
            if first in ("C", "POSIX") or first.startswith(("C.", "POSIX.")):
                return SOURCE_LANGUAGE
            return first
    return SOURCE_LANGUAGE


def _template(msgid: str, english: str, locale: str | None) -> str:
    if locale is None:
        return english
    translation = _translation(locale)
    if translation is None:
        return english
    text = translation.gettext(msgid)
    return english if text == msgid else text


def ui_text(msgid: str, locale: str | None = None, **params: object) -> str:
    """One of the renderer's strings in ``locale`` (English when None or not shipped).

    Raises:
        KeyError: ``msgid`` is not a renderer string.
    """
    template = _template(msgid, UI_TEXT[msgid], locale)
    return template.format_map(params) if params else template


class _Params(dict[str, object]):
    """Params that render a missing field visibly instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def code_text(
    spec: CodeSpec, field: str, params: Mapping[str, object], locale: str | None = None,
) -> str | None:
    """A code's ``message``, ``remedy`` or ``impact`` rendered in ``locale``.

    The English template is the spec's; another language's comes from its catalog, falling back
    to English for a code the catalog lacks (another library's catalog, a code newer than the
    translation). A field the params lack renders as ``{field}`` rather than failing.

    Returns:
        The text, or None when the code has no such field (a code without a remedy).
    """
    from failcode.codes._build import render_template  # noqa: PLC0415 - the factory is heavy

    english: str | None = (spec.template(field, params) if field in ("message", "remedy")
                           else getattr(spec, field))
    if english is None:
        return None
    key = spec.template_key(field, params) if field in ("message", "remedy") else field
    template = _template(message_id(spec.code, key), english, locale)
    try:
        return render_template(template, _Params(params))
    except (ValueError, IndexError):  # a malformed translation must not break rendering
        return render_template(english, _Params(params))


# ---------------------------------------------------------------------------------------------
# extraction and compilation (Babel; a maintainer's command, never imported at run time)


def _po_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def extract_english() -> str:
    """The English .po text the current catalog and UI strings extract to."""
    catalog = _new_catalog(SOURCE_LANGUAGE)
    for msgid, text, origin in source_messages():
        catalog.add(msgid, text, auto_comments=[origin])
    return _po_text(catalog)


def _new_catalog(language: str) -> Any:
    from babel.messages.catalog import Catalog  # noqa: PLC0415 - maintainer tooling only

    header = (f"# failcode messages, language {language}.\n"
              "# Generated by `python -m failcode.render._i18n update`: edit msgstr only; the\n"
              "# English source is the catalog in failcode/codes/_catalog.py and UI_TEXT in\n"
              "# failcode/render/_i18n.py.")
    return Catalog(locale=language, domain=DOMAIN, project="failcode", version=None,
                   header_comment=header, msgid_bugs_address="", fuzzy=False)


def _po_text(catalog: Any) -> str:
    import io  # noqa: PLC0415 - maintainer tooling only

    from babel.messages.pofile import write_po  # noqa: PLC0415 - maintainer tooling only

    buffer = io.BytesIO()
    # no dates and no locations in the header, so extraction is reproducible byte for byte
    write_po(buffer, catalog, width=100, omit_header=False, sort_output=False,
             ignore_obsolete=True, include_previous=False)
    text = buffer.getvalue().decode("utf-8")
    return "\n".join(line for line in text.splitlines()
                     if not line.startswith(('"POT-Creation-Date:', '"PO-Revision-Date:',
                                             '"Generated-By:'))) + "\n"


def _compile(po_path: Path) -> bytes:
    import datetime  # noqa: PLC0415 - maintainer tooling only
    import io  # noqa: PLC0415 - maintainer tooling only

    from babel.messages.mofile import write_mo  # noqa: PLC0415 - maintainer tooling only
    from babel.messages.pofile import read_po  # noqa: PLC0415 - maintainer tooling only

    with po_path.open("rb") as handle:
        catalog = read_po(handle, locale=po_path.parent.parent.name, domain=DOMAIN)
    # the .po carries no dates; fixed ones keep the .mo reproducible byte for byte
    catalog.creation_date = catalog.revision_date = datetime.datetime(
        2000, 1, 1, tzinfo=datetime.UTC)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def compiled_mo(language: str) -> bytes:
    """The .mo bytes the committed .po of ``language`` compiles to."""
    return _compile(_po_path(language))


def _merge(language: str, english: Mapping[str, str]) -> str:
    """Merge the English ids into ``language``'s .po: new ids empty, changed English fuzzy."""
    from babel.messages.pofile import read_po  # noqa: PLC0415 - maintainer tooling only

    path = _po_path(language)
    old: dict[str, tuple[str, str, bool]] = {}
    if path.exists():
        with path.open("rb") as handle:
            for message in read_po(handle, locale=language, domain=DOMAIN):
                if message.id:
                    # write_po wraps a long comment over several lines; join them back
                    source = " ".join(message.auto_comments).removeprefix("English: ")
                    old[str(message.id)] = (str(message.string), source, message.fuzzy)
    catalog = _new_catalog(language)
    for msgid, text in english.items():
        string, source, fuzzy = old.get(msgid, ("", text, False))
        flags = ["fuzzy"] if (fuzzy or (string and source != text)) else []
        catalog.add(msgid, string, auto_comments=[f"English: {text}"], flags=flags)
    return _po_text(catalog)


def update(languages: tuple[str, ...] = ("de",)) -> list[Path]:
    """Re-extract English, merge every other language, compile every .mo; return files written."""
    written: list[Path] = []
    english_po = _po_path(SOURCE_LANGUAGE)
    english_po.parent.mkdir(parents=True, exist_ok=True)
    english_po.write_text(extract_english(), encoding="utf-8")
    written.append(english_po)
    english = {msgid: text for msgid, text, _origin in source_messages()}
    for language in languages:
        path = _po_path(language)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_merge(language, english), encoding="utf-8")
        written.append(path)
    for language in (SOURCE_LANGUAGE, *languages):
        mo = _po_path(language).with_suffix(".mo")
        mo.write_bytes(compiled_mo(language))
        written.append(mo)
    return written


def _main() -> None:  # pragma: no cover - exercised by the drift test's printed command
    import sys  # noqa: PLC0415 - command entry point only

    if sys.argv[1:] != ["update"]:
        sys.stderr.write("usage: python -m failcode.render._i18n update\n")
        raise SystemExit(2)
    languages = tuple(sorted(
        p.name for p in LOCALE_DIR.iterdir()
        if p.is_dir() and p.name != SOURCE_LANGUAGE)) if LOCALE_DIR.is_dir() else ()
    for path in update(languages or ("de",)):
        sys.stdout.write(f"wrote {path}\n")


if __name__ == "__main__":  # pragma: no cover
    _main()
