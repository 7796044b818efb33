"""The wire envelope: codes and structured context across a process boundary (seed 003)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import (
    FC,
    Cancelled,
    EnvelopeError,
    Failure,
    NoMatch,
    PeerExited,
    RejectedAction,
    SessionEnded,
    SessionStarted,
    Veto,
    encode_end,
    read_envelopes,
)
from failcode import decode_envelope as decode
from failcode import encode_envelope as encode
from failcode.record._outcomes import SESSION_STATUSES
from tests.strategies import failures

outcomes = st.one_of(
    st.builds(NoMatch, probe=st.sampled_from(["grep", "rg", "find"]),
              exit_code=st.none() | st.integers(0, 255)),
    st.builds(RejectedAction, action=st.text(max_size=30), reason=st.text(max_size=30)),
    st.builds(Veto, reason=st.text(max_size=30), by=st.none() | st.text(max_size=10)),
    st.builds(Cancelled, reason=st.text(max_size=30), signal=st.none() | st.integers(1, 64)),
    st.builds(PeerExited, peer=st.text(min_size=1, max_size=10), reason=st.text(max_size=30)),
    st.builds(SessionStarted, by=st.text(min_size=1, max_size=20)),
    st.builds(SessionEnded, status=st.sampled_from(SESSION_STATUSES),
              by=st.text(min_size=1, max_size=20), reason=st.none() | st.text(max_size=30)),
)


@given(failures())
def test_failure_round_trips(record: Failure) -> None:
    """Property: decode(encode(f)) == f for any valid Failure."""
    assert decode(encode(record)) == record


@given(outcomes)
def test_outcome_round_trips(outcome: object) -> None:
    """Property: non-error outcomes cross the wire as themselves, never as Failures."""
    assert decode(encode(outcome)) == outcome  # type: ignore[arg-type]


def test_envelope_carries_code_params_and_context() -> None:
    """The envelope holds the code, params and structured context, not only text."""
    record = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                      context={"session": "s1"})
    envelope = json.loads(encode(record))
    assert envelope["failcode"] == 1
    assert envelope["type"] == "failure"
    assert envelope["body"]["code"] == "FC-CMD-001"
    assert envelope["body"]["params"] == {"program": "cargo"}
    assert envelope["body"]["context"] == {"session": "s1"}


@pytest.mark.parametrize(("data", "needle"), [
    (b"not json", "malformed failcode envelope"),
    (b'{"failcode":2,"type":"failure","body":{}}', "unsupported envelope version 2"),
    (b'{"failcode":1,"type":"mystery","body":{}}', "unknown envelope type 'mystery'"),
    (b'{"failcode":1,"type":"failure"}', "needs a body"),
    (b'{"failcode":1,"type":"failure","body":{"code":"FC-CMD-001"}}', "invalid failure body"),
    (b'{"failcode":1,"type":"failure","body":{},"extra":1}', "unknown field `extra`"),
    (b'{"failcode":1,"type":"end"}', "carries no item"),
])
def test_bad_envelopes_fail_clearly(data: bytes, needle: str) -> None:
    """A malformed or unknown-version envelope is a clear EnvelopeError."""
    with pytest.raises(EnvelopeError) as info:
        decode(data)
    assert needle in str(info.value)


def test_half_valid_body_builds_nothing() -> None:
    """A body that breaks a record invariant gives an error, never a half-built record."""
    record = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    envelope = json.loads(encode(record))
    envelope["body"]["remedy"] = None
    with pytest.raises(EnvelopeError, match="remedy is required"):
        decode(json.dumps(envelope))


def test_stream_reads_items_until_end() -> None:
    """A stream yields its items and stops at the end envelope."""
    record = FC.PROV_TIMEOUT.failure(surface="llm.complete", params={"provider": "OpenAI"})
    lines = [encode(record) + b"\n", encode(NoMatch(probe="grep")) + b"\n", encode_end() + b"\n",
             b"ignored after end\n"]
    assert list(read_envelopes(lines)) == [record, NoMatch(probe="grep")]


def test_stream_ending_early_is_peer_exited() -> None:
    """A stream that stops before its end envelope yields PeerExited, not a coded Failure."""
    record = FC.PROV_TIMEOUT.failure(surface="llm.complete", params={"provider": "OpenAI"})
    items = list(read_envelopes(io.BytesIO(encode(record) + b"\n"), peer="core"))
    assert items[0] == record
    assert isinstance(items[1], PeerExited)
    assert items[1].peer == "core"


def test_stream_cut_mid_envelope_is_peer_exited() -> None:
    """A last line cut off mid-envelope yields PeerExited, never a decode error."""
    record = FC.PROV_TIMEOUT.failure(surface="llm.complete", params={"provider": "OpenAI"})
    items = list(read_envelopes(io.BytesIO(encode(record)[:40])))
    assert len(items) == 1
    assert isinstance(items[0], PeerExited)
    assert "mid-envelope" in items[0].reason


def test_stream_bad_line_names_its_line() -> None:
    """A complete but malformed line is an EnvelopeError naming the line number."""
    with pytest.raises(EnvelopeError, match="line 2: "):
        list(read_envelopes([encode_end()[:0] + b"\n", b"{oops}\n"]))


def test_crashed_peer_process_over_a_real_pipe() -> None:
    """A child process that writes one failure and dies is observed as PeerExited."""
    child = textwrap.dedent("""
        import os, sys
        from failcode import FC
        from failcode.record._envelope import encode
        f = FC.OS_KILLED.failure(surface="core", params={"program": "core", "signal": 9})
        sys.stdout.buffer.write(encode(f) + b"\\n")
        sys.stdout.flush()
        os._exit(3)
    """)
    with subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        items = list(read_envelopes(process.stdout, peer="core"))
    assert items[0].code == "FC-OS-005"  # type: ignore[union-attr]
    assert isinstance(items[1], PeerExited)


def test_a_session_end_says_how_in_triage_words() -> None:
    """How a session ended is one of triage's statuses; anything else is refused, naming the
    value and what is expected."""
    with pytest.raises(ValueError, match=r"SessionEnded.status='failed': expected one of "
                                         r"submitted, provider_error"):
        SessionEnded(status="failed", by="x hook")
    with pytest.raises(EnvelopeError, match=r"invalid session_ended body: SessionEnded.status="
                                            r"'done': expected one of"):
        decode(b'{"failcode": 1, "type": "session_ended", "body": {"status": "done", '
               b'"by": "x"}}\n')
