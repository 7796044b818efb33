"""What a test needs from the machine: in CI a missing need fails the test, elsewhere it skips.

``CI=true`` (set by ``.ci/run``) means the test set-up (``scripts/test.sh``) installed every tool,
package and data folder the suite uses, so a missing one is a broken set-up, never a reason to
skip quietly. Outside CI a developer without, say, rustc still gets a green run of the rest.
"""
from __future__ import annotations

import importlib
import os
import shutil
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from pathlib import Path

IN_CI = os.environ.get("CI") == "true"


def missing(reason: str) -> NoReturn:
    """Skip the test outside CI; fail it under ``CI=true``, naming what is missing."""
    if IN_CI:
        pytest.fail(f"CI=true and {reason}: scripts/test.sh should have provided it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def need_module(name: str) -> Any:
    """Import an optional dependency the test needs (like ``pytest.importorskip``)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} is not installed ({exc})")


def need_tool(name: str) -> str:
    """The path of a program the test runs."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not installed")
    return path


def need_data(path: Path) -> Path:
    """A data folder read in place (the shared folder beside the repository)."""
    if not path.exists():
        missing(f"data not present at {path}")
    return path
