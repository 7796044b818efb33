"""from_command's contract that needs no tool: arguments, the command-line reader, invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import PURPOSES, Cancelled, Failure, NoMatch, from_command
from failcode.classification._command import parse_invocation


def test_unknown_purpose_is_rejected_naming_the_allowed_values() -> None:
    """An unknown purpose raises ValueError listing every allowed purpose."""
    with pytest.raises(ValueError, match="purpose='compile'") as caught:
        from_command(["make"], 2, purpose="compile")
    for purpose in PURPOSES:
        assert purpose in str(caught.value)


def test_surface_with_a_colon_is_rejected() -> None:
    """A caller's surface holding ':' raises ValueError naming it."""
    with pytest.raises(ValueError, match="surface='a:b'"):
        from_command(["make"], 2, surface="a:b")


def test_caller_surface_is_used() -> None:
    """A surface given by the caller replaces the derived one."""
    failure = from_command(["make"], 2, surface="ci.step")
    assert isinstance(failure, Failure)
    assert failure.surface == "ci.step"


@pytest.mark.parametrize(("command", "program", "probe"), [
    ("cd /repo && grep -n foo x.py", "grep", "grep"),
    ("cat x | grep y | head -3", "head", None),
    ("sudo -u bob env A=1 timeout 5 rg foo", "rg", "rg"),
    ("find . -name '*.py' | xargs -I{} grep -l foo {}", "grep", "grep"),
    ("python -m pytest tests -x 2>&1", "pytest", None),
    ("FOO=1 python3.11 script.py > out.log 2>&1", "python3.11", None),
    ("git -C repo grep foo", "git", "git grep"),
    ("command -v cargo", "command", "command -v"),
    ("for f in *.py; do grep -q foo $f; done", "grep", "grep"),
    ("(cd sub && test -f x)", "test", "test"),
    ("cat > a.py << 'EOF'\nimport os; print(1) | 2\nEOF\npython a.py", "python", None),
    ("cat <<-END\n\tgrep inside heredoc\n\tEND\nls", "ls", None),
    ("echo 'a; grep b' # grep c", "echo", None),
    ("npx tsc --noEmit", "tsc", None),
    ("uv run --frozen mypy src", "mypy", None),
])
def test_parse_invocation_finds_the_deciding_program(command: str, program: str,
                                                     probe: str | None) -> None:
    """The last program of the last pipeline decides, after wrappers and heredocs."""
    invocation = parse_invocation(command)
    assert (invocation.program, invocation.probe) == (program, probe)


def test_parse_invocation_reads_a_shell_argv_as_its_script() -> None:
    """["bash", "-lc", SCRIPT] is read as SCRIPT."""
    assert parse_invocation(["bash", "-lc", "cd x && grep y z"]).probe == "grep"


def test_unbalanced_quotes_fall_back_to_white_space() -> None:
    """A command shlex cannot split still yields its program."""
    assert parse_invocation("grep 'unterminated foo").program == "grep"


def test_probe_with_output_is_not_no_match() -> None:
    """grep exit 1 that printed something is not a silent probe."""
    assert not isinstance(from_command("grep x f", 1, "", "grep: f: Is a directory\n"), NoMatch)


def test_signal_exits_are_cancellations() -> None:
    """-2/-15 and 130/143 are Cancelled with the signal."""
    for code, signal in ((-2, 2), (130, 2), (-15, 15), (143, 15)):
        outcome = from_command("sleep 9", code)
        assert isinstance(outcome, Cancelled)
        assert outcome.signal == signal


_adversarial = st.sampled_from([
    "undefined reference to `", ": : : : ", "error: ", '  File "',
    "Traceback (most recent call last):\n", "FAILED a::b - ",
    "CONFLICT (content): Merge conflict in ", "\x1b[31m", "npm ERR! code ", "make: *** [",
    "    at ", "--> ", "error[E0425]: ", "\n", "'", "\u2018",
])
texts = st.lists(_adversarial | st.text(max_size=40), max_size=40).map("".join)
outputs = texts | st.binary(max_size=400)
argvs = st.text(max_size=120) | st.lists(st.text(max_size=20), max_size=6)
exit_codes = st.none() | st.integers(-(2**40), 2**40) | st.sampled_from(
    [0, 1, 2, 123, 124, 127, 130, 137, 143, -2, -9, -15])


@given(argv=argvs, exit_code=exit_codes, stdout=outputs, stderr=outputs,
       purpose=st.sampled_from(PURPOSES), timed_out=st.booleans(),
       cwd=st.none() | st.sampled_from(["/testbed", "/", "rel/dir"]))
def test_from_command_never_raises(argv: str | list[str], exit_code: int | None, *,
                                   stdout: str | bytes, stderr: str | bytes, purpose: str,
                                   timed_out: bool, cwd: str | None) -> None:
    """Any argv, exit code and output gives None, a Failure or a typed outcome."""
    result = from_command(argv, exit_code, stdout, stderr, purpose=purpose, cwd=cwd,
                          timed_out=timed_out)
    assert result is None or isinstance(result, (Failure, NoMatch, Cancelled))
    if exit_code == 0 and not timed_out:
        assert result is None


@pytest.mark.parametrize("line", [
    "x: " * 20000 + "undefined reference to `foo'",
    "a.c:1:1: error: " + "'" * 200000,
    "  File \"x\", line 1\n" * 50000,
    "FAILED " + "a::" * 100000,
    "error: " + "x" * 300000,
])
def test_huge_adversarial_output_is_bounded(line: str) -> None:
    """Megabytes of pathological output are scanned only at both ends and classify."""
    result = from_command(["gcc", "a.c"], 1, "", line * 8, purpose="build")
    assert isinstance(result, Failure)
    assert len(result.detail or "") <= 4000
