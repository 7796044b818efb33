"""The agents: how each is installed, pointed at the stub, run without a person, and
where it writes its session log.

Pins are data (``tests/lab/pins.toml``); ``python -m tests.lab pin AGENT VERSION`` changes one
and regenerates its fixtures. Installs go to the user's cache directory (``FAILCODE_LAB_CACHE``,
else ``~/.cache/failcode/lab``), one folder per agent and version, so repeated runs and
CI on one machine reuse them: npm packages with ``npm install --prefix``, PyPI packages in
their own virtual environment (OpenHands needs Python 3.12 or newer, found on PATH or under
pyenv).

What each agent needs to run headless against 127.0.0.1 (measured; see
``docs/triage.md#the-session-lab``):

- Claude Code: ``ANTHROPIC_BASE_URL``; as root ``--dangerously-skip-permissions`` needs
  ``IS_SANDBOX=1``; ``CLAUDE_CODE_MAX_RETRIES`` caps retries.
- Codex CLI: a custom model provider in ``$HOME/.codex/config.toml`` with
  ``wire_api = "responses"`` (the chat wire API is gone); ``codex exec`` waits for stdin
  unless it is closed.
- Gemini CLI: ``GOOGLE_GEMINI_BASE_URL`` and ``security.auth.selectedType =
  "gemini-api-key"`` (else non-interactive mode rejects the auth type), folder trust off,
  ``general.maxAttempts`` caps retries; ``-m`` pins the model the router would pick.
- mini-swe-agent: litellm's ``api_base`` through ``-c model.model_kwargs...``; cost tracking
  must ignore the unknown model.
- aider: no tools; it asks before it runs a suggested command, and ``--yes-always`` answers
  no to that, so the runner answers on stdin (``TERM=dumb`` makes the prompt read ``input()``).
- OpenHands CLI: ``LLM_BASE_URL`` with ``--override-with-envs``.
- Qwen Code: ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` with
  ``security.auth.selectedType = "openai"``; ``-p`` with ``--yolo``; a ``permissions.deny``
  rule refuses a command. It retries a 429 past ``maxRetries`` (a run that ends on one lasts
  until the lab's timeout), and now and then loses a fast command's output or the chat's
  last records (a run to repeat).
- OpenCode: an ``@ai-sdk/openai-compatible`` provider in ``opencode.json``; ``opencode run``;
  a ``permission.bash`` ``deny`` rule refuses a command; its sessions are exported after the
  run (``opencode export``), and its database kept beside them (a normalized copy).
- Cline's CLI: ``cline auth -p openai`` with the stub's base URL, then ``cline --json`` (tools
  approved by default; ``--yolo`` would demand a ``submit_and_exit`` call after every answer);
  ``--data-dir`` in the run's home; the stub fills its array arguments (``run_commands``'
  ``commands``, ``read_files``' ``files``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tests.lab.scenario import Scenario

PINS: Final = Path(__file__).parent / "pins.toml"
PROMPT: Final = ("Work through the task one step at a time with your tools, then report "
                 "what happened.")


def cache_dir() -> Path:
    """Where agents are installed: ``FAILCODE_LAB_CACHE``, else ``$XDG_CACHE_HOME`` (or
    ``~/.cache``) ``/failcode/lab``."""
    env = os.environ.get("FAILCODE_LAB_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "failcode" / "lab"


@dataclass(slots=True)
class RunContext:
    """One run's private folders and the stub's address."""

    root: Path
    home: Path
    tmp: Path
    project: Path
    url: str
    scenario: Scenario
    proxy: str


@dataclass(slots=True)
class Launch:
    """How to start the agent for one run."""

    argv: list[str]
    env: dict[str, str]
    stdin: str | None = None


class AgentUnavailableError(RuntimeError):
    """The agent cannot be installed or driven here (the message says why)."""


@dataclass(slots=True)
class Agent:
    """One agent CLI: its package, pin and how to drive it."""

    name: str
    package: str
    installer: str  # "npm" or "pip"
    binary: str
    version: str = ""
    min_python: tuple[int, int] = (3, 11)
    timeout_s: float = 240.0

    @property
    def install_dir(self) -> Path:
        return cache_dir() / f"{self.name}-{self.version}"

    @property
    def executable(self) -> Path:
        if self.installer == "npm":
            return self.install_dir / "node_modules" / ".bin" / self.binary
        return self.install_dir / "bin" / self.binary

    def installed(self) -> bool:
        return self.executable.exists() and (self.install_dir / ".complete").exists()

    def install(self) -> None:
        """Install the pinned version into the cache when it is not there (idempotent)."""
        if self.installed():
            return
        target = self.install_dir
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        try:
            if self.installer == "npm":
                npm = shutil.which("npm")
                if npm is None:
                    raise AgentUnavailableError("npm is not installed")
                _run_install([npm, "install", "--prefix", str(target), "--no-audit", "--no-fund",
                              "--loglevel=error", f"{self.package}@{self.version}"])
            else:
                python = find_python(self.min_python)
                _run_install([python, "-m", "venv", str(target)])
                _run_install([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              *PIP_FLAGS, f"{self.package}=={self.version}"])
        except AgentUnavailableError:
            shutil.rmtree(target, ignore_errors=True)
            raise
        if not self.executable.exists():
            raise AgentUnavailableError(f"{self.package} {self.version} installed no {self.binary}")
        (target / ".complete").write_text(self.version + "\n")

    # -- per agent: overridden below ---------------------------------------------------------
    def launch(self, ctx: RunContext) -> Launch:
        raise NotImplementedError

    def sessions(self, ctx: RunContext) -> list[Path]:
        """The session files (or folders) the agent wrote in this run."""
        raise NotImplementedError

    def supports(self, scenario: Scenario) -> str | None:
        """None when the scenario can run through this agent, else why not."""
        if not scenario.applies_to(self.name):
            return "the scenario names other agents"
        if scenario.refused and not self.refuses_commands:
            return "the lab cannot set a permission rule that refuses a command for this agent"
        return None

    refuses_commands = False
    """Whether :meth:`launch` honours a scenario's ``refused`` commands."""

    def stdout_file(self) -> str | None:
        """The name under which the fixture keeps the agent's stdout (None: not kept)."""
        return None

    def databases(self, ctx: RunContext) -> list[Path]:
        """The SQLite session databases of this run the fixture keeps (normalized copies)."""
        del ctx
        return []


PIP_FLAGS: Final = ("--disable-pip-version-check", "--no-compile")
"""An agent's or oracle's pip install: no bytecode compiled at install (for hundreds of
dependencies, most of the install's CPU time; Python compiles what a run imports)."""


INSTALL_TIMEOUT_S: Final = 1800


def _run_install(argv: list[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False,
                              timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AgentUnavailableError(f"{' '.join(argv[:3])}... did not finish in "
                                    f"{INSTALL_TIMEOUT_S} s (a loaded machine, or a slow "
                                    "index): run `python -m tests.lab install` again, it "
                                    "goes on where it stopped") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise AgentUnavailableError(f"{' '.join(argv[:3])}... exited {done.returncode}: "
                               + " | ".join(tail))


def find_python(minimum: tuple[int, int]) -> str:
    """A Python interpreter of at least ``minimum``: this one, one on PATH, or pyenv's."""
    if sys.version_info[:2] >= minimum:
        return sys.executable
    candidates = [shutil.which(f"python3.{minor}") for minor in range(minimum[1], 16)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        for version in sorted(pyenv.iterdir()):  # the oldest that will do: most wheels
            candidates += [str(p) for p in version.glob("bin/python3.*")
                           if re.fullmatch(r"python3\.\d+", p.name)]
    for candidate in candidates:
        if not candidate:
            continue
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            major, minor = (int(x) for x in probe.stdout.strip("()\n").split(","))
            if (major, minor) >= minimum:
                return candidate
    raise AgentUnavailableError(f"needs Python {minimum[0]}.{minimum[1]} or newer, none found")


REPO: Final = Path(__file__).resolve().parents[2]
TOOLS: Final = ("python", "cargo", "rustc", "go", "node", "npm", "tsc", "gcc", "git", "make")
"""The programs scenarios run; their folders go on the agents' PATH."""


def tool_env(home: Path, tmp: Path) -> dict[str, str]:
    """The environment scenario commands run in (agents add theirs): this Python first (its
    pytest, ruff and mypy), the repository's TypeScript, the folders of the tools the
    scenarios run, a private HOME and TMPDIR, Go and Cargo kept offline."""
    folders = [str(Path(sys.executable).parent),
               str(REPO / ".cache" / "npm" / "node_modules" / ".bin")]
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            folders.append(str(Path(found).parent))
    folders += ["/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(folders)), "HOME": str(home),
        "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp), "USER": "lab", "LOGNAME": "lab",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INDEX": "1", "npm_config_offline": "true", "GOTOOLCHAIN": "local",
        "GOPROXY": "off", "CARGO_NET_OFFLINE": "true",
    }
    rustup = Path.home() / ".rustup"
    if rustup.is_dir():  # rustup's cargo and rustc find their toolchain through these
        env["RUSTUP_HOME"] = str(rustup)
        env["CARGO_HOME"] = str(Path.home() / ".cargo")
    return env


def base_env(agent: Agent, ctx: RunContext) -> dict[str, str]:
    """A clean environment: nothing of the caller's but the tools, every proxy dead."""
    env = tool_env(ctx.home, ctx.tmp)
    # last: the agent's own folder must not shadow the tools (a PyPI agent's venv has a
    # `python` without pytest)
    env["PATH"] = env["PATH"] + os.pathsep + str(agent.executable.parent)
    env |= {
        "CI": "true",
        "XDG_CONFIG_HOME": str(ctx.home / ".config"), "XDG_CACHE_HOME": str(ctx.home / ".cache"),
        "XDG_DATA_HOME": str(ctx.home / ".local" / "share"),
        "XDG_STATE_HOME": str(ctx.home / ".local" / "state"),
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        env[name] = ctx.proxy
    return env


# -- Claude Code -----------------------------------------------------------------------------
class ClaudeCode(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        env = base_env(self, ctx) | {
            "ANTHROPIC_BASE_URL": ctx.url, "ANTHROPIC_API_KEY": "sk-ant-lab-stub",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "2",
            "IS_SANDBOX": "1", "API_TIMEOUT_MS": "20000",
        }
        argv = [str(self.executable), "-p", PROMPT, "--output-format", "stream-json",
                "--verbose", "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5"]
        if ctx.scenario.max_turns is not None:
            argv += ["--max-turns", str(ctx.scenario.max_turns)]
        for command in ctx.scenario.refused:  # a deny rule holds even when bypassing prompts
            argv += ["--disallowedTools", f"Bash({command})"]
        return Launch(argv, env)

    refuses_commands = True

    def stdout_file(self) -> str | None:
        return "stream.jsonl"  # -p --output-format stream-json: what a CI job keeps

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted((ctx.home / ".claude" / "projects").glob("**/*.jsonl"))


# -- Codex CLI -------------------------------------------------------------------------------
class Codex(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        codex = ctx.home / ".codex"
        codex.mkdir(parents=True, exist_ok=True)
        (codex / "config.toml").write_text(
            'model = "stub-model"\nmodel_provider = "stub"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n'
            "\n[analytics]\nenabled = false\n\n[model_providers.stub]\n"
            f'name = "stub"\nbase_url = "{ctx.url}/v1"\nenv_key = "STUB_API_KEY"\n'
            'wire_api = "responses"\nrequest_max_retries = 2\nstream_max_retries = 2\n'
            "stream_idle_timeout_ms = 20000\n")
        if ctx.scenario.refused:  # an execpolicy rule forbids it, whatever the approval mode
            (codex / "rules").mkdir(exist_ok=True)
            (codex / "rules" / "default.rules").write_text("".join(
                f"prefix_rule(pattern={json.dumps(shlex.split(c))}, decision=\"forbidden\")\n"
                for c in ctx.scenario.refused))
        env = base_env(self, ctx) | {"STUB_API_KEY": "sk-lab-stub", "CODEX_HOME": str(codex)}
        argv = [str(self.executable), "exec", "--json", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", PROMPT]
        return Launch(argv, env, stdin="")

    refuses_commands = True

    def stdout_file(self) -> str | None:
        return "exec.jsonl"  # exec --json: the events a CI job keeps

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted((ctx.home / ".codex" / "sessions").glob("**/rollout-*.jsonl"))

    def supports(self, scenario: Scenario) -> str | None:
        if scenario.max_turns is not None:
            return "codex exec has no turn limit"
        return Agent.supports(self, scenario)


# -- Gemini CLI ------------------------------------------------------------------------------
class GeminiCli(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        gemini = ctx.home / ".gemini"
        gemini.mkdir(parents=True, exist_ok=True)
        settings: dict[str, object] = {
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "maxAttempts": 3,
                        "enableAutoUpdateNotification": False},
        }
        if ctx.scenario.max_turns is not None:
            settings["model"] = {"maxSessionTurns": ctx.scenario.max_turns}
        (gemini / "settings.json").write_text(json.dumps(settings, indent=2))
        if ctx.scenario.refused:  # a user policy's deny rule holds under --yolo too
            policies = gemini / "policies"
            policies.mkdir(exist_ok=True)
            (policies / "lab.toml").write_text("".join(
                f'[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = {json.dumps(c)}\n'
                'decision = "deny"\npriority = 999\n\n' for c in ctx.scenario.refused))
        env = base_env(self, ctx) | {"GOOGLE_GEMINI_BASE_URL": ctx.url,
                                     "GEMINI_API_KEY": "lab-stub-key"}
        argv = [str(self.executable), "-p", PROMPT, "--yolo", "--output-format", "stream-json",
                "-m", "gemini-2.5-flash"]
        return Launch(argv, env)

    refuses_commands = True

    def stdout_file(self) -> str | None:
        return "stream.jsonl"  # -p --output-format stream-json: what a CI job keeps

    def sessions(self, ctx: RunContext) -> list[Path]:
        chats = ctx.home / ".gemini" / "tmp"
        return sorted([*chats.glob("*/chats/session-*.jsonl"),
                       *chats.glob("*/chats/session-*.json")])


# -- mini-swe-agent --------------------------------------------------------------------------
class MiniSweAgent(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        out = ctx.home / "runs" / "lab.traj.json"
        env = base_env(self, ctx) | {
            "MSWEA_COST_TRACKING": "ignore_errors", "MSWEA_CONFIGURED": "true",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "2",
            "MSWEA_SILENT_STARTUP": "1",
        }
        argv = [str(self.executable), "-m", "openai/stub-model", "-t", PROMPT, "-y",
                "--exit-immediately", "-o", str(out), "-c", "mini.yaml",
                "-c", f"model.model_kwargs.api_base={ctx.url}/v1",
                "-c", "model.model_kwargs.api_key=sk-lab-stub",
                "-c", "model.model_kwargs.timeout=20",
                "-c", f"environment.timeout={_command_timeout(ctx.scenario, 60)}"]
        if ctx.scenario.max_turns is not None:
            argv += ["-c", f"agent.step_limit={ctx.scenario.max_turns}"]
        return Launch(argv, env)

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted((ctx.home / "runs").glob("*.traj.json"))


def _command_timeout(scenario: Scenario, default: float) -> int:
    """The time limit of an agent whose limit is one setting for every command: the
    smallest a step asks for, else ``default``."""
    asked = [step.timeout_s for step in scenario.steps if step.timeout_s is not None]
    return int(min(asked)) if asked else int(default)


# -- aider -----------------------------------------------------------------------------------
class Aider(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        history = ctx.home / "aider"
        history.mkdir(parents=True, exist_ok=True)
        env = base_env(self, ctx) | {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "TERM": "dumb"}
        argv = [str(self.executable), "--model", "openai/stub-model",
                "--openai-api-base", f"{ctx.url}/v1", "--openai-api-key", "sk-lab-stub",
                "--no-git", "--edit-format", "diff", "--no-check-update", "--analytics-disable",
                "--no-show-model-warnings", "--no-fancy-input", "--no-pretty",
                "--no-show-release-notes", "--no-stream", "--timeout", "20",
                "--chat-history-file", str(history / ".aider.chat.history.md"),
                "--input-history-file", str(history / ".aider.input.history")]
        return Launch(argv, env, stdin=aider_answers(ctx.scenario))

    def sessions(self, ctx: RunContext) -> list[Path]:
        path = ctx.home / "aider" / ".aider.chat.history.md"
        return [path] if path.exists() else []

    def supports(self, scenario: Scenario) -> str | None:
        if any(step.action != "run" for step in scenario.steps):
            return "aider has no edit or read tool calls (its edits are text blocks)"
        if scenario.max_turns is not None:
            return "aider has no turn limit"
        return Agent.supports(self, scenario)


def aider_answers(scenario: Scenario) -> str:
    """aider's stdin: the task, then per command "run it?" yes, "add the output?" yes (asked
    only when there is output), "continue" for the next turn; ``/exit`` at the end."""
    lines = [PROMPT]
    for step in scenario.steps:
        if any(fault.fatal for fault in step.faults):
            break
        lines.append("y")
        if step.output:
            lines.append("y")
        lines.append("continue")
    lines.append("/exit")
    return "\n".join(lines) + "\n"


# -- OpenHands CLI ---------------------------------------------------------------------------
class OpenHands(Agent):
    def launch(self, ctx: RunContext) -> Launch:
        env = base_env(self, ctx) | {
            "LLM_MODEL": "openai/stub-model", "LLM_API_KEY": "sk-lab-stub",
            "LLM_BASE_URL": f"{ctx.url}/v1", "OPENHANDS_SUPPRESS_BANNER": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }  # only the key, URL and model come from the environment: its retries (5, 8-64 s)
        # stay, so a run that ends on a provider fault takes about 2.5 minutes
        argv = [str(self.executable), "--headless", "--json", "--override-with-envs",
                "-t", PROMPT]
        return Launch(argv, env)

    def supports(self, scenario: Scenario) -> str | None:
        if scenario.max_turns is not None:
            return "the OpenHands CLI has no turn limit option"
        return Agent.supports(self, scenario)

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted(p for p in (ctx.home / ".openhands" / "conversations").glob("*")
                      if p.is_dir())


# -- Qwen Code -------------------------------------------------------------------------------
class QwenCode(Agent):
    """Qwen Code (a Gemini CLI fork): its OpenAI-compatible provider through ``OPENAI_*`` and
    ``security.auth.selectedType = "openai"``; a ``permissions.deny`` rule (``Bash(...)``)
    refuses a command even under ``--yolo``; chats land in ``~/.qwen/projects/*/chats/``."""

    def launch(self, ctx: RunContext) -> Launch:
        qwen = ctx.home / ".qwen"
        qwen.mkdir(parents=True, exist_ok=True)
        model: dict[str, object] = {"name": "qwen3-coder-plus",
                                    "generationConfig": {"maxRetries": 2, "timeout": 20000}}
        if ctx.scenario.max_turns is not None:
            model["maxSessionTurns"] = ctx.scenario.max_turns
        settings: dict[str, object] = {
            "security": {"auth": {"selectedType": "openai"},
                         "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False},
            "model": model,
        }
        if ctx.scenario.refused:  # deny rules hold under --yolo too (deny > ask > allow)
            settings["permissions"] = {"deny": [f"Bash({c})" for c in ctx.scenario.refused]}
        (qwen / "settings.json").write_text(json.dumps(settings, indent=2))
        env = base_env(self, ctx) | {"OPENAI_BASE_URL": f"{ctx.url}/v1",
                                     "OPENAI_API_KEY": "sk-lab-stub",
                                     "OPENAI_MODEL": "qwen3-coder-plus"}
        argv = [str(self.executable), "-p", PROMPT, "--yolo"]
        return Launch(argv, env, stdin="")

    refuses_commands = True

    def supports(self, scenario: Scenario) -> str | None:
        if any(step.command.startswith("sed -i") for step in scenario.steps):
            return ("Qwen Code's shell tool refuses an in-place edit (sed -i) of a file the "
                    "session has not read with read_file, or that changed since: the script's "
                    "later steps would see another file")
        return Agent.supports(self, scenario)

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted((ctx.home / ".qwen" / "projects").glob("*/chats/*.jsonl"))


# -- OpenCode --------------------------------------------------------------------------------
class OpenCode(Agent):
    """OpenCode: an OpenAI-compatible provider in ``$XDG_CONFIG_HOME/opencode/opencode.json``
    (``@ai-sdk/openai-compatible``, bundled) with the stub's ``baseURL``; ``opencode run``
    headless with every permission ``allow`` but the scenario's refused commands (a ``bash``
    rule ``deny``); models.dev, updates and sharing off. Since 1.2 it keeps sessions in a
    SQLite database (``~/.local/share/opencode/opencode.db``), so after the run the lab keeps
    what ``opencode export <session id>`` prints for each session (its own JSON: the session,
    and each message with its parts, the shapes the database holds) and the database itself
    (:meth:`databases`)."""

    def launch(self, ctx: RunContext) -> Launch:
        config = ctx.home / ".config" / "opencode"
        config.mkdir(parents=True, exist_ok=True)
        bash: dict[str, str] = {"*": "allow"}
        bash |= dict.fromkeys(ctx.scenario.refused, "deny")
        settings: dict[str, object] = {
            "$schema": "https://opencode.ai/config.json",
            "model": "stub/stub-model", "small_model": "stub/stub-model",
            "autoupdate": False, "share": "disabled",
            "provider": {"stub": {
                "npm": "@ai-sdk/openai-compatible", "name": "stub",
                "options": {"baseURL": f"{ctx.url}/v1", "apiKey": "sk-lab-stub",
                            "timeout": 20000},
                "models": {"stub-model": {"name": "stub-model", "tool_call": True}}}},
            "permission": {"bash": bash, "edit": "allow", "read": "allow",
                           "external_directory": "allow", "webfetch": "allow"},
        }
        (config / "opencode.json").write_text(json.dumps(settings, indent=2))
        argv = [str(self.executable), "run", "--format", "json", PROMPT]
        return Launch(argv, self._env(ctx), stdin="")

    def _env(self, ctx: RunContext) -> dict[str, str]:
        return base_env(self, ctx) | {
            "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1"}

    refuses_commands = True

    def supports(self, scenario: Scenario) -> str | None:
        if scenario.max_turns is not None:
            return ("opencode run has no turn limit (an agent's steps setting left every "
                    "scripted call to run, and the session keeps no trace of a limit)")
        return Agent.supports(self, scenario)

    def sessions(self, ctx: RunContext) -> list[Path]:
        env = self._env(ctx)
        listed = subprocess.run([str(self.executable), "session", "list", "--format", "json"],
                                cwd=ctx.project, env=env, capture_output=True, text=True,
                                check=False, timeout=120)
        try:
            ids = [row["id"] for row in json.loads(listed.stdout or "[]")]
        except (ValueError, KeyError, TypeError):
            ids = re.findall(r"\bses_[0-9A-Za-z]+", listed.stdout)
        out = ctx.home / "opencode-export"
        out.mkdir(exist_ok=True)
        files = []
        for session in sorted(set(ids)):
            done = subprocess.run([str(self.executable), "export", session], cwd=ctx.project,
                                  env=env, capture_output=True, text=True, check=False,
                                  timeout=120)
            if done.returncode == 0 and done.stdout.strip():
                path = out / f"{session}.json"  # info.path: the project's path without its
                # leading slash, which the normalizer would not find
                path.write_text(done.stdout.replace(str(ctx.root).lstrip("/"), "lab"))
                files.append(path)
        return files

    def databases(self, ctx: RunContext) -> list[Path]:
        """The run's ``opencode.db`` (its WAL folded in), reduced to the tables sessions
        live in (``session``, ``message``, ``part``: OpenCode's own schema) and with
        ``session.path`` (the project's path without its leading slash) as the export has
        it; the runner keeps a normalized copy beside the export."""
        from failcode.triage.readers._opencode_db import open_read_only

        source = ctx.home / ".local" / "share" / "opencode" / "opencode.db"
        if not source.is_file():
            return []
        folder = ctx.home / "opencode-db"
        folder.mkdir(exist_ok=True)
        copy = folder / "opencode.db"
        with open_read_only(source) as connection:
            schema = connection.execute(
                "SELECT name, sql FROM sqlite_master WHERE tbl_name IN "
                "('session', 'message', 'part') AND sql IS NOT NULL "
                "ORDER BY type = 'index', rowid").fetchall()
            rows = {name: connection.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall()
                    for name in ("session", "message", "part")}
        out = sqlite3.connect(copy)
        try:
            for _, sql in schema:
                out.execute(sql)
            for name, found in rows.items():
                if found:
                    marks = ", ".join("?" * len(found[0]))
                    out.executemany(f'INSERT INTO "{name}" VALUES ({marks})', found)
            out.execute("UPDATE session SET path = replace(path, ?, 'lab')",
                        (str(ctx.root).lstrip("/"),))
            out.commit()
        finally:
            out.close()
        return [copy]


# -- Cline -----------------------------------------------------------------------------------
class Cline(Agent):
    """Cline's CLI (3.x, a native binary inside the npm package): ``cline auth -p openai``
    with a key, model and base URL saves an OpenAI-compatible provider with no login; ``cline
    --json PROMPT`` runs one task headless, every tool approved (its default; ``--yolo``
    would add a ``submit_and_exit`` tool and ask for it after every answer without it);
    ``--data-dir`` keeps its state in the run's home, sandboxed (no hub daemon outlives the
    run). Sessions land in ``<data>/sessions/<id>/<id>.messages.json``."""

    def _data(self, ctx: RunContext) -> Path:
        return ctx.home / ".cline" / "data"

    def _env(self, ctx: RunContext) -> dict[str, str]:
        return base_env(self, ctx) | {"CLINE_DATA_DIR": str(self._data(ctx)),
                                      "CLINE_DIR": str(ctx.home / ".cline"),
                                      "CLINE_LOG_ENABLED": "0"}

    def launch(self, ctx: RunContext) -> Launch:
        env, data = self._env(ctx), str(self._data(ctx))
        done = subprocess.run([str(self.executable), "auth", "-p", "openai", "-k", "sk-lab-stub",
                               "-m", "stub-model", "-b", f"{ctx.url}/v1", "--data-dir", data],
                              cwd=ctx.project, env=env, capture_output=True, text=True,
                              check=False, timeout=120, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise AgentUnavailableError(f"cline auth exited {done.returncode}: "
                                        + (done.stderr or done.stdout)[-500:])
        argv = [str(self.executable), "--json", "--data-dir", data, "-P", "openai",
                "-m", "stub-model", PROMPT]
        return Launch(argv, env, stdin="")

    def supports(self, scenario: Scenario) -> str | None:
        if scenario.max_turns is not None:
            return "Cline's CLI has no turn limit option"
        return Agent.supports(self, scenario)

    def sessions(self, ctx: RunContext) -> list[Path]:
        return sorted((self._data(ctx) / "sessions").glob("*/*.messages.json"))


_CLASSES: Final[dict[str, type[Agent]]] = {
    "claude-code": ClaudeCode, "codex": Codex, "gemini-cli": GeminiCli,
    "mini-swe-agent": MiniSweAgent, "aider": Aider, "openhands": OpenHands,
    "qwen-code": QwenCode, "opencode": OpenCode, "cline": Cline,
}


def agents() -> dict[str, Agent]:
    """Every agent with its pinned version (``pins.toml``), by name."""
    pins = tomllib.loads(PINS.read_text())
    out: dict[str, Agent] = {}
    for name, cls in _CLASSES.items():
        pin = pins[name]
        out[name] = cls(name=name, package=pin["package"], installer=pin["installer"],
                        binary=pin["binary"], version=pin["version"],
                        min_python=tuple(pin.get("min_python", (3, 11))),  # type: ignore[arg-type]
                        timeout_s=float(pin.get("timeout_s", 240)))
    return out


def set_pin(name: str, version: str) -> None:
    """Rewrite ``version`` of one agent in ``pins.toml`` (the rest of the file unchanged)."""
    lines = PINS.read_text().splitlines()
    section = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]")
        elif section == name and stripped.startswith("version"):
            lines[number] = f'version = "{version}"'
            PINS.write_text("\n".join(lines) + "\n")
            return
    raise KeyError(name)
