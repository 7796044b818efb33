"""failcode.pipeline artifacts: seed 001's normative profiles, every wrong profile, final status."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from failcode.pipeline import (
    FAILURE_PROFILES,
    STOP_CLASSES,
    DetectionMode,
    FailureArtifact,
    FailureClass,
    FinalStatus,
    Nature,
    StopReason,
)
from tests._needs import missing
from tests._paths import SHARED

SEEDS = SHARED / "seeds"


def _seed_profiles() -> dict[str, tuple[str, bool, bool]]:
    """The failure-class table as seed 001 prints it (class, category, retryable, replayable)."""
    files = sorted(SEEDS.glob("001_*.txt"))
    if not files:
        missing("seed 001 is not available")
    rows = {}
    for line in files[0].read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"(\w+)\t(operational|epistemic)\t(yes|no)\t(yes|no)", line.strip())
        if match:
            rows[match[1]] = (match[2], match[3] == "yes", match[4] == "yes")
    return rows


def test_profiles_are_the_seeds_table() -> None:
    """FAILURE_PROFILES equals the table in seed 001, class by class."""
    seed = _seed_profiles()
    assert len(seed) == 9
    ours = {cls.value: (p.nature.value, p.retryable, p.replayable)
            for cls, p in FAILURE_PROFILES.items()}
    assert ours == seed


WRONG_NATURES = [(cls, nature) for cls in FailureClass for nature in Nature
                 if nature is not FAILURE_PROFILES[cls].nature]
NOT_RETRYABLE = [cls for cls in FailureClass if not FAILURE_PROFILES[cls].retryable]


@pytest.mark.parametrize(("cls", "nature"), WRONG_NATURES,
                         ids=[f"{c.value}-{n.value}" for c, n in WRONG_NATURES])
def test_wrong_nature_fails_at_construction(cls: FailureClass, nature: Nature) -> None:
    """An artifact whose nature contradicts its class's profile is refused."""
    with pytest.raises(ValidationError, match="normative profile"):
        FailureArtifact(failure_class=cls, detection=DetectionMode.EXCEPTION, message="m",
                        phase="execute", nature=nature)


@pytest.mark.parametrize("cls", NOT_RETRYABLE, ids=[c.value for c in NOT_RETRYABLE])
def test_recoverable_needs_a_retryable_class(cls: FailureClass) -> None:
    """Only a retryable class may be marked recoverable."""
    with pytest.raises(ValidationError, match="cannot be recoverable"):
        FailureArtifact(failure_class=cls, detection=DetectionMode.EXCEPTION, message="m",
                        phase="execute", recoverable=True)


@pytest.mark.parametrize("cls", list(FailureClass), ids=[c.value for c in FailureClass])
def test_right_profile_is_accepted(cls: FailureClass) -> None:
    """Each class with its own nature (given or defaulted) constructs; retryable classes may
    be recoverable."""
    profile = FAILURE_PROFILES[cls]
    artifact = FailureArtifact(failure_class=cls, detection=DetectionMode.EXCEPTION,
                               message="m", phase="execute", nature=profile.nature,
                               recoverable=profile.retryable)
    assert artifact.replayable is profile.replayable
    default = FailureArtifact(failure_class=cls, detection="exception", message="m",
                              phase="execute")
    assert default.nature is profile.nature


@pytest.mark.parametrize("fields", [
    {"message": ""}, {"phase": ""}, {"failure_class": "boredom"}, {"detection": "psychic"},
    {"surprise": True},
])
def test_artifact_rejects_invalid_fields(fields: dict[str, Any]) -> None:
    """Empty message/phase, unknown class/detection or an unknown field fail."""
    base = {"failure_class": "execution_error", "detection": "exception", "message": "m",
            "phase": "execute"}
    with pytest.raises(ValidationError):
        FailureArtifact(**{**base, **fields})


artifacts = st.sampled_from(list(FailureClass)).flatmap(lambda cls: st.builds(
    FailureArtifact, failure_class=st.just(cls), detection=st.sampled_from(list(DetectionMode)),
    message=st.text(min_size=1).filter(str.strip),
    phase=st.sampled_from(["plan", "execute", "judge", "verify"]),
    recoverable=st.just(False) | (st.booleans() if FAILURE_PROFILES[cls].retryable
                                  else st.just(False))))


@given(artifacts)
def test_artifact_json_round_trip(artifact: FailureArtifact) -> None:
    """An artifact survives JSON unchanged."""
    assert FailureArtifact.model_validate_json(artifact.model_dump_json()) == artifact


# -- final status -------------------------------------------------------------------------------

@pytest.mark.parametrize("fields", [
    {"success": True, "phase": "done", "stop_reason": "convergence"},
    {"success": True, "phase": "done", "replayable": False},
    {"success": False, "phase": "aborted"},
    {"success": False, "phase": "aborted", "stop_reason": "convergence",
     "failure_class": "fatal_failure"},
    {"success": False, "phase": "aborted", "stop_reason": "verification_veto"},
    {"success": False, "phase": "aborted", "stop_reason": "verification_veto",
     "failure_class": "verification_veto", "replayable": False},
    {"success": False, "phase": "aborted", "stop_reason": "fatal_failure",
     "failure_class": "fatal_failure", "replayable": True},
    {"success": False, "phase": "aborted", "stop_reason": "max_iterations",
     "failure_class": "user_interruption"},
])
def test_final_status_rejects_inconsistent_fields(fields: dict[str, Any]) -> None:
    """A success with a stop reason, a stop without one, a class that does not fit the stop
    or a replay claim against the profile is refused."""
    with pytest.raises(ValidationError):
        FinalStatus(**fields)


def test_convergence_is_a_stop_without_a_failure_class() -> None:
    """A convergence stop is non-success and has no failure class."""
    status = FinalStatus(success=False, phase="aborted", stop_reason="convergence")
    assert (status.success, status.failure_class, status.outcome) == (
        False, None, "convergence")


@pytest.mark.parametrize("reason", list(StopReason), ids=[r.value for r in StopReason])
def test_every_stop_reason_has_a_non_success_outcome(reason: StopReason) -> None:
    """No stop reason maps to the success outcome."""
    classes = STOP_CLASSES[reason]
    cls = min(classes) if classes else None
    status = FinalStatus(success=False, phase="aborted", stop_reason=reason,
                         failure_class=cls,
                         replayable=True if cls is None else FAILURE_PROFILES[cls].replayable)
    assert status.outcome != "success"
