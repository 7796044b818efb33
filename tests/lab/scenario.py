"""Scenarios: what the scripted model makes an agent do, and what a careful triage must report.

A scenario is one TOML file in ``tests/lab/scenarios/``; adding one is adding a file. Its
fields:

- ``about``: one line saying what it covers.
- ``files``: a table of project files (path -> text) written before the agent starts, and
  ``setup``: a shell script run in the project after that (git history, a broken checkout).
- ``[[step]]``: the actions, in order. One of ``run`` (a shell command), ``edit`` (replace
  ``old`` by ``new`` in ``path`` with the agent's edit tool), ``read`` (``path`` with the
  agent's read tool). ``exit`` is the command's true exit status (ground truth by
  construction: the test suite runs every scenario's commands itself and checks it), and
  ``output = false`` says it prints nothing. ``refused = true`` says the agent is run with a
  permission rule that refuses this command, so it never runs (the agents that cannot be
  told so skip the scenario); its ``exit`` is still what the command exits with when run.
  ``faults`` are provider faults answered, in order, to the requests for this step before the
  step's own answer (``status``, ``retry_after``, ``count`` (``0`` means forever: a fatal
  fault), ``mode`` one of ``http``, ``malformed``, ``hang``). ``expect`` is what a careful
  triage reports for the step: ``failure = {kind, category, class}``, ``outcome =
  "no_match" | "rejected_action"``, or nothing.
- ``instead``: what a model that read failcode's instruction for the step's failure does in
  its place (``failcode triage --fix-file`` wrote it into the agent's instruction file, which
  the agent sends with its requests): ``when``, the words of the instruction it recognizes,
  and ``run``, ``exit``, ``output``, ``expect`` as a step has. The scripted model plays it
  only when told to obey (:class:`tests.lab.stub.ScriptedModel`) and a request carries
  failcode's block with those words: a before/after run of the same scenario.
- ``loops``: lists of step indexes at which one failure repeats (a loop); ``[]`` says that
  the steps, failing differently, are progress and no loop may be reported.
- ``ended``: how the session ended (``submitted``, ``provider_error``, ``limit``,
  ``timeout``), and ``ended_kind`` the kind of the failure that ended it, if any.
- ``max_turns``: the agent's turn limit for the run (the agents that have one).
- ``agents``: restrict the scenario to these agents (the others lack the tool it needs).

A step's index is its place among the actions the agent took (tool calls; for an agent
without tools, commands it ran), from 0: the step numbering every reader must follow.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

SCENARIOS: Final = Path(__file__).parent / "scenarios"

ACTIONS: Final = ("run", "edit", "read")
FAULT_MODES: Final = ("http", "malformed", "hang")
ENDINGS: Final = ("submitted", "provider_error", "limit", "timeout")
OUTCOMES: Final = ("no_match", "rejected_action")
DEFAULT_FINAL: Final = "Done: the scripted steps are finished."


class ScenarioError(ValueError):
    """A scenario file that does not follow the format (names the file and the field)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """A provider fault answered instead of a step's response."""

    status: int = 500
    count: int = 1
    retry_after: str | None = None
    mode: str = "http"

    @property
    def fatal(self) -> bool:
        return self.count == 0


@dataclass(frozen=True, slots=True)
class Expect:
    """What a careful triage reports at one step."""

    kind: str | None = None
    category: str | None = None
    error_class: str | None = None
    outcome: str | None = None

    @property
    def failure(self) -> bool:
        return self.kind is not None


@dataclass(frozen=True, slots=True)
class Step:
    """One action of the script."""

    action: str
    command: str = ""
    path: str = ""
    old: str = ""
    new: str = ""
    exit: int | None = None
    output: bool = True
    timeout_s: float | None = None
    faults: tuple[Fault, ...] = ()
    expect: Expect = Expect()
    refused: bool = False
    instead: Instead | None = None

    @property
    def label(self) -> str:
        """The command, or the tool action, as a person would write it."""
        if self.action == "run":
            return self.command
        return f"{self.action} {self.path}"


@dataclass(frozen=True, slots=True)
class Instead:
    """What a model that obeys failcode's instruction does in place of a step."""

    when: str
    """Words of the instruction the model recognizes (it obeys only when it reads them)."""
    step: Step


@dataclass(frozen=True, slots=True)
class Scenario:
    """A script and its ground truth."""

    name: str
    about: str
    steps: tuple[Step, ...]
    files: dict[str, str] = field(default_factory=dict)
    setup: str = ""
    loops: tuple[tuple[int, ...], ...] = ()
    loops_declared: bool = False
    ended: str = "submitted"
    ended_kind: str | None = None
    final: str = DEFAULT_FINAL
    max_turns: int | None = None
    agents: tuple[str, ...] | None = None
    final_faults: tuple[Fault, ...] = ()

    def applies_to(self, agent: str) -> bool:
        return self.agents is None or agent in self.agents

    def obeyed(self) -> Scenario:
        """The scenario as a model that obeys every instruction plays it (each step with an
        ``instead`` replaced by it)."""
        steps = tuple(step.instead.step if step.instead is not None else step
                      for step in self.steps)
        return dataclasses.replace(self, steps=steps)

    @property
    def refused(self) -> tuple[str, ...]:
        """The commands the agent's permission rules must refuse (``refused = true``)."""
        return tuple(step.command for step in self.steps if step.refused)

    @property
    def fatal_step(self) -> int | None:
        """The step whose fault never ends (the run stops there), if any."""
        for index, step in enumerate(self.steps):
            if any(fault.fatal for fault in step.faults):
                return index
        return None


def _fail(path: Path, where: str, message: str) -> ScenarioError:
    return ScenarioError(f"{path.name}: {where}: {message}")


def _fault(path: Path, where: str, raw: Any) -> Fault:
    if not isinstance(raw, dict):
        raise _fail(path, where, f"a fault is a table, got {raw!r}")
    unknown = set(raw) - {"status", "count", "retry_after", "mode"}
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)}")
    mode = raw.get("mode", "http")
    if mode not in FAULT_MODES:
        raise _fail(path, where, f"mode {mode!r} is not one of {FAULT_MODES}")
    count = raw.get("count", 1)
    if not isinstance(count, int) or count < 0:
        raise _fail(path, where, f"count {count!r} is not an integer >= 0")
    retry_after = raw.get("retry_after")
    return Fault(status=int(raw.get("status", 500)), count=count,
                 retry_after=None if retry_after is None else str(retry_after), mode=mode)


def _expect(path: Path, where: str, raw: Any) -> Expect:
    if raw is None:
        return Expect()
    if not isinstance(raw, dict):
        raise _fail(path, where, f"expect is a table, got {raw!r}")
    if "failure" in raw:
        failure = raw["failure"]
        if not isinstance(failure, dict) or "kind" not in failure:
            raise _fail(path, where, "failure needs at least a kind")
        return Expect(kind=failure["kind"], category=failure.get("category"),
                      error_class=failure.get("class"))
    if "outcome" in raw:
        if raw["outcome"] not in OUTCOMES:
            raise _fail(path, where, f"outcome {raw['outcome']!r} is not one of {OUTCOMES}")
        return Expect(outcome=raw["outcome"])
    if raw:
        raise _fail(path, where, f"unknown expectation {sorted(raw)}")
    return Expect()


def _instead(path: Path, where: str, raw: Any, expect: Expect) -> Instead | None:
    if raw is None:
        return None
    where = f"{where} instead"
    if not isinstance(raw, dict):
        raise _fail(path, where, f"instead is a table, got {raw!r}")
    unknown = set(raw) - {"when", "run", "exit", "output", "expect"}
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)}")
    if not expect.failure:
        raise _fail(path, where, "only a step that expects a failure has an instruction to obey")
    when, command = raw.get("when"), raw.get("run")
    if not isinstance(when, str) or not when.strip():
        raise _fail(path, where, "when names the instruction's words the model obeys")
    if not isinstance(command, str) or not command.strip() or "exit" not in raw:
        raise _fail(path, where, "instead has a run command and its true exit status (exit = N)")
    return Instead(when, Step(action="run", command=command, exit=int(raw["exit"]),
                              output=bool(raw.get("output", True)),
                              expect=_expect(path, where, raw.get("expect"))))


def _step(path: Path, index: int, raw: Any) -> Step:
    where = f"step {index}"
    if not isinstance(raw, dict):
        raise _fail(path, where, "a step is a table")
    actions = [name for name in ACTIONS if name in raw]
    if len(actions) != 1:
        raise _fail(path, where, f"a step has exactly one of {ACTIONS}, got {actions}")
    action = actions[0]
    known = {"run", "edit", "read", "path", "old", "new", "exit", "output", "timeout_s",
             "faults", "expect", "refused", "instead"}
    unknown = set(raw) - known
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)}")
    faults = tuple(_fault(path, f"{where} fault {n}", f) for n, f in
                   enumerate(raw.get("faults", [])))
    expect = _expect(path, where, raw.get("expect"))
    if action == "run":
        if not isinstance(raw["run"], str) or not raw["run"].strip():
            raise _fail(path, where, "run is a non-empty command string")
        if "exit" not in raw:
            raise _fail(path, where, "a run step states its true exit status (exit = N)")
        return Step(action="run", command=raw["run"], exit=int(raw["exit"]),
                    output=bool(raw.get("output", True)), timeout_s=raw.get("timeout_s"),
                    faults=faults, expect=expect, refused=bool(raw.get("refused", False)),
                    instead=_instead(path, where, raw.get("instead"), expect))
    target = raw[action] if isinstance(raw[action], str) else raw.get("path", "")
    if not target:
        raise _fail(path, where, f"{action} names a path (e.g. {action} = \"src/a.py\")")
    return Step(action=action, path=target, old=raw.get("old", ""), new=raw.get("new", ""),
                faults=faults, expect=expect)


def load(path: Path) -> Scenario:
    """Read one scenario file; a mistake is a :class:`ScenarioError` naming file and field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path.name}: not TOML: {exc}") from None
    known = {"about", "setup", "files", "step", "loops", "ended", "ended_kind", "final",
             "max_turns", "agents", "final_faults"}
    unknown = set(raw) - known
    if unknown:
        raise _fail(path, "top level", f"unknown keys {sorted(unknown)}")
    if "about" not in raw:
        raise _fail(path, "top level", "about = \"...\" says what the scenario covers")
    steps = tuple(_step(path, n, s) for n, s in enumerate(raw.get("step", [])))
    if not steps:
        raise _fail(path, "top level", "a scenario has at least one [[step]]")
    ended = raw.get("ended", "submitted")
    if ended not in ENDINGS:
        raise _fail(path, "ended", f"{ended!r} is not one of {ENDINGS}")
    loops = tuple(tuple(int(i) for i in loop) for loop in raw.get("loops", []))
    for loop in loops:
        if any(not 0 <= i < len(steps) for i in loop) or len(loop) < 2:
            raise _fail(path, "loops", f"{list(loop)} is not two or more step indexes")
    agents = raw.get("agents")
    return Scenario(
        name=path.stem, about=raw["about"], steps=steps, files=dict(raw.get("files", {})),
        setup=raw.get("setup", ""),
        loops=loops, loops_declared="loops" in raw, ended=ended,
        ended_kind=raw.get("ended_kind"), final=raw.get("final", DEFAULT_FINAL),
        max_turns=raw.get("max_turns"), agents=None if agents is None else tuple(agents),
        final_faults=tuple(_fault(path, f"final fault {n}", f)
                           for n, f in enumerate(raw.get("final_faults", []))))


def load_all(directory: Path = SCENARIOS) -> list[Scenario]:
    """Every scenario, by name."""
    return [load(path) for path in sorted(directory.glob("*.toml"))]
