"""A small coding agent's loop with failcode: run steps, classify what fails, decide, explain.

Run it from anywhere (it needs the ``openai`` package for the provider step)::

    python examples/agent_loop.py

The "agent" works in a temporary directory on a tiny project and follows a fixed plan, so the
run is reproducible; a real agent would let its model choose the next step. Each step meets a
different kind of failure, and the loop treats them all the same way:

1. a probe (``grep`` for TODOs) finds nothing: a ``NoMatch`` outcome, not an error;
2. a check runs a program that is not installed: FC-CMD-001, an environment failure; the
   decision is to retry only after a change, so the agent switches to another command and
   records ``Change.COMMAND``;
3. the tests fail on a bug: a task failure; the agent fixes the file, records
   ``Change.WORKSPACE`` and the retry passes;
4. a model call through the real openai SDK is rate-limited by a local stub server (on
   127.0.0.1, answering like the OpenAI API: a 429 with ``retry-after-ms``) and then succeeds;
   failcode honours the server's delay.

For every failure the loop records it in the operation's ``History`` (``history.after``), asks
``decide`` what to do, and prints the user rendering when someone must act. It exits 0 when
every step ended well.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai  # the real SDK, pointed at a local stub of the API below

from failcode import (
    Action,
    Change,
    Failure,
    History,
    NoMatch,
    NoProgressMonitor,
    Policy,
    classify,
    decide,
    from_command,
    render_user,
)

POLICY = Policy()
MONITOR = NoProgressMonitor(POLICY)


def say(text: str) -> None:
    """What the agent tells its user."""
    print(text, flush=True)


# -- running a command, the way an agent's shell tool does ------------------------------------


def run(argv: list[str], *, purpose: str, cwd: Path) -> Failure | NoMatch | None:
    """Run a command; None when it succeeded, else what failcode makes of it."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=60)
    except FileNotFoundError:
        # the program does not exist: report it the way a shell would (exit 127)
        return from_command(argv, 127, stderr=f"{argv[0]}: command not found", purpose=purpose,
                            cwd=cwd)
    if done.returncode == 0:
        return None
    result = from_command(argv, done.returncode, done.stdout, done.stderr, purpose=purpose,
                          cwd=cwd)
    assert isinstance(result, (Failure, NoMatch))
    return result


def attempt(name: str, argv: list[str], *, purpose: str, cwd: Path,
            fix: Any = None) -> bool:
    """Run one step until it succeeds or failcode says to stop; True when it succeeded.

    ``fix`` is the agent's repair: called with the failure, it changes something and returns
    (the change it made, the next command), or None when it has no idea.
    """
    history = History(operation="default")
    while True:
        result = run(argv, purpose=purpose, cwd=cwd)
        if result is None:
            MONITOR.progress()
            say(f"[{name}] ok: {' '.join(argv)}")
            return True
        if isinstance(result, NoMatch):
            MONITOR.observe(result)
            say(f"[{name}] nothing found by {result.probe} (a no-match, not an error)")
            return True
        MONITOR.observe(result)
        decision = decide(result, history, POLICY)
        history = history.after(result)  # record it: the next decision knows it happened
        say(f"[{name}] {result.code} {result.error_class}: {decision.action} "
            f"(route {decision.route}) - {decision.reason}")
        if decision.action is Action.RETRY:
            time.sleep(decision.delay_s)
            continue
        if decision.action is Action.RETRY_AFTER_CHANGE and fix is not None:
            repair = fix(result)
            if repair is not None:
                change, argv = repair
                history = history.changed(change)  # without this, rule 5 would refuse a retry
                say(f"[{name}] changed {change}: now {' '.join(argv)}")
                continue
        # stop here: someone else must act; tell the user what and why
        say(render_user(result, decision=decision).rstrip())
        return False


# -- a local stand-in for the OpenAI API ------------------------------------------------------


class StubOpenAI(BaseHTTPRequestHandler):
    """Answers chat completions like the OpenAI API: rate-limited once, then a completion."""

    calls = 0

    def do_POST(self) -> None:
        """One chat completion request."""
        self.rfile.read(int(self.headers.get("content-length", 0)))
        type(self).calls += 1
        if type(self).calls == 1:
            status = 429
            body: dict[str, Any] = {"error": {
                "message": "Rate limit reached for gpt-4o-mini on requests per min (RPM): "
                           "Limit 3, Used 3, Requested 1. Please try again in 200ms.",
                "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
            headers = {"retry-after-ms": "200", "x-request-id": "req_demo_1"}
        else:
            status = 200
            body = {"id": "chatcmpl-demo", "object": "chat.completion", "created": 0,
                    "model": "gpt-4o-mini", "choices": [{
                        "index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "The tests pass now."}}],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}}
            headers = {"x-request-id": "req_demo_2"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        """Keep the transcript clean."""


def ask_model(base_url: str) -> str | None:
    """One model call with failcode's decisions around it; the answer, or None."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-demo-not-a-real-key", max_retries=0)
    history = History(operation="provider")  # the provider class: 4 attempts, slower backoff
    while True:
        try:
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Summarize the run."}])
        except Exception as exc:  # every failure goes through classify
            failure = classify(exc, surface="llm.openai")
            if not isinstance(failure, Failure):  # a cancellation: let it through
                raise
            decision = decide(failure, history, POLICY)
            history = history.after(failure)
            say(f"[model] {failure.code} {failure.error_class}: {decision.action} after "
                f"{decision.delay_s:.2f} s (the server asked for {decision.server_delay_s} s)")
            if decision.action is not Action.RETRY:
                say(render_user(failure, decision=decision).rstrip())
                return None
            time.sleep(decision.delay_s)
            continue
        answer = reply.choices[0].message.content
        say(f"[model] ok: {answer}")
        return answer


# -- the plan ---------------------------------------------------------------------------------

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\nassert add(2, 2) == 4, f'add(2, 2) = {add(2, 2)}'\nprint('ok')\n"


def main() -> int:
    """Run the plan; 0 when every step ended well."""
    with tempfile.TemporaryDirectory(prefix="failcode-agent-") as name:
        work = Path(name)
        (work / "calc.py").write_text(BUGGY)
        (work / "test_calc.py").write_text(TESTS)
        python = sys.executable
        results = []

        # 1. look for TODO markers: grep exits 1 when it finds nothing
        results.append(attempt("probe", ["grep", "-rn", "TODO", "."], purpose="general",
                               cwd=work))

        # 2. a lint step with a tool that is not installed; the agent falls back to the
        #    compiler's syntax check
        def use_py_compile(failure: Failure) -> tuple[Change, list[str]] | None:
            if failure.error_class == "command_not_found":
                return Change.COMMAND, [python, "-m", "py_compile", "calc.py"]
            return None

        results.append(attempt("lint", ["fc-demo-linter", "calc.py"], purpose="static_analysis",
                               cwd=work, fix=use_py_compile))

        # 3. the tests fail on the bug; the agent fixes calc.py and runs them again
        def fix_the_bug(failure: Failure) -> tuple[Change, list[str]] | None:
            (work / "calc.py").write_text(BUGGY.replace("a - b", "a + b"))
            # the edit keeps the file's size and second: drop the bytecode py_compile cached
            shutil.rmtree(work / "__pycache__", ignore_errors=True)
            return Change.WORKSPACE, [python, "test_calc.py"]

        results.append(attempt("test", [python, "test_calc.py"], purpose="test", cwd=work,
                               fix=fix_the_bug))

        # 4. ask the model for a summary: rate-limited first, then answered
        server = ThreadingHTTPServer(("127.0.0.1", 0), StubOpenAI)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            answer = ask_model(f"http://127.0.0.1:{server.server_address[1]}/v1")
        finally:
            server.shutdown()
            server.server_close()
        results.append(answer is not None)

    stuck = MONITOR.stuck
    say(f"done: {sum(results)} of {len(results)} steps succeeded"
        + (f"; stuck: {stuck.reason}" if stuck else ""))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
