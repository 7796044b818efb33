"""The ``POST /v1/classify`` door: one raw failure in; its record, decision and texts out.

Rules:

- **One subject.** A request names exactly one of ``exception`` (an exception known as its
  type, message and traceback), ``command`` (a finished command), ``http`` (a provider's HTTP
  response) or ``text`` (a traceback or log line as it was printed). None, or more than one, is
  a validation error of type ``subject_count`` naming the fields given; a command names exactly
  one of ``argv`` and ``command`` (type ``command_form``). Unknown fields are refused.
- **failcode's own classifiers, no rules of this door.** ``exception`` goes through
  :func:`failcode.classify_text`, the rule table a live exception of that type is classified by,
  with the type qualified by ``module`` when the type is not dotted already (``openai`` and
  ``RateLimitError`` are ``openai.RateLimitError``); ``command`` through
  :func:`failcode.from_command` (argv or shell string, purpose inferred, ``timed_out`` passed
  on); ``http`` through :func:`failcode.classify_http`, with surface ``llm.<provider>`` when a
  provider is named; ``text`` through :func:`failcode.classify_text` with the exception the text
  names last (the exception line of its last Python traceback, found by the triage readers'
  :func:`~failcode.triage.readers._text.exception_line`, its message continued by the lines
  after it, as ``str(exc)`` prints; else the last line naming an exception type from one of its
  words to its end, as ``failcode classify`` reads a log line; else the whole text as the message
  of a plain ``Exception``).
- **The answer's kind.** ``failure`` for a :class:`~failcode.Failure`; ``outcome`` for a typed
  non-error outcome (a probe that found nothing, a cancellation, a rejected action), which has
  no decision and no user text: outcomes are counted, never shown as errors; ``none`` when the
  input is no failure: a command that exited 0 and was not stopped at its time limit (what
  :func:`~failcode.from_command` says), an HTTP status outside HTTP's error classes 4xx and 5xx
  (RFC 9110 section 15).
- **Decision and texts.** ``decision`` is :func:`failcode.decide` on a first occurrence (an
  empty :class:`~failcode.History` of the ``default`` operation class, a full budget, the default
  policy), in the wire form ``failcode classify --json`` prints; ``user_text`` is
  :func:`failcode.render_user` told that decision; ``developer_text`` is
  :func:`failcode.render_developer` (no exception object exists on this path).
- **Context.** ``context``, ``session`` and ``step`` go into the record's ``context`` (session
  and step under those keys, winning over context keys of the same name; who produced the
  failure under ``agent``, ``agent_version``, ``model``); a command's ``duration_s`` goes into
  the record's ``metadata`` (a measurement: never part of the signature).
- **Redaction.** Every string returned has been through failcode's one redaction pass: the
  record is redacted when built, the request's context keys and values when merged in, the
  canonical JSON and both texts when rendered. A secret in a message, an output, a header or a
  context value never comes back.
- **Suggestion.** ``suggested`` is the learned model's suggestion
  (:func:`failcode.learned.suggest`: kind, class, confidence, nearest known examples, model)
  when the rules leave the failure unknown (``unknown_error``, or a ``command_error`` of class
  ``unknown``) and the model is confident enough; else null. It is computed from the
  request's own input (a command's argv or string, exit status, stdout and stderr; an
  exception's message and traceback; the text), is never part of the record, the decision or
  the texts, and changes none of them. ``failcode mcp``'s classify tool answers with this
  door's answer, so it carries ``suggested`` too.
- **Language.** ``user_text`` is in ``locale`` when failcode ships a catalog for it
  (:func:`failcode.available_languages`; ``de-AT``, ``de_AT.UTF-8`` and ``de`` all find ``de``
  unless a regional catalog is shipped), else English; the answer's ``locale`` says which.
- **Bounds.** Every text, list and mapping of a request is bounded (the models say how far), and
  every integer too: an exit status lies in -2**31..2**32-1, an HTTP status in 100..599, a step
  in 0..2**31-1; a number is never read from a string, nor a bool from a number.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Self, TypeVar

import msgspec
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from failcode import (
    FC,
    Failure,
    History,
    Retryability,
    available_languages,
    classify_http,
    classify_text,
    decide,
    from_command,
    render_developer,
    render_json,
    render_user,
)
from failcode.events import MAX_STEP
from failcode.record._frozen import MAX_VALUE_CHARS, FrozenDict
from failcode.signature._redact import redact_cut, redact_tree
from failcode.triage.readers._text import _EXC_LINE, exception_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode import Decision, NonErrorOutcome, Scalar
    from failcode.learned import Suggestion

__all__ = [
    "MAX_BODY_CHARS",
    "MAX_CONTEXT_KEYS",
    "MAX_HEADERS",
    "MAX_MESSAGE_CHARS",
    "ClassifyRequest",
    "ClassifyResponse",
    "CommandInput",
    "ExceptionInput",
    "HttpInput",
    "classify_payload",
]

KIB: Final = 1024
MAX_MESSAGE_CHARS: Final = 64 * KIB
"""The longest exception message a request may carry."""
MAX_BODY_CHARS: Final = 256 * KIB
"""The longest traceback, command output, HTTP body or free text a request may carry."""
MAX_ARG_CHARS: Final = 8 * KIB
"""The longest single argv item."""
MAX_ARGS: Final = 1000
MAX_SCRIPT_CHARS: Final = 64 * KIB
"""The longest shell string (``from_command`` reads no more of a script)."""
MAX_HEADERS: Final = 100
MAX_HEADER_VALUE_CHARS: Final = 8 * KIB
MAX_CONTEXT_KEYS: Final = 50
MAX_KEY_CHARS: Final = 200
"""The longest context key, header name, type, module, provider or session."""
EXIT_MIN: Final = -(2**31)
EXIT_MAX: Final = 2**32 - 1
"""An exit status lies in a signed or an unsigned 32-bit code (POSIX 0..255, -N for a signal
as Python reports it, Windows' ``DWORD``)."""
SOURCE_LANGUAGE: Final = "en"

_Item = TypeVar("_Item", bound="Failure | NonErrorOutcome")

_SUBJECTS: Final = ("exception", "command", "http", "text")
_WORD_START: Final = re.compile(r"(?:^|[\s\[(])(?=[A-Za-z_])")
"""Where a word starts in a log line: an exception's type name may begin there."""
_EXC_FROM: Final = re.compile(_EXC_LINE.pattern.removeprefix("^"))
"""The triage readers' exception line (``pkg.ErrorName: message``), matched from a position of
a line rather than its start: the line is stripped once and each word tried in place, where a
slice per word (stripped again) cost the line's length per word, quadratic on a long line."""
_CLASSIFY_HISTORY: Final = History()
"""A first occurrence: nothing failed before in this operation."""

# -- field types ------------------------------------------------------------------------------

_NON_BLANK: Final = r"\S"
_DOTTED: Final = r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$"
_SLUG: Final = r"^[a-z0-9][a-z0-9_-]*$"


def _matching(pattern: str, kind: str, expected: str) -> tuple[AfterValidator, Any]:
    """A validator refusing a string that does not match ``pattern`` (error type ``kind``,
    saying what was ``expected``), and the pattern for the JSON schema."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.search(value) is None:
            raise PydanticCustomError(kind, "expected {expected}, got {shown}",
                                      {"expected": expected, "shown": repr(value[:60])})
        return value

    return AfterValidator(check), Field(json_schema_extra={"pattern": pattern})


_NON_BLANK_CHECK = _matching(_NON_BLANK, "blank", "text other than white space")
_DOTTED_CHECK = _matching(_DOTTED, "type_name",
                          "a dotted Python name such as TimeoutError or openai.RateLimitError")
_SLUG_CHECK = _matching(_SLUG, "provider_slug",
                        "a lower-case name of letters, digits, '-' and '_', such as openai")

_Text = Annotated[str, *_NON_BLANK_CHECK]
"""A string holding something other than white space."""
_TypeName = Annotated[str, *_DOTTED_CHECK]
"""A dotted Python name: ``TimeoutError``, ``openai.RateLimitError``."""
_ProviderSlug = Annotated[str, *_SLUG_CHECK]
_ContextKey = Annotated[_Text, Field(min_length=1, max_length=MAX_KEY_CHARS)]


def _int64(value: object) -> object:
    """Refuse an integer outside int64 before a float could take it in (and lose digits)."""
    if type(value) is int and not -(2**63) <= value < 2**63:
        raise PydanticCustomError("int64", "expected an integer in -2**63..2**63-1, got one of "
                                  "{bits} bits", {"bits": value.bit_length()})
    return value


_ContextValue = Annotated[
    Annotated[str, Field(max_length=MAX_VALUE_CHARS)]
    | bool
    | Annotated[int, Field(strict=True, ge=-(2**63), lt=2**63)]
    | Annotated[float, Field(strict=True, allow_inf_nan=False)]
    | None,
    BeforeValidator(_int64),
]
"""A JSON scalar a record's mapping keeps: a string of at most 4000 characters, a bool, an
int64, a finite float, null."""
_HeaderName = Annotated[_Text, Field(min_length=1, max_length=MAX_KEY_CHARS)]
_HeaderValue = Annotated[str, Field(max_length=MAX_HEADER_VALUE_CHARS)]
_Argument = Annotated[str, Field(max_length=MAX_ARG_CHARS)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _count_error(kind: str, fields: tuple[str, ...], given: list[str]) -> PydanticCustomError:
    return PydanticCustomError(
        kind, "exactly one of {fields} must be given; got {given}",
        {"fields": ", ".join(fields), "given": ", ".join(given) or "none"})


# -- request ----------------------------------------------------------------------------------


_TRACEBACK_EXAMPLE: Final = (
    'Traceback (most recent call last):\n  File "app/main.py", line 3, in <module>\n'
    "    import yaml\nModuleNotFoundError: No module named 'yaml'")


class ExceptionInput(_Model):
    """An exception known as text: its type, message and (optionally) formatted traceback."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "type": "ModuleNotFoundError", "message": "No module named 'yaml'",
        "traceback": _TRACEBACK_EXAMPLE,
    }]})

    type: _TypeName = Field(
        min_length=1, max_length=MAX_KEY_CHARS,
        description=("The exception's type name, qualified or not: ``type(exc).__name__`` or "
                     "``__qualname__`` with its module, e.g. ``TimeoutError``, "
                     "``openai.RateLimitError``."),
        examples=["ModuleNotFoundError", "openai.RateLimitError", "TimeoutError"])
    message: str = Field(
        default="", max_length=MAX_MESSAGE_CHARS,
        description="The exception's message, ``str(exc)`` (at most 64 KiB of characters).",
        examples=["No module named 'yaml'"])
    traceback: str | None = Field(
        default=None, max_length=MAX_BODY_CHARS,
        description=("The formatted traceback (``traceback.format_exc()``), for the location: "
                     "the innermost frame inside the working directory (at most 256 KiB)."),
        examples=[_TRACEBACK_EXAMPLE])
    module: _TypeName | None = Field(
        default=None, min_length=1, max_length=MAX_KEY_CHARS,
        description=("The module the type is defined in (``type(exc).__module__``); qualifies "
                     "a type name that is not dotted already."),
        examples=["openai", "builtins", "httpx"])


class CommandInput(_Model):
    """A finished command: what ran (argv or a shell string), its exit status and its output."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "argv": ["python", "-m", "pytest", "-x"], "exit_code": 1,
        "stdout": "", "stderr": "ModuleNotFoundError: No module named 'yaml'\n",
        "duration_s": 2.5,
    }]})

    argv: list[_Argument] | None = Field(
        default=None, min_length=1, max_length=MAX_ARGS,
        description=("The command as an argv list (1 to 1000 items of at most 8 KiB each); "
                     "give this or ``command``."),
        examples=[["python", "-m", "pytest", "-x"]])
    command: _Text | None = Field(
        default=None, min_length=1, max_length=MAX_SCRIPT_CHARS,
        description=("The command as a shell string (``bash -c`` scripts are read as their "
                     "script; the last program of the last pipeline decides); give this or "
                     "``argv``."),
        examples=["cd app && make test", "grep -rn TODO src"])
    exit_code: int | None = Field(
        strict=True, ge=EXIT_MIN, le=EXIT_MAX,
        description=("The exit status (-2**31..2**32-1; -N: killed by signal N); null when "
                     "the command reported none. Required."),
        examples=[1, 127, 0])
    stdout: str = Field(default="", max_length=MAX_BODY_CHARS,
                        description="The standard output (at most 256 KiB).", examples=[""])
    stderr: str = Field(
        default="", max_length=MAX_BODY_CHARS, description="The standard error (at most 256 KiB).",
        examples=["sh: 1: pytest: not found\n"])
    duration_s: float | None = Field(
        default=None, strict=True, ge=0, allow_inf_nan=False,
        description="How long the command ran, in seconds (kept in the record's metadata).",
        examples=[2.5])
    timed_out: bool = Field(
        default=False, strict=True,
        description="The caller stopped the command at its time limit.", examples=[False])

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        given = [name for name in ("argv", "command") if getattr(self, name) is not None]
        if len(given) != 1:
            raise _count_error("command_form", ("argv", "command"), given)
        return self


class HttpInput(_Model):
    """An HTTP response from a provider or an API: status, body and headers."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "status": 429, "provider": "anthropic", "headers": {"retry-after": "7"},
        "body": ('{"type":"error","error":{"type":"rate_limit_error",'
                 '"message":"Number of request tokens has exceeded your per-minute rate '
                 'limit"}}'),
    }]})

    status: int = Field(
        strict=True, ge=100, le=599, description="The HTTP status (100..599).",
        examples=[429, 401, 529])
    body: str = Field(
        default="", max_length=MAX_BODY_CHARS,
        description="The response body as text, JSON or not (at most 256 KiB).",
        examples=[('{"error":{"message":"Rate limit reached","type":"requests",'
                   '"code":"rate_limit_exceeded"}}')])
    headers: dict[_HeaderName, _HeaderValue] = Field(
        default_factory=dict, max_length=MAX_HEADERS,
        description=("The response headers (at most 100; names matched case-insensitively): "
                     "``retry-after``, ``retry-after-ms`` and ``x-should-retry`` steer the "
                     "decision."),
        examples=[{"retry-after": "7"}])
    provider: _ProviderSlug | None = Field(
        default=None, min_length=1, max_length=64,
        description=("The provider, lower case (``openai``, ``anthropic``, ``gemini``...): "
                     "the surface becomes ``llm.<provider>``; default: told from the body's "
                     "shape and headers."),
        examples=["openai", "anthropic"])


class ClassifyRequest(_Model):
    """Exactly one raw failure (``exception``, ``command``, ``http`` or ``text``) and where it
    happened."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"command": {"command": "sh -c 'nonexistent-prog-xyz'", "exit_code": 127,
                     "stderr": "sh: 1: nonexistent-prog-xyz: not found\n"},
         "session": "sess-42", "step": 3, "context": {"agent": "claude-code"}},
        {"http": {"status": 429, "headers": {"retry-after": "7"},
                  "body": '{"type":"error","error":{"type":"rate_limit_error","message":"slow'
                          ' down"}}'}},
        {"exception": {"type": "TimeoutError", "message": "read timed out"}},
        {"text": "openai.RateLimitError: Error code: 429 - {'error': {'code': "
                 "'rate_limit_exceeded'}}"},
    ]})

    exception: ExceptionInput | None = Field(
        default=None, description="An exception known as type, message and traceback.")
    command: CommandInput | None = Field(default=None, description="A finished command.")
    http: HttpInput | None = Field(default=None, description="A provider's HTTP response.")
    text: _Text | None = Field(
        default=None, min_length=1, max_length=MAX_BODY_CHARS,
        description=("A traceback, log line or exception text as printed (at most 256 KiB); "
                     "the exception it names last is classified."),
        examples=[('Traceback (most recent call last):\n  File "app.py", line 1, in '
                   "<module>\nTimeoutError: read timed out")])
    session: _Text | None = Field(
        default=None, min_length=1, max_length=MAX_KEY_CHARS,
        description="The agent session it belongs to (the record's ``context['session']``).",
        examples=["sess-42"])
    step: int | None = Field(
        default=None, strict=True, ge=0, le=MAX_STEP,
        description="The step within the session (the record's ``context['step']``).",
        examples=[3])
    context: dict[_ContextKey, _ContextValue] = Field(
        default_factory=dict, max_length=MAX_CONTEXT_KEYS,
        description=("More context for the record (at most 50 keys of JSON scalars), e.g. "
                     "``agent``, ``agent_version``, ``model``, ``target``."),
        examples=[{"agent": "claude-code", "agent_version": "1.0.30", "model": "opus"}])

    @model_validator(mode="after")
    def _one_subject(self) -> Self:
        given = [name for name in _SUBJECTS if getattr(self, name) is not None]
        if len(given) != 1:
            raise _count_error("subject_count", _SUBJECTS, given)
        return self


# -- response ---------------------------------------------------------------------------------


class ClassifyResponse(_Model):
    """What failcode makes of the subject: a Failure with its decision and texts, a non-error
    outcome, or nothing."""

    kind: Literal["failure", "outcome", "none"] = Field(
        description=("``failure``: a Failure; ``outcome``: a typed non-error outcome (counted, "
                     "never shown as an error); ``none``: not a failure (exit 0, HTTP 2xx)."),
        examples=["failure"])
    failure: dict[str, Any] | None = Field(
        default=None,
        description="The Failure's canonical JSON form (redacted), when kind is failure.",
        examples=[{"code": FC.CMD_NOT_FOUND.value, "kind": "dependency_error",
                   "category": "environment", "error_class": "command_not_found"}])
    outcome: dict[str, Any] | None = Field(
        default=None,
        description=("The outcome's wire form, tagged by ``type`` (``no_match``, "
                     "``cancelled``, ``rejected_action``...), when kind is outcome."),
        examples=[{"type": "no_match", "probe": "grep", "exit_code": 1, "context": {}}])
    decision: dict[str, Any] | None = Field(
        default=None,
        description=("``failcode.decide`` on a first occurrence: action, delay_s, route, "
                     "outcome, rule, reason, hints, server_delay_s."),
        examples=[{"action": "retry", "delay_s": 7.0, "route": "provider_layer",
                   "outcome": "failed", "rule": 4, "reason": "rule 4 (retryable): ...",
                   "hints": [], "server_delay_s": 7.0}])
    user_text: str | None = Field(
        default=None, description="The text a user sees, in ``locale`` (redacted, no traceback).",
        examples=["The program nonexistent-prog-xyz is not installed or not on PATH.\n"])
    developer_text: str | None = Field(
        default=None,
        description="Developer detail: every field and the signature's components (redacted).",
        examples=["FC-CMD-001 command-not-found  error_id=fc-0a1b2c3d4e5f-0\n..."])
    code: str | None = Field(default=None, description="The stable code.",
                             examples=[FC.PROV_RATE_LIMIT.value])
    signature: str | None = Field(
        default=None, description="The semantic signature ``kind:surface:class:location:hash``.",
        examples=["provider_error:llm.anthropic:rate_limit:none:b32fbd7a"])
    category: str | None = Field(
        default=None, description="Who must act: user, transient, environment, defect, task.",
        examples=["transient"])
    retryable: bool | None = Field(
        default=None,
        description="Whether a retry unchanged may succeed (retryability ``retryable``).",
        examples=[True])
    locale: str = Field(
        default=SOURCE_LANGUAGE, min_length=2, max_length=16,
        description="The language ``user_text`` is in: a shipped catalog's, else ``en``.",
        examples=["en", "de"])
    suggested: dict[str, Any] | None = Field(
        default=None,
        description=("The learned model's suggestion when the rules say unknown "
                     "(``unknown_error``, or ``command_error`` of class ``unknown``): kind, "
                     "class, confidence, nearest (known examples: program, kind, class, "
                     "excerpt, similarity, remedy when known) and model; null otherwise. A "
                     "suggestion only: the failure, decision and texts are the rules'."),
        examples=[None])


# -- the door ---------------------------------------------------------------------------------


def classify_payload(request: ClassifyRequest, *, locale: str | None = None,
                     purpose: str | None = None) -> ClassifyResponse:
    """Classify the request's one subject and say what failcode makes of it.

    Args:
        request: the validated request.
        locale: the reader's language (``de``, ``de-AT``, ``de_DE.UTF-8``); English when None or
            when no catalog for it is shipped.
        purpose: a command's purpose (one of :data:`failcode.PURPOSES`), for a
            caller that knows it (``failcode mcp``); None infers it, as the door does.

    Returns:
        The answer (see the module's rules). Pure but for the decision's jitter, drawn from
        :func:`random.random` as :func:`failcode.decide` does by default; never raises for a
        valid request.
    """
    language = _resolve_locale(locale)
    result = _classify(request, purpose)
    if result is None:
        return ClassifyResponse(kind="none", locale=language)
    context = _context(request)
    if not isinstance(result, Failure):
        outcome = _with_context(result, context)
        wire: dict[str, Any] = redact_tree(msgspec.to_builtins(outcome, order="deterministic"))
        return ClassifyResponse(kind="outcome", outcome=wire, locale=language)
    failure = _with_context(result, context)
    if request.command is not None and request.command.duration_s is not None:
        failure = msgspec.structs.replace(failure, metadata=FrozenDict(
            {**failure.metadata, "duration_s": request.command.duration_s}))
    decision = decide(failure, _CLASSIFY_HISTORY)
    suggested = _suggested(request, failure)
    return ClassifyResponse(
        kind="failure",
        failure=msgspec.json.decode(render_json(failure)),
        decision=_decision_wire(decision),
        user_text=render_user(failure, locale=language, decision=decision),
        developer_text=render_developer(failure, locale=language),
        code=failure.code,
        signature=failure.signature,
        category=failure.category.value,
        retryable=failure.retryability is Retryability.RETRYABLE,
        locale=language,
        suggested=None if suggested is None else suggested.to_dict(),
    )


def _suggested(request: ClassifyRequest, failure: Failure) -> Suggestion | None:
    """The learned model's suggestion for a failure the rules left unknown, from the
    request's own input (the module's rules); None for any other."""
    from failcode.learned import suggest_for, wants_suggestion  # noqa: PLC0415

    if not wants_suggestion(failure):
        return None
    if request.command is not None:
        cmd = request.command
        argv = cmd.argv if cmd.argv is not None else cmd.command
        return suggest_for(failure, argv, cmd.exit_code, cmd.stderr, stdout=cmd.stdout)
    if request.exception is not None:
        exc = request.exception
        text = exc.traceback or f"{exc.type}: {exc.message}"  # a traceback ends with that line
        return suggest_for(failure, None, None, text)
    return suggest_for(failure, None, None, request.text or "")


def _resolve_locale(locale: str | None) -> str:
    """The shipped language ``locale`` asks for (its region's catalog first), else ``en``."""
    if not locale or len(locale) > 64:
        return SOURCE_LANGUAGE
    base = locale.split(".", 1)[0].split("@", 1)[0].replace("-", "_").strip()
    language, _, region = base.partition("_")
    shipped = available_languages()
    for candidate in (f"{language.lower()}_{region.upper()}" if region else "",
                      language.lower()):
        if candidate and candidate in shipped:
            return candidate
    return SOURCE_LANGUAGE


def _classify(request: ClassifyRequest,
              purpose: str | None = None) -> Failure | NonErrorOutcome | None:
    if request.exception is not None:
        exc = request.exception
        name = exc.type if exc.module is None or "." in exc.type else f"{exc.module}.{exc.type}"
        return classify_text(name, exc.message, traceback=exc.traceback)
    if request.command is not None:
        cmd = request.command
        argv = cmd.argv if cmd.argv is not None else cmd.command
        assert argv is not None  # the model's validator: exactly one of the two
        return from_command(argv, cmd.exit_code, cmd.stdout, cmd.stderr,
                            timed_out=cmd.timed_out, purpose=purpose)
    if request.http is not None:
        http = request.http
        if not 400 <= http.status <= 599:
            return None
        surface = f"llm.{http.provider}" if http.provider else None
        return classify_http(http.status, http.body, http.headers, surface=surface)
    assert request.text is not None  # the model's validator: exactly one subject
    type_name, message, traceback = _exception_in_text(request.text)
    return classify_text(type_name, message, traceback=traceback)


def _exception_in_text(text: str) -> tuple[str, str, str | None]:
    """The exception ``text`` names last: ``(type, message, traceback or None)``.

    The exception line of the last Python traceback (its message continued by the lines after
    it, as ``str(exc)`` is printed); else the last line naming an exception type from a word on
    to its end (``... ERROR openai.RateLimitError: Error code: 429``), the first such word of
    the line; else the whole text as the message of a plain ``Exception``.
    """
    found = exception_line(text)
    if found is not None:
        type_name, message, traceback = found
        rest = text[len(traceback):].strip("\n")
        return type_name, (f"{message}\n{rest}" if rest.strip() else message).strip(), traceback
    for line in reversed(text.splitlines()):
        stripped = line.strip()
        for word in _WORD_START.finditer(stripped):
            named = _EXC_FROM.match(stripped, word.end())
            if named is not None:
                return named.group("type"), (named.group("message") or "").strip(), None
    return "Exception", text.strip(), None


def _context(request: ClassifyRequest) -> dict[str, Scalar]:
    """The request's context, redacted (keys too) and cut to what a record's mapping keeps."""
    merged: dict[str, Scalar] = dict(request.context)
    if request.session is not None:
        merged["session"] = request.session
    if request.step is not None:
        merged["step"] = request.step
    return {redact_cut(key, MAX_KEY_CHARS): redact_cut(value, MAX_VALUE_CHARS)
            if isinstance(value, str) else value for key, value in merged.items()}


def _with_context(item: _Item, context: Mapping[str, Scalar]) -> _Item:
    """``item`` with ``context`` merged into its own (the request's keys win)."""
    if not context:
        return item
    return msgspec.structs.replace(item, context=FrozenDict({**item.context, **context}))


def _decision_wire(decision: Decision) -> dict[str, Any]:
    """A decision's wire form, as ``failcode classify --json`` and ``failcode run --json``
    print it (plus the server-directed delay it honoured or refused)."""
    return {"action": str(decision.action), "delay_s": decision.delay_s,
            "route": str(decision.route), "outcome": str(decision.outcome),
            "rule": int(decision.rule), "reason": decision.reason,
            "hints": [str(hint) for hint in decision.hints],
            "server_delay_s": decision.server_delay_s}
