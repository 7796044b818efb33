"""The axes and the per-kind defaults (DESIGN.md "Axes")."""

from __future__ import annotations

import pytest

from failcode import (
    CATEGORY_RETRYABILITIES,
    KIND_DEFAULTS,
    Category,
    Kind,
    Outcome,
    Retryability,
    Route,
    Severity,
)

SEED_000_KINDS = [
    "user_error", "project_error", "env_error", "dependency_error", "permission_error",
    "tool_error", "command_error", "build_error", "test_error", "static_analysis_error",
    "debug_error", "provider_error", "model_capability_error", "context_error", "agent_error",
    "scheduler_error", "workspace_error", "merge_error", "architecture_error", "policy_error",
    "system_error", "unknown_error",
]

# DESIGN.md's table: kind -> (category, retryability, routes, outcome)
DESIGN_DEFAULTS = {
    "user_error": ("user", "not_retryable", ("main_agent",), "blocked"),
    "project_error": ("user", "retryable_after_change", ("main_agent", "doctor"), "blocked"),
    "env_error": ("environment", "retryable_after_change", ("doctor",), "blocked"),
    "dependency_error": ("environment", "retryable_after_change",
                         ("doctor", "permission_engine"), "blocked"),
    "permission_error": ("user", "retryable_after_change",
                         ("permission_engine", "main_agent"), "blocked"),
    "tool_error": ("defect", "not_retryable", ("scheduler", "debugger"), "failed"),
    "command_error": ("task", "unknown", ("scheduler", "debugger"), "failed"),
    "build_error": ("task", "retryable_after_change", ("executor", "debugger"), "failed"),
    "test_error": ("task", "retryable_after_change", ("executor", "debugger"), "failed"),
    "static_analysis_error": ("task", "retryable_after_change", ("reviewer", "debugger"),
                              "failed"),
    "debug_error": ("task", "retryable_after_change", ("debugger", "scheduler"), "failed"),
    "provider_error": ("transient", "retryable", ("provider_layer", "main_agent"), "failed"),
    "model_capability_error": ("environment", "retryable_after_change",
                               ("scheduler", "provider_selector"), "failed"),
    "context_error": ("task", "retryable_after_change", ("context_assembler", "compactor"),
                      "failed"),
    "agent_error": ("task", "retryable_after_change", ("scheduler",), "failed"),
    "scheduler_error": ("defect", "not_retryable", ("main_agent", "developer"), "blocked"),
    "workspace_error": ("environment", "retryable_after_change", ("scheduler",), "failed"),
    "merge_error": ("task", "retryable_after_change",
                    ("scheduler", "debugger", "architecture_designer"), "failed"),
    "architecture_error": ("user", "not_retryable", ("architecture_designer",), "blocked"),
    "policy_error": ("user", "not_retryable", ("main_agent", "permission_engine"), "blocked"),
    "system_error": ("environment", "retryable_after_change", ("scheduler", "doctor"), "failed"),
    "unknown_error": ("task", "unknown", ("scheduler", "debugger"), "failed"),
}


def test_kinds_are_the_22_of_seed_000_in_order() -> None:
    """Kind's wire values are exactly seed 000's ErrorKind union, in its order."""
    assert [kind.value for kind in Kind] == SEED_000_KINDS


@pytest.mark.parametrize(("enum", "values"), [
    (Category, ["user", "transient", "environment", "defect", "task"]),
    (Severity, ["info", "warning", "error", "fatal"]),
    (Retryability, ["retryable", "retryable_after_change", "not_retryable", "unknown"]),
    (Outcome, ["failed", "blocked", "cancelled"]),
    (Route, ["main_agent", "doctor", "permission_engine", "scheduler", "debugger", "executor",
             "reviewer", "provider_layer", "provider_selector", "context_assembler",
             "compactor", "architecture_designer", "user", "developer"]),
])
def test_axis_wire_values(enum: type, values: list[str]) -> None:
    """Each axis has exactly the wire values of the seeds and DESIGN.md."""
    assert [member.value for member in enum] == values


@pytest.mark.parametrize("kind", list(Kind))
def test_kind_defaults_follow_design(kind: Kind) -> None:
    """Every kind's default category, retryability, ordered routes and outcome match DESIGN.md."""
    category, retryability, routes, outcome = DESIGN_DEFAULTS[kind.value]
    defaults = kind.defaults
    assert defaults.category == category
    assert defaults.retryability == retryability
    assert tuple(route.value for route in defaults.routes) == routes
    assert defaults.outcome == outcome
    assert defaults.meaning


def test_defaults_cover_every_kind_once() -> None:
    """The defaults table is keyed by every kind and nothing else."""
    assert set(KIND_DEFAULTS) == set(Kind)


def test_kind_defaults_are_read_only() -> None:
    """The defaults table cannot be changed at run time."""
    with pytest.raises(TypeError):
        KIND_DEFAULTS[Kind.USER_ERROR] = KIND_DEFAULTS[Kind.TOOL_ERROR]  # type: ignore[index]


def test_remedy_categories_are_user_and_environment() -> None:
    """Seed 003: the remedy is mandatory for the user and environment categories only."""
    assert {c for c in Category if c.needs_remedy} == {Category.USER, Category.ENVIRONMENT}


# DESIGN.md "Category and retryability": who acts fixes the recovery family
DESIGN_PAIRS = {
    "transient": {"retryable"},
    "user": {"not_retryable", "retryable_after_change"},
    "environment": {"retryable_after_change", "not_retryable"},
    "task": {"retryable_after_change", "unknown"},
    "defect": {"not_retryable"},
}


@pytest.mark.parametrize("category", list(Category))
def test_category_allows_exactly_the_design_retryabilities(category: Category) -> None:
    """Each category allows exactly the retryabilities DESIGN.md pairs with it."""
    allowed = {r.value for r in CATEGORY_RETRYABILITIES[category]}
    assert allowed == DESIGN_PAIRS[category.value]
    assert {r.value for r in Retryability if category.allows(r)} == allowed


@pytest.mark.parametrize("kind", list(Kind))
def test_kind_defaults_pair_category_and_retryability_legally(kind: Kind) -> None:
    """No kind's default pairs a category with a retryability the category forbids."""
    defaults = kind.defaults
    assert defaults.retryability.value in DESIGN_PAIRS[defaults.category.value]
