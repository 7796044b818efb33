"""Train the learned classifier and export it as the file the package ships (issue 39).

``python -m tests.learned train [--examples FILE] [--out FILE]`` reads the generator's examples
(the cache file for the case files as they are now, unless ``--examples``), keeps the failing
ones (kind not ``none``), and fits:

- features: :func:`failcode.learned._features.features`, given to scikit-learn's
  ``TfidfVectorizer`` as its analyzer (sublinear tf, ``min_df`` :data:`MIN_DF`, l2 norm), the
  same function the run time calls;
- model: a multinomial ``LogisticRegression`` (lbfgs, ``C`` :data:`C`) over joint labels
  ``kind/class``. The kind's probability is the sum of its classes'; the class is reported
  when its own probability clears the class threshold, else ``unknown``;
- thresholds: chosen by grouped cross-validation (:data:`FOLDS` folds, grouped by program, so
  every prediction is for a program the fold's model never saw; :func:`choose_thresholds`).

The export (:func:`export`) is gzipped JSON (sorted keys, floats to :data:`DIGITS` significant
digits, gzip mtime 0, so training twice on the same examples gives the same bytes): the terms and
their idf; per term the labels' weights (``columns``: label indices and weights) whose magnitude
is at least :data:`PRUNE` (the rest are dropped: a logit moves by at most ``PRUNE`` times the l1
norm of the l2-normed vector, at most ``PRUNE * sqrt(terms present)``); intercepts, labels,
thresholds, and :data:`PROTOTYPES` examples per case for the nearest examples (one normalized
line, program, kind, class, their vector's :data:`PROTOTYPE_TERMS` largest entries).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode.learned._features import excerpt, features

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

FORMAT: Final = 1
"""The export's format (the ``learned-1`` of a model's version)."""
MIN_DF: Final = 2
"""A feature must occur in at least this many training examples."""
C: Final = 10.0
"""Inverse regularization strength of the logistic regression."""
SEED: Final = 0
FOLDS: Final = 5
PRUNE: Final = 1e-4
"""Weights of smaller magnitude are dropped from the export."""
DIGITS: Final = 7
"""Significant digits of the exported floats."""
PROTOTYPES: Final = 2
"""Examples per case kept for the nearest examples."""
PROTOTYPE_TERMS: Final = 40
"""Of a prototype's vector, the largest this many entries are kept."""
KIND_TARGET: Final = 0.9
"""The kind threshold is the lowest at which cross-validated suggestions for rule-unknown
failures are right this often..."""
ALL_TARGET: Final = 0.85
"""... and suggestions for all failing examples this often (a suggestion may be asked for
output unlike the rule-unknown examples: a record's message, another tool's failure)."""
CLASS_TARGET: Final = 0.9
"""The class threshold is the lowest at which cross-validated classes are right this often."""
GRID: Final = tuple(round(0.30 + 0.025 * i, 3) for i in range(27))
"""Thresholds tried: 0.30 to 0.95."""

PACKAGE_MODEL: Final = (Path(__file__).resolve().parents[2] / "src" / "failcode" / "learned"
                        / "data" / "model.json.gz")


def failing(examples: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The examples that are failures (kind not ``none``), sorted by id."""
    return sorted((e for e in examples if e["kind"] != "none"), key=lambda e: str(e["id"]))


def label_of(example: dict[str, Any]) -> str:
    """The joint label ``kind/class``."""
    return f"{example['kind']}/{example['class']}"


def features_of(example: dict[str, Any]) -> list[str]:
    """The features of an example, as the run time computes them."""
    return features(example["argv"], example["exit"], example["stdout"], example["stderr"])


def _identity(document: list[str]) -> list[str]:
    return document


@dataclass(frozen=True, slots=True)
class Fitted:
    """A fitted vectorizer and model."""

    vectorizer: TfidfVectorizer
    model: LogisticRegression


def fit(examples: Sequence[dict[str, Any]], *, c: float = C) -> Fitted:
    """Fit the vectorizer and the model on ``examples`` (failing ones)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(analyzer=_identity, sublinear_tf=True, min_df=MIN_DF,
                                 norm="l2", lowercase=False)
    matrix = vectorizer.fit_transform([features_of(e) for e in examples])
    model = LogisticRegression(C=c, max_iter=3000, random_state=SEED, solver="lbfgs")
    model.fit(matrix, [label_of(e) for e in examples])
    return Fitted(vectorizer, model)


def kind_class_probabilities(fitted: Fitted, documents: Sequence[list[str]],
                             ) -> list[tuple[dict[str, float], dict[str, float]]]:
    """Per document, P(kind) (summed over its classes) and P(kind/class)."""
    probabilities = fitted.model.predict_proba(fitted.vectorizer.transform(documents))
    labels = [str(label) for label in fitted.model.classes_]
    out = []
    for row in probabilities:
        kinds: dict[str, float] = defaultdict(float)
        joint = {}
        for label, p in zip(labels, row, strict=True):
            kinds[label.split("/", 1)[0]] += float(p)
            joint[label] = float(p)
        out.append((dict(kinds), joint))
    return out


def decide(kinds: dict[str, float], joint: dict[str, float], kind_threshold: float,
           class_threshold: float) -> tuple[str, str, float] | None:
    """(kind, class, P(kind)) as the run time decides it, or None below the kind threshold."""
    kind = max(sorted(kinds), key=lambda k: kinds[k])
    confidence = kinds[kind]
    if confidence < kind_threshold:
        return None
    label = max(sorted(lbl for lbl in joint if lbl.split("/", 1)[0] == kind),
                key=lambda lbl: joint[lbl])
    klass = label.split("/", 1)[1] if joint[label] >= class_threshold else "unknown"
    return kind, klass, confidence


def rules_unknown(example: dict[str, Any]) -> bool:
    """True when failcode's rules leave the example unknown (what a suggestion is for)."""
    import failcode
    from failcode.learned import wants_suggestion

    failure = failcode.from_command(example["argv"], example["exit"], example["stdout"],
                                    example["stderr"])
    return wants_suggestion(failure)


def out_of_fold(examples: Sequence[dict[str, Any]], *, c: float = C,
                ) -> list[tuple[dict[str, float], dict[str, float]]]:
    """Probabilities for every example from a model that never saw its program
    (GroupKFold by program, :data:`FOLDS` folds)."""
    from sklearn.model_selection import GroupKFold

    groups = [e["program"] for e in examples]
    folds = min(FOLDS, len(set(groups)))
    result: list[tuple[dict[str, float], dict[str, float]] | None] = [None] * len(examples)
    for train_index, test_index in GroupKFold(n_splits=folds).split(examples, groups=groups):
        fitted = fit([examples[i] for i in train_index], c=c)
        predicted = kind_class_probabilities(fitted, [features_of(examples[i])
                                                      for i in test_index])
        for i, probabilities in zip(test_index, predicted, strict=True):
            result[i] = probabilities
    return [r for r in result if r is not None]


def choose_thresholds(examples: Sequence[dict[str, Any]],
                      predictions: Sequence[tuple[dict[str, float], dict[str, float]]],
                      unknown: Sequence[bool]) -> tuple[float, float]:
    """(kind threshold, class threshold) from out-of-fold predictions: the lowest of
    :data:`GRID` at which suggested kinds of rule-unknown examples are right
    :data:`KIND_TARGET` of the time and those of all failing examples :data:`ALL_TARGET` of
    the time, and the lowest at which reported classes (of all failing examples) are right
    :data:`CLASS_TARGET` of the time (the highest tried when none is)."""
    kind_threshold = GRID[-1]
    for threshold in GRID:
        right = total = right_unknown = total_unknown = 0
        for example, (kinds, joint), wanted in zip(examples, predictions, unknown, strict=True):
            decided = decide(kinds, joint, threshold, 1.0)
            if decided is not None:
                total += 1
                right += decided[0] == example["kind"]
                total_unknown += wanted
                right_unknown += wanted and decided[0] == example["kind"]
        if (total and right / total >= ALL_TARGET
                and (not total_unknown or right_unknown / total_unknown >= KIND_TARGET)):
            kind_threshold = threshold
            break
    class_threshold = GRID[-1]
    for threshold in GRID:
        right = total = 0
        for example, (kinds, joint) in zip(examples, predictions, strict=True):
            decided = decide(kinds, joint, 0.0, threshold)
            if decided is not None and decided[1] != "unknown":
                total += 1
                right += decided[:2] == (example["kind"], example["class"])
        if total and right / total >= CLASS_TARGET:
            class_threshold = threshold
            break
    return kind_threshold, class_threshold


def _number(value: float) -> float:
    rounded = float(f"{value:.{DIGITS}g}")
    return 0.0 if rounded == 0 else rounded


def _sparse(row: Any, keep: int | None = None) -> tuple[list[int], list[float]]:
    pairs = sorted(zip(row.indices.tolist(), row.data.tolist(), strict=True))
    if keep is not None and len(pairs) > keep:
        pairs = sorted(sorted(pairs, key=lambda p: (-p[1], p[0]))[:keep])
    return [i for i, _ in pairs], [_number(v) for _, v in pairs]


def export(fitted: Fitted, examples: Sequence[dict[str, Any]], thresholds: tuple[float, float],
           ) -> bytes:
    """The model file's bytes (gzipped JSON; see the module's docstring)."""
    vectorizer, model = fitted.vectorizer, fitted.model
    terms = [str(t) for t in vectorizer.get_feature_names_out()]
    labels = [str(label) for label in model.classes_]
    coef = model.coef_.tolist()
    columns = []
    for term_index in range(len(terms)):
        kept = [(label, coef[label][term_index]) for label in range(len(labels))
                if abs(coef[label][term_index]) >= PRUNE]
        columns.append([[label for label, _ in kept], [_number(w) for _, w in kept]])
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for example in examples:
        by_case[str(example["case"])].append(example)
    prototypes = []
    for case in sorted(by_case):
        chosen = by_case[case][:PROTOTYPES]
        matrix = vectorizer.transform([features_of(e) for e in chosen])
        for k, example in enumerate(chosen):
            index, value = _sparse(matrix.getrow(k), PROTOTYPE_TERMS)
            prototypes.append({"case": case, "program": example["program"],
                               "kind": example["kind"], "class": example["class"],
                               "excerpt": excerpt(example["stdout"], example["stderr"]),
                               "index": index, "value": value})
    payload = {
        "format": FORMAT,
        "terms": terms,
        "idf": [_number(float(v)) for v in vectorizer.idf_],
        "labels": labels,
        "intercepts": [_number(float(v)) for v in model.intercept_],
        "columns": columns,
        "thresholds": {"kind": thresholds[0], "class": thresholds[1]},
        "prune": PRUNE,
        "prototypes": prototypes,
        "trained_on": {"examples": len(examples),
                       "programs": len({e["program"] for e in examples})},
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("ascii"))
    return buffer.getvalue()


def train(examples: Iterable[dict[str, Any]], *, cross_validate: bool = True,
          thresholds: tuple[float, float] | None = None) -> bytes:
    """Train on every failing example and return the model file's bytes; thresholds chosen by
    grouped cross-validation over the same examples unless given."""
    chosen = failing(examples)
    if thresholds is None:
        if cross_validate and len({e["program"] for e in chosen}) >= 2:
            predictions = out_of_fold(chosen)
            unknown = [rules_unknown(e) for e in chosen]
            thresholds = choose_thresholds(chosen, predictions, unknown)
        else:
            thresholds = (0.5, 0.5)
    return export(fit(chosen), chosen, thresholds)


def digest(data: bytes) -> str:
    """The first 8 hex digits of the file's SHA-256 (the model version's second part)."""
    return hashlib.sha256(data).hexdigest()[:8]

