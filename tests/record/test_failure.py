"""The Failure record: construction-time validation, immutability, canonical JSON."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given

from failcode import (
    FC,
    Category,
    CauseLink,
    EntityRef,
    Failure,
    FailureDecodeError,
    FailureError,
    InvalidFailureError,
    Kind,
    Retryability,
    Severity,
    failure_json_schema,
)
from tests.strategies import failures


def fields(**overrides: Any) -> dict[str, Any]:
    """Valid keyword arguments for a Failure, with overrides."""
    base: dict[str, Any] = {
        "code": "FC-BUILD-001",
        "kind": Kind.BUILD_ERROR,
        "category": Category.TASK,
        "severity": Severity.ERROR,
        "retryability": Retryability.RETRYABLE_AFTER_CHANGE,
        "error_class": "undefined_reference",
        "surface": "cpp.build",
        "message": "Undefined reference to foo.",
        "signature": "build_error:cpp.build:undefined_reference:src/foo.cpp:ab12cd34",
        "signature_version": "sig1.n1",
        "location": "src/foo.cpp",
    }
    base.update(overrides)
    if "location" in overrides or "surface" in overrides or "error_class" in overrides:
        kind = Kind(base["kind"]).value
        base.setdefault("signature", "")
        base["signature"] = (f"{kind}:{base['surface']}:{base['error_class']}:"
                             f"{base['location'] or 'none'}:ab12cd34")
    return base


def test_valid_record_builds() -> None:
    """A record with valid fields builds and keeps them."""
    record = Failure(**fields())
    assert record.code == "FC-BUILD-001"
    assert record.error_id.startswith("fc-")


def test_error_ids_are_unique() -> None:
    """Every record gets its own error id."""
    assert len({Failure(**fields()).error_id for _ in range(1000)}) == 1000


def test_enum_strings_are_coerced() -> None:
    """Axis values given as their wire strings become the enum members."""
    record = Failure(**fields(kind="build_error", category="task", severity="error",
                              retryability="retryable_after_change"))
    assert type(record.kind) is Kind
    assert type(record.category) is Category
    assert type(record.severity) is Severity
    assert type(record.retryability) is Retryability


@pytest.mark.parametrize(("override", "needle"), [
    ({"code": "FC-BUILD-1"}, "<PREFIX>-<AREA>-<NNN>"),
    ({"code": "fc-build-001"}, "<PREFIX>-<AREA>-<NNN>"),
    ({"kind": "build_failure"}, "expected one of user_error"),
    ({"category": "whoever"}, "expected one of user"),
    ({"severity": "critical"}, "expected one of info"),
    ({"retryability": "maybe"}, "expected one of retryable"),
    ({"message": "x" * 301}, "at most 300 characters"),
    ({"message": "first line\nsecond line"}, "one line"),
    ({"message": "   "}, "non-empty"),
    ({"surface": "cpp build"}, "no ':' and no white space"),
    ({"error_class": "undefined:reference"}, "no ':' and no white space"),
    ({"location": "src/foo.cpp:12"}, "line or column number"),
    ({"location": "src/Foo.java(12)"}, "line or column number"),
    ({"location": "/tmp/tmpab12cd/src/foo.cpp"}, "temp or home"),
    ({"location": "/home/alice/project/src/foo.cpp"}, "temp or home"),
    ({"location": "/Users/alice/project/src/foo.cpp"}, "temp or home"),
    ({"location": "~/project/src/foo.cpp"}, "home-relative"),
    ({"location": "src/my file.cpp"}, "no ':' and no white space"),
    ({"signature": "build_error:cpp.build:undefined_reference:src/foo.cpp:AB12CD34"},
     "8 lowercase hex"),
    ({"signature": "build_error:cpp.build:other_class:src/foo.cpp:ab12cd34"},
     "expected build_error:cpp.build:undefined_reference"),
    ({"signature_version": "sig 1"}, "without white space"),
    ({"recoverable": "yes"}, "expected a bool"),
    ({"detail": "   "}, "non-blank"),
    ({"params": {"n": [1, 2]}}, "JSON scalars"),
    ({"context": {1: "x"}}, "keys must be str"),
    ({"metadata": {"delay": float("nan")}}, "finite"),
    ({"metadata": {f"k{i}": i for i in range(65)}}, "at most 64 keys"),
    ({"cause": tuple(CauseLink("E", "m") for _ in range(9))}, "at most 8 links"),
    ({"evidence_refs": ("artifact:1",)}, "EntityRef"),
])
def test_invalid_values_fail_at_construction(override: dict[str, Any], needle: str) -> None:
    """Each invariant of the record is checked when it is built, with a clear message."""
    with pytest.raises(InvalidFailureError, match=None) as info:
        Failure(**fields(**override))
    assert needle in str(info.value)
    field = next(iter(override))
    assert f"Failure.{field}" in str(info.value)


def test_working_directory_absolute_location_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """An absolute path inside the working directory is volatile and refused."""
    monkeypatch.chdir("/usr")  # a working directory that is neither temp nor home
    location = str(Path.cwd() / "src" / "foo.cpp")
    with pytest.raises(InvalidFailureError, match="working-directory"):
        Failure(**fields(location=location))


def test_stable_system_location_is_accepted() -> None:
    """A stable system path such as /usr/bin is a valid location."""
    assert Failure(**fields(location="/usr/bin")).location == "/usr/bin"


@pytest.mark.parametrize("category", [Category.USER, Category.ENVIRONMENT])
def test_remedy_required_for_user_and_environment(category: Category) -> None:
    """Seed 003: a user or environment failure without a remedy cannot be built."""
    with pytest.raises(InvalidFailureError, match="remedy is required"):
        Failure(**fields(category=category))
    assert Failure(**fields(category=category, remedy="Do this.")).remedy == "Do this."


def test_valid_after_invalid_with_same_static_fields() -> None:
    """The validation cache never lets a str axis through after a valid record was cached."""
    Failure(**fields())
    record = Failure(**fields(kind="build_error"))
    assert type(record.kind) is Kind


def test_record_is_immutable() -> None:
    """Fields cannot be assigned."""
    record = Failure(**fields())
    with pytest.raises(AttributeError):
        record.message = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("field", ["params", "context", "metadata"])
def test_mappings_are_immutable(field: str) -> None:
    """params, context and metadata refuse every mutation, and do not alias the caller's dict."""
    given_mapping = {"a": 1}
    record = Failure(**fields(**{field: given_mapping}))
    mapping = getattr(record, field)
    with pytest.raises(TypeError):
        mapping["b"] = 2
    with pytest.raises(TypeError):
        mapping.update(b=2)
    with pytest.raises(TypeError):
        del mapping["a"]
    given_mapping["b"] = 2
    assert dict(getattr(record, field)) == {"a": 1}


def test_canonical_json_round_trips() -> None:
    """to_json gives canonical JSON and from_json reads it back equal."""
    record = FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"},
                                        context={"session": "s1", "step": 4},
                                        metadata={"http_status": 429, "request_id": "req_1"})
    text = record.to_json()
    assert json.loads(text)["code"] == "FC-PROV-003"
    assert Failure.from_json(text) == record
    assert Failure.from_dict(record.to_dict()) == record
    assert list(json.loads(text)) == list(Failure.__struct_fields__)


def test_canonical_json_sorts_mapping_keys() -> None:
    """Mapping keys are sorted in the canonical form, whatever order they were given in."""
    one = Failure(**fields(context={"b": 1, "a": 2}, error_id="x"))
    two = Failure(**fields(context={"a": 2, "b": 1}, error_id="x"))
    assert one.to_json() == two.to_json()


@given(failures())
def test_any_record_round_trips_json(record: Failure) -> None:
    """Property: every valid record survives its canonical JSON form."""
    assert Failure.from_json(record.to_json()) == record
    assert Failure.from_dict(record.to_dict()) == record


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda d: d.update(colour="red"), "unknown field `colour`"),
    (lambda d: d.pop("kind"), "missing required field `kind`"),
    (lambda d: d.update(kind="oops"), "$.kind"),
    (lambda d: d.update(location="/tmp/x/y.py"), "temp or home"),
    (lambda d: d.update(message="a\nb"), "one line"),
])
def test_decoding_rejects_invalid_records(mutate: Any, needle: str) -> None:
    """Decoding rejects unknown fields and broken invariants, naming what is wrong."""
    data = Failure(**fields(location=None)).to_dict()
    mutate(data)
    with pytest.raises(FailureDecodeError) as info:
        Failure.from_json(json.dumps(data))
    assert needle in str(info.value)


def test_from_json_rejects_malformed_json() -> None:
    """Malformed JSON is a FailureDecodeError, not a msgspec internal error."""
    with pytest.raises(FailureDecodeError, match="malformed"):
        Failure.from_json("{not json")


def test_json_schema_describes_the_record() -> None:
    """The exported JSON Schema lists every field and forbids none of the canonical ones."""
    schema = failure_json_schema()
    definition = schema["$defs"]["Failure"]
    assert set(definition["properties"]) == set(Failure.__struct_fields__)
    assert definition["additionalProperties"] is False
    assert set(schema["$defs"]["Kind"]["enum"]) == {kind.value for kind in Kind}


def test_failure_error_carries_the_record() -> None:
    """FailureError carries the Failure; str() is [CODE] message; `from` keeps the cause."""
    record = Failure(**fields())

    def fail() -> None:
        try:
            raise KeyError("inner")
        except KeyError as exc:
            raise FailureError(record) from exc

    with pytest.raises(FailureError) as info:
        fail()
    assert info.value.failure is record
    assert str(info.value) == "[FC-BUILD-001] Undefined reference to foo."
    assert isinstance(info.value.__cause__, KeyError)


def test_failure_error_pickles() -> None:
    """A FailureError crosses multiprocessing (pickle) with its record intact."""
    record = Failure(**fields(context={"session": "s"}))
    clone = pickle.loads(pickle.dumps(FailureError(record)))
    assert clone.failure == record
    assert copy.deepcopy(record) == record


def test_failure_error_needs_a_failure() -> None:
    """FailureError refuses anything but a Failure: misuse is a TypeError."""
    with pytest.raises(TypeError, match=r"carries a failcode\.Failure"):
        FailureError("boom")  # type: ignore[arg-type]


def test_refs_and_causes_are_tuples() -> None:
    """Lists given for cause and refs become tuples, so the record stays immutable."""
    record = Failure(**fields(cause=[CauseLink("ValueError", "bad")],
                              evidence_refs=[EntityRef("artifact", "a1")]))
    assert record.cause == (CauseLink("ValueError", "bad"),)
    assert record.evidence_refs == (EntityRef("artifact", "a1"),)


def test_entity_ref_needs_type_and_id() -> None:
    """An EntityRef with an empty id fails at construction."""
    with pytest.raises(InvalidFailureError, match="EntityRef"):
        EntityRef("artifact", "")


def test_replace_revalidates() -> None:
    """msgspec.structs.replace builds a new record, validated like any other."""
    record = Failure(**fields())
    with pytest.raises(InvalidFailureError):
        msgspec.structs.replace(record, message="a\nb")
