"""The agents' own code as oracles: pinned packages (``oracles.toml``) in their own virtual
environments in the lab cache, run by the differential tests under ``tests/triage/oracles/``.

An oracle is a package version, not an agent the lab drives: nothing is pointed at the stub,
the tests only call the package's own parsing functions through a small script that prints JSON.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tests.lab.agents import (
    PIP_FLAGS,
    AgentUnavailableError,
    _run_install,
    agents,
    cache_dir,
    find_python,
)

ORACLES: Final = Path(__file__).parent / "oracles.toml"


@dataclass(frozen=True, slots=True)
class Oracle:
    """One pinned package whose code reads a format."""

    name: str
    package: str
    version: str
    majors: tuple[int, ...]
    min_python: tuple[int, int] = (3, 11)
    lab_agent: str | None = None
    only: tuple[str, ...] = ()
    """When set, the package is installed without its dependencies, and these packages
    beside it: what the modules the oracle imports need (not the whole application)."""
    only_exact: bool = False
    """``only`` is complete and pinned: installed as listed, without dependency resolution."""

    @property
    def install_dir(self) -> Path:
        if self.lab_agent is not None:
            return agents()[self.lab_agent].install_dir
        return cache_dir() / "oracles" / f"{self.name}-{self.version}"

    @property
    def python(self) -> Path:
        return self.install_dir / "bin" / "python"

    def installed(self) -> bool:
        return self.python.exists() and (self.install_dir / ".complete").exists()

    def install(self) -> None:
        """Install the pinned version when it is not there (idempotent)."""
        if self.lab_agent is not None:
            agents()[self.lab_agent].install()
            return
        if self.installed():
            return
        target = self.install_dir
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            _run_install([find_python(self.min_python), "-m", "venv", str(target)])
            pip = [str(self.python), "-m", "pip", "install", "--quiet", *PIP_FLAGS]
            if self.only:
                _run_install([*pip, "--no-deps", f"{self.package}=={self.version}"])
                _run_install([*pip, *(["--no-deps"] if self.only_exact else []), *self.only])
            else:
                _run_install([*pip, f"{self.package}=={self.version}"])
        except AgentUnavailableError:
            shutil.rmtree(target, ignore_errors=True)
            raise
        (target / ".complete").write_text(self.version + "\n")

    def run(self, script: Path, *args: str) -> str:
        """Run ``script`` with the oracle's Python; its standard output."""
        env = {**os.environ, "MSWEA_SILENT_STARTUP": "1",  # mini-swe-agent: no banner, and
               "MSWEA_GLOBAL_CONFIG_DIR": str(self.install_dir / "config"),  # no user config
               "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # litellm: its own copy, no network
        done = subprocess.run([str(self.python), str(script), *args], capture_output=True,
                              text=True, check=False, timeout=600, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} oracle exited {done.returncode}: "
                               f"{done.stderr.strip()[-2000:]}")
        return done.stdout


def oracles() -> dict[str, Oracle]:
    """Every pinned oracle, by name."""
    table = tomllib.loads(ORACLES.read_text())
    lab = agents()
    out: dict[str, Oracle] = {}
    for name, pin in table.items():
        agent = lab[pin["lab_agent"]] if "lab_agent" in pin else None
        out[name] = Oracle(name=name, package=agent.package if agent else pin["package"],
                           version=agent.version if agent else pin["version"],
                           majors=tuple(pin.get("majors", ())),
                           min_python=tuple(pin.get("min_python", (3, 11))),  # type: ignore[arg-type]
                           lab_agent=pin.get("lab_agent"), only=tuple(pin.get("only", ())),
                           only_exact=bool(pin.get("only_exact", False)))
    return out


def for_version(package: str, version: str | None) -> Oracle | None:
    """The oracle of ``package`` whose majors hold ``version``'s major (None when none does)."""
    try:
        major = int(str(version).split(".", 1)[0])
    except ValueError:
        return None
    for oracle in oracles().values():
        if oracle.package == package and major in oracle.majors:
            return oracle
    return None
