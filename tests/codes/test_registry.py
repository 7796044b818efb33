"""Code registries: declaration checks, lookup, the lock, and building records from specs."""

from __future__ import annotations

from typing import Any

import pytest

from failcode import (
    CATEGORY_RETRYABILITIES,
    FC,
    FC_CATALOG,
    SIGNATURE_VERSION,
    Catalog,
    CatalogError,
    Category,
    CodeEnum,
    CodeSpec,
    Failure,
    Kind,
    RetiredCodeError,
    Retryability,
    UnknownCodeError,
    lookup,
)
from failcode.codes._registry import check_lock, update_lock
from tests.afk_catalog import AFK, AFK_AREAS, AFKCode


def spec(**overrides: Any) -> CodeSpec:
    """A valid spec in a test catalog (prefix TST, area A), with overrides."""
    fields: dict[str, Any] = {
        "code": "TST-A-001", "slug": "thing-failed", "kind": Kind.TOOL_ERROR,
        "category": Category.DEFECT, "error_class": "thing", "message": "The {thing} failed.",
        "impact": "Nothing works.", "example": "A thing failing.",
        "example_params": {"thing": "widget"}, "since": "1.0",
    }
    fields.update(overrides)
    return CodeSpec(**fields)


def declare(*specs: CodeSpec, **catalog_kwargs: Any) -> Catalog:
    """Declare a catalog TST over the given specs."""
    members = {f"C{i}": s for i, s in enumerate(specs)}
    enum = CodeEnum("TstCode", members)  # type: ignore[call-overload]
    return Catalog("TST", areas=catalog_kwargs.pop("areas", {"A": "area a"}), codes=enum,
                   **catalog_kwargs)


def test_fc_catalog_declares_its_areas() -> None:
    """failcode's own catalog has the areas the foundation issue names, plus DATA."""
    assert set(FC_CATALOG.areas) == {"PROV", "CMD", "BUILD", "TEST", "LINT", "GIT", "OS",
                                     "CFG", "POL", "LIFE", "STORE", "SVC", "SYS", "DATA"}


def test_afk_catalog_declares_with_the_same_machinery() -> None:
    """A user catalog (seed 003's AFK areas) declares and looks up like FC's."""
    assert set(AFK.areas) == set(AFK_AREAS)
    assert lookup("AFK-PERC-003") is AFKCode.PERC_CAPTURE_FULLSCREEN.spec
    assert AFKCode("AFK-PERC-003") is AFKCode.PERC_CAPTURE_FULLSCREEN
    assert AFKCode.PERC_CAPTURE_FULLSCREEN == "AFK-PERC-003"


@pytest.mark.parametrize(("specs", "kwargs", "needle"), [
    ((spec(code="TST-B-001"),), {}, "area B is not declared"),
    ((spec(code="XYZ-A-001"),), {}, "expected TST-<AREA>-<NNN>"),
    ((spec(code="TST-A-1"),), {}, "expected TST-<AREA>-<NNN>"),
    ((spec(), spec(slug="other")), {}, "repeats the code TST-A-001"),
    ((spec(), spec(code="TST-A-002")), {}, "slug 'thing-failed' is already used"),
    ((spec(category=Category.USER),), {}, "needs a remedy template"),
    ((spec(category=Category.ENVIRONMENT, remedy="  "),), {}, "needs a remedy template"),
    ((spec(category=Category.TASK),), {"categories": frozenset({Category.USER,
                                       Category.TRANSIENT, Category.ENVIRONMENT,
                                       Category.DEFECT})}, "category task is not allowed"),
    ((spec(message="The {thing.__class__} failed."),), {}, "plain {identifier}"),
    ((spec(message="The {other} failed."),), {}, "example_params lack other"),
    ((spec(slug="Not_A_Slug"),), {}, "must be lower-case words"),
    ((spec(error_class="Bad Class"),), {}, "error_class"),
    ((spec(superseded_by="TST-A-009", retired=True),), {}, "TST-A-009 is not declared"),
    ((spec(superseded_by="TST-A-001"),), {}, "not retired"),
    ((spec(),), {"areas": {"a": "lower"}}, "area 'a' must be upper-case"),
])
def test_catalog_declaration_problems(specs: tuple[CodeSpec, ...], kwargs: dict[str, Any],
                                      needle: str) -> None:
    """Each registry rule is checked when a catalog is declared, naming the code."""
    with pytest.raises(CatalogError) as info:
        declare(*specs, **kwargs)
    assert any(needle in problem for problem in info.value.problems), info.value.problems


def test_afk_style_catalog_cannot_declare_a_task_code() -> None:
    """A seed 003 catalog (four categories) refuses a task code."""
    from failcode import SEED_003_CATEGORIES

    with pytest.raises(CatalogError, match="category task is not allowed"):
        declare(spec(category=Category.TASK), categories=SEED_003_CATEGORIES)


def test_lookup_unknown_code_suggests_nearest() -> None:
    """An unknown code raises UnknownCodeError with the nearest declared codes."""
    with pytest.raises(UnknownCodeError) as info:
        lookup("FC-PROV-03")
    assert "FC-PROV-003" in info.value.suggestions


def test_lookup_by_slug() -> None:
    """A slug finds its code's spec."""
    assert lookup("provider-rate-limit").code == "FC-PROV-003"


@pytest.mark.parametrize("member", list(FC))
def test_every_fc_code_renders_its_example(member: FC) -> None:
    """Every FC code builds a valid Failure from its example params."""
    record = member.failure(surface="test.surface", params=dict(member.spec.example_params))
    assert record.code == member.value
    assert record.kind == member.spec.kind
    assert record.category == member.spec.category
    assert record.signature_version == SIGNATURE_VERSION
    if member.spec.category.needs_remedy:
        assert record.remedy


def test_factory_fills_record_from_spec() -> None:
    """The factory takes kind, category, retryability and templates from the spec."""
    record = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                      context={"session": "s1"})
    assert record.kind is Kind.DEPENDENCY_ERROR
    assert record.category is Category.ENVIRONMENT
    assert record.message == "The program cargo is not installed or not on PATH."
    assert record.remedy == "Install cargo or add its directory to PATH, then retry."
    assert record.signature.startswith("dependency_error:shell.run:command_not_found:none:")
    assert record.recoverable is False


def test_factory_redacts_and_bounds_params() -> None:
    """Params are redacted, put on one line and cut so the message stays one sentence."""
    token = "ghp_" + "Ab3" * 12
    record = FC.OS_FILE_NOT_FOUND.failure(
        surface="fs.read", params={"path": f"a\nb {token} " + "x" * 500})
    assert token not in record.message
    assert "\n" not in record.message
    assert len(record.message) <= 300
    # a path loses its middle, never its start or its end (the file's name)
    assert record.message.startswith("The file or directory a b ghp_<secret> xxx")
    assert "x…x" in record.message
    assert record.message.endswith("xxx does not exist.")


def test_factory_records_cause_chain() -> None:
    """An exception given as cause becomes a bounded, redacted chain, cycles cut."""
    inner = ValueError("inner")
    outer = RuntimeError("outer sk-ant-" + "A1b2" * 10)
    outer.__cause__ = inner
    inner.__context__ = outer  # a cycle
    record = FC.SYS_UNKNOWN.failure(surface="agent.step", params={"exception": "RuntimeError"},
                                    cause=outer)
    assert [link.type for link in record.cause] == ["RuntimeError", "ValueError"]
    assert "A1b2A1b2" not in record.cause[0].message


def test_factory_survives_unprintable_cause() -> None:
    """A cause whose __str__ raises is recorded, not propagated."""
    class WeirdError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    record = FC.SYS_UNKNOWN.failure(surface="x", params={"exception": "WeirdError"},
                                    cause=WeirdError())
    assert record.cause[0].message == "<unprintable WeirdError>"


def test_factory_missing_param_is_a_clear_key_error() -> None:
    """A template field missing from params names the code and the fields needed."""
    with pytest.raises(KeyError, match="FC-CMD-001 message template needs params program"):
        FC.CMD_NOT_FOUND.failure(surface="shell.run")


def test_retired_code_is_not_emitted() -> None:
    """Building a Failure of a retired code raises, naming its successor."""
    with pytest.raises(RetiredCodeError, match="use AFK-LOOP-001"):
        AFKCode.SYS_OLD_PIPE.failure(surface="pipe")


def test_retired_code_still_decodes() -> None:
    """A record of a retired code from an old log still decodes."""
    record = AFKCode.LOOP_STATE_MISMATCH.failure(surface="loop.tick")
    data = record.to_dict() | {"code": "AFK-SYS-001"}
    assert Failure.from_dict(data).code == "AFK-SYS-001"


def test_lock_update_adds_and_check_agrees() -> None:
    """A fresh lock from update_lock agrees with its catalog."""
    lock = update_lock(AFK, None)
    assert set(lock["codes"]) == {member.value for member in AFKCode}
    assert check_lock(AFK, lock) == []


@pytest.mark.parametrize(("edit", "rule"), [
    (lambda codes: codes.update({"AFK-PERC-099": {"slug": "gone", "kind": "env_error",
                                                  "category": "user"}}), "deleted"),
    (lambda codes: codes["AFK-PERC-003"].update(slug="something-else"), "reused"),
    (lambda codes: codes["AFK-PERC-003"].update(kind="tool_error"), "rekinded"),
    (lambda codes: codes["AFK-PERC-003"].update(category="defect"), "recategorized"),
    (lambda codes: codes["AFK-PERC-004"].update(retired=True), "unretired"),
    (lambda codes: codes.pop("AFK-PERC-004"), "unlocked"),
])
def test_lock_check_rules(edit: Any, rule: str) -> None:
    """check_lock names each way an enumeration can break its lock."""
    lock = update_lock(AFK, None)
    edit(lock["codes"])
    problems = check_lock(AFK, lock)
    assert [p.rule for p in problems] == [rule]


def test_lock_update_refuses_to_hide_a_break() -> None:
    """update_lock never rewrites an entry to match a changed enumeration."""
    lock = update_lock(AFK, None)
    lock["codes"]["AFK-PERC-003"]["kind"] = "tool_error"
    with pytest.raises(ValueError, match="changed kind"):
        update_lock(AFK, lock)


def test_factory_redacts_secrets_spanning_template_and_param() -> None:
    """A secret formed by the template's text and a param together never reaches the record."""
    record = FC.CFG_INVALID_VALUE.failure(
        surface="config.load",
        params={"file": "failcode.toml", "line": 3, "key": "password", "value": "hunter2x",
                "expected": "a reference such as $VAR"})
    assert "hunter2x" not in record.message
    assert "hunter2x" not in (record.remedy or "")


# -- category and retryability (DESIGN.md "Category and retryability") -------------------------

_ILLEGAL_PAIRS = [
    (category, retryability) for category in Category for retryability in Retryability
    if retryability not in CATEGORY_RETRYABILITIES[category]
]


@pytest.mark.parametrize(("category", "retryability"), _ILLEGAL_PAIRS)
def test_declaring_refuses_a_retryability_the_category_forbids(
        category: Category, retryability: Retryability) -> None:
    """A code whose retryability contradicts its category is refused, naming both."""
    remedy = "Do something." if category.needs_remedy else None
    with pytest.raises(CatalogError, match=rf"TST-A-001: retryability {retryability.value} "
                                           rf"contradicts the {category.value} category"):
        declare(spec(category=category, retryability=retryability, remedy=remedy))


@pytest.mark.parametrize(("category", "kind", "expected"), [
    (Category.TRANSIENT, Kind.SYSTEM_ERROR, Retryability.RETRYABLE),
    (Category.DEFECT, Kind.AGENT_ERROR, Retryability.NOT_RETRYABLE),
    (Category.DEFECT, Kind.COMMAND_ERROR, Retryability.NOT_RETRYABLE),
    (Category.USER, Kind.ENV_ERROR, Retryability.RETRYABLE_AFTER_CHANGE),
    (Category.USER, Kind.PROVIDER_ERROR, Retryability.NOT_RETRYABLE),
    (Category.ENVIRONMENT, Kind.UNKNOWN_ERROR, Retryability.RETRYABLE_AFTER_CHANGE),
    (Category.TASK, Kind.USER_ERROR, Retryability.RETRYABLE_AFTER_CHANGE),
    (Category.TASK, Kind.COMMAND_ERROR, Retryability.UNKNOWN),
])
def test_unset_retryability_is_derived_within_the_category(
        category: Category, kind: Kind, expected: Retryability) -> None:
    """Unset, the retryability is the kind's default if the category allows it, else the
    category's default."""
    remedy = "Do something." if category.needs_remedy else None
    catalog = declare(spec(category=category, kind=kind, remedy=remedy))
    declared = next(iter(catalog))
    assert declared.effective_retryability is expected
    assert declared.failure(surface="t", params={"thing": "x"}).retryability is expected


def test_afk_codes_in_every_category_get_the_category_recovery() -> None:
    """The AFK catalog (one code per seed 003 category) derives each code's retryability."""
    by_category = {spec.category: spec.effective_retryability for spec in AFK}
    assert by_category == {
        Category.USER: Retryability.RETRYABLE_AFTER_CHANGE,  # project/env kinds: after a change
        Category.TRANSIENT: Retryability.RETRYABLE,
        Category.ENVIRONMENT: Retryability.RETRYABLE_AFTER_CHANGE,
        Category.DEFECT: Retryability.NOT_RETRYABLE,
    }


@pytest.mark.parametrize("member", list(FC), ids=lambda m: m.value)
def test_every_fc_code_pairs_category_and_retryability_legally(member: FC) -> None:
    """failcode's own codes obey the category rule."""
    assert member.spec.category.allows(member.spec.effective_retryability)
