"""The configuration reference and `failcode config init`, generated from the schema."""

from __future__ import annotations

import re
import tomllib
from typing import TYPE_CHECKING

from failcode import DEFAULT_CLASSES, FAILCODE_SCHEMA, Policy, Section, Setting, load_config
from tests._paths import REPO
from tests.cli._console import failcode

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CONFIG_DOC = REPO / "docs" / "config.md"


def _keys(section: Section, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, entry in section.entries.items():
        if isinstance(entry, Setting):
            yield (*path, key)
        else:
            yield from _keys(entry, (*path, key))
    if section.named is not None:
        yield from _keys(section.named, (*path, "<class>"))


def test_committed_reference_is_current() -> None:
    """docs/config.md is what `failcode config docs` prints (regenerate with
    `failcode config docs -o docs/config.md`)."""
    result = failcode("config", "docs")
    assert result.returncode == 0
    assert CONFIG_DOC.read_text(encoding="utf-8") == result.stdout, (
        "docs/config.md is stale: run `failcode config docs -o docs/config.md`")


def test_reference_documents_every_key() -> None:
    """Every key the validator accepts has a row under its table, with its permitted values."""
    text = CONFIG_DOC.read_text(encoding="utf-8")
    for path in _keys(FAILCODE_SCHEMA):
        table = ".".join(path[:-1])
        section = text.split(f"## `[{table}]`", 1)
        assert len(section) == 2, f"no section for [{table}]"
        body = section[1].split("\n## ", 1)[0]
        row = next((line for line in body.splitlines() if line.startswith(f"| `{path[-1]}` |")),
                   None)
        assert row is not None, f"{'.'.join(path)} is not documented"
        assert row.count("|") == 6  # key, type, default, permitted, what it changes


def test_range_wording_is_plain() -> None:
    """Ranges read as words ('an integer from 1 to 100'), not as '1..100'."""
    retry = FAILCODE_SCHEMA.entries["retry"]
    assert isinstance(retry, Section)
    assert retry.named is not None
    setting = retry.named.entries["attempts"]
    assert isinstance(setting, Setting)
    assert setting.expected == "an integer from 1 to 100"
    assert not re.search(r"\d\.\.\d", CONFIG_DOC.read_text(encoding="utf-8"))


def test_init_writes_a_valid_commented_file_of_defaults(tmp_path: Path) -> None:
    """`failcode config init` writes a failcode.toml that validates, sets every key, comments
    each one, and leaves the policy exactly at its defaults."""
    result = failcode("config", "init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "failcode.toml"
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    for key_path in _keys(FAILCODE_SCHEMA):
        node = data
        for part in key_path[:-1]:
            node = node[next(iter(DEFAULT_CLASSES))] if part == "<class>" else node[part]
        assert key_path[-1] in node, key_path
        assert f"\n{key_path[-1]} = " in text
    assert text.count("\n# ") >= len(list(_keys(FAILCODE_SCHEMA)))
    assert failcode("config", "check", str(path)).returncode == 0
    assert load_config(path).policy == Policy()


def test_init_keeps_an_existing_file(tmp_path: Path) -> None:
    """`failcode config init` never overwrites a file unless told to."""
    path = tmp_path / "failcode.toml"
    path.write_text("[budget]\ncapacity = 10\n")
    result = failcode("config", "init", cwd=tmp_path)
    assert result.returncode == 2
    assert "--force" in result.stderr
    assert path.read_text() == "[budget]\ncapacity = 10\n"
