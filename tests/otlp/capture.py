"""Record what the lab's pinned agents export over OpenTelemetry, as fixtures.

::

    python -m tests.otlp.capture [--agent A]... [--scenario S]... [--out DIR] [--keep DIR]
                                 [--all-signals]

Each run is a lab run (:func:`tests.lab.runner.run`: the scripted model, a private HOME, the
agent's own settings) with the agent's telemetry pointed at a recording endpoint
(:mod:`tests.otlp.record`) the way docs/team.md tells a person to:

- Claude Code: ``CLAUDE_CODE_ENABLE_TELEMETRY=1``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
  ``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf``, ``OTEL_EXPORTER_OTLP_HEADERS``,
  ``OTEL_LOGS_EXPORTER=otlp``, ``OTEL_METRICS_EXPORTER=none``, ``OTEL_LOG_TOOL_DETAILS=1``;
  the lab's ``DISABLE_TELEMETRY`` and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` removed.
- Codex CLI: an ``[otel]`` table in ``$CODEX_HOME/config.toml`` whose ``exporter`` is
  ``otlp-http`` to ``/v1/logs``, ``protocol = "binary"``, the key in ``headers``.
- Gemini CLI: ``telemetry`` in ``~/.gemini/settings.json`` (``enabled``, ``target`` local,
  ``otlpProtocol`` http, ``otlpEndpoint``) merged into what the lab wrote (its
  ``telemetry.enabled: false`` replaced), the key in ``OTEL_EXPORTER_OTLP_HEADERS``.
- Qwen Code (a Gemini CLI fork that reads the same ``telemetry`` settings from
  ``~/.qwen/settings.json``): as Gemini CLI; docs/team.md does not name it.

``--all-signals`` adds what the setup above leaves off, into ``<agent>+all-signals/``: Claude
Code's metrics (``OTEL_METRICS_EXPORTER=otlp``) and traces (``OTEL_TRACES_EXPORTER=otlp`` with
``CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1``: its traces are a beta behind that switch), Codex's
``trace_exporter`` and ``metrics_exporter`` (``otlp-http`` to ``/v1/traces``, ``/v1/metrics``);
Gemini CLI and Qwen Code export all three signals already.

After the agent exits the recorder waits until no request arrived for 2 s (the exporter's last
flush), at most 30 s. Every request is normalized with the lab's
:class:`~tests.lab.normalize.Normalizer`, built as :func:`tests.lab.runner.save` builds it,
after a pass of its own for what the normalizer cannot see in OTLP/JSON (its key rules read
``"name": value`` pairs, OTLP attributes are ``{"key": name, "value": {...}}``):

- ``*UnixNano`` times: the n-th distinct instant of the run becomes 2026-01-01T00:00:00Z plus
  n seconds (0 stays 0), so order survives, values do not;
- attribute values whose key names a duration (``duration``, ``elapsed``, ``_ms``, ``_ns``,
  ``latency``, ``ttft``...) become 0, a process id (``process.pid``, ``pid``) 4242;
- a metric data point's value becomes 0 when its metric names a time (unit ``s`` or ``ms``);
- the recorder's port becomes 4318 (OTLP/HTTP's own), the stub's 8765 (the normalizer).

The fixtures land in ``tests/otlp/fixtures/<agent>/<scenario>/``: ``NN-<signal>.json`` (one
request each, pretty OTLP/JSON, in arrival order) and ``meta.json`` (agent, version, scenario,
exit status, the telemetry setup used, each request's path, encoding and headers, and what the
stub answered). The agent's stdout and stderr, and each request's arrival time, go to
``<cache>/logs/otlp-<agent>-<scenario>.log`` (outside the repository: they name the machine).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from tests.lab.agents import REPO, AgentUnavailableError, agents, cache_dir
from tests.lab.runner import run, run_normalizer
from tests.lab.scenario import load_all
from tests.otlp.record import Recorder

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.lab.agents import Agent, Launch, RunContext
    from tests.lab.normalize import Normalizer
    from tests.lab.runner import RunResult
    from tests.otlp.record import Received

FIXTURES: Final = Path(__file__).parent / "fixtures"
KEY: Final = "fc_ingest_lab"
"""The ingest key the setup sends (the recorder keeps only that one came)."""
OTLP_PORT: Final = "4318"
AGENTS: Final = ("claude-code", "codex", "gemini-cli", "qwen-code")
SCENARIOS: Final = ("pytest-failure", "missing-module", "missing-program", "loop-same-failure",
                    "provider-retried", "provider-fatal-500", "mixed-session",
                    "permission-denied", "refused-command", "command-timeout")
QUIET_S: Final = 2.0
BOUND_S: Final = 30.0

_DURATION_KEY: Final = re.compile(
    r"(?:duration|elapsed|latency|_ms$|Ms$|_ns$|_secs$|_seconds$|ttft|time_to_first)",
    re.IGNORECASE)
_PID_KEY: Final = re.compile(r"^(?:process\.pid|process\.parent_pid|pid|pgid)$")
_CPU_KEY: Final = re.compile(r"^cpu_usage_")
_KERNEL_KEY: Final = re.compile(r"^(?:os\.version|os_release)$")
KERNEL: Final = "0.0.0-lab"
_PROSE_MS: Final = re.compile(r"(Duration: |was active for )\d+(?:\.\d+)?(ms\b)")
_KEPT: Final = ("agent_name",)
"""Attributes whose values are no machine's paths: Codex's ``agent_name`` is its agent tree's
path (``/root`` for the main agent), which the normalizer would take for the real HOME."""


# -- pointing each agent at the recorder, as docs/team.md says ----------------------------------
class Configure(Protocol):
    """Points one agent's telemetry at ``url``; ``every`` asks for every signal it can
    export, beyond what docs/team.md sets up; ``key`` is the ingest key it sends. Returns
    what it set, for ``meta.json``."""

    def __call__(self, ctx: RunContext, launch: Launch, url: str, *, every: bool = False,
                 key: str = KEY) -> dict[str, Any]: ...


def _claude_code(ctx: RunContext, launch: Launch, url: str, *, every: bool = False,
                 key: str = KEY) -> dict[str, Any]:
    del ctx
    removed = ["DISABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]
    for name in removed:
        launch.env.pop(name, None)
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
           "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {key}",
           "CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_LOGS_EXPORTER": "otlp",
           "OTEL_METRICS_EXPORTER": "none", "OTEL_LOG_TOOL_DETAILS": "1"}
    if every:  # traces are a beta behind their own switch
        env |= {"OTEL_METRICS_EXPORTER": "otlp", "OTEL_TRACES_EXPORTER": "otlp",
                "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1"}
    launch.env |= env
    return {"env": env, "removed": removed}


def _codex(ctx: RunContext, launch: Launch, url: str, *, every: bool = False,
           key: str = KEY) -> dict[str, Any]:
    config = Path(launch.env.get("CODEX_HOME", str(ctx.home / ".codex"))) / "config.toml"

    def exporter(signal: str) -> str:
        return (f'{{ otlp-http = {{ endpoint = "{url}/v1/{signal}", protocol = "binary", '
                f'headers = {{ "authorization" = "Bearer {key}" }} }} }}')

    table = f"\n[otel]\nexporter = {exporter('logs')}\n"
    if every:
        table += (f"trace_exporter = {exporter('traces')}\n"
                  f"metrics_exporter = {exporter('metrics')}\n")
    config.write_text(config.read_text() + table)
    return {"config.toml": table.strip()}


def _gemini_like(folder: str) -> Configure:
    def configure(ctx: RunContext, launch: Launch, url: str, *, every: bool = False,
                  key: str = KEY) -> dict[str, Any]:
        del every  # the settings above already export all three signals
        path = ctx.home / folder / "settings.json"
        settings = json.loads(path.read_text()) if path.exists() else {}
        telemetry = {"enabled": True, "target": "local", "otlpProtocol": "http",
                     "otlpEndpoint": url}
        settings["telemetry"] = telemetry  # the lab's {"enabled": false}, replaced
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2))
        env = {"OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {key}"}
        launch.env |= env
        return {"env": env, f"{folder.lstrip('.')}/settings.json": {"telemetry": telemetry}}

    return configure


CONFIGURE: Final[dict[str, Configure]] = {
    "claude-code": _claude_code, "codex": _codex, "gemini-cli": _gemini_like(".gemini"),
    "qwen-code": _gemini_like(".qwen"),
}


# -- normalizing ------------------------------------------------------------------------------
def _walk(value: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    if isinstance(value, dict):
        visit(value)
        for item in value.values():
            _walk(item, visit)
    elif isinstance(value, list):
        for item in value:
            _walk(item, visit)


def _nanos(bodies: list[dict[str, Any]]) -> None:
    """Every ``*UnixNano`` time: the n-th distinct instant of the run is 2026-01-01 + n s."""
    found: set[int] = set()

    def collect(node: dict[str, Any]) -> None:
        for key, item in node.items():
            if key.endswith("UnixNano") and str(item).isdigit() and int(item):
                found.add(int(item))

    for body in bodies:
        _walk(body, collect)
    base = 1_767_225_600 * 10**9
    rank = {instant: base + n * 10**9 for n, instant in enumerate(sorted(found))}

    def replace(node: dict[str, Any]) -> None:
        for key, item in node.items():
            if key.endswith("UnixNano") and str(item).isdigit() and int(item):
                node[key] = str(rank[int(item)])

    for body in bodies:
        _walk(body, replace)


def _zero(value: dict[str, Any], to: int) -> None:
    for kind in ("intValue", "doubleValue"):
        if kind in value:
            value[kind] = str(to) if kind == "intValue" else float(to)
    if "stringValue" in value and re.fullmatch(r"\d+(?:\.\d+)?", value["stringValue"]):
        value["stringValue"] = str(to)


def _attributes(node: dict[str, Any]) -> None:
    """Durations and process ids written as OTLP attributes."""
    key, value = node.get("key"), node.get("value")
    if not isinstance(key, str) or not isinstance(value, dict):
        return
    if _PID_KEY.match(key):
        _zero(value, 4242)
    elif _DURATION_KEY.search(key) or _CPU_KEY.match(key):
        _zero(value, 0)
    elif _KERNEL_KEY.match(key) and "stringValue" in value:
        value["stringValue"] = KERNEL


def _metric_times(node: dict[str, Any]) -> None:
    """A metric of time (unit ``s``/``ms``): its data points' values become 0."""
    if node.get("unit") not in ("s", "ms") or "name" not in node:
        return

    def zero(point: dict[str, Any]) -> None:
        if "timeUnixNano" not in point:
            return
        for kind in ("asDouble", "asInt", "sum", "min", "max"):
            if kind in point:
                point[kind] = "0" if kind == "asInt" else 0
        if "bucketCounts" in point:
            point["bucketCounts"] = ["0" for _ in point["bucketCounts"]]

    for kind in ("gauge", "sum", "histogram", "exponentialHistogram", "summary"):
        _walk(node.get(kind), zero)


def normalize(received: list[Received], ctx: RunContext, agent_dir: Path,
              recorder_port: int) -> tuple[list[str], Normalizer]:
    """The run's requests as normalized, pretty OTLP/JSON texts (one numbering for all)."""
    bodies = [json.loads(json.dumps(r.body if r.body is not None else {"error": r.error}))
              for r in received]
    _nanos(bodies)
    kept: list[str] = []

    def keep(node: dict[str, Any]) -> None:
        value = node.get("value")
        if node.get("key") in _KEPT and isinstance(value, dict) and "stringValue" in value:
            kept.append(value["stringValue"])
            value["stringValue"] = f"@kept-{len(kept) - 1}@"

    for body in bodies:
        _walk(body, _attributes)
        _walk(body, _metric_times)
        _walk(body, keep)
    texts = [json.dumps(body, indent=1, ensure_ascii=False) + "\n" for body in bodies]
    texts = [_PROSE_MS.sub(r"\g<1>0\2", text) for text in texts]
    texts = [re.sub(rf"(127\.0\.0\.1|localhost):{recorder_port}(?!\d)", rf"\1:{OTLP_PORT}", t)
             for t in texts]
    normalizer = run_normalizer(ctx, agent_dir)
    texts = [re.sub(r"@kept-(\d+)@", lambda m: json.dumps(kept[int(m.group(1))])[1:-1], text)
             for text in normalizer.texts(texts)]
    return texts, normalizer


# -- one run ----------------------------------------------------------------------------------
def save(result: RunResult, ctx: RunContext, received: list[Received], *, setup: dict[str, Any],
         agent: Agent, out: Path, recorder_port: int, quiet: bool, folder: str) -> Path:
    """Write the run's requests and ``meta.json`` into ``out/<folder>/<scenario>/``."""
    target = out / folder / result.scenario
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    texts, normalizer = normalize(received, ctx, agent.install_dir, recorder_port)
    listed = []
    for number, (request, text) in enumerate(zip(received, texts, strict=True), start=1):
        name = f"{number:02d}-{request.signal or 'other'}.json"
        (target / name).write_text(text)
        listed.append({"file": name, "path": request.path, "status": request.status,
                       "content_type": request.content_type, "encoding": request.encoding,
                       "authorized": request.authorized, "headers": request.headers,
                       **({"error": request.error} if request.error else {})})
    meta = {
        "agent": result.agent, "version": result.version, "scenario": result.scenario,
        "exit_code": result.exit_code, "timed_out": result.timed_out,
        "went_quiet": quiet, "telemetry": setup, "otlp": listed,
        "requests": [{k: v for k, v in entry.items() if k != "text"} for entry in result.log],
    }
    text = normalizer.texts([json.dumps(meta, indent=1, ensure_ascii=False) + "\n"])[0]
    text = re.sub(rf"(127\.0\.0\.1|localhost):{recorder_port}(?!\d)", rf"\1:{OTLP_PORT}", text)
    (target / "meta.json").write_text(text)
    return target


def capture(agent: Agent, scenario_name: str, out: Path, keep: Path | None, *,
            every: bool = False) -> str:
    """One scenario through one agent, recorded; a line saying what happened. With
    ``every`` the fixtures go to ``<out>/<agent>+all-signals/`` instead."""
    scenario = {s.name: s for s in load_all()}[scenario_name]
    try:
        agent.install()
    except AgentUnavailableError as exc:
        return f"{agent.name:12} {scenario_name:20} skipped: cannot install: {exc}"
    setup: dict[str, Any] = {}
    with Recorder() as recorder:
        def prepare(ctx: RunContext, launch: Launch) -> None:
            setup.update(CONFIGURE[agent.name](ctx, launch, recorder.url, every=every))

        started = time.monotonic()
        try:
            result, ctx = run(agent, scenario, keep=keep, prepare=prepare)
        except AgentUnavailableError as exc:
            return f"{agent.name:12} {scenario_name:20} skipped: {exc}"
        exited = time.monotonic()
        quiet = recorder.wait_quiet(QUIET_S, BOUND_S)
        received = list(recorder.received)
    if ctx is None:
        return f"{agent.name:12} {scenario_name:20} skipped: {result.skipped}"
    target = save(result, ctx, received, setup=setup, agent=agent, out=out,
                  recorder_port=int(recorder.server_address[1]), quiet=quiet,
                  folder=f"{agent.name}+all-signals" if every else agent.name)
    logs = cache_dir() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    arrivals = "\n".join(f"{r.at - started:8.2f}s {'after exit' if r.at > exited else '':10} "
                         f"{r.status} {r.path} {r.content_type} {r.encoding}"
                         for r in received)
    (logs / f"otlp-{target.parent.name}-{scenario_name}.log").write_text(
        f"== {scenario_name}: exit {result.exit_code} timed_out={result.timed_out} "
        f"ran {exited - started:.1f}s\n-- requests (since start)\n{arrivals}\n"
        f"-- stdout\n{result.stdout[-20000:]}\n-- stderr\n{result.stderr[-20000:]}\n")
    if keep is None:
        shutil.rmtree(ctx.root, ignore_errors=True)
    signals: dict[str, int] = {}
    for request in received:
        signals[request.signal or request.path] = signals.get(request.signal or request.path,
                                                              0) + 1
    return (f"{agent.name:12} {scenario_name:20} exit={result.exit_code}"
            f"{' TIMEOUT' if result.timed_out else ''} {exited - started:5.1f}s "
            f"requests={len(received)} {signals} -> "
            f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.otlp.capture",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("-a", "--agent", action="append", choices=AGENTS)
    parser.add_argument("-s", "--scenario", action="append")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--keep", type=Path, default=None,
                        help="leave each run's temporary folder under this folder")
    parser.add_argument("--all-signals", action="store_true",
                        help="also every signal the agent can export beyond docs/team.md's "
                             "setup (fixtures under <agent>+all-signals/)")
    parser.add_argument("--jobs", type=int, default=1, choices=[1],
                        help="one run at a time (the only choice)")
    args = parser.parse_args(argv)
    table = agents()
    known = {s.name for s in load_all()}
    unknown = [s for s in args.scenario or () if s not in known]
    if unknown:
        raise SystemExit(f"unknown scenario {', '.join(unknown)}")
    for name in args.agent or AGENTS:
        for scenario in args.scenario or SCENARIOS:
            print(capture(table[name], scenario, args.out, args.keep,
                          every=args.all_signals), flush=True)


if __name__ == "__main__":
    main()
