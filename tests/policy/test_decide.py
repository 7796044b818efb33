"""decide(): DESIGN.md's seven ordered rules are the oracle; expected values come from its text."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import (
    FC,
    KIND_DEFAULTS,
    Action,
    Budget,
    BudgetPolicy,
    Catalog,
    Category,
    Change,
    CodeEnum,
    CodeSpec,
    Failure,
    Hint,
    History,
    Kind,
    LadderPolicy,
    MonitorPolicy,
    NoMatch,
    NoProgressMonitor,
    Outcome,
    Policy,
    RejectedAction,
    Retryability,
    RetryClass,
    Route,
    Severity,
    SharedBudget,
    decide,
)
from failcode import DecisionRule as Rule
from tests.afk_catalog import AFKCode


class TDC(CodeEnum):
    """Codes for kinds and categories failcode's own catalog does not combine."""

    ARCH = CodeSpec(
        code="TDC-DEC-001", slug="tdc-arch", kind=Kind.ARCHITECTURE_ERROR, category=Category.USER,
        error_class="interface_mismatch", message="The plan contradicts the interface {name}.",
        remedy="Redesign the plan around {name}.", impact="Blocked.", example="A bad plan.",
        example_params={"name": "api"}, since="0.1.0")
    PERM = CodeSpec(
        code="TDC-DEC-002", slug="tdc-perm", kind=Kind.PERMISSION_ERROR, category=Category.USER,
        error_class="needs_confirmation", message="Running {program} needs confirmation.",
        remedy="Approve {program} or change the profile.", impact="Blocked.",
        example="rm -rf.", example_params={"program": "rm"}, since="0.1.0")
    DEFECT = CodeSpec(
        code="TDC-DEC-003", slug="tdc-defect", kind=Kind.AGENT_ERROR, category=Category.DEFECT,
        error_class="bad_result", retryability=Retryability.NOT_RETRYABLE,
        message="The worker returned an invalid result.", impact="The step failed.",
        example="A result missing its status.", since="0.1.0")
    TOOL_DEFECT = CodeSpec(
        code="TDC-DEC-005", slug="tdc-tool-defect", kind=Kind.TOOL_ERROR,
        category=Category.DEFECT, error_class="tool_crashed",
        message="The tool crashed on valid input.", impact="The step failed.",
        example="A tool raising IndexError on an empty list.", since="0.1.0")
    WORKSPACE = CodeSpec(
        code="TDC-DEC-004", slug="tdc-workspace", kind=Kind.WORKSPACE_ERROR,
        category=Category.ENVIRONMENT, error_class="worktree_failed",
        message="The worktree {name} could not be created.", remedy="Repair the worktree {name}.",
        impact="The task cannot start.", example="git worktree add fails.",
        example_params={"name": "w1"}, since="0.1.0")


TDC_CATALOG = Catalog("TDC", areas={"DEC": "decide tests"}, codes=TDC)

PARAMS: dict[Any, dict[str, Any]] = {
    FC.PROV_RATE_LIMIT: {"provider": "OpenAI"}, FC.PROV_SERVER_ERROR: {"provider": "OpenAI"},
    FC.PROV_AUTH: {"provider": "OpenAI"}, FC.PROV_BAD_REQUEST: {"provider": "OpenAI"},
    FC.PROV_CONTENT_FILTERED: {"provider": "OpenAI"}, FC.PROV_OVERLOADED: {"provider": "OpenAI"},
    FC.PROV_MODEL_NOT_FOUND: {"provider": "OpenAI", "model": "m"},
    FC.CMD_NOT_FOUND: {"program": "cargo"}, FC.TEST_FAILED: {"program": "pytest"},
    FC.DATA_INVALID_INPUT: {"problem": "goal missing"}, FC.SYS_UNKNOWN: {"exception": "E"},
    FC.GIT_MERGE_CONFLICT: {"path": "src/a.py"}, FC.OS_TIMEOUT: {"operation": "read"},
    TDC.ARCH: {"name": "api"}, TDC.PERM: {"program": "rm"}, TDC.DEFECT: {},
    TDC.WORKSPACE: {"name": "w1"}, TDC.TOOL_DEFECT: {},
}


def make(code: Any, **overrides: Any) -> Failure:
    """A failure of ``code`` with its example params and the given refinements."""
    return code.failure(surface="step.run", params=PARAMS[code], **overrides)  # type: ignore[no-any-return]


def owner(failure: Failure) -> Route:
    """DESIGN.md: the primary owner is the kind's first default route."""
    return KIND_DEFAULTS[failure.kind].routes[0]


def fixed(value: float) -> Any:
    """A random source returning ``value`` every time."""
    return lambda: value


# -- rule 1: fatal severity --------------------------------------------------------------------

@pytest.mark.parametrize("code", [FC.PROV_RATE_LIMIT, FC.PROV_CONTENT_FILTERED, TDC.ARCH,
                                  FC.TEST_FAILED, FC.SYS_UNKNOWN, FC.DATA_INVALID_INPUT])
def test_rule_1_fatal_aborts_blocked_to_the_owner(code: Any) -> None:
    """Rule 1: severity fatal -> abort, outcome blocked, route the primary owner (first match)."""
    failure = make(code, severity=Severity.FATAL)
    decision = decide(failure, History(), Policy())
    assert (decision.action, decision.outcome, decision.route, decision.rule) == (
        Action.ABORT, Outcome.BLOCKED, owner(failure), Rule.FATAL)


# -- rule 2: policy and architecture -----------------------------------------------------------

@pytest.mark.parametrize(("code", "route"), [
    (FC.PROV_CONTENT_FILTERED, KIND_DEFAULTS[Kind.POLICY_ERROR].routes[0]),
    (TDC.ARCH, Route.ARCHITECTURE_DESIGNER),
])
@pytest.mark.parametrize("history", [
    History(), History().changed(Change.USER_APPROVAL, Change.POLICY),
    History(attempts=5, signatures={"x": 3}),
])
def test_rule_2_policy_and_architecture_block(code: Any, route: Route, history: History) -> None:
    """Rule 2: policy_error blocks, never retried; architecture_error blocks to the designer."""
    failure = make(code, retryability=Retryability.RETRYABLE)
    decision = decide(failure, history, Policy())
    assert (decision.action, decision.outcome, decision.route, decision.rule) == (
        Action.BLOCK, Outcome.BLOCKED, route, Rule.POLICY_OR_ARCHITECTURE)


# -- rule 3: the stuck ladder ------------------------------------------------------------------

def repeated(failure: Failure, times: int, operation: str = "default") -> History:
    """A history in which ``failure`` failed ``times`` times, nothing changed since."""
    history = History(operation=operation)
    for _ in range(times):
        history = history.after(failure)
    return history


@pytest.mark.parametrize(("code", "seen", "action", "rule"), [
    # retryable_after_change enters on "retry after change", then owner, then block
    (FC.TEST_FAILED, 1, Action.RETRY_AFTER_CHANGE, Rule.STUCK_LADDER),
    (FC.TEST_FAILED, 2, Action.ESCALATE, Rule.STUCK_LADDER),
    (FC.TEST_FAILED, 3, Action.BLOCK, Rule.STUCK_LADDER),
    (FC.TEST_FAILED, 9, Action.BLOCK, Rule.STUCK_LADDER),
    # retryable: the retry rung lasts the class's retries (default class: 3 attempts)
    (FC.PROV_SERVER_ERROR, 1, Action.RETRY, Rule.RETRYABLE),
    (FC.PROV_SERVER_ERROR, 2, Action.RETRY_AFTER_CHANGE, Rule.STUCK_LADDER),
    (FC.PROV_SERVER_ERROR, 3, Action.ESCALATE, Rule.STUCK_LADDER),
    (FC.PROV_SERVER_ERROR, 4, Action.BLOCK, Rule.STUCK_LADDER),
    # unknown: a repeat escalates (rule 7's wording), then blocks
    (FC.SYS_UNKNOWN, 1, Action.ESCALATE, Rule.STUCK_LADDER),
    (FC.SYS_UNKNOWN, 2, Action.BLOCK, Rule.STUCK_LADDER),
])
def test_rule_3_stuck_ladder_climbs(code: Any, seen: int, action: Action, rule: Rule) -> None:
    """Rule 3: same signature, nothing changed: retry -> after change -> owner -> block."""
    failure = make(code)
    decision = decide(failure, repeated(failure, seen), Policy(), rand=fixed(0.5))
    assert (decision.action, decision.rule) == (action, rule)
    if decision.rule is Rule.STUCK_LADDER:
        assert decision.route == owner(failure)
        assert "rule 3" in decision.reason


def test_rule_3_thresholds_come_from_the_policy() -> None:
    """Rule 3: longer rungs in the policy keep a failure on a rung longer."""
    failure = make(FC.TEST_FAILED)
    policy = Policy(ladder=LadderPolicy(change_repeats=3, route_repeats=2))
    actions = [decide(failure, repeated(failure, n), policy).action for n in range(1, 8)]
    assert actions == [Action.RETRY_AFTER_CHANGE] * 3 + [Action.ESCALATE] * 2 + [Action.BLOCK] * 2


@pytest.mark.parametrize("change", list(Change))
def test_rule_3_does_not_fire_after_a_change(change: Change) -> None:
    """Rule 3: a recorded change (any of the nine) takes a repeat off the ladder (rule 5)."""
    failure = make(FC.TEST_FAILED)
    decision = decide(failure, repeated(failure, 5).changed(change), Policy())
    assert (decision.action, decision.rule) == (Action.RETRY, Rule.RETRYABLE_AFTER_CHANGE)


def test_rule_3_not_retryable_repeats_stay_on_rule_6() -> None:
    """Rule 3: a not-retryable failure is never offered a retry by the ladder."""
    failure = make(FC.DATA_INVALID_INPUT)
    decision = decide(failure, repeated(failure, 1), Policy())
    assert (decision.action, decision.rule) == (Action.BLOCK, Rule.NOT_RETRYABLE)


# -- rule 4: retryable -------------------------------------------------------------------------

def test_rule_4_retries_with_full_jitter_backoff() -> None:
    """Rule 4: retry after U(0, min(cap, initial * 2^(attempt-1))), spending the budget."""
    policy = Policy(classes={"x": RetryClass(max_attempts=5, initial_delay_s=1.0,
                                             max_delay_s=3.0)})
    failure = make(FC.OS_TIMEOUT)
    history = History(operation="x", attempts=2)  # this is attempt 3: base 1 * 2^2 = 4 -> cap 3
    decision = decide(failure, history, policy, Budget.full(policy), rand=fixed(0.5))
    assert (decision.action, decision.rule, decision.outcome) == (
        Action.RETRY, Rule.RETRYABLE, Outcome.FAILED)
    assert decision.delay_s == pytest.approx(1.5)
    assert decision.budget.tokens == policy.budget.capacity - policy.budget.retry_cost


@pytest.mark.parametrize(("operation", "attempts_allowed"), [
    ("device", 6), ("page_fetch", 3), ("provider", 4), ("default", 3), ("unlisted", 3)])
def test_rule_4_attempts_are_bounded_per_operation_class(operation: str,
                                                         attempts_allowed: int) -> None:
    """Rule 4: each operation class has its own attempt bound, then escalate."""
    policy = Policy()
    failures = [make(FC.OS_TIMEOUT), make(FC.PROV_OVERLOADED)]  # alternate: no ladder
    history = History(operation=operation)
    attempt = 0
    while True:
        failure = failures[attempt % 2]
        attempt += 1
        decision = decide(failure, history, policy)
        if decision.action is not Action.RETRY:
            break
        history = history.after(failure)
    assert attempt == attempts_allowed
    assert (decision.action, decision.rule) == (Action.ESCALATE, Rule.RETRYABLE)


def test_rule_4_exhausted_budget_escalates_with_a_reason() -> None:
    """Rule 4: no tokens left -> escalate, the reason and a hint say the budget ran out."""
    policy = Policy(budget=BudgetPolicy(capacity=10, retry_cost=5))
    decision = decide(make(FC.OS_TIMEOUT), History(), policy, Budget(4.0, 10.0))
    assert decision.action is Action.ESCALATE
    assert "budget" in decision.reason
    assert Hint.RETRY_BUDGET_EXHAUSTED in decision.hints
    assert decision.budget == Budget(4.0, 10.0)


def test_rule_4_honours_a_server_delay_below_the_ceiling() -> None:
    """Rule 4: Retry-After up to the ceiling is honoured and reported."""
    failure = make(FC.PROV_RATE_LIMIT, metadata={"http_status": 429, "retry_after_s": 30.0})
    decision = decide(failure, History(operation="provider"), Policy(retry_after_ceiling_s=60),
                      rand=fixed(0.1))
    assert decision.action is Action.RETRY
    assert decision.delay_s == 30.0
    assert decision.server_delay_s == 30.0


def test_rule_4_refuses_a_server_delay_above_the_ceiling() -> None:
    """Rule 4: Retry-After above the ceiling fails fast with the hint."""
    failure = make(FC.PROV_RATE_LIMIT, metadata={"http_status": 429, "retry_after_s": 300})
    decision = decide(failure, History(), Policy(retry_after_ceiling_s=120))
    assert decision.action is Action.ESCALATE
    assert Hint.SERVER_DELAY_REFUSED in decision.hints
    assert decision.server_delay_s == 300.0
    assert "300" in decision.reason
    assert "120" in decision.reason


def test_rule_4_server_saying_no_retry_is_obeyed() -> None:
    """Rule 4: x-should-retry: false -> no retry."""
    failure = make(FC.PROV_SERVER_ERROR, metadata={"http_status": 500, "should_retry": False})
    decision = decide(failure, History(), Policy())
    assert decision.action is Action.ESCALATE
    assert Hint.SERVER_SAID_NO_RETRY in decision.hints


def test_rule_4_never_sleeps_past_the_deadline() -> None:
    """Rule 4: a retry whose wait would pass the class deadline escalates instead."""
    policy = Policy(classes={"x": RetryClass(max_attempts=9, deadline_s=10.0)})
    failure = make(FC.PROV_RATE_LIMIT, metadata={"http_status": 429, "retry_after_s": 5.0})
    history = History(operation="x", started_at=100.0)
    assert decide(failure, history, policy, clock=fixed(104.0)).action is Action.RETRY
    late = decide(failure, history, policy, clock=fixed(106.0))
    assert late.action is Action.ESCALATE
    assert Hint.DEADLINE_EXCEEDED in late.hints


# -- rule 5: retryable after change ------------------------------------------------------------

@pytest.mark.parametrize(("code", "overrides", "outcome"), [
    (FC.TEST_FAILED, {}, Outcome.FAILED),                       # task
    (FC.OS_TIMEOUT, {"retryability": Retryability.RETRYABLE_AFTER_CHANGE},
     Outcome.FAILED),                                            # transient
    (FC.PROV_AUTH, {}, Outcome.BLOCKED),                         # user
    (FC.CMD_NOT_FOUND, {}, Outcome.BLOCKED),                     # environment
])
def test_rule_5_without_a_change_routes_to_the_owner(code: Any, overrides: dict[str, Any],
                                                     outcome: Outcome) -> None:
    """Rule 5: no change recorded -> owner; failed for task/transient, blocked for user/env."""
    failure = make(code, **overrides)
    decision = decide(failure, History(), Policy())
    assert (decision.action, decision.route, decision.outcome, decision.rule) == (
        Action.RETRY_AFTER_CHANGE, owner(failure), outcome, Rule.RETRYABLE_AFTER_CHANGE)


@pytest.mark.parametrize("change", list(Change))
def test_rule_5_retries_after_a_recorded_change(change: Change) -> None:
    """Rule 5: any recorded change allows the retry."""
    decision = decide(make(FC.PROV_AUTH), History().changed(change), Policy())
    assert (decision.action, decision.rule) == (Action.RETRY, Rule.RETRYABLE_AFTER_CHANGE)
    assert change.value in decision.reason


# -- rule 6: not retryable, by category --------------------------------------------------------

@pytest.mark.parametrize(("code", "action", "outcome"), [
    (FC.DATA_INVALID_INPUT, Action.BLOCK, Outcome.BLOCKED),     # user: pause and wait
    (TDC.DEFECT, Action.ABORT, Outcome.FAILED),                  # defect: fail loudly
    (FC.PROV_OVERLOADED, Action.BLOCK, Outcome.BLOCKED),         # transient: others block
    (FC.CMD_NOT_FOUND, Action.BLOCK, Outcome.BLOCKED),           # environment
    (FC.TEST_FAILED, Action.BLOCK, Outcome.BLOCKED),             # task
])
def test_rule_6_not_retryable_by_category(code: Any, action: Action, outcome: Outcome) -> None:
    """Rule 6: user waits, defect aborts, others block."""
    failure = make(code, retryability=Retryability.NOT_RETRYABLE)
    decision = decide(failure, History(), Policy())
    assert (decision.action, decision.outcome, decision.rule) == (action, outcome,
                                                                 Rule.NOT_RETRYABLE)


@pytest.mark.parametrize(("critical", "continue_", "action"), [
    (True, False, Action.ABORT), (True, True, Action.ABORT),
    (False, False, Action.ABORT), (False, True, Action.SKIP)])
def test_rule_6_noncritical_defect_continues_only_when_the_policy_says(
        critical: bool, continue_: bool, action: Action) -> None:
    """Rule 6: a defect on a non-critical path is skipped only when allowed (default: stop)."""
    policy = Policy(continue_noncritical_defects=continue_)
    decision = decide(make(TDC.DEFECT), History(critical=critical), policy)
    assert decision.action is action


def test_rule_6_default_policy_stops_on_a_noncritical_defect() -> None:
    """Rule 6: the default policy stops on a defect even on a non-critical path."""
    assert decide(make(TDC.DEFECT), History(critical=False)).action is Action.ABORT


# -- rule 7: unknown ---------------------------------------------------------------------------

def test_rule_7_first_unknown_is_diagnosed_once() -> None:
    """Rule 7: the first unknown: route the debugger, one retry."""
    decision = decide(make(FC.SYS_UNKNOWN), History(), Policy())
    assert (decision.action, decision.route, decision.rule) == (
        Action.RETRY, Route.DEBUGGER, Rule.UNKNOWN)


def test_rule_7_repeated_unknown_escalates() -> None:
    """Rule 7: a repeated unknown escalates (after a change, so rule 3 does not take it)."""
    failure = make(FC.SYS_UNKNOWN)
    decision = decide(failure, repeated(failure, 1).changed(Change.CONTEXT), Policy())
    assert (decision.action, decision.rule) == (Action.ESCALATE, Rule.UNKNOWN)


# -- categories (seed 003 Recovery) ------------------------------------------------------------

@pytest.mark.parametrize(("code", "category", "first_action"), [
    (FC.DATA_INVALID_INPUT, Category.USER, Action.BLOCK),          # pause, report, wait
    (FC.PROV_SERVER_ERROR, Category.TRANSIENT, Action.RETRY),      # retry with backoff
    (FC.CMD_NOT_FOUND, Category.ENVIRONMENT, Action.RETRY_AFTER_CHANGE),  # stop with remedy
    (TDC.DEFECT, Category.DEFECT, Action.ABORT),                   # fail loudly
    (FC.TEST_FAILED, Category.TASK, Action.RETRY_AFTER_CHANGE),    # another approach
])
def test_category_first_decision(code: Any, category: Category, first_action: Action) -> None:
    """Each category's first failure gets seed 003's recovery behaviour; no retry for user."""
    failure = make(code)
    assert failure.category is category
    decision = decide(failure, History(), Policy())
    assert decision.action is first_action
    if category in (Category.USER, Category.ENVIRONMENT):
        assert decision.outcome is Outcome.BLOCKED


# -- hints -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "fallbacks", "hint"), [
    (TDC.PERM, (), Hint.POLICY_MAY_AUTO_ALLOW),
    (FC.PROV_MODEL_NOT_FOUND, ("gpt-4o-mini",), Hint.FALLBACK_MODEL_EXISTS),
    (FC.PROV_RATE_LIMIT, ("gpt-4o-mini",), Hint.FALLBACK_MODEL_EXISTS),
    (FC.GIT_MERGE_CONFLICT, (), Hint.RETRY_SERIALLY_OR_REPAIR_WORKSPACE),
    (TDC.WORKSPACE, (), Hint.RETRY_SERIALLY_OR_REPAIR_WORKSPACE),
    (FC.CMD_NOT_FOUND, (), Hint.OPEN_DOCTOR_FIX_TASK),
])
def test_hints_per_seed_000(code: Any, fallbacks: tuple[str, ...], hint: Hint) -> None:
    """Seed 000 §7/§11 hints: auto-allow, fallback model, serial/repair, doctor fix task."""
    decision = decide(make(code), History(), Policy(fallback_models=fallbacks))
    assert hint in decision.hints


def test_no_fallback_hint_without_fallback_models() -> None:
    """The fallback hint appears only when the policy lists a fallback model."""
    assert Hint.FALLBACK_MODEL_EXISTS not in decide(make(FC.PROV_MODEL_NOT_FOUND), History()).hints


# -- properties --------------------------------------------------------------------------------

classes = st.builds(RetryClass, max_attempts=st.integers(1, 12),
                    initial_delay_s=st.floats(0, 10), max_delay_s=st.floats(0, 60),
                    multiplier=st.floats(1, 10), deadline_s=st.floats(0.001, 1e6))


@given(bounds=classes, attempts=st.integers(0, 200), seed=st.integers(0, 2**32))
def test_property_delay_never_exceeds_the_cap(bounds: RetryClass, attempts: int,
                                              seed: int) -> None:
    """Without a server delay, a retry never waits longer than the class cap."""
    policy = Policy(classes={"x": bounds})
    decision = decide(make(FC.OS_TIMEOUT), History(operation="x", attempts=attempts), policy,
                      rand=random.Random(seed).random)
    assert 0.0 <= decision.delay_s <= bounds.max_delay_s


@given(bounds=classes, server=st.floats(0, 1000), ceiling=st.floats(0, 500),
       seed=st.integers(0, 2**32))
def test_property_server_delay_never_exceeds_the_ceiling(bounds: RetryClass, server: float,
                                                         ceiling: float, seed: int) -> None:
    """With a server delay, a retry waits at most max(cap, ceiling) and at least the delay."""
    policy = Policy(classes={"x": bounds}, retry_after_ceiling_s=ceiling)
    failure = make(FC.PROV_RATE_LIMIT, metadata={"http_status": 429, "retry_after_s": server})
    decision = decide(failure, History(operation="x"), policy, rand=random.Random(seed).random)
    if decision.action is Action.RETRY:
        assert server <= decision.delay_s <= max(bounds.max_delay_s, ceiling)
    assert decision.action is Action.RETRY or server > ceiling or bounds.max_attempts == 1


retryable_codes = st.sampled_from([FC.OS_TIMEOUT, FC.PROV_OVERLOADED, FC.PROV_SERVER_ERROR,
                                   FC.PROV_RATE_LIMIT])


@given(bounds=classes, codes=st.lists(retryable_codes, min_size=1, max_size=40),
       seed=st.integers(0, 2**32))
def test_property_attempts_never_exceed_the_bound(bounds: RetryClass, codes: list[Any],
                                                  seed: int) -> None:
    """However retryable failures mix, the retries stop by the class's attempt bound."""
    policy = Policy(classes={"x": bounds})
    rand = random.Random(seed).random
    history = History(operation="x")
    attempts = 0
    for code in codes * (bounds.max_attempts + 1):
        failure = make(code)
        attempts += 1
        if decide(failure, history, policy, rand=rand).action is not Action.RETRY:
            break
        history = history.after(failure)
    assert attempts <= bounds.max_attempts


histories = st.builds(
    History, operation=st.sampled_from(["default", "device", "provider"]),
    critical=st.booleans(), started_at=st.none() | st.floats(0, 100),
    attempts=st.integers(0, 10),
    changes=st.frozensets(st.sampled_from(Change), max_size=3))
all_codes = st.sampled_from(list(PARAMS))


@given(code=all_codes, history=histories, seed=st.integers(0, 2**32), now=st.floats(0, 200),
       severity=st.sampled_from(Severity), repeats=st.integers(0, 5))
def test_property_same_inputs_same_seed_same_decision(  # noqa: PLR0917 - hypothesis arguments
        code: Any, history: History, seed: int, now: float, severity: Severity,
        repeats: int) -> None:
    """decide is pure: equal inputs with the same seed give the same Decision."""
    failure = make(code, severity=severity)
    for _ in range(repeats):
        history = history.after(failure)
    first = decide(failure, history, Policy(), rand=random.Random(seed).random,
                   clock=fixed(now))
    second = decide(failure, history, Policy(), rand=random.Random(seed).random,
                    clock=fixed(now))
    assert first == second


# -- the shared budget and the no-progress monitor ---------------------------------------------

def test_shared_budget_spends_and_refunds_within_capacity() -> None:
    """A success refunds tokens, never beyond capacity; retries spend them."""
    policy = Policy(budget=BudgetPolicy(capacity=10, retry_cost=4, success_refund=3))
    shared = SharedBudget(policy)
    shared.decide(make(FC.OS_TIMEOUT), History(), policy, fixed(0.0), fixed(0.0))
    assert shared.state.tokens == 6
    shared.refund()
    assert shared.state.tokens == 9
    shared.refund()
    assert shared.state.tokens == 10


@pytest.mark.parametrize(("feed", "signal"), [
    ("signature", "repeated_signature"), ("rejected", "rejected_actions"),
    ("nomatch", "no_matches")])
def test_monitor_says_stuck_at_its_threshold(feed: str, signal: str) -> None:
    """The monitor reports stuck exactly when a threshold from the policy is reached."""
    policy = Policy(monitor=MonitorPolicy(signature_repeats=3, rejected_actions=3,
                                          no_matches=3))
    monitor = NoProgressMonitor(policy)
    item: object = {"signature": make(FC.TEST_FAILED),
                    "rejected": RejectedAction(action="click", reason="off screen"),
                    "nomatch": NoMatch(probe="grep", exit_code=1)}[feed]
    reports = [monitor.observe(item) for _ in range(3)]
    assert reports[:2] == [None, None]
    assert reports[2] is not None
    assert reports[2].signal == signal
    monitor.progress()
    assert monitor.stuck is None


def test_monitor_counts_one_signature_not_all_failures() -> None:
    """Different signatures do not add up to a repeated signature."""
    monitor = NoProgressMonitor(Policy(monitor=MonitorPolicy(signature_repeats=2)))
    assert monitor.observe(make(FC.TEST_FAILED)) is None
    assert monitor.observe(make(FC.CMD_NOT_FOUND)) is None
    assert monitor.observe(make(FC.TEST_FAILED)) is not None


# -- category drives recovery (seed 003's Recovery table, with an AFK-style catalog) -----------

_AFK_PARAMS: dict[Any, dict[str, Any]] = {
    AFKCode.PERC_CAPTURE_FULLSCREEN: {"window": "Factorio"},
    AFKCode.PERC_DEVICE_BUSY: {},
    AFKCode.CFG_OUT_OF_RANGE: {"key": "k", "value": 500, "low": 1, "high": 20},
    AFKCode.GUI_OVERLAY_DRIVER: {"feature": "layered windows"},
    AFKCode.LOOP_STATE_MISMATCH: {},
}


@pytest.mark.parametrize(("code", "action", "outcome"), [
    (AFKCode.PERC_CAPTURE_FULLSCREEN, Action.RETRY_AFTER_CHANGE, Outcome.BLOCKED),  # user: wait
    (AFKCode.CFG_OUT_OF_RANGE, Action.RETRY_AFTER_CHANGE, Outcome.BLOCKED),         # user: wait
    (AFKCode.PERC_DEVICE_BUSY, Action.RETRY, Outcome.FAILED),                 # transient: backoff
    (AFKCode.GUI_OVERLAY_DRIVER, Action.RETRY_AFTER_CHANGE, Outcome.BLOCKED),  # environment
    (AFKCode.LOOP_STATE_MISMATCH, Action.ABORT, Outcome.FAILED),               # defect: loudly
], ids=lambda v: getattr(v, "value", None))
def test_afk_category_decides_the_recovery_family(code: Any, action: Action,
                                                   outcome: Outcome) -> None:
    """Each seed 003 category gets its recovery: user waits, transient retries, environment
    stops for a fix, defect aborts."""
    decision = decide(code.failure(surface="afk.loop", params=_AFK_PARAMS[code]), History())
    assert (decision.action, decision.outcome) == (action, outcome)


@pytest.mark.parametrize("history", [
    History(), History().changed(Change.COMMAND), History(attempts=1, signatures={"x": 1}),
], ids=["first", "after_a_change", "later"])
@pytest.mark.parametrize("retryability", list(Retryability))
def test_a_defect_is_never_retried(history: History, retryability: Retryability) -> None:
    """A defect aborts and is reported whatever retryability its record carries and whatever
    changed."""
    failure = AFKCode.LOOP_STATE_MISMATCH.failure(surface="afk.loop", retryability=retryability)
    decision = decide(failure, history)
    assert decision.action is Action.ABORT
    assert decision.rule is Rule.NOT_RETRYABLE


def test_a_repeated_defect_is_aborted_not_laddered() -> None:
    """The same defect again is aborted again, never put on the stuck ladder."""
    failure = make(TDC.DEFECT)
    history = History().after(failure).after(failure)
    assert decide(failure, history).action is Action.ABORT


def test_tool_error_default_aborts_while_an_unknown_tool_failure_is_diagnosed_once() -> None:
    """Seed 000's "retry once" is the unknown retryability of task failures; a tool defect
    (tool_error's default category) is never retried."""
    assert KIND_DEFAULTS[Kind.TOOL_ERROR].category is Category.DEFECT
    tool_defect = make(TDC.TOOL_DEFECT)
    assert decide(tool_defect, History()).action is Action.ABORT
    unknown = make(FC.SYS_UNKNOWN)
    first = decide(unknown, History())
    assert (first.action, first.route) == (Action.RETRY, Route.DEBUGGER)
    assert decide(unknown, History().after(unknown)).action is Action.ESCALATE


# -- fallback availability (seed 000 §7) ---------------------------------------------------------

@pytest.mark.parametrize(("fallbacks", "outcome"), [
    ((), Outcome.BLOCKED), (("claude-sonnet",), Outcome.FAILED),
])
@pytest.mark.parametrize(("code", "history"), [
    (FC.PROV_RATE_LIMIT, History(attempts=10)),          # retries exhausted: escalate
    (FC.PROV_MODEL_NOT_FOUND, History()),                 # model capability: change needed
    (FC.PROV_AUTH, History()),                            # provider auth: after a change
], ids=lambda v: getattr(v, "value", "h"))
def test_provider_stop_outcome_follows_fallback_availability(
        code: Any, history: History, fallbacks: tuple[str, ...], outcome: Outcome) -> None:
    """A provider or model failure that stops is failed when a fallback model exists, blocked
    when none does."""
    decision = decide(make(code), history, Policy(fallback_models=fallbacks))
    assert not decision.retries
    assert decision.outcome is outcome
