"""Measure the learned classifier on programs it never saw (issue 39 item 4).

``python -m tests.learned evaluate [--examples FILE]``:

1. The final test programs (:func:`test_programs`): in each ecosystem, its programs ordered by
   the SHA-256 of ``learned-holdout:<program>``, the first :data:`TEST_SHARE` of them (at least
   one). Their examples are never used for training or for choosing anything.
2. On the other programs, the thresholds are chosen by grouped cross-validation (folds by
   program: :func:`tests.learned.train.choose_thresholds`), and a model is trained on all of
   them and exported exactly as the shipped one is.
3. On the final test programs' failing examples, through the run time that ships
   (:func:`failcode.learned._model.parse` of the exported bytes): coverage (the share given a
   suggestion) and kind accuracy of the suggestions, over all failing examples and over those
   the rules leave unknown (:func:`failcode.learned.wants_suggestion` of
   :func:`failcode.from_command`); class accuracy; a reliability table (confidence bins:
   count, mean confidence, kind accuracy); time per suggestion; model size.

The issue's bar: suggested kinds right at least 85% of the time at a coverage of at least 60%
of the rule-unknown failures of programs never seen in training.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, Final

from tests.learned.generate import cache_dir, output_path, read_examples
from tests.learned.train import (
    choose_thresholds,
    decide,
    export,
    failing,
    fit,
    out_of_fold,
    rules_unknown,
)

if TYPE_CHECKING:
    from pathlib import Path

TEST_SHARE: Final = 0.22
"""Of each ecosystem's programs, this share (rounded, at least one) is the final test set."""
BINS: Final = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001)


def _rank(program: str) -> str:
    return hashlib.sha256(f"learned-holdout:{program}".encode()).hexdigest()


def test_programs(examples: list[dict[str, Any]]) -> set[str]:
    """The final test programs (see the module's docstring): a program belongs to the
    ecosystem where it has most examples."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for example in examples:
        counts[example["program"]][example["ecosystem"]] += 1
    by_ecosystem: dict[str, list[str]] = defaultdict(list)
    for program, ecosystems in counts.items():
        home = min(ecosystems.items(), key=lambda item: (-item[1], item[0]))[0]
        by_ecosystem[home].append(program)
    chosen: set[str] = set()
    for programs in by_ecosystem.values():
        ordered = sorted(programs, key=_rank)
        chosen.update(ordered[:max(1, round(TEST_SHARE * len(ordered)))])
    return chosen


def _share(right: int, total: int) -> str:
    return f"{right}/{total} = {right / total:.1%}" if total else "0/0"


def report(examples: list[dict[str, Any]]) -> str:
    """Train on all but the test programs, measure on them; the report's text."""
    from failcode.learned._model import parse, predict_with

    failing_all = failing(examples)
    held_out = test_programs(examples)
    train_set = [e for e in failing_all if e["program"] not in held_out]
    test_set = [e for e in failing_all if e["program"] in held_out]
    lines = [f"final test programs ({len(held_out)}): {', '.join(sorted(held_out))}",
             (f"training: {len(train_set)} failing examples of "
             f"{len({e['program'] for e in train_set})} programs; test: {len(test_set)} of "
             f"{len({e['program'] for e in test_set})}")]
    started = time.monotonic()
    predictions = out_of_fold(train_set)
    train_unknown = [rules_unknown(e) for e in train_set]
    thresholds = choose_thresholds(train_set, predictions, train_unknown)
    lines.append(f"thresholds by grouped cross-validation: kind {thresholds[0]}, "
                 f"class {thresholds[1]} ({time.monotonic() - started:.0f} s)")
    lines += _cross_validated(train_set, predictions)
    for title, keep in (("all", [True] * len(train_set)), ("rule-unknown", train_unknown)):
        decided = [decide(kinds, joint, thresholds[0], thresholds[1])
                   for (kinds, joint), wanted in zip(predictions, keep, strict=True) if wanted]
        truth = [e for e, wanted in zip(train_set, keep, strict=True) if wanted]
        made = [(d, e) for d, e in zip(decided, truth, strict=True) if d is not None]
        right = sum(d[0] == e["kind"] for d, e in made)
        lines.append(f"cross-validated, {title}: coverage {_share(len(made), len(truth))}, "
                     f"kind accuracy {_share(right, len(made))}")
    data = export(fit(train_set), train_set, thresholds)
    model = parse(data)
    lines.append(f"model: {model.version}, {len(data)} bytes")

    unknown = [rules_unknown(e) for e in test_set]
    rows = []
    spent = 0.0
    for example in test_set:
        began = time.perf_counter()
        suggestion = predict_with(model, example["argv"], example["exit"], example["stdout"],
                                  example["stderr"], threshold=0.0)
        spent += time.perf_counter() - began
        rows.append(suggestion)
    lines.append(f"time per suggestion: {spent / max(1, len(test_set)) * 1000:.2f} ms")

    for title, keep in (("all failing examples", [True] * len(test_set)),
                        ("failures the rules leave unknown", unknown)):
        total = covered = right = class_total = class_right = 0
        for example, suggestion, wanted in zip(test_set, rows, keep, strict=True):
            if not wanted:
                continue
            total += 1
            if suggestion is None or suggestion.confidence < model.kind_threshold:
                continue
            covered += 1
            right += suggestion.kind == example["kind"]
            if suggestion.klass != "unknown":
                class_total += 1
                class_right += (suggestion.kind, suggestion.klass) == (example["kind"],
                                                                       example["class"])
        lines.append(f"{title}: coverage {_share(covered, total)}, kind accuracy "
                     f"{_share(right, covered)}, class accuracy (when a class is given) "
                     f"{_share(class_right, class_total)}")
    lines.append(_informative(test_set, rows, unknown, model.kind_threshold))

    lines += _reliability(rows, test_set)
    lines += _per_program(rows, test_set, unknown, model.kind_threshold)
    return "\n".join(lines)


def _informative(test_set: list[dict[str, Any]], rows: list[Any], unknown: list[bool],
                 threshold: float) -> str:
    """The suggestions shown for rule-unknown failures: those that add to the record (a class,
    or another kind; :func:`failcode.learned.adds_to`). Most rule-unknown failures are truly
    ``command_error``s, so a suggested kind alone is mostly the rules' own: this is the line
    that says how often the model tells more."""
    from failcode import Failure, from_command
    from failcode.learned import adds_to

    total = shown = right = class_right = 0
    for example, suggestion, wanted in zip(test_set, rows, unknown, strict=True):
        if not wanted:
            continue
        total += 1
        if suggestion is None or suggestion.confidence < threshold:
            continue
        record = from_command(example["argv"], example["exit"], example["stdout"],
                              example["stderr"])
        if not isinstance(record, Failure) or not adds_to(suggestion, record):
            continue
        shown += 1
        right += suggestion.kind == example["kind"]
        class_right += (suggestion.kind, suggestion.klass) == (example["kind"], example["class"])
    return (f"shown for rule-unknown failures (adding a class or another kind): "
            f"{_share(shown, total)}, kind right {_share(right, shown)}, kind and class right "
            f"{_share(class_right, shown)}")


def _cross_validated(train_set: list[dict[str, Any]],
                     predictions: list[tuple[dict[str, float], dict[str, float]]]) -> list[str]:
    """The grouped cross-validation's reliability table (the training programs only)."""
    lines = ["cross-validated reliability (training programs, out of fold):",
             "  confidence   count  mean conf.  kind accuracy"]
    scored = []
    for example, (kinds, _) in zip(train_set, predictions, strict=True):
        kind = max(sorted(kinds), key=lambda k: kinds[k])
        scored.append((kinds[kind], kind == example["kind"]))
    for low, high in itertools.pairwise(BINS):
        inside = [(p, ok) for p, ok in scored if low <= p < high]
        if inside:
            lines.append(f"  {low:.2f}-{min(high, 1.0):.2f}  {len(inside):6d}  "
                         f"{sum(p for p, _ in inside) / len(inside):10.3f}  "
                         f"{sum(ok for _, ok in inside) / len(inside):13.3f}")
    return lines


def _reliability(rows: list[Any], test_set: list[dict[str, Any]]) -> list[str]:
    """Confidence bins over every prediction: count, mean confidence, kind accuracy."""
    lines = ["reliability (all failing test examples, every prediction):",
             "  confidence   count  mean conf.  kind accuracy"]
    for low, high in itertools.pairwise(BINS):
        inside = [(s, e) for s, e in zip(rows, test_set, strict=True)
                  if s is not None and low <= s.confidence < high]
        if not inside:
            continue
        mean = sum(s.confidence for s, _ in inside) / len(inside)
        accuracy = sum(s.kind == e["kind"] for s, e in inside) / len(inside)
        lines.append(f"  {low:.2f}-{min(high, 1.0):.2f}  {len(inside):6d}  {mean:10.3f}"
                     f"  {accuracy:13.3f}")
    return lines


def _per_program(rows: list[Any], test_set: list[dict[str, Any]], unknown: list[bool],
                 threshold: float) -> list[str]:
    """Per test program, its rule-unknown examples, how many got a suggestion, how many right."""
    per_program: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for example, suggestion, wanted in zip(test_set, rows, unknown, strict=True):
        if not wanted:
            continue
        tally = per_program[example["program"]]
        tally[0] += 1
        if suggestion is not None and suggestion.confidence >= threshold:
            tally[1] += 1
            tally[2] += suggestion.kind == example["kind"]
    lines = ["rule-unknown per test program (examples, suggested, right):"]
    lines += [f"  {program:12s} {t[0]:5d} {t[1]:5d} {t[2]:5d}"
              for program, t in sorted(per_program.items())]
    return lines


def main(examples: Path | None) -> int:
    """``python -m tests.learned evaluate``: print the report."""
    path = examples or output_path(cache_dir(), None)
    if not path.exists():
        raise SystemExit(f"no examples at {path}: run `python -m tests.learned generate` first")
    print(report(read_examples(path)))
    return 0
