"""Config files that cannot be read as TOML, and how every config message names its file.

Expected lines and byte offsets are counted by hand in the texts below; tomllib's own wording is
taken from tomllib on the same text (the validator adds the file and line, never rewords it);
the shortened file names follow the rule in ``_shorten_middle``'s docstring: 48 characters at
most, the start, "…", then the file name with its slash or half the room (23 characters),
whichever is longer.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from failcode import FC, ConfigError, Failure, load_config, validate_toml


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in tmp_path: messages name config files relative to the working directory."""
    monkeypatch.chdir(tmp_path)


def only_problem(text: str | bytes, name: str = "failcode.toml") -> Failure:
    """The one problem validate_toml finds in a file holding ``text``."""
    path = Path(name)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    result = validate_toml(path)
    (problem,) = result.problems
    assert result.values == {}
    return problem


def tomllib_message(text: str) -> str:
    """What tomllib itself says about ``text``."""
    with pytest.raises(tomllib.TOMLDecodeError) as caught:
        tomllib.loads(text)
    return str(caught.value)


# -- not TOML (FC-CFG-004) -------------------------------------------------------------------------

def test_a_file_that_is_not_utf8_names_the_line_and_byte_of_the_first_bad_byte() -> None:
    """\\xe9 alone is not UTF-8: it is byte 27 (from 0) of the file, on line 3."""
    problem = only_problem(b"[budget]\ncapacity = 1\n# caf\xe9\n")
    assert problem.code == FC.CFG_BROKEN_TOML.value
    assert validate_toml("failcode.toml").file == "failcode.toml"
    assert problem.message == ("In failcode.toml line 3, the file is not valid TOML: "
                               "not UTF-8 text (byte 27).")


@pytest.mark.parametrize(("data", "line", "byte"), [
    (b"\xff", 1, 0),
    (b"\n\xff", 2, 1),
    (b"a = 1\n\n\xc3(\n", 3, 7),
])
def test_the_first_bad_byte_is_counted_from_the_files_start(data: bytes, line: int,
                                                            byte: int) -> None:
    """The line is 1 plus the newlines before the bad byte; the byte is its offset from 0."""
    problem = only_problem(data)
    assert (problem.params["line"], problem.params["problem"]) == (
        line, f"not UTF-8 text (byte {byte})")


def test_a_syntax_error_takes_tomllibs_line_and_column() -> None:
    """1 2 after a key's value: tomllib's reason, its line (2) and column (20, the 2)."""
    text = "[ladder]\nchange_repeats = 1 2\n"
    said = tomllib_message(text)
    assert said.endswith(" (at line 2, column 20)")
    problem = only_problem(text)
    assert problem.params["line"] == 2
    assert problem.params["problem"] == said.removesuffix(" (at line 2, column 20)") + \
        " at column 20"


def test_a_syntax_error_on_line_1_keeps_its_column() -> None:
    """A broken header on line 1: line 1, tomllib's column."""
    said = tomllib_message("[budget\n")
    problem = only_problem("[budget\n")
    assert problem.params["line"] == 1
    assert problem.params["problem"] == said.replace(" (at line 1, ", " at ").removesuffix(")")


@pytest.mark.parametrize(("text", "line"), [
    ("[ladder]\nchange_repeats = [1,\n", 2),
    ("[ladder]\nchange_repeats = [1,", 2),
    ("\n[ladder]\nchange_repeats = [1,\n\n", 4),
    ('a = """\n', 1),
])
def test_a_file_that_ends_too_early_is_reported_at_its_last_line(text: str, line: int) -> None:
    """An unclosed array or string at the end: the last line, 'at the end of the file'."""
    said = tomllib_message(text)
    assert said.endswith(" (at end of document)")
    problem = only_problem(text)
    assert problem.params["line"] == line
    assert problem.params["problem"] == said.removesuffix(" (at end of document)") + \
        " at the end of the file"


def test_arrays_nested_too_deeply_are_broken_toml_at_line_1() -> None:
    """10,000 nested arrays: FC-CFG-004 at line 1 (the parser does not say where)."""
    problem = only_problem("# deep\n[models]\nfallbacks = " + "[" * 10_000 + "]" * 10_000 + "\n")
    assert problem.message == ("In failcode.toml line 1, the file is not valid TOML: "
                               "arrays or inline tables nested too deeply to read.")


def test_an_integer_of_5000_digits_is_broken_toml_with_pythons_reason() -> None:
    """int() refuses over 4300 digits; the reason is Python's, without its advice to coders."""
    with pytest.raises(ValueError, match="4300") as caught:
        int("9" * 5000)
    reason, advice = str(caught.value).split(";")
    assert "set_int_max_str_digits" in advice
    problem = only_problem("# big\n[retry.default]\nattempts = " + "9" * 5000 + "\n")
    assert problem.message == f"In failcode.toml line 1, the file is not valid TOML: {reason}."


def test_a_key_of_1000_dotted_parts_is_read() -> None:
    """1,000 parts is the most a key may have: the file is TOML (the key is just unknown)."""
    result = validate_toml("failcode.toml", text="a" + ".a" * 999 + " = 1\n")
    assert [p.code for p in result.problems] == [FC.CFG_UNKNOWN_TABLE.value]


def test_a_key_of_1001_dotted_parts_is_refused_at_its_line() -> None:
    """1,001 parts: FC-CFG-004 naming the key's line and the limit."""
    text = "# long\n\nz = 1\na" + ".a" * 1000 + " = 1\n"
    (problem,) = validate_toml("failcode.toml", text=text).problems
    assert problem.message == ("In failcode.toml line 4, the file is not valid TOML: "
                               "a key of more than 1000 dotted parts.")


@pytest.mark.parametrize("part", ['"a.b"', "'a.b.c'", '"x\\".y"'])
def test_dots_inside_quoted_parts_are_not_counted_as_parts(part: str) -> None:
    """A key of 600 quoted parts each holding dots has 600 parts: it is read."""
    text = ".".join([part] * 600) + " = 1\n"
    result = validate_toml("failcode.toml", text=text)
    assert [p.code for p in result.problems] == [FC.CFG_UNKNOWN_TABLE.value]


@pytest.mark.parametrize("part", ['"\\""', "'x'", '"a b"', "b"])
def test_a_key_of_1001_quoted_parts_is_refused(part: str) -> None:
    """1,001 parts are too many whatever the parts' quoting (an escaped quote included)."""
    text = "\n" + " . ".join([part] * 1001) + " = 1\n"
    (problem,) = validate_toml("failcode.toml", text=text).problems
    assert (problem.code, problem.params["line"]) == (FC.CFG_BROKEN_TOML.value, 2)


# -- load_config ---------------------------------------------------------------------------------

def test_load_config_raises_config_error_for_a_file_that_is_not_toml() -> None:
    """load_config refuses broken TOML with the one FC-CFG-004 problem, nothing else."""
    Path("failcode.toml").write_text("[retry.x]\ninitial_delay_s = 10\n[budget\n",
                                     encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config("failcode.toml")
    assert [p.code for p in caught.value.problems] == [FC.CFG_BROKEN_TOML.value]


def test_load_config_raises_config_error_for_a_file_that_is_not_utf8() -> None:
    """load_config refuses a file that is not UTF-8 with FC-CFG-004, line and byte."""
    Path("failcode.toml").write_bytes(b"\xfe = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config("failcode.toml")
    (problem,) = caught.value.problems
    assert problem.message == ("In failcode.toml line 1, the file is not valid TOML: "
                               "not UTF-8 text (byte 0).")


def test_load_config_of_a_missing_file_raises_file_not_found() -> None:
    """A path that does not exist is an OSError (FileNotFoundError), as documented."""
    with pytest.raises(FileNotFoundError):
        load_config("missing.toml")


def test_load_config_of_a_directory_raises_an_os_error() -> None:
    """A directory is not a readable file: an OSError."""
    Path("conf.toml").mkdir()
    with pytest.raises(OSError, match=r"conf\.toml"):
        load_config("conf.toml")


def test_config_error_lists_each_problem_on_its_own_line_with_its_code() -> None:
    """str(ConfigError) is one line per problem: [code] message, in file order."""
    Path("failcode.toml").write_text("[ladder]\nroute_repeats = -1\nzzz = 1\n",
                                     encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config("failcode.toml")
    assert str(caught.value) == (
        "[FC-CFG-001] In failcode.toml line 2, ladder.route_repeats = -1 is invalid; expected "
        "an integer from 0 to 100.\n"
        "[FC-CFG-002] In failcode.toml line 3, the key ladder.zzz is unknown; [ladder] allows "
        "change_repeats, route_repeats.")


# -- the file as messages name it -----------------------------------------------------------------

def file_shown(path: str | Path) -> object:
    """The file an FC-CFG problem names for ``path`` (an unknown key in it)."""
    (problem,) = validate_toml(path, text="zz = 1\n").problems
    assert str(problem.params["file"]) in problem.message
    return problem.params["file"]


def test_a_file_inside_the_working_directory_is_named_relative_to_it(tmp_path: Path) -> None:
    """An absolute path inside the working directory is shown relative to it."""
    assert file_shown(tmp_path / "conf" / "failcode.toml") == "conf/failcode.toml"


def test_a_file_outside_the_working_directory_is_named_as_given() -> None:
    """A path outside the working directory is shown as given."""
    assert file_shown("/outside-of-cwd/failcode.toml") == "/outside-of-cwd/failcode.toml"


def test_a_name_of_48_characters_is_shown_whole() -> None:
    """48 characters is the most shown: such a name is not cut."""
    name = "d" * 34 + "/failcode.toml"
    assert len(name) == 48
    assert file_shown(name) == name


def test_a_name_of_49_characters_keeps_24_first_and_23_last() -> None:
    """One character too long: the start (24), "…", and half the room (23) at the end."""
    assert file_shown("d" * 35 + "/failcode.toml") == "d" * 24 + "\u2026" + "d" * 9 + \
        "/failcode.toml"


def test_a_long_file_name_is_kept_whole_with_its_slash() -> None:
    """A 34-character file name and its slash are the end; the start fills the other 12."""
    name = "n" * 29 + ".toml"
    assert file_shown("d" * 40 + "/" + name) == "d" * 12 + "\u2026" + "/" + name


def test_only_the_last_path_component_is_the_file_name() -> None:
    """Directories before the last / are part of the start, not of the name kept whole."""
    name = "n" * 25 + ".toml"
    assert file_shown("a/" + "d" * 30 + "/" + name) == "a/" + "d" * 14 + "\u2026" + "/" + name


def test_a_long_name_without_a_directory_is_cut_like_a_file_name() -> None:
    """A 60-character name in the working directory: 1 first character, "…", the last 46."""
    name = "n" * 55 + ".toml"
    assert file_shown(name) == "n\u2026" + "n" * 41 + ".toml"


def test_a_file_name_longer_than_the_room_keeps_its_end_and_one_first_character() -> None:
    """A 65-character file name: 1 character of the start, "…", the name's last 46."""
    name = "n" * 60 + ".toml"
    assert file_shown("d" * 5 + "/" + name) == "d\u2026" + "n" * 41 + ".toml"


def test_a_cut_name_is_48_characters_in_every_message() -> None:
    """The cut file name is the one every message of the file shows."""
    path = "d" * 35 + "/failcode.toml"
    result = validate_toml(path, text="zz = 1\n[ladder]\nroute_repeats = 'x'\n")
    shown = "d" * 24 + "\u2026" + "d" * 9 + "/failcode.toml"
    assert [p.params["file"] for p in result.problems] == [shown, shown]
    assert result.file == shown
