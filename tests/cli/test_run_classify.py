"""`failcode run` and `failcode classify`, through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.cli._console import failcode

if TYPE_CHECKING:
    from pathlib import Path


def test_run_false_reports_and_exits_1() -> None:
    """`failcode run -- false`: a failed command is explained on stderr and exits 1 (the
    boundary table's default profile gives 1 to a failure that is not an input problem)."""
    result = failcode("run", "--", "false")
    assert result.returncode == 1
    assert "[FC-CMD-" in result.stderr
    assert "false" in result.stderr
    assert result.stdout == ""


def test_run_missing_program_says_it_is_not_installed() -> None:
    """`failcode run -- nonexistent-program` reports FC-CMD-001 with its remedy, exit 1."""
    result = failcode("run", "--", "failcode-test-nonexistent-program", "--flag")
    assert result.returncode == 1
    assert "[FC-CMD-001]" in result.stderr
    assert "failcode-test-nonexistent-program is not installed" in result.stderr
    assert "Install failcode-test-nonexistent-program" in result.stderr


def test_run_missing_program_sysexits_profile() -> None:
    """With --profile sysexits a missing program exits EX_UNAVAILABLE (69)."""
    result = failcode("run", "--profile", "sysexits", "--", "failcode-test-nonexistent-program")
    assert result.returncode == 69


def test_run_no_match_exits_like_the_command(tmp_path: Path) -> None:
    """A grep that finds nothing exits 1 like grep, and failcode prints nothing of its own."""
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    result = failcode("run", "--", "grep", "-rn", "NEEDLE", "notes.txt", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == ""
    assert result.stdout == ""


def test_run_streams_output_and_passes_success() -> None:
    """A succeeding command's output passes through unchanged and failcode exits 0."""
    result = failcode("run", "--", sys.executable, "-c",
                      "import sys; print('out line'); print('err line', file=sys.stderr)")
    assert result.returncode == 0
    assert result.stdout == "out line\n"
    assert result.stderr == "err line\n"


def test_run_keeps_the_command_output_before_the_report() -> None:
    """A failing command's own stderr comes first, then failcode's report."""
    result = failcode("run", "--", sys.executable, "-c",
                      "import sys; print('boom from the tool', file=sys.stderr); sys.exit(3)")
    assert result.returncode == 1
    assert result.stderr.index("boom from the tool") < result.stderr.index("[FC-")


def test_run_json_prints_the_failure() -> None:
    """--json prints one object with the failure and its decision on stdout."""
    result = failcode("run", "--json", "--", "failcode-test-nonexistent-program")
    document = json.loads(result.stdout)
    assert document["result"] == "failure"
    assert document["failure"]["code"] == "FC-CMD-001"
    assert document["decision"]["action"] == "retry_after_change"  # nothing changed yet
    assert document["exit_code"] == result.returncode == 1


def test_run_json_no_match_is_an_outcome(tmp_path: Path) -> None:
    """--json reports a no-match probe as an outcome, not a failure."""
    (tmp_path / "a.txt").write_text("x\n")
    result = failcode("run", "--json", "--", "grep", "-q", "NEEDLE", "a.txt", cwd=tmp_path)
    document = json.loads(result.stdout)
    assert (document["result"], document["outcome"]["probe"]) == ("no_match", "grep")
    assert result.returncode == 1


def test_run_timeout_is_reported() -> None:
    """--timeout stops a command that runs too long and reports a timeout."""
    result = failcode("run", "--timeout", "0.5", "--", sys.executable, "-c",
                      "import time; time.sleep(30)")
    assert result.returncode == 1
    assert "[FC-CMD-004]" in result.stderr
    # the decision is to retry, but `failcode run` runs the command once: no "retrying in"
    assert "retrying in" not in result.stderr
    assert "may succeed when retried" in result.stderr


def _real_traceback(tmp_path: Path) -> str:
    """The stderr of a Python script that really raises (a missing file, from a function)."""
    script = tmp_path / "load_config.py"
    script.write_text("import json\n\ndef load(path):\n    with open(path) as f:\n"
                      "        return json.load(f)\n\nload('missing-config.json')\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 1
    return done.stderr


def test_classify_a_real_traceback(tmp_path: Path) -> None:
    """`failcode classify < traceback.txt` names the FileNotFoundError's code, the decision
    and the user text, locating it in the script."""
    traceback = _real_traceback(tmp_path)
    (tmp_path / "traceback.txt").write_text(traceback)
    result = failcode("classify", cwd=tmp_path, stdin=traceback)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.split() == ["FC-OS-002", "file-not-found"]
    assert "location load_config.py" in result.stdout
    assert "decision: " in result.stdout
    assert "missing-config.json" in result.stdout  # the user text names the path


def test_classify_json_of_a_traceback(tmp_path: Path) -> None:
    """--json prints the failure, the decision and the user text as one object."""
    result = failcode("classify", "--json", cwd=tmp_path, stdin=_real_traceback(tmp_path))
    document = json.loads(result.stdout)
    assert document["failure"]["code"] == "FC-OS-002"
    assert set(document["decision"]) >= {"action", "route", "outcome", "rule", "reason"}
    assert document["user_text"].startswith("error [FC-OS-002]")


def test_classify_chained_traceback_takes_the_last_exception(tmp_path: Path) -> None:
    """In a chained traceback the exception raised last is classified."""
    script = tmp_path / "chain.py"
    script.write_text("try:\n    open('missing.txt')\nexcept OSError as exc:\n"
                      "    raise TimeoutError('read timed out') from exc\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, check=False, timeout=60)
    result = failcode("classify", "--json", cwd=tmp_path, stdin=done.stderr)
    assert json.loads(result.stdout)["failure"]["error_class"] == "timeout"


def test_classify_a_log_line() -> None:
    """A log line naming a provider exception is classified by its type and body."""
    line = ("2024-05-01 12:00:03 ERROR agent: openai.RateLimitError: Error code: 429 - "
            "{'error': {'code': 'rate_limit_exceeded', 'type': 'tokens'}}\n")
    result = failcode("classify", "--json", stdin=line)
    assert json.loads(result.stdout)["failure"]["code"] == "FC-PROV-003"


def test_classify_http_honours_retry_after(tmp_path: Path) -> None:
    """--http 429 with a retry-after header decides a retry after the server's delay."""
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"error": {"message": "Rate limit reached", "type": "requests",
                                          "code": "rate_limit_exceeded"}}))
    result = failcode("classify", "--json", "--http", "429", "--body", str(body),
                      "--header", "retry-after: 7")
    document = json.loads(result.stdout)
    assert document["failure"]["code"] == "FC-PROV-003"
    assert (document["decision"]["action"], document["decision"]["delay_s"]) == ("retry", 7.0)


def test_classify_type_and_message() -> None:
    """--type and --message classify an exception given as text."""
    result = failcode("classify", "--json", "--type", "ModuleNotFoundError",
                      "--message", "No module named 'requests'")
    assert json.loads(result.stdout)["failure"]["code"] == "FC-CMD-002"


def test_classify_empty_input_is_a_usage_error() -> None:
    """Nothing on stdin exits 2 and says what to pass."""
    result = failcode("classify", stdin="")
    assert result.returncode == 2
    assert "empty" in result.stderr
