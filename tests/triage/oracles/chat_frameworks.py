"""Run AG2's and AutoGen's own executors and tools; print what they answer, as JSON.

Run with the oracle's Python (``tests/lab/oracles.toml``: ``ag2`` or ``autogen-agentchat``):
``python chat_frameworks.py ag2|autogen WORKDIR``. Every text printed is what the framework's
own code returned for a real run here (a real command through its
``LocalCommandLineCodeExecutor``, a real function through its tool machinery), for the test to
feed to failcode's chat readers (tests/triage/oracles/test_chat_oracle.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

FENCE = "`" * 3
CODE = {
    "exit-3": ("sh", "exit 3"),
    "missing-module": ("python", "import oracle_module_not_installed"),
    "succeeds": ("sh", "echo fine"),
}
"""Code blocks both executors run (language, code)."""


def read_config(path: str) -> str:
    """A tool that reads a file."""
    return Path(path).read_text(encoding="utf-8")


def ag2(work: Path) -> dict[str, Any]:
    """AG2: the code-execution reply of a ``ConversableAgent`` and ``execute_function``."""
    from autogen import ConversableAgent
    from autogen.coding import LocalCommandLineCodeExecutor

    def reply(language: str, code: str, timeout: int = 30) -> str:
        agent = ConversableAgent("executor", llm_config=False, human_input_mode="NEVER",
                                 code_execution_config={"executor": LocalCommandLineCodeExecutor(
                                     work_dir=work, timeout=timeout)})
        message = {"role": "user", "content": f"{FENCE}{language}\n{code}\n{FENCE}"}
        done, text = agent._generate_code_execution_reply_using_executor(messages=[message])
        assert done, (language, code)
        return str(text)

    blocks = {**CODE, "refused": ("rust", "fn main() {}"), "timeout": ("sh", "sleep 5")}
    replies = {case: reply(language, code, timeout=1 if case == "timeout" else 30)
               for case, (language, code) in blocks.items()}
    agent = ConversableAgent("tools", llm_config=False, human_input_mode="NEVER")
    agent.register_function({"read_config": read_config})
    missing_file = str(work / "missing.toml")
    tools = {
        "raises": agent.execute_function(
            {"name": "read_config", "arguments": json.dumps({"path": missing_file})})[1],
        "no-such-function": agent.execute_function(
            {"name": "no_such_function", "arguments": "{}"})[1],
        "bad-arguments": agent.execute_function(
            {"name": "read_config", "arguments": "{path: "})[1],
    }
    return {"code": {case: {"language": blocks[case][0], "code": blocks[case][1], "reply": text}
                     for case, text in replies.items()},
            "tools": {case: str(result["content"]) for case, result in tools.items()}}


def autogen(work: Path) -> dict[str, Any]:
    """AutoGen: ``CodeExecutorAgent.execute_code_block``, ``StaticWorkbench.call_tool`` and
    the ``type`` of every message class."""
    from autogen_agentchat import messages
    from autogen_agentchat.agents import CodeExecutorAgent
    from autogen_core import CancellationToken
    from autogen_core.code_executor import CodeBlock
    from autogen_core.tools import FunctionTool, StaticWorkbench
    from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor

    async def run() -> dict[str, Any]:
        agent = CodeExecutorAgent("runner", code_executor=LocalCommandLineCodeExecutor(
            work_dir=work))
        code = {}
        for case, (language, text) in CODE.items():
            result = await agent.execute_code_block([CodeBlock(code=text, language=language)],
                                                    CancellationToken())
            code[case] = {"language": language, "code": text, "exit_code": result.exit_code,
                          "output": result.output}
        bench = StaticWorkbench([FunctionTool(read_config, description="Read a file.")])
        tools = {}
        for case, name in (("raises", "read_config"), ("no-such-function", "no_such_tool")):
            answer = await bench.call_tool(name, {"path": str(work / "missing.toml")})
            tools[case] = {"is_error": answer.is_error,
                           "content": "".join(part.content for part in answer.result
                                              if hasattr(part, "content"))}
        return {"code": code, "tools": tools}

    out = asyncio.run(run())
    types = set()
    bases = (messages.BaseAgentEvent, messages.BaseChatMessage)
    for value in vars(messages).values():
        if not (isinstance(value, type) and issubclass(value, bases)):
            continue  # the module also imports autogen_core's model messages
        field = value.model_fields.get("type")
        if field is not None and isinstance(field.default, str):
            types.add(field.default)
    out["types"] = sorted(types)
    return out


def main() -> None:
    which, work = sys.argv[1], Path(sys.argv[2])
    with contextlib.redirect_stdout(sys.stderr):  # AG2 prints what it runs
        out = ag2(work) if which == "ag2" else autogen(work)
    text = json.dumps(out).replace(json.dumps(str(work))[1:-1], "WORK")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
