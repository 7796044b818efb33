"""The shipped model, read with the standard library on first use.

The file ``data/model.json.gz`` (written by ``python -m tests.learned train``) holds the terms
and their idf, per term the weights of a logistic regression for the ``kind/class`` labels
(column by column, so loading builds nothing per weight), the intercepts,
the thresholds, and prototypes (a few training examples per case) for the nearest examples. A
suggestion is, with the features of :func:`failcode.learned._features.features`:

- tf-idf: per term ``(1 + ln count) * idf``, the vector scaled to unit length (l2);
- per label, ``logit = intercept + sum(weight * value)``; probabilities by softmax;
- P(kind) is the sum over the kind's labels; below the kind threshold, nothing is suggested;
  the class is the kind's most probable label when that clears the class threshold, else
  ``unknown``;
- the nearest examples: the three prototypes of highest cosine similarity.

Nothing here is loaded by ``import failcode`` or ``import failcode.learned``: :func:`load` runs
on the first suggestion (a few hundred milliseconds) and is cached.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from failcode.learned._features import features

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.learned import Suggestion

__all__ = [
    "Model", "load", "model_bytes", "parse", "predict", "predict_with", "probabilities", "vector",
]

FILE: Final = "model.json.gz"
NEAREST: Final = 3
"""Prototypes returned with a suggestion."""


@dataclass(frozen=True, slots=True)
class Prototype:
    """A training example kept for the nearest examples."""

    program: str
    kind: str
    klass: str
    excerpt: str
    vector: dict[int, float]
    """Term index -> value, scaled to unit length."""


@dataclass(frozen=True, slots=True)
class Model:
    """The shipped model as read from its file."""

    version: str
    """``learned-<format> <first 8 hex digits of the file's SHA-256>``."""
    terms: dict[str, int]
    idf: tuple[float, ...]
    labels: tuple[str, ...]
    kinds: tuple[str, ...]
    """Each label's kind."""
    intercepts: tuple[float, ...]
    columns: list[list[list[Any]]]
    """Per term index, ``[label indices, weights]``: the weights of the labels it moves (as
    read: nothing is built per weight at load time)."""
    kind_threshold: float
    class_threshold: float
    prototypes: tuple[Prototype, ...]


def model_bytes() -> bytes:
    """The shipped model file's bytes."""
    return resources.files("failcode.learned").joinpath("data", FILE).read_bytes()


def parse(data: bytes) -> Model:
    """A :class:`Model` from a model file's bytes.

    Raises:
        ValueError: the file's tables disagree in length (or it is no gzipped JSON).
    """
    payload: dict[str, Any] = json.loads(gzip.decompress(data))
    labels = tuple(str(label) for label in payload["labels"])
    sizes = {"terms": len(payload["terms"]), "idf": len(payload["idf"]),
             "columns": len(payload["columns"])}
    if len(set(sizes.values())) != 1 or len(payload["intercepts"]) != len(labels):
        msg = (f"{FILE}: terms, idf and columns differ in length ({sizes}), or intercepts "
               f"({len(payload['intercepts'])}) and labels ({len(labels)})")
        raise ValueError(msg)
    prototypes = []
    for item in payload["prototypes"]:
        vector = {int(i): float(v) for i, v in zip(item["index"], item["value"], strict=True)}
        norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
        prototypes.append(Prototype(str(item["program"]), str(item["kind"]),
                                    str(item["class"]), str(item["excerpt"]),
                                    {i: v / norm for i, v in vector.items()}))
    return Model(
        version=f"learned-{payload['format']} {hashlib.sha256(data).hexdigest()[:8]}",
        terms={str(term): i for i, term in enumerate(payload["terms"])},
        idf=tuple(float(v) for v in payload["idf"]),
        labels=labels,
        kinds=tuple(label.split("/", 1)[0] for label in labels),
        intercepts=tuple(float(v) for v in payload["intercepts"]),
        columns=payload["columns"],
        kind_threshold=float(payload["thresholds"]["kind"]),
        class_threshold=float(payload["thresholds"]["class"]),
        prototypes=tuple(prototypes),
    )


@functools.cache
def load() -> Model:
    """The shipped model, read once (on the first suggestion)."""
    return parse(model_bytes())


def vector(model: Model, feature_list: Sequence[str]) -> dict[int, float]:
    """The tf-idf vector of a feature list (sublinear tf, idf, l2 norm); unknown terms drop."""
    counts: dict[int, int] = {}
    for feature in feature_list:
        index = model.terms.get(feature)
        if index is not None:
            counts[index] = counts.get(index, 0) + 1
    values = {i: (1.0 + math.log(n)) * model.idf[i] for i, n in counts.items()}
    norm = math.sqrt(sum(v * v for v in values.values()))
    return {i: v / norm for i, v in values.items()} if norm else {}


def probabilities(model: Model, values: dict[int, float]) -> list[float]:
    """P(label) for a tf-idf vector: softmax of the labels' logits."""
    logits = list(model.intercepts)
    for index, value in values.items():
        labels, weights = model.columns[index]
        for label, weight in zip(labels, weights, strict=True):
            logits[label] += weight * value
    top = max(logits)
    exps = [math.exp(logit - top) for logit in logits]
    total = sum(exps)
    return [e / total for e in exps]


def _nearest(model: Model, values: dict[int, float]) -> list[tuple[float, Prototype]]:
    scored = []
    for prototype in model.prototypes:
        similarity = sum(v * prototype.vector.get(i, 0.0) for i, v in values.items())
        if similarity > 0:
            scored.append((min(1.0, similarity), prototype))
    scored.sort(key=lambda item: -item[0])
    return scored[:NEAREST]


def predict_with(model: Model, argv: str | Sequence[str] | None, exit_code: int | None,
                 stdout: object, stderr: object, *,
                 threshold: float | None = None) -> Suggestion | None:
    """:func:`predict` with a given model (and kind threshold: the model's unless given)."""
    from failcode.learned import Nearest, Suggestion  # noqa: PLC0415 - the package imports us

    values = vector(model, features(argv, exit_code, stdout, stderr))
    if not values:
        return None
    p = probabilities(model, values)
    by_kind: dict[str, float] = {}
    for kind, probability in zip(model.kinds, p, strict=True):
        by_kind[kind] = by_kind.get(kind, 0.0) + probability
    kind = max(sorted(by_kind), key=lambda k: by_kind[k])
    confidence = by_kind[kind]
    if confidence < (model.kind_threshold if threshold is None else threshold):
        return None
    best = max((i for i, k in enumerate(model.kinds) if k == kind), key=lambda i: (p[i], -i))
    klass = (model.labels[best].split("/", 1)[1] if p[best] >= model.class_threshold
             else "unknown")
    nearest = tuple(Nearest(program=proto.program, kind=proto.kind, klass=proto.klass,
                            excerpt=proto.excerpt, similarity=similarity)
                    for similarity, proto in _nearest(model, values))
    return Suggestion(kind=kind, klass=klass, confidence=min(1.0, confidence),
                      nearest=nearest, model=model.version)


def predict(argv: str | Sequence[str] | None, exit_code: int | None, stdout: str | bytes,
            stderr: str | bytes) -> Suggestion | None:
    """The suggestion for one failure, or None below the model's threshold (or when its
    file cannot be read). Never raises for any input."""
    try:
        return predict_with(load(), argv, exit_code, stdout, stderr)
    except Exception:  # noqa: BLE001 - a suggestion is advice: never an error of its own
        return None
