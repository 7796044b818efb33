"""Harbor trials: ATIF trajectories (``agent/trajectory.json``) and trial results (``result.json``).

Rules (about the format and the tool: Harbor's ATIF models, ``schema_version`` ``ATIF-v1.x``, and
its ``TrialResult``; Harbor converts each agent's own log into ATIF, so a result's text is the
underlying agent's):

- Detection: a JSON object whose first 64 KiB hold ``"schema_version"`` with an ``ATIF-v``
  value (a trajectory), or ``"trial_name"`` and ``"trial_uri"`` (a trial result). Read before
  the agents' own formats: a trajectory of mini-swe-agent names it.
- A trajectory is one session: ``session_id``, ``agent`` {``name``, ``version``,
  ``model_name``}, ``steps`` [{``step_id``, ``source`` user/agent/system, ``message``,
  ``tool_calls`` [{``tool_call_id``, ``function_name``, ``arguments``}], ``observation``
  {``results`` [{``source_call_id``, ``content``}]}}]. A step of failcode is one tool call with
  its observation result (the result's ``source_call_id`` names the call), numbered from 0 in
  file order; a call without a result (a run cut off) is no step. A result without a
  ``source_call_id`` (Harbor's mini-swe-agent converter writes none) is the result of the
  step's next call that has none yet, in order; one left over is no step. Subagent steps
  belong to the session they are in.
- A result in mini-swe-agent's observation template (``<returncode>N</returncode>``, after an
  ``<exception>`` when the command did not finish) is read by mini-swe-agent's rules
  (:mod:`~failcode.triage.readers._mini_swe_agent`).
- A result is read as the underlying agent wrote it, by Claude Code's rules
  (:mod:`~failcode.triage.readers._claude_code`): the ``Exit code N`` line, a timeout, a refusal, a
  person's rejection or interrupt, other tools' errors as rejected actions. Harbor's Claude Code
  converter keeps the agent's own tool result in the step's
  ``extra.tool_result_metadata.raw_tool_result`` (and Claude Code's ``toolUseResult`` as
  ``tool_use_result``): that is read when its ``tool_use_id`` is the call's. Otherwise the
  result's ``content`` is read, without the sections the converter appends to it
  (``[stdout]``, ``[stderr]``, ``[exit_code] N``, ``[interrupted]``, ``[is_image]``,
  ``[metadata] {...}``, and ``[error] tool reported failure``, which marks an error result, as
  does ``extra.tool_result_is_error``); ``[metadata]`` is read back as Claude Code's
  ``toolUseResult`` (its ``returnCodeInterpretation``), ``[exit_code] N`` as the status when
  the text has no ``Exit code`` line. A shell tool is ``Bash``, ``bash``, ``terminal``,
  ``shell``, ``run_shell_command``, ``exec_command``, ``execute_bash`` or any call whose
  arguments hold ``command`` (``cmd``, ``keystrokes``): its command is that argument.
- Files written (``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` arguments) are
  :class:`~failcode.triage._events.Wrote`, as for Claude Code.
- Time: each step's ``timestamp`` (ISO-8601).
- How the session ended: from the trial's ``result.json`` beside the ``agent/`` folder when it
  is there: ``exception_info.exception_type`` ``AgentTimeoutError`` is Harbor stopping the
  agent at its time limit (``timeout``, no failure of a step), a context or output length
  exceeded is ``limit``; any other exception is the harness failing (its type, message and
  traceback, source ``harness``). A result without an exception whose ``agent_execution`` has
  a ``finished_at`` is the agent's run returning on its own (Harbor waits for the agent to
  exit): ``submitted``. Without the file: the last main-chain agent step that answers with no
  tool call (text, or ``extra.stop_reason`` ``end_turn``) is the final answer (``submitted``),
  else ``unknown``.
- The verifier's grade (the session's ``verdict`` and ``reward``, never a failure of a step),
  by Harbor's own rules (``harbor.models.trial``, 0.25.0): the primary reward is
  ``verifier_result.rewards["reward"]``, else the only reward; it measures the agent only when
  every exception the trial recorded (its own and its ``step_results``') is one Harbor's error
  policy grades after (the agent's budget ran out, or it refused the task). A valid reward of
  1 or more is ``passed``, 0 or less ``failed``, between ``partial``; no valid reward is
  ``ungraded``; no verifier result and no exception, no verdict. A task the verifier failed
  is a failed ending even when every step succeeded.
- A ``result.json`` with no ``agent/trajectory.json`` beside it is the trial's session of
  its own, of no step, ending as above (its exception; else ``submitted`` when the agent's run
  finished, ``unknown`` when it never did). With a trajectory beside it, it is read with the
  trajectory: walking a folder leaves it out (counted among the skipped files), and named on
  its own it is FC-DATA-002 naming a Harbor trial result.
- The model is ``agent.model_name``, the agent's version ``agent.version``; the session's name
  is the trial's name (``result.json``'s ``trial_name``), else ``session_id``.
- Cost: the session's ``recorded_usd`` is the trajectory's ``final_metrics.total_cost_usd``
  (ATIF's ``FinalMetrics``), else the trial result's ``agent_result.cost_usd`` (Harbor's
  ``AgentContext``); null or 0 (nothing priced) is none. A total of the session, never a
  step's.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    ErrorText,
    Event,
    InputError,
    SessionEnd,
    SessionStart,
)
from failcode.triage.readers._claude_code import ClaudeCodeReader, _writes
from failcode.triage.readers._jsonstream import JsonStream, loads
from failcode.triage.readers._mini_swe_agent import (
    MiniSweAgentReader,
    session_end_error,
)
from failcode.triage.readers._text import as_dict, as_list, as_str, iso_time, recorded_total

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["AtifReader", "read_with_trajectory"]

_SHELL_TOOLS: Final = frozenset({"Bash", "bash", "terminal", "shell", "run_shell_command",
                                 "exec_command", "execute_bash", "bash_command"})
_COMMAND_KEYS: Final = ("command", "cmd", "keystrokes")
_FAILED_MARK: Final = "[error] tool reported failure"
_APPENDED: Final = lazy(r"(?:^|\n\n)\[(?:stdout|stderr)\]\n|(?:^|\n\n|\n)\[(?:exit_code|interrupted"
                        r"|is_image|metadata)\] |(?:^|\n\n)\[error\] tool reported failure\s*$")
_METADATA: Final = lazy(r"^\[metadata\] (\{.*\})$", re.MULTILINE)
_EXIT_SECTION: Final = lazy(r"^\[exit_code\] (-?\d+)$", re.MULTILINE)
_EXIT_LINE: Final = lazy(r"^(?:Error: )?Exit code -?\d+")
_MINI_OBSERVATION: Final = lazy(r"^\s*(?:<exception>(.*?)</exception>\s*)?<returncode>\s*-?\d+"
                                r"\s*</returncode>", re.DOTALL)
_TIMEOUT_TYPES: Final = frozenset({"AgentTimeoutError"})
# Harbor's own policy (harbor.models.trial.error_policy, 0.25.0): the exceptions after which
# the agent "produced the trajectory on its own, so its reward is a valid measurement" (its
# budget ran out, or it refused the task); after any other the reward measures nothing.
_LIMIT_TYPES: Final = frozenset({"ContextWindowExceededError", "OutputTokenExceededError",
                                 "ContextLengthExceededError", "OutputLengthExceededError"})
_REWARD_VALID_TYPES: Final = _TIMEOUT_TYPES | _LIMIT_TYPES | {  # the agent's budget, and
    "AgentSafetyRefusalError", "ContentPolicyViolationError"}  # the agent refusing the task
_RESULT_MAX: Final = 4 * 1024 * 1024
_RESULT_KEYS: Final = frozenset({"trial_name", "exception_info", "agent_info", "agent_result",
                                 "config",
                                 "agent_execution", "verifier_result", "step_results"})


def _content(value: object) -> str:
    """A result's text: a string, or the text parts of a list (ATIF 1.6's content parts)."""
    if isinstance(value, list):
        return "\n".join(as_str(as_dict(part).get("text")) for part in value)
    return as_str(value)


def _command(name: str, arguments: dict[str, Any]) -> str:
    for key in _COMMAND_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            return " ".join(value)  # an argv list (exec_command's cmd)
    return ""


def _own_result(call_id: str, content: str, flagged: bool) -> tuple[dict[str, Any],
                                                                     dict[str, Any]]:
    """The agent's own tool result (a Claude Code ``tool_result`` block) and its details from a
    result's text: the text before the sections Harbor's converter appends; ``[error] tool
    reported failure`` (or ``flagged``) marks an error; ``[metadata] {...}`` holds the
    details' other fields, ``[exit_code] N`` the status the details held."""
    failed = flagged or content.rstrip().endswith(_FAILED_MARK)
    found = _APPENDED.search(content)
    text = content[:found.start()] if found else content
    detail: dict[str, Any] = {}
    meta = _METADATA.search(content, found.start() if found else len(content))
    if meta is not None:
        with contextlib.suppress(ValueError):
            detail = as_dict(loads(meta.group(1)))
    code = _EXIT_SECTION.search(content, found.start() if found else len(content))
    if code is not None and not _EXIT_LINE.match(text):
        text = f"Exit code {code.group(1)}\n{text}"
    return {"tool_use_id": call_id, "content": text, "is_error": failed}, detail


def _trial_result(path: Path) -> dict[str, Any] | None:
    """The trial's ``result.json`` beside the ``agent/`` folder of ``path``, if readable."""
    if path.parent.name != "agent" or not path.is_file():
        return None
    result = path.parent.parent / "result.json"
    try:
        if not result.is_file() or result.stat().st_size > _RESULT_MAX:
            return None
        value = json.loads(result.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _trial_end(steps: int, name: str | None, result: dict[str, Any], *,
               finished: bool) -> SessionEnd:
    """How a trial ended: its exception, else ``submitted`` when the agent's run finished
    (``unknown`` when it did not); with the verifier's verdict (:func:`_verdict`)."""
    verdict, reward = _verdict(result)
    info = as_dict(result.get("exception_info"))
    type_name = as_str(info.get("exception_type"))
    if not type_name:
        return SessionEnd(steps, "submitted" if finished else "unknown", name,
                          verdict=verdict, reward=reward)
    if type_name in _TIMEOUT_TYPES or type_name in _LIMIT_TYPES:
        status = "timeout" if type_name in _TIMEOUT_TYPES else "limit"
        return SessionEnd(steps, status, name, verdict=verdict, reward=reward)
    message = as_str(info.get("exception_message")) or type_name
    traceback = as_str(info.get("exception_traceback")) or None
    error = session_end_error(type_name, f"{type_name}: {message}", traceback)
    return SessionEnd(steps, "unknown", name,
                      ErrorText(None, "harness", type_name, message, traceback,
                                evidence=error.message[:200]),
                      verdict=verdict, reward=reward)


def _verdict(result: dict[str, Any]) -> tuple[str | None, float | None]:
    """The verifier's grade of a trial, by Harbor's own rules: the primary reward is
    ``rewards["reward"]``, else the only reward; it is valid when every exception the trial
    recorded (its own and its steps') is one after which Harbor grades the agent
    (:data:`_REWARD_VALID_TYPES`). A valid reward of 1 or more is ``passed``, of 0 or less
    ``failed``, between them ``partial``; no valid reward is ``ungraded``. A trial with no
    verifier result and no exception has no verdict (None: the verifier was off or never
    ran)."""
    rewards = as_dict(as_dict(result.get("verifier_result")).get("rewards"))
    steps = as_list(result.get("step_results"))
    exceptions = [as_dict(result.get("exception_info")),
                  *(as_dict(as_dict(step).get("exception_info")) for step in steps)]
    types = [as_str(info.get("exception_type")) for info in exceptions]
    raised = [name for name in types if name]
    if not rewards and not raised:
        return None, None
    value = rewards.get("reward") if "reward" in rewards else (
        next(iter(rewards.values())) if len(rewards) == 1 else None)
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or any(name not in _REWARD_VALID_TYPES for name in raised)):
        return "ungraded", None
    reward = float(value)
    if reward >= 1:
        return "passed", reward
    return ("failed" if reward <= 0 else "partial"), reward


def _result_total(result: dict[str, Any]) -> float | None:
    """What a trial result records the agent's run cost (``agent_result.cost_usd``)."""
    return recorded_total(as_dict(result.get("agent_result")).get("cost_usd"))


def read_with_trajectory(path: Path) -> bool:
    """``path`` is a Harbor trial's ``result.json`` whose trajectory lies beside it
    (``agent/trajectory.json``): it is read with the trajectory, not as an input."""
    return path.name == "result.json" and (path.parent / "agent" / "trajectory.json").is_file()


class AtifReader:
    """Reader for Harbor's ATIF trajectories and trial results."""

    name = "harbor-atif"

    def sniff(self, head: bytes) -> bool:
        """A JSON object with an ATIF ``schema_version``, or a Harbor trial result."""
        if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
            return False
        return ((b'"schema_version"' in head and b'"ATIF-v' in head)
                or (b'"trial_name"' in head and b'"trial_uri"' in head))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """A trajectory's steps as they stream; a trial result as a whole (it is small)."""
        path = Path(getattr(stream, "name", None) or label)
        doc = JsonStream(stream)
        state = _Trajectory()
        result_fields: dict[str, Any] = {}
        started = False
        for key in doc.members():
            if key == "steps" and doc.peek() == "[":
                if not started:
                    started = True
                    yield SessionStart(None)
                for item in doc.items():
                    if isinstance(item, dict):
                        yield from state.step(item)
            elif key in {"session_id", "agent", "schema_version", "final_metrics",
                         *_RESULT_KEYS}:
                value = doc.value()
                if key in _RESULT_KEYS:
                    result_fields[key] = value
                else:
                    setattr(state, key, value)
            else:
                doc.skip()
        doc.end()
        if not isinstance(state.schema_version, str):
            yield from self._result_alone(path, result_fields)
            return
        if not started:
            yield SessionStart(None)
        agent = as_dict(state.agent)
        yield About(as_str(agent.get("model_name")) or None, as_str(agent.get("version")) or None)
        trial = _trial_result(path)
        name = ((as_str(trial.get("trial_name")) if trial else "")
                or as_str(state.session_id) or None)
        finished = state.answered or bool(
            trial and as_dict(trial.get("agent_execution")).get("finished_at"))
        ended = (_trial_end(state.steps, name, trial, finished=finished) if trial
                 else SessionEnd(state.steps, "submitted" if finished else "unknown", name))
        total = (recorded_total(as_dict(state.final_metrics).get("total_cost_usd"))
                 or _result_total(trial or {}))
        yield replace(ended, recorded_usd=total)

    @staticmethod
    def _result_alone(path: Path, result: dict[str, Any]) -> Iterator[Event]:
        if path.is_file() and read_with_trajectory(path):
            raise InputError("FC-DATA-002", "a Harbor trial result: its session is read from "
                             "the trajectory beside it (agent/trajectory.json)")
        name = as_str(result.get("trial_name")) or None
        # no exception: the agent's run returned (Harbor waits for it) or never ran; a trial
        # kept without its trajectory is still a session, of no step
        finished = bool(as_dict(result.get("agent_execution")).get("finished_at"))
        ended = _trial_end(0, name, result, finished=finished)
        if ended.error is None:
            ended = replace(ended, said=True)
        ended = replace(ended, recorded_usd=_result_total(result))
        agent = as_dict(result.get("agent_info"))
        model = (as_str(as_dict(agent.get("model_info")).get("name"))
                 or as_str(as_dict(as_dict(result.get("config")).get("agent")).get("model_name")))
        yield SessionStart(name)
        yield About(model or None, as_str(agent.get("version")) or None)
        yield ended


class _Trajectory:
    """What reading a trajectory's steps keeps."""

    def __init__(self) -> None:
        self.schema_version: object = None
        self.session_id: object = None
        self.agent: object = None
        self.final_metrics: object = None
        self.steps = 0
        self.answered = False
        self.uses: dict[str, tuple[str, dict[str, Any]]] = {}

    def step(self, item: dict[str, Any]) -> Iterator[Event]:
        stamp = iso_time(item.get("timestamp"))
        calls = [c for c in as_list(item.get("tool_calls")) if isinstance(c, dict)]
        blocks = []
        for call in calls:
            name = as_str(call.get("function_name"))
            arguments = as_dict(call.get("arguments"))
            command = _command(name, arguments)
            shell = name in _SHELL_TOOLS or bool(command)
            self.uses[str(call.get("tool_call_id"))] = (
                ("Bash", {**arguments, "command": command}) if shell else (name, arguments))
            blocks.append({"type": "tool_use", "name": name, "input": arguments})
        yield from _writes(blocks)
        extra = as_dict(item.get("extra"))
        if item.get("source") == "agent" and not extra.get("is_sidechain"):
            self.answered = not calls and (bool(as_str(item.get("message")).strip())
                                           or extra.get("stop_reason") == "end_turn")
        metadata = as_dict(extra.get("tool_result_metadata"))
        raw = as_dict(metadata.get("raw_tool_result"))
        unpaired = [str(call.get("tool_call_id")) for call in calls]
        where = f"step_id {item.get('step_id')}"
        for result in as_list(as_dict(item.get("observation")).get("results")):
            if not isinstance(result, dict):
                continue
            if result.get("source_call_id") is None:  # paired by order (mini-swe-agent's)
                if not unpaired:
                    continue  # no call left: a note, a format error fed back
                call_id = unpaired.pop(0)
            else:
                call_id = str(result.get("source_call_id"))
                if call_id in unpaired:
                    unpaired.remove(call_id)
            if call_id not in self.uses:
                continue
            text = _content(result.get("content"))
            mini = _MINI_OBSERVATION.match(text)
            if mini is not None:  # mini-swe-agent's observation template, kept as it was
                message = {"content": text, "extra": {"exception_info": mini.group(1)}
                           if mini.group(1) else {}}
                event: Event | None = MiniSweAgentReader._step(
                    self.steps, as_str(self.uses[call_id][1].get("command")), message, where)
            else:
                if raw and str(raw.get("tool_use_id")) == call_id:
                    block, detail = raw, as_dict(metadata.get("tool_use_result"))
                else:
                    block, detail = _own_result(call_id, text,
                                                extra.get("tool_result_is_error") is True)
                event = ClaudeCodeReader._result(self.steps, block, self.uses, stamp,
                                                 detail=detail, where=where)
            if event is not None:
                yield event
            self.steps += 1
            self.answered = False

