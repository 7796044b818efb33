"""Run one documentation example and check what it shows (used by test_examples.py).

Reads ``{"source": ..., "where": ...}`` as JSON on stdin, runs the source as a module of its own
(``__name__ == "__main__"``) with these checks, and exits 1 with an explanation on stderr when
one fails:

- ``EXPR  # -> EXPECTED`` (an expression statement whose line ends with such a comment): the
  value must equal ``EXPECTED``, read as a Python expression with the example's names and
  failcode's public names in scope; when ``EXPECTED`` is not a Python expression that can be
  evaluated there, ``str(value)`` must equal it exactly. A note in parentheses after two or more
  spaces (``# -> True   (an outcome)``) is not part of ``EXPECTED``.
- ``# raises NAME`` at the end of a line: running the example must raise an exception of class
  ``NAME`` (or a subclass) at that line, and nothing after it runs.

Everything the example prints goes to stdout, for the test to compare with an ``output`` block.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import traceback
from typing import Any

_SHOWS = re.compile(r"#\s*->\s*(?P<expected>.+?)(?:\s{2,}\(.*\))?\s*$")
_RAISES = re.compile(r"#\s*raises\s+(?P<name>[A-Za-z_][\w.]*)\s*$")


class ExampleError(Exception):
    """A shown value or an announced exception did not match."""


def _scope(namespace: dict[str, Any]) -> dict[str, Any]:
    import failcode

    scope = {name: getattr(failcode, name) for name in failcode.__all__}
    scope.update(namespace)
    return scope


def _check(namespace: dict[str, Any], line: int, value: object, expected: str) -> None:
    try:
        wanted = eval(expected, _scope(namespace))
    except Exception:  # noqa: BLE001 - not an expression: compare the text
        if str(value) != expected:
            msg = f"line {line}: shows {expected!r}, but the value is {value!r} (str {value!s})"
            raise ExampleError(msg) from None
        return
    if value != wanted:
        msg = f"line {line}: shows {expected}, but the value is {value!r}"
        raise ExampleError(msg)


class _Shows(ast.NodeTransformer):
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        match = _SHOWS.search(self.lines[(node.end_lineno or node.lineno) - 1])
        if match is None:
            return node
        call = ast.Call(
            func=ast.Name("__check__", ast.Load()),
            args=[ast.Call(ast.Name("globals", ast.Load()), [], []),
                  ast.Constant(node.lineno), node.value, ast.Constant(match["expected"])],
            keywords=[])
        return ast.copy_location(ast.Expr(call), node)


def main() -> int:
    """Run the example from stdin; 0 when it ran and every check held."""
    request = json.load(sys.stdin)
    source: str = request["source"]
    where: str = request["where"]
    lines = source.splitlines()
    raises = {number: match["name"] for number, text in enumerate(lines, 1)
              if (match := _RAISES.search(text))}
    tree = ast.fix_missing_locations(_Shows(lines).visit(ast.parse(source, where)))
    code = compile(tree, where, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__check__": _check}
    try:
        exec(code, namespace)
    except ExampleError as exc:
        print(f"{where}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - an announced exception, or a broken example
        frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
                  if frame.filename == where]
        line = frames[-1].lineno if frames else 0
        names = {cls.__name__ for cls in type(exc).__mro__}
        if raises.get(line) in names or (raises.get(line) or "").rsplit(".", 1)[-1] in names:
            return 0
        print(f"{where}: line {line} raised {type(exc).__name__}: {exc}"
              + (f" (announced: {raises[line]})" if line in raises else ""), file=sys.stderr)
        traceback.print_exc()
        return 1
    if raises:
        print(f"{where}: line {min(raises)} announces {raises[min(raises)]}, but nothing was "
              "raised", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
