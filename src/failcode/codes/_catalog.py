"""failcode's own catalog (prefix FC): the codes its mappers emit.

Codes are never deleted or reused: retire one with ``retired=True`` (and ``superseded_by``) and
declare a new one. ``failcode codes lock`` records new codes in ``fc-codes.lock.json`` beside this
file; ``failcode codes check`` fails when the enumeration and the lock disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from failcode.codes._registry import Catalog, CodeEnum, CodeSpec
from failcode.record._axes import Category, Kind, Retryability, Severity

__all__ = ["FC", "FC_AREAS", "FC_CATALOG", "FC_LOCK_PATH"]

FC_AREAS: Final = {
    "PROV": "LLM provider APIs: auth, quota, rate limits, models, context, outages",
    "CMD": "shell commands: missing programs, modules and packages, exits, timeouts",
    "BUILD": "compilers, linkers and build tools",
    "TEST": "test runners and assertions",
    "LINT": "linters and type checkers",
    "GIT": "git: merges, patches, worktrees",
    "OS": "the operating system: files, permissions, disk, memory, signals, network",
    "CFG": "configuration files and settings",
    "POL": "safety, security and permission policy",
    "LIFE": "pipeline lifecycle: phases, verification, stops",
    "STORE": "the failure event store",
    "SVC": "the failcode service",
    "SYS": "failcode itself and failures nothing else explains",
    "DATA": "inputs and outputs that break their contract",
}

FC_LOCK_PATH: Final = Path(__file__).with_name("fc-codes.lock.json")

_K, _C, _R, _S = Kind, Category, Retryability, Severity
_V = "0.1.0"


class FC(CodeEnum):
    """failcode's own codes: ``FC.PROV_RATE_LIMIT.failure(surface=..., params=...)``."""

    # -- PROV -------------------------------------------------------------------------------
    PROV_AUTH = CodeSpec(
        code="FC-PROV-001", slug="provider-auth", kind=_K.PROVIDER_ERROR, category=_C.USER,
        error_class="auth", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The API credentials for {provider} were rejected.",
        optional=("provider",),
        variants={"message.without.provider": "The provider rejected the API credentials.",
                  "remedy.without.provider":
                      "Check the provider's API key in your environment or configuration, then "
                      "retry."},
        remedy="Check the API key for {provider} in your environment or configuration, then retry.",
        impact="No request to this provider can succeed until the credentials change.",
        example="An OpenAI call with a revoked key returns 401 invalid_api_key.",
        example_params={"provider": "OpenAI"}, since=_V)
    PROV_PERMISSION = CodeSpec(
        code="FC-PROV-002", slug="provider-permission-denied", kind=_K.PROVIDER_ERROR,
        category=_C.USER, error_class="permission_denied",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="Access to the requested resource was denied by {provider}.",
        optional=("provider",),
        variants={"message.without.provider":
                      "The provider denied access to the requested resource.",
                  "remedy.without.provider":
                      "Grant the key access to this model or project in the provider's console, "
                      "or use a key that has it."},
        remedy="Grant the key access to this model or project in the {provider} console, "
               "or use a key that has it.",
        impact="Requests for this resource fail until the key's permissions change.",
        example="A 403 permission_error for a model the organization has not enabled.",
        example_params={"provider": "Anthropic"}, since=_V)
    PROV_RATE_LIMIT = CodeSpec(
        code="FC-PROV-003", slug="provider-rate-limit", kind=_K.PROVIDER_ERROR,
        category=_C.TRANSIENT, error_class="rate_limit", retryability=_R.RETRYABLE,
        message="The request was rate-limited by {provider}.",
        optional=("provider",),
        variants={"message.without.provider": "The provider rate-limited the request."},
        impact="The request is delayed; repeated limits slow the whole session.",
        example="A 429 rate_limit_error with a Retry-After header.",
        example_params={"provider": "Anthropic"}, since=_V)
    PROV_QUOTA = CodeSpec(
        code="FC-PROV-004", slug="provider-quota-exceeded", kind=_K.PROVIDER_ERROR,
        category=_C.USER, error_class="quota_exceeded", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The {provider} account has run out of quota or credit.",
        optional=("provider",),
        variants={"message.without.provider":
                      "The provider account has run out of quota or credit.",
                  "remedy.without.provider":
                      "Add credit or raise the usage limit in the provider's billing settings, "
                      "or switch to another provider."},
        remedy="Add credit or raise the usage limit in the {provider} billing settings, "
               "or switch to another provider.",
        impact="Every request to this provider fails until billing changes; retrying wastes time.",
        example="A 429 insufficient_quota from OpenAI, or Anthropic's usage limit reached.",
        example_params={"provider": "OpenAI"}, since=_V)
    PROV_MODEL_NOT_FOUND = CodeSpec(
        code="FC-PROV-005", slug="model-not-found", kind=_K.MODEL_CAPABILITY_ERROR,
        category=_C.ENVIRONMENT, error_class="model_not_found",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The model {model} is not served by {provider}.",
        optional=("model", "provider"),
        variants={"message.without.provider": "The provider does not serve the model {model}.",
                  "message.without.model": "The requested model is not served by {provider}.",
                  "message.without.model.provider":
                      "The provider does not serve the requested model."},
        remedy="Check the model name for typos or pick a model the account can use.",
        impact="Requests for this model fail until the configured model changes.",
        example="A 404 not_found_error for model 'claude-3-opus-latest-x'.",
        example_params={"provider": "Anthropic", "model": "claude-3-opus-latest-x"}, since=_V)
    PROV_CONTEXT_TOO_LARGE = CodeSpec(
        code="FC-PROV-006", slug="context-too-large", kind=_K.CONTEXT_ERROR, category=_C.TASK,
        error_class="context_too_large", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The prompt exceeds the context window of {model}.",
        optional=("model",),
        variants={"message.without.model": "The prompt exceeds the model's context window."},
        impact="The same request fails every time; the context must be compacted or split.",
        example="A 400 context_length_exceeded: 'maximum context length is 128000 tokens'.",
        example_params={"model": "gpt-4o"}, since=_V)
    PROV_TOOL_USE_UNSUPPORTED = CodeSpec(
        code="FC-PROV-007", slug="tool-use-unsupported", kind=_K.MODEL_CAPABILITY_ERROR,
        category=_C.ENVIRONMENT, error_class="tool_use_unsupported",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The model {model} does not support tool use.",
        optional=("model",),
        variants={"message.without.model": "The selected model does not support tool use."},
        remedy="Select a model with tool or function calling support for this task.",
        impact="Agent steps that call tools cannot run on this model.",
        example="A 400 'tools is not supported with this model'.",
        example_params={"model": "o1-mini"}, since=_V)
    PROV_BAD_REQUEST = CodeSpec(
        code="FC-PROV-008", slug="provider-bad-request", kind=_K.PROVIDER_ERROR,
        category=_C.DEFECT, error_class="bad_request", retryability=_R.NOT_RETRYABLE,
        message="The request was rejected as invalid by {provider}.",
        optional=("provider",),
        variants={"message.without.provider": "The provider rejected the request as invalid."},
        impact="The request is malformed; sending it again fails the same way.",
        example="A 400 invalid_request_error: 'Unknown parameter: temprature'.",
        example_params={"provider": "OpenAI"}, since=_V)
    PROV_OVERLOADED = CodeSpec(
        code="FC-PROV-009", slug="provider-overloaded", kind=_K.PROVIDER_ERROR,
        category=_C.TRANSIENT, error_class="overloaded", retryability=_R.RETRYABLE,
        message="The provider {provider} is overloaded.",
        optional=("provider",),
        variants={"message.without.provider": "The provider is overloaded."},
        impact="Requests are delayed until the provider recovers.",
        example="An Anthropic 529 overloaded_error.",
        example_params={"provider": "Anthropic"}, since=_V)
    PROV_SERVER_ERROR = CodeSpec(
        code="FC-PROV-010", slug="provider-server-error", kind=_K.PROVIDER_ERROR,
        category=_C.TRANSIENT, error_class="server_error", retryability=_R.RETRYABLE,
        message="The provider {provider} failed with a server error.",
        optional=("provider",),
        variants={"message.without.provider": "The provider failed with a server error."},
        impact="The request is delayed; a long outage blocks the session.",
        example="A 500 internal_server_error or a 502 from the provider's gateway.",
        example_params={"provider": "OpenAI"}, since=_V)
    PROV_TIMEOUT = CodeSpec(
        code="FC-PROV-011", slug="provider-timeout", kind=_K.PROVIDER_ERROR,
        category=_C.TRANSIENT, error_class="timeout", retryability=_R.RETRYABLE,
        message="The request to {provider} timed out.",
        optional=("provider",),
        variants={"message.without.provider": "The request to the provider timed out."},
        impact="The request is delayed; repeated timeouts slow the session.",
        example="httpx.ReadTimeout while waiting for a completion.",
        example_params={"provider": "OpenAI"}, since=_V)
    PROV_CONNECTION = CodeSpec(
        code="FC-PROV-012", slug="provider-connection", kind=_K.PROVIDER_ERROR,
        category=_C.TRANSIENT, error_class="connection", retryability=_R.RETRYABLE,
        message="Could not connect to {provider}.",
        optional=("provider",),
        variants={"message.without.provider": "Could not connect to the provider."},
        impact="No request reaches the provider until the network recovers.",
        example="Connection refused, reset, or a DNS failure for the API host.",
        example_params={"provider": "Anthropic"}, since=_V)
    PROV_CONTENT_FILTERED = CodeSpec(
        code="FC-PROV-013", slug="content-filtered", kind=_K.POLICY_ERROR, category=_C.USER,
        error_class="content_filtered", retryability=_R.NOT_RETRYABLE,
        message="The request was refused under the content policy of {provider}.",
        optional=("provider",),
        variants={"message.without.provider":
                      "The provider refused the request under its content policy."},
        remedy="Rephrase or remove the content the provider's policy flags; retrying the same "
               "request is refused again.",
        impact="The step cannot proceed with this request.",
        example="An Azure OpenAI 400 content_filter result.",
        example_params={"provider": "Azure OpenAI"}, since=_V)
    PROV_MALFORMED_OUTPUT = CodeSpec(
        code="FC-PROV-014", slug="malformed-model-output", kind=_K.AGENT_ERROR,
        category=_C.TRANSIENT, error_class="malformed_output", retryability=_R.RETRYABLE,
        message="The model's output does not parse as {expected}.",
        impact="The step's result cannot be used; sampling again usually fixes it.",
        example="A tool call whose arguments are not valid JSON.",
        example_params={"expected": "JSON"}, since=_V)

    # -- OS ---------------------------------------------------------------------------------
    OS_PERMISSION_DENIED = CodeSpec(
        code="FC-OS-001", slug="os-permission-denied", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="permission_denied",
        message="Access to {path} was denied.",
        remedy="Give the agent's user access to {path}, or point it at a path it may use.",
        optional=("path",),
        variants={"message.without.path": "Access to a file or directory was denied.",
                  "remedy.without.path": "Give the agent's user access to the path, or point "
                                         "it at a path it may use."},
        impact="Every operation on this path fails until its permissions change.",
        example="PermissionError: [Errno 13] Permission denied: 'build/out.log'.",
        example_params={"path": "build/out.log"}, since=_V)
    OS_FILE_NOT_FOUND = CodeSpec(
        code="FC-OS-002", slug="file-not-found", kind=_K.TOOL_ERROR, category=_C.TASK,
        error_class="file_not_found", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The file or directory {path} does not exist.",
        optional=("path",),
        variants={"message.without.path": "A file or directory the step used does not exist."},
        impact="The step used a path that does not exist; it must use another.",
        example="FileNotFoundError: [Errno 2] No such file or directory: 'src/mian.py'.",
        example_params={"path": "src/mian.py"}, since=_V)
    OS_DISK_FULL = CodeSpec(
        code="FC-OS-003", slug="disk-full", kind=_K.SYSTEM_ERROR, category=_C.ENVIRONMENT,
        error_class="disk_full", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="No space left on the device.",
        remedy="Free disk space (build caches, old worktrees, logs) and retry.",
        impact="Nothing can be written until space is freed.",
        example="OSError: [Errno 28] No space left on device.",
        since=_V)
    OS_OUT_OF_MEMORY = CodeSpec(
        code="FC-OS-004", slug="out-of-memory", kind=_K.SYSTEM_ERROR, category=_C.ENVIRONMENT,
        error_class="out_of_memory", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The process ran out of memory.",
        remedy="Reduce the work's memory use (fewer parallel jobs, smaller inputs) or give "
               "the machine more memory.",
        impact="The step cannot finish on this machine as configured.",
        example="MemoryError, or a build killed by the kernel's OOM killer.",
        since=_V)
    OS_KILLED = CodeSpec(
        code="FC-OS-005", slug="process-killed", kind=_K.SYSTEM_ERROR,
        category=_C.ENVIRONMENT, error_class="killed", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The process {program} was killed by signal {signal}.",
        remedy="Check the system log for the reason (often the OOM killer or a supervisor).",
        impact="The step ended without a result.",
        example="A compiler killed by SIGKILL (exit 137).",
        example_params={"program": "cc1plus", "signal": 9}, since=_V)
    OS_TIMEOUT = CodeSpec(
        code="FC-OS-006", slug="operation-timeout", kind=_K.TOOL_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The operation {operation} timed out.",
        impact="The step is delayed; repeated timeouts escalate.",
        example="TimeoutError while waiting for a local service.",
        example_params={"operation": "socket.connect"}, since=_V)
    OS_CONNECTION = CodeSpec(
        code="FC-OS-007", slug="connection-failed", kind=_K.TOOL_ERROR,
        category=_C.TRANSIENT, error_class="connection", retryability=_R.RETRYABLE,
        message="The connection for {operation} failed.",
        impact="The step is delayed until the peer is reachable.",
        example="ConnectionRefusedError: [Errno 111] Connection refused.",
        example_params={"operation": "http.get"}, since=_V)

    # -- CMD --------------------------------------------------------------------------------
    CMD_NOT_FOUND = CodeSpec(
        code="FC-CMD-001", slug="command-not-found", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="command_not_found",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The program {program} is not installed or not on PATH.",
        remedy="Install {program} or add its directory to PATH, then retry.",
        impact="Every step that runs this program fails until it is installed.",
        example="bash: cargo: command not found (exit 127).",
        example_params={"program": "cargo"}, since=_V)
    CMD_MISSING_MODULE = CodeSpec(
        code="FC-CMD-002", slug="missing-module", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="missing_module",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The module {module} is not installed.",
        remedy="Install the package that provides {module} in the environment the agent uses.",
        optional=("module",),
        variants={"message.without.module": "A module the code imports is not installed.",
                  "remedy.without.module": "Install the missing package in the environment the "
                                           "agent uses."},
        impact="Code that imports this module cannot run.",
        example="ModuleNotFoundError: No module named 'requests'.",
        example_params={"module": "requests"}, since=_V)
    CMD_FAILED = CodeSpec(
        code="FC-CMD-003", slug="command-failed", kind=_K.COMMAND_ERROR, category=_C.TASK,
        error_class="unknown", retryability=_R.UNKNOWN,
        message="The command {program} exited with status {exit_code}.",
        impact="The step's command did not do what it was meant to.",
        example="A general-purpose shell command exiting 1.",
        example_params={"program": "sed", "exit_code": 1}, since=_V)
    CMD_DEBUG_FAILED = CodeSpec(
        code="FC-CMD-005", slug="debug-failed", kind=_K.DEBUG_ERROR, category=_C.TASK,
        error_class="debug_failed",
        message="The debugging command {program} failed.",
        impact="The diagnosis the step needed was not produced.",
        example="gdb could not attach to the process.",
        example_params={"program": "gdb"}, since=_V)
    CMD_DEBUG_TIMEOUT = CodeSpec(
        code="FC-CMD-006", slug="debug-timeout", kind=_K.DEBUG_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The debugging command {program} was stopped after its time limit.",
        impact="The diagnosis is delayed; a debug run that always times out must change.",
        example="A reproduction script hanging under a debugger.",
        example_params={"program": "python"}, since=_V)
    CMD_DOCTOR_FAILED = CodeSpec(
        code="FC-CMD-007", slug="doctor-check-failed", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="check_failed",
        message="The environment check {program} failed.",
        remedy="Fix what the check reports (see the detail), then run the check again.",
        impact="The environment is not ready for the work that depends on it.",
        example="A doctor step running `node --version` that exits non-zero.",
        example_params={"program": "node"}, since=_V)
    CMD_DOCTOR_TIMEOUT = CodeSpec(
        code="FC-CMD-008", slug="doctor-timeout", kind=_K.ENV_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The environment check {program} was stopped after its time limit.",
        impact="The environment's state is unknown until the check finishes.",
        example="A network check hanging on a DNS lookup.",
        example_params={"program": "curl"}, since=_V)
    CMD_TIMEOUT = CodeSpec(
        code="FC-CMD-004", slug="command-timeout", kind=_K.COMMAND_ERROR,
        category=_C.TRANSIENT, error_class="timeout", retryability=_R.RETRYABLE,
        message="The command {program} was stopped after its time limit.",
        impact="The step is delayed; a command that always times out must change.",
        example="A shell command killed after the agent's 120 s limit.",
        example_params={"program": "pip"}, since=_V)

    CMD_DIAGNOSTIC = CodeSpec(
        code="FC-CMD-009", slug="command-diagnostic", kind=_K.COMMAND_ERROR, category=_C.TASK,
        error_class="unknown", retryability=_R.UNKNOWN,
        message="The command {program} failed: {problem}.",
        impact="The step's command did not do what it was meant to; the problem names why.",
        example="A general-purpose `gcc` run whose link step finds no definition of a symbol.",
        example_params={"program": "gcc", "problem": "undefined reference to foo"}, since=_V)
    # A package manager's own verdict, whatever the command's purpose: the package (or the
    # version asked for) does not exist in the sources the installer reads; it exists but could
    # not be installed (its build failed, or its requirements conflict); or the sources could
    # not be reached at all (environment, not transient: an agent's sandbox without network or
    # with a wrong proxy stays so, and retrying the same install only wastes steps).
    CMD_PACKAGE_NOT_FOUND = CodeSpec(
        code="FC-CMD-010", slug="package-not-found", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="package_not_found",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The package {package} could not be found by {program}.",
        remedy="Check the name and version of {package} and the package sources {program} "
               "reads (for apt-get, refresh them with apt-get update), then install it again.",
        optional=("package",),
        variants={"message.without.package":
                      "A requested package could not be found by {program}.",
                  "remedy.without.package":
                      "Check the requested names and versions and the package sources {program} "
                      "reads, then install again."},
        impact="Nothing that needs this package can be built or run until it is installed.",
        example="apt-get install llvm-dev: E: Unable to locate package llvm-dev (exit 100).",
        example_params={"package": "llvm-dev", "program": "apt-get"}, since="0.2.0")
    CMD_PACKAGE_INSTALL_FAILED = CodeSpec(
        code="FC-CMD-011", slug="package-install-failed", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="package_install_failed",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The package {package} could not be installed by {program}.",
        remedy="Resolve what the detail reports (requirements whose versions conflict, or a "
               "compiler, header or library the build of {package} needs), then install it "
               "again.",
        optional=("package",),
        variants={"message.without.package":
                      "The requested packages could not be installed by {program}.",
                  "remedy.without.package":
                      "Resolve what the detail reports (requirements whose versions conflict, "
                      "or a compiler, header or library a build needs), then install again."},
        impact="Nothing that needs this package can be built or run until it is installed.",
        example="pip: ERROR: Failed building wheel for psycopg2 (a C header it needs is "
                "missing).",
        example_params={"package": "psycopg2", "program": "pip"}, since="0.2.0")
    CMD_PACKAGE_SOURCE_UNREACHABLE = CodeSpec(
        code="FC-CMD-012", slug="package-source-unreachable", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="package_source_unreachable",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The package sources of {program} could not be reached.",
        remedy="Check the network connection, the proxy settings and the index, registry or "
               "mirror {program} is configured to use, then install again.",
        impact="No package can be installed until the sources are reachable; the package "
               "asked for may well exist.",
        example="npm error code ENOTFOUND: getaddrinfo ENOTFOUND registry.npmjs.org.",
        example_params={"program": "npm"}, since="0.2.0")
    CMD_INCOMPATIBLE_DEPENDENCY = CodeSpec(
        code="FC-CMD-013", slug="incompatible-dependency", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="incompatible_dependency",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The installed module {module} does not provide {name}.",
        remedy="Install the versions the importing code expects (of the package that provides "
               "{module}, or of Python), or change the import to what the installed {module} "
               "provides.",
        impact="Code that imports this name cannot run with the packages installed.",
        example="ImportError: cannot import name 'formatargspec' from 'inspect' "
                "(/usr/lib/python3.11/inspect.py): an old wrapt on Python 3.11.",
        example_params={"module": "inspect", "name": "formatargspec"}, since="0.2.0")
    CMD_LOCAL_MODULE_MISSING = CodeSpec(
        code="FC-CMD-014", slug="local-module-missing", kind=_K.COMMAND_ERROR,
        category=_C.TASK, error_class="missing_module",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The module {module}, which the project itself would provide, does not exist.",
        remedy="Create {module} in the project, correct the name the code imports, or run from "
               "the directory that makes the project's packages importable.",
        impact="Code that imports this module cannot run; installing packages does not help.",
        example="ModuleNotFoundError: No module named 'tests.helpers' (the project has no "
                "tests/helpers.py).",
        example_params={"module": "tests.helpers"}, since="0.2.0")

    # -- BUILD, TEST, LINT, GIT -------------------------------------------------------------
    BUILD_FAILED = CodeSpec(
        code="FC-BUILD-001", slug="build-failed", kind=_K.BUILD_ERROR, category=_C.TASK,
        error_class="build_failed",
        message="The build with {program} failed.",
        impact="Nothing downstream of the build can run until the code compiles.",
        example="gcc: error: 'foo' undeclared.",
        example_params={"program": "gcc"}, since=_V)
    BUILD_TIMEOUT = CodeSpec(
        code="FC-BUILD-002", slug="build-timeout", kind=_K.BUILD_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The build with {program} was stopped after its time limit.",
        impact="The build's result is unknown; a build that always times out must change.",
        example="A cold cargo build killed after 600 s.",
        example_params={"program": "cargo"}, since=_V)
    BUILD_DIAGNOSTIC = CodeSpec(
        code="FC-BUILD-003", slug="build-diagnostic", kind=_K.BUILD_ERROR, category=_C.TASK,
        error_class="build_failed",
        message="The build with {program} failed: {problem}.",
        impact="Nothing downstream of the build can run until the named problem is fixed.",
        example="ld: undefined reference to `foo'; rustc E0425 cannot find value `foo`.",
        example_params={"program": "gcc", "problem": "undefined reference to foo"}, since=_V)
    TEST_FAILED = CodeSpec(
        code="FC-TEST-001", slug="test-failed", kind=_K.TEST_ERROR, category=_C.TASK,
        error_class="test_failed",
        message="The tests run by {program} failed.",
        impact="The change is not verified; the failing tests show what to fix.",
        example="pytest: 1 failed, 12 passed.",
        example_params={"program": "pytest"}, since=_V)
    TEST_TIMEOUT = CodeSpec(
        code="FC-TEST-002", slug="test-timeout", kind=_K.TEST_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The tests run by {program} were stopped after their time limit.",
        impact="The change is not verified; a hanging test must be found.",
        example="A pytest run hanging on a deadlocked test.",
        example_params={"program": "pytest"}, since=_V)
    TEST_CASE_FAILED = CodeSpec(
        code="FC-TEST-003", slug="test-case-failed", kind=_K.TEST_ERROR, category=_C.TASK,
        error_class="assertion_failed",
        message="The test {test} failed.",
        impact="The change is not verified; this test shows what to fix.",
        example="pytest: FAILED tests/test_api.py::test_login - assert 401 == 200.",
        example_params={"test": "tests/test_api.py::test_login"}, since=_V)
    LINT_FAILED = CodeSpec(
        code="FC-LINT-001", slug="static-analysis-failed", kind=_K.STATIC_ANALYSIS_ERROR,
        category=_C.TASK, error_class="lint_violation",
        message="Static analysis with {program} reported problems.",
        impact="The change does not meet the project's checks.",
        example="ruff: F401 'os' imported but unused.",
        example_params={"program": "ruff"}, since=_V)
    LINT_TIMEOUT = CodeSpec(
        code="FC-LINT-002", slug="static-analysis-timeout", kind=_K.STATIC_ANALYSIS_ERROR,
        category=_C.TRANSIENT, error_class="timeout", retryability=_R.RETRYABLE,
        message="Static analysis with {program} was stopped after its time limit.",
        impact="The change's checks are incomplete.",
        example="mypy on a large code base killed after its limit.",
        example_params={"program": "mypy"}, since=_V)
    GIT_MERGE_CONFLICT = CodeSpec(
        code="FC-GIT-001", slug="merge-conflict", kind=_K.MERGE_ERROR, category=_C.TASK,
        error_class="patch_conflict",
        message="Merging produced a conflict in {path}.",
        impact="The workspaces cannot be combined until the conflict is resolved.",
        example="CONFLICT (content): Merge conflict in src/main.cpp.",
        example_params={"path": "src/main.cpp"}, since=_V)

    GIT_MERGE_TIMEOUT = CodeSpec(
        code="FC-GIT-002", slug="merge-timeout", kind=_K.MERGE_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="The merge with {program} was stopped after its time limit.",
        impact="The workspaces are not combined yet.",
        example="A git merge waiting on a hook that hangs.",
        example_params={"program": "git"}, since=_V)

    GIT_MERGE_FAILED = CodeSpec(
        code="FC-GIT-003", slug="merge-failed", kind=_K.MERGE_ERROR, category=_C.TASK,
        error_class="merge_failed",
        message="The merge with {program} failed.",
        impact="The workspaces are not combined; the detail shows what git or patch refused.",
        example="git apply: error: corrupt patch at line 14.",
        example_params={"program": "git"}, since=_V)

    GIT_REMOTE_UNREACHABLE = CodeSpec(
        code="FC-GIT-004", slug="git-remote-unreachable", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="remote_unreachable",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The git remote {remote} does not exist or cannot be reached.",
        remedy="Check the remote's URL (git remote -v), the network to it, and the "
               "credentials the agent's user has for it.",
        optional=("remote",),
        variants={"message.without.remote": "A git remote does not exist or cannot be "
                                            "reached."},
        impact="Nothing is pushed or fetched until the remote is reachable.",
        example="fatal: 'origin' does not appear to be a git repository.",
        example_params={"remote": "origin"}, since=_V)

    # -- CFG --------------------------------------------------------------------------------
    CFG_INVALID_VALUE = CodeSpec(
        code="FC-CFG-001", slug="config-invalid-value", kind=_K.PROJECT_ERROR,
        category=_C.USER, error_class="invalid_value", retryability=_R.RETRYABLE_AFTER_CHANGE,
        severity=_S.FATAL,
        message="In {file} line {line}, {key} = {value} is invalid; expected {expected}.",
        remedy="Set {key} in {file} to a value within {expected}.",
        impact="The agent refuses to start with a setting it would otherwise clamp silently.",
        example="attempts = 0 where an integer from 1 to 100 is allowed.",
        example_params={"file": "failcode.toml", "line": 4, "key": "retry.attempts",
                        "value": "0", "expected": "an integer from 1 to 100"}, since=_V)
    CFG_UNKNOWN_KEY = CodeSpec(
        code="FC-CFG-002", slug="config-unknown-key", kind=_K.PROJECT_ERROR,
        category=_C.USER, error_class="unknown_key", retryability=_R.RETRYABLE_AFTER_CHANGE,
        severity=_S.FATAL,
        message="In {file} line {line}, the key {key} is unknown; {hint}.",
        remedy="Remove or rename {key} in {file}; {hint}.",
        impact="A misspelt setting would otherwise be ignored and its default silently used.",
        example="retry.default.atempts = 3 (a typo of attempts).",
        example_params={"file": "failcode.toml", "line": 3, "key": "retry.default.atempts",
                        "hint": "did you mean retry.default.attempts?"}, since=_V)
    CFG_UNKNOWN_TABLE = CodeSpec(
        code="FC-CFG-003", slug="config-unknown-table", kind=_K.PROJECT_ERROR,
        category=_C.USER, error_class="unknown_table", retryability=_R.RETRYABLE_AFTER_CHANGE,
        severity=_S.FATAL,
        message="In {file} line {line}, the table [{table}] is unknown; {hint}.",
        remedy="Remove or rename the table [{table}] in {file}; {hint}.",
        impact="A misspelt table would otherwise be ignored with every setting in it.",
        example="[budjet] instead of [budget].",
        example_params={"file": "failcode.toml", "line": 7, "table": "budjet",
                        "hint": "did you mean budget?"}, since=_V)
    CFG_BROKEN_TOML = CodeSpec(
        code="FC-CFG-004", slug="config-broken-toml", kind=_K.PROJECT_ERROR,
        category=_C.USER, error_class="broken_toml", retryability=_R.RETRYABLE_AFTER_CHANGE,
        severity=_S.FATAL,
        message="In {file} line {line}, the file is not valid TOML: {problem}.",
        remedy="Fix the TOML syntax of {file} at line {line} ({problem}).",
        impact="No setting of the file can be read, so none is applied.",
        example="An array missing its closing bracket.",
        example_params={"file": "failcode.toml", "line": 4,
                        "problem": "Unclosed array at column 1"}, since=_V)
    CFG_WRONG_TYPE = CodeSpec(
        code="FC-CFG-005", slug="config-wrong-type", kind=_K.PROJECT_ERROR,
        category=_C.USER, error_class="wrong_type", retryability=_R.RETRYABLE_AFTER_CHANGE,
        severity=_S.FATAL,
        message="In {file} line {line}, {key} = {value} has the wrong type; expected {expected}.",
        remedy="Set {key} in {file} to {expected}.",
        impact="The agent refuses to start with a setting it cannot read as intended.",
        example='attempts = "3" (a string) where an integer is expected.',
        example_params={"file": "failcode.toml", "line": 4, "key": "retry.default.attempts",
                        "value": '"3"', "expected": "an integer from 1 to 100"}, since=_V)
    CFG_MISSING_ENV_VAR = CodeSpec(
        code="FC-CFG-006", slug="missing-env-var", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="missing_env_var",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The environment variable {name} is not set.",
        remedy="Set {name} in the environment the agent runs in, then retry.",
        impact="Every step that needs this setting or credential fails until it is set.",
        example="OPENAI_API_KEY unset when the agent starts.",
        example_params={"name": "OPENAI_API_KEY"}, since=_V)
    CFG_MISSING_CREDENTIALS_FILE = CodeSpec(
        code="FC-CFG-007", slug="missing-credentials-file", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="missing_credentials_file",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The credentials file {path} does not exist or cannot be read.",
        remedy="Create {path} with the credentials (or make it readable), then retry.",
        impact="Every step that authenticates with this file fails until it exists.",
        example="~/.aws/credentials missing on a fresh machine.",
        example_params={"path": "~/.aws/credentials"}, since=_V)
    CFG_UNWRITABLE_DIR = CodeSpec(
        code="FC-CFG-008", slug="unwritable-directory", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="unwritable_directory",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The directory {path} does not exist or is not writable.",
        remedy="Create {path} or give the agent's user write access to it, then retry.",
        impact="Every step that writes there (logs, artifacts, workspaces) fails.",
        example="An artifacts directory owned by root.",
        example_params={"path": "artifacts"}, since=_V)

    # -- LIFE: agent boundary (the pipeline contract's AgentError codes), pipeline lifecycle
    LIFE_AGENT_TIMEOUT = CodeSpec(
        code="FC-LIFE-001", slug="agent-timeout", kind=_K.AGENT_ERROR, category=_C.TRANSIENT,
        error_class="timeout", retryability=_R.RETRYABLE,
        message="An agent call exceeded its deadline: {message}.",
        impact="The step has no result; it is retried only while the retry policy allows.",
        example="A planner agent's bounded call ran past its 30-second deadline.",
        example_params={"message": "planner did not answer within 30 s"}, since=_V)
    LIFE_AGENT_TRANSIENT = CodeSpec(
        code="FC-LIFE-002", slug="agent-transient", kind=_K.AGENT_ERROR, category=_C.TRANSIENT,
        error_class="transient", retryability=_R.RETRYABLE,
        message="An agent call failed transiently: {message}.",
        impact="The step has no result yet; the same request may succeed after a delay.",
        example="An executor agent's backend answered 503 for a moment.",
        example_params={"message": "backend briefly unavailable"}, since=_V)
    LIFE_AGENT_CONTRACT = CodeSpec(
        code="FC-LIFE-003", slug="agent-contract-violation", kind=_K.AGENT_ERROR,
        category=_C.TASK, error_class="agent_contract",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="An agent's input or output broke its contract: {message}.",
        impact="The data must be corrected; the unchanged request fails again.",
        example="An agent returned a confidence of 1.7 where [0, 1] is required.",
        example_params={"message": "confidence 1.7 is above 1"}, since=_V)
    LIFE_AGENT_FATAL = CodeSpec(
        code="FC-LIFE-004", slug="agent-fatal", kind=_K.AGENT_ERROR, category=_C.DEFECT,
        error_class="fatal", retryability=_R.NOT_RETRYABLE, severity=_S.FATAL,
        message="An agent reported that execution cannot safely continue: {message}.",
        impact="The run aborts; nothing after this step runs.",
        example="A tool agent found its workspace in an inconsistent state.",
        example_params={"message": "workspace state is inconsistent"}, since=_V)
    LIFE_AGENT_SECURITY = CodeSpec(
        code="FC-LIFE-005", slug="agent-security", kind=_K.POLICY_ERROR, category=_C.USER,
        error_class="security", retryability=_R.NOT_RETRYABLE, severity=_S.FATAL,
        message="A security policy declared critical stopped an agent call: {message}.",
        remedy="Review the refused action and the pipeline's security policy before running "
               "again.",
        impact="The run aborts at the workflow-graph boundary; no later step runs.",
        example="An agent tried to read a credentials file the policy forbids.",
        example_params={"message": "read of a forbidden path refused"}, since=_V)
    LIFE_INVALID_TRANSITION = CodeSpec(
        code="FC-LIFE-006", slug="invalid-phase-transition", kind=_K.SCHEDULER_ERROR,
        category=_C.DEFECT, error_class="invalid_transition",
        retryability=_R.NOT_RETRYABLE,
        message="The pipeline tried to move from phase {from_phase} to {to_phase}, which its "
                "phase graph does not allow.",
        impact="The orchestration is wrong; the run stops before an unchecked phase runs.",
        example="A controller asked to go from PLAN straight to VERIFY.",
        example_params={"from_phase": "plan", "to_phase": "verify"}, since=_V)
    LIFE_TRACE_INVALID = CodeSpec(
        code="FC-LIFE-007", slug="invalid-trace", kind=_K.USER_ERROR, category=_C.USER,
        error_class="trace_invalid", retryability=_R.NOT_RETRYABLE,
        message="The pipeline trace is invalid: {problem}.",
        remedy="Record the run again or correct the trace ({problem}); a replay needs a valid "
               "trace.",
        impact="The run cannot be replayed or audited from this trace.",
        example="A trace whose model call has a temperature of 0.7 but claims to be replayable.",
        example_params={"problem": "event 3: replayable model call with temperature 0.7"},
        since=_V)
    LIFE_REPLAY_TRACE_MISSING = CodeSpec(
        code="FC-LIFE-008", slug="replay-trace-missing", kind=_K.USER_ERROR, category=_C.USER,
        error_class="replay_trace_missing", retryability=_R.NOT_RETRYABLE,
        message="The replay trace {path} does not exist.",
        remedy="Pass the path of a trace the pipeline wrote, or run the pipeline again to "
               "record one.",
        impact="Nothing can be replayed without the trace.",
        example="A replay command given a trace path from another machine.",
        example_params={"path": "traces/run-17.json"}, since=_V)

    LIFE_AGENT_LIMIT = CodeSpec(
        code="FC-LIFE-009", slug="agent-limit-reached", kind=_K.AGENT_ERROR, category=_C.TASK,
        error_class="limit_reached", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The agent stopped at its {limit} limit.",
        impact="The task is unfinished; the same run hits the same limit again.",
        example="An agent that used all 50 of its iterations without submitting.",
        example_params={"limit": "iteration"}, since=_V)
    # -- STORE: the event store and event files ---------------------------------------------
    STORE_BAD_URL = CodeSpec(
        code="FC-STORE-001", slug="store-bad-url", kind=_K.PROJECT_ERROR, category=_C.USER,
        error_class="bad_store_url", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store URL {url} is not valid: {problem}.",
        remedy="Give a URL like sqlite:///path/failcode.db or postgresql://user@host/db "
               "(--store, FAILCODE_STORE or [store] url).",
        impact="No event can be stored or queried until the URL names a store.",
        example="A mysql:// URL, which failcode has no backend for.",
        example_params={"url": "mysql://db/failcode", "problem": "unknown scheme mysql"},
        since=_V)
    STORE_UNREACHABLE = CodeSpec(
        code="FC-STORE-002", slug="store-unreachable", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="store_unreachable",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store at {url} cannot be reached: {problem}.",
        remedy="Start the database server or correct the host and port in {url}, then retry.",
        impact="Events are not recorded and queries cannot be answered while it is down.",
        example="A PostgreSQL URL whose server is not running.",
        example_params={"url": "postgresql://failcode@localhost:5432/failcode",
                        "problem": "connection refused"}, since=_V)
    STORE_LOCKED = CodeSpec(
        code="FC-STORE-003", slug="store-locked", kind=_K.SYSTEM_ERROR, category=_C.TRANSIENT,
        error_class="store_locked", retryability=_R.RETRYABLE,
        message="The store {url} stayed locked by another writer for {timeout_s} s.",
        impact="The batch was not written; nothing of it is stored, so a retry stores it once.",
        example="Another process held an exclusive SQLite transaction for a long time.",
        example_params={"url": "sqlite:///failcode.db", "timeout_s": 5}, since=_V)
    STORE_CORRUPT = CodeSpec(
        code="FC-STORE-004", slug="store-corrupt", kind=_K.ENV_ERROR, category=_C.ENVIRONMENT,
        error_class="store_corrupt", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store {url} is not a readable failcode database: {problem}.",
        remedy="Move {url} aside (keep it for inspection) and let failcode create a new store, "
               "or restore it from a backup.",
        impact="Events cannot be recorded or queried from this file.",
        example="A file that is not SQLite given as the store.",
        example_params={"url": "sqlite:///failcode.db", "problem": "file is not a database"},
        since=_V)
    STORE_READ_ONLY = CodeSpec(
        code="FC-STORE-005", slug="store-not-writable", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="store_not_writable",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store {url} cannot be created or written: {problem}.",
        remedy="Point the store at a writable location or fix the permissions of {url}.",
        impact="Events are not recorded; queries may still work on an existing store.",
        example="A store path inside a directory the agent cannot write.",
        example_params={"url": "sqlite:///var/lib/failcode.db",
                        "problem": "unable to open database file"}, since=_V)
    STORE_DISK_FULL = CodeSpec(
        code="FC-STORE-006", slug="store-disk-full", kind=_K.SYSTEM_ERROR,
        category=_C.ENVIRONMENT, error_class="store_full",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store {url} is full; the batch was not written.",
        remedy="Free disk space (or prune old events with `failcode store prune`), then retry "
               "the batch.",
        impact="New events are refused until space is freed; stored events stay readable.",
        example="The disk holding the SQLite file filled up during an append.",
        example_params={"url": "sqlite:///failcode.db"}, since=_V)
    STORE_SCHEMA_NEWER = CodeSpec(
        code="FC-STORE-007", slug="store-schema-newer", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="store_schema_newer",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store {url} has schema version {found}; this failcode knows up to "
                "{supported}.",
        remedy="Upgrade failcode to the version that wrote {url}.",
        impact="An older failcode could misread or damage the newer schema, so it refuses it.",
        example="A store migrated by a newer failcode opened by an older one.",
        example_params={"url": "sqlite:///failcode.db", "found": 9, "supported": 2},
        since=_V)
    STORE_EVENT_MALFORMED = CodeSpec(
        code="FC-STORE-008", slug="event-line-invalid", kind=_K.USER_ERROR, category=_C.USER,
        error_class="event_invalid", retryability=_R.NOT_RETRYABLE,
        message="Line {line} of {file} is not a valid failcode event: {problem}.",
        remedy="Fix or drop line {line} of {file}; the other lines were read.",
        impact="That line's event is skipped; every valid line is still stored.",
        example="A line cut short when the writer was killed.",
        example_params={"file": "events.jsonl", "line": 17,
                        "problem": "truncated JSON"}, since=_V)
    STORE_EVENT_VERSION = CodeSpec(
        code="FC-STORE-009", slug="event-version-unknown", kind=_K.DEPENDENCY_ERROR,
        category=_C.ENVIRONMENT, error_class="event_version_unknown",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="Line {line} of {file} has the unknown event version {found}; this failcode "
                "reads version {supported}.",
        remedy="Import {file} with the failcode version that wrote it, or upgrade failcode.",
        impact="That line's event is skipped; every line of a known version is still stored.",
        example="An event file written by a newer failcode.",
        example_params={"file": "events.jsonl", "line": 3, "found": 2, "supported": 1},
        since=_V)
    STORE_ACCESS_DENIED = CodeSpec(
        code="FC-STORE-010", slug="store-access-denied", kind=_K.PERMISSION_ERROR,
        category=_C.USER, error_class="store_access_denied",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store at {url} refused access: {problem}.",
        remedy="Use a database role and password that may connect to {url} and create tables.",
        impact="No event is recorded or read until the credentials are accepted.",
        example="A PostgreSQL role whose password is wrong.",
        example_params={"url": "postgresql://failcode@db/failcode",
                        "problem": "password authentication failed"}, since=_V)
    STORE_WRITE_FAILED = CodeSpec(
        code="FC-STORE-011", slug="store-write-failed", kind=_K.SYSTEM_ERROR,
        category=_C.ENVIRONMENT, error_class="store_write_failed",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The store {url} refused an operation: {problem}.",
        remedy="Check the database server's log and its disk, then retry; the batch was not "
               "written.",
        impact="The batch is not stored; events acknowledged before it are unaffected.",
        example="The PostgreSQL server shut down in the middle of a batch.",
        example_params={"url": "postgresql://failcode@db/failcode",
                        "problem": "server closed the connection"}, since=_V)

    # -- SVC: the failcode service (failcode serve) ------------------------------------------
    SVC_UNAUTHENTICATED = CodeSpec(
        code="FC-SVC-001", slug="service-unauthenticated", kind=_K.PERMISSION_ERROR,
        category=_C.USER, error_class="service_unauthenticated",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The request to {path} has no valid key: {problem}.",
        remedy="Send a key made by `failcode token create` as `Authorization: Bearer <key>` "
               "(OTLP exporters: OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer <key>\").",
        impact="Nothing was read or stored; the same request is refused until it has a key.",
        example="An OTLP exporter pointed at the service without its headers set.",
        example_params={"path": "/v1/logs", "problem": "no Authorization header"},
        since="0.2.0")
    SVC_FORBIDDEN = CodeSpec(
        code="FC-SVC-002", slug="service-forbidden", kind=_K.PERMISSION_ERROR,
        category=_C.USER, error_class="service_forbidden",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The key may not do this: {problem}.",
        remedy="Use a key of the right project with the scope this route needs ({problem}); "
               "`failcode token create --project P --scope ingest|read|admin` makes one.",
        impact="Nothing was read or changed; the key itself is still valid for its own scope.",
        example="An ingest key used to read the findings.",
        example_params={"problem": "GET /v1/findings needs the read scope; this key has ingest"},
        since="0.2.0")
    SVC_NOT_FOUND = CodeSpec(
        code="FC-SVC-003", slug="service-not-found", kind=_K.USER_ERROR, category=_C.USER,
        error_class="service_not_found", retryability=_R.NOT_RETRYABLE,
        message="{what} does not exist.",
        remedy="Check the URL against the service's OpenAPI document (/openapi.json).",
        impact="Nothing was read or changed.",
        example="A finding id that was never issued.",
        example_params={"what": "The finding 42 of project web"}, since="0.2.0")
    SVC_TOO_LARGE = CodeSpec(
        code="FC-SVC-004", slug="service-body-too-large", kind=_K.USER_ERROR, category=_C.USER,
        error_class="service_too_large", retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The request is larger than the service accepts: {problem}.",
        remedy="Send smaller batches ({problem}); nothing of this request was stored.",
        impact="The whole request was refused; a smaller batch is accepted.",
        example="A 20 MiB batch of events posted at once.",
        example_params={"problem": "the body has 20971520 bytes, at most 8388608 are accepted"},
        since="0.2.0")
    SVC_RATE_LIMITED = CodeSpec(
        code="FC-SVC-005", slug="service-rate-limited", kind=_K.SYSTEM_ERROR,
        category=_C.TRANSIENT, error_class="service_rate_limited", retryability=_R.RETRYABLE,
        message="This key sent more than {limit} requests in {window_s} s.",
        remedy="Wait {retry_after_s} s (Retry-After), then send again; batch events to send "
               "fewer requests.",
        impact="The request was refused and nothing of it was stored; a retry later is stored.",
        example="A client that posts every event on its own.",
        example_params={"limit": 600, "window_s": 60, "retry_after_s": 3}, since="0.2.0")
    SVC_UNSUPPORTED_MEDIA = CodeSpec(
        code="FC-SVC-006", slug="service-unsupported-media-type", kind=_K.USER_ERROR,
        category=_C.USER, error_class="service_unsupported_media",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The body's encoding is not accepted here: {problem}.",
        remedy="Send {expected}.",
        impact="The request was refused and nothing of it was stored.",
        example="An OTLP exporter sending gRPC to the HTTP port.",
        example_params={"problem": "Content-Type application/grpc",
                        "expected": "application/x-protobuf or application/json"},
        since="0.2.0")
    SVC_CONFLICT = CodeSpec(
        code="FC-SVC-007", slug="service-conflict", kind=_K.USER_ERROR, category=_C.USER,
        error_class="service_conflict", retryability=_R.NOT_RETRYABLE,
        message="The change conflicts with what exists: {problem}.",
        remedy="Read the current state and change it from there ({problem}).",
        impact="Nothing was changed.",
        example="Creating a project whose name is taken.",
        example_params={"problem": "the project web exists"}, since="0.2.0")

    # -- DATA --------------------------------------------------------------------------------
    DATA_INVALID_INPUT = CodeSpec(
        code="FC-DATA-001", slug="invalid-input", kind=_K.USER_ERROR, category=_C.USER,
        error_class="validation", retryability=_R.NOT_RETRYABLE,
        message="The input does not satisfy its contract: {problem}.",
        remedy="Correct the input ({problem}) and submit it again; the same input fails again.",
        impact="The step cannot start with this input.",
        example="A pydantic ValidationError: a required field is missing.",
        example_params={"problem": "field 'goal' is required"}, since=_V)

    DATA_UNKNOWN_FORMAT = CodeSpec(
        code="FC-DATA-002", slug="unknown-input-format", kind=_K.USER_ERROR, category=_C.USER,
        error_class="unknown_format", retryability=_R.NOT_RETRYABLE,
        message="The file {path} is not in a format failcode can read: {problem}.",
        remedy="Pass a file in one of the supported formats ({problem}); the file was skipped.",
        impact="Nothing in this input is analysed; the other inputs still are.",
        example="A PNG image passed to failcode triage.",
        example_params={"path": "runs/screenshot.png", "problem": "binary data"}, since=_V)
    DATA_MALFORMED_INPUT = CodeSpec(
        code="FC-DATA-003", slug="malformed-input", kind=_K.USER_ERROR, category=_C.USER,
        error_class="malformed", retryability=_R.NOT_RETRYABLE,
        message="The file {path} is malformed: {problem}.",
        remedy="Check that {path} was written completely and not edited ({problem}); what came "
               "before the damage was kept.",
        impact="The input is read only up to the damage; later steps are missing.",
        example="A session log cut off in the middle of a JSON object.",
        example_params={"path": "runs/a.traj.json", "problem": "the JSON ends early at byte 4096"},
        since=_V)
    DATA_EMPTY_INPUT = CodeSpec(
        code="FC-DATA-004", slug="empty-input", kind=_K.USER_ERROR, category=_C.USER,
        error_class="empty", retryability=_R.NOT_RETRYABLE,
        message="The file {path} is empty.",
        remedy="Pass the session log itself; {path} has no bytes (was it still being written?).",
        impact="Nothing in this input is analysed; the other inputs still are.",
        example="A log file created but never written by a crashed agent.",
        example_params={"path": "runs/session.jsonl"}, since=_V)
    DATA_UNREADABLE_INPUT = CodeSpec(
        code="FC-DATA-005", slug="unreadable-input", kind=_K.ENV_ERROR,
        category=_C.ENVIRONMENT, error_class="unreadable",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The file {path} cannot be read: {problem}.",
        remedy="Make {path} readable by this user ({problem}), then run again.",
        impact="Nothing in this input is analysed; the other inputs still are.",
        example="A log file owned by root, read by an unprivileged user.",
        example_params={"path": "runs/session.jsonl", "problem": "permission denied"}, since=_V)

    # -- SYS --------------------------------------------------------------------------------
    SYS_UNKNOWN = CodeSpec(
        code="FC-SYS-001", slug="unclassified-failure", kind=_K.UNKNOWN_ERROR, category=_C.TASK,
        error_class="unknown", retryability=_R.UNKNOWN,
        message="An unclassified {exception} occurred: {error}.",
        optional=("error",),
        variants={"message.without.error": "An unclassified {exception} occurred."},
        impact="failcode has too little evidence to say who must act; a repeat escalates.",
        example="A custom exception type no mapping knows.",
        example_params={"exception": "ValueError", "error": "the widget count went negative"},
        since=_V)

    SYS_DEFECT = CodeSpec(
        code="FC-SYS-002", slug="code-defect", kind=_K.TOOL_ERROR, category=_C.DEFECT,
        error_class="defect", retryability=_R.NOT_RETRYABLE,
        message="The function {function} raised {exception}: {error}.",
        optional=("error",),
        variants={"message.without.error": "The function {function} raised {exception}."},
        impact="An assumption of the code is false; continuing would act on a state nobody "
               "understands, so the run stops and keeps what reproduces it.",
        example="An AssertionError, or a TypeError raised inside the project's own code.",
        example_params={"function": "app.orders:total", "exception": "AssertionError",
                        "error": "the total went negative"},
        since="0.2.0")

    SYS_HARNESS_FAILED = CodeSpec(
        code="FC-SYS-003", slug="harness-failed", kind=_K.SYSTEM_ERROR,
        category=_C.ENVIRONMENT, error_class="harness_failed",
        retryability=_R.RETRYABLE_AFTER_CHANGE,
        message="The harness or runtime around the agent failed: {problem}.",
        remedy="Fix the harness or runtime ({problem}), then run the session again.",
        impact="The agent could not work at all in this attempt; it did nothing wrong itself.",
        example="A remote sandbox that refuses to start for an evaluation run.",
        example_params={"problem": "unable to start runtime (HTTP 400)"}, since=_V)


FC_CATALOG: Final = Catalog(
    "FC", areas=FC_AREAS, codes=FC, title="failcode codes",
    docs_url="docs/codes.md#{anchor}",
)
"""failcode's own catalog."""
