"""Semantic signatures: format, components, stability, golden snapshots (seed 000 §6)."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import FC, SIGNATURE_VERSION, Failure, Kind, classify_text, explain_signature, sign
from tests._paths import TESTS

GOLDEN = TESTS / "golden" / "signatures.json"

# Inputs pinned by the golden file: a change to any signature is a new SIGNATURE_VERSION.
GOLDEN_CASES: list[dict[str, Any]] = [
    {"kind": "build_error", "surface": "cpp.build", "error_class": "undefined_reference",
     "location": "src/foo.cpp", "message": "undefined reference to `foo_bar'"},
    {"kind": "provider_error", "surface": "llm.complete", "error_class": "rate_limit",
     "message": "Anthropic rate-limited the request.", "status": 429},
    {"kind": "merge_error", "surface": "git.merge_workspace", "error_class": "patch_conflict",
     "location": "src/main.cpp", "message": "Merging produced a conflict in src/main.cpp."},
    {"kind": "permission_error", "surface": "shell.run", "error_class": "system_sensitive",
     "location": "/usr/bin", "message": "Writing to /usr/bin needs approval."},
    {"kind": "test_error", "surface": "python.test", "error_class": "assertion_failed",
     "location": "tests/test_login.py",
     "message": "FAILED tests/test_login.py::test_login_v2 - AssertionError"},
    {"kind": "static_analysis_error", "surface": "python.lint", "error_class": "lint_violation",
     "location": "src/app.py", "message": "'os' imported but unused", "diagnostic": "F401"},
    {"kind": "policy_error", "surface": "shell.run", "error_class": "content_filtered",
     "message": "The request was refused.", "blocker": "destructive_command"},
    {"kind": "dependency_error", "surface": "shell.run", "error_class": "command_not_found",
     "message": "The program cargo is not installed or not on PATH.", "status": 127},
]


def signed(case: dict[str, Any]) -> str:
    """The signature of one golden case."""
    return sign(case["kind"], case["surface"], case["error_class"], case.get("location"),
                message=case["message"], status=case.get("status"),
                diagnostic=case.get("diagnostic"), blocker=case.get("blocker")).value


# Records as the classifiers build them (unknown failures sign their message, sig2 on).
GOLDEN_TEXT_CASES: list[tuple[str, str]] = [
    ("RuntimeError", "database is locked"),
    ("RuntimeError", "worker pool exhausted"),
    ("RuntimeError", ""),
    ("ValueError", "database is locked"),
]


def signed_text(case: tuple[str, str]) -> str:
    """The signature classify_text gives one golden unknown failure."""
    failure = classify_text(*case)
    assert isinstance(failure, Failure)
    return failure.signature


def _current() -> dict[str, Any]:
    return {"version": SIGNATURE_VERSION,
            "signatures": [signed(case) for case in GOLDEN_CASES],
            "unknown_signatures": [signed_text(case) for case in GOLDEN_TEXT_CASES]}


def test_golden_signatures_are_pinned() -> None:
    """Signatures of the golden cases never change within one SIGNATURE_VERSION."""
    if os.environ.get("FAILCODE_REGEN_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(_current(), indent=2) + "\n")
        pytest.fail(f"wrote {GOLDEN.name}: review its diff, then run again without "
                    "FAILCODE_REGEN_GOLDEN (regenerating never passes a run)")
    golden = json.loads(GOLDEN.read_text())
    assert golden["version"] == SIGNATURE_VERSION, (
        f"SIGNATURE_VERSION is {SIGNATURE_VERSION} but the golden file pins "
        f"{golden['version']}: regenerate with FAILCODE_REGEN_GOLDEN=1 once the new version "
        f"is deliberate")
    current = _current()
    assert (current["signatures"], current["unknown_signatures"]) == (
        golden["signatures"], golden["unknown_signatures"]), (
        "signatures changed without a new SIGNATURE_VERSION: a change to the components or to "
        "normalization must bump the version (never silently regroup history)")


def test_unknown_failures_of_one_type_with_different_messages_differ() -> None:
    """Two different RuntimeErrors are two signatures; the same one on any run is one."""
    a, b, c = (signed_text(case) for case in GOLDEN_TEXT_CASES[:3])
    assert len({a, b, c}) == 3
    assert signed_text(GOLDEN_TEXT_CASES[0]) == a


def test_regenerating_golden_signatures_fails_the_run(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Any) -> None:
    """The regeneration switch writes the file and fails, so it never passes its own test."""
    import tests.signature.test_signature as this  # noqa: PLW0406 - patching GOLDEN

    target = tmp_path / "signatures.json"
    monkeypatch.setattr(this, "GOLDEN", target)
    monkeypatch.setenv("FAILCODE_REGEN_GOLDEN", "1")
    with pytest.raises(pytest.fail.Exception, match="review its diff"):
        this.test_golden_signatures_are_pinned()
    assert json.loads(target.read_text())["version"] == SIGNATURE_VERSION


def test_format_matches_seed_000() -> None:
    """The signature reads <kind>:<surface>:<class>:<location-or-none>:<8 hex>."""
    value = signed(GOLDEN_CASES[0])
    kind, surface, cls, location, digest = value.split(":")
    assert (kind, surface, cls, location) == ("build_error", "cpp.build", "undefined_reference",
                                              "src/foo.cpp")
    assert len(digest) == 8
    assert int(digest, 16) >= 0
    assert signed(GOLDEN_CASES[1]).split(":")[3] == "none"


def test_version_names_the_normalization() -> None:
    """The signature version includes the normalization rules' version."""
    from failcode.signature._normalize import NORMALIZE_VERSION

    assert SIGNATURE_VERSION.endswith(NORMALIZE_VERSION)


def test_explain_signature_reproduces_the_record() -> None:
    """explain_signature recomputes a record's signature and shows every component."""
    record = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                      metadata={"exit_code": 127})
    explained = explain_signature(record)
    assert explained.value == record.signature
    assert explained.version == record.signature_version
    components = {c.name: c for c in explained.components}
    assert list(components) == ["kind", "surface", "status", "diagnostic", "class", "location",
                                "message", "blocker"]
    assert components["status"].contributes
    assert components["status"].value == "127"
    assert components["status"].source == "metadata.exit_code | metadata.http_status"
    assert not components["diagnostic"].contributes
    assert components["diagnostic"].hint == "no primary diagnostic code"
    assert not components["blocker"].contributes


def test_blocker_counts_only_for_policy_and_architecture() -> None:
    """A blocker class contributes for policy and architecture errors only."""
    base = {"surface": "shell.run", "error_class": "x", "message": "m", "blocker": "b1"}
    other = dict(base, blocker="b2")
    assert signed(dict(base, kind="policy_error")) != signed(dict(other, kind="policy_error"))
    assert signed(dict(base, kind="tool_error")) == signed(dict(other, kind="tool_error"))


@pytest.mark.parametrize(("field", "one", "two"), [
    ("message", "undefined reference to `foo'", "undefined reference to `bar'"),
    ("message", "No module named 'requests'", "No module named 'numpy'"),
    ("message", "FAILED tests/test_a.py::test_one", "FAILED tests/test_a.py::test_two"),
    ("message", "model gpt-4o not found", "model gpt-4o-mini not found"),
    ("diagnostic", "F401", "E501"),
    ("status", 429, 503),
    ("location", "src/a.py", "src/b.py"),
])
def test_identity_changes_the_signature(field: str, one: Any, two: Any) -> None:
    """Different root causes give different signatures: identity stays in the hash."""
    base = {"kind": "build_error", "surface": "x.build", "error_class": "c", "message": "m"}
    assert signed(dict(base, **{field: one})) != signed(dict(base, **{field: two}))


def volatile_values() -> st.SearchStrategy[st.SearchStrategy[str]]:
    """Strategies, one per kind of volatile data; two draws of one kind are the same failure."""
    # random ids as real systems make them: from random bytes, not hand-picked characters
    def token(size: int) -> st.SearchStrategy[str]:
        return st.binary(min_size=size, max_size=size).map(
            lambda b: base64.b32encode(b).decode().rstrip("=").lower())

    return st.sampled_from([
        st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
        st.datetimes().map(lambda d: d.strftime("%a %b %d %H:%M:%S %Y")),
        st.uuids().map(str),
        token(5).map(lambda t: f"/tmp/tmp{t}"),
        st.integers(2, 4_000_000).map(lambda n: f"pid {n}"),
        st.integers(1024, 65535).map(lambda n: f"127.0.0.1:{n}"),
        st.binary(min_size=15, max_size=15).map(
            lambda b: "req_" + base64.b64encode(b, altchars=b"Xy").decode()),
        st.integers(2**32, 2**47).map(hex),
        st.floats(0.01, 999, allow_nan=False).map(lambda f: f"after {f:.2f}s"),
        st.integers(1, 9999).map(lambda n: f"in {n}ms"),
    ])


@given(st.data())
def test_volatile_tokens_never_change_the_signature(data: st.DataObject) -> None:
    """Property: the same failure with other volatile values of the same kind keeps its
    signature."""
    kind_of_value = data.draw(volatile_values())
    one, two = data.draw(kind_of_value), data.draw(kind_of_value)
    template = "connection to backend failed at {} (retry {})"
    base = {"kind": "provider_error", "surface": "llm.complete", "error_class": "connection"}
    assert signed(dict(base, message=template.format(one, one))) == signed(
        dict(base, message=template.format(two, two)))


@given(st.from_regex(r"[a-z_][a-z0-9_]{2,20}", fullmatch=True),
       st.from_regex(r"[a-z_][a-z0-9_]{2,20}", fullmatch=True))
def test_distinct_symbols_never_collide(one: str, two: str) -> None:
    """Property: two missing symbols with different names never share a signature."""
    base = {"kind": "build_error", "surface": "cpp.build", "error_class": "undefined_reference"}
    same = signed(dict(base, message=f"undefined reference to `{one}'")) == signed(
        dict(base, message=f"undefined reference to `{two}'"))
    assert same == (one == two)


def test_signature_is_stable_across_processes() -> None:
    """blake2b, not hash(): the same inputs sign the same in another interpreter."""
    import subprocess
    import sys

    code = ("from failcode import sign; print(sign('build_error', 'cpp.build', "
            "'undefined_reference', 'src/foo.cpp', message='undefined reference to x').value)")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2")}
    assert len(outputs) == 1


def test_kind_is_validated() -> None:
    """An unknown kind is refused, not hashed."""
    with pytest.raises(ValueError, match="build_failure"):
        sign("build_failure", "cpp.build", "x")
    assert sign(Kind.BUILD_ERROR, "cpp.build", "x").value.startswith("build_error:")
