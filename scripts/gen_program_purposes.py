"""Write what each program is for (src/failcode/classification/data/programs.json) from the
metadata of the packages that provide it, never from a hand list of programs.

Which programs: every distinct program run in the real corpora (../shared/data/agent-sessions,
../shared/data/agent-sessions-2) and the lab fixtures (tests/lab/fixtures), as failcode's own
readers see them (each step's command) and as :func:`failcode.classification._purpose.
command_programs` peels it (the first word of each simple command after wrappers and runners),
plus the programs named in ``_purpose``'s rules and every program the table already holds. A
path (``./build.sh``, ``/tmp/x/run``) is the project's own script, not a registry's program,
and is left out. So is a name no shell could have run as a program of its own
(:func:`not_programs`, listed in the table's ``not_programs`` with the reason), when no registry
gives it a purpose: a name run only in lines bash itself cannot parse (``bash -n`` rejects the
line and either the step ended with bash's status 2 for it: a model's reply or tool-call markup
sent as a command, ``The``, ``You``, ``1.``; or the line runs PowerShell's own commands, whose
here-strings bash's peeling reads as programs: ``API``), and a name only the lab runs that the
lab's own shell did not find (a scenario's program that exists nowhere).

Where a program comes from, in this order, first found wins (a package shipping exactly the
program beats a package merely named like it):

1. the shell: ``bash -c 'compgen -b -k'`` (its builtins and keywords) -> ``general``;
2. the packages shipping exactly NAME, read together: Debian, installed (``dpkg -S
   /usr/bin/NAME``, and /bin, /usr/sbin, /sbin): its Section, Tag (debtags) and Description
   from ``apt-cache show``, with the NAME line of the program's own manual page (``man -w``,
   read by man-db's ``lexgrog``); PyPI, installed: a distribution in this Python whose
   ``console_scripts`` entry point (or a script its wheel installs into ``bin``) is exactly
   NAME (``importlib.metadata``): its trove classifiers and Summary; npm: ``npm view NAME
   bin keywords description --json``, kept when its ``bin`` holds NAME;
3. PowerShell's own commands, by its documented naming: an approved verb (``Get-Verb``), a
   hyphen, a noun (``Get-ChildItem``, ``Out-File``) -> ``general``, as bash's builtins are;
4. a program run unversioned whose versioned program is what Debian installs (``python``:
   ``dpkg -S /usr/bin/python3``);
5. a Python standard-library module run with ``python -m`` (``sys.stdlib_module_names``): its
   own docstring's first paragraph (read with ``ast``, never imported) through the rules,
   else ``general``;
6. a test module run with ``python -m`` (inside a ``tests`` package or named ``test_*``) of an
   installed or published distribution (its top-level package: installed, else the PyPI
   project of that name) -> ``test``;
7. any other module the corpora run with ``python -m``: the distribution it is part of
   (:func:`python_module`: installed; else the PyPI project named like its top-level package
   whose wheel installs that package; else the Debian package Debian's Python policy names
   ``python3-PACKAGE`` whose file list holds the module): its metadata, read as a program's;
8. Debian, not installed: the package whose own file list holds exactly ``bin/NAME`` or
   ``sbin/NAME`` (:func:`deb_shipping`; ``apt-get download`` into a temporary folder,
   ``dpkg-deb``), among a few candidates (:func:`deb_candidates`: the package named like NAME,
   one named by a leading part of it, ``cron`` for ``crontab``, and ``apt-cache search``'s
   packages naming it as a word), with the program's manual page line from the package;
9. Debian, not installed: the package named NAME (``apt-cache show NAME``);
10. PyPI: the project named NAME (``https://pypi.org/pypi/NAME/json``): classifiers, summary,
    kept only when its wheel's ``entry_points.txt`` has a console script NAME.

What the metadata says, by :data:`RULES` (first matching rule wins, in that order): words of
the summary, description or manual page that name what a tool does (``linter``, ``type
checker``, ``formatter``, ``test runner``, ``compiler``, ``code generator``, ``package
manager``, ``debugger``...), then trove classifiers (``Topic :: Software Development ::
Testing`` -> test, ``... :: Quality Assurance`` -> static_analysis, ``... :: Build
Tools``/``Compilers`` -> build, ``... :: Version Control`` -> version_control, ``... ::
Debuggers`` -> debug), npm keywords, debtags (``devel::testing-qa``, ``devel::compiler``,
``devel::buildtools``, ``devel::rcs``, ``devel::debugger``, ``devel::packaging``...), the
Debian section (``vcs``, ``interpreters``, ``shells``; ``utils``, ``text``, ``admin``,
``net``, ``editors``... -> ``general``: a utility whose package says it is one) and last a
Debian package that says it is a set of utilities (``binutils``: "GNU assembler, linker and
binary utilities": ``strings`` is ``general``, while ``ld``'s own page, "The GNU linker",
makes it ``build``). A program whose metadata matches no rule has no purpose (``null``) and
is not covered.

What stays uncovered, and why (measured at version 3: 119 of 132 covered): programs whose
Debian package no metadata reachable here names (``rg`` in ripgrep, ``lspci`` in pciutils,
``nc`` and ``identify``, which their packages install only as alternatives' links to
``nc.openbsd`` and ``identify-im6.q16``: only Debian's Contents index, which is not
downloaded, maps them); programs no registry here ships (``tailscale``, ``hyprctl``,
``ponyc``, ``aider``: PyPI's ``aider`` is another project; the real one is ``aider-chat``);
Windows' own programs (``powershell``, ``taskkill``) and PowerShell commands outside the
approved verbs (``Where-Object``); and ``python -m`` modules whose distribution names no
purpose (``django``: a web framework). ``conda`` stays uncovered too: PyPI's ``conda`` has
no wheel (its sdist's script only says conda is not pip-installable), and reading sdists would
also take PyPI's ``mamba``, a BDD test runner, for conda-forge's package manager.

Registry answers are cached under .cache/program-purposes/ (git-ignored), so a re-run asks
no registry again; delete the folder to ask afresh. Run from the repository root:

    python scripts/gen_program_purposes.py            # write the table, print coverage
    python scripts/gen_program_purposes.py --coverage # print coverage of the table as written
"""

from __future__ import annotations

import argparse
import ast
import configparser
import hashlib
import importlib.util
import io
import json
import posixpath
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failcode.classification import _purpose
from failcode.classification._purpose import command_programs
from failcode.triage._events import Command
from failcode.triage.analysis._analyze import (
    _Counting,
    _Events,
    expand,
    is_conversation,
    open_regular,
)
from failcode.triage.readers import HEAD_BYTES, detect
from failcode.triage.readers._jsonstream import Position

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPORA = (SHARED / "data" / "agent-sessions", SHARED / "data" / "agent-sessions-2",
           REPO / "tests" / "lab" / "fixtures")
OUT = REPO / "src" / "failcode" / "classification" / "data" / "programs.json"
CACHE = REPO / ".cache" / "program-purposes"
VERSION = "3"
"""The script's version, written into the table: change it when a rule changes."""
SAMPLE_SEED = 32
"""The seed of the fixed sample of 50 rows checked by hand (tests/fixtures/
program_purposes_checked.json)."""

PROGRAM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$")
"""A name a registry could ship as a program (no path, no variable, no quote)."""

# (source field, pattern, purpose), first match wins. Field: "text" is a summary or
# description; "classifier", "keyword", "tag", "section" the registries' own vocabularies.
RULES: list[tuple[str, str, str]] = [
    # what the tool says it is, in its own summary
    ("text", (r"\b(?:lint(?:er|ing|s)?|static (?:code )?analy[sz](?:er|is|es)|checker"
             r"|type[- ]?check(?:er|ing)?|static (?:type checker|typing)|code quality)\b"),
     "static_analysis"),
    ("text", (r"\b(?:(?:code |source )?formatter|pretty[- ]?printer|code format(?:ting)?"
             r"|reformat(?:s|ter)?)\b"), "format"),
    ("text", (r"\b(?:testing|test (?:framework|runner|tool|harness)|unit[- ]?tests?"
             r"|test suite|bdd)\b"), "test"),
    ("text", r"\bdebugger\b", "debug"),
    ("text", (r"\b(?:compiler|build (?:system|tool)|bundler|make utility|build automation"
             r"|linker|assembler|transpiler|code generator)\b"), "build"),
    ("text", (r"\b(?:package\b[\w ]{0,24}\b(?:manager|installer)"
             r"|dependency manag(?:er|ement)|installs? packages)\b"), "package_install"),
    ("text", r"\b(?:version control|revision control|distributed vcs)\b", "version_control"),
    # PyPI trove classifiers
    ("classifier", r"^Topic :: Software Development :: Debuggers$", "debug"),
    ("classifier", r"^Topic :: Software Development :: Testing\b(?!.*Mocking)", "test"),
    ("classifier", r"^Topic :: Software Development :: Quality Assurance$",
     "static_analysis"),
    ("classifier", r"^Topic :: Software Development :: (?:Build Tools|Compilers)$", "build"),
    ("classifier", r"^Topic :: Software Development :: Version Control\b",
     "version_control"),
    ("classifier", r"^Topic :: System :: (?:Software Distribution|Installation/Setup)$",
     "package_install"),
    # npm keywords
    ("keyword", r"^(?:lint|linter|eslint|static-analysis|typecheck|type-checker|tslint)$",
     "static_analysis"),
    ("keyword", r"^(?:formatter|prettier|format|code-formatter)$", "format"),
    ("keyword", r"^(?:test|testing|test-runner|tdd|bdd|unit-testing|e2e)$", "test"),
    ("keyword", r"^(?:debugger|debug)$", "debug"),
    ("keyword", r"^(?:bundler|compiler|transpiler|build-tool|build)$", "build"),
    ("keyword", r"^(?:package-manager|install)$", "package_install"),
    ("keyword", r"^(?:git|vcs)$", "version_control"),
    # debtags
    ("tag", r"^devel::debugger$", "debug"),
    ("tag", r"^devel::testing-qa$", "static_analysis"),
    ("tag", r"^devel::(?:compiler|buildtools)$", "build"),
    ("tag", r"^devel::rcs$", "version_control"),
    ("tag", r"^(?:devel::packaging|admin::package-management)$", "package_install"),
    ("tag", r"^devel::interpreter$", "interpreter"),
    # Debian sections
    ("section", r"^vcs$", "version_control"),
    ("section", r"^interpreters$", "interpreter"),
    ("section", (r"^(?:shells|utils|text|admin|net|web|editors|misc|mail|httpd|database|"
                r"graphics|sound|video|x11|otherosfs|science)$"), "general"),
    # a program of a Debian package that says it is a set of utilities (binutils: "GNU
    # assembler, linker and binary utilities"), whose own manual page named nothing above
    ("suite", r"\butilit(?:y|ies)\b", "general"),
]
SUITE = re.compile(r"\b(?:utilities|tools|programs|collection)\b", re.IGNORECASE)
"""A Debian description that names a suite of programs (``GNU assembler, linker and binary
utilities``) says what the suite is for, not each program in it: its words decide nothing,
its tags and section still do."""
PURPOSES = ("test", "static_analysis", "format", "build", "debug", "package_install",
            "version_control", "interpreter", "general")
"""Every purpose the table holds; the classifier uses some (see ``_purpose.table_purpose``)."""


def decide(sources: list[tuple[str, str, dict[str, list[str]]]],
           ) -> tuple[str, str, str, str, str] | None:
    """The purpose :data:`RULES` give the metadata of the packages providing a program, first
    rule first whichever package matches it: (purpose, registry, package, field, value)."""
    for field, pattern, purpose in RULES:
        compiled = re.compile(pattern, re.IGNORECASE)
        for registry, package, fields in sources:
            for value in fields.get(field, ()):
                if compiled.search(value):
                    return purpose, registry, package, field, value
    return None


# -- programs -------------------------------------------------------------------------------

def corpus_commands() -> Iterator[tuple[Path, Command]]:
    """Every command step failcode's readers find in the corpora and the lab, with its
    file."""
    roots = [str(root) for root in CORPORA if root.is_dir()]
    for path, label in expand(roots):
        try:
            folder = path.is_dir() and is_conversation(path)
            with (_Events(path) if folder else open_regular(path)) as raw:
                if isinstance(raw, _Events):
                    head = _Events(path).read(HEAD_BYTES)
                else:
                    head = raw.read(HEAD_BYTES)
                    raw.seek(0)
                reader = detect(head)
                if reader is None:
                    continue
                stream = _Counting(raw, None, head, Position())
                for event in reader.read(stream, label):  # type: ignore[arg-type]
                    if isinstance(event, Command) and event.command:
                        yield path, event
        except Exception:  # noqa: BLE001, S112 - an unreadable input holds no program here
            continue


def corpus_programs() -> Counter[str]:
    """Every program the corpora's steps run, counted once per command that runs it."""
    return corpus_programs_and_modules()[0]


PYTHON_M = re.compile(r"(?:^|[\s;&|(`])(?:[\w./~-]*/)?python[\d.]*(?:\s+-[A-Za-z]+)*"
                      r"\s+-m\s*(?P<module>[A-Za-z_][\w.]*)")
"""``python -m MODULE`` (``python3.11 -u -m pytest``, ``.venv/bin/python -m django``)."""


def corpus_programs_and_modules() -> tuple[Counter[str], set[str]]:
    """Every program the corpora's steps run, counted once per command that runs it, and the
    modules they run with ``python -m``."""
    found: Counter[str] = Counter()
    modules: set[str] = set()
    for _path, event in corpus_commands():
        for program in set(command_programs(event.command)):
            found[program] += 1
        modules |= {m.group("module") for m in PYTHON_M.finditer(event.command)}
    return found, modules


NOT_FOUND = re.compile(r"^(?:.*: )?(?P<a>[^\s:]+): (?:command )?not found$"
                       r"|command not found: (?P<b>\S+)$", re.MULTILINE)
"""The shell's own answer for a name it found no program for: bash's ``NAME: command not
found``, dash's ``NAME: not found``, zsh's ``command not found: NAME``."""


def parses(command: str) -> bool:
    """Whether bash itself can parse the line (``bash -n``: read, run nothing)."""
    try:
        done = subprocess.run(["bash", "-n", "-c", command], capture_output=True, timeout=10,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return done.returncode == 0


LAB = REPO / "tests" / "lab" / "fixtures"


def shell_evidence() -> tuple[set[str], set[str], set[str]]:
    """What the shell itself said about the names the steps run: (names run only in lines the
    shell could not parse, of those the names run only in PowerShell's lines, names the lab's
    shell answered "command not found" for and the real corpora never run).

    A line "does not parse" when ``bash -n`` cannot read it and either its step ended with
    bash's status for a syntax error (2): the model's prose or a malformed line sent as a
    command (``The``, ``You``, ``1.`` of a reply pasted into the command); or it runs one of
    PowerShell's own commands (:func:`cmdlet`): PowerShell ran it, and what bash's peeling
    takes for programs in it are the words of its here-strings and script blocks (``@"...
    API Keys..."@ | Out-File``). The lab runs every real tool it needs, so a program its own
    shell did not find is a scenario's deliberately missing one."""
    parsed: set[str] = set()
    unparsed: set[str] = set()
    powershell: set[str] = set()
    real: set[str] = set()
    missing: set[str] = set()
    for path, event in corpus_commands():
        programs = set(command_programs(event.command))
        ran_by = ("bash" if event.exit_code == 2
                  else "powershell" if any(cmdlet(p) for p in programs) else None)
        if ran_by and not parses(event.command):
            unparsed |= programs
            if ran_by == "powershell":
                powershell |= programs
        else:
            parsed |= programs
        if LAB not in path.resolve().parents:
            real |= programs
        else:
            for found in NOT_FOUND.finditer(event.output[-65536:]):
                missing.add(found.group("a") or found.group("b"))
    return unparsed - parsed, powershell - parsed, missing - real


def not_programs(rows: dict[str, dict[str, Any]], programs: set[str],
                 ) -> dict[str, str]:
    """The names a reader passes as a step's program that no shell could have run as a
    program of its own, each with the reason; they are left out of the coverage, as paths
    are. Two rules, by what the shell said, never by name, and only for a name no registry
    gave a purpose:

    - a name run only in lines bash could not parse (:func:`shell_evidence`): prose, a
      malformed line, or PowerShell's own text;
    - a name only the lab runs, that the lab's shell did not find: a scenario's program
      that exists nowhere.
    """
    unparsed, powershell, missing = shell_evidence()
    out: dict[str, str] = {}
    for name in sorted(programs):
        if rows.get(name, {}).get("purpose"):
            continue
        if name in powershell:
            out[name] = ("only in PowerShell lines bash could not parse (the text of a "
                         "here-string or script block)")
        elif name in unparsed:
            out[name] = "only in lines bash could not parse (prose, a malformed line)"
        elif name in missing:
            out[name] = "only in the lab, whose shell found no such command"
    return out


def rule_programs() -> set[str]:
    """The programs ``_purpose``'s own rules name (so the table knows them too)."""
    names: set[str] = set()
    for attribute in ("_TEST", "_LINT", "_BUILD", "_VERB_TOOLS", "_SCRIPT_RUNNERS",
                      "_TASK_RUNNERS", "_WRAPPERS", "_RUN_PROGRAM", "_SHELLS"):
        names |= set(getattr(_purpose, attribute, ()))
    names |= set(getattr(_purpose, "_PASS_THROUGH", {}))
    return names


def is_program(name: str) -> bool:
    """Whether ``name`` could be a registry's program (not a path, a variable or prose)."""
    return bool(PROGRAM.match(name)) and not name.endswith((".sh", ".py", ".js", ".bash"))


POWERSHELL_VERBS = frozenset("""
    Add Clear Close Copy Enter Exit Find Format Get Hide Join Lock Move New Open Optimize Pop
    Push Redo Remove Rename Reset Resize Search Select Set Show Skip Split Step Switch Undo
    Unlock Watch Connect Disconnect Read Receive Send Write Backup Checkpoint Compare Compress
    Convert ConvertFrom ConvertTo Dismount Edit Expand Export Group Import Initialize Limit
    Merge Mount Out Publish Restore Save Sync Unpublish Update Debug Measure Ping Repair
    Resolve Test Trace Approve Assert Build Complete Confirm Deny Deploy Disable Enable Install
    Invoke Register Request Restart Resume Start Stop Submit Suspend Uninstall Unregister Wait
    Block Grant Protect Revoke Unblock Unprotect Use""".split())  # noqa: SIM905 - as documented
"""PowerShell's approved verbs (``Get-Verb``; "Approved Verbs for PowerShell Commands" in
PowerShell's documentation): a command named ``Verb-Noun`` with one of them is a cmdlet or
function of the shell, as bash's builtins are bash's."""
CMDLET = re.compile(r"^(?P<verb>[A-Z][a-z]+(?:From|To)?)-[A-Z][A-Za-z0-9]+$")
MODULE_TEST = re.compile(r"(?:^|\.)(?:tests?|testing)\.|(?:^|\.)test_\w+$|_tests?$")
"""A module run with ``python -m`` that is a test module: inside a ``tests`` package, or
named ``test_*`` (pytest's and unittest's discovery convention)."""


def cmdlet(name: str) -> bool:
    """Whether ``name`` follows PowerShell's documented naming: an approved verb, a hyphen, a
    noun (``Get-ChildItem``, ``Out-File``, ``Where-Object``)."""
    found = CMDLET.match(name)
    return found is not None and found.group("verb") in POWERSHELL_VERBS


# -- registries -----------------------------------------------------------------------------

def _cached(kind: str, name: str, ask: Any) -> Any:
    path = CACHE / kind / (hashlib.sha256(name.encode()).hexdigest()[:24] + ".json")
    if path.exists():
        return json.loads(path.read_text())["answer"]
    answer = ask()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "answer": answer}))
    return answer


def _run(argv: list[str], timeout: int = 60, cwd: str | None = None) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def shell_words() -> set[str]:
    """The shell's builtins and keywords, as bash itself lists them."""
    out = _run(["bash", "-c", "compgen -b; compgen -k"]) or ""
    return {line.strip() for line in out.splitlines() if line.strip()}


def _deb_fields(package: str) -> dict[str, list[str]] | None:
    text = _cached("apt-show", package, lambda: _run(["apt-cache", "show", "--no-all-versions",
                                                       package]))
    if not text:
        return None
    record: dict[str, str] = {}
    key = ""
    for line in text.split("\n\n")[0].splitlines():
        if line[:1] in {" ", "\t"}:
            record[key] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            record[key] = value.strip()
    if record.get("Package") != package:
        return None  # apt-cache reads a name with a dot or a star as a pattern
    tags = [tag.strip() for tag in record.get("Tag", "").split(",") if tag.strip()]
    text = record.get("Description", "")
    suite = bool(SUITE.search(text))
    return {"text": [] if suite else [text], "suite": [text] if suite else [], "tag": tags,
            "section": [record.get("Section", "").rsplit("/", 1)[-1]],
            "size": [record.get("Size", "0")]}


def _man_line(page: str) -> str | None:
    """What a manual page's NAME section says the program does (``lexgrog``, man-db's own
    reader of it): ``strings - print the sequences...`` -> ``print the sequences...``."""
    out = _run(["lexgrog", page]) or ""
    found = re.search(r': "[^"]*? - (?P<what>[^"]+)"$', out.strip())
    return found.group("what").strip() if found else None


def man_installed(name: str) -> str | None:
    """The NAME line of the installed program's own manual page (section 1 or 8, ``man
    -w``), whichever package ships the page (binutils' pages are binutils-common's)."""
    def ask() -> str | None:
        page = (_run(["man", "-w", "-s", "1,8", "--", name]) or "").strip().split("\n")[0]
        return _man_line(page) if page else None
    answer: str | None = _cached("man", name, ask)
    return answer


def with_man(fields: dict[str, list[str]], line: str | None) -> dict[str, list[str]]:
    """A Debian package's fields with one program's manual page line among its texts: what
    the program itself does, beside what its package is (a suite's words say nothing of each
    program in it, the page does)."""
    if not line:
        return fields
    return {**fields, "text": [*fields.get("text", []), line]}


def deb_installed(name: str) -> str | None:
    """The installed Debian package that ships exactly this program (the file the name
    resolves to, through alternatives' links: ``awk`` is mawk's)."""
    paths = [f"{folder}/{name}" for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin")]
    paths += [str(Path(p).resolve()) for p in paths if Path(p).is_symlink()]
    for path in paths:
        out = _cached("dpkg-S", path, lambda p=path: _run(["dpkg", "-S", p]))
        for line in (out or "").splitlines():
            if not line.startswith("diversion by") and ": " in line:
                return line.split(":", 1)[0].split(",")[0].strip()
    return None


BIN_DIRS = ("usr/bin", "bin", "usr/sbin", "sbin")
"""Where a Debian package puts a program on the ``PATH``."""
CANDIDATES = 6
"""At most this many Debian packages are fetched to find the one shipping a program."""
MAX_DEB_BYTES = 100_000_000
"""A package larger than this is not fetched to read its file list."""
DIST_PACKAGES = re.compile(r"^usr/lib/python3/dist-packages/(?P<module>.+)$")
"""Where Debian installs Python 3 modules (its Python policy)."""


def deb_name(name: str) -> str:
    """A program's name as Debian would name a package (lower case; ``_``, which Debian's
    package names never hold, as ``-``): ``qemu-system-x86_64`` -> ``qemu-system-x86-64``."""
    return name.lower().replace("_", "-")


def deb_candidates(name: str) -> list[str]:
    """The Debian packages that may ship the program ``name``, before their own file lists
    say whether they do, at most :data:`CANDIDATES`, in this order: the package named like it,
    a package named by a leading part of it (``cron`` for ``crontab``, longest first), then
    the packages whose name, provided names or short description hold it as a word
    (``apt-cache search``), those whose name holds it as a part first (``iputils-ping``),
    shorter names first."""
    wanted = deb_name(name)
    out = [wanted[:length] for length in range(len(wanted), 2, -1)
           if _deb_fields(wanted[:length])]
    word = "".join("[-_]" if c in "-_" else ("\\" + c if c in ".+*?()[]{}|^$\\" else c)
                   for c in name.lower())
    found = _cached("apt-search", name, lambda: _run(["apt-cache", "search", "--",
                                                      f"\\<{word}\\>"]))
    hits = [line.split(" - ", 1)[0].strip() for line in (found or "").splitlines()]
    hits.sort(key=lambda p: (wanted not in p.split("-"), wanted not in p, len(p), p))
    for package in hits:
        if package not in out:
            out.append(package)
    return out[:CANDIDATES]


def deb_contents(package: str) -> dict[str, Any]:
    """What a Debian package (not installed) ships on the ``PATH``, what each of those
    programs' manual pages say and the Python modules it installs (``apt-get download`` into
    a temporary folder, then its ``dpkg-deb --fsys-tarfile``): ``{"programs": [...], "man":
    {program: NAME line}, "modules": [paths under dist-packages]}``."""
    def ask() -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as folder:
            if _run(["apt-get", "download", "-q", package], timeout=600, cwd=folder) is None:
                return {"programs": [], "man": {}, "modules": []}
            debs = list(Path(folder).glob("*.deb"))
            if not debs:
                return {"programs": [], "man": {}, "modules": []}
            return _deb_programs(debs[0], Path(folder))
    answer: dict[str, Any] = _cached("deb-contents", package, ask)
    return answer


def _deb_programs(deb: Path, folder: Path) -> dict[str, Any]:
    done = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True,
                          check=False, timeout=600)
    if done.returncode != 0:
        return {"programs": [], "man": {}, "modules": []}
    programs: list[str] = []
    modules: list[str] = []
    pages: dict[str, tarfile.TarInfo] = {}
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        members = {m.name.removeprefix("./"): m for m in archive.getmembers()}
        for path, member in members.items():
            parent, _, base = path.rpartition("/")
            if parent in BIN_DIRS and (member.isfile() or member.issym()):
                programs.append(base)
            found = DIST_PACKAGES.match(path)
            if found and path.endswith(".py"):
                modules.append(found.group("module"))
        for program in programs:
            for section in ("1", "8"):
                path = f"usr/share/man/man{section}/{program}.{section}.gz"
                member = members.get(path)
                while member is not None and member.issym():  # nc.1.gz -> nc_openbsd.1.gz
                    member = members.get(posixpath.normpath(posixpath.join(
                        posixpath.dirname(path), member.linkname)))
                if member is not None and member.isfile() and program not in pages:
                    pages[program] = member
        man: dict[str, str] = {}
        for program, member in pages.items():
            source = archive.extractfile(member)
            if source is None:
                continue
            page = folder / f"{program}.page.gz"
            page.write_bytes(source.read())
            line = _man_line(str(page))
            if line:
                man[program] = line
    return {"programs": sorted(set(programs)), "man": man, "modules": sorted(modules)}


def deb_shipping(name: str) -> tuple[str, str | None] | None:
    """The Debian package, not installed, whose own file list holds exactly the program
    ``name`` in a ``PATH`` folder (:data:`BIN_DIRS`), with the program's manual page line:
    the first of :func:`deb_candidates` that does."""
    for package in deb_candidates(name):
        fields = _deb_fields(package)
        size = int((fields or {}).get("size", ["0"])[0] or 0)
        if fields is None or size > MAX_DEB_BYTES:
            continue
        contents = deb_contents(package)
        if name in contents["programs"]:
            return package, contents["man"].get(name)
    return None


def pypi_installed() -> dict[str, metadata.Distribution]:
    """Console-script name -> the installed distribution providing it."""
    scripts: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        for entry in dist.entry_points:
            if entry.group == "console_scripts":
                scripts.setdefault(entry.name, dist)
        for file in dist.files or ():  # a program the wheel ships as a script (ruff, uv)
            if file.parts[:1] == ("..",) and file.parent.name == "bin":
                scripts.setdefault(file.name, dist)
    return scripts


def _pypi_fields(meta: Any) -> dict[str, list[str]]:
    return {"text": [meta.get("Summary") or meta.get("summary") or ""],
            "classifier": list(meta.get_all("Classifier") or [])
            if hasattr(meta, "get_all") else list(meta.get("classifiers") or [])}


def pypi_project(name: str) -> dict[str, Any] | None:
    def ask() -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json",
                                        timeout=30) as response:
                info = json.load(response)["info"]
        except (urllib.error.URLError, OSError, ValueError, KeyError):
            return None
        return {"name": info.get("name"), "summary": info.get("summary"),
                "classifiers": info.get("classifiers") or []}
    answer: dict[str, Any] | None = _cached("pypi", name, ask)
    return answer


def _wheel(project: str, read: Any) -> list[str]:
    """What ``read`` finds in a PyPI project's wheel (``pip download --no-deps
    --only-binary :all:``): [] when it has none."""
    with tempfile.TemporaryDirectory() as folder:
        if _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                 ":all:", "--quiet", "-d", folder, project], timeout=180) is None:
            return []
        found: list[str] = []
        for wheel in Path(folder).glob("*.whl"):
            with zipfile.ZipFile(wheel) as archive:
                found += read(archive)
        return found


def _entry_scripts(text: str) -> list[str]:
    """The console scripts an ``entry_points.txt`` declares."""
    parser = configparser.ConfigParser(delimiters=("=",))
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    return list(parser["console_scripts"]) if parser.has_section("console_scripts") else []


def pypi_scripts(project: str) -> list[str]:
    """The console scripts of a PyPI project's wheel: a project merely named like a program
    is kept only when it ships that program."""
    def read(archive: zipfile.ZipFile) -> list[str]:
        scripts: list[str] = []
        for member in archive.namelist():
            if re.search(r"\.data/scripts/[^/]+$", member):  # ruff, uv
                scripts.append(member.rsplit("/", 1)[-1])
            if member.endswith(".dist-info/entry_points.txt"):
                scripts += _entry_scripts(archive.read(member).decode())
        return scripts
    answer: list[str] = _cached("pypi-scripts", project, lambda: _wheel(project, read))
    return answer


def pypi_top_level(project: str) -> list[str]:
    """The top-level packages and modules a PyPI project's wheel installs (its
    ``top_level.txt``, else the first part of every path its RECORD lists)."""
    def read(archive: zipfile.ZipFile) -> list[str]:
        names = archive.namelist()
        listed = [m for m in names if m.endswith(".dist-info/top_level.txt")]
        if listed:
            return archive.read(listed[0]).decode().split()
        tops = {m.split("/", 1)[0].removesuffix(".py") for m in names}
        return sorted(t for t in tops if not t.endswith((".dist-info", ".data")))
    answer: list[str] = _cached("pypi-top-level", project, lambda: _wheel(project, read))
    return answer


def npm_package(name: str) -> dict[str, Any] | None:
    def ask() -> dict[str, Any] | None:
        if shutil.which("npm") is None:
            return None
        out = _run(["npm", "view", name, "name", "bin", "keywords", "description", "--json"])
        try:
            data = json.loads(out) if out else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None
    answer: dict[str, Any] | None = _cached("npm", name, ask)
    return answer


def python_module(name: str) -> tuple[str, str, dict[str, list[str]]] | None:
    """The distribution a ``python -m`` module is part of (``django`` -> Django,
    ``grpc_tools.protoc`` -> grpcio-tools), with its metadata: the installed distribution
    that provides its top-level package, else the PyPI project named like that package whose
    own wheel installs it, else the Debian package named by Debian's Python policy
    (``python3-`` and the package's name, ``_`` as ``-``: ``python3-grpc-tools``) whose own
    file list holds the module in ``dist-packages``. (registry, package, fields)."""
    top = name.split(".", maxsplit=1)[0]
    dists = metadata.packages_distributions().get(top) or []
    if dists:
        meta = metadata.metadata(dists[0])
        return "pypi", meta["Name"], _pypi_fields(meta)
    project = pypi_project(top)
    if project and top in pypi_top_level(project["name"] or top):
        return "pypi", project["name"] or top, {"text": [project.get("summary") or ""],
                                                "classifier": project.get("classifiers") or []}
    package = "python3-" + deb_name(top)
    fields = _deb_fields(package)
    size = int((fields or {}).get("size", ["0"])[0] or 0)
    if fields is None or size > MAX_DEB_BYTES:
        return None
    path = "/".join(name.split("."))
    wanted = {f"{path}.py", f"{path}/__init__.py"}
    if wanted & set(deb_contents(package).get("modules", [])):
        return "debian", package, fields
    return None


def stdlib_doc(name: str) -> str:
    """The first paragraph of a standard-library module's own docstring, read from its source
    (``ast``; the module is never imported, never run)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    origin = spec.origin if spec else None
    if not origin or not origin.endswith(".py"):
        return ""
    try:
        doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError, ValueError):
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def _not_installed(name: str, exact: list[tuple[str, str, dict[str, list[str]]]],
                   modules: frozenset[str]) -> tuple[str, str, str, str, str] | None:
    """The purpose a distribution not installed gives, adding it to ``exact``: a ``python
    -m`` module's distribution (:func:`python_module`), else the Debian package whose own file
    list holds the program (:func:`deb_shipping`)."""
    if name in modules:  # python -m django: Django's own metadata
        found = python_module(name)
        if found:
            exact.append(found)
            return decide([found])
        return None
    if "." in name or any(registry == "debian" for registry, _, _ in exact):
        return None
    shipped = deb_shipping(name)
    deb = _deb_fields(shipped[0]) if shipped else None
    if shipped and deb:
        exact.append(("debian", shipped[0], with_man(deb, shipped[1])))
        return decide([exact[-1]])
    return None


def look_up(name: str, shell: set[str], scripts: dict[str, metadata.Distribution],
            modules: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One program's row: its purpose and the evidence that decided it.

    The packages that ship exactly this program (Debian installed, a Python console script,
    an npm ``bin``) are read together, then a Debian package not installed whose own file
    list holds it; only when none says anything is a package merely named like the program
    (Debian, then PyPI) read. ``modules`` are the names the corpora run as ``python -m``."""
    def row(decided: tuple[str, str, str, str, str] | None, tried: list[str]) -> dict[str, Any]:
        if decided is None:
            return {"purpose": None, "registry": "", "package": "", "field": "",
                    "value": "", "tried": tried}
        purpose, registry, package, field, value = decided
        return {"purpose": purpose, "registry": registry, "package": package,
                "field": field, "value": value[:160]}

    if name in shell:
        return row(("general", "bash", "bash", "builtin", "compgen -b -k"), [])
    exact: list[tuple[str, str, dict[str, list[str]]]] = []
    package = deb_installed(name)
    deb = _deb_fields(package) if package else None
    if package and deb:
        exact.append(("debian", package, with_man(deb, man_installed(name))))
    if name in scripts:
        dist = scripts[name]
        exact.append(("pypi", dist.metadata["Name"], _pypi_fields(dist.metadata)))
    npm = npm_package(name)
    bins = npm.get("bin") if npm else None
    # a string ``bin`` is one program named after the package (npm's package.json docs)
    if npm and ((isinstance(bins, str) and npm.get("name") == name)
                or (isinstance(bins, dict) and name in bins)):
        keywords = npm.get("keywords") or []
        exact.append(("npm", npm.get("name") or name,
                      {"text": [npm.get("description") or ""],
                       "keyword": [k for k in keywords if isinstance(k, str)]}))
    if not exact and cmdlet(name):
        return row(("general", "powershell", "powershell", "cmdlet",
                    "Verb-Noun with an approved verb"), [])
    for versioned in (f"{name}3", f"{name}2"):  # python -> python3, as Debian installs it
        if not exact and re.fullmatch(r"[a-z]+", name) and deb_installed(versioned):
            package = deb_installed(versioned) or ""
            deb = _deb_fields(package)
            if deb:
                exact.append(("debian", package, with_man(deb, man_installed(versioned))))
    decided = decide(exact)
    if decided is None and name.split(".", maxsplit=1)[0] in sys.stdlib_module_names:
        # python -m http.server; python -m unittest: "Python unit testing framework..."
        decided = decide([("python", "stdlib", {"text": [stdlib_doc(name)]})]) \
            or ("general", "python", "stdlib", "module", name)
    if decided is None and "." in name and MODULE_TEST.search(name):
        top = name.split(".", maxsplit=1)[0]
        dists = metadata.packages_distributions().get(top) or []
        project = None if dists else pypi_project(top)
        owner = dists[0] if dists else (project or {}).get("name")
        if owner:  # a test module of an installed or published distribution
            decided = ("test", "pypi", owner, "module", f"{name}: a test module of {owner}")
    if decided is None:
        decided = _not_installed(name, exact, modules)
    if decided is None and "." not in name:
        named: list[tuple[str, str, dict[str, list[str]]]] = []
        deb = _deb_fields(name)
        if deb:
            named.append(("debian", name, deb))
        decided = decide(named)
        if decided is None:
            project = pypi_project(name)
            if project and name in pypi_scripts(project["name"] or name):
                named = [("pypi", project["name"] or name,
                          {"text": [project.get("summary") or ""],
                           "classifier": project.get("classifiers") or []})]
                decided = decide(named)
    return row(decided, [f"{r}:{p}" for r, p, _ in exact])


# -- the table ------------------------------------------------------------------------------

def coverage(table: dict[str, Any], programs: set[str]) -> tuple[int, int]:
    """(programs with a purpose, programs) of the distinct corpus programs; the names the
    table lists as no program (:func:`not_programs`) are left out, as paths are."""
    rows = table["programs"]
    named = {p for p in programs if is_program(p)} - set(table.get("not_programs", {}))
    covered = {p for p in named if rows.get(p, {}).get("purpose")}
    return len(covered), len(named)


def sample(table: dict[str, Any], size: int = 50) -> list[str]:
    """The fixed random sample of corpus programs checked by hand."""
    names = sorted(table["corpus_programs"])
    chosen = random.Random(SAMPLE_SEED).sample(  # noqa: S311 - a sample, not a secret
        names, min(size, len(names)))
    return sorted(chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coverage", action="store_true",
                        help="print the coverage of the table as written, look nothing up")
    args = parser.parse_args()
    if args.coverage:
        table = json.loads(OUT.read_text())
        programs = set(table["corpus_programs"])
    else:
        counted, modules = corpus_programs_and_modules()
        programs = {p for p in counted if is_program(p)}
        # a program once looked up stays in the table (a rule that stops naming it, or a
        # corpus that stops running it, does not drop its row)
        known = set(json.loads(OUT.read_text())["programs"]) if OUT.exists() else set()
        names = sorted(programs | rule_programs() | known)
        shell, scripts = shell_words(), pypi_installed()
        rows = {}
        for index, name in enumerate(names):
            rows[name] = look_up(name, shell, scripts, frozenset(modules))
            print(f"\r{index + 1}/{len(names)} {name:30}", end="", file=sys.stderr)
        print(file=sys.stderr)
        table = {"version": VERSION, "generated": datetime.now(UTC).date().isoformat(),
                 "generator": "scripts/gen_program_purposes.py",
                 "purposes": list(PURPOSES),
                 "corpus_programs": sorted(programs),
                 "left_out": sum(1 for p in counted if not is_program(p)),
                 "not_programs": not_programs(rows, programs),
                 "programs": rows}
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    covered, total = coverage(table, programs)
    by_purpose = Counter(table["programs"][p]["purpose"] for p in programs
                         if p in table["programs"])
    print(f"programs run in the corpora and the lab: {total} distinct "
          f"({table['left_out']} paths and non-program words left out)")
    for name, why in table.get("not_programs", {}).items():
        print(f"  not a program: {name!r}: {why}")
    print(f"with a purpose from registry metadata: {covered}/{total} = {covered / total:.1%}")
    print("by purpose: " + ", ".join(f"{k or 'none'} {v}" for k, v in by_purpose.most_common()))
    print(f"hand-checked sample: seed {SAMPLE_SEED}, {len(sample(table))} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
