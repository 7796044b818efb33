"""``python -m tests.learned generate|count|train|evaluate``.

``generate [--out DIR] [--only ECOSYSTEM] [--jobs N] [--force]``:

Writes ``examples-<hash of the cases>.jsonl`` into ``--out`` (else the cache folder,
:func:`tests.learned.generate.cache_dir`) and prints a summary; a file already there for the
same case files is reused (``--force`` runs them again). ``count`` prints what the case files
would yield, without running anything. Exits 1 when an example was left out (its command did
not exit as stated), naming each.

``train [--examples FILE] [--out FILE]``: trains the learned model on the examples (the cache's
for the case files as they are now) and writes the file the package ships
(:mod:`tests.learned.train`). ``evaluate [--examples FILE]``: measures it on programs held out
of training (:mod:`tests.learned.evaluate`). Both need scikit-learn (the ``learn`` extra).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path

from tests.learned.catalogue import CaseError
from tests.learned.generate import (
    cache_dir,
    generate,
    load_cases,
    output_path,
    read_examples,
    summary,
)


def cmd_generate(out: Path | None, only: str | None, jobs: int, force: bool) -> int:
    cases = load_cases(only)
    path = output_path(out or cache_dir(), only)
    if path.exists() and not force:
        print(f"reusing {path}")
        print(summary(read_examples(path)))
        return 0
    started = time.monotonic()
    def progress(done: int, total: int) -> None:
        if done % 250 == 0 or done == total:
            print(f"  {done}/{total} examples run ({time.monotonic() - started:.0f} s)",
                  file=sys.stderr, flush=True)

    records, left_out = generate(cases, path, jobs=jobs, progress=progress)
    print(f"wrote {path} in {time.monotonic() - started:.0f} s")
    print(summary(records))
    for ran in left_out:
        print(f"left out {ran.example.id} ({ran.example.command!r}): {ran.problem}",
              file=sys.stderr)
    print(f"\n{len(left_out)} examples left out", file=sys.stderr)
    return 1 if left_out else 0


def cmd_count(only: str | None) -> int:
    cases = load_cases(only)
    programs: Counter[str] = Counter()
    for case in cases:
        programs[case.program] += case.size
    print(f"{sum(programs.values())} examples from {len(programs)} programs, {len(cases)} cases")
    for name, count in sorted(programs.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:6d}  {name}")
    return 0


def cmd_train(examples: Path | None, out: Path) -> int:
    from tests.learned.train import digest, train

    path = examples or output_path(cache_dir(), None)
    if not path.exists():
        raise SystemExit(f"no examples at {path}: run `python -m tests.learned generate` first")
    started = time.monotonic()
    data = train(read_examples(path))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    thresholds = json.loads(gzip.decompress(data))["thresholds"]
    print(f"wrote {out} ({len(data)} bytes, learned model {digest(data)}) "
          f"in {time.monotonic() - started:.0f} s; thresholds: kind {thresholds['kind']} "
          f"(failcode.learned.THRESHOLD must say the same), class {thresholds['class']}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.learned", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="run every example, write the JSON lines")
    gen.add_argument("--out", type=Path, help="the folder (default: the cache folder)")
    gen.add_argument("--only", metavar="ECOSYSTEM", help="one case file (its name)")
    gen.add_argument("--jobs", type=int, default=2, help="examples run at once (2)")
    gen.add_argument("--force", action="store_true", help="run again even when cached")
    count = sub.add_parser("count", help="what the case files yield, without running them")
    count.add_argument("--only", metavar="ECOSYSTEM")
    learn = sub.add_parser("train", help="train the model, write the file the package ships")
    learn.add_argument("--examples", type=Path, help="an examples file (default: the cache's)")
    learn.add_argument("--out", type=Path, help="the model file (default: the package's)")
    evaluate = sub.add_parser("evaluate", help="measure the model on held-out programs")
    evaluate.add_argument("--examples", type=Path, help="an examples file (default: the cache's)")
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
            sys.exit(cmd_generate(args.out, args.only, args.jobs, args.force))
        if args.command == "train":
            from tests.learned.train import PACKAGE_MODEL
            sys.exit(cmd_train(args.examples, args.out or PACKAGE_MODEL))
        if args.command == "evaluate":
            from tests.learned.evaluate import main as evaluate_main
            sys.exit(evaluate_main(args.examples))
        sys.exit(cmd_count(args.only))
    except CaseError as exc:
        raise SystemExit(f"bad case file: {exc}") from exc
