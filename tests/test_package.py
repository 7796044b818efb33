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


def test_names_exported_before_the_layout_still_import() -> None:
    """Every name in the committed list (failcode's __all__ when the layout by layer landed)
    is still importable from failcode and still listed in __all__."""
    listed = Path(__file__).with_name("public_names.txt").read_text(encoding="utf-8").split("\n")
    names = [line for line in listed if line and not line.startswith("#")]
    assert len(names) > 100
    missing = [name for name in names if not hasattr(failcode, name)]
    assert missing == []
    assert set(names) <= set(failcode.__all__)


def test_layer_subpackages_say_what_they_hold() -> None:
    """Each layer subpackage has a docstring saying what it holds and what it may use."""
    import importlib

    for layer in ("record", "signature", "codes", "classification", "policy", "render", "cli"):
        module = importlib.import_module(f"failcode.{layer}")
        assert module.__doc__, layer
        assert "may use" in module.__doc__, layer


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
