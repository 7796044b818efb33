"""The reliability figure: hostile inputs to failcode's public API, one process per case.

    python bench/adversarial.py [--jobs N] [--only SUBSTRING] [-v]

Every case runs in its own interpreter under a CPU-time and address-space bound
(``resource.setrlimit``) and a wall-clock timeout, so a quadratic regex, a recursion, an
unbounded allocation or an interpreter crash fails that case alone. A case passes when its
process exits 0: the entry point returned what its contract promises, or raised one of the
typed errors it documents. The last line is ``N passed, M failed``.

Cases, by group:

- ``exc``: hostile exceptions to ``classify`` (raising ``__str__`` and properties, cycles,
  surrogates, huge and nested values); the result must serialize (``to_json``, the envelope).
- ``text``: hostile texts (64 KiB and 1 MiB) to every public text entry point: ``redact``,
  ``find_secrets``, ``normalize_message``, ``classify_text``, ``classify_http``,
  ``from_command``, ``validate_toml``, the clusterer, the logging and Sentry integrations.
- ``record``: records built with lone surrogates and undecodable bytes in every input position.
- ``file``: hostile files to every decoder: ``Failure.from_json``, ``decode_envelope``,
  ``read_envelopes``, ``TemplateClusterer.from_json``, the pipeline's trace loading,
  ``validate_toml`` / ``load_config``; and the CLIs on hostile arguments.
- ``triage``, ``store``, ``output``: hostile files beside a good one given to ``failcode
  triage`` (JSON nested 1,000 and 100,000 deep, NUL bytes, invalid UTF-8 late, truncation, a
  step of 10^30, control characters in a session name, rich markup in a folder name, a FIFO,
  a planted secret in a failcode-events file): the good file is still triaged, nothing raises
  a traceback, nothing printed holds a raw control character or the secret; the store on a
  mistyped URL, hostile URLs and a NUL-bearing event; ``--html`` into a missing folder.
"""

# ruff: noqa: E501 - the cases are Python sources kept one per line, as their table reads best

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CPU_SECONDS = 20
"""CPU time a case may use (1 MiB inputs through a linear pass take well under a second)."""
MEMORY_BYTES = 1536 * 1024 * 1024
"""Address space a case may map (the interpreter and the SDKs take about 300 MB of it)."""
WALL_SECONDS = 90

PRELUDE = r'''
import json, os, subprocess, sys, tempfile
import failcode
from failcode import (FC, Cancelled, ClusterStateError, ConfigError, EnvelopeError, Failure,
    FailureDecodeError, History, NoMatch, TemplateClusterer, classify, classify_http,
    classify_text, decide, decode_envelope, encode_envelope, from_command, normalize_message,
    read_envelopes, redact, render_user, validate_toml, load_config)

KIB64 = 64 * 1024
MIB = 1024 * 1024

def serializable(result):
    """The result of a classifier: its wire forms must not raise."""
    if isinstance(result, Failure):
        text = result.to_json()
        text.encode("utf-8")
        encode_envelope(result)
        render_user(result)
        assert Failure.from_json(text) == result
    elif result is not None:
        encode_envelope(result)
    return result

def typed(call, *errors):
    """Call; a typed error of the contract passes, anything else fails the case."""
    try:
        return call()
    except errors as exc:
        return exc

def fill(unit, size):
    return (unit * (size // len(unit) + 1))[:size]

def cli(*args, module="failcode", cwd=None):
    run = subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                         text=True, cwd=cwd, errors="replace", timeout=60)
    return run.returncode, run.stdout, run.stderr
'''


def _texts() -> dict[str, str]:
    """Hostile text builders (expressions of ``n``, the size in characters)."""
    return {
        "newlines": 'fill("\\n", n)',
        "blank_lines": 'fill(" \\n", n)',
        "no_newline": 'fill("a", n)',
        "colons": 'fill(":", n)',
        "eq_chain": 'fill("key=", n)',
        "pw_chain": 'fill("password=", n)',
        "bearer_plus": '"Authorization: Bearer " + fill("+", n)',
        "basic_pad": '"Basic " + fill("=", n)',
        "jwt_prefix": 'fill("eyJ", n)',
        "sk_chain": 'fill("sk-", n)',
        "quotes": 'fill("\'\\"", n)',
        "file_lines": 'fill("  File \\"", n)',
        "tb_frames": 'fill(\'  File "a.py", line 1\\n\', n)',
        "error_lines": 'fill("Error\\n", n) + "\\n    at x"',
        "gcc_lines": 'fill("a.c:1: error: ", n)',
        "undef_ref": 'fill("undefined reference to `", n)',
        "urls": 'fill("https://u:", n)',
        "surrogates": 'fill("\\udcff\\ud800x", n)',
        "dots": 'fill("a.", n)',
        "ansi": 'fill("\\x1b[", n)',
    }


def _cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []

    # -- exc: hostile exceptions to classify ---------------------------------------------------
    exc_cases = {
        "str_raises": """
            class E(Exception):
                def __str__(self): raise RuntimeError("no")
            serializable(classify(E()))""",
        "repr_and_str_raise": """
            class E(Exception):
                def __str__(self): raise RuntimeError("no")
                def __repr__(self): raise RuntimeError("no")
            serializable(classify(E()))""",
        "getattr_raises": """
            class E(Exception):
                def __getattribute__(self, name):
                    if name.startswith("__") and name not in ("__str__",): return object.__getattribute__(self, name)
                    raise RuntimeError(name)
            serializable(classify(E("x")))""",
        "cause_cycle": """
            a, b = ValueError("a"), KeyError("b")
            a.__cause__ = b; b.__cause__ = a
            serializable(classify(a))""",
        "context_chain_100k": """
            e = ValueError("root")
            for i in range(100000):
                n = ValueError(str(i)); n.__context__ = e; e = n
            serializable(classify(e))""",
        "message_10mb": """
            serializable(classify(ValueError("x" * (10 * MIB))))""",
        "message_surrogates": """
            serializable(classify(ValueError("bad \\udcff\\ud800 text")))""",
        "oserror_surrogate_filename": """
            serializable(classify(FileNotFoundError(2, "No such file", "/x/\\udcffname")))""",
        "oserror_bytes_filename": """
            serializable(classify(FileNotFoundError(2, "No such file", b"/x/\\xff\\xfe")))""",
        "oserror_huge_errno": """
            serializable(classify(OSError(10**400, "strange")))""",
        "status_property_raises": """
            class E(Exception):
                @property
                def status_code(self): raise RuntimeError("no")
            serializable(classify(E("x")))""",
        "status_huge_int": """
            class E(Exception):
                status_code = 10**400
            serializable(classify(E("x")))""",
        "status_str": """
            class E(Exception):
                status_code = "429"
            serializable(classify(E("x")))""",
        "retry_after_huge": """
            class R:
                status_code = 429
                headers = {"retry-after": "9" * 400}
            class E(Exception):
                status_code = 429
                response = R()
            f = serializable(classify(E("rate limited"), surface="llm.openai"))
            if isinstance(f, Failure):
                decide(Failure.from_json(f.to_json()), History(operation="provider"))""",
        "retry_after_nan": """
            class R:
                status_code = 429
                headers = {"retry-after": "nan", "x-request-id": "\\udcff" * 10}
            class E(Exception):
                status_code = 429
                response = R()
            f = serializable(classify(E("rate limited"), surface="llm.openai"))""",
        "body_nested_10k": """
            body = {}
            node = body
            for _ in range(10000):
                node["error"] = {}; node = node["error"]
            class E(Exception):
                status_code = 400
            e = E("bad"); e.body = body
            serializable(classify(e))""",
        "body_surrogates": """
            class E(Exception):
                status_code = 400
            e = E("bad"); e.body = {"error": {"code": "\\udcff", "message": "\\ud800", "type": "x\\udc80"}}
            serializable(classify(e))""",
        "keyboard_interrupt": """
            assert isinstance(classify(KeyboardInterrupt()), Cancelled)""",
        "deep_traceback": """
            def f(n):
                if n == 0: raise ValueError("deep")
                f(n - 1)
            try: f(900)
            except ValueError as exc: serializable(classify(exc))""",
        "type_name_weird": """
            E = type("bad: name\\n", (Exception,), {})
            E.__module__ = "mod\\udcff"
            serializable(classify(E("x")))""",
        "args_huge_bytes": """
            serializable(classify(ValueError(b"\\xff" * MIB)))""",
    }
    cases += [(f"exc.{name}", body) for name, body in exc_cases.items()]

    # -- text: hostile texts to every public text entry point ----------------------------------
    cases.append(("text.sentry.deep_event", """
        from failcode.integrations.sentry import before_send
        event = {"message": "x"}
        node = event
        for _ in range(10000):
            node["extra"] = {}; node = node["extra"]
        before_send(event, None)
        """))
    cases.append(("text.log_filter.exc_text_10mb", """
        import logging
        from failcode.integrations.logs import FailcodeLogFilter
        try: raise ValueError("x" * (10 * MIB))
        except ValueError: info = sys.exc_info()
        record = logging.LogRecord("x", 40, __file__, 1, "failed", None, info)
        FailcodeLogFilter().filter(record)
        assert len(record.exc_text) <= 64 * 1024, len(record.exc_text)
        """))
    entry = {
        "redact": "redact(s)",
        "find_secrets": "failcode.find_secrets(s)",
        "normalize_message": "normalize_message(s)",
        "classify_text_traceback": 'serializable(classify_text("ValueError", "boom", traceback=s))',
        "classify_text_message": 'serializable(classify_text("openai.RateLimitError", s))',
        "classify_http_body": "serializable(classify_http(429, s, {'retry-after': s[:1000]}))",
        "from_command_stderr": 'serializable(from_command(["make"], 2, stderr=s, purpose="build"))',
        "from_command_stdout": 'serializable(from_command(["pytest"], 1, stdout=s, purpose="test"))',
        "from_command_argv": 'serializable(from_command(s, 1, purpose="general"))',
        "validate_toml": 'validate_toml("failcode.toml", text=s)',
        "clusterer": "TemplateClusterer().add(s)",
        "log_filter": """
            import logging
            from failcode.integrations.logs import FailcodeLogFilter
            record = logging.LogRecord("x", 40, __file__, 1, s, None, None)
            FailcodeLogFilter().filter(record)
            assert len(record.msg) <= 64 * 1024, len(record.msg)""",
        "sentry": """
            from failcode.integrations.sentry import before_send
            event = before_send({"message": s, "extra": {"a": [s]}}, None)
            assert len(event["message"]) <= 64 * 1024, len(event["message"])""",
    }
    texts = _texts()
    for entry_name, call in entry.items():
        for text_name, builder in texts.items():
            if entry_name == "from_command_argv" and text_name == "surrogates":
                continue
            for label, size in (("1m", "MIB"),):
                body = f"n = {size}\ns = {builder}\n" + textwrap.dedent(call)
                cases.append((f"text.{entry_name}.{text_name}.{label}", body))
    shell = {
        "wrappers": 'fill("timeout 1 ", n) + "grep x f"',
        "sudo": 'fill("sudo ", n) + "make"',
        "nice": 'fill("nice -n 1 ", n) + "make"',
        "env_assign": 'fill("A=b ", n) + "make"',
        "redirects": 'fill("2>x ", n) + "make"',
        "pipes": 'fill("a | ", n) + "make"',
        "bash_c": '"bash -c " + repr(fill("cd d && ", n) + "make")',
    }
    for name, builder in shell.items():
        for argv_form in ("str", "list"):
            value = "s" if argv_form == "str" else "s.split()"
            body = (f"n = MIB // 4\ns = {builder}\n"
                    f'serializable(from_command({value}, 2, purpose="build"))')
            cases.append((f"text.from_command_shell.{name}.{argv_form}", body))

    # -- record: surrogates and undecodable bytes in every input position ----------------------
    record = {
        "params": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c\\udcffx"})',
        "context": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, context={"k": "\\udcff"})',
        "context_key": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, context={"\\udcff": 1})',
        "metadata": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, metadata={"k": "\\ud800"})',
        "detail": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, detail="\\udcff")',
        "location": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, location="src/\\udcff.c")',
        "evidence": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, evidence_refs=(failcode.EntityRef("log", "\\udcff"),))',
        "cause": 'FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, cause=ValueError("\\udcff"))',
        "argv": 'from_command(["/usr/bin/\\udcffprog", "x"], 127, stderr="sh: 1: \\udcffprog: not found")',
        "argv_bytes_output": 'from_command(["make"], 2, stderr=b"make: *** [Makefile:2: \\xff\\xfe] Error 1")',
        "cwd_surrogate": 'from_command(["gcc", "a.c"], 1, stderr="/w/\\udcff/a.c:1:1: error: expected x", cwd="/w/\\udcff", purpose="build")',
        "http_headers": 'classify_http(429, b"\\xff\\xfe", {"retry-after": "\\udcff", "x-request-id": "\\ud800"})',
        "classify_text": 'classify_text("Value\\udcffError", "\\ud800", traceback=\'  File "\\udcff.py", line 1\\n\')',
        "context_value_too_long": 'typed(lambda: FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"}, context={"k": "x" * 5000}), ValueError)',
    }
    for name, call in record.items():
        body = f"result = {call}\nif not isinstance(result, Exception): serializable(result)"
        cases.append((f"record.{name}", body))
    cases.append(("record.decode_value_too_long", """
        f = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "c"})
        data = json.loads(f.to_json()); data["context"] = {"k": "x" * 100000}
        r = typed(lambda: Failure.from_json(json.dumps(data)), FailureDecodeError)
        assert isinstance(r, FailureDecodeError), "a 100,000-character context value was accepted"
        """))

    # -- file: hostile data to every decoder ---------------------------------------------------
    good = ('FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})')
    datas = {
        "empty": '""',
        "truncated": "good_json[:len(good_json) // 2]",
        "deep_array": '"[" * 10000 + "]" * 10000',
        "deep_object": '\'{"a":\' * 10000 + "1" + "}" * 10000',
        "surrogate_str": 'good_json.replace("cargo", "\\udcff")',
        "surrogate_escape": 'good_json.replace("cargo", "\\\\ud800")',
        "binary": 'b"\\xff\\xfe\\x00\\x81" * 1000',
        "huge_int": 'good_json.replace(\'"context":{}\', \'"context":{"a":\' + "9" * 400 + "}")',
        "huge_int_metadata": 'good_json.replace(\'"metadata":{}\', \'"metadata":{"retry_after_s":\' + "9" * 400 + "}")',
        "huge_string": 'good_json.replace("cargo", "x" * (8 * MIB))',
        "int_5000_digits": 'good_json.replace(\'"context":{}\', \'"context":{"a":\' + "9" * 5000 + "}")',
        "deep_in_field": 'good_json.replace(\'"context":{}\', \'"context":{"a":\' + "[" * 10000 + "]" * 10000 + "}")',
    }
    decoders = {
        "failure": ("Failure.from_json(data)", "FailureDecodeError"),
        "envelope": ('decode_envelope(b\'{"failcode":1,"type":"failure","body":\' + (data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data) + b"}")',
                     "EnvelopeError"),
        "envelope_line": ("decode_envelope(data)", "EnvelopeError"),
        "read_envelopes": ('list(read_envelopes([data + ("\\n" if isinstance(data, str) else b"\\n")]))', "EnvelopeError"),
        "clusterer": ("TemplateClusterer.from_json(data)", "ClusterStateError"),
    }
    for dname, (call, error) in decoders.items():
        for name, builder in datas.items():
            body = (f"good_json = {good}.to_json()\ndata = {builder}\n"
                    f"typed(lambda: {call}, {error})")
            cases.append((f"file.{dname}.{name}", body))
    cases.append(("file.decide_decoded_huge_retry_after", """
        f = FC.PROV_RATE_LIMIT.failure(surface="llm.openai", params={"provider": "openai"})
        data = f.to_json().replace('"metadata":{}', '"metadata":{"retry_after_s":' + "9" * 400 + "}")
        g = typed(lambda: Failure.from_json(data), FailureDecodeError)
        if isinstance(g, Failure):
            decide(g, History(operation="provider"))
        """))

    # trace files, through the loader and the CLI (exit 2, the file named, no traceback)
    traces = {
        "binary": 'b"\\xff\\xfe\\x00\\x81" * 1000',
        "truncated": 'b\'{"trace_version": 1, "events": [\'',
        "deep": 'b"[" * 100000',
        "deep_object": 'b\'{"trace_version": 1, "run_id": "r", "final": \' + b\'{"a":\' * 10000 + b"1" + b"}" * 10001',
        "surrogate_escape": 'b\'{"trace_version": 1, "run_id": "\\\\ud800", "events": [], "final": {}}\'',
        "huge_int": 'b\'{"trace_version": 1\' + b"0" * 400 + b"}"',
        "huge_int_delay": 'b\'{"trace_version": 1, "run_id": "r", "events": [{"type": "phase", "phase": "INIT", "iteration": \' + b"9" * 400 + b\'}], "final": {}}\'',
        "int_5000_digits": 'b\'{"trace_version": 1, "run_id": \' + b"9" * 5000 + b"}"',
        "invalid_utf8": 'b\'{"trace_version": 1, "run_id": "\\xff\\xfe"}\'',
        "bad_events_500k": 'b\'{"trace_version": 1, "run_id": "r", "final": {}, "events": [\' + b",".join([b\'{"type": "phase", "phase": ""}\'] * 500000) + b"]}"',
    }
    for name, builder in traces.items():
        cases.append((f"file.trace.{name}", f"""
            from failcode.pipeline import load_trace_file
            from failcode.pipeline._trace import TraceValidationError
            path = os.path.join(tempfile.mkdtemp(), "trace.json")
            with open(path, "wb") as out: out.write({builder})
            typed(lambda: load_trace_file(path), TraceValidationError)
            """))
        cases.append((f"file.trace_cli.{name}", f"""
            path = os.path.join(tempfile.mkdtemp(), "trace.json")
            with open(path, "wb") as out: out.write({builder})
            code, out, err = cli("validate", path, module="failcode.pipeline")
            assert code == 2, (code, err[-500:])
            assert "Traceback" not in err, err[-2000:]
            assert "trace.json" in err + out, err[-500:]
            """))

    # config files, through the validator, the loader and the CLI
    tomls = {
        "binary": 'b"\\xff\\xfe\\x00\\x81" * 1000',
        "huge_int": 'b"[retry.default]\\nattempts = " + b"9" * 400 + b"\\n"',
        "huge_float_int": 'b"[budget]\\ncapacity = " + b"9" * 400 + b"\\n"',
        "deep_array": 'b"[models]\\nfallbacks = " + b"[" * 10000 + b"]" * 10000 + b"\\n"',
        "deep_inline": 'b"a = " + b"{b = " * 10000 + b"1" + b"}" * 10000 + b"\\n"',
        "deep_tables": 'b"[" + b".".join([b"a"] * 10000) + b"]\\nx = 1\\n"',
        "open_string": 'b\'x = """\' + b"a\\n" * 100000',
        "many_keys": 'b"".join(b"k%d = 1\\n" % i for i in range(100000))',
        "int_5000_digits": 'b"[retry.default]\\nattempts = " + b"9" * 5000 + b"\\n"',
        "long_dotted_key": 'b"a" + b".a" * 300000 + b" = 1\\n"',
        "long_line": 'b"x = \\"" + b"a" * MIB + b"\\""',
    }
    for name, builder in tomls.items():
        cases.append((f"file.config.{name}", f"""
            path = os.path.join(tempfile.mkdtemp(), "failcode.toml")
            with open(path, "wb") as out: out.write({builder})
            result = validate_toml(path)
            for problem in result.problems: serializable(problem)
            typed(lambda: load_config(path), ConfigError)
            """))
        cases.append((f"file.config_cli.{name}", f"""
            path = os.path.join(tempfile.mkdtemp(), "failcode.toml")
            with open(path, "wb") as out: out.write({builder})
            code, out, err = cli("config", "check", path)
            assert code in (1, 2), (code, err[-500:])
            assert "Traceback" not in err, err[-2000:]
            assert "failcode.toml" in err, err[-500:]
            """))
    cases.append(("file.config_cli.long_path_keeps_name", """
        base = tempfile.mkdtemp()
        deep = os.path.join(base, *["d" * 60] * 12)
        os.makedirs(deep)
        path = os.path.join(deep, "failcode.toml")
        with open(path, "w") as out: out.write("[retry.default]\\nattempts = 0\\n")
        code, out, err = cli("config", "check", path)
        assert code == 1, (code, err[-500:])
        assert "failcode.toml" in err, err[-800:]
        """))

    # the CLI on hostile catalogs
    catalogs = {
        "raises": 'raise RuntimeError("boom at import")',
        "syntax_error": "def (:",
        "sys_exit": "import sys\nsys.exit(3)",
        "recursion": "def f(): f()\nf()",
        "binary": "\\udcff",
    }
    for name, source in catalogs.items():
        for command in (("codes",), ("codes", "check"), ("codes", "docs"), ("explain", "FC-CMD-001")):
            cases.append((f"file.catalog_cli.{name}.{'_'.join(command)}", f"""
                base = tempfile.mkdtemp()
                with open(os.path.join(base, "hostile_catalog.py"), "w", errors="surrogateescape") as out:
                    out.write({source!r})
                code, out, err = cli(*{command!r}, "--catalog", "hostile_catalog:AFK", cwd=base)
                assert code == 2, (code, err[-800:])
                assert "Traceback" not in err, err[-2000:]
                assert "hostile_catalog" in err, err[-800:]
                """))
    cases.extend(_triage_cases())
    return cases


# -- triage, store, sinks: hostile files beside a good one (issue 23) ---------------------------
TRIAGE_PRELUDE = r'''
import glob, shutil, stat
from importlib import resources
SAMPLES = str(resources.files("failcode.triage") / "data")
SECRET = "sk-proj-" + "Q7vX2mKp9LwR4tYz8NbC3dFh6JsA1eUo5iGq0ZxVnM"  # an OpenAI-shaped key

def folder_with(name, data):
    """A folder holding one shipped trajectory (good) and the hostile file ``name``."""
    base = tempfile.mkdtemp()
    shutil.copy(os.path.join(SAMPLES, "python-test-fix.traj.json"), base)
    target = os.path.join(base, name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if data is not None:
        with open(target, "wb") as out: out.write(data)
    return base, target

def triage_json(*paths):
    code, out, err = cli("triage", "--json", "--jobs", "1", *paths)
    assert "Traceback" not in err, err[-2000:]
    assert code in (0, 2), (code, err[-800:])
    document = json.loads(out)
    assert any(s["session"] == "python-test-fix" for s in document["sessions"]), "good input lost"
    return code, document, out

def triage_text(*paths):
    code, out, err = cli("triage", "--jobs", "1", *paths)
    assert "Traceback" not in err, err[-2000:]
    assert code in (0, 2), (code, err[-800:])
    raw = [c for c in out if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0]
    assert not raw, repr(raw[:5])
    return out

def event_line(**fields):
    line = {"version": 1, "event": "command.failed", "event_id": "01M8RN9H3Z7H81EB6G0M5F6M5B",
            "ts": "2026-12-01T11:19:28.616138Z", "session": "hostile", "step": 1,
            "source": "command", "failure": None, "outcome": None, "decision": None,
            "remedy": None, "evidence_refs": []}
    line.update(fields)
    return json.dumps(line).encode() + b"\n"
'''


def _triage_cases() -> list[tuple[str, str]]:
    """Hostile inputs to ``failcode triage``, its store and its outputs; each beside a good
    file that must still be triaged, with no traceback, no raw control character printed and
    no planted secret in any output."""
    deep = 'b\'{"mini_version": "2.4.6", "messages": \' + b"[" * {n} + b"]" * {n} + b"}"'
    files = {
        "deep_json_1000": deep.replace("{n}", "1000"),
        "deep_json_100000": deep.replace("{n}", "100000"),
        "nul_bytes": 'open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read().replace(b\'"content": "\', b\'"content": "\\u0000\\x00\', 3)',
        "invalid_utf8_late": 'open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read()[:-200] + b"\\xff\\xfe" + open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read()[-200:]',
        "truncated": 'open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read()[:5000]',
        "huge_step": 'event_line(step=10**30)',
        "ansi_in_session": 'event_line(session="\\x1b[31mred\\x1b[0m\\x07", failure=json.loads(open(os.path.join(SAMPLES, "c-library-events.events.jsonl")).read().splitlines()[1])["failure"])',
    }
    cases: list[tuple[str, str]] = []
    for name, builder in files.items():
        suffix = ".events.jsonl" if "step" in name or "session" in name else ".traj.json"
        cases.append((f"triage.file.{name}", f"""
            base, target = folder_with("hostile{suffix}", {builder})
            triage_json(base)
            triage_text(base)
            """))
    cases.append(("triage.file.fifo_in_folder", """
        base, target = folder_with("pipe.traj.json", None)
        os.mkfifo(target)
        triage_json(base)
        """))
    cases.append(("triage.file.markup_in_folder_name", """
        base, target = folder_with("[link=https://example.invalid]x[/link]/[/x]/run.traj.json",
                                   open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read())
        out = triage_text(base, "--verbose")
        assert "[/x]" in out
        """))
    cases.append(("triage.file.secret_in_events", """
        first = json.loads(open(os.path.join(SAMPLES, "c-library-events.events.jsonl")).read().splitlines()[1])
        first["failure"]["detail"] = "token " + SECRET
        first["failure"]["message"] = "failed with " + SECRET
        base, target = folder_with("leak.events.jsonl", json.dumps(first).encode() + b"\\n")
        code, document, out = triage_json(base)
        assert SECRET not in out, "secret printed by --json"
        html = os.path.join(base, "r.html")
        cli("triage", base, "--html", html)
        assert SECRET not in open(html).read(), "secret in --html"
        """))
    cases.append(("store.read.missing_url_is_an_error", """
        missing = os.path.join(tempfile.mkdtemp(), "typo.db")
        code, out, err = cli("report", "--store", "sqlite:///" + missing)
        assert "Traceback" not in err, err[-2000:]
        assert code != 0, "a store that does not exist read as an empty report"
        assert not os.path.exists(missing), "a read created the store"
        """))
    cases.append(("store.url.hostile", """
        for url in ("postgresql://[::1", "sqlite:///x.db?mode=ro", "nosuch://x"):
            code, out, err = cli("store", "stats", "--store", url)
            assert "Traceback" not in err, (url, err[-2000:])
            assert code != 0, url
        from failcode.store import StoreError, open_store  # a NUL cannot be passed in argv
        typed(lambda: open_store("sqlite:///a\\x00b.db"), StoreError)
        """))
    cases.append(("store.write.nul_event", """
        base = tempfile.mkdtemp()
        data = event_line(failure=json.loads(open(os.path.join(SAMPLES, "c-library-events.events.jsonl")).read().splitlines()[1])["failure"])
        data = data.replace(b"error", b"err\\\\u0000or", 1)
        with open(os.path.join(base, "nul.events.jsonl"), "wb") as out: out.write(data)
        url = "sqlite:///" + os.path.join(base, "store.db")
        code, out, err = cli("triage", base, "--store", url)
        assert "Traceback" not in err, err[-2000:]
        code, out, err = cli("store", "stats", "--store", url)
        assert code == 0, err[-800:]
        """))
    cases.append(("output.html_into_missing_folder", """
        code, out, err = cli("triage", "--html", os.path.join(tempfile.mkdtemp(), "no", "such", "r.html"))
        assert "Traceback" not in err, err[-2000:]
        assert code != 0
        assert "r.html" in err, err[-500:]
        """))
    cases.append(("sink.exit_without_close", """
        path = os.path.join(tempfile.mkdtemp(), "e.jsonl")
        script = ("from failcode import FC; from failcode.events import JsonlSink, failure_event\\n"
                  f"sink = JsonlSink({path!r}, buffer=1000)\\n"
                  "f = FC.CMD_NOT_FOUND.failure(surface='shell.run', params={'program': 'x'})\\n"
                  "for _ in range(10): sink.emit(failure_event(f, event='tool.failed'))\\n")
        subprocess.run([sys.executable, "-c", script], check=True)
        from failcode.events import read_events
        assert len(list(read_events(path))) == 10, "events buffered at exit were lost"
        """))
    cases.append(("sink.kill_after_flush", """
        path = os.path.join(tempfile.mkdtemp(), "e.jsonl")
        script = ("import os, signal; from failcode import FC; from failcode.events import JsonlSink, failure_event\\n"
                  f"sink = JsonlSink({path!r}, buffer=1000)\\n"
                  "f = FC.CMD_NOT_FOUND.failure(surface='shell.run', params={'program': 'x'})\\n"
                  "for _ in range(7): sink.emit(failure_event(f, event='tool.failed'))\\n"
                  "sink.flush(); os.kill(os.getpid(), signal.SIGKILL)\\n")
        subprocess.run([sys.executable, "-c", script], check=False)
        from failcode.events import read_events
        assert len(list(read_events(path))) == 7, "flushed events lost to kill -9"
        """))
    cases.append(("sink.full_device_keeps_the_batch", """
        from failcode import FC, FailureError
        from failcode.events import JsonlSink, failure_event
        sink = JsonlSink("/dev/full", buffer=100)
        sink.emit(failure_event(FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "x"}), event="tool.failed"))
        for _ in range(2):
            try:
                sink.flush()
            except FailureError as exc:
                assert exc.failure.code == "FC-STORE-006", exc.failure.code
            else:
                raise AssertionError("a write to a full device returned")
        """))
    cases.append(("sink.torn_line_not_glued", """
        from failcode import FC
        from failcode.events import JsonlSink, failure_event, read_events
        path = os.path.join(tempfile.mkdtemp(), "e.jsonl")
        with open(path, "wb") as out: out.write(b'{"version": 1, "event": "tool.fa')
        with JsonlSink(path) as sink:
            sink.emit(failure_event(FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "x"}), event="tool.failed"))
        from failcode.events import EventProblem
        items = list(read_events(path))
        problems = [i for i in items if isinstance(i, EventProblem)]
        assert len(items) - len(problems) == 1 and len(problems) == 1, items
        """))
    cases.append(("store.same_session_in_three_inputs", """
        base = tempfile.mkdtemp()
        for n in range(3):
            shutil.copy(os.path.join(SAMPLES, "python-test-fix.traj.json"), os.path.join(base, f"run{n}.traj.json"))
        url = "sqlite:///" + os.path.join(base, "store.db")
        code, out, err = cli("triage", base, "--store", url)
        assert code == 0, err[-800:]
        from failcode.store import open_store
        with open_store(url) as store:
            (sessions,), = store.fetch("SELECT count(*) FROM sessions")
        assert sessions == 3, f"{sessions} sessions stored for 3 runs"
        """))
    cases.append(("triage.many_bad_inputs_bounded", """
        base = tempfile.mkdtemp()
        good = open(os.path.join(SAMPLES, "c-build-fix.traj.json"), "rb").read()
        for n in range(300):
            with open(os.path.join(base, f"bad{n}.traj.json"), "wb") as out: out.write(good[:3000])
        out = triage_text(base)
        assert len(out.splitlines()) < 80, f"{len(out.splitlines())} lines for 300 bad inputs"
        """))
    return cases


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def run_case(name: str, body: str) -> tuple[str, bool, str]:
    """Run one case in its own bounded interpreter; (name, passed, why it failed)."""
    prelude = PRELUDE + TRIAGE_PRELUDE if name.startswith(("triage.", "store.", "output.", "sink.")) else PRELUDE
    source = prelude + "\n" + textwrap.dedent(body)
    with tempfile.TemporaryDirectory() as work:
        script = Path(work) / "case.py"
        script.write_text(source, encoding="utf-8", errors="surrogatepass")
        try:
            run = subprocess.run(
                [sys.executable, script], capture_output=True, text=True, errors="replace",
                timeout=WALL_SECONDS, preexec_fn=_limits, cwd=work, check=False,
                env={**os.environ, "PYTHONHASHSEED": "0"})
        except subprocess.TimeoutExpired:
            return name, False, f"wall time over {WALL_SECONDS} s"
    if run.returncode == 0:
        return name, True, ""
    lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
    if run.returncode < 0:
        why = f"killed by signal {-run.returncode} (CPU or memory bound)"
    else:
        why = lines[-1][:300] if lines else f"exit {run.returncode}"
    return name, False, why


def main(argv: list[str] | None = None) -> int:
    """Run the cases; print each failure and ``N passed, M failed``; exit 1 on any failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--only", default="", help="run the cases whose name holds this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    parser.add_argument("--list", action="store_true", help="list the case names")
    args = parser.parse_args(argv)
    cases = [case for case in _cases() if args.only in case[0]]
    if args.list:
        print("\n".join(name for name, _ in cases))
        return 0
    passed = failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, ok, why in pool.map(lambda case: run_case(*case), cases):
            if ok:
                passed += 1
                if args.verbose:
                    print(f"pass  {name}", flush=True)
            else:
                failed += 1
                print(f"FAIL  {name}: {why}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
