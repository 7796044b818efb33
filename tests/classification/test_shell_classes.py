"""Classes of shell output the rules read whatever ran (issue 32), over REAL shells and tools
run in a temporary directory: a command line the shell cannot parse, a name no program has,
what a login shell's start-up files print before the command, a search's exit 1 beside
another program's output, a test run whose build failed, a process search that found nothing.
Windows' cmd.exe messages and exit statuses, and git's EPERM message, cannot be produced here:
those rows quote the programs' documented texts."""

from __future__ import annotations

import os
import subprocess
import textwrap
from typing import TYPE_CHECKING

import pytest

from failcode import FC, Cancelled, Failure, NoMatch, from_command, headline
from tests.classification.test_command_tools import run, tool

if TYPE_CHECKING:
    from pathlib import Path


def _failure(result: object) -> Failure:
    assert isinstance(result, Failure), result
    return result


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("line", ["echo (", "> (pip install x", "if true; then echo"])
def test_a_line_the_shell_cannot_parse_is_the_agents_malformed_command(
        tmp_path: Path, shell: str, line: str) -> None:
    """The shell's syntax error: FC-CMD-009 naming the shell, whatever the line seems to run."""
    done = subprocess.run([tool(shell), "-c", line], cwd=tmp_path, capture_output=True,
                          check=False)
    assert done.returncode == 2, done
    failure = _failure(from_command(line, done.returncode, done.stdout, done.stderr))
    assert (failure.code, failure.error_class) == (FC.CMD_DIAGNOSTIC.value, "syntax_error")
    assert failure.params["program"] == shell
    assert failure.kind == "command_error"


@pytest.mark.parametrize("line", [", content: 'pip install x'", ":ls -la", "}pip install x",
                                  "> python3 -c 'print(1)'"])
def test_a_name_no_program_has_is_no_missing_dependency(tmp_path: Path, line: str) -> None:
    """``bash: ,: command not found`` is the agent's malformed line (command_error), never
    "the program , is not installed"."""
    done = run(line, tmp_path)
    assert done.returncode == 127, done
    failure = _failure(from_command(line, 127, done.stdout, done.stderr))
    assert (failure.code, failure.kind) == (FC.CMD_DIAGNOSTIC.value, "command_error")
    assert "is not a command" in failure.message


def test_a_builtins_refusal_of_an_option_given_as_the_command_is_malformed(
        tmp_path: Path) -> None:
    """What the shell ran is an option (``-R`` after a stray word was eaten): no program's
    name, the agent's malformed line."""
    done = run("> out.txt -R x", tmp_path)
    assert done.returncode == 127
    failure = _failure(from_command("-R x", 127, done.stdout, done.stderr))
    assert (failure.code, failure.kind) == (FC.CMD_DIAGNOSTIC.value, "command_error")


def test_a_program_that_is_missing_is_still_a_missing_dependency(tmp_path: Path) -> None:
    """A name a program can have keeps FC-CMD-001: the rule above is about names only."""
    done = run("lab-tool-not-installed --version", tmp_path)
    failure = _failure(from_command("lab-tool-not-installed --version", 127, done.stdout,
                                    done.stderr))
    assert failure.code == FC.CMD_NOT_FOUND.value


@pytest.fixture
def login_home(tmp_path: Path) -> dict[str, str]:
    """A HOME whose login profile sources a script that fails, as Homebrew's shellenv.sh does
    where ``ps`` is not allowed (bash: ``shellenv.sh: line N: ...``), and prints a Node
    version switch as nvm does."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "helper").write_text("#!/bin/sh\n")  # no execute bit
    (home / ".config" / "shellenv.sh").write_text('"$HOME/.config/helper" --init\n'
                                                   "undefined_helper_for_lab --init\n")
    (home / ".bash_profile").write_text(textwrap.dedent("""\
        . "$HOME/.config/shellenv.sh"
        echo "Now using node v22.20.0 (npm v10.9.3)"
    """))
    return {**os.environ, "HOME": str(home)}


def test_a_login_shells_start_up_lines_are_not_the_commands(
        tmp_path: Path, login_home: dict[str, str]) -> None:
    """``bash -lc 'rg ...'`` that found nothing is no match, though the profile printed an
    error and a notice first (Codex runs commands through a login shell)."""
    tool("bash")
    (tmp_path / "notes.txt").write_text("alpha\n")
    line = "grep -rn zzz_not_there ."
    done = subprocess.run(["bash", "-lc", line], cwd=tmp_path, capture_output=True,
                          env=login_home, check=False)
    assert done.returncode == 1
    assert b"shellenv.sh: line" in done.stderr
    assert b"Now using node" in done.stdout
    assert isinstance(from_command(line, 1, done.stdout, done.stderr), NoMatch)


def test_a_failure_after_the_start_up_lines_names_the_command_not_the_profile(
        tmp_path: Path, login_home: dict[str, str]) -> None:
    """The command's own error is read; the profile's lines are not its detail."""
    line = "cat missing-file.txt"
    done = subprocess.run(["bash", "-lc", line], cwd=tmp_path, capture_output=True,
                          env=login_home, check=False)
    failure = _failure(from_command(line, done.returncode, done.stdout, done.stderr))
    assert "shellenv.sh" not in (failure.detail or "")
    assert "missing-file.txt" in headline(failure)


def test_a_search_that_found_nothing_beside_another_programs_notice_is_no_match(
        tmp_path: Path) -> None:
    """grep's exit 1 means "no line selected" whatever another part of the pipeline printed;
    a crash another part printed still fails."""
    quiet = run("echo 'Building index...' >&2; printf 'alpha\\n' | grep zzz", tmp_path)
    assert quiet.returncode == 1
    assert isinstance(from_command("printf 'alpha\\n' | grep zzz", 1, quiet.stdout,
                                   quiet.stderr), NoMatch)
    crash = run("python3 -c 'import no_such_module_for_lab' | grep zzz", tmp_path)
    assert crash.returncode == 1
    found = from_command("python3 -c 'import no_such_module_for_lab' | grep zzz", 1,
                         crash.stdout, crash.stderr)
    assert isinstance(found, Failure)
    missing_input = run("cat no-such-input.txt | grep flag", tmp_path)
    assert missing_input.returncode == 1
    assert isinstance(from_command("cat no-such-input.txt | grep flag", 1,
                                   missing_input.stdout, missing_input.stderr), Failure)


def test_a_process_search_that_found_nothing_is_no_match(tmp_path: Path) -> None:
    """``pgrep`` exits 1 when no process matched: a probe."""
    done = subprocess.run([tool("pgrep"), "-f", "no-process-is-named-this-for-lab"],
                          capture_output=True, check=False)
    assert done.returncode == 1
    outcome = from_command("pgrep -f no-process-is-named-this-for-lab", 1, done.stdout,
                           done.stderr)
    assert isinstance(outcome, NoMatch)
    assert outcome.probe == "pgrep"


def test_a_test_run_whose_build_failed_is_a_build_failure(tmp_path: Path) -> None:
    """``cargo test`` that does not compile ran no test: build_error at the compiler's
    location; a test that ran and failed stays a test failure."""
    cargo = tool("cargo")
    subprocess.run([cargo, "new", "--lib", "--vcs", "none", "calc"], cwd=tmp_path,
                   capture_output=True, check=True, env={**os.environ, "CARGO_NET_OFFLINE": "1"})
    crate = tmp_path / "calc"
    lib = crate / "src" / "lib.rs"
    lib.write_text("pub fn add(a: i32, b: i32) -> i32 { a + b + undefined_value }\n")
    broken = subprocess.run([cargo, "test", "--offline"], cwd=crate, capture_output=True,
                            check=False)
    assert broken.returncode == 101
    failure = _failure(from_command("cargo test", 101, broken.stdout, broken.stderr,
                                    cwd=str(crate)))
    assert failure.kind == "build_error"
    assert failure.location == "src/lib.rs"
    lib.write_text("pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg(test)]\n"
                   "mod tests { #[test] fn adds() { assert_eq!(super::add(2, 2), 4); } }\n")
    failing = subprocess.run([cargo, "test", "--offline"], cwd=crate, capture_output=True,
                             check=False)
    assert failing.returncode == 101
    failure = _failure(from_command("cargo test", 101, failing.stdout, failing.stderr,
                                    cwd=str(crate)))
    assert failure.kind == "test_error"


def test_a_test_run_whose_build_script_failed_is_a_build_failure(tmp_path: Path) -> None:
    """cargo's "failed to run custom build command" (a build.rs that failed, e.g. a download
    in a sandbox without network): no test ran, a build failure."""
    cargo = tool("cargo")
    subprocess.run([cargo, "new", "--lib", "--vcs", "none", "calc"], cwd=tmp_path,
                   capture_output=True, check=True)
    crate = tmp_path / "calc"
    (crate / "build.rs").write_text('fn main() { panic!("could not fetch the assets"); }\n')
    done = subprocess.run([cargo, "test", "--offline"], cwd=crate, capture_output=True,
                          check=False)
    assert done.returncode == 101
    assert b"failed to run custom build command" in done.stderr
    failure = _failure(from_command("cargo test", 101, done.stdout, done.stderr,
                                    cwd=str(crate)))
    assert failure.kind == "build_error"


# documented texts of programs that cannot run here (Windows' shells, a sandbox's EPERM)
@pytest.mark.parametrize(("stderr", "program"), [
    (("'grep' is not recognized as an internal or external command,\n"
     "operable program or batch file.\n"), "grep"),
    (("The term 'pytest' is not recognized as the name of a cmdlet, function, script file, "
     "or operable program.\n"), "pytest"),
])
def test_windows_shells_missing_program_is_a_missing_dependency(stderr: str,
                                                                program: str) -> None:
    """cmd.exe's and PowerShell's "not recognized" is their "command not found"."""
    failure = _failure(from_command(f"{program} -x", 1, "", stderr))
    assert (failure.code, failure.params["program"]) == (FC.CMD_NOT_FOUND.value, program)


@pytest.mark.parametrize("status", [3221225786, -1073741510])
def test_windows_ctrl_c_exit_is_cancelled(status: int) -> None:
    """STATUS_CONTROL_C_EXIT (0xC000013A), unsigned or signed: a person stopped it."""
    outcome = from_command("npx docusaurus start", status, "^C^C", "")
    assert isinstance(outcome, Cancelled)


@pytest.mark.parametrize(("command", "status", "stderr"), [
    ("git fetch --all --prune", 255,
     "error: cannot open '.git/FETCH_HEAD': Operation not permitted\n"),
    ("./scripts/new-branch.sh", 128,
     ("fatal: cannot lock ref 'refs/heads/001-x': Unable to create "
     "'/repo/.git/refs/heads/001-x.lock': Operation not permitted\n")),
])
def test_an_operation_the_os_did_not_permit_is_the_environments(command: str, status: int,
                                                                 stderr: str) -> None:
    """EPERM ("Operation not permitted", a sandbox refusing a write) is FC-OS-001, also in
    git's wordings that name the path last."""
    failure = _failure(from_command(command, status, "", stderr))
    assert (failure.code, failure.kind) == (FC.OS_PERMISSION_DENIED.value, "env_error")


def test_an_editors_missing_module_diagnostic_is_a_missing_dependency() -> None:
    """VS Code's TypeScript diagnostics as an agent relays them ("[ts Error] Line 2: Cannot
    find module 'x'", Cline's new problems after a save): the module is missing."""
    output = ("New problems detected after saving the file:\nsrc/App.svelte\n"
              "- [ts Error] Line 2: 'open' is declared but its value is never read.\n"
              "- [ts Error] Line 2: Cannot find module '@tauri-apps/plugin-shell' or its "
              "corresponding type declarations.\n")
    failure = _failure(from_command("edit src/App.svelte", 1, output,
                                    purpose="static_analysis"))
    assert (failure.code, failure.params["module"]) == (FC.CMD_MISSING_MODULE.value,
                                                       "@tauri-apps/plugin-shell")


def test_a_git_remote_that_asks_for_credentials_nobody_can_give(tmp_path: Path) -> None:
    """A remote that answers 401 and git that cannot prompt (no terminal, an agent's shell):
    "could not read Username for ..." is the remote the environment cannot reach
    (FC-GIT-004), not a failed merge."""
    import http.server
    import threading

    class Asks(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="lab"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Asks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        git = tool("git")
        subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
        url = f"http://127.0.0.1:{server.server_address[1]}/team/repo.git"
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
        done = subprocess.run([git, "-C", str(tmp_path), "pull", url, "main"],
                              capture_output=True, env=env, check=False)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode != 0
    assert b"could not read Username" in done.stderr
    failure = _failure(from_command(f"git pull {url} main", done.returncode, done.stdout,
                                    done.stderr))
    assert (failure.code, failure.kind) == (FC.GIT_REMOTE_UNREACHABLE.value, "env_error")


def test_a_perl_module_that_is_missing_is_a_missing_dependency(tmp_path: Path) -> None:
    """Perl's "Can't locate Foo/Bar.pm in @INC (you may need to install the Foo::Bar
    module)" names the module the environment lacks (FC-CMD-002)."""
    perl = tool("perl")
    script = tmp_path / "hash.pl"
    script.write_text("use No::Such::Lab::Module;\nprint 1;\n")
    done = subprocess.run([perl, str(script)], capture_output=True, check=False)
    assert done.returncode == 2
    failure = _failure(from_command("perl hash.pl", done.returncode, done.stdout, done.stderr))
    assert (failure.code, failure.params["module"]) == (FC.CMD_MISSING_MODULE.value,
                                                       "No::Such::Lab::Module")


def test_a_ruby_library_that_cannot_be_loaded_is_a_missing_dependency() -> None:
    """Ruby's LoadError (its documented text; Ruby is not installed here)."""
    failure = _failure(from_command("ruby app.rb", 1, "", "app.rb:1:in `require': cannot "
                                    "load such file -- sinatra (LoadError)\n"))
    assert (failure.code, failure.params["module"]) == (FC.CMD_MISSING_MODULE.value, "sinatra")
