"""Benchmark: building a Failure and encoding it, against a frozen slots dataclass.

One command: ``python bench/bench_record.py`` (options: ``--rounds N --n N``).

Targets (issue 2): building a Failure with keyword arguments <= 0.3x a frozen slots dataclass
with the same fields built the same way; encoding it to JSON <= 0.05x ``dataclasses.asdict`` +
``json.dumps``. All candidates run interleaved in the same process; each ratio is the median of
per-round ratios. Also prints ``import failcode`` time from ``python -X importtime``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import interleaved, median_ratio
from failcode import (
    Category,
    Failure,
    FrozenDict,
    Kind,
    Retryability,
    Severity,
)


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenRecord:
    """The reference: the same 21 fields, frozen, slotted, no validation."""

    code: str
    kind: Kind
    category: Category
    severity: Severity
    retryability: Retryability
    error_class: str
    surface: str
    message: str
    signature: str
    signature_version: str
    location: str | None
    params: Any
    detail: str | None
    cause: tuple[Any, ...]
    remedy: str | None
    recoverable: bool
    context: Any
    cause_refs: tuple[Any, ...]
    evidence_refs: tuple[Any, ...]
    metadata: Any
    error_id: str


def keyword_arguments(mappings: str) -> dict[str, Any]:
    """The same keyword arguments for both candidates; mappings as FrozenDict or plain dict."""
    make = FrozenDict if mappings == "frozen" else dict
    return {
        "code": "FC-PROV-003", "kind": Kind.PROVIDER_ERROR, "category": Category.TRANSIENT,
        "severity": Severity.ERROR, "retryability": Retryability.RETRYABLE,
        "error_class": "rate_limit", "surface": "llm.complete",
        "message": "Anthropic rate-limited the request.",
        "signature": "provider_error:llm.complete:rate_limit:none:9817181a",
        "signature_version": "sig1.n1", "location": None,
        "params": make({"provider": "Anthropic"}), "detail": None, "cause": (), "remedy": None,
        "recoverable": True, "context": make({"session": "s-42", "step": 7}),
        "cause_refs": (), "evidence_refs": (),
        "metadata": make({"http_status": 429, "request_id": "req_011CSHj"}),
        "error_id": "fc-0123456789ab-1f",
    }


def loop(fn: Any, n: int) -> Any:
    def run() -> None:
        for _ in range(n):
            fn()
    return run


def import_time_ms() -> float:
    """Cumulative microseconds of `import failcode` from -X importtime, as milliseconds."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import failcode"],
                         capture_output=True, text=True, check=True).stderr
    pattern = re.compile(r"\|\s*(\d+) \| failcode$", re.MULTILINE)
    cumulative = [int(m.group(1)) for m in pattern.finditer(out)]
    return cumulative[-1] / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()

    print(f"failcode record benchmark: {args.rounds} interleaved rounds x {args.n} ops\n")
    for mappings in ("frozen", "dict"):
        kw = keyword_arguments(mappings)
        times = interleaved({
            "frozen dataclass [ref]": loop(lambda kw=kw: FrozenRecord(**kw), args.n),
            "Failure(**kw)": loop(lambda kw=kw: Failure(**kw), args.n),
        }, args.rounds)
        ratio = median_ratio(times, "Failure(**kw)", "frozen dataclass [ref]")
        reference_us = statistics.median(times["frozen dataclass [ref]"]) / args.n * 1e6
        failure_us = statistics.median(times["Failure(**kw)"]) / args.n * 1e6
        print(f"build, mappings given as {mappings:6}: dataclass {reference_us:.2f} us, "
              f"Failure {failure_us:.2f} us  ratio {ratio:.2f}x  (target <= 0.30x)")

    kw = keyword_arguments("frozen")
    record, reference = Failure(**kw), FrozenRecord(**kw)
    n = max(1, args.n // 10)
    times = interleaved({
        "asdict + json.dumps [ref]": loop(
            lambda: json.dumps(dataclasses.asdict(reference)), n),
        "Failure.to_json()": loop(record.to_json, n),
    }, args.rounds)
    ratio = median_ratio(times, "Failure.to_json()", "asdict + json.dumps [ref]")
    print(f"encode JSON: asdict+dumps "
          f"{statistics.median(times['asdict + json.dumps [ref]']) / n * 1e6:.2f} us, "
          f"to_json {statistics.median(times['Failure.to_json()']) / n * 1e6:.2f} us  "
          f"ratio {ratio:.3f}x  (target <= 0.05x)")
    print(f"import failcode: {min(import_time_ms() for _ in range(5)):.1f} ms "
          f"(best of 5, target < 150 ms)")


if __name__ == "__main__":
    main()
