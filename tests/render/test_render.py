"""The renderers: user text, rich form, developer detail, JSON, visibility; no secret anywhere."""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import (
    FC,
    Category,
    Channel,
    EntityRef,
    Failure,
    FailureError,
    Kind,
    Severity,
    SeverityGate,
    Visibility,
    render_developer,
    render_json,
    render_rich,
    render_user,
    visibility,
    visible,
)
from failcode.boundary import problem
from failcode.render._render import format_traceback
from tests._needs import need_module
from tests._records import record


def _raise_chain(failure: Failure) -> FailureError:
    try:
        try:
            raise ConnectionError("connection reset by peer")
        except ConnectionError as exc:
            raise FailureError(failure) from exc
    except FailureError as error:
        return error


AUTH = FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"})


@pytest.mark.parametrize("member", [m for m in FC if m.spec.category.needs_remedy])
def test_remedy_always_shown_for_user_and_environment(member: Any) -> None:
    """Every user or environment code's user text shows its remedy and its impact."""
    params = dict(member.spec.example_params)
    failure = member.failure(surface="op", params=params)
    text = render_user(failure)
    assert failure.remedy in text
    assert member.spec.impact in text


def test_user_text_says_what_next_and_where_evidence_is() -> None:
    """User text names what was tried, the retry delay and the evidence refs."""
    failure = FC.PROV_RATE_LIMIT.failure(
        surface="llm.complete", params={"provider": "OpenAI"},
        evidence_refs=(EntityRef("log", "session-7.jsonl"),))
    text = render_user(failure, decision=4.0, tried="3 attempts over 20 s")
    assert "Tried: 3 attempts over 20 s" in text
    assert "Next: retrying in 4 s." in text
    assert "No action needed from you" in text
    assert "Evidence: log:session-7.jsonl" in text


def test_user_text_has_no_traceback_unless_asked() -> None:
    """A traceback appears in user text only when asked for."""
    error = _raise_chain(AUTH)
    assert "Traceback" not in render_user(AUTH, exc=error)
    assert "Traceback (most recent call last)" in render_user(AUTH, exc=error,
                                                              show_traceback=True)


def test_huge_detail_is_cut_and_the_cut_said() -> None:
    """A long detail shows a few lines and says how much was cut."""
    detail = "\n".join(f"compiler line {n}" for n in range(200))
    failure = FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"},
                                      detail=detail)
    text = render_user(failure)
    assert "compiler line 0" in text
    assert "compiler line 150" not in text
    assert "192 more lines" in text


def test_rich_form_renders_the_same_text() -> None:
    """The rich panel holds the heading and the remedy."""
    need_module("rich")
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(render_rich(AUTH))
    out = console.export_text()
    assert "error [FC-PROV-001]: The API credentials for OpenAI were rejected." in out
    assert "Check the API key for OpenAI" in out


def test_developer_detail_has_chain_traceback_and_signature() -> None:
    """Developer detail shows the cause chain, a traceback and every signature component."""
    error = _raise_chain(AUTH)
    failure = FC.PROV_AUTH.failure(surface="llm.complete", params={"provider": "OpenAI"},
                                   cause=error.__cause__, metadata={"http_status": 401},
                                   context={"session": "s1"})
    text = render_developer(failure, exc=error)
    assert "1. ConnectionError: connection reset by peer" in text
    assert "Traceback (most recent call last)" in text
    assert f"signature: {failure.signature}" in text
    assert "recomputed: same" in text
    assert "+ status" in text
    assert "- diagnostic" in text
    assert "session = 's1'" in text
    assert "http_status = 401" in text


def test_traceback_is_bounded() -> None:
    """A deep traceback keeps the innermost frames and a character bound, saying what was cut."""
    def recurse(n: int) -> None:
        if n == 0:
            raise ValueError("deep")
        recurse(n - 1)

    try:
        recurse(100)
    except ValueError as exc:
        text = format_traceback(None, exc, max_frames=5, max_chars=200)
        framed = format_traceback(None, exc, max_frames=5)
        whole = format_traceback(None, exc, max_frames=1000, max_chars=10**6)
    assert len(framed) < len(whole)
    assert len(text) < 260
    assert "characters cut from the start" in text
    assert text.endswith("ValueError: deep")


def test_traceback_from_metadata() -> None:
    """A record's metadata traceback is shown when no exception is given."""
    failure = FC.SYS_UNKNOWN.failure(surface="op", params={"exception": "X"},
                                     metadata={"traceback": "Traceback...\nX: boom"})
    assert "X: boom" in render_developer(failure)


def test_json_is_the_canonical_record() -> None:
    """render_json of a factory-built record equals to_json and decodes back."""
    assert render_json(AUTH) == AUTH.to_json()
    assert Failure.from_json(render_json(AUTH, indent=2)) == AUTH


@pytest.mark.parametrize(("severity", "expected"), [
    (Severity.INFO, Visibility.PROGRESS_DETAIL),
    (Severity.WARNING, Visibility.FINAL_REPORT),
    (Severity.ERROR, Visibility.WHEN_RELEVANT),
    (Severity.FATAL, Visibility.IMMEDIATE),
])
def test_visibility_rule(severity: Severity, expected: Visibility) -> None:
    """Each severity has seed 000 §4's visibility."""
    assert visibility(severity) is expected


@pytest.mark.parametrize(("severity", "channel", "relevant", "shown"), [
    ("info", "progress", True, True), ("info", "stream", True, False),
    ("info", "final_report", True, False),
    ("warning", "progress", True, True), ("warning", "stream", True, False),
    ("warning", "final_report", True, True),
    ("error", "stream", True, True), ("error", "stream", False, False),
    ("error", "final_report", True, True), ("error", "final_report", False, False),
    ("fatal", "stream", False, True), ("fatal", "final_report", False, True),
])
def test_visible(severity: str, channel: str, relevant: bool, shown: bool) -> None:
    """visible() follows the table: info progress only, warning report, error if relevant."""
    assert visible(severity, Channel(channel), relevant=relevant) is shown


def test_gate_holds_warnings_for_the_final_report() -> None:
    """The gate shows fatal and relevant errors now and lists warnings in the final report."""
    gate = SeverityGate()
    info = record("XX-A-001", Kind.TOOL_ERROR, Category.TASK, "a", severity=Severity.INFO)
    warning = record("XX-A-002", Kind.TOOL_ERROR, Category.TASK, "b", severity=Severity.WARNING)
    fatal = record("XX-A-003", Kind.TOOL_ERROR, Category.TASK, "c", severity=Severity.FATAL)
    assert [gate.offer(f) for f in (info, warning, fatal)] == [False, False, True]
    assert gate.final_report() == (fatal, warning)


# -- no rendered form leaks a secret ------------------------------------------------------------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_secrets = st.one_of(
    st.text(_ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text(_ALNUM + "-_", min_size=40, max_size=60).map(lambda s: "sk-ant-api03-" + s),
    st.text(_ALNUM, min_size=48, max_size=48).map(lambda s: "sk-proj-" + s),
    st.text(_ALNUM, min_size=16, max_size=16).map(lambda s: "AKIA" + s.upper()),
)


def _forms(failure: Failure, exc: BaseException) -> dict[str, str]:
    """Every rendered form of a failure, as text."""
    from failcode.integrations.logs import FailcodeLogFilter, failcode_processor
    from failcode.integrations.otel import failure_attributes
    from failcode.integrations.sentry import before_send

    record_ = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed: %s", (str(exc),),
                                (type(exc), exc, exc.__traceback__))
    FailcodeLogFilter().filter(record_)
    log_text = logging.Formatter().format(record_)
    event = {"exception": {"values": [{"type": "FailureError", "value": str(exc)}]},
             "message": str(exc)}
    return {
        "user": render_user(failure, show_traceback=True, exc=exc),
        "user_de": render_user(failure, locale="de"),
        "developer": render_developer(failure, exc=exc),
        "json": render_json(failure),
        "problem": json.dumps(problem(failure).body),
        "log": log_text,
        "structlog": json.dumps(failcode_processor(None, "error", {
            "event": str(exc), "failure": failure})),
        "span": json.dumps(failure_attributes(failure)),
        "sentry": json.dumps(before_send(event, {"exc_info": (type(exc), exc, None)})),
    }


@settings(max_examples=30)
@given(secret=_secrets)
def test_no_form_contains_a_secret_from_params(secret: str) -> None:
    """A secret passed in params never appears in any rendered form."""
    failure = FC.DATA_INVALID_INPUT.failure(surface="op", params={"problem": f"key {secret}"},
                                            detail=f"sent Authorization: Bearer {secret}")
    error = _raise_chain(failure)
    for name, text in _forms(failure, error).items():
        assert secret not in text, name


@settings(max_examples=30)
@given(secret=_secrets)
def test_no_form_contains_a_secret_of_a_hand_built_record(secret: str) -> None:
    """A record built by hand with a secret in its message still renders none of it."""
    failure = record("FC-DATA-001", Kind.USER_ERROR, Category.USER, "validation",
                     message=f"The token {secret} was rejected.",
                     remedy=f"Rotate {secret} now.")
    failure = msgspec.structs.replace(failure, detail=f"header: {secret}")
    error = _raise_chain(failure)
    for name, text in _forms(failure, error).items():
        assert secret not in text, name


# -- a rejected action, fed back to the model (seed 003) -------------------------------------------

@given(st.text(min_size=1, max_size=120), st.text(max_size=2000))
def test_rejected_action_instruction_is_short_code_free_and_one_line(action: str,
                                                                      reason: str) -> None:
    """The instruction for the model is one short line; it adds no failure code or severity
    (a code the model itself wrote in the action or reason may stay)."""
    from failcode import RejectedAction, render_rejected_action

    text = render_rejected_action(RejectedAction(action=action, reason=reason))
    assert "\n" not in text
    assert len(text) <= 400
    assert text.count("FC-") <= (action + reason).count("FC-")
    assert not text.startswith(("error", "fatal", "warning"))
    assert text.endswith("Choose a different action.")


def test_rejected_action_instruction_names_the_action_and_the_reason() -> None:
    """The model learns which action was refused and why."""
    from failcode import RejectedAction, render_rejected_action

    text = render_rejected_action(RejectedAction(action="click(900, 40)",
                                                 reason="the target is outside the window"))
    assert "click(900, 40)" in text
    assert "the target is outside the window" in text


def test_rejected_action_instruction_redacts_secrets() -> None:
    """A secret in the rejected action never goes back into the model's context."""
    from failcode import RejectedAction, render_rejected_action

    secret = "sk-proj-" + "a1b2c3d4e5" * 4
    text = render_rejected_action(RejectedAction(action=f"login --key {secret}",
                                                 reason=f"key {secret} is not allowed"))
    assert "a1b2c3d4e5" not in text


def test_rejected_action_instruction_is_localized() -> None:
    """The instruction follows the model's language like the user text."""
    from failcode import RejectedAction, render_rejected_action

    text = render_rejected_action(RejectedAction(action="jump", reason="no floor"), locale="de")
    assert "jump" in text
    assert "Choose" not in text
