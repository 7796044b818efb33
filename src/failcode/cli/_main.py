"""The ``failcode`` command line.

Exit codes: 0 success; 1 a check failed (the problems are printed); 2 a usage error (an unknown
code, a catalog that cannot be imported, a missing file). A catalog module that raises, has a
syntax error or calls ``sys.exit`` on import is a usage error naming the module and the error,
never a traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

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

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

_CATALOG_HELP = "The catalog to use, as module:attribute (a Catalog or its CodeEnum). Default: FC."


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


def _table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                     .rstrip() for row in rows)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="failcode")
def main() -> None:
    """failcode: one error taxonomy and failure handling for AI agent systems."""


@main.group(invoke_without_command=True)
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the codes as JSON.")
@click.pass_context
def codes(ctx: click.Context, catalog_spec: str | None, as_json: bool) -> None:
    """List the codes of a catalog as a table (or manage its lock and docs)."""
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
    rows = [("CODE", "SLUG", "KIND", "CATEGORY", "RETRYABILITY", "STATUS")]
    rows += [(s.code, s.slug, s.kind.value, s.category.value, s.effective_retryability.value,
              "retired" if s.retired else "active") for s in specs]
    click.echo(_table(rows))
    click.echo(f"\n{len(specs)} codes in {catalog.prefix}; `failcode explain CODE` for one.")


@codes.command("check")
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR", help=_CATALOG_HELP)
@click.option("--lock", "lock_path", type=click.Path(path_type=Path),
              help="The lock file. Default: <prefix>-codes.lock.json beside the catalog module.")
def codes_check(catalog_spec: str | None, lock_path: Path | None) -> None:
    """Fail (exit 1) when the enumeration breaks the lock or the registry's rules."""
    catalog = _checked_catalog(catalog_spec)
    path = lock_path or _default_lock(catalog)
    if not path.exists():
        msg = f"no lock file at {path}; create it with `failcode codes lock`"
        click.echo(f"error: {msg}", err=True)
        raise SystemExit(1)
    try:
        lock = read_lock(path)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    lock_problems = check_lock(catalog, lock)
    for lock_problem in lock_problems:
        click.echo(f"error: {lock_problem.message}", err=True)
    if lock_problems:
        raise SystemExit(1)
    click.echo(f"ok: {len(catalog)} codes of {catalog.prefix} agree with {path.name}")


@codes.command("lock")
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
    click.echo(f"locked {len(new['codes'])} codes in {path}"
               + (f" (new: {', '.join(added)})" if added else " (no new codes)"))


@codes.command("docs")
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md",
              show_default=True)
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


@main.command("explain")
@click.argument("code")
@click.option("--catalog", "catalog_spec", metavar="MODULE:ATTR",
              help="Also load this catalog (module:attribute) before looking the code up.")
def explain(code: str, catalog_spec: str | None) -> None:
    """Print one code's meaning, impact, remedy, example and status (like rustc --explain)."""
    from failcode.codes._docs import explain_text  # noqa: PLC0415 - only this command needs it

    _load_catalog(catalog_spec)
    wanted = code.strip()
    for catalog in catalogs():
        for spec in catalog:
            if wanted.upper() == spec.code or wanted.lower() == spec.slug:
                click.echo(explain_text(catalog, spec), nl=False)
                return
    suggestions = suggest_codes(wanted)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    raise _UsageError(f"unknown code {wanted!r}{hint}")


@main.command("schema")
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


@main.command("doctor")
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="failcode.toml or pyproject.toml. Default: found in the working directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the failures as JSON.")
def doctor(config_path: Path | None, as_json: bool) -> None:
    """Run the configured start-up checks; exit 1 when any fails, each printed with its remedy."""
    config = _config_or_exit(config_path)
    results = [(check, check.run()) for check in config.preflight]
    failures = [failure for _, failure in results if failure is not None]
    if as_json:
        click.echo(json.dumps([f.to_dict() for f in failures], indent=2))
    else:
        for check, failure in results:
            if failure is None:
                click.echo(f"ok    {check.label}")
            else:
                click.echo(f"FAIL  {check.label}: [{failure.code}] {failure.message}")
                click.echo(f"      remedy: {failure.remedy}")
        source = config.source or "no configuration file (nothing to check)"
        click.echo(f"\n{len(results)} checks from {source}, {len(failures)} failed.")
    if failures:
        raise SystemExit(1)


@main.group("config")
def config_group() -> None:
    """Check failcode's configuration (failcode.toml or [tool.failcode] in pyproject.toml)."""


@config_group.command("check")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the effective policy as JSON.")
def config_check(path: Path | None, as_json: bool) -> None:
    """Exit 1 listing every invalid value (file, line, key, value, range); else print the
    effective policy."""
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
    click.echo(f"ok: {config.source or 'no configuration file; failcode defaults'}")
    rows = [("CLASS", "ATTEMPTS", "INITIAL_S", "MAX_S", "MULTIPLIER", "DEADLINE_S")]
    rows += [(name, str(c["attempts"]), f"{c['initial_delay_s']:g}", f"{c['max_delay_s']:g}",
              f"{c['multiplier']:g}", f"{c['deadline_s']:g}")
             for name, c in summary["retry"].items()]
    click.echo(_table(rows))
    for table in ("budget", "ladder", "server_delay", "defects", "models", "monitor"):
        values = ", ".join(f"{k} = {json.dumps(v)}" for k, v in summary[table].items())
        click.echo(f"[{table}] {values}")
    click.echo(f"[preflight] {len(config.preflight)} checks"
               + (f": {', '.join(summary['preflight'])}" if config.preflight else ""))
main.add_command(importlib.import_module("failcode.triage._cli").triage_command)


main.add_command(importlib.import_module("failcode.store._cli").store)  # failcode store ...
