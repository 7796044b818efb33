"""The test dependencies are locked: constraints/test.txt pins every package failcode and its
``test`` extra require, at a version their specifiers allow, so scripts/test.sh installs the
set the suite last ran green with and a new release cannot break a fresh install by surprise
(scripts/deps-drift.sh says what newer releases would change)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).parents[1]
LOCK = REPO / "constraints" / "test.txt"


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _locked() -> dict[str, str]:
    found = {}
    for line in LOCK.read_text().splitlines():
        pinned = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if pinned:
            found[_name(pinned.group(1))] = pinned.group(2)
    return found


def _required() -> list[Requirement]:
    """failcode's own requirements and its test extra's, with the extras that one names."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted, seen, pending = [], set(), ["test"]
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in extras[extra]:
            requirement = Requirement(text)
            if _name(requirement.name) == "failcode":
                pending.extend(requirement.extras)
            else:
                wanted.append(requirement)
    return [Requirement(text) for text in project["dependencies"]] + wanted


def test_every_requirement_is_locked_at_a_version_it_allows() -> None:
    locked = _locked()
    problems = []
    for requirement in _required():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = locked.get(_name(requirement.name))
        if version is None:
            problems.append(f"{requirement.name}: not in {LOCK.name}")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement.name}: locked {version}, "
                            f"pyproject.toml asks {requirement.specifier}")
    assert problems == [], ("update the lock after a green run: bash scripts/deps-drift.sh "
                            f"--update; {problems}")


def test_the_lock_pins_each_package_once() -> None:
    names = [_name(m.group(1)) for m in re.finditer(r"(?m)^([A-Za-z0-9_.-]+)==", LOCK.read_text())]
    assert len(names) == len(set(names)) > 50
    assert "failcode" not in names  # the checkout itself is installed editable, never pinned
