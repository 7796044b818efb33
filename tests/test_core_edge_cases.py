"""Issue 23, the core cases still open: a hostile exception given to ``render_developer``, a
server delay out of every range reaching ``decide``, and an exit status that is no integer
given to ``from_command``. Each test failed on the code before the fix."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import pytest

from failcode import (
    FC,
    Failure,
    FailureDecodeError,
    History,
    InvalidFailureError,
    decide,
    from_command,
    render_developer,
)

SECRET = "ghp_" + "a1B2c3D4" * 5

# --- render_developer with a hostile exception -------------------------------------------------


def _unknown() -> Failure:
    return FC.SYS_UNKNOWN.failure(surface="python", params={"exception": "Hostile",
                                                            "error": "boom"})


ATTRIBUTES = ("__class__", "args", "__traceback__", "__cause__", "__context__",
              "__suppress_context__", "__notes__", "__dict__", "with_traceback")


class _BoomError(Exception):
    """What a hostile attribute raises (any exception, not only AttributeError)."""


def _hostile_getattribute(name: str) -> type[Exception]:
    class HostileError(Exception):
        def __getattribute__(self, attr: str) -> Any:
            if attr == name:
                raise _BoomError(attr)
            return super().__getattribute__(attr)
    return HostileError


class _RaisesEverywhereError(Exception):
    def __getattribute__(self, attr: str) -> Any:
        raise RuntimeError(attr)


class _GetattrRaisesError(Exception):
    def __getattr__(self, attr: str) -> Any:  # reached for __notes__, never set
        raise ValueError(attr)


class _StrRaisesTooError(_GetattrRaisesError):
    def __str__(self) -> str:
        raise _BoomError("str")


def _raised(cls: type[Exception]) -> Exception:
    def inner() -> None:
        raise KeyError("inner")
    try:
        try:
            inner()
        except KeyError as cause:
            raise cls(f"token {SECRET}") from cause
    except Exception as error:  # noqa: BLE001 - the exception under test
        return error
    raise AssertionError


HOSTILE = {f"getattribute_{name}": _hostile_getattribute(name) for name in ATTRIBUTES}
HOSTILE |= {"getattribute_all": _RaisesEverywhereError, "getattr": _GetattrRaisesError,
            "getattr_and_str": _StrRaisesTooError}


@pytest.mark.parametrize("cls", HOSTILE.values(), ids=HOSTILE.keys())
def test_render_developer_survives_a_hostile_exception(cls: type[Exception]) -> None:
    """An exception whose attributes raise (any exception, on any name) still renders: the
    traceback's frames, its type, its message when it has one, redacted; nothing raises."""
    exc = _raised(cls)
    failure = _unknown()
    text = render_developer(failure, exc=exc)
    assert text.endswith("\n")
    section = text.split("\ntraceback:\n", 1)[1].split("\ncontext:", 1)[0]
    assert "Traceback (most recent call last):" in section
    assert ", in inner" in section  # the frame of the cause
    assert f"{cls.__qualname__}: " in section
    assert "token ghp_<secret>" in section or "<exception str() failed>" in section
    assert SECRET not in text


def test_a_hostile_exception_that_is_no_exception_renders() -> None:
    """Even an object that is not an exception renders as the record alone."""
    text = render_developer(_unknown(), exc="not an exception")  # type: ignore[arg-type]
    assert "FC-SYS-001" in text


# --- decide with a server delay out of range ----------------------------------------------------


def _rate_limited(delay: object) -> Failure:
    failure = FC.PROV_RATE_LIMIT.failure(surface="llm.openai", metadata={"retry_after_s": 1})
    return msgspec.structs.replace(failure, metadata={"retry_after_s": delay})


@pytest.mark.parametrize("raw", ["1e30", str(10**30), str(-(10**30)), str(10**400), "1e400",
                                 "-1e400", "NaN", "Infinity"])
def test_a_huge_or_infinite_delay_is_refused_at_decoding(raw: str) -> None:
    """A decoded record never holds an integer outside 64 bits or a non-finite float: the
    decoder says so (FailureDecodeError naming the key) instead of handing it to decide."""
    text = _rate_limited(2.0).to_json().replace('"retry_after_s":2.0', f'"retry_after_s":{raw}')
    assert f'"retry_after_s":{raw}' in text
    if raw == "1e30":
        decision = decide(Failure.from_json(text), History())
        assert decision.action == "escalate"  # above the ceiling: fail fast
        return
    with pytest.raises(FailureDecodeError):
        Failure.from_json(text)


@pytest.mark.parametrize("value", [10**30, math.inf, math.nan, -math.inf])
def test_a_huge_or_infinite_delay_is_refused_when_built(value: float) -> None:
    """The same bound when a record is built: InvalidFailureError names the key."""
    with pytest.raises(InvalidFailureError, match="retry_after_s"):
        _rate_limited(value)


@pytest.mark.parametrize("value", [-5, -0.5, -(2**63)])
def test_a_negative_delay_is_no_server_delay(value: float) -> None:
    """A negative retry_after_s is no server-directed delay: decide retries on its backoff
    alone and reports no server delay (it reported a negative one)."""
    decision = decide(_rate_limited(value), History())
    assert decision.action == "retry"
    assert decision.server_delay_s is None
    assert decision.delay_s >= 0


@pytest.mark.parametrize("value", [10**400, -(10**400), math.nan, math.inf])
def test_decide_never_overflows_on_a_record_past_its_bounds(value: float) -> None:
    """Should a record's mapping hold a value past its bounds anyway (written around it),
    decide raises no OverflowError: beyond a float is infinite (fail fast), NaN and negatives
    are no delay."""
    failure = _rate_limited(1)
    dict.__setitem__(failure.metadata, "retry_after_s", value)  # around FrozenDict's checks
    decision = decide(failure, History())
    if value > 0:
        assert decision.action == "escalate"
        assert decision.server_delay_s == math.inf
    else:
        assert decision.action == "retry"
        assert decision.server_delay_s is None


# --- from_command with an exit status that is no integer ---------------------------------------

NOT_INTEGERS = {"nan": math.nan, "inf": math.inf, "minus_inf": -math.inf, "float": 1.0,
                "fraction": 2.5, "true": True, "false": False, "str": "1", "bytes": b"1",
                "object": object(), "list": [1]}
HUGE = {"huge": 10**30, "huge_negative": -(10**30), "just_past_64_bits": 2**64,
        "below_int64": -(2**63) - 1}


@pytest.mark.parametrize("value", NOT_INTEGERS.values(), ids=NOT_INTEGERS.keys())
def test_an_exit_status_that_is_no_integer_is_a_type_error(value: object) -> None:
    """A float (NaN, inf, 1.0), a bool, a str or any other object is refused with a TypeError
    naming exit_code, not a bare ValueError or OverflowError from int()."""
    with pytest.raises(TypeError, match=r"from_command: exit_code=.* is not an exit status"):
        from_command(["make"], value, purpose="build")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", HUGE.values(), ids=HUGE.keys())
def test_an_exit_status_outside_64_bits_is_a_value_error(value: int) -> None:
    """An integer outside a record's 64 bits is refused with a ValueError naming exit_code
    (it was silently cut to 32 bits)."""
    with pytest.raises(ValueError, match=r"from_command: exit_code is an integer of \d+ bits"):
        from_command(["make"], value, purpose="build")


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63), 2**40, -(2**40), 255, -9])
def test_an_exit_status_inside_64_bits_still_classifies(value: int) -> None:
    """Integers a record holds still classify (beyond 32 bits kept modulo 2**32, as before)."""
    result = from_command(["make"], value, purpose="build")
    assert result is None or json.loads(result.to_json())
