"""The ``failcode`` command line: the group, its own small commands, and the registry of
commands that live in modules of their own.

Exit codes: 0 success; 1 a check failed (the problems are printed); 2 a usage error (an unknown
code, a catalog that cannot be imported, a missing file). A catalog module that raises, has a
syntax error or calls ``sys.exit`` on import is a usage error naming the module and the error,
never a traceback.
``failcode run`` exits with the
boundary table's code of the failure it reports.

Presentation goes through :mod:`failcode.cli._output`: rich on a terminal (``NO_COLOR``
respected), plain text when piped. Every command's help has a one-line summary that fits the
command list and at least one example.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from failcode.cli._dym import DidYouMeanGroup
from failcode.cli._output import count, echo, table
from failcode.codes._registry import (
    Catalog,
    CatalogError,
    CodeEnum,
    catalogs,
    check_lock,
    dump_lock,
    read_lock,
    suggest_codes,
    update_lock,
)

__all__ = ["main"]

_CATALOG_HELP = "The catalog to use, as module:attribute (a Catalog or its CodeEnum). Default: FC."

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

COMMANDS: dict[str, str] = {
    # name -> "module:attribute" of a click command in its own module, imported on first use.
    # One line per command; keep the block sorted.
    "classify": "failcode.cli._classify:classify",
    "hook": "failcode.live._cli:hook_command",
    "hooks": "failcode.live._cli:hooks_group",
    "mcp": "failcode.mcp._cli:mcp_command",
    "pipeline": "failcode.cli._pipeline:pipeline",
    "project": "failcode.service._cli:project",
    "report": "failcode.triage._cli:report_command",
    "run": "failcode.cli._run:run",
    "serve": "failcode.service._cli:serve_command",
    # the store's group, with the findings commands of the service added to it
    "store": "failcode.service._cli:store",
    "token": "failcode.service._cli:token",
    "triage": "failcode.triage._cli:triage_command",
    "webhook": "failcode.service._cli:webhook",
}
"""The commands that live in modules of their own (the rest are defined below)."""


class _Group(DidYouMeanGroup):
    """A group that also lists :data:`COMMANDS`, importing each one only when it is used, and
    answers a mistyped command with the nearest ones (click-didyoumean)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command


def _examples(*lines: str) -> str:
    """A help epilog listing examples, kept as written (click does not rewrap it)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _lock_hint(catalog_spec: str | None) -> str:
    """The ``codes lock`` command to suggest, keeping the ``--catalog`` the user gave."""
    return "failcode codes lock" + (f" --catalog {catalog_spec}" if catalog_spec else "")


class _UsageError(click.ClickException):
    exit_code = 2


def _load_catalog(spec: str | None) -> Catalog:
    """Import a catalog; a CatalogError propagates (it is a check failure, not a usage error)."""
    if spec is None:
        from failcode.codes._catalog import FC_CATALOG  # noqa: PLC0415 - only the CLI needs it here

        return FC_CATALOG
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        msg = f"--catalog {spec!r}: expected module:attribute, e.g. mypkg.errors:AFK"
        raise _UsageError(msg)
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except CatalogError:
        raise
    except ImportError as exc:
        msg = f"--catalog {spec!r}: cannot import {module_name!r} ({exc})"
        raise _UsageError(msg) from None
    except SystemExit as exc:
        msg = f"--catalog {spec!r}: importing {module_name!r} called sys.exit({exc.code!r})"
        raise _UsageError(msg) from None
    except Exception as exc:  # noqa: BLE001 - the user's module: any error is a usage error
        msg = (f"--catalog {spec!r}: importing {module_name!r} failed: "
               f"{type(exc).__name__}: {_one_line(exc)}")
        raise _UsageError(msg) from None
    finally:
        sys.path.pop(0)
    value = getattr(module, attribute, None)
    if isinstance(value, Catalog):
        return value
    if isinstance(value, type) and issubclass(value, CodeEnum):
        for catalog in catalogs():
            if catalog.codes is value:
                return catalog
        msg = f"--catalog {spec!r}: {attribute} is a CodeEnum no Catalog was declared for"
        raise _UsageError(msg)
    msg = f"--catalog {spec!r}: {attribute} is not a failcode Catalog or CodeEnum"
    raise _UsageError(msg)


def _one_line(exc: BaseException, limit: int = 300) -> str:
    try:
        text = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - a __str__ that raises still gets reported
        text = "<unprintable>"
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _checked_catalog(spec: str | None) -> Catalog:
    """The catalog; a declaration that breaks the registry's rules is a check failure (exit 1)."""
    try:
        return _load_catalog(spec)
    except CatalogError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(1) from None


def _default_lock(catalog: Catalog) -> Path:
    module = sys.modules[catalog.codes.__module__]
    base = Path(module.__file__).parent if module.__file__ else Path.cwd()
    return base / f"{catalog.prefix.lower()}-codes.lock.json"


@click.group(cls=_Group, context_settings=_CONTEXT, invoke_without_command=True,
             epilog=_examples("failcode run -- make build",
                              "failcode classify < traceback.txt",
                              "failcode explain FC-CMD-001",
                              "failcode codes",
                              "failcode COMMAND --help"))
@click.version_option(package_name="failcode")
@click.pass_context
def main(ctx: click.Context) -> None:
    """failcode: one error taxonomy and failure handling for AI agent systems.

    Turns any failure (a command, an exception, an HTTP error) into one record with a stable
    code, says what to do next, and explains it to people. With no command, prints this help.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


@main.group(cls=DidYouMeanGroup, invoke_without_command=True,
            short_help="List a catalog's codes; check, lock, document them.",
            epilog=_examples("failcode codes", "failcode codes --json",
                             "failcode codes --catalog mypkg.errors:AFK",
                             "failcode codes check"))
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the codes as JSON.")
@click.pass_context
def codes(ctx: click.Context, catalog_spec: str | None, as_json: bool) -> None:
    """List the codes of a catalog as a table, or manage its lock file and reference."""
    if ctx.invoked_subcommand is not None:
        return
    catalog = _load_catalog(catalog_spec)
    specs = list(catalog)
    if as_json:
        click.echo(json.dumps([{
            "code": s.code, "slug": s.slug, "kind": s.kind.value, "category": s.category.value,
            "severity": s.severity.value, "retryability": s.effective_retryability.value,
            "retired": s.retired} for s in specs], indent=2))
        return
    table(("CODE", "SLUG", "KIND", "CATEGORY", "RETRYABILITY", "STATUS"),
          [(s.code, s.slug, s.kind.value, s.category.value, s.effective_retryability.value,
            "retired" if s.retired else "active") for s in specs])
    echo(f"\n{count(len(specs), 'code')} in {catalog.prefix}; `failcode explain CODE` prints "
         "one.")


@codes.command("check", short_help="Exit 1 when the codes break the lock or the rules.",
               epilog=_examples("failcode codes check",
                                "failcode codes check --catalog mypkg.errors:AFK"))
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--lock", "lock_path", type=click.Path(path_type=Path),
              help="The lock file. Default: <prefix>-codes.lock.json beside the catalog module.")
def codes_check(catalog_spec: str | None, lock_path: Path | None) -> None:
    """Exit 1, naming each code, when the enumeration breaks the lock or the registry's rules:
    a locked code deleted, reused or re-kinded, or a new code not locked yet."""
    catalog = _checked_catalog(catalog_spec)
    path = lock_path or _default_lock(catalog)
    if not path.exists():
        msg = f"no lock file at {path}; create it with `{_lock_hint(catalog_spec)}`"
        click.echo(f"error: {msg}", err=True)
        raise SystemExit(1)
    try:
        lock = read_lock(path)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    lock_problems = check_lock(catalog, lock)
    for lock_problem in lock_problems:
        message = lock_problem.message.replace("`failcode codes lock`",
                                               f"`{_lock_hint(catalog_spec)}`")
        click.echo(f"error: {message}", err=True)
    if lock_problems:
        raise SystemExit(1)
    echo(f"ok: {count(len(catalog), 'code')} of {catalog.prefix} agree with {path.name}")


@codes.command("lock", short_help="Record new and newly retired codes in the lock file.",
               epilog=_examples("failcode codes lock",
                                "failcode codes lock --catalog mypkg.errors:AFK"))
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--lock", "lock_path", type=click.Path(path_type=Path),
              help="The lock file. Default: <prefix>-codes.lock.json beside the catalog module.")
def codes_lock(catalog_spec: str | None, lock_path: Path | None) -> None:
    """Record new codes (and newly retired ones) in the lock file; never rewrite old entries."""
    catalog = _checked_catalog(catalog_spec)
    path = lock_path or _default_lock(catalog)
    old: dict[str, Any] | None = read_lock(path) if path.exists() else None
    try:
        new = update_lock(catalog, old)
    except ValueError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(1) from None
    added = sorted(set(new["codes"]) - set(old["codes"] if old else {}))
    path.write_text(dump_lock(new), encoding="utf-8")
    echo(f"locked {count(len(new['codes']), 'code')} in {path}"
         + (f" (new: {', '.join(added)})" if added else " (no new codes)"))


@codes.command("docs", short_help="Generate the code reference (Markdown, JSON or HTML).",
               epilog=_examples("failcode codes docs -o docs/codes.md",
                                "failcode codes docs --format json --catalog mypkg.errors:AFK"))
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md",
              show_default=True, help="The output format.")
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Write to this file instead of standard output.")
def codes_docs(fmt: str, catalog_spec: str | None, output: Path | None) -> None:
    """Generate the code reference from the enumeration."""
    from failcode.codes._docs import render_docs  # noqa: PLC0415 - only this command needs it

    text = render_docs(_load_catalog(catalog_spec), fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")


@main.command("explain", short_help="Explain a code or a signature: meaning, remedy, parts.",
              epilog=_examples("failcode explain FC-CMD-001",
                               "failcode explain command-not-found",
                               "failcode explain "
                               "dependency_error:python.run:missing_module:none:83f5d36f",
                               "failcode explain SIGNATURE --store sqlite:///failcode.db",
                               "failcode explain AFK-PERC-003 --catalog mypkg.errors:AFK"))
@click.argument("code")
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR",
              help="Also load this catalog (module:attribute) before looking the code up.")
@click.option("--store", "store_url", metavar="URL",
              help="For a signature: also show what this store knows of it (its code, "
                   "counts, the signature's parts recomputed from a stored failure, known "
                   "remedies; e.g. --store sqlite:///failcode.db).")
def explain(code: str, catalog_spec: str | None, store_url: str | None) -> None:
    """Print one code's meaning, impact, remedy, example and status (like rustc --explain),
    or what a signature is made of.

    CODE is a code (FC-CMD-001), its slug (command-not-found) or a signature
    (kind:surface:class:location:digest, as triage prints them); an unknown code exits 2 and
    suggests the nearest.
    """
    from failcode.codes._docs import explain_text  # noqa: PLC0415 - only this command needs it

    _load_catalog(catalog_spec)
    wanted = code.strip()
    if wanted.count(":") >= 4:  # a signature has five parts
        _explain_signature(wanted, store_url)
        return
    for catalog in catalogs():
        for spec in catalog:
            if wanted.upper() == spec.code or wanted.lower() == spec.slug:
                click.echo(explain_text(catalog, spec), nl=False)
                return
    suggestions = suggest_codes(wanted)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    raise _UsageError(f"unknown code {wanted!r}{hint}")


def _explain_signature(signature: str, store_url: str | None) -> None:
    """A signature's visible parts, the codes it can come from and, with a store, what the
    store knows of it."""
    from failcode.codes._docs import explain_text  # noqa: PLC0415 - only this command needs it

    kind, surface, error_class, *middle, digest = signature.split(":")
    location = ":".join(middle)
    click.echo(f"signature {signature}")
    click.echo(f"  kind      {kind} (what failed)")
    click.echo(f"  surface   {surface} (where: the entry point or tool family)")
    click.echo(f"  class     {error_class} (the failure's class within its kind)")
    click.echo(f"  location  {location if location != 'none' else '(none)'}")
    click.echo(f"  digest    {digest} (of the kind, surface, class, location, status, "
               "diagnostic and normalized message)")
    specs = [(catalog, spec) for catalog in catalogs() for spec in catalog
             if spec.kind.value == kind and spec.error_class == error_class]
    known: list[str] = []
    if store_url is not None:
        known = _explain_from_store(signature, store_url)
    codes = [spec.code for _, spec in specs]
    if known:
        codes = [code for code in codes if code in known] or known
    if not specs and not known:
        click.echo("\nNo code of this catalog has that kind and class.")
        return
    for catalog, spec in specs:
        if spec.code in codes:
            click.echo("")
            click.echo(explain_text(catalog, spec), nl=False)


def _explain_from_store(signature: str, store_url: str) -> list[str]:
    """Print what the store knows of ``signature``; the codes it was recorded with."""
    from failcode import explain_signature  # noqa: PLC0415
    from failcode.store._cli import _opened  # noqa: PLC0415 - the same rules as `store`

    with _opened(store_url, read_only=True) as store:
        history = store.history(signature)
        remedies = store.known_remedies(signature)
    if history.diagnostic is None:
        click.echo(f"\nThe store {store_url} has no event of this signature.")
        return []
    row = history.diagnostic
    click.echo(f"\nIn {store_url}: {row.code}, {row.count} events")
    failure = next((e.failure for e in history.events if getattr(e, "failure", None)), None)
    if failure is not None:
        click.echo("  parts recomputed from a stored failure:")
        for part in explain_signature(failure).components:
            mark = "+" if part.contributes else " "
            click.echo(f"   {mark} {part.name:<10} {part.value!s:<40.40} {part.hint}")
    for remedy in remedies:
        click.echo(f"  remedy ({remedy.status}, worked {remedy.worked} of {remedy.tried}): "
                   f"{remedy.remedy}")
    return [row.code]


@main.command("schema", short_help="Print the JSON Schema of a Failure's JSON form.",
              epilog=_examples("failcode schema > failure.schema.json"))
def schema() -> None:
    """Print the JSON Schema of the canonical Failure JSON form."""
    from failcode.record._failure import failure_json_schema  # noqa: PLC0415 - only this command

    click.echo(json.dumps(failure_json_schema(), indent=2, sort_keys=True))


# -- start-up checks and configuration (issue 5) ----------------------------------------------


def _config_or_exit(path: Path | None) -> Any:
    """Load the configuration; print every problem and exit 1 when it is refused."""
    from failcode.policy._config import ConfigError, load_config  # noqa: PLC0415 - only these commands

    if path is not None and not path.is_file():
        raise _UsageError(f"no configuration file at {path}")
    try:
        return load_config(path)
    except ConfigError as exc:
        for problem in exc.problems:
            click.echo(f"error: [{problem.code}] {problem.message}", err=True)
            if problem.remedy:
                click.echo(f"  remedy: {problem.remedy}", err=True)
        raise SystemExit(1) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _UsageError(f"cannot read the configuration {path}: {exc}") from None


_NO_CHECKS_HINT = """\
No start-up checks are configured. Declare some in a [preflight] table of failcode.toml
(or [tool.failcode.preflight] in pyproject.toml), for example:

  [preflight]
  programs = ["git", "make"]        # must be on PATH
  modules = ["openai"]              # must be importable
  env = ["OPENAI_API_KEY"]          # must be set and non-empty
  credentials_files = ["~/.netrc"]  # must exist and be readable
  writable_dirs = ["~/.cache"]      # must exist and be writable

`failcode config init` writes a commented failcode.toml to start from."""


@main.command("doctor", short_help="Run the configured start-up checks (exit 1 if any fails).",
              epilog=_examples("failcode doctor", "failcode doctor --config pyproject.toml",
                               "failcode doctor --json"))
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="failcode.toml or pyproject.toml. Default: found in the working directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the failures as JSON.")
def doctor(config_path: Path | None, as_json: bool) -> None:
    """Run the start-up checks of the configuration's [preflight] table; exit 1 when any fails,
    each failure printed with its remedy."""
    config = _config_or_exit(config_path)
    results = [(check, check.run()) for check in config.preflight]
    failures = [failure for _, failure in results if failure is not None]
    if as_json:
        click.echo(json.dumps([f.to_dict() for f in failures], indent=2))
    elif not results:
        echo(f"{config.source or 'No configuration file found'}: nothing to check.\n")
        echo(_NO_CHECKS_HINT)
    else:
        for check, failure in results:
            if failure is None:
                echo(f"ok    {check.label}", style="green")
            else:
                echo(f"FAIL  {check.label}: [{failure.code}] {failure.message}", style="red")
                echo(f"      remedy: {failure.remedy}")
        echo(f"\n{count(len(results), 'check')} from {config.source}, {len(failures)} failed.")
    if failures:
        raise SystemExit(1)


@main.group("config", cls=DidYouMeanGroup,
            short_help="Check, document or start failcode's configuration.",
            epilog=_examples("failcode config check", "failcode config init",
                             "failcode config docs -o docs/config.md"))
def config_group() -> None:
    """Check, document or start failcode's configuration: failcode.toml, or a [tool.failcode]
    table in pyproject.toml."""


@config_group.command("check", short_help="Validate the configuration; print the policy.",
                      epilog=_examples("failcode config check",
                                       "failcode config check pyproject.toml --json"))
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the effective policy as JSON.")
def config_check(path: Path | None, as_json: bool) -> None:
    """Exit 1 listing every invalid value (file, line, key, value, permitted range); else print
    the effective policy under its real key names.

    PATH is a failcode.toml or pyproject.toml; default: the one in the working directory, else
    failcode's defaults.
    """
    config = _config_or_exit(path)
    policy = config.policy
    summary: dict[str, Any] = {
        "source": config.source,
        "retry": {name: {"attempts": c.max_attempts, "initial_delay_s": c.initial_delay_s,
                         "max_delay_s": c.max_delay_s, "multiplier": c.multiplier,
                         "deadline_s": c.deadline_s} for name, c in policy.classes.items()},
        "budget": {"capacity": policy.budget.capacity, "retry_cost": policy.budget.retry_cost,
                   "success_refund": policy.budget.success_refund},
        "ladder": {"change_repeats": policy.ladder.change_repeats,
                   "route_repeats": policy.ladder.route_repeats},
        "server_delay": {"ceiling_s": policy.retry_after_ceiling_s},
        "defects": {"continue_noncritical": policy.continue_noncritical_defects},
        "models": {"fallbacks": list(policy.fallback_models)},
        "monitor": {"signature_repeats": policy.monitor.signature_repeats,
                    "rejected_actions": policy.monitor.rejected_actions,
                    "no_matches": policy.monitor.no_matches},
        "preflight": [check.label for check in config.preflight],
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    echo(f"ok: {config.source or 'no configuration file; failcode defaults'}")
    keys = ("attempts", "initial_delay_s", "max_delay_s", "multiplier", "deadline_s")
    table(("[retry.<class>]", *keys),
          [(name, *(f"{values[key]:g}" for key in keys))
           for name, values in summary["retry"].items()])
    for name in ("budget", "ladder", "server_delay", "defects", "models", "monitor"):
        values = ", ".join(f"{k} = {json.dumps(v)}" for k, v in summary[name].items())
        echo(f"[{name}] {values}")
    echo(f"[preflight] {count(len(config.preflight), 'check')}"
         + (f": {', '.join(summary['preflight'])}" if config.preflight else ""))


@config_group.command("docs", short_help="Print the reference of every configuration key.",
                      epilog=_examples("failcode config docs",
                                       "failcode config docs -o docs/config.md"))
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Write to this file instead of standard output.")
def config_docs(output: Path | None) -> None:
    """Print the reference of every failcode.toml / [tool.failcode] key (type, default,
    permitted range, what it changes) as Markdown, generated from the validator's schema."""
    from failcode.policy._config_docs import config_reference  # noqa: PLC0415 - this command only

    text = config_reference()
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        echo(f"wrote {output}")


@config_group.command("init", short_help="Write a commented failcode.toml with every key.",
                      epilog=_examples("failcode config init", "failcode config init -o ci.toml",
                                       "failcode config init --stdout"))
@click.option("--output", "-o", type=click.Path(path_type=Path), default=Path("failcode.toml"),
              show_default=True, help="Where to write it; an existing file is kept.")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print it instead of writing a file.")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def config_init(output: Path, to_stdout: bool, force: bool) -> None:
    """Write a failcode.toml that sets every key to its default, each commented with what it
    changes and its permitted range; edit the values you want to change."""
    from failcode.policy._config_docs import example_toml  # noqa: PLC0415 - this command only

    text = example_toml()
    if to_stdout:
        click.echo(text, nl=False)
        return
    if output.exists() and not force:
        raise _UsageError(f"{output} exists; pass --force to overwrite it, or -o another path")
    output.write_text(text, encoding="utf-8")
    echo(f"wrote {output}; check it with `failcode config check {output}`")
