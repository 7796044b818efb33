"""Read a mini-swe-agent trajectory with mini-swe-agent's own code; print the steps as JSON.

Run with the Python of an oracle environment (``tests/lab/oracles.toml``), never with
failcode's: it imports only the agent's package and the standard library.

    python mini_swe_agent_oracle.py parse FILE...   # the steps the agent's code reads
    python mini_swe_agent_oracle.py run OUT OUTPUTS # 1.x: run the agent on scripted model
                                                    # outputs (a JSON list), save its trajectory
    python mini_swe_agent_oracle.py run-text OUT OUTPUTS  # the same with 2.x's text mode

What the agent's code decides, per version:

- 1.x: ``DefaultAgent.parse_action`` (with the file's own agent config: its ``action_regex``
  and templates) takes each assistant message's action, or raises ``FormatError``. The
  message after a parsed action is its observation when it is the file's own
  ``action_observation_template`` (the status is where that template puts
  ``output.returncode``) or ``timeout_template`` (a timeout, no status); anything else (the
  submission, a limit) is not a step.
- 2.x: the model class named in ``info.config.model_type`` parses the assistant message: tool
  calls through ``parse_toolcall_actions``, text through ``parse_regex_actions`` with the
  model config's ``action_regex``; a step is each observation message the agent wrote
  (``format_*observation_messages``: ``role=tool``, or ``role=user`` with ``extra.returncode``),
  its status that ``extra.returncode``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import minisweagent

MARK = "\x00MARK\x00"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _literal_before_mark(rendered: str) -> str:
    return rendered.split(MARK, 1)[0]


def parse_1(doc: dict) -> dict:
    from minisweagent.agents.default import AgentConfig, DefaultAgent, FormatError
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.test_models import DeterministicModel

    fields = {f.name for f in dataclasses.fields(AgentConfig)}
    config = ((doc.get("info") or {}).get("config") or {}).get("agent") or {}
    agent = DefaultAgent(DeterministicModel(outputs=[]), LocalEnvironment(),
                         **{k: v for k, v in config.items() if k in fields})
    observed = _literal_before_mark(agent.render_template(
        agent.config.action_observation_template,
        output={"returncode": MARK, "output": "", "action": ""}))
    status = re.compile(re.escape(observed) + r"(-?\d+)")
    timeout = _literal_before_mark(agent.render_template(
        agent.config.timeout_template, action={"action": MARK}, output=""))
    steps, errors, pending = [], [], None
    for index, message in enumerate(doc.get("messages") or []):
        role, text = message.get("role"), _text(message.get("content"))
        if role == "assistant":
            try:
                pending = agent.parse_action({**message, "content": text})["action"]
            except FormatError:
                pending = None
                errors.append(index)
            continue
        if role != "user" or pending is None:
            continue
        found = status.match(text)
        if found:
            steps.append({"message": index, "command": pending, "returncode": int(found[1]),
                          "exception_info": None, "timed_out": False})
        elif timeout and text.startswith(timeout):
            steps.append({"message": index, "command": pending, "returncode": None,
                          "exception_info": "timeout", "timed_out": True})
        pending = None
    return {"version": minisweagent.__version__, "steps": steps, "format_errors": errors}


def parse_2(doc: dict) -> dict:
    from minisweagent.exceptions import FormatError
    from minisweagent.models.utils.actions_text import parse_regex_actions
    from minisweagent.models.utils.actions_toolcall import parse_toolcall_actions

    config = (doc.get("info") or {}).get("config") or {}
    model_type = str(config.get("model_type") or "")
    regex = (config.get("model") or {}).get("action_regex")
    text_based = "textbased" in model_type.lower() or bool(regex)
    if text_based and not regex:
        from minisweagent.models.litellm_textbased_model import LitellmTextbasedModelConfig

        regex = LitellmTextbasedModelConfig.model_fields["action_regex"].default
    steps, errors = [], []
    by_id: dict[str, str] = {}
    queue: list[str] = []
    for index, message in enumerate(doc.get("messages") or []):
        role = message.get("role")
        extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
        if role == "user" and extra.get("interrupt_type") == "FormatError":
            errors.append(index)  # 2.x records the error, never the message that caused it
            continue
        if role == "assistant":
            try:
                if text_based:
                    actions = parse_regex_actions(_text(message.get("content")),
                                                  action_regex=regex, format_error_template="")
                else:
                    calls = [SimpleNamespace(id=c.get("id"), function=SimpleNamespace(
                        name=(c.get("function") or {}).get("name"),
                        arguments=(c.get("function") or {}).get("arguments")))
                        for c in message.get("tool_calls") or []]
                    actions = parse_toolcall_actions(calls, format_error_template="")
            except FormatError:
                errors.append(index)
                actions = []
            by_id = {str(a["tool_call_id"]): a["command"] for a in actions
                     if "tool_call_id" in a}
            queue = [a["command"] for a in actions if "tool_call_id" not in a]
            continue
        if role == "tool":
            command = by_id.pop(str(message.get("tool_call_id")), None)
        elif role == "user" and "returncode" in extra and queue:
            command = queue.pop(0)
        else:
            continue
        if command is None:
            continue
        info = extra.get("exception_info")
        steps.append({"message": index, "command": command.strip(),
                      "returncode": extra.get("returncode"),
                      "exception_info": info or None, "timed_out": False})
    return {"version": minisweagent.__version__, "steps": steps, "format_errors": errors}


def run_1(out: str, outputs: list[str]) -> None:
    """Run 1.x's own agent on scripted model outputs in a scratch folder (commands time out
    after 1 s); save its trajectory."""
    import tempfile

    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.test_models import DeterministicModel
    from minisweagent.run.utils.save import save_traj

    config = yaml.safe_load((builtin_config_dir / "extra" / "swebench.yaml").read_text())
    config["agent"] |= {"cost_limit": 0, "step_limit": 0}  # the scripted model costs 1 a call
    with tempfile.TemporaryDirectory() as cwd:
        agent = DefaultAgent(DeterministicModel(outputs=outputs),
                             LocalEnvironment(cwd=cwd, timeout=1), **config["agent"])
        status, result = agent.run("Find where the parser is defined.")
        save_traj(agent, Path(out), exit_status=status, result=result, print_path=False)


def run_2_text(out: str, outputs: list[str]) -> None:
    """Run 2.x's own agent in its text-based mode (``mini_textbased.yaml``) on scripted model
    outputs, answered by litellm's own ``mock_response`` (no network); save its trajectory."""
    import tempfile

    import litellm
    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

    scripted = list(outputs)

    class ScriptedTextbasedModel(LitellmTextbasedModel):
        def _query(self, messages: list[dict], **kwargs: object) -> object:
            return litellm.completion(model=self.config.model_name, messages=messages,
                                      mock_response=scripted.pop(0))

    config = yaml.safe_load((builtin_config_dir / "mini_textbased.yaml").read_text())
    agent_config = {k: v for k, v in config["agent"].items() if k != "mode"}
    with tempfile.TemporaryDirectory() as cwd:
        model = ScriptedTextbasedModel(model_name="openai/gpt-4o", cost_tracking="ignore_errors",
                         **{k: v for k, v in config["model"].items() if k != "model_kwargs"})
        agent = DefaultAgent(model, LocalEnvironment(cwd=cwd, timeout=1),
                             **agent_config | {"cost_limit": 0, "step_limit": 0,
                                               "output_path": Path(out)})
        agent.run("Find where the parser is defined.")


def main() -> None:
    if sys.argv[1] == "run":
        run_1(sys.argv[2], json.loads(sys.argv[3]))
        return
    if sys.argv[1] == "run-text":
        run_2_text(sys.argv[2], json.loads(sys.argv[3]))
        return
    major = int(minisweagent.__version__.split(".", 1)[0])
    out = {}
    for path in sys.argv[2:]:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        out[path] = parse_1(doc) if major < 2 else parse_2(doc)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
