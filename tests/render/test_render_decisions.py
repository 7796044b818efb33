"""render_user never contradicts the decision (issue item 6): every code of the catalog,
rendered under every action ``decide`` can return, in English and German.

- under ``block``, ``escalate`` or ``abort`` the text says who must act and never "no action
  needed";
- "retrying in N s" only when the decision retries (and "Next:" says what the decision says,
  not what the retryability alone would);
- no plural or article errors in the counts triage prints ("1 loop", "2 loops").
"""

from __future__ import annotations

import io
import subprocess
import sys
from typing import TYPE_CHECKING

import msgspec
import pytest

from failcode import (
    FC,
    Action,
    Failure,
    History,
    Policy,
    decide,
    from_command,
    headline,
    render_user,
)
from failcode.render._i18n import ui_text
from failcode.triage.report._terminal import plural

if TYPE_CHECKING:
    from pathlib import Path

CODES = [member.spec for member in FC if not member.spec.retired]
ACTIONS = list(Action)


def _prefix(key: str, locale: str | None) -> str:
    """The fixed text of a UI string before its first placeholder."""
    return ui_text(key, locale, remedy="\0", who="\0", delay="\0").split("\0")[0]


def _calm(locale: str | None) -> list[str]:
    """The "no action needed" lines (transient, task, defect), in ``locale``."""
    return [ui_text(f"ui.act.{category}", locale)
            for category in ("transient", "task", "defect")]


def _acting(locale: str | None) -> list[str]:
    """The openings of the lines that say who must act, in ``locale``."""
    return [_prefix(key, locale) for key in ("ui.act.user", "ui.act.environment",
                                              "ui.act.decided", "ui.act.decided.bare")]


def _example(spec: object) -> Failure:
    params = dict(getattr(spec, "example_params", None) or {})
    return spec.failure(surface="example", params=params)  # type: ignore[attr-defined]


@pytest.mark.parametrize("locale", [None, "de"])
@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.value)
def test_every_code_under_every_action(action: Action, locale: str | None) -> None:
    stops = action.value in {"block", "escalate", "abort"}
    for spec in CODES:
        failure = _example(spec)
        real = decide(failure, History(), Policy())
        decision = msgspec.structs.replace(real, action=action,
                                       delay_s=2.0 if action is Action.RETRY else 0.0)
        text = render_user(failure, decision=decision, locale=locale)
        if stops:
            assert not any(calm in text for calm in _calm(locale)), (spec.code, text)
            assert any(act in text for act in _acting(locale)), (spec.code, text)
        retrying = _prefix("ui.next.delay", locale) in text
        assert retrying == (action is Action.RETRY), (spec.code, action, text)


def test_the_real_decision_is_what_the_text_says() -> None:
    """For every code, the text under its own decision: a retry with a delay says the delay;
    any other action never promises one."""
    for spec in CODES:
        failure = _example(spec)
        decision = decide(failure, History(), Policy())
        text = render_user(failure, decision=decision)
        if decision.action is Action.RETRY and decision.delay_s > 0:
            assert "retrying in" in text, spec.code
        else:
            assert "retrying in" not in text, (spec.code, decision.action)


@pytest.mark.parametrize(("count", "text"), [(0, "0 loops"), (1, "1 loop"), (2, "2 loops"),
                                             (1234, "1,234 loops")])
def test_plurals(count: int, text: str) -> None:
    assert plural(count, "loop") == text


def test_the_summary_says_one_loop_not_one_loops() -> None:
    """The summary's own words for a count of one."""
    from failcode.triage import triage
    from failcode.triage.report._terminal import render_summary, sample_paths

    out = io.StringIO()
    render_summary(triage(sample_paths()), file=out)
    assert " 1 loops" not in out.getvalue()
    assert " 1 sessions" not in out.getvalue()
    assert " 1 steps" not in out.getvalue()


def test_the_heading_says_what_failed_when_the_sentence_is_generic(tmp_path: Path) -> None:
    """A real script's uncaught exception: "The command python exited with status 1." is
    generic, so the heading adds the exception line (in every locale)."""
    (tmp_path / "app.py").write_text("raise LookupError('no dialect named ansi2')\n")
    argv = [sys.executable, "app.py"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False,
                          timeout=60)
    failure = from_command(argv, done.returncode, done.stdout, done.stderr, purpose="general")
    assert isinstance(failure, Failure)
    assert failure.message == "The command python exited with status 1."
    assert headline(failure) == ("The command python exited with status 1: "
                                 "LookupError: no dialect named ansi2")
    assert render_user(failure).splitlines()[0].endswith(
        "exited with status 1: LookupError: no dialect named ansi2")
    assert render_user(failure, locale="de").splitlines()[0].endswith(
        ": LookupError: no dialect named ansi2")
    specific = FC.CMD_MISSING_MODULE.failure(surface="python.run", params={"module": "erfa"},
                                             detail="ModuleNotFoundError: No module named 'erfa'")
    assert headline(specific) == specific.message


@pytest.mark.parametrize(("text", "one_line", "shown"), [
    ("plain", False, "plain"),
    ("a\x1b[31mb\tc\x9b", False, "a\\x1b[31mb c\\x9b"),
    ("line\r\nnext\n", False, "line\nnext\n"),
    ("line\r\nnext\n", True, "line next "),
    ("bad\udcffbyte", True, "bad\ufffdbyte"),
    (None, True, ""),
])
def test_printable_is_the_one_escaping_rule(text: str | None, one_line: bool,
                                            shown: str) -> None:
    """The CLI, the store subcommands and triage's reports print through one rule."""
    from failcode.render._printable import printable

    assert printable(text, one_line=one_line) == shown
