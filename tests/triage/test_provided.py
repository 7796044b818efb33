"""What a session's own repository provides (``failcode.triage.analysis._provided``), and how triage
uses it: a module the agent listed or wrote, then failed to import, is its own mistake.

End to end the session lab proves it through every agent (``listed-module-missing`` with the
agents' edit tools, ``listed-module-missing-shell`` with a heredoc); these tests pin the rules
and run a real interpreter for the import that fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from failcode.triage import triage
from failcode.triage.analysis._provided import listed_apps, modules_of_command, modules_of_file
from failcode.triage.readers._codex import _patched

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(("path", "modules"), [
    ("testapp/models.py", {"testapp", "models", "testapp.models"}),
    ("/workspace/reproduce.py", {"workspace", "reproduce", "workspace.reproduce"}),
    ("pkg/__init__.py", {"pkg"}),
    ("notes.txt", set()),
    ("my-scripts/run-me.py", set()),
    ("/opt/conda/lib/python3.11/site-packages/wrapt/decorators.py", set()),
    ("/usr/lib/python3.11/json/decoder.py", set()),
])
def test_a_written_file_provides_its_module_and_package(path: str, modules: set[str]) -> None:
    """A written ``.py`` file: its stem and its directory, never a library's file."""
    assert modules_of_file(path) == modules


@pytest.mark.parametrize(("text", "apps"), [
    ("INSTALLED_APPS = ['django.contrib.auth', 'testapp']", {"testapp"}),
    ('settings.configure(INSTALLED_APPS=("reproduce_app", "blog.apps.BlogConfig"))',
     {"reproduce_app", "blog.apps.BlogConfig"}),
    ("INSTALLED_APPS=[\\n    \\'test_app\\',\\n]", {"test_app"}),  # an escaped copy
    ("apps = ['testapp']", set()),
    ("INSTALLED_APPS = []", set()),
])
def test_apps_listed_in_installed_apps(text: str, apps: set[str]) -> None:
    """Every quoted name of an ``INSTALLED_APPS`` list or tuple, Django's own apps aside."""
    assert listed_apps(text) == apps


@pytest.mark.parametrize(("command", "modules"), [
    ("cat > helpers.py << 'EOF'\nx = 1\nEOF", {"helpers"}),
    ("cd /testbed && cat >> tools/extra.py <<EOF\nEOF", {"tools", "extra", "tools.extra"}),
    ("echo x | tee -a conf.py", {"conf"}),
    ("cd /opt/conda/lib/python3.11/site-packages && cat >> wrapt/decorators.py <<EOF\nEOF",
     set()),
    (("python -c \"from django.conf import settings; settings.configure("
     "INSTALLED_APPS=['myapp'])\""), {"myapp"}),
    ("python run.py > out.txt", set()),
    ("grep -rn INSTALLED_APPS .", set()),
])
def test_what_a_shell_command_writes(command: str, modules: set[str]) -> None:
    """Redirections and ``tee`` into a ``.py`` file (after ``cd``), and listed apps."""
    assert modules_of_command(command) == modules


def test_an_apply_patch_call_writes_each_file_of_its_patch() -> None:
    """Codex's ``apply_patch``: the ``+`` lines of each Add/Update section."""
    patch = ("*** Begin Patch\n*** Add File: app/settings.py\n+INSTALLED_APPS = ['fc_app']\n"
             "*** Update File: README.md\n@@\n-old\n+new\n*** End Patch\n")
    wrote = list(_patched({"type": "custom_tool_call", "name": "apply_patch", "input": patch}))
    assert [(w.path, w.text) for w in wrote] == [
        ("app/settings.py", "INSTALLED_APPS = ['fc_app']"), ("README.md", "new")]


def _mini_session(tmp_path: Path, steps: list[tuple[str, str]]) -> Path:
    """A mini-swe-agent 2.x trajectory of (command, output) steps."""
    messages: list[dict[str, object]] = [{"role": "system", "content": "sys"},
                                         {"role": "user", "content": "task"}]
    for number, (command, output) in enumerate(steps):
        call = {"id": f"call_{number}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        status = 1 if output else 0
        messages.append({"role": "tool", "tool_call_id": f"call_{number}",
                         "content": json.dumps({"returncode": status, "output": output}),
                         "extra": {"raw_output": output, "returncode": status}})
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"info": {"exit_status": "Submitted",
                                         "mini_version": "2.4.6"},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}))
    return path


def _import_error(tmp_path: Path, module: str) -> str:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 1
    return done.stderr


@pytest.mark.parametrize(("listed", "code", "kind"), [
    (True, "FC-CMD-014", "command_error"),
    (False, "FC-CMD-002", "dependency_error"),
])
def test_a_module_the_agent_listed_is_its_own_mistake(
        tmp_path: Path, listed: bool, code: str, kind: str) -> None:
    """The same real ``No module named`` is the agent's mistake after it listed the app, and
    a package to install when nothing in the session says the project has it."""
    settings = "INSTALLED_APPS = ['fc_listed_app']" if listed else "DEBUG = True"
    write = f"cat > settings.py << 'EOF'\n{settings}\nEOF"
    trajectory = _mini_session(tmp_path, [(write, ""), ("python -c 'import fc_listed_app'",
                                                        _import_error(tmp_path, "fc_listed_app"))])
    result = triage([trajectory])
    assert (result.inputs[0].format, result.inputs[0].error_code) == ("mini-swe-agent", None)
    (failure,) = [e.failure for s in result.sessions for e in s.failures]
    assert (failure.code, str(failure.kind), failure.params["module"]) == (
        code, kind, "fc_listed_app")
