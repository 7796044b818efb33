"""mini-swe-agent's own code as the oracle for failcode's mini-swe-agent reader (issue 32, item 2).

On every mini-swe-agent trajectory of both real corpora and the lab's fixtures, the steps, each
step's command and each recorded exit status failcode reads equal what mini-swe-agent's own
code yields (``mini_swe_agent_oracle.py``, run in the oracle environment whose major version is
the file's own ``info.mini_version``: ``tests/lab/oracles.toml``). No real file is a 1.x text
trajectory, so the agents write some: 1.x's ``DefaultAgent`` and 2.x's text-based mode
(``mini_textbased.yaml``, litellm's own ``mock_response``) run on scripted model outputs (the
shapes real models write: a quoted block in the reasoning, two blocks, none, a block of another
language) with its own SWE-bench config, and the same comparison runs on what it saved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcode.triage import triage
from failcode.triage._events import Command, RecordedOutcome, Rejected
from tests._needs import missing
from tests.lab.oracles import Oracle, for_version, oracles
from tests.lab.runner import FIXTURES
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import read_sessions, reader_name

SCRIPT = Path(__file__).with_name("mini_swe_agent_oracle.py")
PACKAGE = "mini-swe-agent"


def _installed(oracle: Oracle) -> Oracle:
    if not oracle.installed():
        missing(f"the {oracle.name} oracle ({oracle.package} {oracle.version}) is not installed "
                "(python -m tests.lab install)")
    return oracle


def _parse(oracle: Oracle, files: list[Path]) -> dict[str, Any]:
    out = oracle.run(SCRIPT, "parse", *map(str, files))
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _mismatches(path: Path, theirs: dict[str, Any]) -> list[str]:
    """Where failcode's reading of ``path`` differs from the agent's own."""
    (ours,) = read_sessions(path, PACKAGE)
    steps = [e for e in ours.events if isinstance(e, Command | RecordedOutcome)]
    rejected = [e for e in ours.events if isinstance(e, Rejected)]
    out: list[str] = []
    if ours.steps != len(theirs["steps"]) or len(steps) != len(theirs["steps"]):
        out.append(f"{path}: failcode reads {ours.steps} steps ({len(steps)} events), "
                   f"mini-swe-agent {theirs['version']} {len(theirs['steps'])}")
    for mine, step in zip(steps, theirs["steps"], strict=False):
        where = f"{path} messages[{step['message']}]"
        command, expected_command = ((mine.command.strip(), step["command"].strip())
                                     if isinstance(mine, Command)  # a cancelled call: its start
                                     else (mine.evidence, step["command"][:200]))
        if command != expected_command:
            out.append(f"{where}: command {command[:80]!r}, the agent's {step['command'][:80]!r}")
        status = mine.exit_code if isinstance(mine, Command) else None
        expected = None if step["exception_info"] else step["returncode"]
        if status != expected:
            out.append(f"{where}: status {status}, the agent recorded {expected}")
    if len(rejected) != len(theirs["format_errors"]):
        out.append(f"{path}: {len(rejected)} rejected model outputs, the agent's parser "
                   f"raised {len(theirs['format_errors'])} format errors")
    return out


def _files() -> list[Path]:
    roots = [sessions_dir(), sessions_2_dir(), FIXTURES / PACKAGE]
    files = [p for root in roots for p in session_files(root)
             if p.name != "meta.json" and reader_name(p) == PACKAGE]  # meta: the lab's notes
    assert len(files) >= 40, files  # 13 real trajectories and the lab's
    return files


def test_every_trajectory_reads_as_mini_swe_agent_reads_it() -> None:
    by_oracle: dict[str, list[Path]] = {}
    for path in _files():
        version = json.loads(path.read_text()).get("info", {}).get("mini_version")
        oracle = for_version(PACKAGE, version)
        assert oracle is not None, f"{path}: no oracle pinned for mini-swe-agent {version}"
        by_oracle.setdefault(oracle.name, []).append(path)
    problems: list[str] = []
    for name, files in by_oracle.items():
        theirs = _parse(_installed(oracles()[name]), files)
        for path in files:
            problems += _mismatches(path, theirs[str(path)])
    assert not problems, "\n".join(problems)


# Model outputs in the shapes real text-action sessions hold (written with 1.x's fence; 2.x's
# text mode gets its own); each run ends with the submit command.
_QUOTED = ("THOUGHT: The traceback says:\n```\nFile \"parser.py\", line 3\n```\nLet's search "
           "for the definition.\n\n```bash\ngrep -rn 'def parse_missing' .\n```")
_ODD = ("THOUGHT: the docstring ends with ```\n\nLet's check where it is used.\n\n"
        "```bash\ngrep -rn 'parse_missing' .\n```")
_TWO = ("THOUGHT: two ways.\n\n```bash\nls\n```\n\nor\n\n```bash\nls -la\n```")
_NONE = "THOUGHT: I think the parser lives in parser.py. Let's look at it next."
_OTHER = "THOUGHT: list it.\n\n```sh\nls\n```"
_FAILS = ("THOUGHT: run it (`python -c` is enough); quoting ```bash``` inline is not a block."
          "\n\n```bash\npython -c 'import sys; sys.exit(3)'\n```")
_SLOW = "THOUGHT: the server needs a moment.\n\n```bash\nsleep 3\n```"  # the agents' 1 s limit
_SUBMIT = "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"


_SCRIPTS = {
    "quoted-block": [_QUOTED, _ODD, _SUBMIT],
    "format-errors": [_TWO, _NONE, _FAILS, _OTHER, _SUBMIT],  # 2.x stops at 3 in a row
    "mixed": [_FAILS, _ODD, _QUOTED, _TWO, _SLOW, _SUBMIT],
}


def _text_mode(outputs: list[str], fence: str) -> list[str]:
    return [o.replace("```bash\n", f"```{fence}\n") for o in outputs]


@pytest.mark.parametrize(("oracle_name", "mode", "fence"), [
    ("mini-swe-agent-1", "run", "bash"),  # 1.x: DefaultAgent.parse_action
    ("mini-swe-agent-2", "run-text", "mswea_bash_command"),  # 2.x: mini_textbased.yaml
], ids=["1.x", "2.x-text"])
@pytest.mark.parametrize("script", list(_SCRIPTS))
def test_text_actions_read_as_the_agent_parses_them(tmp_path: Path, oracle_name: str,
                                                    mode: str, fence: str, script: str) -> None:
    oracle = _installed(oracles()[oracle_name])
    trajectory = tmp_path / "run.traj.json"
    oracle.run(SCRIPT, mode, str(trajectory), json.dumps(_text_mode(_SCRIPTS[script], fence)))
    theirs = _parse(oracle, [trajectory])[str(trajectory)]
    assert theirs["steps"], theirs  # the agent ran something
    assert not _mismatches(trajectory, theirs), _mismatches(trajectory, theirs)
    (ours,) = read_sessions(trajectory, PACKAGE)
    commands = [e.command for e in ours.events if isinstance(e, Command)]
    assert all(not c.startswith(("Let's", "File ", "THOUGHT")) for c in commands), commands


def test_repeated_format_errors_end_at_the_agents_limit(tmp_path: Path) -> None:
    """2.x stops after ``max_consecutive_format_errors`` in a row (exit ``RepeatedFormatError``):
    the agent's own limit, not an error of its code."""
    oracle = _installed(oracles()["mini-swe-agent-2"])
    trajectory = tmp_path / "run.traj.json"
    oracle.run(SCRIPT, "run-text", str(trajectory), json.dumps([_TWO, _NONE, _OTHER] * 4))
    theirs = _parse(oracle, [trajectory])[str(trajectory)]
    assert len(theirs["format_errors"]) >= 3, theirs
    assert not _mismatches(trajectory, theirs), _mismatches(trajectory, theirs)
    (session,) = triage([trajectory]).sessions
    assert session.status == "limit", session
