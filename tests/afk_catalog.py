"""A user catalog in seed 003's style (prefix AFK), declared with failcode's machinery."""

from __future__ import annotations

from failcode import SEED_003_CATEGORIES, Catalog, Category, CodeEnum, CodeSpec, Kind

AFK_AREAS = {
    "PERC": "perception", "LOOP": "the agent loop", "ACT": "actions", "GND": "grounding",
    "SKILL": "skills", "CTX": "context", "GUI": "the shell's interface", "CFG": "configuration",
    "SAFE": "safety", "OBS": "observability", "MODEL": "models",
    "SYS": "the process and platform level",
}


class AFKCode(CodeEnum):
    """AFK's codes."""

    PERC_CAPTURE_FULLSCREEN = CodeSpec(
        code="AFK-PERC-003", slug="capture-exclusive-fullscreen", kind=Kind.ENV_ERROR,
        category=Category.USER, error_class="capture_blocked",
        message="Screen capture failed: {window} is in exclusive fullscreen.",
        remedy="Switch {window} to borderless windowed mode in its display settings.",
        impact="The agent cannot see the game, so it cannot act.",
        example="Capturing a game running in exclusive fullscreen.",
        example_params={"window": "Factorio"}, since="0.3.0")
    PERC_DEVICE_BUSY = CodeSpec(
        code="AFK-PERC-004", slug="capture-device-busy", kind=Kind.SYSTEM_ERROR,
        category=Category.TRANSIENT, error_class="device_busy",
        message="The capture device is busy.",
        impact="Frames are delayed until the device frees up.",
        example="Another recorder holds the capture device.", since="0.3.0")
    CFG_OUT_OF_RANGE = CodeSpec(
        code="AFK-CFG-001", slug="config-out-of-range", kind=Kind.PROJECT_ERROR,
        category=Category.USER, error_class="invalid_value",
        message="{key} = {value} is out of range {low}..{high}.",
        remedy="Set {key} to a value in {low}..{high}.",
        impact="The agent refuses to start rather than clamp a safety limit.",
        example="max_actions_per_second = 500.",
        example_params={"key": "max_actions_per_second", "value": 500, "low": 1, "high": 20},
        since="0.3.0")
    GUI_OVERLAY_DRIVER = CodeSpec(
        code="AFK-GUI-001", slug="overlay-driver-missing", kind=Kind.ENV_ERROR,
        category=Category.ENVIRONMENT, error_class="driver_missing",
        message="The overlay needs a graphics driver that supports {feature}.",
        remedy="Update the graphics driver to a version with {feature} support.",
        impact="The shell cannot show the agent's overlay.",
        example="An old driver without layered windows.",
        example_params={"feature": "layered windows"}, since="0.3.0")
    LOOP_STATE_MISMATCH = CodeSpec(
        code="AFK-LOOP-001", slug="loop-state-mismatch", kind=Kind.AGENT_ERROR,
        category=Category.DEFECT, error_class="state_mismatch",
        message="The loop's model of the window mode disagrees with the window.",
        impact="Acting on a state the agent does not understand is unsafe.",
        example="The agent mishandled a window-mode change.", since="0.3.0")
    SYS_OLD_PIPE = CodeSpec(
        code="AFK-SYS-001", slug="old-pipe-protocol", kind=Kind.SYSTEM_ERROR,
        category=Category.DEFECT, error_class="protocol",
        message="The control pipe spoke an old protocol.",
        impact="No longer emitted.", example="Shell 0.1 with core 0.2.", since="0.1.0",
        retired=True, superseded_by="AFK-LOOP-001")


AFK = Catalog("AFK", areas=AFK_AREAS, codes=AFKCode, categories=SEED_003_CATEGORIES,
              title="AFK error codes")
