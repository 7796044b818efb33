"""The line scanner behind every FC-CFG line number: where TOML says a key or header is.

Each text below is valid TOML (checked with tomllib first); the expected lines are counted by
hand from the TOML 1.0 rules the case names: what a bare, quoted or dotted key is, where a string
or a comment starts and ends, and that a line ends at LF (or CRLF) only.
"""

from __future__ import annotations

import tomllib

import pytest

from failcode.policy._config import key_lines


def lines_of(text: str) -> dict[tuple[str, ...], int]:
    """key_lines of ``text``, after checking that ``text`` is TOML."""
    tomllib.loads(text)
    return key_lines(text)


# -- keys ----------------------------------------------------------------------------------------

def test_blank_and_comment_lines_count_but_record_nothing() -> None:
    """Blank lines and comment lines are lines: a key after them is at its own line number."""
    assert lines_of("\n# a = 1\n   \n\t# [t]\nKey = 1\n") == {("Key",): 5}


def test_indentation_and_blanks_around_the_equals_sign_are_ignored() -> None:
    """Indentation and blanks around a key and its = are whitespace, not part of the key."""
    assert lines_of("  [ t ]\n\t X-y_9 \t=\t1\n") == {("t",): 1, ("t", "X-y_9"): 2}


def test_a_dotted_key_is_a_path_with_blanks_around_its_dots_ignored() -> None:
    """a . b.c is the path (a, b, c) under the current table."""
    assert lines_of("[T]\nA . b.c = 1\n") == {("T",): 1, ("T", "A", "b", "c"): 2}


def test_a_dotted_header_is_a_path() -> None:
    """[a . B] names the table (a, B); its keys are under it."""
    assert lines_of("[a . B]\nk = 1\n") == {("a", "B"): 1, ("a", "B", "k"): 2}


def test_quoted_key_parts_keep_dots_and_blanks() -> None:
    """A quoted part ("a.b", 'c d') is one part, dots and blanks included."""
    assert lines_of("\"a.b\" . 'c d' = 1\n") == {("a.b", "c d"): 1}


def test_an_empty_quoted_key_is_a_key() -> None:
    """"" is a valid (empty) key."""
    assert lines_of('"" = 1\n') == {("",): 1}


def test_a_basic_string_key_has_its_escapes_resolved() -> None:
    """In a "..." key, \\" is a quote, \\\\ a backslash and \\u00e9 an é."""
    text = '"a\\"b" = 1\n"c\\\\" = 2\n"\\u00e9" = 3\n'
    assert lines_of(text) == {('a"b',): 1, ("c\\",): 2, ("\u00e9",): 3}


def test_a_literal_string_key_keeps_its_backslashes() -> None:
    """In a '...' key a backslash is itself: no escapes."""
    assert lines_of("'a\\b' = 1\n") == {("a\\b",): 1}


def test_a_quoted_key_may_hold_an_equals_sign_a_hash_and_brackets() -> None:
    """=, # and brackets inside a quoted key are part of it, not syntax."""
    text = '"a=b" = 1\n"c#d" = 2\n\'[e]\' = 3\n"{f" = 4\n'
    assert lines_of(text) == {("a=b",): 1, ("c#d",): 2, ("[e]",): 3, ("{f",): 4}


def test_a_string_value_with_an_escaped_quote_ends_at_its_real_end() -> None:
    """"x\\"y = 2" is one string: the \\" inside does not end it."""
    assert lines_of('a = "x\\"y = 2" # [\nb = 1\n') == {("a",): 1, ("b",): 2}


def test_a_string_value_ending_in_an_escaped_backslash_ends_there() -> None:
    """"x\\\\" ends at its last quote (\\\\ is one backslash), so [1] after it closes."""
    assert lines_of('a = ["x\\\\", 1]\nb = 2\n') == {("a",): 1, ("b",): 2}


def test_a_key_recorded_once_keeps_its_first_line() -> None:
    """A path written again (in a second [[array]] table) keeps its first line."""
    text = "[[T]]\nk = 1\n[[T]]\nk = 2\n"
    assert lines_of(text) == {("T",): 1, ("T", "k"): 2}


def test_a_top_level_key_after_a_table_belongs_to_the_table() -> None:
    """A key after a header is under that header's table until the next header."""
    text = "a = 1\n[t]\nb = 2\n[u.v]\nc = 3\n"
    assert lines_of(text) == {("a",): 1, ("t",): 2, ("t", "b"): 3, ("u", "v"): 4,
                              ("u", "v", "c"): 5}


# -- headers ---------------------------------------------------------------------------------------

def test_a_header_with_a_bracket_and_a_quote_in_a_quoted_part() -> None:
    """["a]b".'c"d'] is the table (a]b, c"d): the ] and the " inside quotes are not syntax."""
    text = "[\"a]b\".'c\"d']\nk = 1\n"
    assert lines_of(text) == {("a]b", 'c"d'): 1, ("a]b", 'c"d', "k"): 2}


def test_a_comment_after_a_header_may_hold_brackets_and_quotes() -> None:
    """[t] # ] "x [ is the table t; the comment does not change it."""
    text = '[t] # ] "x [\nk = 1\n[[u]] # ]] \'\nj = 2\n'
    assert lines_of(text) == {("t",): 1, ("t", "k"): 2, ("u",): 3, ("u", "j"): 4}


def test_an_array_of_tables_header_is_a_table() -> None:
    """[[a.b]] names the table (a, b); the keys after it are under it."""
    assert lines_of("[[ a.b ]]\nk = 1\n") == {("a", "b"): 1, ("a", "b", "k"): 2}


# -- values over several lines -------------------------------------------------------------------

def test_the_lines_of_a_multi_line_array_hold_no_keys() -> None:
    """What looks like a key inside a multi-line array is a value; the key after it counts."""
    text = 'a = [\n  1,\n  "k = 2",\n  [3,\n   4],\n]\nb = 5\n'
    assert lines_of(text) == {("a",): 1, ("b",): 7}


def test_brackets_inside_strings_of_an_array_do_not_end_it() -> None:
    """"]" and '[' in an array are strings: the array ends at its own ]."""
    text = "a = [ \"]\",\n  '[', \"[\",\n  ]\nb = 2\n"
    assert lines_of(text) == {("a",): 1, ("b",): 4}


def test_a_comment_inside_an_array_may_hold_brackets() -> None:
    """# ] inside a multi-line array is a comment: the array goes on."""
    text = "a = [ # ]\n  1, # ]]\n  2, # [\n]\nb = 3\n"
    assert lines_of(text) == {("a",): 1, ("b",): 5}


def test_a_comment_after_a_value_may_hold_a_bracket() -> None:
    """a = 1 # [ ends at the line's end: the next line is a key."""
    assert lines_of("a = 1 # [ {\nb = 2\n") == {("a",): 1, ("b",): 2}


def test_nested_arrays_over_several_lines_end_where_the_outer_one_ends() -> None:
    """[[1], [\\n2]] closes both arrays on its second line; ]] there is not a header."""
    text = "a = [[1], [\n2]]\nb = [\n[\n3\n]\n]\nc = 4\n"
    assert lines_of(text) == {("a",): 1, ("b",): 3, ("c",): 8}


def test_arrays_on_their_own_lines_inside_an_array_are_values_not_headers() -> None:
    """["x"], on a line of a multi-line array is a value; only its outer ] ends the array."""
    text = 'a = [[1,\n2], \n["x"],\n[ \'y\' ] ,\n]\nb = [\n["z"]]\nc = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 6, ("c",): 8}


@pytest.mark.parametrize("key", ['"k"', "k", "'k'"])
def test_the_value_starts_right_after_the_equals_sign(key: str) -> None:
    """k =[ and "k"= [ open an array: the value is all that follows the =."""
    text = f'{key}=[\n["x"],\n]\nb = 1\n'
    assert lines_of(text) == {("k",): 1, ("b",): 4}


def test_an_inline_table_is_one_value() -> None:
    """a = {b = 1, c = [2]}: its inner keys are not recorded; the next line is a key."""
    assert lines_of("a = {b = 1, c = [2]}\nd = 3\n") == {("a",): 1, ("d",): 2}


def test_a_multi_line_basic_string_holds_no_keys() -> None:
    """Lines inside \"\"\"...\"\"\" are text, with quotes and brackets in them."""
    text = 'a = """\nb = 1 ""\n[t] "\n"""\nc = 2\n'
    assert lines_of(text) == {("a",): 1, ("c",): 5}


def test_a_multi_line_literal_string_holds_no_keys() -> None:
    """Lines inside '''...''' are text; a backslash there escapes nothing."""
    text = "a = '''\nb = 1 \\'''\nc = 2\n"
    assert lines_of(text) == {("a",): 1, ("c",): 3}


def test_an_escaped_quote_does_not_end_a_multi_line_basic_string() -> None:
    """\\\"\"\" is an escaped quote then two quotes: the string goes on."""
    text = 'a = """\n\\"""\nb = 1\n"""\nc = 2\n'
    assert lines_of(text) == {("a",): 1, ("c",): 5}


def test_a_line_ending_backslash_does_not_end_a_multi_line_basic_string() -> None:
    """A backslash at a line's end continues the string on the next line."""
    text = 'a = """x \\\n"""\nb = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 3}


def test_quotes_just_inside_the_closing_delimiter_belong_to_the_string() -> None:
    """x\"\"\"\" ends the string (content x"), so "[" after it is a string, not a bracket."""
    text = 'a = ["""\nx"""", "["]\nb = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 3}


def test_two_quotes_just_inside_the_opening_delimiter_belong_to_the_string() -> None:
    """\"\"\"\"\"x\"\"\" is one string (content ""x): the line after it is a key."""
    assert lines_of('a = """""x"""\nb = 1\n') == {("a",): 1, ("b",): 2}


def test_an_empty_multi_line_string_ends_on_its_line() -> None:
    """\"\"\"\"\"\" and '''''' are empty strings: the next line is a key."""
    assert lines_of("a = \"\"\"\"\"\"\nb = ''''''\nc = 1\n") == {("a",): 1, ("b",): 2,
                                                                   ("c",): 3}


def test_a_multi_line_string_inside_a_multi_line_array() -> None:
    """A \"\"\" string opened inside an array holds a ]; the array ends after the string."""
    text = 'a = [\n"""\n] b = 1\n""", 2,\n]\nc = 3\n'
    assert lines_of(text) == {("a",): 1, ("c",): 6}


def test_a_multi_line_string_closing_inside_an_array_keeps_the_array_open() -> None:
    """a = [\"\"\"x\\n\"\"\", [1,\\n2]]: the depth after the string counts its brackets."""
    text = 'a = ["""x\n""", [1,\n2]]\nb = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 4}


def test_a_string_after_a_closed_multi_line_string_is_skipped_too() -> None:
    """After \"\"\" closes, a later "[" on the line is a string, not a bracket."""
    text = 'a = ["""\nx""", "[", """\n]""", 1]\nb = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 4}


# -- what a line is --------------------------------------------------------------------------------

def test_crlf_line_ends_count_as_one_line_each() -> None:
    """CRLF ends a line like LF: a header and keys keep their numbers."""
    assert lines_of("a = 1\r\n[t] \r\nb = [\r\n1]\r\nc = 2\r\n") == {
        ("a",): 1, ("t",): 2, ("t", "b"): 3, ("t", "c"): 5}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_only_lf_ends_a_line(separator: str) -> None:
    """A Unicode line or paragraph separator inside a string is not a line end for TOML."""
    text = f'a = "x{separator}y"\nb = 1\n'
    assert lines_of(text) == {("a",): 1, ("b",): 2}


@pytest.mark.parametrize("text", ["a = 1", "a = 1\n"])
def test_the_last_line_needs_no_line_end(text: str) -> None:
    """A file's last key is recorded with or without a final newline."""
    assert lines_of(text) == {("a",): 1}


# -- not TOML: recorded as far as it reads, never an exception -----------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("= 1\n", {}),
    ("a b = 1\n", {}),
    ("a. = 1\n", {}),
    ("a = 1\n[t\nb = 2\n", {("a",): 1, ("b",): 3}),
    ("[[t]\nb = 2\n", {("b",): 2}),
    ('"a = 1\nb = 2\n', {("b",): 2}),
    ('x = "a\nb = 2\n', {("x",): 1, ("b",): 2}),
    ("a\nb = 2\n", {("b",): 2}),
    ('"\\x" = 1\n', {("\\x",): 1}),
])
def test_text_that_is_not_toml_records_only_what_reads_as_keys(
        text: str, expected: dict[tuple[str, ...], int]) -> None:
    """A line that is not a header or a key = value records nothing and changes no table."""
    assert key_lines(text) == expected
