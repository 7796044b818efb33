"""Hostile input (issue 11): linear time, typed errors at every decoder, serializable records,
a CLI without tracebacks, bounded logging and Sentry hooks.

Linear time is proved by growth ratios measured in one process
(``tests/_growth_alarm.py``): 16 times the input may cost at most ``LIMIT`` (32) times as
much; a quadratic pass costs 256 times.
Entry points that cap their input (classify_text's traceback, the output parsers) are also
timed below the cap (4 KiB against 64 KiB), where a quadratic pattern would still show.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import (
    FC,
    ClusterStateError,
    ConfigError,
    EntityRef,
    EnvelopeError,
    Failure,
    FailureDecodeError,
    History,
    TemplateClusterer,
    classify,
    classify_http,
    classify_text,
    decide,
    decode_envelope,
    encode_envelope,
    from_command,
    load_config,
    read_envelopes,
    validate_toml,
)
from failcode.integrations.logs import FailcodeLogFilter, failcode_processor
from failcode.integrations.sentry import before_send
from failcode.pipeline import TraceSchemaError, load_trace, load_trace_file
from tests._growth_alarm import KIB4, KIB64, LIMIT, MIB, fill, growth

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

SIZES = [pytest.param(KIB4, KIB64, id="4k-64k"), pytest.param(KIB64, MIB, id="64k-1m")]


def _serializes(failure: object) -> str:
    assert isinstance(failure, Failure), failure
    text = failure.to_json()
    text.encode("utf-8")
    encode_envelope(failure)
    assert Failure.from_json(text) == failure
    return text


# -- 1. linear time ------------------------------------------------------------------------------

TRACEBACKS = {
    "blank_lines": "\n",
    "space_lines": " \n",
    "tab_lines": "\t\n",
    "frames": '  File "a.py", line 1\n',
}


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize(("small", "large"), SIZES)
@pytest.mark.parametrize("unit", TRACEBACKS.values(), ids=TRACEBACKS.keys())
def test_classify_text_traceback_is_linear(unit: str, small: int, large: int) -> None:
    """classify_text's location scan grows linearly with the traceback (no \\s* across lines)."""
    def call(text: str) -> object:
        return classify_text("ValueError", "boom", traceback=text)
    assert growth(call, fill(unit, small), fill(unit, large)) <= LIMIT


WRAPPERS = {
    "timeout": "timeout 1 ", "sudo": "sudo ", "nice": "nice -n 1 ", "env": "env A=b ",
    "assignment": "A=b ", "xargs": "xargs ", "npx": "npx -y ",
}


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize("unit", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_from_command_argv_of_wrappers_is_linear(unit: str) -> None:
    """A long argv list of wrappers is unwrapped in linear time (no list.pop(0) in a loop)."""
    def call(words: list[str]) -> object:
        return from_command(words, 2, purpose="build")
    small = (fill(unit, KIB64) + "make").split()
    large = (fill(unit, MIB) + "make").split()
    assert growth(call, small, large) <= LIMIT


OUTPUTS = {
    "node_error_lines": ("node", "Error\n", "\n    at f (a.js:1:1)\n"),
    "gcc_lines": ("gcc", "a.c:1: error: x\n", ""),
    "gcc_no_newline": ("gcc", "a.c:1: error: ", ""),
    "newlines": ("make", "\n", ""),
    "colons": ("make", ":", ""),
    "undefined_refs": ("ld", "undefined reference to `", ""),
    "rust_noise": ("cargo", "error: aborting due to 1 previous error\n", ""),
    "make_127": ("make", "make: *** [Makefile:1: all] Error 127\n", ""),
    "tracebacks": ("python", '  File "a.py", line 1\n', "ValueError: x\n"),
    "pytest_failed": ("pytest", "FAILED t.py::t - ", ""),
    "pip_not_found": ("pip", "ERROR: No matching distribution found for x\n", ""),
    "pip_build_boxes": ("pip", "  error: subprocess-exited-with-error\n", ""),
    "pip_retries": ("pip", "WARNING: Retrying (Retry(total=0)) after connection broken by 'x'\n",
                    ""),
    "npm_codes": ("npm", "npm error code E404\n", ""),
    "apt_unmet": ("apt-get", "E: Unable to correct problems, you have held broken packages.\n",
                  ""),
    "blank_lines_then_mamba": ("mamba", "\n", "does not exist (perhaps a typo\n"),
    "blank_lines_then_conda": ("conda", "\n", "nothing provides requested\n"),
    "yarn_berry": ("yarn", "YN0035: x: y\n", ""),
    "go_lines": ("go", "go: a: b\n", ""),
    "one_solver_line": ("poetry", "a ", "version solving failed\n"),
    "cargo_fetch": ("cargo", "error: failed to get `x` as a dependency\n", ""),
}


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize(("small", "large"), SIZES)
@pytest.mark.parametrize(("program", "unit", "tail"), OUTPUTS.values(), ids=OUTPUTS.keys())
def test_output_parsers_are_linear(program: str, unit: str, tail: str, small: int,
                                   large: int) -> None:
    """The output parsers cost linear time in the scanned output, below and above its cap."""
    def call(text: str) -> object:
        return from_command([program], 1, stderr=text, purpose="build")
    assert growth(call, fill(unit, small) + tail, fill(unit, large) + tail) <= LIMIT


CONFIGS = {
    "dotted_key": "a.",
    "quoted_dotted_key": '"a".',
    "keys": "k = 1\n",
    "unknown_keys": "[retry.default]\nzz = 1\n",
    "arrays": "a = [1, 2, 3]\n",
    "strings": 'x = "a.b.c"\n',
    "blank_lines": "\n",
    "escaped_quote_dotted_key": '"\\"".',
    # valid TOML at any size, so the line scanner reads all of it: strings, arrays, escapes
    "array_tables": '[[t]]\n"k\\"".\'q\' = [\'\'\'\n[\n\'\'\', "]\\\\", {a = 1}]\n',
}


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize(("small", "large"), SIZES)
@pytest.mark.parametrize("unit", CONFIGS.values(), ids=CONFIGS.keys())
def test_config_validator_is_linear(unit: str, small: int, large: int) -> None:
    """validate_toml grows linearly (a key of many dotted parts is refused before tomllib)."""
    def call(text: str) -> object:
        return validate_toml("failcode.toml", text=text)
    assert growth(call, fill(unit, small), fill(unit, large)) <= LIMIT


# -- 4. every record can be serialized ----------------------------------------------------------

SURROGATES = "a\udcff\ud800b"


def _build(position: str) -> object:
    spec = FC.CMD_NOT_FOUND
    base: dict[str, Any] = {"surface": "shell.run", "params": {"program": "cargo"}}
    extra: dict[str, Any] = {
        "params": {"params": {"program": SURROGATES}},
        "context": {"context": {"k": SURROGATES}},
        "context_key": {"context": {SURROGATES: 1}},
        "metadata": {"metadata": {"request_id": SURROGATES}},
        "detail": {"detail": SURROGATES},
        "cause": {"cause": ValueError(SURROGATES)},
        "evidence_refs": {"evidence_refs": (EntityRef("log", SURROGATES),)},
        "cause_refs": {"cause_refs": (EntityRef(SURROGATES, "x"),)},
        "location": {"location": f"src/{SURROGATES}.c"},
        "surface": {"surface": f"shell.{SURROGATES}"},
    }[position]
    return spec.failure(**{**base, **extra})


@pytest.mark.parametrize("position", [
    "params", "context", "context_key", "metadata", "detail", "cause", "evidence_refs",
    "cause_refs", "location", "surface"])
def test_lone_surrogates_are_replaced_when_built(position: str) -> None:
    """A lone surrogate in any input of the factory becomes U+FFFD; the record serializes."""
    text = _serializes(_build(position))
    assert "\\ufffd" in text or "\ufffd" in text


@given(st.text(st.sampled_from(["\ud800", "\udbff", "\udc80", "\udcff", "\udfff"])
               | st.characters(), min_size=1, max_size=40))
def test_any_text_in_context_and_metadata_serializes(text: str) -> None:
    """Whatever str goes into context, metadata and detail, the record encodes as UTF-8."""
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": text or "x"},
                                       context={"k": text}, metadata={text: text},
                                       detail=text if text.strip() else None)
    _serializes(failure)


def test_undecodable_argv_bytes_serialize() -> None:
    """A program name of undecodable bytes (argv as bytes) gives a serializable record."""
    failure = from_command([b"/usr/bin/\xffprog", b"x"], 127,
                           stderr=b"sh: 1: \xffprog: not found")
    _serializes(failure)


def test_undecodable_header_values_serialize() -> None:
    """Headers with lone surrogates (a decoded raw header) give a serializable record."""
    failure = classify_http(429, b"\xff\xfe", {"retry-after": "\udcff",
                                               "x-request-id": "\ud800abc"})
    _serializes(failure)


def test_exception_type_and_body_with_surrogates_serialize() -> None:
    """An exception whose module name and provider body hold surrogates classifies serializably."""
    error_type = type("BadError", (Exception,), {"status_code": 400,
                                                 "__module__": "mod\udcff.sub"})
    exc = error_type("boom")
    exc.body = {"error": {"code": "\udcff", "message": "\ud800", "type": "x\udc80"}}  # type: ignore[attr-defined]
    _serializes(classify(exc))


def test_classify_text_with_surrogates_serializes() -> None:
    """classify_text on surrogate-laden type name, message and traceback serializes."""
    _serializes(classify_text("Value\udcffError", "\ud800",
                              traceback='  File "\udcff.py", line 1\n'))


def test_mapping_value_over_limit_is_refused_at_construction() -> None:
    """A context string over 4000 characters fails at construction, naming the field."""
    good = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"})
    data = good.to_dict() | {"context": {"k": "x" * 4001}}
    with pytest.raises(ValueError, match="context"):
        Failure(**{k: v for k, v in data.items() if k not in ("kind", "category", "severity",
                                                            "retryability")},
                kind=good.kind, category=good.category, severity=good.severity,
                retryability=good.retryability)


def test_mapping_value_over_limit_is_refused_at_decoding() -> None:
    """A decoded metadata string over 4000 characters is a FailureDecodeError naming it."""
    data = json.loads(FC.CMD_NOT_FOUND.failure(surface="shell.run",
                                               params={"program": "c"}).to_json())
    data["metadata"] = {"note": "x" * 100_000}
    with pytest.raises(FailureDecodeError, match="metadata"):
        Failure.from_json(json.dumps(data))


# -- 5. decoders raise only their typed errors -------------------------------------------------

_GOOD = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"}).to_json()
HOSTILE_JSON: dict[str, str | bytes] = {
    "truncated": _GOOD[: len(_GOOD) // 2],
    "deep_array": "[" * 10_000 + "]" * 10_000,
    "deep_in_field": _GOOD.replace('"context":{}', '"context":{"a":' + "[" * 10_000
                                   + "]" * 10_000 + "}"),
    "lone_surrogate": _GOOD.replace("cargo", "\udcff"),
    "surrogate_escape": _GOOD.replace("cargo", "\\ud800"),
    "binary": b"\xff\xfe\x00\x81" * 100,
    "int_400_digits": _GOOD.replace('"context":{}', '"context":{"a":' + "9" * 400 + "}"),
    "int_5000_digits": _GOOD.replace('"context":{}', '"context":{"a":' + "9" * 5000 + "}"),
}


def _envelope(data: str | bytes) -> object:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return decode_envelope(b'{"failcode":1,"type":"failure","body":' + raw + b"}")


def _lines(data: str | bytes) -> object:
    return list(read_envelopes([data + ("\n" if isinstance(data, str) else b"\n")]))


DECODERS: dict[str, tuple[Callable[[Any], object], type[Exception]]] = {
    "Failure.from_json": (Failure.from_json, FailureDecodeError),
    "decode_envelope(body)": (_envelope, EnvelopeError),
    "decode_envelope(line)": (decode_envelope, EnvelopeError),
    "read_envelopes": (_lines, EnvelopeError),
    "TemplateClusterer.from_json": (TemplateClusterer.from_json, ClusterStateError),
}


@pytest.mark.parametrize("data", HOSTILE_JSON.values(), ids=HOSTILE_JSON.keys())
@pytest.mark.parametrize(("decode", "error"), DECODERS.values(), ids=DECODERS.keys())
def test_decoders_raise_only_their_typed_error(decode: Callable[[Any], object],
                                               error: type[Exception],
                                               data: str | bytes) -> None:
    """Every decoder refuses hostile JSON with its own error type, never another exception."""
    with pytest.raises(error):
        decode(data)


def test_decoded_huge_retry_after_never_reaches_decide() -> None:
    """A 400-digit retry_after_s is refused when decoded, so decide never overflows on it."""
    failure = FC.PROV_RATE_LIMIT.failure(surface="llm.openai", params={"provider": "OpenAI"})
    data = failure.to_json().replace('"metadata":{}',
                                     '"metadata":{"retry_after_s":' + "9" * 400 + "}")
    with pytest.raises(FailureDecodeError, match="retry_after_s"):
        decide(Failure.from_json(data), History(operation="provider"))


HOSTILE_TRACES: dict[str, bytes] = {
    "binary": b"\xff\xfe\x00\x81" * 1000,
    "invalid_utf8": b'{"trace_version": 1, "run_id": "\xff\xfe"}',
    "deep_array": b"[" * 100_000,
    "deep_object": b'{"trace_version": 1, "run_id": "r", "final": ' + b'{"a":' * 10_000
                   + b"1" + b"}" * 10_001,
    "int_5000_digits": b'{"trace_version": 1, "run_id": ' + b"9" * 5000 + b"}",
}


@pytest.mark.parametrize("data", HOSTILE_TRACES.values(), ids=HOSTILE_TRACES.keys())
def test_trace_loading_raises_schema_error_naming_the_file(tmp_path: Path, data: bytes) -> None:
    """A hostile trace file is a TraceSchemaError whose message names the file."""
    path = tmp_path / "hostile-trace.json"
    path.write_bytes(data)
    with pytest.raises(TraceSchemaError, match=r"hostile-trace\.json"):
        load_trace_file(path)


@pytest.mark.parametrize("name", ["binary", "deep_array", "int_5000_digits"])
def test_trace_cli_exits_2_naming_the_file(tmp_path: Path, name: str) -> None:
    """`python -m failcode.pipeline validate` on a hostile file exits 2 without a traceback."""
    path = tmp_path / "hostile-trace.json"
    path.write_bytes(HOSTILE_TRACES[name])
    run = subprocess.run([sys.executable, "-m", "failcode.pipeline", "validate", str(path)],
                         capture_output=True, text=True, errors="replace", check=False,
                         timeout=60)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert "hostile-trace.json" in run.stderr + run.stdout


def test_trace_with_many_bad_events_stops_after_the_first_problems() -> None:
    """A trace of 200,000 invalid events is refused after the first 100 of them."""
    events = b",".join([b'{"type": "phase", "phase": ""}'] * 200_000)
    data = (b'{"trace_version": 1, "run_id": "r", "final": {}, "events": [' + events + b"]}")
    with pytest.raises(TraceSchemaError, match="stopped after 100 invalid events"):
        load_trace(data, source="big.json")


HOSTILE_TOML: dict[str, bytes] = {
    "binary": b"\xff\xfe\x00\x81" * 100,
    "not_utf8_later": b"[budget]\ncapacity = 1\n# caf\xe9\n",
    "deep_array": b"[models]\nfallbacks = " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
    "deep_inline_table": b"a = " + b"{b = " * 10_000 + b"1" + b"}" * 10_000 + b"\n",
    "int_5000_digits": b"[retry.default]\nattempts = " + b"9" * 5000 + b"\n",
    "long_dotted_key": b"a" + b".a" * 3000 + b" = 1\n",
}


@pytest.mark.parametrize("data", HOSTILE_TOML.values(), ids=HOSTILE_TOML.keys())
def test_config_validator_reports_broken_toml(tmp_path: Path, data: bytes) -> None:
    """A hostile config file is one FC-CFG-004 problem naming the file, never an exception."""
    path = tmp_path / "failcode.toml"
    path.write_bytes(data)
    result = validate_toml(path)
    assert [p.code for p in result.problems] == ["FC-CFG-004"]
    assert "failcode.toml" in result.problems[0].message
    with pytest.raises(ConfigError):
        load_config(path)


@pytest.mark.parametrize(("table", "key"), [("retry.default", "attempts"),
                                            ("budget", "capacity")])
def test_config_400_digit_integer_is_out_of_range(tmp_path: Path, table: str, key: str) -> None:
    """A 400-digit integer is a value out of range (FC-CFG-001), not an OverflowError."""
    path = tmp_path / "failcode.toml"
    path.write_text(f"[{table}]\n{key} = {'9' * 400}\n", encoding="utf-8")
    result = validate_toml(path)
    assert [p.code for p in result.problems] == ["FC-CFG-001"]
    assert result.problems[0].params["line"] == 2


def test_config_validator_stops_after_100_problems(tmp_path: Path) -> None:
    """A file of 10,000 unknown keys yields its first 100 problems."""
    path = tmp_path / "failcode.toml"
    path.write_text("".join(f"k{i} = 1\n" for i in range(10_000)), encoding="utf-8")
    assert len(validate_toml(path).problems) == 100


# -- 6. the CLI never shows a traceback for a user's mistake ------------------------------------

CATALOG_MODULES = {
    "raises": ('raise RuntimeError("boom at import")', "RuntimeError: boom at import"),
    "syntax_error": ("def (:\n", "SyntaxError"),
    "sys_exit": ("import sys\nsys.exit(3)\n", "sys.exit(3)"),
    "recursion": ("def f():\n    f()\nf()\n", "RecursionError"),
}


@pytest.mark.parametrize("command", [["codes"], ["codes", "check"], ["explain", "FC-CMD-001"]],
                         ids=["codes", "codes-check", "explain"])
@pytest.mark.parametrize(("source", "said"), CATALOG_MODULES.values(), ids=CATALOG_MODULES.keys())
def test_catalog_module_failing_on_import_is_a_usage_error(tmp_path: Path, source: str,
                                                          said: str, command: list[str]) -> None:
    """--catalog naming a module that fails on import exits 2 naming module and error."""
    (tmp_path / "broken_catalog.py").write_text(source, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "failcode", *command, "--catalog",
                          "broken_catalog:AFK"], capture_output=True, text=True, cwd=tmp_path,
                         check=False, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert "broken_catalog" in run.stderr
    assert said in run.stderr


def test_long_config_path_keeps_the_file_name(tmp_path: Path) -> None:
    """A config path too long for the message is cut in the middle; the file name stays."""
    deep = tmp_path.joinpath(*["d" * 60] * 8)
    deep.mkdir(parents=True)
    path = deep / "my-failcode.toml"
    path.write_text("[retry.default]\nattempts = 0\n", encoding="utf-8")
    problem = validate_toml(path).problems[0]
    assert "my-failcode.toml" in problem.message
    assert "my-failcode.toml" in (problem.remedy or "")
    assert str(problem.params["file"]).startswith(str(tmp_path)[:8])


# -- 7. logging and Sentry are bounded ---------------------------------------------------------

def _filtered(message: str) -> logging.LogRecord:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, message, None, None)
    FailcodeLogFilter().filter(record)
    return record


def test_log_filter_caps_a_10mb_message() -> None:
    """A 10 MB log message leaves the filter at most 16 KiB long, the cut said."""
    record = _filtered("x" * (10 * MIB))
    assert len(record.msg) <= 16 * 1024 + 64
    assert "characters cut" in record.msg


@pytest.mark.parametrize("unit", ["key=", "eyJ", "x"])
def test_log_filter_cost_is_that_of_the_capped_part(unit: str) -> None:
    """Filtering 1 MiB costs about what 64 KiB does: only the capped part is redacted."""
    assert growth(_filtered, fill(unit, KIB64), fill(unit, MIB)) <= 4


def test_log_filter_redacts_a_secret_straddling_the_cut() -> None:
    """A secret that crosses the cap is redacted whole: no part of it survives."""
    secret = "ghp_" + "A1b2C3d4E5" * 4
    message = "x" * (16 * 1024 - 10) + " token " + secret + " tail"
    record = _filtered(message)
    assert secret[4:14] not in record.msg


def test_structlog_processor_caps_strings_and_depth() -> None:
    """The structlog processor cuts huge strings and stops at deeply nested values."""
    nested: dict[str, Any] = {}
    node = nested
    for _ in range(10_000):
        node["a"] = {}
        node = node["a"]
    event = failcode_processor(None, "error", {"event": "x" * MIB, "nested": nested})
    assert len(event["event"]) <= 16 * 1024 + 64
    json.dumps(event)


def test_sentry_before_send_caps_strings() -> None:
    """before_send cuts a 10 MB event string to its capped part."""
    event = before_send({"message": "x" * (10 * MIB), "extra": {"a": ["y" * MIB]}}, None)
    assert len(event["message"]) <= 16 * 1024 + 64
    assert len(event["extra"]["a"][0]) <= 16 * 1024 + 64


def test_sentry_before_send_survives_deep_nesting() -> None:
    """An event nested 10,000 levels deep is walked to a bounded depth, not recursed through."""
    event: dict[str, Any] = {"message": "x"}
    node = event
    for _ in range(10_000):
        node["extra"] = {}
        node = node["extra"]
    assert before_send(event, None)["message"] == "x"


def test_sentry_cost_is_that_of_the_capped_part() -> None:
    """before_send on 1 MiB strings costs about what 64 KiB strings do."""
    def call(text: str) -> object:
        return before_send({"message": text}, None)
    assert growth(call, fill("key=", KIB64), fill("key=", MIB)) <= 4
