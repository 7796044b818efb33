"""failcode.pipeline lifecycle: every pair of phases, custom graphs, the controller."""

from __future__ import annotations

import itertools
import pickle

import pytest
from pydantic import ValidationError

from failcode import FailureError
from failcode.boundary import exit_code
from failcode.pipeline import (
    CANONICAL_GRAPH,
    InvalidTransitionError,
    LifecycleController,
    Phase,
    PhaseGraph,
)

_P = Phase
# Seed 001, written out: the forward chain, the loop-backs from JUDGE and VERIFY, and any
# non-terminal phase to ABORTED.
FORWARD = [(_P.INIT, _P.PLAN), (_P.PLAN, _P.EXECUTE), (_P.EXECUTE, _P.JUDGE),
           (_P.JUDGE, _P.VERIFY), (_P.VERIFY, _P.FINALIZE), (_P.FINALIZE, _P.DONE)]
LOOPS = [(a, b) for a in (_P.JUDGE, _P.VERIFY) for b in (_P.PLAN, _P.EXECUTE)]
ABORTS = [(a, _P.ABORTED) for a in Phase if a not in (_P.DONE, _P.ABORTED)]
ALLOWED = set(FORWARD + LOOPS + ABORTS)
ALL_PAIRS = list(itertools.product(Phase, Phase))


def _controller_at(phase: Phase) -> LifecycleController:
    """A controller brought to ``phase`` through allowed transitions (the path is built by
    walking the seed's forward chain, not the graph under test)."""
    controller = LifecycleController()
    chain = [b for _, b in FORWARD]
    if phase is _P.ABORTED:
        controller.advance(_P.ABORTED)
        return controller
    for step in chain:
        if controller.phase == phase:
            break
        controller.advance(step)
    assert controller.phase == phase
    return controller


@pytest.mark.parametrize(("source", "target"), ALL_PAIRS,
                         ids=[f"{a.value}->{b.value}" for a, b in ALL_PAIRS])
def test_every_phase_pair_is_allowed_or_rejected(source: Phase, target: Phase) -> None:
    """Each of the 64 pairs is allowed exactly when seed 001 allows it; a rejection names both
    phases and leaves the phase unchanged."""
    controller = _controller_at(source)
    if (source, target) in ALLOWED:
        assert controller.advance(target) == target
        assert controller.phase == target
    else:
        with pytest.raises(InvalidTransitionError) as info:
            controller.advance(target)
        assert (info.value.from_phase, info.value.to_phase) == (source.value, target.value)
        assert source.value in str(info.value)
        assert target.value in str(info.value)
        assert controller.phase == source


def test_canonical_graph_has_exactly_the_seed_edges() -> None:
    """The canonical graph's edge set is the seed's."""
    assert set(CANONICAL_GRAPH.edges) == {(a.value, b.value) for a, b in ALLOWED}


def test_invalid_transition_is_a_typed_failure() -> None:
    """The error carries FC-LIFE-006 and is a ValueError; a CLI exits 1 with it."""
    error = InvalidTransitionError("plan", "verify")
    assert isinstance(error, (FailureError, ValueError))
    assert error.failure.code == "FC-LIFE-006"
    assert exit_code(error) == 1


def test_invalid_transition_pickles() -> None:
    """The error survives pickling (process pools) with both phases."""
    error = pickle.loads(pickle.dumps(InvalidTransitionError("plan", "verify")))
    assert (error.from_phase, error.to_phase) == ("plan", "verify")


def test_loop_back_counts_an_iteration() -> None:
    """JUDGE -> PLAN increments the iteration; forward moves do not."""
    controller = _controller_at(_P.JUDGE)
    assert controller.iteration == 0
    controller.advance(_P.PLAN)
    assert controller.iteration == 1


REVIEW = PhaseGraph.declare(
    "review", ["start", "draft", "review", "published", "rejected"],
    {"start": ["draft"], "draft": ["review"], "review": ["draft", "published"]},
    start="start", success="published", abort="rejected")


@pytest.mark.parametrize(("path", "ok"), [
    (["draft", "review", "published"], True),
    (["draft", "review", "draft", "review", "published"], True),
    (["draft", "rejected"], True),
    (["review"], False),
    (["draft", "published"], False),
    (["draft", "review", "published", "draft"], False),
])
def test_custom_graph_is_enforced(path: list[str], ok: bool) -> None:
    """A pipeline's own graph (data) decides what the controller allows."""
    controller = LifecycleController(REVIEW)
    *walk, last = path
    for phase in walk:
        if not controller.can(phase):
            assert not ok
            return
        controller.advance(phase)
    if ok:
        controller.advance(last)
        assert controller.terminated
    else:
        with pytest.raises(InvalidTransitionError):
            controller.advance(last)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"transitions": {"a": ["zz"]}}, "undeclared"),
    ({"transitions": {"a": ["b"], "b": ["a"]}, "success": "b"}, "terminal phase"),
    ({"transitions": {"a": []}}, "cannot be reached"),
    ({"transitions": {"a": ["b"]}, "start": "q"}, "not declared"),
])
def test_invalid_graphs_fail_at_declaration(kwargs: dict[str, object], message: str) -> None:
    """A graph with undeclared, unreachable or outgoing-terminal phases is refused."""
    args: dict[str, object] = {"start": "a", "success": "b", "abort": "x",
                               "abort_from_any": False, **kwargs}
    transitions = args.pop("transitions")
    with pytest.raises(ValidationError, match=message):
        PhaseGraph.declare("g", ["a", "b", "x"], transitions, **args)  # type: ignore[arg-type]


def test_graph_round_trips_as_json() -> None:
    """A graph is data: it survives JSON unchanged."""
    assert PhaseGraph.model_validate_json(REVIEW.model_dump_json()) == REVIEW
