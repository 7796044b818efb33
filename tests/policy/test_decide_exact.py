"""decide's rules 3 and 6 field by field, and the stateful helpers around it.

Each expected Decision is written out in full (action, delay, route, outcome, reason, rule,
hints, budget) from the documented rules (docs/decisions.md): the stuck ladder with the default
thresholds (one retry after a change, one routing to the owner, then block) entered at its
retry rung for retryable failures, its change rung for retryable-after-change ones and its
escalate rung for unknown ones; a defect aborts (or is skipped on a non-critical path when the
policy says so). The reason is part of the contract: it is what a log or a user reads.
"""

from __future__ import annotations

import re
from types import MappingProxyType

import pytest

from failcode import (
    FC,
    KIND_DEFAULTS,
    Action,
    Budget,
    BudgetPolicy,
    Change,
    Decision,
    DecisionRule,
    Failure,
    History,
    Kind,
    LadderPolicy,
    NoMatch,
    NoProgressMonitor,
    Outcome,
    Policy,
    RejectedAction,
    RetryClass,
    SharedBudget,
    decide,
)

BUDGET = Budget(123.0, 500.0)


def _owner(kind: Kind) -> object:
    return KIND_DEFAULTS[kind].routes[0]


def _history(failure: Failure, n: int, *, operation: str = "default",
             attempts: int = 0, critical: bool = True) -> History:
    counts = MappingProxyType({failure.signature: n}) if n else MappingProxyType({})
    return History(operation=operation, attempts=attempts, signatures=counts,
                   critical=critical)


def _build() -> Failure:
    return FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"})


def _rate_limit() -> Failure:
    return FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"})


def _unknown() -> Failure:
    return FC.SYS_UNKNOWN.failure(surface="step", params={"exception": "ValueError"})


def _defect() -> Failure:
    return FC.SYS_DEFECT.failure(surface="step", params={
        "function": "app.orders:total", "exception": "AssertionError"})


def _ladder(action: Action, failure: Failure, times: int, tail: str,
            outcome: Outcome) -> Decision:
    return Decision(action, 0.0, _owner(failure.kind), outcome,
                    f"rule 3 (stuck ladder): the same failure {times} times with nothing "
                    f"changed; {tail}", DecisionRule.STUCK_LADDER, (), BUDGET)


# -- rule 3: retryable after a change enters at the change rung ----------------------------------

def test_after_change_second_time_retries_only_after_a_change() -> None:
    """Seen once before, nothing changed: retry only after a change (outcome failed, task)."""
    failure = _build()
    assert decide(failure, _history(failure, 1), budget=BUDGET) == _ladder(
        Action.RETRY_AFTER_CHANGE, failure, 2, "retry only after a change", Outcome.FAILED)


def test_after_change_third_time_routes_to_the_owner() -> None:
    """Seen twice before: routed to the kind's primary owner, named in the reason."""
    failure = _build()
    owner = _owner(failure.kind)
    assert decide(failure, _history(failure, 2), budget=BUDGET) == _ladder(
        Action.ESCALATE, failure, 3, f"routed to the owner ({owner})", Outcome.FAILED)


def test_after_change_fourth_time_blocks() -> None:
    """Seen three times before: blocked, whatever the category."""
    failure = _build()
    assert decide(failure, _history(failure, 3), budget=BUDGET) == _ladder(
        Action.BLOCK, failure, 4, "blocked", Outcome.BLOCKED)


# -- rule 3: retryable failures stay on the retry rung while their class grants retries -------

def test_retryable_on_the_retry_rung_is_rule_4() -> None:
    """provider allows 4 attempts: a signature seen twice before is still retried (rule 4)."""
    failure = _rate_limit()
    decision = decide(failure, _history(failure, 2, operation="provider"), budget=BUDGET,
                      rand=lambda: 0.5)
    assert (decision.action, decision.rule) == (Action.RETRY, DecisionRule.RETRYABLE)
    assert decision.delay_s == pytest.approx(0.5 * 1.0)


def test_retryable_past_the_retry_rung_climbs_the_ladder() -> None:
    """Seen three, four, five times before: change, owner, block (no fallback: blocked)."""
    failure = _rate_limit()
    owner = _owner(failure.kind)
    steps = [(3, Action.RETRY_AFTER_CHANGE, "retry only after a change", Outcome.BLOCKED),
             (4, Action.ESCALATE, f"routed to the owner ({owner})", Outcome.BLOCKED),
             (5, Action.BLOCK, "blocked", Outcome.BLOCKED)]
    for n, action, tail, outcome in steps:
        decision = decide(failure, _history(failure, n, operation="provider"), budget=BUDGET)
        assert decision == _ladder(action, failure, n + 1, tail, outcome), n


def test_retryable_with_a_fallback_model_stops_as_failed() -> None:
    """A provider failure stops as failed, not blocked, when a fallback model exists."""
    failure = _rate_limit()
    policy = Policy(fallback_models=("backup-model",))
    decision = decide(failure, _history(failure, 3, operation="provider"), policy,
                      budget=BUDGET)
    assert (decision.action, decision.outcome) == (Action.RETRY_AFTER_CHANGE, Outcome.FAILED)


# -- rule 3: unknown failures enter at the escalate rung -----------------------------------------

def test_unknown_seen_before_escalates_then_blocks() -> None:
    """An unknown failure seen once before is routed to its owner; twice before, blocked."""
    failure = _unknown()
    owner = _owner(failure.kind)
    assert decide(failure, _history(failure, 1), budget=BUDGET) == _ladder(
        Action.ESCALATE, failure, 2, f"routed to the owner ({owner})", Outcome.FAILED)
    assert decide(failure, _history(failure, 2), budget=BUDGET) == _ladder(
        Action.BLOCK, failure, 3, "blocked", Outcome.BLOCKED)


def test_wider_ladder_thresholds_move_the_rungs() -> None:
    """change_repeats=2, route_repeats=1: two change rungs before routing."""
    failure = _build()
    policy = Policy(ladder=LadderPolicy(change_repeats=2, route_repeats=1))
    actions = [decide(failure, _history(failure, n), policy, budget=BUDGET).action
               for n in (1, 2, 3, 4)]
    assert actions == [Action.RETRY_AFTER_CHANGE, Action.RETRY_AFTER_CHANGE, Action.ESCALATE,
                       Action.BLOCK]


def test_a_recorded_change_leaves_the_ladder() -> None:
    """The same signature again after a change is rule 5's retry, not the ladder."""
    failure = _build()
    history = _history(failure, 3).changed(Change.COMMAND)
    decision = decide(failure, history, budget=BUDGET)
    assert (decision.action, decision.rule) == (Action.RETRY,
                                                DecisionRule.RETRYABLE_AFTER_CHANGE)


# -- rule 6: defects --------------------------------------------------------------------------

DEFECT_ABORT = ("rule 6 (defect): an assumption of the code is false; aborted and reported "
                "with the evidence to reproduce it, never retried")
DEFECT_SKIP = ("rule 6 (defect): skipped, because the path is non-critical and the policy "
               "continues past such defects")


def test_a_defect_aborts_and_is_reported() -> None:
    """A defect aborts on its first occurrence, routed to its owner, outcome failed."""
    failure = _defect()
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.ABORT, 0.0, _owner(failure.kind), Outcome.FAILED, DEFECT_ABORT,
        DecisionRule.NOT_RETRYABLE, (), BUDGET)


def test_a_defect_is_never_retried_even_after_a_change() -> None:
    """A change recorded before a defect does not make it retryable."""
    failure = _defect()
    decision = decide(failure, History().changed(Change.COMMAND), budget=BUDGET)
    assert decision.action is Action.ABORT


def test_a_noncritical_defect_is_skipped_when_the_policy_says_so() -> None:
    """continue_noncritical_defects and a non-critical path: skipped, outcome failed."""
    failure = _defect()
    policy = Policy(continue_noncritical_defects=True)
    assert decide(failure, History(critical=False), policy, budget=BUDGET) == Decision(
        Action.SKIP, 0.0, _owner(failure.kind), Outcome.FAILED, DEFECT_SKIP,
        DecisionRule.NOT_RETRYABLE, (), BUDGET)


@pytest.mark.parametrize(("critical", "continues"), [(True, True), (False, False)])
def test_a_defect_aborts_unless_both_conditions_hold(critical: bool, continues: bool) -> None:
    """A critical path, or a policy that stops: aborted."""
    policy = Policy(continue_noncritical_defects=continues)
    assert decide(_defect(), History(critical=critical), policy).action is Action.ABORT


# -- History -----------------------------------------------------------------------------------

def test_history_after_counts_the_signature_and_clears_changes() -> None:
    """after() adds one attempt and one count, keeps the operation, clears the changes."""
    failure = _build()
    start = History(operation="device", critical=False, started_at=5.0).changed(Change.MODEL)
    after = start.after(failure).after(failure)
    assert (after.operation, after.critical, after.started_at) == ("device", False, 5.0)
    assert after.attempts == 2
    assert after.count(failure.signature) == 2
    assert after.count("other") == 0
    assert after.changes == frozenset()
    assert start.count(failure.signature) == 0  # the original is unchanged


def test_history_changed_accumulates_and_accepts_names() -> None:
    """changed() adds to the changes already recorded; a change's value names it too."""
    history = History(attempts=3).changed(Change.MODEL).changed("command")
    assert history.changes == frozenset({Change.MODEL, Change.COMMAND})
    assert history.attempts == 3


# -- the budget --------------------------------------------------------------------------------

def test_budget_refund_is_capped_at_capacity() -> None:
    """A success returns success_refund tokens, never above capacity; a full bucket is kept."""
    policy = Policy(budget=BudgetPolicy(capacity=10.0, retry_cost=2.0, success_refund=3.0))
    assert Budget(5.0, 10.0).refunded(policy) == Budget(8.0, 10.0)
    assert Budget(9.0, 10.0).refunded(policy) == Budget(10.0, 10.0)
    full = Budget(10.0, 10.0)
    assert full.refunded(policy) is full


def test_shared_budget_starts_full_spends_refunds_and_resets() -> None:
    """A SharedBudget stores the spent state, refunds up to capacity and fills again."""
    policy = Policy(budget=BudgetPolicy(capacity=10.0, retry_cost=4.0, success_refund=1.0))
    shared = SharedBudget(policy)
    assert shared.state == Budget(10.0, 10.0)
    failure = _rate_limit()
    decision = shared.decide(failure, History(operation="provider"), policy,
                             clock=lambda: 0.0, rand=lambda: 0.0)
    assert decision.action is Action.RETRY
    assert shared.state == Budget(6.0, 10.0)
    shared.refund()
    assert shared.state == Budget(7.0, 10.0)
    shared.reset()
    assert shared.state == Budget(10.0, 10.0)


def test_shared_budget_accepts_a_starting_state() -> None:
    """A given state is kept as it is, not filled."""
    assert SharedBudget(Policy(), Budget(1.0, 500.0)).state == Budget(1.0, 500.0)


def test_policy_retry_class_falls_back_to_default() -> None:
    """A listed class gives its own bounds; an unlisted one the default's."""
    own = RetryClass(max_attempts=9)
    policy = Policy(classes={"default": RetryClass(max_attempts=2), "slow": own})
    assert policy.retry_class("slow") == own
    assert policy.retry_class("anything").max_attempts == 2


# -- the no-progress monitor ---------------------------------------------------------------------

def test_monitor_progress_clears_every_count() -> None:
    """After progress() the counts are zero and the session is no longer stuck."""
    monitor = NoProgressMonitor()
    failure = _build()
    for _ in range(3):
        monitor.observe(failure)
    monitor.observe(NoMatch(probe="grep"))
    monitor.observe(RejectedAction(action="edit", reason="bad path"))
    assert monitor.stuck is not None
    monitor.progress()
    assert dict(monitor.counts) == {"repeated_signature": 0, "rejected_actions": 0,
                                    "no_matches": 0}
    assert monitor.stuck is None


def test_monitor_ignores_values_without_a_signature() -> None:
    """Values that are not failures or outcomes count for nothing."""
    monitor = NoProgressMonitor()
    assert monitor.observe("text") is None
    assert monitor.observe(object()) is None
    assert dict(monitor.counts) == {"repeated_signature": 0, "rejected_actions": 0,
                                    "no_matches": 0}


# -- rules 1 and 2, the defaults decide fills in, and its type checks ----------------------------

def test_a_fatal_failure_aborts_at_once() -> None:
    """Rule 1: severity fatal aborts, blocked, routed to the kind's owner, budget untouched."""
    from failcode import Severity

    failure = FC.BUILD_FAILED.failure(surface="cpp.build", params={"program": "gcc"},
                                      severity=Severity.FATAL)
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.ABORT, 0.0, _owner(failure.kind), Outcome.BLOCKED,
        "rule 1 (fatal): the session cannot safely continue; aborted", DecisionRule.FATAL, (),
        BUDGET)


def _coded(kind: Kind, code: str) -> Failure:
    from tests._records import record

    return record(code, kind, KIND_DEFAULTS[kind].category, "blocked_action")


def test_a_policy_error_is_blocked() -> None:
    """Rule 2: a policy error is blocked, never retried, whatever its history."""
    failure = _coded(Kind.POLICY_ERROR, "XX-POL-001")
    assert decide(failure, History().changed(Change.POLICY), budget=BUDGET) == Decision(
        Action.BLOCK, 0.0, _owner(failure.kind), Outcome.BLOCKED,
        "rule 2 (policy): a policy error is never retried; it needs approval, a profile "
        "change, a redesign or a refusal", DecisionRule.POLICY_OR_ARCHITECTURE, (), BUDGET)


def test_an_architecture_error_goes_to_the_architecture_designer() -> None:
    """Rule 2: an architecture error is blocked and routed to the architecture designer."""
    from failcode import Route

    failure = _coded(Kind.ARCHITECTURE_ERROR, "XX-ARCH-001")
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.BLOCK, 0.0, Route.ARCHITECTURE_DESIGNER, Outcome.BLOCKED,
        "rule 2 (architecture): blocked until the architecture designer decides",
        DecisionRule.POLICY_OR_ARCHITECTURE, (), BUDGET)


def test_no_budget_means_a_full_one() -> None:
    """budget=None: the decision carries a full bucket of the policy's capacity."""
    policy = Policy(budget=BudgetPolicy(capacity=40.0, retry_cost=0.0, success_refund=1.0))
    decision = decide(_build(), History(), policy)
    assert decision.budget == Budget(40.0, 40.0)


def test_other_signatures_in_the_history_do_not_count() -> None:
    """A history of other failures: this one is seen for the first time (rule 5, not 3)."""
    failure = _build()
    history = History(signatures=MappingProxyType({"build_error:other:x:none:00000000": 4}))
    decision = decide(failure, history, budget=BUDGET)
    assert decision.rule is DecisionRule.RETRYABLE_AFTER_CHANGE


def test_a_history_with_a_plain_dict_counts_too() -> None:
    """after() accepts signatures given as a plain dict and keeps the other counts."""
    failure = _build()
    after = History(signatures={"other": 2}).after(failure)  # type: ignore[arg-type]
    assert dict(after.signatures) == {"other": 2, failure.signature: 1}


def test_a_retryable_failure_out_of_attempts_is_escalated_to_its_owner() -> None:
    """Rule 4's escalation routes to the kind's primary owner."""
    failure = _rate_limit()
    decision = decide(failure, History(operation="provider", attempts=3), budget=BUDGET)
    assert (decision.action, decision.route) == (Action.ESCALATE, _owner(failure.kind))


@pytest.mark.parametrize(("arguments", "named"), [
    ((NoMatch(probe="grep"), History()), "decide() expects failure"),
    ((None, History()), "decide() expects failure"),
])
def test_a_wrong_failure_names_decide_and_the_argument(arguments: tuple[object, ...],
                                                       named: str) -> None:
    """A non-Failure is a TypeError naming decide() and the failure argument."""
    with pytest.raises(TypeError, match=re.escape(named)):
        decide(*arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("argument", ["history", "policy", "budget"])
def test_a_wrong_history_policy_or_budget_is_named(argument: str) -> None:
    """None is allowed for the budget only; any other wrong value names its argument."""
    values: dict[str, object] = {"history": History(), "policy": Policy(), "budget": BUDGET}
    values[argument] = "x"
    with pytest.raises(TypeError, match=rf"decide\(\) expects {argument} to be a failcode\."):
        decide(_build(), values["history"], values["policy"], values["budget"])  # type: ignore[arg-type]
    if argument != "budget":
        values[argument] = None
        with pytest.raises(TypeError, match=rf"expects {argument} "):
            decide(_build(), values["history"], values["policy"], BUDGET)  # type: ignore[arg-type]


# -- rules 4 to 7 field by field -----------------------------------------------------------------

def test_rule_4_retries_with_backoff_and_spends_the_budget() -> None:
    """A first rate limit: retry after rand * initial delay, routed to the owner, one retry's
    cost spent, outcome blocked if it stops (no fallback model)."""
    failure = _rate_limit()
    assert decide(failure, History(operation="provider"), budget=BUDGET,
                  rand=lambda: 0.25) == Decision(
        Action.RETRY, 0.25, _owner(failure.kind), Outcome.BLOCKED,
        "rule 4 (retryable): retry after a full-jitter backoff", DecisionRule.RETRYABLE, (),
        Budget(118.0, 500.0), None)


def test_rule_4_on_an_exhausted_budget_escalates_naming_the_tokens() -> None:
    """Fewer tokens than a retry costs: escalate with the budget hint, budget unchanged."""
    from failcode import Hint

    failure = _rate_limit()
    empty = Budget(4.0, 500.0)
    decision = decide(failure, History(operation="provider"), budget=empty)
    assert decision == Decision(
        Action.ESCALATE, 0.0, _owner(failure.kind), Outcome.BLOCKED,
        "rule 4 (retryable): the retry budget is exhausted (4 of 500 tokens left, a retry "
        "costs 5)", DecisionRule.RETRYABLE, (Hint.RETRY_BUDGET_EXHAUSTED,), empty, None)


def test_rule_5_retries_after_a_recorded_change_naming_it() -> None:
    """A change recorded since the failure: retry at once, naming what changed (sorted)."""
    failure = _build()
    history = History().changed(Change.WORKSPACE, Change.COMMAND)
    assert decide(failure, history, budget=BUDGET) == Decision(
        Action.RETRY, 0.0, _owner(failure.kind), Outcome.FAILED,
        "rule 5 (retryable after change): retry, since command, workspace changed",
        DecisionRule.RETRYABLE_AFTER_CHANGE, (), BUDGET)


def test_rule_5_without_a_change_routes_to_the_owner() -> None:
    """Nothing changed: retry only after a change, routed to the owner, named in the reason."""
    failure = _build()
    owner = _owner(failure.kind)
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.RETRY_AFTER_CHANGE, 0.0, owner, Outcome.FAILED,
        "rule 5 (retryable after change): nothing changed since the failure; routed to the "
        f"owner ({owner}) to change something first", DecisionRule.RETRYABLE_AFTER_CHANGE, (),
        BUDGET)


def test_rule_6_pauses_for_the_user() -> None:
    """A not-retryable user failure blocks until the user acts."""
    from failcode import Category, Retryability
    from tests._records import record

    failure = record("XX-USR-001", Kind.USER_ERROR, Category.USER, "bad_input",
                     retryability=Retryability.NOT_RETRYABLE)
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.BLOCK, 0.0, _owner(failure.kind), Outcome.BLOCKED,
        "rule 6 (not retryable, user): paused until the user acts; retrying would fail "
        "identically", DecisionRule.NOT_RETRYABLE, (), BUDGET)


def test_rule_6_blocks_an_environment_failure_naming_its_category() -> None:
    """A not-retryable environment failure is blocked until someone acts (a missing program
    also carries the hint to open a doctor fix task)."""
    from failcode import Hint, Retryability

    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                       retryability=Retryability.NOT_RETRYABLE)
    assert decide(failure, History(), budget=BUDGET) == Decision(
        Action.BLOCK, 0.0, _owner(failure.kind), Outcome.BLOCKED,
        "rule 6 (not retryable, environment): blocked until someone acts",
        DecisionRule.NOT_RETRYABLE, (Hint.OPEN_DOCTOR_FIX_TASK,), BUDGET)


def test_rule_7_diagnoses_a_first_unknown_once() -> None:
    """A first unknown failure: one retry, routed to the debugger."""
    from failcode import Route

    assert decide(_unknown(), History(), budget=BUDGET) == Decision(
        Action.RETRY, 0.0, Route.DEBUGGER, Outcome.FAILED,
        "rule 7 (unknown): first occurrence; diagnose with the debugger and retry once",
        DecisionRule.UNKNOWN, (), BUDGET)


@pytest.mark.parametrize(("attempts", "action"), [(0, Action.RETRY), (1, Action.RETRY),
                                                   (2, Action.ESCALATE)])
def test_rule_7_stops_diagnosing_at_the_attempt_bound(attempts: int, action: Action) -> None:
    """The default class allows 3 attempts: the third unknown attempt is escalated."""
    failure = _unknown()
    decision = decide(failure, History(attempts=attempts), budget=BUDGET)
    assert decision.action is action
    if action is Action.ESCALATE:
        owner = _owner(failure.kind)
        assert decision == Decision(
            Action.ESCALATE, 0.0, owner, Outcome.FAILED,
            "rule 7 (unknown): an unclassified failure again; escalated to the owner "
            f"({owner})", DecisionRule.UNKNOWN, (), BUDGET)
