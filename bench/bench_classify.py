"""Benchmark: catch -> classify -> sign -> build the record, against tenacity's per-attempt cost.

One command: ``python bench/bench_classify.py`` (options: ``--rounds N --n N --profile``).

Each handled exception is raised 5 frames deep with a DISTINCT realistic message (a path, a
host and port, a request id, a model name, a count...), caught, and turned into a Failure by
``failcode.classify`` (rule lookup, location by walking ``tb_next``, signature, record with its
cause chain). The peer is tenacity's overhead for one failed attempt: a reused ``Retrying``
with ``wait_exponential_jitter``, ``time.sleep`` stubbed to a no-op, around a function that
raises once then succeeds; per attempt = time per call / 2 (as in the shared retry baseline).
A naive classifier (``str(exc)``, a list of regexes, a dict record with a blake2b signature of
the raw text) is reported for reference. All run interleaved in one process; each ratio is the
median of per-round ratios. Every candidate classifies batches of its own (distinct seeds), so
no candidate finds failcode's caches (word, text and record memos) warmed by another.

Target (issue 10): failcode <= 1x tenacity per attempt. ``--profile`` prints where
failcode's time goes under cProfile; ``--steps`` adds a per-step breakdown measured without a
profiler: cumulative candidates (raise and catch; + rule lookup, location and ``str``; + the
rule's plan; + the cause chain; the whole ``classify``; ``classify`` with the record-template
cache emptied before every call, i.e. every record built, redacted, rendered, signed and
validated in full), interleaved with the others; a step's cost is the difference of medians.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import hashlib
import pstats
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tenacity

from _timing import interleaved, median_ratio
from failcode.classification import _classify
from failcode.classification._classify import classify
from failcode.codes import _build

TARGET = 1.0
DEPTH = 5

_MODULES = ["numpy", "pandas", "requests", "torch", "yaml", "fastapi", "sqlalchemy", "httpx"]
_FILES = ["src/main.py", "app/models/user.py", "tests/test_api.py", "config/settings.toml",
          "data/input.csv", "build/out.log", "docs/conf.py", "pkg/server/handler.go"]
_HOSTS = ["api.openai.com", "api.anthropic.com", "db.internal", "redis", "localhost",
          "registry.npmjs.org", "s3.amazonaws.com"]


def corpus(n: int, seed: int = 7, repeat: int = 1,
           ) -> list[tuple[type[BaseException], tuple[Any, ...]]]:
    """``n`` (exception type, args) pairs with realistic, volatile messages.

    ``repeat=1``: every failure is a different one (a path, a host and port, a count...).
    ``repeat=k``: each failure comes ``k`` times in a row, as a retry loop sees it: the same
    call failing again, where only what changes between two attempts of one call changes (a
    request id, a clock reading, a measured delay).
    """
    volatile = random.Random(seed)
    out: list[tuple[type[BaseException], tuple[Any, ...]]] = []
    for i in range(n):
        rnd = random.Random(seed * 1_000_003 + i // repeat)  # what stays within one failure
        pick = (i // repeat) % 8
        rid = f"req_{volatile.getrandbits(64):016x}"
        if pick == 0:
            peer = f"{rnd.choice(_HOSTS)}:{rnd.randint(1024, 65535)}"
            out.append((ConnectionResetError,
                        (104, f"Connection reset by peer while talking to {peer} ({rid})")))
        elif pick == 1:
            out.append((TimeoutError, ((f"read timed out after {volatile.uniform(1, 90):.2f}s "
                                       f"waiting for {rnd.choice(_HOSTS)} ({rid})"),)))
        elif pick == 2:
            path = f"/tmp/run-{rnd.getrandbits(32):08x}/{rnd.choice(_FILES)}"
            out.append((FileNotFoundError, (2, "No such file or directory", path)))
        elif pick == 3:
            out.append((KeyError, (f"user_{rnd.randint(1, 10**6)}",)))
        elif pick == 4:
            out.append((ValueError, ((f"invalid literal for int() with base 10: "
                                     f"'{rnd.getrandbits(24):x}' at row {rnd.randint(1, 9999)}"),)))
        elif pick == 5:
            out.append((PermissionError, (13, "Permission denied",
                                          f"/srv/app-{rnd.randint(1, 999)}/{rnd.choice(_FILES)}")))
        elif pick == 6:
            out.append((ModuleNotFoundError, (f"No module named '{rnd.choice(_MODULES)}'",)))
        else:
            out.append((RuntimeError, ((f"worker {rnd.randint(1, 64)} exited with status "
                                       f"{rnd.randint(1, 255)} at {time.time() + i:.3f}"),)))
    return out


def _deep(depth: int, cls: type[BaseException], args: tuple[Any, ...]) -> None:
    if depth:
        _deep(depth - 1, cls, args)
        return
    raise cls(*args)


# -- candidates ----------------------------------------------------------------------------


def run_failcode(items: list[tuple[type[BaseException], tuple[Any, ...]]]) -> None:
    """catch -> classify (rule, location, signature, record) per exception."""
    deep = _deep
    for cls, args in items:
        try:
            deep(DEPTH, cls, args)
        except Exception as exc:
            classify(exc)


_NAIVE_RULES = [
    (re.compile(r"timed? ?out", re.IGNORECASE), "timeout"),
    (re.compile(r"connection (?:reset|refused)", re.IGNORECASE), "connection"),
    (re.compile(r"no such file", re.IGNORECASE), "file_not_found"),
    (re.compile(r"permission denied", re.IGNORECASE), "permission_denied"),
    (re.compile(r"no module named", re.IGNORECASE), "missing_module"),
    (re.compile(r"\b429\b|rate limit", re.IGNORECASE), "rate_limit"),
]


def run_raise(items: list[tuple[type[BaseException], tuple[Any, ...]]]) -> None:
    """Step 0: raise 5 frames deep and catch (the floor every candidate pays)."""
    deep = _deep
    for cls, args in items:
        with contextlib.suppress(Exception):
            deep(DEPTH, cls, args)


def run_locate(items: list[tuple[type[BaseException], tuple[Any, ...]]], *,
               plan: bool = False, causes: bool = False) -> None:
    """Steps 1-3: + rule lookup, location and text; + the plan; + the cause chain."""
    deep = _deep
    c = _classify
    for cls, args in items:
        try:
            deep(DEPTH, cls, args)
        except Exception as exc:
            rule, family = c._rule_for_type(type(exc))
            _location, last = c._tb_location(exc.__traceback__, c._cwd())
            text = c._safe_str(exc)
            if plan:
                c._plan(rule, family, exc, c._type_name(type(exc)), text, None, last)
            if causes:
                _build.cause_chain(exc)


def run_uncached(items: list[tuple[type[BaseException], tuple[Any, ...]]]) -> None:
    """The whole classify with every record built in full (no record template reused)."""
    deep = _deep
    templates = getattr(_build, "_templates", {})
    for cls, args in items:
        try:
            deep(DEPTH, cls, args)
        except Exception as exc:
            templates.clear()
            classify(exc)


def run_naive(items: list[tuple[type[BaseException], tuple[Any, ...]]]) -> None:
    """A naive classifier: str(exc), first matching regex, dict record, hash of the raw text."""
    deep = _deep
    for cls, args in items:
        try:
            deep(DEPTH, cls, args)
        except Exception as exc:
            text = str(exc)
            error_class = "unknown"
            for pattern, name in _NAIVE_RULES:
                if pattern.search(text):
                    error_class = name
                    break
            key = f"{type(exc).__name__}:{error_class}:{text}"
            _ = {"class": error_class, "message": text, "type": type(exc).__name__,
                 "signature": hashlib.blake2b(key.encode(), digest_size=4).hexdigest()}


class _Flaky:
    __slots__ = ("args", "calls", "cls")

    def __init__(self, cls: type[BaseException], args: tuple[Any, ...]) -> None:
        self.calls = 0
        self.cls = cls
        self.args = args

    def __call__(self) -> int:
        self.calls += 1
        if self.calls == 1:
            _deep(DEPTH, self.cls, self.args)
        return 42


def make_tenacity() -> tenacity.Retrying:
    """tenacity's reused Retrying with exponential jitter, retrying any exception."""
    return tenacity.Retrying(stop=tenacity.stop_after_attempt(10),
                             wait=tenacity.wait_exponential_jitter(initial=0.1, max=5),
                             retry=tenacity.retry_if_exception_type(Exception), reraise=True)


def run_tenacity(retrying: tenacity.Retrying,
                 items: list[tuple[type[BaseException], tuple[Any, ...]]]) -> None:
    """One failed attempt then a success per item (2 attempts per call)."""
    for cls, args in items:
        retrying(_Flaky(cls, args))


def print_steps(per_attempt: dict[str, list[float]]) -> None:
    """The per-step breakdown: differences of medians between cumulative candidates."""
    med = {name: statistics.median(values) for name, values in per_attempt.items()}
    tenacity_us = med["tenacity"]
    rows = (
        ("raise 5 frames deep + catch (paid by every candidate)", None, "0 raise"),
        ("rule lookup + location (tb_next walk, cwd) + str(exc)", "0 raise", "1 locate"),
        ("rule -> code, params, metadata (plan)", "1 locate", "2 plan"),
        ("cause chain (type name, redact the exception text)", "2 plan", "3 causes"),
        ("record: template hit, or full build on a miss", "3 causes", "failcode"),
        ("record built in full every time (no template)", "3 causes", "5 uncached"),
    )
    print("\nper-step breakdown (us per exception, difference of medians; noise ~0.5 us):")
    for label, before, after in rows:
        cost = med[after] - (med[before] if before else 0.0)
        print(f"  {label:56s} {cost:6.2f} us  ({cost / tenacity_us:.2f}x tenacity)")
    print(f"  {'whole classify, every record built in full':56s} {med['5 uncached']:6.2f} us  "
          f"({med['5 uncached'] / tenacity_us:.2f}x tenacity)")


def main() -> None:
    """Run the interleaved benchmark and print per-exception times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--steps", action="store_true", help="add the per-step breakdown")
    parser.add_argument("--repeat", type=int, default=5,
                        help="attempts per failure in the retry-loop candidate (default 5)")
    args = parser.parse_args()
    time.sleep = lambda _s: None  # tenacity's nap looks time.sleep up at call time

    retrying = make_tenacity()
    names = ["failcode", "failcode retry", "naive", "tenacity"]
    if args.steps:
        names += ["0 raise", "1 locate", "2 plan", "3 causes", "5 uncached"]
    # each candidate gets its own fresh batch of distinct messages every round: a batch one
    # candidate classified would find failcode's caches warm for the next one
    batches = {name: [corpus(args.n, seed=1000 * k + r,
                             repeat=args.repeat if name == "failcode retry" else 1)
                      for r in range(args.rounds + 1)]
               for k, name in enumerate(names)}
    state: dict[str, int] = {}

    def batch(name: str) -> list[tuple[type[BaseException], tuple[Any, ...]]]:
        index = state.get(name, 0)
        state[name] = index + 1
        return batches[name][index % (args.rounds + 1)]

    candidates = {
        "failcode": lambda: run_failcode(batch("failcode")),
        "failcode retry": lambda: run_failcode(batch("failcode retry")),
        "naive": lambda: run_naive(batch("naive")),
        "tenacity": lambda: run_tenacity(retrying, batch("tenacity")),
    }
    if args.steps:
        candidates |= {
            "0 raise": lambda: run_raise(batch("0 raise")),
            "1 locate": lambda: run_locate(batch("1 locate")),
            "2 plan": lambda: run_locate(batch("2 plan"), plan=True),
            "3 causes": lambda: run_locate(batch("3 causes"), plan=True, causes=True),
            "5 uncached": lambda: run_uncached(batch("5 uncached")),
        }
    times = interleaved(candidates, args.rounds)
    per_attempt = {name: [t / args.n * 1e6 for t in values] for name, values in times.items()}
    # tenacity: two attempts per call (one failed, one succeeded)
    per_attempt["tenacity"] = [t / 2 for t in per_attempt["tenacity"]]
    times_attempt = {name: [t / 1e6 for t in values] for name, values in per_attempt.items()}

    print(f"failcode classify benchmark: {args.rounds} interleaved rounds x {args.n} "
          f"distinct exceptions raised {DEPTH} frames deep\n")
    for name, label in (("failcode", "failcode, every failure a new one"),
                        ("failcode retry", f"failcode, each failure {args.repeat} times (retry)"),
                        ("naive", "naive regex classifier + dict record (reference)"),
                        ("tenacity", "tenacity one failed attempt (peer)")):
        values = per_attempt[name]
        print(f"{label:52s} {statistics.median(values):6.2f} us "
              f"[{min(values):.2f}..{max(values):.2f}]")
    naive = median_ratio(times_attempt, "naive", "tenacity")
    print()
    for name, what in (("failcode", "every failure new"),
                       ("failcode retry", f"{args.repeat} attempts per failure")):
        ratio = median_ratio(times_attempt, name, "tenacity")
        verdict = "OK" if ratio <= TARGET else "MISSED"
        print(f"failcode / tenacity per attempt, {what}: {ratio:.2f}x "
              f"(target <= {TARGET}x): {verdict}")
    print(f"naive regex / tenacity per attempt: {naive:.2f}x")
    if args.steps:
        print_steps(per_attempt)

    if args.profile:
        profiler = cProfile.Profile()
        items = corpus(args.n, seed=999)
        profiler.enable()
        run_failcode(items)
        profiler.disable()
        stats = pstats.Stats(profiler)
        cumulative = {f"{Path(file).name}:{name}": entry[3]
                      for (file, _line, name), entry in stats.stats.items()}  # type: ignore[attr-defined]
        total = cumulative.get("_classify.py:classify", 0.0) or 1.0
        print("\nwhere failcode's time goes (cumulative share of classify, under cProfile):")
        for key, label in (
            ("_build.py:build_failure", "record factory (FC.X.failure), all of it"),
            ("_redact.py:redact", "  redact (params + cause message)"),
            ("_build.py:cause_chain", "  cause chain (str + redact per link)"),
            ("_signature.py:sign_failure_fields", "  signature (normalize + blake2b)"),
            ("_normalize.py:normalize_message", "    normalize_message"),
            ("_failure.py:__post_init__", "  Failure validation"),
            ("_classify.py:_tb_location", "location by walking tb_next"),
            ("_classify.py:_plan", "rule -> code, params, metadata"),
        ):
            print(f"  {label:44s} {cumulative.get(key, 0.0) / total:6.1%}")


if __name__ == "__main__":
    main()
