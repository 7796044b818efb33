"""Start-up checks (some environment failures are detectable at start, and should be).

``preflight(checks)`` runs declared checks and returns one environment :class:`~failcode.Failure`
(with its remedy) per check that fails; ``failcode doctor`` runs those of the configuration's
``[preflight]`` table. The checks only look: nothing is imported, executed or created.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from failcode.codes._catalog import FC

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from failcode.record._failure import Failure

__all__ = [
    "Check",
    "CredentialsFile",
    "EnvVar",
    "Module",
    "Program",
    "WritableDir",
    "checks_from",
    "preflight",
]

_SURFACE = "preflight"


@dataclass(frozen=True, slots=True)
class Program:
    """A program that must be on PATH (FC-CMD-001 when it is not)."""

    name: str

    def run(self) -> Failure | None:
        """The failure, or None when the check passes."""
        if shutil.which(self.name):
            return None
        return FC.CMD_NOT_FOUND.failure(surface=_SURFACE, params={"program": self.name})

    @property
    def label(self) -> str:
        """A short description: ``program git``."""
        return f"program {self.name}"


@dataclass(frozen=True, slots=True)
class Module:
    """A Python module that must be importable (found, not imported; FC-CMD-002)."""

    name: str

    def run(self) -> Failure | None:
        """The failure, or None when the check passes."""
        try:
            found = importlib.util.find_spec(self.name) is not None
        except (ImportError, ValueError):  # a missing parent package, or an invalid name
            found = False
        if found:
            return None
        return FC.CMD_MISSING_MODULE.failure(surface=_SURFACE, params={"module": self.name})

    @property
    def label(self) -> str:
        """A short description."""
        return f"module {self.name}"


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable that must be set and non-empty (FC-CFG-006)."""

    name: str

    def run(self) -> Failure | None:
        """The failure, or None when the check passes."""
        if os.environ.get(self.name):
            return None
        return FC.CFG_MISSING_ENV_VAR.failure(surface=_SURFACE, params={"name": self.name})

    @property
    def label(self) -> str:
        """A short description."""
        return f"environment variable {self.name}"


@dataclass(frozen=True, slots=True)
class CredentialsFile:
    """A file that must exist and be readable (``~`` expanded; FC-CFG-007)."""

    path: str

    def run(self) -> Failure | None:
        """The failure, or None when the check passes."""
        target = Path(self.path).expanduser()
        if target.is_file() and os.access(target, os.R_OK):
            return None
        return FC.CFG_MISSING_CREDENTIALS_FILE.failure(surface=_SURFACE,
                                                       params={"path": self.path})

    @property
    def label(self) -> str:
        """A short description."""
        return f"credentials file {self.path}"


@dataclass(frozen=True, slots=True)
class WritableDir:
    """A directory that must exist and be writable (``~`` expanded; FC-CFG-008)."""

    path: str

    def run(self) -> Failure | None:
        """The failure, or None when the check passes."""
        target = Path(self.path).expanduser()
        if target.is_dir() and os.access(target, os.W_OK | os.X_OK):
            return None
        return FC.CFG_UNWRITABLE_DIR.failure(surface=_SURFACE, params={"path": self.path})

    @property
    def label(self) -> str:
        """A short description."""
        return f"writable directory {self.path}"


@runtime_checkable
class Check(Protocol):
    """A start-up check: anything with a ``run()`` that returns a Failure or None, and a label.

    failcode's own are :class:`Program`, :class:`Module`, :class:`EnvVar`,
    :class:`CredentialsFile` and :class:`WritableDir` (what a ``[preflight]`` table declares);
    any object of this shape works with :func:`preflight`, e.g. a check that a service answers.
    """

    def run(self) -> Failure | None:
        """The failure (an environment Failure with a remedy), or None when the check passes."""
        ...

    @property
    def label(self) -> str:
        """A short description for reports, e.g. ``program git``."""
        ...


def preflight(checks: Iterable[Check]) -> list[Failure]:
    """Run ``checks`` in order; return a Failure (with a remedy) for each one that fails.

    Returns:
        The failures, in the order of the checks; empty when the environment is ready.
    """
    failures: list[Failure] = []
    for check in checks:
        failure = check.run()
        if failure is not None:
            failures.append(failure)
    return failures


def checks_from(table: Mapping[str, Any]) -> tuple[Check, ...]:
    """The checks a validated ``[preflight]`` table declares (programs, modules, env,
    credentials_files, writable_dirs), in that order."""
    checks: list[Check] = []
    checks += [Program(name) for name in table.get("programs", ())]
    checks += [Module(name) for name in table.get("modules", ())]
    checks += [EnvVar(name) for name in table.get("env", ())]
    checks += [CredentialsFile(path) for path in table.get("credentials_files", ())]
    checks += [WritableDir(path) for path in table.get("writable_dirs", ())]
    return tuple(checks)
