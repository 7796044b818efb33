"""Causes a careful reader would name (issue item 5), over REAL output where a tool makes it.

- ``cannot import name 'X' from 'Y' (path)``: Y an installed library (or the standard library)
  is an incompatible dependency (FC-CMD-013, environment); Y the project's own module stays the
  code's own mistake (task).
- a missing module the project itself would provide (its tests, a submodule of its own package,
  the package the importing file lives in) is FC-CMD-014 (task), not a package to install;
  ``as_local_module`` is the hook through which a caller that knows the repository says so.
- missing credentials, an unknown model id, a model a gateway cannot route are configuration
  (user or environment), never transient and never a defect, whatever status carries them.
- ``set -u`` errors naming different variables have different signatures; a temporary directory
  never reaches a signature, whatever the purpose and entry point.

Real programs: the interpreter running this suite, pytest, bash, dash and the openai SDK against
the local provider stub. Messages quoted from real sessions and issue threads are short.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode import (
    FC,
    Category,
    Failure,
    Retryability,
    classify,
    classify_http,
    classify_text,
    from_command,
)
from failcode.classification._command import as_local_module
from failcode.classification._parsers import is_local_module
from failcode.signature._normalize import normalize_message, strip_temp_dir
from tests._needs import need_module, need_tool
from tests.provider_stub import ProviderStub

if TYPE_CHECKING:
    from collections.abc import Iterator

PURPOSES = ("general", "debug", "doctor", "build", "test", "static_analysis", "merge")


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, check=False,
                          timeout=120)


def _exception_line(stderr: str) -> tuple[str, str]:
    """(type, message) of the last line of a Python traceback."""
    last = stderr.strip().splitlines()[-1]
    type_name, _, message = last.partition(": ")
    return type_name, message


def _failure(result: object) -> Failure:
    assert isinstance(result, Failure), result
    return result


def _python_text(done: subprocess.CompletedProcess[str]) -> Failure:
    """classify_text over the traceback a real interpreter printed."""
    type_name, message = _exception_line(done.stderr)
    return _failure(classify_text(type_name, message, traceback=done.stderr))


# -- 1. cannot import name 'X' from 'Y' ---------------------------------------------------------


@pytest.mark.parametrize(("source", "module", "name"), [
    ("from json import nope", "json", "nope"),  # the standard library
    ("from pytest import nope", "pytest", "nope"),  # an installed package (site-packages)
])
def test_a_name_an_installed_library_lacks_is_an_incompatible_dependency(
        tmp_path: Path, source: str, module: str, name: str) -> None:
    """The real ImportError of an installed library is FC-CMD-013 through both entry points."""
    done = _run([sys.executable, "-c", source], tmp_path)
    assert done.returncode == 1, done.stderr
    text = _python_text(done)
    assert (text.code, text.kind, text.category) == (
        "FC-CMD-013", "dependency_error", Category.ENVIRONMENT)
    assert dict(text.params) == {"module": module, "name": name}
    assert text.retryability is Retryability.RETRYABLE_AFTER_CHANGE
    assert text.remedy
    for purpose in ("general", "debug", "doctor", "build", "test"):
        command = _failure(from_command([sys.executable, "-c", source], done.returncode,
                                        done.stdout, done.stderr, purpose=purpose,
                                        cwd=str(tmp_path)))
        assert (command.code, command.category, command.error_class) == (
            "FC-CMD-013", Category.ENVIRONMENT, "incompatible_dependency"), purpose
        assert dict(command.params) == {"module": module, "name": name}


def test_a_live_import_error_of_a_library_is_an_incompatible_dependency() -> None:
    """classify() reads the same rule from a live ImportError."""
    try:
        from json import nope  # type: ignore[attr-defined]  # noqa: F401
    except ImportError as exc:
        failure = _failure(classify(exc))
    assert (failure.code, dict(failure.params)) == (
        "FC-CMD-013", {"module": "json", "name": "nope"})


def test_a_name_the_projects_own_module_lacks_stays_the_codes_mistake(tmp_path: Path) -> None:
    """A name missing from a module of the project is no dependency: it stays a task."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("present = 1\n")
    done = _run([sys.executable, "-c", "from mypkg import helper"], tmp_path)
    assert "cannot import name 'helper' from 'mypkg'" in done.stderr
    text = _python_text(done)
    assert (text.code, text.category) == ("FC-SYS-001", Category.TASK)
    command = _failure(from_command([sys.executable, "-c", "from mypkg import helper"],
                                    done.returncode, done.stdout, done.stderr,
                                    cwd=str(tmp_path), purpose="general"))
    assert command.category is Category.TASK
    assert command.code != "FC-CMD-013"


@pytest.mark.parametrize(("message", "code"), [
    # a real session (mini-swe-agent, astroid): an old wrapt on Python 3.11
    (("cannot import name 'formatargspec' from 'inspect' "
     "(/opt/miniconda3/lib/python3.11/inspect.py)"), "FC-CMD-013"),
    (("cannot import name 'escape' from 'jinja2' "
     "(/srv/app/.venv/lib/python3.12/site-packages/jinja2/__init__.py)"), "FC-CMD-013"),
    (("cannot import name 'Mapping' from 'collections' "
     "(C:\\Python311\\Lib\\collections\\__init__.py)"), "FC-CMD-013"),
    # the project's own files (real sessions: sqlfluff, pydicom in /testbed)
    (("cannot import name 'dialect_selector' from 'sqlfluff.dialects' "
     "(/testbed/src/sqlfluff/dialects/__init__.py)"), "FC-SYS-001"),
    ("cannot import name 'DatasetEncoder' from 'pydicom.jsonrep' (/testbed/pydicom/jsonrep.py)",
     "FC-SYS-001"),
    # a namespace package, a circular import: no installed library to blame
    ("cannot import name 'ufunc' from 'erfa' (unknown location)", "FC-SYS-001"),
    (("cannot import name 'a' from partially initialized module 'pkg' (most likely due to a "
     "circular import) (/srv/lib/python3.11/site-packages/pkg/__init__.py)"), "FC-SYS-001"),
])
def test_import_error_messages(message: str, code: str) -> None:
    """Where the message says Y was found decides: installed library or the project."""
    assert _failure(classify_text("ImportError", message)).code == code


# -- 2. a module the project itself would provide ---------------------------------------------


@pytest.mark.parametrize(("module", "local"), [
    ("tests.helpers", True), ("tests", True), ("conftest", True), ("test_settings", True),
    ("requests", False), ("yaml_lab_not_installed", False), ("testapp", False),
    ("test", False),  # the standard library's own test package, absent from slim Pythons
])
def test_modules_named_like_the_projects_tests_are_local(module: str, local: bool) -> None:
    """The name alone: the project's tests and conftest are never a package to install."""
    failure = _failure(classify_text("ModuleNotFoundError", f"No module named '{module}'"))
    assert failure.code == ("FC-CMD-014" if local else "FC-CMD-002"), module
    assert failure.params["module"] == module
    assert failure.category is (Category.TASK if local else Category.ENVIRONMENT)


def _local_package(root: Path) -> None:
    """A project whose package imports a submodule it does not have."""
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("import pkg.helpers_missing\n")


def test_a_missing_submodule_of_the_projects_package_is_local(tmp_path: Path) -> None:
    """The package's own file imports a submodule it lacks: FC-CMD-014 through both paths."""
    _local_package(tmp_path)
    argv = [sys.executable, "-c", "import pkg"]
    done = _run(argv, tmp_path)
    assert "No module named 'pkg.helpers_missing'" in done.stderr
    text = _python_text(done)
    assert (text.code, text.kind, text.category, text.params["module"]) == (
        "FC-CMD-014", "command_error", Category.TASK, "pkg.helpers_missing")
    # in every purpose, a test run too: no test failed, the command ran where the project's
    # own module cannot be imported
    for purpose in ("general", "debug", "doctor", "build", "static_analysis", "test"):
        command = _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                        purpose=purpose, cwd=str(tmp_path)))
        assert (command.code, command.category, command.location) == (
            "FC-CMD-014", Category.TASK, "pkg/__init__.py"), purpose


def test_the_package_the_running_file_lives_in_is_local(tmp_path: Path) -> None:
    """A file inside package ``pkg`` run so that ``pkg`` is not importable (the wrong
    directory: a real pydicom session) cannot import its own package: FC-CMD-014."""
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tag.py").write_text("Tag = int\n")
    (tmp_path / "pkg" / "tests" / "test_tag.py").write_text("from pkg.tag import Tag\n")
    argv = [sys.executable, "pkg/tests/test_tag.py"]
    done = _run(argv, tmp_path)
    assert "No module named 'pkg'" in done.stderr
    assert _python_text(done).code == "FC-CMD-014"
    for purpose in ("general", "test"):
        command = _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                        purpose=purpose, cwd=str(tmp_path)))
        assert (command.code, command.params["module"]) == ("FC-CMD-014", "pkg"), purpose


def test_a_script_opening_a_missing_path_is_the_commands_own_failure(tmp_path: Path) -> None:
    """A script's FileNotFoundError is the command's failure (FC-CMD-003, class
    file_not_found), the same kind as ``cat``'s "No such file", in every purpose; the path's
    temporary directory stays out of the signature."""
    (tmp_path / "make_project.py").write_text(
        "import os, tempfile\n"
        "root = tempfile.mkdtemp()\n"
        "open(os.path.join(root, 'app', '__init__.py'), 'w')\n")
    argv = [sys.executable, "make_project.py"]
    first, second = _run(argv, tmp_path), _run(argv, tmp_path)
    assert "FileNotFoundError" in first.stderr
    cat = _run(["cat", "no-such-file.txt"], tmp_path)
    shell = _failure(from_command(["cat", "no-such-file.txt"], cat.returncode, cat.stdout,
                                  cat.stderr, cwd=str(tmp_path)))
    for purpose in (None, "general", "test", "build"):
        failure = _failure(from_command(argv, first.returncode, first.stdout, first.stderr,
                                        purpose=purpose, cwd=str(tmp_path)))
        assert (failure.code, failure.kind, failure.category) == (
            "FC-CMD-003", shell.kind, Category.TASK), purpose
        assert failure.error_class == "file_not_found"
        again = _failure(from_command(argv, second.returncode, second.stdout, second.stderr,
                                      purpose=purpose, cwd=str(tmp_path)))
        assert again.signature == failure.signature


def test_a_module_of_no_project_stays_a_missing_dependency(tmp_path: Path) -> None:
    """A project file importing what nothing in the project provides: FC-CMD-002."""
    (tmp_path / "report.py").write_text("import yaml_lab_not_installed\n")
    argv = [sys.executable, "report.py"]
    done = _run(argv, tmp_path)
    assert _python_text(done).code == "FC-CMD-002"
    assert _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                 purpose="general", cwd=str(tmp_path))).code == "FC-CMD-002"


def test_a_private_submodule_is_an_extension_not_built(tmp_path: Path) -> None:
    """``pkg._speedups`` missing inside ``pkg`` is a compiled extension never built (a real
    astropy session): a missing dependency, not a misnamed module."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from ._speedups import fast\n")
    done = _run([sys.executable, "-c", "import pkg"], tmp_path)
    assert "No module named 'pkg._speedups'" in done.stderr
    assert _python_text(done).code == "FC-CMD-002"


@pytest.mark.parametrize(("module", "code"), [
    ("tests.smoke_missing", "FC-CMD-014"),  # the package itself is missing
    ("tests_smoke_missing", "FC-CMD-002"),  # a module named like nothing of the project
    ("json.smoke_missing", "FC-CMD-002"),  # a submodule of the standard library
])
@pytest.mark.parametrize("purpose", ["general", "test"])
def test_the_interpreters_own_no_module_named_reads_the_name(
        tmp_path: Path, module: str, code: str, purpose: str) -> None:
    """``python -m tests.smoke`` with no such module ran nothing: the project's tests are a
    task, another module a missing dependency, in every purpose (test included)."""
    argv = [sys.executable, "-m", module]
    done = _run(argv, tmp_path)
    assert "No module named" in done.stderr
    failure = _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                    purpose=purpose, cwd=str(tmp_path)))
    assert failure.code == code


_CHAIN_SCRIPTS = {
    # raise X from exc, X of any type: the missing module is the cause
    "from": (("try:\n    import fc_driver_not_installed\nexcept ModuleNotFoundError as exc:\n"
              "    raise LookupError('the backend is not available') from exc\n"),
             ("FC-CMD-002", "fc_driver_not_installed")),
    # raised from one, naming it: its own judgement of the name it was given
    "from-naming-it": (("try:\n    import fc_driver_not_installed\n"
                        "except ModuleNotFoundError as exc:\n"
                        "    raise LookupError('no backend fc_driver_not_installed') from exc\n"),
                       ("FC-CMD-003", None)),
    # a generic wrapper raised while handling one: the same
    "handling-generic": (("try:\n    import fc_driver_not_installed\nexcept ImportError:\n"
                          "    raise RuntimeError('install the driver')\n"),
                         ("FC-CMD-002", "fc_driver_not_installed")),
    # a specific exception raised while handling one: the fallback's own failure
    "handling-specific": (("try:\n    import fc_driver_not_installed\nexcept ImportError:\n"
                           "    {}['fallback']\n"), ("FC-CMD-003", None)),
}


@pytest.mark.parametrize("kind", sorted(_CHAIN_SCRIPTS))
def test_a_chained_missing_module_is_the_cause(tmp_path: Path, kind: str) -> None:
    """Real chained tracebacks: an exception raised *from* a missing module it does not name
    (Django's ImproperlyConfigured for a backend whose driver is missing) is that module,
    whatever its type; one that names it, or raised merely while handling it, is so only when
    it is a generic wrapper."""
    script, (code, module) = _CHAIN_SCRIPTS[kind]
    (tmp_path / "run.py").write_text(script)
    argv = [sys.executable, "run.py"]
    done = _run(argv, tmp_path)
    assert done.returncode == 1
    assert "ModuleNotFoundError" in done.stderr
    failure = _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                    cwd=str(tmp_path)))
    assert (failure.code, failure.params.get("module")) == (code, module)


def test_a_live_missing_submodule_of_a_project_package_is_local(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """classify() of the live ModuleNotFoundError reads the same traceback files."""
    _local_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import pkg  # type: ignore[import-not-found]  # noqa: F401
    except ModuleNotFoundError as exc:
        failure = _failure(classify(exc))
    finally:
        for name in [name for name in sys.modules if name == "pkg" or name.startswith("pkg.")]:
            del sys.modules[name]
    assert (failure.code, failure.params["module"]) == ("FC-CMD-014", "pkg.helpers_missing")


@pytest.mark.parametrize(("module", "frames", "local"), [
    ("pkg.sub", ["/srv/proj/pkg/__init__.py"], True),
    ("pkg.sub.deep", ["<string>", "/srv/proj/pkg/core/x.py"], True),
    ("pkg.sub", ["/srv/proj/main.py"], False),  # the text cannot tell where pkg lives
    ("pkg.sub", ["/srv/venv/lib/python3.11/site-packages/pkg/__init__.py"], False),
    ("pkg", ["/srv/proj/pkg/tests/test_a.py"], True),
    ("erfa", ["/testbed/astropy/units/quantity_helper/erfa.py"], False),  # a file, not a package
    ("django", ["/srv/tmpq/test_project/manage.py"], False),
    ("astropy.table._column_mixins", ["/testbed/astropy/table/column.py"], False),
])
def test_the_local_module_rule(module: str, frames: list[str], local: bool) -> None:
    """is_local_module over names and traceback files (real sessions' shapes)."""
    assert is_local_module(module, frames) is local


def test_the_session_hook_turns_a_module_the_repository_provides_into_the_agents_mistake() -> None:
    """as_local_module: the caller that knows the repository decides for the rest."""
    missing = _failure(classify_text("ModuleNotFoundError", "No module named 'testapp'"))
    assert missing.code == "FC-CMD-002"
    local = as_local_module(missing, {"testapp", "manage"})
    assert (local.code, local.category, local.params["module"]) == (
        "FC-CMD-014", Category.TASK, "testapp")
    assert local.metadata["rule"] == "local-module:session"
    assert local.surface == missing.surface
    assert as_local_module(missing, {"other"}) is missing
    dotted = _failure(classify_text("ModuleNotFoundError", "No module named 'site_app.models'"))
    assert as_local_module(dotted, {"site_app"}).code == "FC-CMD-014"
    other = _failure(classify_text("RuntimeError", "boom"))
    assert as_local_module(other, {"boom"}) is other


# -- 3. configuration that arrives as a provider error ------------------------------------------

CONFIGURATION = (Category.USER, Category.ENVIRONMENT)


@pytest.mark.parametrize(("type_name", "message", "code"), [
    # real sessions (aider's chat history) and issue threads, quoted short
    ("litellm.BadRequestError", ("litellm.BadRequestError: LLM Provider NOT provided. Pass in "
     "the LLM provider you are trying to call. You passed model=gpt-4o-2024-08-06"),
     "FC-PROV-005"),
    ("openai.OpenAIError", ("The api_key client option must be set either by passing api_key "
     "to the client or by setting the OPENAI_API_KEY environment variable"), "FC-PROV-001"),
    ("litellm.NotFoundError", ("OpenAIException - Error code: 404 - {'error': {'message': 'The "
     "model `gpt-4o-2024-08-08` does not exist or you do not have access to it.', 'type': "
     "'invalid_request_error', 'param': None, 'code': 'model_not_found'}}"), "FC-PROV-005"),
    ("litellm.BadRequestError", ("OpenrouterException - Error code: 400 - {'error': {'message': "
     "'Model openai/claude-3-5-sonnet is not available', 'code': 400}}"), "FC-PROV-005"),
    ("litellm.InternalServerError", ("InternalServerError: CerebrasException - Missing "
     "credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, or set the "
     "`CEREBRAS_API_KEY` or `CEREBRAS_ADMIN_KEY` environment variable."), "FC-PROV-001"),
    ("openai.InternalServerError", ("Error code: 500 - {'error': {'message': "
     "'litellm.AuthenticationError: Missing credentials', 'type': None, 'param': None, "
     "'code': '500'}}"), "FC-PROV-001"),
    ("openai.BadRequestError", ("Error code: 400 - {'error': {'message': \"400: {'error': "
     "'Invalid model name passed in model=Lite-GPT-12'}\", 'type': 'None', 'param': 'None', "
     "'code': 400}}"), "FC-PROV-005"),
    ("litellm.InternalServerError", ("VertexAIException InternalServerError - File "
     "~/.config/gcloud/application_default_credentials.json was not found."), "FC-CFG-007"),
])
def test_configuration_errors_are_never_transient_nor_a_defect(
        type_name: str, message: str, code: str) -> None:
    """Missing credentials, an unknown or unroutable model: the user's or the environment's."""
    failure = _failure(classify_text(type_name, message, surface="llm"))
    assert failure.code == code
    assert failure.category in CONFIGURATION
    assert failure.retryability is not Retryability.RETRYABLE


def test_model_names_are_kept() -> None:
    """The model the gateway did not know is in the record (and its signature)."""
    failure = _failure(classify_text("litellm.BadRequestError", "LLM Provider NOT provided. "
                                     "Pass in the LLM provider you are trying to call. You "
                                     "passed model=gpt-4o-2024-08-06"))
    assert failure.params["model"] == "gpt-4o-2024-08-06"
    other = _failure(classify_text("litellm.BadRequestError", "LLM Provider NOT provided. "
                                   "Pass in the LLM provider you are trying to call. You passed "
                                   "model=llama2"))
    assert other.signature != failure.signature


def test_a_real_server_error_stays_transient() -> None:
    """A plain 500, an overloaded or disconnected upstream: transient as before."""
    for type_name, message in (
            ("openai.InternalServerError", ("Error code: 500 - {'error': {'message': 'The server "
             "had an error while processing your request. Sorry about that!', 'type': "
             "'server_error'}}")),
            ("litellm.InternalServerError", ("AnthropicException - Server disconnected without "
             "sending a response.. Handle with `litellm.InternalServerError`.")),
            ("openai.InternalServerError", ("Error code: 503 - {'error': {'message': 'Model "
             "gpt-x is not available right now, try again later'}}"))):
        assert _failure(classify_text(type_name, message)).category is Category.TRANSIENT


@pytest.fixture(scope="module")
def stub() -> Iterator[ProviderStub]:
    """The stub provider server for this module."""
    with ProviderStub() as server:
        yield server


@pytest.mark.parametrize(("scenario", "code"), [
    ("gw_500_credentials", FC.PROV_AUTH),
    ("gw_500_auth", FC.PROV_AUTH),
    ("gw_400_provider", FC.PROV_MODEL_NOT_FOUND),
    ("gw_400_model_name", FC.PROV_MODEL_NOT_FOUND),
    ("gw_400_not_available", FC.PROV_MODEL_NOT_FOUND),
    ("gw_404_endpoints", FC.PROV_MODEL_NOT_FOUND),
    ("gw_500_no_route", FC.PROV_MODEL_NOT_FOUND),
])
def test_a_gateways_configuration_errors_through_the_real_sdk(
        stub: ProviderStub, scenario: str, code: FC) -> None:
    """The openai SDK against a gateway's real error bodies: configuration, not an outage."""
    openai = need_module("openai")
    with openai.OpenAI(api_key="sk-test", base_url=stub.url(scenario) + "/v1", max_retries=0,
                       timeout=10.0) as client:
        try:
            client.chat.completions.create(model="gpt-4o",
                                           messages=[{"role": "user", "content": "hi"}])
        except openai.APIError as exc:
            failure = _failure(classify(exc))
    assert failure.code == code
    assert failure.category in CONFIGURATION
    assert failure.retryability is not Retryability.RETRYABLE
    body = stub_body(scenario)
    assert classify_http(int(body[0]), body[1]).code == code


def stub_body(scenario: str) -> tuple[int, object]:
    """A stub scenario's status and body, for classify_http."""
    from tests.provider_stub import SCENARIOS

    status, body, _headers = SCENARIOS[scenario]
    return status, body


def test_the_openai_sdks_own_missing_key_error_is_configuration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real SDK, no key in the environment: the user's to set, never retried unchanged."""
    openai = need_module("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    try:
        openai.OpenAI()
    except openai.OpenAIError as exc:
        failure = _failure(classify(exc))
    assert (failure.code, failure.category) == ("FC-PROV-001", Category.USER)


# -- 4. signatures: shell variables, temporary directories ----------------------------------------


def _shell(argv: list[str], cwd: Path, purpose: str = "general") -> Failure:
    done = _run(argv, cwd)
    assert done.returncode != 0
    return _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                 purpose=purpose, cwd=str(cwd)))


@pytest.mark.parametrize("purpose", PURPOSES)
def test_unbound_variables_of_a_bash_script_are_told_apart(tmp_path: Path, purpose: str) -> None:
    """``set -u`` in a bash script: FOO and BAR unbound are two signatures in every purpose."""
    bash = need_tool("bash")
    signatures = {}
    for name in ("FOO", "BAR", "FOO_BAR1", "FOO_BAR2"):
        script = tmp_path / f"s_{name}.sh"
        script.write_text(f"set -u\necho ${{{name}}}\n")
        failure = _shell([bash, script.name], tmp_path, purpose)
        assert (failure.code, failure.error_class) == ("FC-CMD-009", "unbound_variable")
        assert name in failure.message
        signatures[name] = failure.signature
    assert len(set(signatures.values())) == 4
    again = tmp_path / "again"
    again.mkdir()
    (again / "s_FOO.sh").write_text("set -u\necho ${FOO}\n")
    assert _shell([bash, "s_FOO.sh"], again, purpose).signature == signatures["FOO"]


def test_unbound_variables_under_dash_are_told_apart(tmp_path: Path) -> None:
    """dash says "parameter not set": the same rule."""
    dash = need_tool("dash")
    foo = _shell([dash, "-uc", "echo $FOO"], tmp_path)
    bar = _shell([dash, "-uc", "echo $BAR"], tmp_path)
    assert foo.error_class == bar.error_class == "unbound_variable"
    assert foo.signature != bar.signature


def test_unbound_variables_of_bash_c_are_told_apart(tmp_path: Path) -> None:
    """``bash -uc 'echo $FOO'`` (exit 127): FOO and BAR are two failures, no missing program."""
    bash = need_tool("bash")
    foo = _shell([bash, "-uc", "echo $FOO"], tmp_path)
    bar = _shell([bash, "-uc", "echo $BAR"], tmp_path)
    assert foo.error_class == "unbound_variable"
    assert foo.signature != bar.signature


def _pytest_in(project: Path, cwd: Path, target: str) -> Failure:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", ".",
            target]
    done = _run(argv, cwd)
    assert done.returncode == 1, done.stdout + done.stderr
    return _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                 purpose="test", cwd=str(cwd)))


def test_a_temp_directory_in_pytest_node_ids_never_reaches_the_signature(tmp_path: Path) -> None:
    """pytest run from the directory holding random temp directories prints node ids through
    them (``tmpab12cd_3/test_a.py::test_x``): the location and signature are the same."""
    seen = set()
    for _ in range(2):
        project = Path(tempfile.mkdtemp(dir=tmp_path))
        (project / "test_a.py").write_text("def test_x():\n    assert 1 == 2\n")
        failure = _pytest_in(project, tmp_path, f"{project.name}/test_a.py")
        assert project.name not in (failure.location or "")
        assert failure.location == "test_a.py"
        seen.add(failure.signature)
    assert len(seen) == 1


@pytest.mark.parametrize("purpose", PURPOSES)
def test_a_temp_directory_never_reaches_a_signature_whatever_the_purpose(
        tmp_path: Path, purpose: str) -> None:
    """A crash in a file under a random temp directory of the working directory: the same
    signature from two temp directories, in every purpose, through both entry points."""
    source = textwrap.dedent("""\
        import os
        open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "missing.txt"))
    """)
    commands, texts = set(), set()
    for _ in range(2):
        project = Path(tempfile.mkdtemp(dir=tmp_path))
        (project / "run.py").write_text(source)
        argv = [sys.executable, f"{project.name}/run.py"]
        done = _run(argv, tmp_path)
        failure = _failure(from_command(argv, done.returncode, done.stdout, done.stderr,
                                        purpose=purpose, cwd=str(tmp_path)))
        assert project.name not in failure.signature
        commands.add(failure.signature)
        type_name, message = _exception_line(done.stderr)
        text = _failure(classify_text(type_name, message, traceback=done.stderr))
        texts.add(text.signature)
    assert len(commands) == 1
    assert len(texts) == 1


# temp directories of every family: a random name each draw
_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=8, max_size=8)
_MKTEMP = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                  min_size=10, max_size=10)
_USER = st.from_regex(r"[a-z][a-z0-9]{1,11}", fullmatch=True)
_TEMP_DIR_FAMILIES = (
    _NAME.map(lambda n: f"/tmp/tmp{n}"),
    _MKTEMP.map(lambda n: f"/tmp/tmp.{n}"),
    st.tuples(_USER, st.integers(0, 999), st.integers(0, 99)).map(
        lambda t: f"/tmp/pytest-of-{t[0]}/pytest-{t[1]}/test_case{t[2]}"),
    st.tuples(_USER, st.integers(0, 999)).map(
        lambda t: f"/build/cache/pytest-of-{t[0]}/pytest-{t[1]}/test_case0"),
    st.tuples(_NAME, _NAME).map(lambda t: f"/private/var/folders/{t[0][:2]}/{t[1]}/T/tmp{t[0]}"),
    _NAME.map(lambda n: f"/srv/build/tmp/tmp{n}"),
    _MKTEMP.map(lambda n: f"/data/tmp.{n}"),
    st.tuples(_USER, _NAME).map(
        lambda t: f"C:\\Users\\{t[0]}\\AppData\\Local\\Temp\\tmp{t[1]}"),
    st.tuples(_USER, _NAME).map(lambda t: f"C:/Users/{t[0]}/AppData/Local/Temp/tmp{t[1]}"),
    _NAME.map(lambda n: f"%TEMP%\\tmp{n}"),
    _NAME.map(lambda n: f"$TMPDIR/tmp{n}"),
)
_RELATIVE_TEMP_DIRS = st.one_of(
    _NAME.map(lambda n: f"tmp{n}"),
    _MKTEMP.map(lambda n: f"tmp.{n}"),
    st.tuples(_USER, st.integers(0, 999), st.integers(0, 99)).map(
        lambda t: f"pytest-of-{t[0]}/pytest-{t[1]}/test_case{t[2]}"),
)


def _sep(directory: str) -> str:
    return "\\" if "\\" in directory else "/"


@settings(max_examples=300)
@given(st.data(), st.sampled_from(range(len(_TEMP_DIR_FAMILIES))), st.sampled_from([
    "open({}{}config.toml) failed", "FileNotFoundError: [Errno 2] No such file: '{}{}data.csv'",
    "{}{}test_a.py:12: AssertionError", "cannot read {}{}out.log: permission denied"]))
def test_property_a_temp_directory_never_reaches_a_normalized_message(
        data: st.DataObject, family: int, template: str) -> None:
    """Two temp directories of one family normalize alike in any message, and neither name
    is left in it."""
    first = data.draw(_TEMP_DIR_FAMILIES[family])
    second = data.draw(_TEMP_DIR_FAMILIES[family])
    one = normalize_message(template.format(first, _sep(first)))
    assert one == normalize_message(template.format(second, _sep(second)))
    assert "<tmp>" in one


@settings(max_examples=200)
@given(_RELATIVE_TEMP_DIRS, st.sampled_from(["x.py", "pkg/mod.py", "tests/test_a.py"]))
def test_property_a_relative_location_loses_its_temp_directory(temp: str, inner: str) -> None:
    """A location through a temp directory is the path inside it."""
    assert strip_temp_dir(f"{temp}/{inner}") == inner


@pytest.mark.parametrize("location", [
    "src/app.py", "tmp/scratch.py", "tests/tmp/test_x.py", "pkg/tmpl.py", "tmp_results_v2/x.py"])
def test_a_projects_own_paths_are_kept(location: str) -> None:
    """A project's own tmp/ folder is no temporary directory."""
    assert strip_temp_dir(location) == location


@settings(max_examples=60, deadline=None)
@given(_NAME, _NAME, st.sampled_from(PURPOSES))
def test_property_a_temp_directory_never_reaches_a_command_signature(
        first: str, second: str, purpose: str) -> None:
    """from_command over a traceback and a compiler diagnostic through random temp
    directories (absolute, and relative to the working directory): one signature."""

    def signature(name: str, absolute: bool) -> str:
        base = f"/tmp/tmp{name}" if absolute else f"tmp{name}"
        stderr = (f'Traceback (most recent call last):\n  File "{base}/app/main.py", line 3, '
                  f'in <module>\n    load()\nFileNotFoundError: [Errno 2] No such file or '
                  f"directory: '{base}/app/settings.toml'\n"
                  f"{base}/src/x.c:4:5: error: 'foo' undeclared (first use in this "
                  "function)\n")
        failure = from_command(["sh", "-c", "python app/main.py && cc src/x.c"], 1, "", stderr,
                               purpose=purpose, cwd="/tmp")
        assert isinstance(failure, Failure)
        return failure.signature

    for absolute in (True, False):
        assert signature(first, absolute) == signature(second, absolute)
