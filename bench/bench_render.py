"""Benchmark: user text of a Failure against ``traceback.format_exception`` of the same exception.

One command: ``python bench/bench_render.py`` (options: ``--rounds N --n N``).

Target (issue 7): rendering the user text of a Failure <= 0.2x formatting the traceback of the
FailureError that carries it (raised through a few frames, with a cause), same run, interleaved.
Also prints German user text and developer detail, for scale. Each ratio is the median of
per-round ratios.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import interleaved, median_ratio
from failcode import FC, FailureError
from failcode.render._render import render_developer, render_user

TARGET = 0.2


def _raise(depth: int, failure: object) -> None:
    if depth == 0:
        try:
            raise ConnectionError("connection reset by peer")
        except ConnectionError as exc:
            raise FailureError(failure) from exc  # type: ignore[arg-type]
    _raise(depth - 1, failure)


def main() -> None:
    """Run the benchmark and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--n", type=int, default=200, help="renders per timed round")
    args = parser.parse_args()

    failure = FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"},
                                         metadata={"http_status": 429})
    try:
        _raise(5, failure)
    except FailureError as error:
        exc = error
    n = args.n

    def user() -> None:
        for _ in range(n):
            render_user(failure)

    def user_de() -> None:
        for _ in range(n):
            render_user(failure, locale="de")

    def developer() -> None:
        for _ in range(n):
            render_developer(failure)

    def format_exception() -> None:
        for _ in range(n):
            traceback.format_exception(exc)

    times = interleaved({"render_user": user, "render_user_de": user_de,
                         "render_developer": developer, "format_exception": format_exception},
                        args.rounds)
    for name in ("render_user", "render_user_de", "render_developer"):
        ratio = median_ratio(times, name, "format_exception")
        per = sorted(times[name])[len(times[name]) // 2] / n * 1e6
        print(f"{name:18s} {per:8.1f} us/render  ratio vs format_exception: {ratio:.3f}")
    ref = sorted(times["format_exception"])[len(times["format_exception"]) // 2] / n * 1e6
    print(f"{'format_exception':18s} {ref:8.1f} us/call")
    ratio = median_ratio(times, "render_user", "format_exception")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"target render_user <= {TARGET}x format_exception: {ratio:.3f} {verdict}")


if __name__ == "__main__":
    main()
