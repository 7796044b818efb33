"""The learned classifier's training data: the case files, and examples run for real."""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pytest

from failcode import FC, Kind
from tests._needs import missing
from tests.lab.agents import tool_env
from tests.learned.catalogue import CASES, CaseError, load, load_all, taxonomy
from tests.learned.generate import generate, missing_tools, output_path, read_examples, run_example

if TYPE_CHECKING:
    from pathlib import Path

MIN_EXAMPLES = 5000
MIN_PROGRAMS = 60

TEST_SH_TOOLS = frozenset({
    "python", "pytest", "ruff", "mypy", "pip", "gcc", "g++", "clang", "clang++", "make", "git",
    "javac", "java", "jar", "mvn", "node", "npm", "tsc", "rustc", "cargo", "go", "gofmt", "curl",
})
"""The programs scripts/test.sh installs (with the repository's Python and TypeScript): under
``CI=true`` a missing one fails the sample; the others come with the machine's image, and a
machine without one skips its cases."""

ECOSYSTEMS = sorted(path.stem for path in CASES.glob("*.toml"))


def _raw_cases() -> list[dict[str, object]]:
    """Every case straight from the TOML files, without the catalogue's loader."""
    out = []
    for path in sorted(CASES.glob("*.toml")):
        out += tomllib.loads(path.read_text())["case"]
    return out


# -- the files ---------------------------------------------------------------------------------
def test_every_case_file_loads() -> None:
    """Every file of the catalogue loads, with unique ids."""
    cases = load_all()
    assert len(cases) == len(_raw_cases())
    assert len({case.id for case in cases}) == len(cases)


GOOD = ('[[case]]\nid = "x"\nprogram = "cat"\ncommand = "cat a"\nexit = 1\n'
        'kind = "command_error"\nclass = "file_not_found"\n')


@pytest.mark.parametrize(("text", "field"), [
    (GOOD.replace("exit = 1\n", ""), "case[0] (x).exit"),
    (GOOD.replace("cat a", "cat @f@"), "case[0] (x).params"),
    (GOOD.replace("exit = 1", "exit = 0"), "case[0] (x).kind"),
    (GOOD + 'colour = "red"\n', "case[0] (x)"),
    (GOOD.replace("[[case]]", "[[case]"), "file"),
])
def test_a_bad_file_names_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    """A case file that breaks the format is an error naming the file and the field."""
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(CaseError) as info:
        load(path)
    assert str(info.value).startswith(f"broken.toml: {field}")


def test_the_catalogue_is_large_enough() -> None:
    """At least 5,000 examples from at least 60 programs, counted from the TOML data."""
    raw = _raw_cases()
    sizes = {str(case["program"]): 0 for case in raw}
    for case in raw:
        params = case.get("params", {})
        assert isinstance(params, dict)
        sizes[str(case["program"])] += math.prod(len(values) for values in params.values())
    assert sum(sizes.values()) >= MIN_EXAMPLES
    assert len(sizes) >= MIN_PROGRAMS
    assert sum(case.size for case in load_all()) == sum(sizes.values())


def test_every_label_is_failcodes() -> None:
    """Every kind is one of failcode's kinds and every class one of its classes ("none" for
    a pass)."""
    kinds, classes = taxonomy()
    assert kinds == {kind.value for kind in Kind}
    for case in _raw_cases():
        assert case["kind"] in kinds | {"none"}, case["id"]
        assert case["class"] in classes | {"none"}, case["id"]


def test_the_taxonomys_classes_are_failcodes_own() -> None:
    """The classes come from failcode's catalog and its documented class list."""
    _, classes = taxonomy()
    assert {code.spec.error_class for code in FC if code.spec.error_class} <= classes
    assert {"undeclared_identifier", "test_collection_error", "unbound_variable"} <= classes
    assert "frobnicated" not in classes


def test_every_ecosystem_has_passing_and_failing_cases() -> None:
    """Each case file teaches both what a failure looks like and what a pass looks like."""
    for ecosystem in ECOSYSTEMS:
        kinds = {case.kind for case in load_all(only=ecosystem)}
        assert "none" in kinds, ecosystem
        assert kinds - {"none"}, ecosystem


# -- the generator -----------------------------------------------------------------------------
def test_the_cache_key_follows_the_case_files(tmp_path: Path) -> None:
    """The output file's name changes when a case file changes, and only then."""
    folder = tmp_path / "cases"
    shutil.copytree(CASES, folder)
    first = output_path(tmp_path, None, folder)
    assert output_path(tmp_path, None, folder) == first
    shell = folder / "shell.toml"
    shell.write_text(shell.read_text() + "\n")
    assert output_path(tmp_path, None, folder) != first


def test_generate_writes_what_ran_and_leaves_out_a_wrong_label(tmp_path: Path) -> None:
    """Examples that exit as stated become JSON lines; one that does not, or whose output
    lacks what its case says, is left out."""
    if shutil.which("cat") is None:
        missing("cat is not installed")
    path = tmp_path / "shell.toml"
    path.write_text(
        '[[case]]\nid = "cat-missing"\nprogram = "cat"\ncommand = "cat @file@"\nexit = 1\n'
        'kind = "command_error"\nclass = "file_not_found"\n'
        '[case.params]\nfile = ["a.txt", "b.txt", "c.txt"]\n'
        '[[case]]\nid = "cat-wrong"\nprogram = "cat"\ncommand = "cat gone.txt"\nexit = 3\n'
        'kind = "command_error"\nclass = "file_not_found"\n'
        '[[case]]\nid = "cat-says-else"\nprogram = "cat"\ncommand = "cat gone.txt"\nexit = 1\n'
        'kind = "env_error"\nclass = "permission_denied"\nsays = "Permission denied"\n')
    out = tmp_path / "examples.jsonl"
    records, left_out = generate(load(path), out, jobs=2)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["case"] for line in lines] == ["cat-missing"] * 3
    assert {line["exit"] for line in lines} == {1}
    assert all("No such file" in line["stderr"] for line in lines)
    assert len({line["id"] for line in lines}) == 3
    assert [ran.example.case.id for ran in left_out] == ["cat-wrong", "cat-says-else"]
    assert read_examples(out) == records


# -- a sample, run for real ----------------------------------------------------------------------
@pytest.mark.parametrize("ecosystem", ECOSYSTEMS)
def test_a_sample_exits_as_stated(ecosystem: str, tmp_path: Path) -> None:
    """The first example of every case runs and exits as its case states."""
    env = tool_env(tmp_path, tmp_path)
    runnable = []
    for case in load_all(only=ecosystem):
        absent = missing_tools(case, env)
        if set(absent) & TEST_SH_TOOLS:
            missing(f"{', '.join(absent)} (for {case.id}) not installed")
        if not absent:
            runnable.append(case.examples()[0])
    if not runnable:
        missing(f"no program of {ecosystem} is installed")
    with ThreadPoolExecutor(max_workers=2) as pool:
        ran = list(pool.map(run_example, runnable))
    wrong = [f"{r.example.case.id}: {r.problem}" for r in ran if r.record is None]
    assert not wrong, "\n".join(wrong)
    for r in ran:
        assert r.record is not None
        assert r.record["exit"] == r.example.case.exit
