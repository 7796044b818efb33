"""Wrong input types at public entry points: a clear TypeError naming the call and argument."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from failcode import (
    FC,
    Budget,
    History,
    NoMatch,
    Policy,
    RejectedAction,
    decide,
    explain_signature,
    from_air_error,
    render_developer,
    render_json,
    render_rejected_action,
    render_user,
    to_afk_error,
    to_air_error,
    to_tool_error_output,
    to_worker_result,
)

if TYPE_CHECKING:
    from collections.abc import Callable

_FAILURE = FC.SYS_UNKNOWN.failure(surface="t", params={"exception": "E"})

CASES: list[tuple[str, Callable[[], Any], str, str]] = [
    # (id, call, the argument named, what was given)
    ("decide-nomatch", lambda: decide(NoMatch(probe="grep"), History()), "failure", "NoMatch"),  # type: ignore[arg-type]
    ("decide-exception", lambda: decide(ValueError("x"), History()), "failure", "ValueError"),  # type: ignore[arg-type]
    ("decide-history", lambda: decide(_FAILURE, {"attempts": 1}), "history", "dict"),  # type: ignore[arg-type]
    ("decide-policy", lambda: decide(_FAILURE, History(), "strict"), "policy", "str"),  # type: ignore[arg-type]
    ("decide-budget", lambda: decide(_FAILURE, History(), Policy(), 5), "budget", "int"),  # type: ignore[arg-type]
    ("render_user", lambda: render_user(None), "failure", "NoneType"),  # type: ignore[arg-type]
    ("render_developer", lambda: render_developer("x"), "failure", "str"),  # type: ignore[arg-type]
    ("render_json", lambda: render_json({}), "failure", "dict"),  # type: ignore[arg-type]
    ("explain_signature", lambda: explain_signature(None), "failure", "NoneType"),  # type: ignore[arg-type]
    ("to_worker_result", lambda: to_worker_result("x"), "failure", "str"),  # type: ignore[arg-type]
    ("to_air_error", lambda: to_air_error(None), "failure", "NoneType"),  # type: ignore[arg-type]
    ("to_tool_error_output", lambda: to_tool_error_output(1), "failure", "int"),  # type: ignore[arg-type]
    ("to_afk_error", lambda: to_afk_error("FC-SYS-001"), "failure", "str"),  # type: ignore[arg-type]
    ("from_air_error", lambda: from_air_error("{}"), "air", "str"),  # type: ignore[arg-type]
    ("render_rejected_action", lambda: render_rejected_action(_FAILURE), "rejected", "Failure"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("call", "argument", "given"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_wrong_type_raises_a_type_error_naming_argument_and_expectation(
        call: Callable[[], Any], argument: str, given: str) -> None:
    """A wrong argument type is a TypeError naming the argument, the expected and given types."""
    with pytest.raises(TypeError, match=rf"expects {argument} to be a failcode\.\w+.*got "
                                        rf"{re.escape(given)}"):
        call()


def test_right_types_still_decide() -> None:
    """The type guard lets every valid call through (a budget included)."""
    policy = Policy()
    decision = decide(_FAILURE, History(), policy, Budget.full(policy))
    assert decision.action.value == "retry"


def test_rejected_action_is_not_decided_but_rendered() -> None:
    """A RejectedAction is refused by decide and rendered by its own helper."""
    rejected = RejectedAction(action="click", reason="outside the window")
    with pytest.raises(TypeError, match="non-error outcome"):
        decide(rejected, History())  # type: ignore[arg-type]
    assert render_rejected_action(rejected)
