"""Done-when: the retry helper, the logging integration and a pipeline run feed one store,
and the diagnostics, blame, loops, clusters and knowledge read back, on both backends."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from failcode import FC, FailureError, Policy, RetryClass, retry
from failcode.cli import main
from failcode.events import EventHandler, JsonlSink, failure_hook, read_events
from failcode.pipeline import (
    AgentError,
    AgentErrorCode,
    AgentInput,
    Phase,
    PipelineRun,
    PipelineStopped,
    Verdict,
)
from failcode.store import open_store
from failcode.testing import set_testing
from tests.store.sample import event, failure

if TYPE_CHECKING:
    from pathlib import Path

MODEL = {"provider": "local", "model": "m", "seed": 1}
TASK = AgentInput(task_goal="g", context_id="c")


def _feed(store_url: str) -> str:
    """Run the three producers into the store; return the retried failure's signature."""
    store = open_store(store_url, promote_after=1, batch=4)

    @retry("default", on_failure=failure_hook(store, session="agent-1"), wrap=True)
    def complete() -> None:
        raise FailureError(FC.PROV_TIMEOUT.failure(surface="llm.complete",
                                                   params={"provider": "local"}))

    @retry("default", on_failure=failure_hook(store, session="agent-1"), wrap=True)
    def build() -> None:
        raise FailureError(failure("shell.run", "cargo"))

    with set_testing(True, attempts=3):
        for call in (complete, build):
            with pytest.raises(FailureError):
                call()

    log = logging.getLogger("failcode.test.feeds")
    handler = EventHandler(store)
    log.addHandler(handler)
    try:
        log.error("tool broke", extra={"failure": failure("shell.exec", "cargo",
                                                          session="agent-2")})
    finally:
        log.removeHandler(handler)

    def flaky(_task: AgentInput) -> AgentError:
        return AgentError(code=AgentErrorCode.TRANSIENT, message="backend busy", transient=True)

    run = PipelineRun("run-7", sink=store, sleep=lambda _s: None, policy=Policy(
        classes={"default": RetryClass(max_attempts=2, initial_delay_s=0.0)}))
    run.enter(Phase.PLAN)
    with pytest.raises(PipelineStopped):
        run.call(flaky, TASK, name="planner", **MODEL)
    vetoed = PipelineRun("run-8", sink=store)
    vetoed.enter(Phase.PLAN)
    vetoed.record_decision(Verdict.VETO, by="judge", reason="wrong plan")

    signature = FC.PROV_TIMEOUT.failure(surface="llm.complete",
                                        params={"provider": "local"}).signature
    store.record_remedy(signature, "Lower the request size.", worked=True)
    store.close()
    return signature


def test_three_producers_feed_one_store(store_url: str) -> None:
    """Retry, logging and pipeline events come back as diagnostics, blame, loops, clusters
    and knowledge."""
    signature = _feed(store_url)
    with open_store(store_url, promote_after=1) as store:
        rows = {d.signature: d for d in store.diagnostics()}
        blame = {(b.category, b.group): b.count for b in store.blame()}
        loops = {(x.session, x.signature) for x in store.loops()}
        clusters = store.clusters(min_sessions=2)
        stats = store.stats()
    assert rows[signature].count == 3
    assert rows[signature].known_remedies == ("Lower the request size.",)
    assert blame[("environment", "FC-CMD-001")] == 2
    assert blame[("transient", "FC-PROV-011")] == 3
    assert ("transient", "FC-LIFE-002") in blame
    assert ("agent-1", signature) in loops
    assert any(len(c.signatures) == 2 and c.sessions == 2 for c in clusters)
    assert stats.by_event["task.vetoed"] == 1
    assert stats.by_event["agent.failed"] == 2
    assert stats.by_event["task.failed"] == 1


def test_cli_answers_every_query(store_url: str, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each `failcode store` command answers with --json; `show` applies the promotion
    threshold of failcode.toml."""
    signature = _feed(store_url)
    (tmp_path / "failcode.toml").write_text("[store]\npromote_after = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    answers = {}
    for command in ("diagnostics", "blame", "loops", "clusters", "stats"):
        result = runner.invoke(main, ["store", command, "--store", store_url, "--json"])
        assert result.exit_code == 0, result.output
        answers[command] = json.loads(result.output)
    shown = runner.invoke(main, ["store", "show", signature, "--store", store_url])
    assert shown.exit_code == 0, shown.output
    assert "[promoted] Lower the request size." in shown.output
    assert answers["stats"]["events_ingested"] == 10
    assert {row["session"] for row in answers["loops"]} == {"agent-1", "run-7"}


def test_cli_import_reports_bad_lines_and_stores_the_rest(store_url: str,
                                                          tmp_path: Path) -> None:
    """`store import` stores the valid lines, names each bad line, and exits 1."""
    path = tmp_path / "events.jsonl"
    with JsonlSink(path) as sink:
        for minute in range(3):
            sink.emit(event(minute=minute))
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"version": 1, "event": "tool.failed"}\n')
    runner = CliRunner()
    result = runner.invoke(main, ["store", "import", str(path), "--store", store_url])
    assert result.exit_code == 1
    assert "Line 4 of" in result.output
    assert "1 line skipped" in result.output
    assert "3 events read, 3 stored" in result.output
    again = runner.invoke(main, ["store", "import", str(path), "--store", store_url, "--json"])
    assert json.loads(again.output)["stored"] == 0
    assert len([e for e in read_events(path) if not hasattr(e, "problem")]) == 3


def test_cli_refuses_an_invalid_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          store_url: str) -> None:
    """A promotion threshold out of range in failcode.toml is FC-CFG-001, naming the key."""
    (tmp_path / "failcode.toml").write_text("[store]\npromote_after = 0\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["store", "stats", "--store", store_url])
    assert result.exit_code != 0
    assert "[FC-CFG-001]" in result.output
    assert "store.promote_after" in result.output


def test_cli_prune_and_bad_duration(store_url: str) -> None:
    """`store prune --older-than 30d` deletes nothing new; a bad duration is a usage error."""
    runner = CliRunner()
    result = runner.invoke(main, ["store", "prune", "--older-than", "30d", "--store",
                                  store_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"deleted": 0}
    bad = runner.invoke(main, ["store", "prune", "--older-than", "soon", "--store", store_url])
    assert bad.exit_code == 2
    assert "30d" in bad.output


def test_cli_unopenable_store_prints_the_code_not_a_traceback(tmp_path: Path) -> None:
    """A corrupt store file prints FC-STORE-004 with its remedy and no traceback."""
    path = tmp_path / "broken.db"
    path.write_bytes(b"garbage" * 100)
    result = CliRunner().invoke(main, ["store", "stats", "--store", str(path)])
    assert result.exit_code != 0
    assert "[FC-STORE-004]" in result.output
    assert "Traceback" not in result.output
