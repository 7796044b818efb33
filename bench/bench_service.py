"""``failcode serve`` against the store it writes to, measured in the same run, per backend.

Run:  python bench/bench_service.py [--backend sqlite|postgresql|both] [--seconds 15]
          [--rounds 3] [--events 20000] [--findings-events 1000000] [--requests 240]
          [--workers 1 2 4] [--pg URL] [--cache-dir DIR] [--refill] [--skip-findings]

PostgreSQL comes from ``--pg`` or ``$FAILCODE_TEST_PG_URL``; every schema the run makes is a
fresh one and is dropped at the end. The service is the real command, ``python -m failcode
serve`` in its own process (``--rate`` raised so the limiter never answers 429: the bench
measures the service, not the limiter; ``--prune-interval 0``); projects and keys are made with
``python -m failcode project create`` and ``token create``.

1. **Ingest.** Candidates in interleaved rounds (``--rounds``; each runs ``--seconds`` in all,
   split evenly over the rounds), each into a store of its own on the same backend:

   - ``HTTP, N workers`` for each N of ``--workers`` (default 1, 2 and 4): ``failcode serve
     --workers N`` on a store of its own; 4 client processes, each on one keep-alive
     ``http.client`` connection, POST batches of 100 events as JSONL to ``/v1/events`` with an
     ingest key, one after another. Which workers answered is read from ``X-Failcode-Worker``
     and printed (the kernel hands each client's connection to one worker);
   - ``direct``: ``open_store(url).append(batch)`` of the same events (decoded from the same
     lines before timing) in batches of 100, from 4 processes on PostgreSQL and 1 process on
     SQLite (its writers are serialized by ``BEGIN IMMEDIATE``; one writer never waits for
     the lock; ``--direct-procs`` changes it);
   - ``direct + findings``: the same through ``Findings(store).append``, the service's own
     work per batch (events and findings tables in one transaction) without HTTP and without
     reading JSON, so the two ratios say where the time goes.

   Every batch carries fresh event ids (no batch is a retry); a batch's latency is from the
   request's first byte to its answer's last (for direct: the ``append`` call); p50 and p99 of
   every batch of a candidate are printed. Rates are all events of a round over its wall time;
   the ratio is the median of per-round ratios, one per worker count (goal: HTTP >= 0.5x
   direct with the workers the machine has). ``--skip-findings`` runs this section only.
2. **Findings.** GET ``/v1/findings`` with a read key over ``--findings-events`` stored events
   (default 1,000,000) of about 2,000 signatures, one client, a mix of queries (default page,
   each status, a category, ``sort=count``, agent and version filters, offset paging, and
   combinations), beside ``Findings(store).list`` of the same query in this process (the
   store's part) and ``GET /healthz`` (the HTTP floor), interleaved per request. p50/p95/p99
   (goal p99 <= 50 ms).

Events are realistic failures: ``failcode.from_command`` of real commands run once at start
(pytest, gcc, make, python, node, coreutils), each classified under a number of surfaces (the
tool names of simulated repositories) so the ingest events hold ~150 distinct signatures and
the findings store ~2,000, with the context keys ``agent``, ``agent_version`` and ``model`` of
four agents. Everything is built before timing starts.

The findings store is filled with ``Findings(store).append`` in batches of 5,000 (events over
the last 30 days, a Zipf-like mix of signatures, 10% of them first seen in the last 4.5 days;
after 80% of the events, 300 findings are resolved (half in a version) and 100 ignored, so the
last 20% reopen some). The filled store is cached under ``--cache-dir`` (default: the system
temp dir; never the repository): SQLite keeps the files, PostgreSQL a binary ``COPY`` of each
table, restored into the fresh schema on the next run; the cache's key holds failcode's
version, the store's schema version and ``--findings-events``; ``--refill`` ignores it. When
both backends must be filled, they are filled side by side (one process each) before anything
is timed. PostgreSQL tables are ``ANALYZE``d after a fill or a restore (autovacuum would do it
within a minute of such a load).

It prints a table per backend and, last, one JSON line of every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import multiprocessing
import os
import queue
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from failcode import Failure, from_command
from failcode.events import Event, failure_event
from failcode.service._findings import Findings, ensure_tables
from failcode.service._projects import ProjectStores, project_url
from failcode.store import open_store
from failcode.store._schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from failcode.store import Store

PY: Final = sys.executable
BATCH: Final = 100
"""Events per HTTP request and per direct append in section 1."""
FILL_BATCH: Final = 5000
CLIENTS: Final = 4
DATA_VERSION: Final = "1"
"""Bumped when the generated findings data changes (part of the cache key)."""
AGENTS: Final = (
    ("claude-code", ("2.1.190", "2.1.197", "2.2.0"), "claude-sonnet-4-5"),
    ("codex", ("0.170.0", "0.171.0"), "gpt-5-codex"),
    ("gemini-cli", ("0.60.0", "0.61.0"), "gemini-2.5-pro"),
    ("aider", ("0.86.1", "0.86.2"), "deepseek-chat"),
)
_B32: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIR: Final = tuple(a + b for a in _B32 for b in _B32)


# -- real failures ---------------------------------------------------------------------------
def capture_outputs(work: Path) -> list[tuple[list[str], int, str, str]]:
    """Run a few real failing commands once: (argv, exit status, stdout, stderr) each."""
    (work / "test_calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    (work / "main.c").write_text("int main(void) {\n    return undefined_counter + 1;\n}\n")
    commands: list[list[str]] = [
        [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"],
        [PY, "-c", "import yaml_loader_missing"],
        [PY, "-c", "open('config/settings.yaml')"],
        [PY, "-c", "import json; json.loads('{\"name\": ')"],
        [PY, "-c", "print(1 / 0)"],
        ["ls", "build/output"],
        ["cat", "README.txt"],
        ["grep", "-rn", "TODO", "src_missing"],
        ["sh", "-c", "exit 3"],
    ]
    if shutil.which("gcc"):
        commands.append(["gcc", "-c", "main.c", "-o", "main.o"])
    if shutil.which("make"):
        commands.append(["make", "build"])
    if shutil.which("node"):
        commands.append(["node", "-e", "require('left-pad-missing')"])
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = []
    for argv in commands:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=work, env=env,
                              timeout=120, check=False)
        out.append((argv, done.returncode, done.stdout, done.stderr))
    return out


def base_failures(outputs: Sequence[tuple[list[str], int, str, str]], count: int,
                  ) -> list[Failure]:
    """``count`` failures with distinct signatures: each output under one surface after
    another (``<its surface>.r<k>``: the same tool in another repository)."""
    failures: list[Failure] = []
    seen: set[str] = set()
    for k in range(count):
        for argv, code, stdout, stderr in outputs:
            plain = from_command(argv, code, stdout, stderr)
            if not isinstance(plain, Failure):
                continue
            failure = from_command(argv, code, stdout, stderr, surface=f"{plain.surface}.r{k}")
            if isinstance(failure, Failure) and failure.signature not in seen:
                seen.add(failure.signature)
                failures.append(failure)
            if len(failures) == count:
                return failures
    return failures


def with_agent(failure: Failure, agent: str, version: str, model: str) -> Failure:
    """The failure as reported by ``agent`` ``version`` on ``model``."""
    return msgspec.structs.replace(failure, context={
        **failure.context, "agent": agent, "agent_version": version, "model": model})


def agent_of(index: int) -> tuple[str, tuple[str, ...], str]:
    """The agent a signature's failures mostly come from."""
    return AGENTS[index % len(AGENTS)]


class Ids:
    """ULID-shaped event ids, unique per (salt, counter): 48 bits of time, 40 of salt, 40 of
    counter (a cheap stand-in for ``new_event_id`` in a timed loop)."""

    def __init__(self, salt: int) -> None:
        self.salt = _b32_40(salt & ((1 << 40) - 1))
        self.n = 0

    def take(self, count: int) -> list[str]:
        ms = time.time_ns() // 1_000_000
        head = _PAIR[(ms >> 40) & 1023] + _PAIR[(ms >> 30) & 1023] + _PAIR[
            (ms >> 20) & 1023] + _PAIR[(ms >> 10) & 1023] + _PAIR[ms & 1023]
        prefix = head + self.salt
        start = self.n
        self.n += count
        return [prefix + _b32_40(n) for n in range(start, start + count)]


def _b32_40(value: int) -> str:
    return (_PAIR[(value >> 30) & 1023] + _PAIR[(value >> 20) & 1023]
            + _PAIR[(value >> 10) & 1023] + _PAIR[value & 1023])


def _salt(*parts: object) -> int:
    key = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=5).digest(), "big")


def ingest_lines(outputs: Sequence[tuple[list[str], int, str, str]], count: int, *,
                 signatures: int = 150, seed: int = 7) -> list[bytes]:
    """``count`` event lines (JSON, no newline) over ``signatures`` signatures, recent times,
    varied sessions and agents."""
    rng = random.Random(seed)
    failures = base_failures(outputs, signatures)
    now = datetime.now(UTC)
    bases = [with_agent(failure, agent, version, model)
             for i, failure in enumerate(failures)
             for agent, versions, model in (agent_of(i),) for version in versions]
    lines = []
    for n in range(count):
        failure = rng.choice(bases)
        event = failure_event(failure, event="command.failed", session=f"live-{n // 40}",
                              step=n % 40, source="bench",
                              ts=now - timedelta(milliseconds=count - n),
                              event_id=f"01BENCH{n:019d}")
        lines.append(event.to_json())
    return lines


# -- client processes (section 1) --------------------------------------------------------------
def _split_line(line: bytes) -> tuple[bytes, bytes]:
    event_id = msgspec.json.decode(line)["event_id"].encode()
    prefix, suffix = line.split(b'"event_id":"' + event_id + b'"', 1)
    return prefix + b'"event_id":"', b'"' + suffix + b"\n"


class _Client:
    """What one client process holds: its event lines, their events, connections, stores."""

    def __init__(self, index: int, lines: list[bytes]) -> None:
        self.index = index
        self.templates = [_split_line(line) for line in lines]
        self.events = [Event.from_json(line) for line in lines]
        self.connections: dict[int, http.client.HTTPConnection] = {}
        self.stores: dict[str, Store] = {}

    def timed(self, mode: str, target: Any, start_at: float, seconds: float, tag: str,
              ) -> tuple[Any, ...]:
        """Batches one after another from ``start_at`` for ``seconds``: the "done" answer."""
        ids = Ids(_salt(tag, self.index, secrets.token_hex(4)))
        templates, events = self.templates, self.events
        latencies: list[float] = []
        errors: dict[str, int] = {}
        workers: set[str] = set()
        sent = 0
        wrap = len(templates) - BATCH
        position = (self.index * 997) % wrap
        while time.time() < start_at:
            time.sleep(min(0.01, max(0.0, start_at - time.time())))
        t_start = time.perf_counter()
        deadline = time.time() + seconds
        while time.time() < deadline:
            chunk = range(position, position + BATCH)
            position = (position + BATCH) % wrap
            fresh = ids.take(BATCH)
            if mode == "http":
                port, key = target
                body = b"".join(templates[i][0] + fresh[j].encode() + templates[i][1]
                                for j, i in enumerate(chunk))
                t0 = time.perf_counter()
                status, answered = _post(self.connections, port, key, body)
                latencies.append(time.perf_counter() - t0)
                workers.add(answered)
                if status != 200:
                    errors[str(status)] = errors.get(str(status), 0) + 1
                    continue
            else:
                batch = [msgspec.structs.replace(events[i], event_id=fresh[j])
                         for j, i in enumerate(chunk)]
                store = self.stores[target]
                t0 = time.perf_counter()
                if mode == "findings":
                    Findings(store).append(batch)
                else:
                    store.append(batch)
                latencies.append(time.perf_counter() - t0)
            sent += BATCH
        return ("done", self.index, sent, time.perf_counter() - t_start, latencies, errors,
                sorted(workers))

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()
        for store in self.stores.values():
            store.close()


def worker(index: int, lines: list[bytes], commands: Any, results: Any) -> None:
    """One client process: runs the timed commands it is sent until it gets None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    client = _Client(index, lines)
    results.put(("ready", index))
    try:
        while (command := commands.get()) is not None:
            mode, target, start_at, seconds, tag = command
            if mode == "open":
                client.stores[target] = open_store(target)
                if tag == "findings":
                    ensure_tables(client.stores[target])
                results.put(("opened", index))
            else:
                results.put(client.timed(mode, target, start_at, seconds, tag))
    finally:
        client.close()


def _post(connections: dict[int, http.client.HTTPConnection], port: int, key: str,
          body: bytes) -> tuple[int, str]:
    """POST one batch on the client's connection to ``port``: (status, the answering worker)."""
    for attempt in range(2):
        connection = connections.get(port)
        if connection is None:
            connection = connections[port] = http.client.HTTPConnection(
                "127.0.0.1", port, timeout=120)
        try:
            connection.request("POST", "/v1/events", body=body, headers={
                "Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"})
            response = connection.getresponse()
            response.read()
        except (ConnectionError, http.client.HTTPException):
            connection.close()
            del connections[port]
            if attempt:
                return 599, ""
            continue
        return response.status, response.getheader("x-failcode-worker") or ""
    return 599, ""


class Clients:
    """The 4 client processes, spawned once, each with its share of the event lines."""

    def __init__(self, lines: list[bytes]) -> None:
        context = multiprocessing.get_context("spawn")
        self.results = context.Queue()
        self.commands = [context.Queue() for _ in range(CLIENTS)]
        share = len(lines) // CLIENTS
        self.processes = [
            context.Process(target=worker, args=(i, lines[i * share:(i + 1) * share],
                                                 self.commands[i], self.results), daemon=True)
            for i in range(CLIENTS)]
        for process in self.processes:
            process.start()
        self._collect("ready", CLIENTS)

    def _collect(self, kind: str, count: int) -> list[tuple[Any, ...]]:
        got: list[tuple[Any, ...]] = []
        while len(got) < count:
            try:
                item = self.results.get(timeout=1.0)
            except queue.Empty:
                dead = [p.exitcode for p in self.processes if not p.is_alive()]
                if dead:
                    msg = f"a client process exited (status {dead[0]}); see its error above"
                    raise RuntimeError(msg) from None
                continue
            if item[0] != kind:
                msg = f"a client process answered {item[0]!r}, expected {kind!r}"
                raise RuntimeError(msg)
            got.append(item)
        return got

    def open(self, url: str, procs: int, *, findings: bool) -> None:
        for i in range(procs):
            self.commands[i].put(("open", url, 0.0, 0.0, "findings" if findings else "store"))
        self._collect("opened", procs)

    def run(self, mode: str, target: Any, procs: int, seconds: float, tag: str,
            ) -> dict[str, Any]:
        """One timed round of ``procs`` clients; events/s over the round's wall time and the
        latencies of every batch."""
        start_at = time.time() + 0.3
        for i in range(procs):
            self.commands[i].put((mode, target, start_at, seconds, tag))
        done = self._collect("done", procs)
        events = sum(d[2] for d in done)
        wall = max(d[3] for d in done)
        latencies = [x for d in done for x in d[4]]
        errors: dict[str, int] = {}
        for d in done:
            for status, n in d[5].items():
                errors[status] = errors.get(status, 0) + n
        return {"events": events, "wall": wall, "rate": events / wall,
                "latencies": latencies, "errors": errors,
                "workers": sorted({w for d in done for w in d[6] if w})}

    def close(self) -> None:
        for commands in self.commands:
            commands.put(None)
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                process.terminate()


# -- the service process ---------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cli(*args: str, store: str) -> str:
    """Run the failcode CLI against ``store``; the last line of its standard output."""
    env = {k: v for k, v in os.environ.items() if k != "FAILCODE_STORE"}
    done = subprocess.run([PY, "-m", "failcode", *args, "--store", store], capture_output=True,
                          text=True, timeout=300, check=False, env=env)
    if done.returncode != 0:
        msg = f"failcode {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
        raise RuntimeError(msg)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@contextlib.contextmanager
def served(store: str, log: Path, workers: int = 1) -> Iterator[tuple[int, int]]:
    """``failcode serve --workers N`` on ``store``, on a free port, until the block ends:
    (port, pid)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "FAILCODE_STORE"}
    env["PYTHONUNBUFFERED"] = "1"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [PY, "-m", "failcode", "serve", "--store", store, "--port", str(port),
             "--rate", "1000000000", "--prune-interval", "0", "--log-level", "warning",
             "--workers", str(workers)],
            stdout=out, stderr=out, env=env)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                msg = (f"failcode serve exited {process.returncode}: "
                       f"{log.read_text(errors='replace')[-2000:]}")
                raise RuntimeError(msg)
            with contextlib.suppress(OSError, http.client.HTTPException):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    connection.close()
                    break
            if time.monotonic() > deadline:
                msg = "failcode serve did not answer /healthz within 120 s"
                raise RuntimeError(msg)
            time.sleep(0.1)
        yield port, process.pid
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


# -- stores ----------------------------------------------------------------------------------
class Backend:
    """Fresh stores of one backend; PostgreSQL schemas are dropped by :meth:`close`."""

    def __init__(self, name: str, tmp: Path, pg: str) -> None:
        self.name = name
        self.tmp = tmp
        self.pg = pg
        self.schemas: list[str] = []
        self._n = 0

    @property
    def label(self) -> str:
        return "SQLite" if self.name == "sqlite" else "PostgreSQL"

    def fresh(self, what: str) -> str:
        """A URL of an empty store (a control store: its projects live beside it)."""
        self._n += 1
        if self.name == "sqlite":
            folder = self.tmp / f"{what}-{self._n}"
            folder.mkdir(parents=True)
            return f"sqlite:///{folder / 'failcode.db'}"
        import psycopg

        schema = f"bench_svc_{os.getpid()}_{self._n}"
        with psycopg.connect(self.pg, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            connection.execute(f"CREATE SCHEMA {schema}")
        self.schemas.append(schema)
        return self.schema_url(schema)

    def schema_url(self, schema: str) -> str:
        sep = "&" if "?" in self.pg else "?"
        return f"{self.pg}{sep}options=-csearch_path%3D{schema}"

    def project(self, control_url: str, project: str = "web") -> str:
        """The URL of ``project``'s store under ``control_url`` (made: folder or schema)."""
        if self.name == "sqlite":
            url = project_url(control_url, project)
            Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
            return url
        import psycopg

        control = open_store(control_url)
        try:  # the schema name the control store gave the project when it was created
            stores = ProjectStores(control, control_url)
            schema, url = stores.schema(project), stores.url(project)
        finally:
            control.close()
        with psycopg.connect(self.pg, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        self.schemas.append(str(schema))
        return url

    def close(self) -> None:
        if self.name != "postgresql" or not self.schemas:
            return
        import psycopg

        with psycopg.connect(self.pg, autocommit=True) as connection:
            for schema in reversed(self.schemas):
                connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        self.schemas = []


# -- section 1 -------------------------------------------------------------------------------
def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_ingest(backend: Backend, clients: Clients, *, seconds: float, rounds: int,
                 direct_procs: int, workers: Sequence[int] = (1,),
                 py_spy: Path | None = None) -> dict[str, Any]:
    """Section 1 on one backend (see the module)."""
    controls: dict[int, tuple[str, str]] = {}
    for count in workers:
        control = backend.fresh(f"ingest-{count}w")
        cli("project", "create", "web", store=control)
        controls[count] = (control, cli("token", "create", "--project", "web", "--scope",
                                        "ingest", store=control))
    direct = backend.fresh("direct")
    with_findings = backend.fresh("findings")
    open_store(direct).close()  # made and migrated once, before several processes open it
    with open_store(with_findings) as store:
        ensure_tables(store)
    clients.open(direct, direct_procs, findings=False)
    clients.open(with_findings, 1, findings=True)
    per_round = seconds / rounds
    http_names = [f"HTTP {count}w" for count in workers]
    names = [*http_names, "direct", "direct + findings"]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with contextlib.ExitStack() as stack:
        plan: dict[str, tuple[str, Any, int]] = {
            "direct": ("append", direct, direct_procs),
            "direct + findings": ("findings", with_findings, 1)}
        pids: dict[str, int] = {}
        for count, name in zip(workers, http_names, strict=True):
            control, key = controls[count]
            port, pid = stack.enter_context(served(
                control, backend.tmp / f"serve-ingest-{backend.name}-{count}w.log", count))
            plan[name] = ("http", (port, key), CLIENTS)
            pids[name] = pid
        # one untimed warm-up round each (imports, caches, the project store opened)
        for name in names:
            mode, target, procs = plan[name]
            clients.run(mode, target, procs, min(1.0, per_round), f"warm-{name}")
        for r in range(rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                mode, target, procs = plan[name]
                spy = (_py_spy(pids[name], py_spy, backend.name, per_round)
                       if py_spy is not None and name == http_names[0] and r == 0 else None)
                runs[name].append(clients.run(mode, target, procs, per_round, f"{name}-{r}"))
                if spy is not None:
                    spy.wait(timeout=per_round + 60)
    out: dict[str, Any] = {"direct_procs": direct_procs, "clients": CLIENTS,
                           "seconds": seconds, "rounds": rounds, "workers": list(workers)}
    for name in names:
        latencies = [x for run in runs[name] for x in run["latencies"]]
        errors: dict[str, int] = {}
        for run in runs[name]:
            for status, n in run["errors"].items():
                errors[status] = errors.get(status, 0) + n
        out[name] = {"events_per_s": round(statistics.median(r["rate"] for r in runs[name])),
                     "batches": len(latencies),
                     "p50_ms": round(_pct(latencies, 0.5) * 1000, 2),
                     "p99_ms": round(_pct(latencies, 0.99) * 1000, 2),
                     "errors": errors,
                     "workers_answering": len({w for run in runs[name]
                                               for w in run.get("workers", ())})}
    out["http_vs_direct"] = {str(count): round(statistics.median(
        h["rate"] / d["rate"] for h, d in zip(runs[name], runs["direct"], strict=True)), 3)
        for count, name in zip(workers, http_names, strict=True)}
    out["http_vs_direct_findings"] = {str(count): round(statistics.median(
        h["rate"] / d["rate"] for h, d in zip(runs[name], runs["direct + findings"],
                                              strict=True)), 3)
        for count, name in zip(workers, http_names, strict=True)}
    return out


def _py_spy(pid: int, prefix: Path, backend: str, seconds: float) -> subprocess.Popen[bytes]:
    """``py-spy record`` of the service's threads during one HTTP round (collapsed stacks)."""
    tool = shutil.which("py-spy") or str(Path(PY).with_name("py-spy"))
    out = prefix.with_name(f"{prefix.name}-{backend}.txt")
    print(f"  (py-spy: the first HTTP round of the service -> {out})", flush=True)
    return subprocess.Popen([tool, "record", "--pid", str(pid), "--duration",
                             str(max(1, int(seconds))), "--rate", "200", "--format", "raw",
                             "--output", str(out), "--gil", "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def print_ingest(label: str, result: dict[str, Any]) -> None:
    procs = result["direct_procs"]
    print(f"\n## 1. Ingest, {label}: batches of {BATCH} events, {result['seconds']:.0f} s per "
          f"candidate in {result['rounds']} interleaved rounds")
    print(f"  {'candidate':<52} {'events/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'batches':>8}")
    shown = {f"HTTP {count}w": f"HTTP POST /v1/events, {result['clients']} clients, {count} "
                               f"worker{'s' if count > 1 else ''}"
             for count in result["workers"]}
    shown.update({"direct": f"Store.append, {procs} process{'es' if procs > 1 else ''}",
                  "direct + findings": "Findings.append, 1 process (as the service)"})
    for name, text in shown.items():
        row = result[name]
        errors = f"  errors {row['errors']}" if row["errors"] else ""
        answering = (f"  ({row['workers_answering']} answering)"
                     if name.startswith("HTTP") else "")
        print(f"  {text:<52} {row['events_per_s']:>9,} {row['p50_ms']:>8.1f} "
              f"{row['p99_ms']:>8.1f} {row['batches']:>8,}{errors}{answering}")
    for count in result["workers"]:
        print(f"  HTTP {count}w / direct: {result['http_vs_direct'][str(count)]:.2f}x "
              f"(goal >= 0.5x)   HTTP {count}w / direct + findings: "
              f"{result['http_vs_direct_findings'][str(count)]:.2f}x")


# -- section 2: the findings store ------------------------------------------------------------
def findings_plan(outputs: Sequence[tuple[list[str], int, str, str]], *, signatures: int,
                  seed: int) -> tuple[list[list[Event]], list[float], list[float]]:
    """Per signature: its base events (one per agent version), its weight and the fraction of
    the fill from which it occurs."""
    rng = random.Random(seed)
    failures = base_failures(outputs, signatures)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    bases = []
    for i, failure in enumerate(failures):
        agent, versions, model = agent_of(i)
        bases.append([failure_event(with_agent(failure, agent, version, model),
                                    event="command.failed", ts=when, source="bench",
                                    event_id="01BENCHBASE")
                      for version in versions])
    ranks = list(range(len(bases)))
    rng.shuffle(ranks)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in ranks]
    late = len(bases) // 10
    starts = [0.0] * (len(bases) - late) + [0.85 + 0.15 * k / late for k in range(late)]
    return bases, weights, starts


def fill(url: str, count: int, outputs: Sequence[tuple[list[str], int, str, str]], *,
         signatures: int = 2000, seed: int = 3) -> dict[str, Any]:
    """Fill a project's store with ``count`` events through ``Findings.append``."""
    rng = random.Random(seed)
    bases, weights, starts = findings_plan(outputs, signatures=signatures, seed=seed)
    now = datetime.now(UTC).replace(microsecond=0)
    begin = now - timedelta(days=30)
    span_us = 30 * 86_400_000_000
    ids = Ids(_salt("fill", url, count, secrets.token_hex(4)))
    build_s = 0.0
    statuses_set = False
    with open_store(url) as store:
        ensure_tables(store)
        findings = Findings(store)
        t0 = time.perf_counter()
        at = max(FILL_BATCH, int(0.8 * count) // FILL_BATCH * FILL_BATCH)
        for start in range(0, count, FILL_BATCH):
            size = min(FILL_BATCH, count - start)
            if not statuses_set and start >= at:
                _set_statuses(findings, bases, weights, rng)
                statuses_set = True
                # dated at this point of the 30 days (set_status stamps now), so the failures
                # after it can reopen what was resolved
                with store.transaction() as tx:
                    tx.run("UPDATE svc_findings SET status_us = ? WHERE status <> 'open'",
                           (int(begin.timestamp() * 1e6) + start * span_us // count,))
            t1 = time.perf_counter()
            fraction = start / count
            open_ = [i for i, s in enumerate(starts) if s <= fraction]
            chosen = rng.choices(open_, weights=[weights[i] for i in open_], k=size)
            fresh = ids.take(size)
            batch = []
            for j, i in enumerate(chosen):
                n = start + j
                batch.append(msgspec.structs.replace(
                    rng.choice(bases[i]), event_id=fresh[j],
                    ts=begin + timedelta(microseconds=n * span_us // count),
                    session=f"s-{n // 50}", step=n % 50))
            build_s += time.perf_counter() - t1
            findings.append(batch)
        seconds = time.perf_counter() - t0
        rows = store.fetch("SELECT status, count(*) FROM svc_findings GROUP BY status")
    return {"events": count, "seconds": round(seconds, 1), "build_s": round(build_s, 1),
            "events_per_s": round(count / seconds), "findings": sum(int(r[1]) for r in rows),
            "statuses": {r[0]: int(r[1]) for r in rows}}


def _set_statuses(findings: Findings, bases: list[list[Event]], weights: list[float],
                  rng: random.Random) -> None:
    """Resolve 300 findings (150 in a version) and ignore 100, among those seen so far."""
    failures = [[e.failure for e in events if e.failure is not None] for events in bases]
    known = {row[0] for row in findings.store.fetch("SELECT signature FROM svc_findings")}
    order = sorted((i for i, f in enumerate(failures) if f[0].signature in known),
                   key=lambda i: -weights[i])
    picked = rng.sample(order[:1200], min(400, len(order[:1200])))
    for n, i in enumerate(picked):
        finding_id = findings.id_of(failures[i][0].signature)
        if n < 150:
            findings.set_status(finding_id, "resolve")
        elif n < 300:  # in its agent's newest version: failures of older ones do not reopen it
            version = str(failures[i][-1].context["agent_version"])
            findings.set_status(finding_id, "resolve", in_version=version)
        else:
            findings.set_status(finding_id, "ignore")


def _fill_process(url: str, count: int, outputs: list[tuple[list[str], int, str, str]],
                  results: Any) -> None:
    try:
        results.put(("filled", url, fill(url, count, outputs)))
    except BaseException as exc:
        results.put(("failed", url, repr(exc)))
        raise


def _tables(pg_url: str) -> list[str]:
    import psycopg

    with psycopg.connect(pg_url) as connection:
        rows = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall()
    return [r[0] for r in rows]


def pg_dump(url: str, folder: Path) -> None:
    """A binary COPY of each table of the store at ``url`` into ``folder``."""
    import psycopg

    folder.mkdir(parents=True, exist_ok=True)
    tables = _tables(url)
    with psycopg.connect(url) as connection:
        for table in tables:
            with (folder / f"{table}.bin").open("wb") as out, connection.cursor().copy(
                    f'COPY "{table}" TO STDOUT (FORMAT binary)') as copy:
                for data in copy:
                    out.write(data)
    (folder / "tables.json").write_text(json.dumps(tables))


def pg_restore(url: str, folder: Path) -> None:
    """Load a :func:`pg_dump` into the (migrated, empty) store at ``url``."""
    import psycopg

    tables = json.loads((folder / "tables.json").read_text())
    with psycopg.connect(url) as connection:
        for table in tables:
            connection.execute(f'TRUNCATE "{table}"')
            with (folder / f"{table}.bin").open("rb") as source, connection.cursor().copy(
                    f'COPY "{table}" FROM STDIN (FORMAT binary)') as copy:
                while data := source.read(1 << 20):
                    copy.write(data)


def pg_analyze(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        for table in _tables(url):
            connection.execute(f'ANALYZE "{table}"')


class FindingsStore(msgspec.Struct, kw_only=True):
    """A backend's filled findings store: its control store and the project's store."""

    backend: str
    control: str
    project: str
    fill: dict[str, Any]
    restored_s: float | None = None
    cache: str | None = None


def cache_key(backend: str, count: int) -> str:
    from failcode import __version__

    key = f"{backend}|{count}|{__version__}|schema{SCHEMA_VERSION}|data{DATA_VERSION}"
    return f"{backend}-{count}-{hashlib.blake2b(key.encode(), digest_size=6).hexdigest()}"


def _prepare_one(backend: Backend, count: int, cache_dir: Path | None,
                 ) -> tuple[FindingsStore, Path | None, bool]:
    """A backend's findings store, restored from the cache when it holds one: (store, its
    cache folder, whether it still has to be filled)."""
    folder = cache_dir / cache_key(backend.name, count) if cache_dir else None
    done = folder / "fill.json" if folder else None
    if backend.name == "sqlite":
        home = folder or backend.tmp / "findings-store"
        control = f"sqlite:///{home / 'failcode.db'}"
        if done is not None and done.exists():
            return FindingsStore(backend="sqlite", control=control,
                                 project=project_url(control, "web"),
                                 fill=json.loads(done.read_text()), restored_s=0.0,
                                 cache=str(home)), folder, False
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        cli("project", "create", "web", store=control)
        return FindingsStore(backend="sqlite", control=control,
                             project=backend.project(control), fill={},
                             cache=str(home) if folder else None), folder, True
    control = backend.fresh("findings-control")
    cli("project", "create", "web", store=control)
    project = backend.project(control)
    with open_store(project) as store:
        ensure_tables(store)
    item = FindingsStore(backend="postgresql", control=control, project=project, fill={},
                         cache=str(folder) if folder else None)
    if folder is None or done is None or not done.exists():
        return item, folder, True
    t0 = time.perf_counter()
    pg_restore(project, folder)
    pg_analyze(project)
    item.restored_s = round(time.perf_counter() - t0, 1)
    item.fill = json.loads(done.read_text())
    return item, folder, False


def _fill_all(to_fill: list[tuple[Backend, FindingsStore, Path | None]], count: int,
              outputs: list[tuple[list[str], int, str, str]]) -> None:
    """Fill the stores, one process each, side by side; cache each one filled."""
    names = ", ".join(b.label for b, _, _ in to_fill)
    side = " side by side" if len(to_fill) > 1 else ""
    print(f"filling the findings store{side} ({names}): {count:,} events through "
          "Findings.append, once; later runs reuse the cache", flush=True)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = [context.Process(target=_fill_process, args=(item.project, count, outputs,
                                                            results))
                 for _, item, _ in to_fill]
    for process in processes:
        process.start()
    got = {}
    for _ in processes:
        kind, url, stats = results.get(timeout=4 * 3600)
        if kind != "filled":
            msg = f"filling {url} failed: {stats}"
            raise RuntimeError(msg)
        got[url] = stats
    for process in processes:
        process.join()
    for backend, item, folder in to_fill:
        item.fill = {**got[item.project], "side_by_side": len(to_fill) > 1}
        if backend.name == "postgresql":
            pg_analyze(item.project)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
                pg_dump(item.project, folder)
        if folder is not None:
            (folder / "fill.json").write_text(json.dumps(item.fill))


def prepare_findings(backends: list[Backend], count: int,
                     outputs: list[tuple[list[str], int, str, str]], cache_dir: Path | None,
                     ) -> dict[str, FindingsStore]:
    """Each backend's findings store: restored from the cache, else filled (side by side when
    more than one must be) and cached."""
    prepared: dict[str, FindingsStore] = {}
    to_fill: list[tuple[Backend, FindingsStore, Path | None]] = []
    for backend in backends:
        item, folder, missing = _prepare_one(backend, count, cache_dir)
        prepared[backend.name] = item
        if missing:
            to_fill.append((backend, item, folder))
    if to_fill:
        _fill_all(to_fill, count, outputs)
    return prepared


# -- section 2: the requests ------------------------------------------------------------------
def queries(categories: list[str], requests: int) -> list[tuple[str, dict[str, Any]]]:
    """The request mix: (kind, query parameters), ``requests`` in all, kinds interleaved."""
    category = categories[0]
    other = categories[1] if len(categories) > 1 else categories[0]
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("default page", {}),
        ("status=new", {"status": "new"}),
        ("status=ongoing", {"status": "ongoing"}),
        ("status=resolved", {"status": "resolved"}),
        ("status=regressed", {"status": "regressed"}),
        (f"category={category}", {"category": category}),
        ("sort=count", {"sort": "count"}),
        ("agent=claude-code", {"agent": "claude-code"}),
        ("agent=codex&version=0.171.0", {"agent": "codex", "version": "0.171.0"}),
        ("offset=50..1000", {}),
        ("status=ongoing&sort=count&limit=100", {"status": "ongoing", "sort": "count",
                                                 "limit": 100}),
        (f"category={other}&agent=gemini-cli&sort=count", {
            "category": other, "agent": "gemini-cli", "sort": "count"}),
    ]
    out = []
    for n in range(requests):
        kind, params = kinds[n % len(kinds)]
        if kind.startswith("offset"):
            params = {"offset": 50 * (1 + (n // len(kinds)) % 20)}
        out.append((kind, params))
    return out


def bench_findings(backend: Backend, item: FindingsStore, requests: int) -> dict[str, Any]:
    """Section 2 on one backend (see the module)."""
    key = cli("token", "create", "--project", "web", "--scope", "read", store=item.control)
    with open_store(item.project) as store:
        categories = [r[0] for r in store.fetch(
            "SELECT s.category, count(*) FROM svc_findings f JOIN signatures s ON s.signature "
            "= f.signature GROUP BY s.category ORDER BY 2 DESC, 1")]
        events = int(store.fetch("SELECT count(*) FROM events")[0][0])
        findings = Findings(store)
        plan = queries(categories, requests)
        http_ms: dict[str, list[float]] = {}
        direct_ms: dict[str, list[float]] = {}
        floor_ms: list[float] = []
        mismatches = 0
        log = backend.tmp / f"serve-findings-{backend.name}.log"
        with served(item.control, log) as (port, _pid):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            headers = {"Authorization": f"Bearer {key}"}

            def get(path: str) -> tuple[float, Any]:
                t0 = time.perf_counter()
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                body = response.read()
                elapsed = (time.perf_counter() - t0) * 1000
                if response.status != 200:
                    msg = f"GET {path} answered {response.status}: {body[:300]!r}"
                    raise RuntimeError(msg)
                return elapsed, body

            def direct(params: dict[str, Any]) -> tuple[float, int]:
                t0 = time.perf_counter()
                _page, total = findings.list(**params)
                return (time.perf_counter() - t0) * 1000, total

            for _kind, params in plan[:12]:  # warm-up: caches, the project store opened
                get("/v1/findings?" + urlencode(params))
                direct(params)
            for n, (kind, params) in enumerate(plan):
                path = "/v1/findings" + ("?" + urlencode(params) if params else "")
                steps = ["http", "direct", "floor"]
                k = n % 3
                for step in steps[k:] + steps[:k]:
                    if step == "http":
                        elapsed, body = get(path)
                        http_ms.setdefault(kind, []).append(elapsed)
                        total_http = msgspec.json.decode(body)["total"]
                    elif step == "direct":
                        elapsed, total_direct = direct(params)
                        direct_ms.setdefault(kind, []).append(elapsed)
                    else:
                        floor_ms.append(get("/healthz")[0])
                mismatches += total_http != total_direct
            connection.close()
    every = [x for values in http_ms.values() for x in values]
    every_direct = [x for values in direct_ms.values() for x in values]
    return {
        "events": events, "findings": item.fill.get("findings"), "requests": len(every),
        "fill": item.fill, "restored_s": item.restored_s, "cache": item.cache is not None,
        "http_ms": {"p50": round(_pct(every, 0.5), 2), "p95": round(_pct(every, 0.95), 2),
                    "p99": round(_pct(every, 0.99), 2), "max": round(max(every), 2)},
        "direct_ms": {"p50": round(_pct(every_direct, 0.5), 2),
                      "p95": round(_pct(every_direct, 0.95), 2),
                      "p99": round(_pct(every_direct, 0.99), 2)},
        "healthz_ms": {"p50": round(_pct(floor_ms, 0.5), 2),
                       "p99": round(_pct(floor_ms, 0.99), 2)},
        "per_kind": {kind: {"http_p50": round(_pct(v, 0.5), 2), "http_p99": round(_pct(v, 0.99),
                                                                                   2),
                            "direct_p50": round(_pct(direct_ms[kind], 0.5), 2)}
                     for kind, v in http_ms.items()},
        "totals_differ": mismatches,
    }


def print_findings(label: str, result: dict[str, Any]) -> None:
    fill_ = result["fill"]
    how = (f"filled in {fill_['seconds']:.0f} s, {fill_['events_per_s'] / 1000:.1f}k events/s"
           f"{' side by side with the other backend' if fill_.get('side_by_side') else ''}")
    if result["restored_s"] is not None:
        how = (f"restored from the cache in {result['restored_s']:.0f} s; when made: {how}")
    print(f"\n## 2. GET /v1/findings, {label}: {result['events']:,} stored events, "
          f"{result['findings']:,} findings ({how})")
    print(f"  statuses kept: {fill_.get('statuses')}")
    print(f"  {'':<28} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    h, d, f = result["http_ms"], result["direct_ms"], result["healthz_ms"]
    print(f"  {'GET /v1/findings (HTTP)':<28} {h['p50']:>8.2f} {h['p95']:>8.2f} {h['p99']:>8.2f}"
          f"   {result['requests']} requests, max {h['max']:.1f} ms (goal p99 <= 50 ms)")
    print(f"  {'Findings.list (direct)':<28} {d['p50']:>8.2f} {d['p95']:>8.2f} {d['p99']:>8.2f}")
    print(f"  {'GET /healthz (floor)':<28} {f['p50']:>8.2f} {'':>8} {f['p99']:>8.2f}")
    print(f"  {'query':<46} {'HTTP p50':>9} {'HTTP p99':>9} {'direct p50':>11}")
    for kind, row in result["per_kind"].items():
        print(f"  {kind:<46} {row['http_p50']:>9.2f} {row['http_p99']:>9.2f} "
              f"{row['direct_p50']:>11.2f}")
    if result["totals_differ"]:
        print(f"  WARNING: {result['totals_differ']} answers' totals differ from Findings.list")


# -- main ------------------------------------------------------------------------------------
def _arguments() -> tuple[argparse.Namespace, list[str], str]:
    """The command line: (options, backends to run, the PostgreSQL server URL or "")."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="ingest time per candidate, over all rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=20_000,
                        help="ingest events built before timing (sent again with fresh ids)")
    parser.add_argument("--findings-events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=240)
    parser.add_argument("--direct-procs", type=int, default=0,
                        help="direct writer processes (default: 1 on SQLite, 4 on PostgreSQL)")
    parser.add_argument("--pg", default=os.environ.get("FAILCODE_TEST_PG_URL", ""))
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "failcode-bench-service")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4],
                        help="the worker counts of failcode serve to measure (default 1 2 4)")
    parser.add_argument("--skip-findings", action="store_true",
                        help="run section 1 (ingest) only")
    parser.add_argument("--refill", action="store_true", help="ignore a cached findings store")
    parser.add_argument("--py-spy", type=Path, metavar="PREFIX",
                        help="record the service with py-spy during the first HTTP ingest round "
                             "(collapsed stacks to PREFIX-<backend>.txt; needs py-spy)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.rounds < 1 or args.events < CLIENTS * BATCH * 2 or (
            args.findings_events < FILL_BATCH or args.requests < 12
            or any(not 1 <= count <= 64 for count in args.workers)):
        parser.error(f"--seconds must be > 0, --rounds >= 1, --events >= {CLIENTS * BATCH * 2}"
                     f", --findings-events >= {FILL_BATCH}, --requests >= 12 and --workers "
                     "from 1 to 64")
    names, pg = chosen_backends(parser, args)
    return args, names, pg


def chosen_backends(parser: argparse.ArgumentParser, args: argparse.Namespace,
                    ) -> tuple[list[str], str]:
    """The backends ``--backend`` names and the PostgreSQL URL (``--pg``, else
    ``$FAILCODE_TEST_PG_URL``); PostgreSQL is skipped, saying so, when ``both`` lacks a URL."""
    names = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    pg = args.pg if args.pg.startswith(("postgresql://", "postgres://")) else ""
    if "postgresql" in names and not pg:
        if args.backend == "postgresql":
            parser.error("PostgreSQL needs --pg URL or FAILCODE_TEST_PG_URL")
        print("PostgreSQL: skipped (no --pg URL / FAILCODE_TEST_PG_URL)")
        names.remove("postgresql")
    return names, pg


def main() -> None:
    args, names, pg = _arguments()
    cache_dir = None if args.no_cache else args.cache_dir
    if cache_dir is not None and args.refill:
        for name in names:
            shutil.rmtree(cache_dir / cache_key(name, args.findings_events), ignore_errors=True)
    t_run = time.perf_counter()
    report: dict[str, Any] = {"bench": "service", "events_per_batch": BATCH}
    with tempfile.TemporaryDirectory(prefix="failcode-bench-service-") as tmp_name:
        tmp = Path(tmp_name)
        work = tmp / "commands"
        work.mkdir()
        outputs = capture_outputs(work)
        lines = ingest_lines(outputs, args.events)
        signatures = len({msgspec.json.decode(line)["failure"]["signature"] for line in lines})
        print(f"{len(outputs)} real commands captured; {len(lines):,} ingest events over "
              f"{signatures} signatures built", flush=True)
        report["ingest_signatures"] = signatures
        backends = [Backend(name, tmp / name, pg) for name in names]
        for backend in backends:
            backend.tmp.mkdir()
        clients = None
        try:
            t0 = time.perf_counter()
            prepared = ({} if args.skip_findings else
                        prepare_findings(backends, args.findings_events, outputs, cache_dir))
            report["prepare_s"] = round(time.perf_counter() - t0, 1)
            clients = Clients(lines)
            for backend in backends:
                procs = args.direct_procs or (1 if backend.name == "sqlite" else CLIENTS)
                ingest = bench_ingest(backend, clients, seconds=args.seconds,
                                      rounds=args.rounds, direct_procs=min(procs, CLIENTS),
                                      workers=args.workers, py_spy=args.py_spy)
                print_ingest(backend.label, ingest)
                report[backend.name] = {"ingest": ingest}
                if not args.skip_findings:
                    findings = bench_findings(backend, prepared[backend.name], args.requests)
                    print_findings(backend.label, findings)
                    report[backend.name]["findings"] = findings
        finally:
            if clients is not None:
                clients.close()
            for backend in backends:
                backend.close()
    report["wall_s"] = round(time.perf_counter() - t_run, 1)
    print(f"\n(whole run {report['wall_s']:.0f} s)")
    print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
