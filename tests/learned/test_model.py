"""The learned model: the shipped file, the run time against scikit-learn, hostile input.

The examples a model is trained on here are made for real by the generator's own functions
(a few small cases run by bash, cat, ls, sh and python in a temporary folder), not read from
the generator's cache, which CI does not have.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcode.learned import THRESHOLD, Suggestion, suggest
from failcode.learned._features import MAX_LINES, TAIL_CHARS, features
from failcode.learned._model import FILE, load, model_bytes, parse, predict_with
from failcode.learned._model import probabilities as run_time_probabilities
from failcode.learned._model import vector as run_time_vector
from tests._growth_alarm import LIMIT, growth
from tests._needs import need_module, need_tool
from tests.learned.catalogue import load as load_cases
from tests.learned.generate import generate

MAX_BYTES = 5 * 1024 * 1024

CASES = textwrap.dedent('''
    [[case]]
    id = "cat-missing"
    program = "cat"
    command = "cat @file@"
    exit = 1
    kind = "command_error"
    class = "file_not_found"
    [case.params]
    file = ["a.txt", "notes.md", "data.csv", "build.log"]

    [[case]]
    id = "ls-missing"
    program = "ls"
    command = "ls @file@"
    exit = 2
    kind = "command_error"
    class = "file_not_found"
    [case.params]
    file = ["src", "dist", "out.bin", "docs"]

    [[case]]
    id = "bash-unbound"
    program = "bash"
    command = "bash -uc 'echo $@name@'"
    exit = 127
    kind = "command_error"
    class = "unbound_variable"
    [case.params]
    name = ["HOME_DIR", "TOKEN_PATH", "BUILD_ID", "TARGET"]

    [[case]]
    id = "sh-not-found"
    program = "sh"
    command = "sh -c '@tool@ --version'"
    exit = 127
    kind = "dependency_error"
    class = "command_not_found"
    [case.params]
    tool = ["frobnicate", "no-such-tool", "zzlint", "quuxc"]

    [[case]]
    id = "python-no-module"
    program = "python"
    command = "python -c 'import @module@'"
    exit = 1
    kind = "dependency_error"
    class = "missing_module"
    [case.params]
    module = ["leftpadz", "no_such_mod", "frobnicator", "quuxlib"]

    [[case]]
    id = "python-raises"
    program = "python"
    command = "python -c 'raise @error@(\\"bad input\\")'"
    exit = 1
    kind = "command_error"
    class = "uncaught_exception"
    [case.params]
    error = ["ValueError", "KeyError", "RuntimeError", "TypeError"]
''')


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A few dozen real examples, run by the generator's own functions."""
    for tool in ("bash", "cat", "ls", "sh", "python"):
        need_tool(tool)
    folder = tmp_path_factory.mktemp("learned")
    path = folder / "small.toml"
    path.write_text(CASES)
    records, left_out = generate(load_cases(path), folder / "examples.jsonl", jobs=2)
    assert not left_out, [ran.problem for ran in left_out]
    return records


@pytest.fixture(scope="module")
def train_module() -> Any:
    """tests.learned.train, which needs scikit-learn (the test extra has it)."""
    need_module("sklearn")
    from tests.learned import train

    return train


# -- the shipped file --------------------------------------------------------------------------
def test_the_shipped_model_loads_and_is_small() -> None:
    """The package's model file loads, is under 5 MB and its version names its content."""
    data = model_bytes()
    assert len(data) < MAX_BYTES
    model = load()
    assert model.version == f"learned-1 {hashlib.sha256(data).hexdigest()[:8]}"
    assert model.labels == tuple(sorted(model.labels))
    assert 0 < model.kind_threshold < 1
    assert model.kind_threshold == THRESHOLD
    assert model.prototypes


def test_the_shipped_model_is_gzipped_json_with_sorted_keys() -> None:
    """The file is gzip with mtime 0 around JSON with sorted keys (reproducible bytes)."""
    data = model_bytes()
    assert data[4:8] == b"\0\0\0\0"  # the gzip header's mtime
    payload = json.loads(gzip.decompress(data))
    assert list(payload) == sorted(payload)
    assert FILE.endswith(".json.gz")


def test_a_suggestion_names_the_shipped_model(examples: list[dict[str, Any]]) -> None:
    """A suggestion for a real failure carries the model's version and its nearest examples."""
    suggestions = [suggest(e["argv"], e["exit"], e["stdout"], e["stderr"]) for e in examples]
    made = [s for s in suggestions if s is not None]
    assert made
    for suggestion in made:
        assert suggestion.model == load().version
        assert 0 < len(suggestion.nearest) <= 3
        assert suggestion.confidence >= load().kind_threshold


# -- the run time equals scikit-learn -----------------------------------------------------------
def test_run_time_probabilities_equal_scikit_learns(examples: list[dict[str, Any]],
                                                    train_module: Any) -> None:
    """For a model trained here on real examples, the standard-library run time gives
    scikit-learn's predict_proba, within the export's precision."""
    chosen = train_module.failing(examples)
    fitted = train_module.fit(chosen)
    model = parse(train_module.export(fitted, chosen, (0.5, 0.5)))
    assert model.labels == tuple(str(label) for label in fitted.model.classes_)
    probes = [*chosen, {"argv": "make test", "exit": 2, "stdout": "all good\n",
                        "stderr": "error: something else entirely broke"}]
    expected = fitted.model.predict_proba(fitted.vectorizer.transform(
        [train_module.features_of(e) for e in probes]))
    for example, row in zip(probes, expected, strict=True):
        values = run_time_vector(model, train_module.features_of(example))
        got = run_time_probabilities(model, values)
        assert got == pytest.approx(row.tolist(), abs=1e-4)


def test_the_kind_is_the_sum_of_its_classes(examples: list[dict[str, Any]],
                                             train_module: Any) -> None:
    """A suggestion's confidence is P(kind), the sum over the kind's labels."""
    chosen = train_module.failing(examples)
    model = parse(train_module.export(train_module.fit(chosen), chosen, (0.0, 0.5)))
    example = next(e for e in chosen if e["kind"] == "dependency_error")
    suggestion = predict_with(model, example["argv"], example["exit"], example["stdout"],
                              example["stderr"])
    assert suggestion is not None
    p = run_time_probabilities(model, run_time_vector(model, train_module.features_of(example)))
    summed = sum(q for q, kind in zip(p, model.kinds, strict=True) if kind == suggestion.kind)
    assert suggestion.confidence == pytest.approx(summed)
    assert suggestion.kind == "dependency_error"


def test_training_twice_gives_the_same_bytes(examples: list[dict[str, Any]],
                                             train_module: Any) -> None:
    """Two trainings on the same examples write byte-identical files."""
    first = train_module.train(examples, cross_validate=False)
    second = train_module.train(list(reversed(examples)), cross_validate=False)
    assert first == second


def test_passing_examples_are_not_trained_on(examples: list[dict[str, Any]],
                                             train_module: Any) -> None:
    """Only failures are labels: an example with kind none is left out of training."""
    passing = dict(examples[0], kind="none", **{"class": "none"}, id="zz-pass")
    model = parse(train_module.train([*examples, passing], cross_validate=False))
    assert all(not label.startswith("none/") for label in model.labels)


# -- hostile input -----------------------------------------------------------------------------
def _valid(result: Suggestion | None) -> None:
    if result is None:
        return
    assert isinstance(result, Suggestion)
    assert 0.0 <= result.confidence <= 1.0
    assert all(0.0 <= n.similarity <= 1.0 for n in result.nearest)
    json.dumps(result.to_dict())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=st.one_of(st.none(), st.text(max_size=200), st.lists(st.text(max_size=30),
                                                                   max_size=6)),
       exit_code=st.one_of(st.none(), st.integers(min_value=-(2**40), max_value=2**40)),
       stdout=st.one_of(st.text(max_size=2000), st.binary(max_size=2000)),
       stderr=st.one_of(st.text(max_size=2000), st.binary(max_size=2000)))
def test_any_input_gives_none_or_a_valid_suggestion(argv: Any, exit_code: int | None,
                                                    stdout: str | bytes,
                                                    stderr: str | bytes) -> None:
    """Random text, bytes, argv and exit statuses never raise."""
    _valid(suggest(argv, exit_code, stdout, stderr))


@pytest.mark.parametrize("stderr", [
    "x" * (1024 * 1024),
    "\x00" * 10000 + "error: \x00 failed",
    "\ud800\udfff lone surrogates \udc80 error: missing module",
    b"\xff\xfe\x00" * 50000,
    "error\n" * 200000,
    "",
])
def test_hostile_output_never_raises(stderr: str | bytes) -> None:
    """A 1 MiB line, NULs, lone surrogates, invalid UTF-8, many lines, nothing at all."""
    _valid(suggest(["bash", "-c", "tool run"], 1, stderr, stderr))


def test_a_bad_model_file_is_no_suggestion(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the model cannot be read, suggest returns None rather than raising."""
    from failcode.learned import _model

    def broken() -> bytes:
        return b"not gzip"

    load.cache_clear()
    monkeypatch.setattr(_model, "model_bytes", broken)
    try:
        assert suggest("make", 2, "", "error: broken") is None
    finally:
        monkeypatch.undo()
        load.cache_clear()


def test_features_read_a_bounded_tail() -> None:
    """Only the last lines of each stream are read: what comes before them changes nothing."""
    tail = "".join(f"line {i} failed: missing thing\n" for i in range(MAX_LINES))
    early = "error: this early line is past the window\n" * 100
    assert features("x", 1, "", early + tail) == features("x", 1, "", tail)
    assert len(features("x", 1, "", "y" * (TAIL_CHARS * 64))) < 200


@pytest.mark.deep  # a growth-ratio check: the deep step runs it
@pytest.mark.parametrize("unit", ["error: a b c\n", "x", "\x00", "é ", "/a/b/c:1:2: ", "\n"])
def test_suggest_is_linear_in_the_output(unit: str) -> None:
    """The cost of a suggestion grows at most linearly with the output's length."""
    load()

    def run(text: str) -> object:
        return suggest("cmd", 1, text, text)

    ratio = growth(run, unit * (4096 // len(unit)), unit * (65536 // len(unit)))
    assert ratio <= LIMIT, f"{ratio:.0f}x for 16x the output"


# -- the import does not load the model ---------------------------------------------------------
def test_importing_failcode_does_not_load_the_model() -> None:
    """import failcode, failcode.triage and failcode.learned leave the model unread."""
    code = ("import sys, failcode, failcode.triage, failcode.learned\n"
            "loaded = [m for m in ('failcode.learned._model', 'failcode.learned._features')"
            " if m in sys.modules]\n"
            "print(loaded)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_the_model_is_read_once() -> None:
    """The model file is read on the first suggestion and cached for the next."""
    load.cache_clear()
    suggest("x", 1, "", "error")
    suggest("y", 2, "", "error")
    assert load.cache_info().misses == 1
    assert load.cache_info().hits >= 1
