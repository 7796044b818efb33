"""Lifecycle phases, phase graphs (data) and the controller that enforces them.

The canonical graph: INIT -> PLAN -> EXECUTE -> JUDGE -> VERIFY -> FINALIZE -> DONE;
JUDGE and VERIFY may go back to PLAN or EXECUTE for another iteration; any non-terminal phase
may go to ABORTED; DONE and ABORTED are terminal. A pipeline with other phases declares its own
:class:`PhaseGraph`.
"""

from __future__ import annotations

import functools
from collections import deque
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, model_validator

from failcode.codes._catalog import FC
from failcode.record._failure import FailureError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "CANONICAL_GRAPH",
    "InvalidTransitionError",
    "LifecycleController",
    "Phase",
    "PhaseGraph",
]


class Phase(StrEnum):
    """The canonical phases; values are the wire format."""

    INIT = "init"
    PLAN = "plan"
    EXECUTE = "execute"
    JUDGE = "judge"
    VERIFY = "verify"
    FINALIZE = "finalize"
    DONE = "done"
    ABORTED = "aborted"


class PhaseGraph(BaseModel):
    """A pipeline's phases and allowed transitions, as data.

    Attributes:
        name: the graph's name (``canonical`` for the built-in one).
        phases: every phase, in the pipeline's forward order (used to tell a skipped phase
            from a phase out of order).
        edges: allowed transitions ``(from, to)``, sorted.
        start: the first phase.
        success: the terminal phase of a successful run.
        abort: the terminal phase of a stopped or failed run.

    Raises:
        pydantic.ValidationError: an edge names an undeclared phase, a terminal phase has an
            outgoing edge, start/success/abort are not declared, or a phase is unreachable.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    phases: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]
    start: str
    success: str
    abort: str

    @model_validator(mode="after")
    def _check(self) -> PhaseGraph:
        declared = set(self.phases)
        problems = [f"{role} phase {name!r} is not declared" for role, name in
                    (("start", self.start), ("success", self.success), ("abort", self.abort))
                    if name not in declared]
        if len(declared) != len(self.phases):
            problems.append("a phase is declared twice")
        problems.extend(f"edge {a!r} -> {b!r} names an undeclared phase"
                        for a, b in self.edges if a not in declared or b not in declared)
        problems.extend(f"terminal phase {a!r} has an outgoing edge to {b!r}"
                        for a, b in self.edges if a in (self.success, self.abort))
        if self.start in (self.success, self.abort) or self.success == self.abort:
            problems.append("start, success and abort must be three different phases")
        if not problems:
            reach = self.reachable(self.start)
            problems.extend(f"phase {p!r} cannot be reached from {self.start!r}"
                            for p in self.phases if p != self.start and p not in reach)
        if problems:
            raise ValueError("; ".join(problems))
        object.__setattr__(self, "edges", tuple(sorted(set(self.edges))))
        return self

    @classmethod
    def declare(
        cls,
        name: str,
        phases: Iterable[str],
        transitions: Mapping[str, Iterable[str]],
        *,
        start: str,
        success: str,
        abort: str,
        abort_from_any: bool = True,
    ) -> PhaseGraph:
        """A graph from ``{phase: [next phases]}``; ``abort_from_any`` adds X -> abort for
        every non-terminal X."""
        order = tuple(str(p) for p in phases)
        edges = {(str(a), str(b)) for a, targets in transitions.items() for b in targets}
        if abort_from_any:
            edges |= {(p, str(abort)) for p in order if p not in (success, abort)}
        return cls(name=name, phases=order, edges=tuple(sorted(edges)), start=str(start),
                   success=str(success), abort=str(abort))

    @functools.cached_property
    def _next(self) -> dict[str, frozenset[str]]:
        table: dict[str, set[str]] = {p: set() for p in self.phases}
        for a, b in self.edges:
            table.setdefault(a, set()).add(b)
        return {p: frozenset(targets) for p, targets in table.items()}

    @property
    def terminal(self) -> frozenset[str]:
        """The terminal phases: success and abort."""
        return frozenset({self.success, self.abort})

    def allows(self, from_phase: str, to_phase: str) -> bool:
        """Whether ``from_phase -> to_phase`` is an edge."""
        return to_phase in self._next.get(from_phase, frozenset())

    def successors(self, phase: str) -> frozenset[str]:
        """The phases reachable in one step from ``phase``."""
        return self._next.get(phase, frozenset())

    def reachable(self, phase: str) -> dict[str, tuple[str, ...]]:
        """Every phase reachable from ``phase`` with the shortest path's intermediate phases."""
        paths: dict[str, tuple[str, ...]] = {}
        queue: deque[tuple[str, tuple[str, ...]]] = deque([(phase, ())])
        while queue:
            current, via = queue.popleft()
            for target in sorted(self.successors(current)):
                if target not in paths:
                    paths[target] = via
                    queue.append((target, (*via, target)))
        return paths

    def position(self, phase: str) -> int:
        """The index of ``phase`` in the declared forward order (-1 when undeclared)."""
        try:
            return self.phases.index(phase)
        except ValueError:
            return -1

    def is_back_edge(self, from_phase: str, to_phase: str) -> bool:
        """Whether an allowed transition goes back for another iteration."""
        return (self.allows(from_phase, to_phase) and to_phase != self.abort
                and self.position(to_phase) <= self.position(from_phase))


_P = Phase
CANONICAL_GRAPH: Final = PhaseGraph.declare(
    "canonical", [p.value for p in Phase],
    {_P.INIT: [_P.PLAN], _P.PLAN: [_P.EXECUTE], _P.EXECUTE: [_P.JUDGE],
     _P.JUDGE: [_P.VERIFY, _P.PLAN, _P.EXECUTE], _P.VERIFY: [_P.FINALIZE, _P.PLAN, _P.EXECUTE],
     _P.FINALIZE: [_P.DONE]},
    start=_P.INIT, success=_P.DONE, abort=_P.ABORTED)
"""The canonical phase graph."""


class InvalidTransitionError(FailureError, ValueError):
    """A transition the phase graph does not allow (FC-LIFE-006); names both phases."""

    def __init__(self, from_phase: str, to_phase: str, graph: str = "canonical") -> None:
        super().__init__(FC.LIFE_INVALID_TRANSITION.failure(
            surface="pipeline.lifecycle",
            params={"from_phase": from_phase, "to_phase": to_phase},
            context={"graph": graph}))
        self.from_phase = from_phase
        self.to_phase = to_phase

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.from_phase, self.to_phase))


class LifecycleController:
    """Holds a run's current phase and refuses any transition its graph does not allow.

    Args:
        graph: the phase graph (default: the canonical one).

    Attributes:
        path: every phase entered so far, the start first.
        iteration: how many times the run went back for another iteration.
    """

    def __init__(self, graph: PhaseGraph = CANONICAL_GRAPH) -> None:
        self.graph = graph
        self.path: list[str] = [graph.start]
        self.iteration = 0

    @property
    def phase(self) -> str:
        """The current phase."""
        return self.path[-1]

    @property
    def terminated(self) -> bool:
        """Whether the run is in a terminal phase."""
        return self.phase in self.graph.terminal

    def can(self, to_phase: str) -> bool:
        """Whether the current phase may go to ``to_phase``."""
        return self.graph.allows(self.phase, str(to_phase))

    def advance(self, to_phase: str) -> str:
        """Enter ``to_phase``.

        Returns:
            The new phase.

        Raises:
            InvalidTransitionError: the graph has no edge from the current phase to it.
        """
        target = str(to_phase)
        if not self.graph.allows(self.phase, target):
            raise InvalidTransitionError(self.phase, target, self.graph.name)
        if self.graph.is_back_edge(self.phase, target):
            self.iteration += 1
        self.path.append(target)
        return target
