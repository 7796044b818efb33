"""Every example in README.md and docs/ runs, and shows what it says it shows.

Conventions for documentation authors (checked here, implemented in run_example.py):

- Every fenced block tagged ``python`` runs on its own, in a fresh interpreter, in an empty
  temporary working directory, as a user would run it after copying it into a file. Blocks of
  other languages (``toml``, ``text``, untagged) are not run, nor is a block that only includes
  a file (``--8<-- "examples/agent_loop.py"``): that file is run by its own test.
- ``EXPR  # -> EXPECTED`` shows a value: the expression's value must equal ``EXPECTED`` read as
  Python (failcode's public names are in scope, so ``Kind.DEPENDENCY_ERROR`` works without an
  import); when ``EXPECTED`` is not Python (``# -> FC-CMD-001``), ``str(value)`` must equal it.
  A note in parentheses after two or more spaces is not part of ``EXPECTED``
  (``failure.kind  # -> Kind.DEPENDENCY_ERROR   (what failed)``).
- A line ending in ``# raises NAME`` must raise ``NAME`` there; nothing after it runs.
- A fenced block tagged ``output`` right after a python block shows what the block prints: its
  stdout must equal the block, line by line (trailing white space ignored); a line ``...``
  stands for any number of lines.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests._paths import REPO

RUNNER = Path(__file__).with_name("run_example.py")
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.MULTILINE | re.DOTALL)


class Example(NamedTuple):
    """One python block of a page, with the output block that follows it, if any."""

    page: str
    line: int
    source: str
    output: str | None

    @property
    def where(self) -> str:
        """``README.md:28``: the page and the line of the opening fence."""
        return f"{self.page}:{self.line}"


def examples_of(text: str, page: str) -> list[Example]:
    """The python blocks of a Markdown text, in order."""
    found: list[Example] = []
    blocks = list(FENCE.finditer(text))
    for index, block in enumerate(blocks):
        language = block["info"].strip().split(" ")[0].lower()
        if language not in ("python", "py"):
            continue
        output = None
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if (following is not None and following["info"].strip() == "output"
                and not text[block.end():following.start()].strip()):
            output = following["body"]
        indent = len(block["indent"])
        body = "".join(line[indent:] + "\n" for line in block["body"].splitlines())
        if body.strip().startswith("--8<--") and len(body.strip().splitlines()) == 1:
            continue  # a snippet include: the included file has its own test
        found.append(Example(page, text.count("\n", 0, block.start()) + 1, body, output))
    return found


PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
EXAMPLES = [example for page in PAGES
            for example in examples_of(page.read_text(encoding="utf-8"),
                                       str(page.relative_to(REPO)))]


def matches(shown: str, printed: str) -> bool:
    """Whether printed output matches a shown output block (``...`` lines match anything)."""
    want = [line.rstrip() for line in shown.rstrip("\n").splitlines()]
    got = [line.rstrip() for line in printed.rstrip("\n").splitlines()]

    def match(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        if want[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and want[i] == got[j] and match(i + 1, j + 1)

    return match(0, 0)


def test_documentation_has_examples() -> None:
    """The README and the decision rules page carry runnable examples (the extractor works)."""
    pages = {example.page for example in EXAMPLES}
    assert {"README.md", "docs/decisions.md", "docs/record.md"} <= pages


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_example_runs(example: Example, tmp_path: Path) -> None:
    """The example runs as written, its shown values hold, and it prints its output block."""
    result = subprocess.run([sys.executable, str(RUNNER)], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=120,
                            input=json.dumps({"source": example.source,
                                              "where": example.where}))
    assert result.returncode == 0, result.stderr
    if example.output is not None:
        assert matches(example.output, result.stdout), (
            f"{example.where} prints:\n{result.stdout}\nbut its output block shows:\n"
            f"{example.output}")


def test_matches_ellipsis() -> None:
    """An output block's `...` line stands for any lines, and nothing else is loose."""
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n")
    assert matches("a\n...\n", "a\n")
    assert not matches("a\nd\n", "a\nb\nd\n")
    assert not matches("a\n...\ne\n", "a\nb\nd\n")


def test_runner_catches_a_wrong_shown_value(tmp_path: Path) -> None:
    """A `# ->` comment that does not hold fails the example."""
    source = "from failcode import FC\nFC.CMD_NOT_FOUND.value  # -> 'FC-CMD-002'\n"
    result = subprocess.run([sys.executable, str(RUNNER)], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=60,
                            input=json.dumps({"source": source, "where": "x.md:1"}))
    assert result.returncode == 1
    assert "shows 'FC-CMD-002'" in result.stderr


def test_runner_catches_an_undefined_name(tmp_path: Path) -> None:
    """An example using a name it never defines fails, whatever it would have shown."""
    source = "from failcode import classify\nclassify(client.call())  # -> None\n"
    result = subprocess.run([sys.executable, str(RUNNER)], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=60,
                            input=json.dumps({"source": source, "where": "x.md:1"}))
    assert result.returncode == 1
    assert "NameError" in result.stderr
