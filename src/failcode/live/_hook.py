"""``failcode hook AGENT EVENT``: one hook call, from the agent's JSON on stdin to its answer.

Rules:

- A hook never breaks the agent. Whatever goes wrong inside (an input that is not the
  agent's JSON, a history file that is locked, full or damaged, a configuration that does not
  load, a bug), the answer is nothing and exit status 0; what went wrong is one line of
  failcode's own log (``hook.log`` beside the history, :func:`failcode.live._history.state_dir`,
  at most 1 MiB: it starts again when full). The whole call is bounded by ``[live]
  timeout_s`` (default 2 s; a timer interrupts it), under every agent's own hook timeout.
- The input is at most :data:`MAX_INPUT` bytes (a longer one is answered with nothing).
- A step is classified as triage classifies it (:func:`classify_command`, the reader's own
  rules for the tool result); it is recorded in the session's history; a failed step is then
  placed in the session's loops by triage's loop rule, :func:`failcode.decide` decides with
  that history (the loop's earlier steps are the signature's earlier failures), and
  :func:`failcode.live._advice.advise` picks the answer.
- The configuration is the project's (``failcode.toml`` or ``[tool.failcode]`` in the
  working directory the agent reports), else failcode's defaults.
- With ``FAILCODE_URL`` and ``FAILCODE_KEY`` set (and ``[live] report``), each failure (and
  each outcome triage would report: a probe that found nothing, a refused action) is also
  sent to that service as an event of the agent's session, at its step, with the call's own
  id, by a process of its own started without waiting for it (:mod:`failcode.live._send`).
  A session's start and end are sent too (``session.started``, ``session.ended`` with how
  the agent says it ended). The start is posted before the hook answers (at most 1 s): the
  service knows before the session's first call that the hooks report its calls, and drops
  the agent's own export of them (``calls: hooks``). Where a tool result has no exit status
  (Codex: :attr:`AgentHooks.statuses`) the export is kept for the calls the hooks read as
  successes, and each failure is posted before the hook answers too, so that the hook's
  report, with its step, is the one stored, not the export's of the same call.

An agent runs the hook before and after every tool call and waits for it, so what a call does
not need is imported only when it is needed (the classification for a result, the
configuration for a project that has a file): the functions import it inside.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode.live._advice import Advice, Verdict, advise
from failcode.live._agents import AGENTS
from failcode.live._history import History, state_dir

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import BinaryIO

    from failcode.events._event import Event
    from failcode.live._agents import AgentHooks, ToolCall
    from failcode.live._history import Step
    from failcode.policy._decide import Decision, Policy
    from failcode.record._failure import Failure
    from failcode.record._outcomes import NonErrorOutcome

__all__ = ["MAX_INPUT", "HookTimeoutError", "hook_answer", "hook_main", "run_hook", "step_failure",
           "step_result"]

MAX_INPUT: Final = 32 * 1024 * 1024
LOG_MAX: Final = 1024 * 1024
_DEFAULTS: Final = {"tell_after": 2, "stop_for_person": True, "timeout_s": 2.0, "report": True}


class HookTimeoutError(Exception):
    """The hook call ran past its time bound."""


def _timers() -> bool:
    """Whether a real-time timer can interrupt this thread (the main one, on Unix)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (a real-time timer; nothing where there is none,
    or off the main thread, where signals cannot be handled)."""
    if not _timers():
        yield
        return

    def expired(_signum: int, _frame: object) -> None:
        raise HookTimeoutError(f"the hook ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _log(line: str) -> None:
    """One line of failcode's own hook log (never raising)."""
    with contextlib.suppress(OSError):
        path = state_dir() / "hook.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "w" if path.exists() and path.stat().st_size > LOG_MAX else "a"
        with path.open(mode, encoding="utf-8") as out:
            out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")


def _settings(cwd: str | None) -> tuple[dict[str, Any], Policy]:
    """The ``[live]`` settings and the decision policy of the project at ``cwd``."""
    from failcode.policy._decide import Policy  # noqa: PLC0415

    settings = dict(_DEFAULTS)
    if not cwd or not any((Path(cwd) / name).is_file()
                          for name in ("failcode.toml", "pyproject.toml")):
        return settings, Policy()
    from failcode.policy._config import find_config, load_config  # noqa: PLC0415

    try:
        path = find_config(cwd)
        config = load_config(path) if path is not None else None
    except Exception as exc:  # noqa: BLE001 - a bad config costs the hook nothing
        _log(f"config: {type(exc).__name__}: {str(exc)[:300]}")
        return settings, Policy()
    if config is None:
        return settings, Policy()
    settings.update(config.values.get("live") or {})
    return settings, config.policy


def step_result(found: ToolCall) -> tuple[Failure | NonErrorOutcome | None, str]:
    """What the step was, as triage reads it: a failure, an outcome (a probe that found
    nothing, a refused action) or nothing; and where it came from."""
    from failcode.triage._events import Command, ErrorText, Rejected  # noqa: PLC0415

    event = found.event
    if isinstance(event, Command):
        from failcode.triage.analysis._step import classify_command  # noqa: PLC0415

        result, _masked = classify_command(event)
        return result, "command"
    if isinstance(event, ErrorText):
        from failcode.triage.analysis._step import classify_error  # noqa: PLC0415

        return classify_error(event), event.source
    if isinstance(event, Rejected):
        from failcode.record._outcomes import RejectedAction  # noqa: PLC0415
        from failcode.signature._redact import redact  # noqa: PLC0415

        return RejectedAction(action=redact(event.action)[:200] or "?",
                              reason=redact(event.reason)[:300] or "?"), "tool"
    return None, "tool"


def step_failure(found: ToolCall) -> tuple[Failure | None, str]:
    """The step's failure, if it failed, and where it came from."""
    from failcode.record._failure import Failure  # noqa: PLC0415

    result, source = step_result(found)
    return (result if isinstance(result, Failure) else None), source


def _loop_count(step: int, failed: list[Step]) -> tuple[bool, int]:
    """Whether ``step`` is in a loop by triage's rule, and how many of the loop's steps are
    at or before it."""
    from failcode.triage._result import FailureEntry  # noqa: PLC0415
    from failcode.triage.analysis._loops import find_loops  # noqa: PLC0415

    entries = [FailureEntry(s.step, "command", "", s.failure, 1, None) for s in failed]
    for loop in find_loops(entries):
        if step in loop.steps:
            return True, sum(1 for s in loop.steps if s <= step)
    return False, 1


def hook_answer(hooks: AgentHooks, event: str, data: Mapping[str, Any], *,
                history: History, settings: Mapping[str, Any], policy: Policy,
                env: Mapping[str, str]) -> tuple[Advice, ToolCall]:
    """The advice for one hook input (raising on any problem: :func:`run_hook` answers
    nothing then)."""
    from failcode.policy._decide import History as Seen  # noqa: PLC0415
    from failcode.policy._decide import decide  # noqa: PLC0415

    found = hooks.read(event, data)
    if found.phase == "before":
        held = history.release(hooks.name, found.session)
        return (Advice(Verdict.SILENT, "before") if held is None
                else Advice(Verdict.STOP, "person", held)), found
    reporting = bool(settings["report"] and env.get("FAILCODE_URL") and env.get("FAILCODE_KEY"))
    if found.phase != "after":
        if found.phase == "start":
            history.prune()
        if reporting and found.phase in ("start", "end"):
            _send_session(found, hooks, env, settings)
        return Advice(Verdict.SILENT, "session"), found
    from failcode.record._failure import Failure  # noqa: PLC0415

    result, source = step_result(found)
    failure = result if isinstance(result, Failure) else None
    recorded = history.record(hooks.name, found.session, found.call, failure)
    if recorded is None:
        return Advice(Verdict.SILENT, "seen"), found
    step, failed = recorded
    if not isinstance(result, Failure):
        if reporting and result is not None:  # a probe that found nothing, a refused action
            _send(_outcome_event(result, found, step, who=_who(hooks, data)), env,
                  now=not hooks.statuses, settings=settings)
        return Advice(Verdict.SILENT, "success"), found
    failure = result
    looping, count = _loop_count(step, failed)
    seen = Seen(signatures={failure.signature: count - 1}) if looping else Seen()
    decision = decide(failure, seen, policy)
    from failcode.signature._redact import redact  # noqa: PLC0415

    # the command as the model wrote it, with the secrets the redaction rules know replaced:
    # the message is shown to the person too, and kept in the agent's transcript
    advice = advise(failure, decision, action=redact(found.action), count=count,
                    looping=looping,
                    tell_after=int(settings["tell_after"]),
                    stop_for_person=bool(settings["stop_for_person"]))
    if reporting:
        _send(_failure_event(failure, decision, found, step, source=source,
                             who=_who(hooks, data)),
              env, now=not hooks.statuses, settings=settings)
    if advice.verdict is Verdict.STOP and event not in hooks.can_stop:
        history.hold(hooks.name, found.session, advice.text)
        advice = Advice(Verdict.TELL, advice.row, advice.text, advice.count)
    return advice, found


def _who(hooks: AgentHooks, data: Mapping[str, Any]) -> dict[str, str]:
    """The agent, and its version where the agent writes it for the hook to read."""
    version = hooks.version(data) if hooks.version is not None else None
    return {"agent": hooks.name, **({"agent_version": version} if version else {})}


def _failure_event(failure: Failure, decision: Decision, found: ToolCall, step: int, *,
                   source: str, who: Mapping[str, str]) -> Event:
    """The failure's event: the call's own id (a mirror of it is stored once), the agent."""
    from failcode.events._event import failure_event  # noqa: PLC0415
    from failcode.events._ids import call_event_id  # noqa: PLC0415

    name = "command.failed" if source == "command" else "tool.failed"
    context = {**failure.context, **who}
    return failure_event(msgspec.structs.replace(failure, context=context), event=name,
                         session=found.session, step=step, source=f"{who['agent']} hook",
                         decision=decision,
                         event_id=call_event_id(found.session, found.call) if found.call
                         else None)


def _outcome_event(outcome: NonErrorOutcome, found: ToolCall, step: int, *,
                   who: Mapping[str, str]) -> Event:
    from failcode.events._event import outcome_event  # noqa: PLC0415
    from failcode.events._ids import call_event_id  # noqa: PLC0415

    context = {**outcome.context, **who}
    return outcome_event(msgspec.structs.replace(outcome, context=context),
                         session=found.session, step=step, source=f"{who['agent']} hook",
                         event_id=call_event_id(found.session, found.call) if found.call
                         else None)


def _send_session(found: ToolCall, hooks: AgentHooks, env: Mapping[str, str],
                  settings: Mapping[str, Any]) -> None:
    """Tell the service a session started (posted at once; ``calls: hooks`` when the hooks
    see every failed call, :attr:`AgentHooks.statuses`: the service then takes the session's
    tool calls from the hooks, never from the export's record of them, whenever it arrives)
    or how it ended (sent like a failure)."""
    from failcode.events._event import outcome_event  # noqa: PLC0415
    from failcode.events._ids import call_event_id  # noqa: PLC0415
    from failcode.record._outcomes import SessionEnded, SessionStarted  # noqa: PLC0415

    by = f"{hooks.name} hook"
    context = {"agent": hooks.name}
    if found.phase == "start":
        calls = {"calls": "hooks"} if hooks.statuses else {}
        started = outcome_event(SessionStarted(by=by, context={**context, **calls}),
                                session=found.session, source=by,
                                event_id=call_event_id(found.session, "session.started"))
        _send(started, env, now=True, settings=settings)
        return
    ended = SessionEnded(status=found.ended or "unknown", by=by, reason=found.reason,
                         context=context)
    _send(outcome_event(ended, session=found.session, source=by), env)


def _send(event: Event, env: Mapping[str, str], *, now: bool = False,
          settings: Mapping[str, Any] = _DEFAULTS) -> None:
    """Put ``event`` in the outbox and start a sender for it, without waiting; ``now``: post
    it first and wait for the answer (at most 1 s, half the hook's time bound), queueing it
    only when that fails."""
    from failcode.live._send import outbox, post_now  # noqa: PLC0415

    if now and post_now(event.to_json() + b"\n", env["FAILCODE_URL"], env["FAILCODE_KEY"],
                        timeout_s=min(1.0, float(settings["timeout_s"]) / 2)):
        return

    box = outbox()
    box.mkdir(parents=True, exist_ok=True)
    staged = box / f".{event.event_id}.tmp"
    staged.write_bytes(event.to_json() + b"\n")
    staged.replace(box / f"{event.event_id}.json")
    # our own interpreter and module, never waited for
    subprocess.Popen(
        [sys.executable, "-m", "failcode.live._send"], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env=dict(env))


def run_hook(agent: str, event: str, stdin: BinaryIO, *,
             env: Mapping[str, str] | None = None) -> str:
    """Run one hook call: read the input, answer (what to print on stdout; empty: nothing).
    Never raises (see the module's rules)."""
    started = time.monotonic()
    env = os.environ if env is None else env
    hooks = AGENTS.get(agent)
    if hooks is None:
        _log(f"{agent} {event}: not an agent failcode has hooks for")
        return ""
    try:
        with _bounded(float(_DEFAULTS["timeout_s"])):
            raw = stdin.read(MAX_INPUT + 1)
            if len(raw) > MAX_INPUT:
                _log(f"{agent} {event}: input over {MAX_INPUT} bytes, answered nothing")
                return ""
            data = json.loads(raw)
            if not isinstance(data, dict):
                _log(f"{agent} {event}: input is not a JSON object")
                return ""
            cwd = data.get("cwd")
            settings, policy = _settings(cwd if isinstance(cwd, str) else None)
            left = float(settings["timeout_s"]) - (time.monotonic() - started)
            if left <= 0:
                raise HookTimeoutError("no time left after reading the configuration")
            if _timers():  # the project's own bound from here on
                signal.setitimer(signal.ITIMER_REAL, left)
            with History(state_dir() / "live.db", timeout_s=min(left, 1.0)) as history:
                advice, found = hook_answer(hooks, event, data, history=history,
                                            settings=settings, policy=policy, env=env)
            answer = hooks.answer(event, advice)
    except Exception as exc:  # noqa: BLE001 - never break the agent
        _log(f"{agent} {event}: {type(exc).__name__}: {str(exc)[:300]}")
        return ""
    elapsed = (time.monotonic() - started) * 1000
    if advice.verdict is not Verdict.SILENT or advice.row not in ("success", "session", "before"):
        _log(f"{agent} {event} session={found.session} row={advice.row} "
             f"verdict={advice.verdict.value} count={advice.count} {elapsed:.0f} ms")
    return answer


def hook_main(agent: str, event: str) -> int:
    """``failcode hook AGENT EVENT``: answer on stdout; the exit status is always 0."""
    answer = run_hook(agent, event, sys.stdin.buffer)
    if answer:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()
    return 0
