"""The package surface: __all__, typing marker, import cost and what import pulls in."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import failcode


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted, unique, and every public name in it exists."""
    assert failcode.__all__ == sorted(failcode.__all__)
    assert len(set(failcode.__all__)) == len(failcode.__all__)
    for name in failcode.__all__:
        assert hasattr(failcode, name), name


def test_public_names_are_exported() -> None:
    """Every public attribute of the package is listed in __all__ (submodules such as
    failcode.boundary are public modules, imported by name, not re-exported)."""
    public = {name for name, value in vars(failcode).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public <= set(failcode.__all__)


def test_py_typed_is_shipped() -> None:
    """The package carries the PEP 561 marker."""
    assert (Path(failcode.__file__).parent / "py.typed").exists()


def test_import_pulls_in_no_sdk_or_framework() -> None:
    """`import failcode` imports no provider SDK, web framework, pydantic or click."""
    code = "import sys, json, failcode; print(json.dumps(sorted(sys.modules)))"
    modules = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                            text=True, check=True).stdout))
    forbidden = {"openai", "anthropic", "google.genai", "httpx", "requests", "pydantic",
                 "fastapi", "starlette", "sentry_sdk", "opentelemetry", "click", "rich",
                 "structlog"}
    assert not forbidden & modules
