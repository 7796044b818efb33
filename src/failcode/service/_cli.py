"""The service's commands: ``failcode serve``, ``project``, ``token``, ``webhook``, and the
findings commands of ``failcode store`` (``findings``, ``resolve``, ``ignore``, ``reopen``).

Every command takes ``--store URL`` (default: ``FAILCODE_STORE``, ``[store] url`` of
failcode.toml, or the embedded store), the service's control store. The findings commands act
on a project's store with ``--project P``, or, without it, on the store ``--store`` names
itself (any failcode store can keep findings: one ``failcode triage --store`` filled, too).
A new key is printed once, on standard output, and never again.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from failcode.store._cli import (
    _common,
    _examples,
    _opened,
    _print_json,
    _report,
    _settings,
    _table,
    printable,
    store,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from failcode.service._control import Control
    from failcode.store import Store

__all__ = ["project", "serve_command", "store", "token", "webhook"]


def _failures(function: Callable[..., Any]) -> Callable[..., Any]:
    """Report a FailureError as the store commands do (its code, message, remedy; exit 1)."""
    from failcode import FailureError  # noqa: PLC0415

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except FailureError as exc:
            _report(exc.failure)

    return run


@contextmanager
def _control(url: str | None) -> Iterator[Control]:
    from failcode.service._control import Control  # noqa: PLC0415

    with _opened(url) as opened:
        yield Control(opened)


def _when(us: int | None) -> str:
    if us is None:
        return ""
    return datetime.fromtimestamp(us / 1e6, UTC).strftime("%Y-%m-%d %H:%M")


# -- failcode serve ----------------------------------------------------------------------------
@click.command("serve", epilog=_examples(
    "failcode serve",
    "failcode serve --store postgresql://failcode@db/failcode --host 0.0.0.0",
    "failcode serve --store sqlite:///var/lib/failcode/failcode.db --port 8321",
    "failcode serve --read-timeout 60 --max-connections 4000",
    "failcode serve --host 0.0.0.0 --forwarded-allow-ips 10.0.0.5",
    "failcode serve --tls-cert cert.pem --tls-key key.pem",
    "failcode serve --webhook-allow 10.0.0.0/8,127.0.0.1/32",
    "failcode serve --workers 4 --store postgresql://failcode@db/failcode"))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(1, 65535), default=8321, show_default=True,
              help="The TCP port to listen on.")
@click.option("--store", "url", metavar="URL",
              help="The control store: sqlite:///path.db or postgresql://...; default: "
                   "FAILCODE_STORE, [store] url, or the embedded store.")
@click.option("--public-url", metavar="URL", help="How people reach the service (alert links).")
@click.option("--prune-interval", type=click.FloatRange(0), default=3600, show_default=True,
              help="Seconds between retention runs (0: never).")
@click.option("--rate", "rate", type=click.IntRange(1), default=1200, show_default=True,
              help="Requests per key and minute.")
@click.option("--read-timeout", type=click.FloatRange(0, min_open=True), default=30,
              show_default=True,
              help="Seconds a request (line, headers, body) may take to arrive after the "
                   "connection opens or the previous answer; the connection is closed after.")
@click.option("--keep-alive", type=click.IntRange(1), default=5, show_default=True,
              help="Seconds an idle connection is kept open after an answer.")
@click.option("--max-connections", type=click.IntRange(2), default=1000, show_default=True,
              help="Connections open at once; a request on one more is answered 503.")
@click.option("--forwarded-allow-ips", "forwarded", metavar="ADDRESSES", default="",
              help="Comma-separated addresses or networks of the proxies in front whose "
                   "X-Forwarded-Proto and X-Forwarded-For are believed ('*': any); default: "
                   "none, the headers are ignored.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="Serve HTTPS with this certificate chain (with --tls-key).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="The private key of --tls-cert.")
@click.option("--webhook-allow", "webhook_allow", metavar="NETWORKS",
              help="Comma-separated networks in CIDR notation a webhook may reach although "
                   "they are not public (an internal receiver); default: "
                   "FAILCODE_WEBHOOK_ALLOW, else none.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes on the one port; they and any replicas on the same store "
                   "share rate limits, sign-in sessions, alerts and retention.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="info", show_default=True, help="What the server logs.")
def serve_command(host: str, port: int, url: str | None, public_url: str | None,
                  prune_interval: float, rate: int, read_timeout: float, keep_alive: int,
                  max_connections: int, forwarded: str, tls_cert: str | None,
                  tls_key: str | None, webhook_allow: str | None, workers: int,
                  log_level: str) -> None:
    """Receive failures from agents on many machines: failcode events, OTLP, raw failures."""
    try:
        from failcode.service import ServiceConfig, serve  # noqa: PLC0415
        from failcode.service._app import create_app  # noqa: PLC0415, F401 - needs FastAPI
    except ImportError as exc:
        raise click.ClickException(f"failcode serve needs the serve extra ({exc.name} is "
                                   "missing): pip install 'failcode[serve]'") from None
    from failcode.store import StoreError, default_store_url  # noqa: PLC0415

    resolved, _thresholds = _settings(url)
    config = ServiceConfig(store_url=resolved or default_store_url(), public_url=public_url,
                           prune_interval_s=prune_interval, rate_per_minute=rate,
                           read_timeout_s=read_timeout, keep_alive_s=keep_alive,
                           max_connections=max_connections,
                           forwarded_allow=_proxies(forwarded), tls_cert=tls_cert,
                           tls_key=tls_key, webhook_allow=_allowed(webhook_allow))
    _check_tls(tls_cert, tls_key)
    try:
        from failcode.service._service import Service  # noqa: PLC0415

        Service(config).close()  # opens (and migrates) the stores now: errors before serving
    except StoreError as exc:
        _report(exc.failure)
    scheme = "https" if config.tls_cert else "http"
    click.echo(f"failcode serve: {scheme}://{host}:{port} (store "
               f"{printable(config.store_url)})", err=True)
    serve(config, host=host, port=port, log_level=log_level, workers=workers)


def _allowed(text: str | None) -> tuple[str, ...] | None:
    """``--webhook-allow``: the networks, each checked as the service checks them, else a usage
    error naming it; None without the option (the environment's list)."""
    if text is None:
        return None
    from failcode import FailureError  # noqa: PLC0415
    from failcode.service._alerts import allow_networks  # noqa: PLC0415

    try:
        return tuple(str(network) for network in allow_networks(text))
    except FailureError as exc:
        raise click.BadParameter(str(exc.failure.params.get("problem") or exc),
                                 param_hint="--webhook-allow") from None


def _proxies(text: str) -> tuple[str, ...]:
    """``--forwarded-allow-ips``: each entry an address, a network or ``*``, else a usage
    error naming it."""
    import ipaddress  # noqa: PLC0415

    entries = tuple(part.strip() for part in text.split(",") if part.strip())
    for entry in entries:
        if entry == "*":
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise click.BadParameter(
                f"{entry!r} is not an address or a network (expected e.g. 10.0.0.5, "
                "10.0.0.0/8 or *)", param_hint="--forwarded-allow-ips") from None
    return entries


def _check_tls(cert: str | None, key: str | None) -> None:
    """``--tls-cert`` and ``--tls-key``: both or neither, and a pair that loads."""
    import ssl  # noqa: PLC0415

    if cert is None and key is None:
        return
    if cert is None or key is None:
        raise click.UsageError("--tls-cert and --tls-key go together: give both, or neither "
                               "to serve plain HTTP")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise click.UsageError(f"--tls-cert {cert} with --tls-key {key} does not load as a PEM "
                               f"certificate chain and its private key ({exc})") from None


# -- failcode project --------------------------------------------------------------------------
@click.group("project", epilog=_examples(
    "failcode project create web-agents",
    "failcode project create ci --retention-days 30",
    "failcode project list"))
def project() -> None:
    """Projects of the service: each keeps its own events, findings and keys."""


@project.command("create", epilog=_examples(
    "failcode project create web-agents",
    "failcode project create ci --retention-days 30"))
@click.argument("name")
@click.option("--retention-days", type=int, default=None,
              help="Days events are kept (default 90, at least 1).")
@_common
@_failures
def project_create(name: str, retention_days: int | None, url: str | None,
                   as_json: bool) -> None:
    """Make a project."""
    from failcode.service._control import DEFAULT_RETENTION_DAYS  # noqa: PLC0415

    with _control(url) as control:
        made = control.create_project(name, retention_days=retention_days
                                      or DEFAULT_RETENTION_DAYS)
    if as_json:
        _print_json(made)
    else:
        click.echo(f"project {made.name} created (retention {made.retention_days} days)")


@project.command("list", epilog=_examples(
    "failcode project list",
    "failcode project list --json"))
@_common
@_failures
def project_list(url: str | None, as_json: bool) -> None:
    """List the projects."""
    with _control(url) as control:
        found = control.projects()
    if as_json:
        _print_json(found)
        return
    _table(["PROJECT", "RETENTION", "CREATED"],
           [[p.name, f"{p.retention_days} d", _when(p.created_us)] for p in found])


@project.command("retention", epilog=_examples(
    "failcode project retention web-agents 30"))
@click.argument("name")
@click.argument("days", type=int)
@_common
@_failures
def project_retention(name: str, days: int, url: str | None, as_json: bool) -> None:
    """Set how many days a project keeps its events (counts and findings stay)."""
    with _control(url) as control:
        changed = control.set_retention(name, days)
    if as_json:
        _print_json(changed)
    else:
        click.echo(f"project {changed.name}: retention {changed.retention_days} days")


# -- failcode token ----------------------------------------------------------------------------
@click.group("token", epilog=_examples(
    "failcode token create --project web-agents --scope ingest",
    "failcode token list --project web-agents",
    "failcode token revoke 7kq2mxw9pd3a"))
def token() -> None:
    """Keys of the service: ingest (write-only), read and admin, per project."""


@token.command("create", epilog=_examples(
    'failcode token create --project web-agents --scope ingest --note "CI runners"',
    "failcode token create --project web-agents --scope read"))
@click.option("--project", "project_name", required=True, help="The key's project.")
@click.option("--scope", type=click.Choice(["ingest", "read", "admin"]), required=True,
              help="ingest: the doors in only; read: every GET; admin: everything.")
@click.option("--note", default="", help="What the key is for (shown by list).")
@_common
@_failures
def token_create(project_name: str, scope: str, note: str, url: str | None,
                 as_json: bool) -> None:
    """Make a key and print it once (only its digest is kept)."""
    with _control(url) as control:
        key, row = control.create_key(project_name, scope, note=note)
    if as_json:
        _print_json({"key": key, "key_id": row.key_id, "project": row.project,
                     "scope": row.scope})
        return
    click.echo(key)
    click.echo(f"{row.scope} key {row.key_id} for project {row.project}: shown once, keep it "
               "now", err=True)


@token.command("list", epilog=_examples(
    "failcode token list",
    "failcode token list --project web-agents --json"))
@click.option("--project", "project_name", help="Only this project's keys.")
@_common
@_failures
def token_list(project_name: str | None, url: str | None, as_json: bool) -> None:
    """List the keys (their ids, never the keys)."""
    with _control(url) as control:
        found = control.keys(project_name)
    if as_json:
        _print_json(found)
        return
    _table(["KEY ID", "PROJECT", "SCOPE", "CREATED", "REVOKED", "NOTE"],
           [[k.key_id, k.project, k.scope, _when(k.created_us), _when(k.revoked_us), k.note]
            for k in found])


@token.command("revoke", epilog=_examples(
    "failcode token revoke 7kq2mxw9pd3a"))
@click.argument("key_id")
@_common
@_failures
def token_revoke(key_id: str, url: str | None, as_json: bool) -> None:
    """Revoke a key by its id; requests with it are refused (within the key cache's 5 s)."""
    with _control(url) as control:
        row = control.revoke_key(key_id)
    if as_json:
        _print_json(row)
    else:
        click.echo(f"key {row.key_id} of project {row.project} revoked")


# -- failcode webhook --------------------------------------------------------------------------
@click.group("webhook", epilog=_examples(
    "failcode webhook add https://hooks.slack.com/services/T0/B0/x --project web-agents "
    "--on new_finding --on regression --format slack",
    "failcode webhook add https://alerts.example/f --project web-agents --on rate "
    "--rate-threshold 50 --rate-window 3600",
    "failcode webhook list --project web-agents"))
def webhook() -> None:
    """Webhooks: a project's alerts on new findings, regressions and rates."""


@webhook.command("add", epilog=_examples(
    "failcode webhook add https://hooks.slack.com/services/T0/B0/x --project web-agents "
    "--on new_finding --on regression --format slack",
    "failcode webhook add https://alerts.example/f --project web-agents --on rate "
    "--rate-threshold 50"))
@click.argument("hook_url", metavar="URL")
@click.option("--project", "project_name", required=True, help="The webhook's project.")
@click.option("--on", "rules", multiple=True, required=True,
              type=click.Choice(["new_finding", "regression", "rate"]),
              help="What to alert on (repeat for several).")
@click.option("--rate-threshold", type=int, help="rate: more failures of one finding than this")
@click.option("--rate-window", type=int, default=3600, show_default=True,
              help="rate: within this many seconds")
@click.option("--throttle", type=int, default=600, show_default=True,
              help="At most one alert per rule and finding in this many seconds.")
@click.option("--format", "fmt", type=click.Choice(["json", "slack"]), default="json",
              show_default=True, help="json: the alert's JSON; slack: a Slack message.")
@_common
@_failures
def webhook_add(hook_url: str, project_name: str, rules: tuple[str, ...],
                rate_threshold: int | None, rate_window: int, throttle: int, fmt: str,
                url: str | None, as_json: bool) -> None:
    """Add a webhook to a project."""
    from failcode.service._alerts import check_webhook_url  # noqa: PLC0415
    from failcode.service._hooks import add_webhook, shown_url  # noqa: PLC0415

    check_webhook_url(hook_url)  # as the service does: FAILCODE_WEBHOOK_ALLOW's networks only
    with _control(url) as control:
        control.require_project(project_name)
        hook = add_webhook(control.store, project_name, hook_url, on=list(rules),
                           rate_threshold=rate_threshold, rate_window_s=rate_window,
                           throttle_s=throttle, format=fmt)
    if as_json:
        _print_json({"id": hook.id, "url": shown_url(hook.url), "on": sorted(hook.on)})
    else:
        click.echo(f"webhook {hook.id} -> {shown_url(hook.url)} on {', '.join(sorted(hook.on))}")


@webhook.command("list", epilog=_examples(
    "failcode webhook list --project web-agents"))
@click.option("--project", "project_name", required=True, help="The webhook's project.")
@_common
@_failures
def webhook_list(project_name: str, url: str | None, as_json: bool) -> None:
    """List a project's webhooks (URLs without their query)."""
    from failcode.service._hooks import shown_url, webhooks  # noqa: PLC0415

    with _control(url) as control:
        found = webhooks(control.store, project_name)
    rows: list[dict[str, Any]] = [
            {"id": h.id, "url": shown_url(h.url), "on": sorted(h.on), "format": h.format,
             "rate_threshold": h.rate_threshold, "rate_window_s": h.rate_window_s,
             "throttle_s": h.throttle_s} for h in found]
    if as_json:
        _print_json(rows)
        return
    _table(["ID", "URL", "ON", "FORMAT"],
           [[r["id"], r["url"], ",".join(r["on"]), r["format"]] for r in rows])


@webhook.command("remove", epilog=_examples(
    "failcode webhook remove wh_3f9a1c0b7d2e --project web-agents"))
@click.argument("webhook_id")
@click.option("--project", "project_name", required=True, help="The webhook's project.")
@_common
@_failures
def webhook_remove(webhook_id: str, project_name: str, url: str | None, as_json: bool) -> None:
    """Remove a webhook."""
    from failcode.service._hooks import remove_webhook  # noqa: PLC0415

    with _control(url) as control:
        remove_webhook(control.store, project_name, webhook_id)
    if as_json:
        _print_json({"removed": webhook_id})
    else:
        click.echo(f"webhook {webhook_id} removed")


# -- failcode store findings / resolve / ignore / reopen ---------------------------------------
@contextmanager
def _findings_store(url: str | None, project_name: str | None) -> Iterator[Store]:
    from failcode.service._findings import ensure_tables  # noqa: PLC0415

    with _opened(url) as opened:
        if project_name is None:
            ensure_tables(opened)
            yield opened
            return
        from failcode.service._control import Control  # noqa: PLC0415
        from failcode.service._projects import ProjectStores  # noqa: PLC0415
        from failcode.store import default_store_url  # noqa: PLC0415

        Control(opened).require_project(project_name)
        stores = ProjectStores(opened, _settings(url)[0] or default_store_url())
        try:
            yield stores.get(project_name)
        finally:
            stores.close()


def _project_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--project", "project_name",
                        help="The service project whose findings these are (default: the "
                             "store itself).")(function)


@store.command("findings", epilog=_examples(
    "failcode store findings --project web-agents",
    "failcode store findings --status regressed --json"))
@click.option("--status", type=click.Choice(["new", "ongoing", "resolved", "regressed",
                                             "ignored"]), help="Only findings in this status.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True,
              help="At most this many findings.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Skip this many first (paging).")
@_project_option
@_common
@_failures
def findings_command(status: str | None, limit: int, offset: int, project_name: str | None,
                     url: str | None, as_json: bool) -> None:
    """Findings with their status (new, ongoing, resolved, regressed, ignored)."""
    from failcode.service._findings import Findings  # noqa: PLC0415

    with _findings_store(url, project_name) as opened:
        page, total = Findings(opened).list(status=status, limit=limit, offset=offset)
    if as_json:
        _print_json({"total": total, "findings": page})
        return
    _table(["ID", "STATUS", "CODE", "COUNT", "SESSIONS", "LAST SEEN", "MESSAGE"],
           [[f.id, f.status + (f" in {f.resolved_in}" if f.resolved_in else ""), f.code, f.count,
             f.sessions, f.last_seen.strftime("%Y-%m-%d %H:%M"), f.message[:60]] for f in page])
    if total > len(page) + offset:
        click.echo(f"... {total - len(page) - offset} more (--offset)")


def _status_command(action: str, helptext: str) -> None:
    examples = [f"failcode store {action} 'tool_error:...:3f2a91c0'",
                f"failcode store {action} 12 --project web-agents"]
    if action == "resolve":
        examples.append("failcode store resolve 12 --in-version 1.4.0")

    @store.command(action, help=helptext, epilog=_examples(*examples))
    @click.argument("finding", metavar="SIG|ID")
    @_project_option
    @_common
    @_failures
    def command(finding: str, project_name: str | None, url: str | None, as_json: bool,
                in_version: str | None = None) -> None:
        from failcode.service._findings import Findings  # noqa: PLC0415

        with _findings_store(url, project_name) as opened:
            findings = Findings(opened)
            finding_id = int(finding) if finding.isdigit() else findings.id_of(finding)
            changed = findings.set_status(finding_id, action,  # type: ignore[arg-type]
                                          in_version=in_version)
        if as_json:
            _print_json(changed)
        else:
            where = f" in version {changed.resolved_in}" if changed.resolved_in else ""
            click.echo(f"finding {changed.id} ({changed.code}) is {changed.status}{where}")

    if action == "resolve":
        click.option("--in-version", metavar="V",
                     help="Fixed in version V: only a failure from V or later reopens it.")(
            command)


_status_command("resolve", "Mark a finding resolved (optionally in a version).")
_status_command("ignore", "Ignore a finding: failures still count, nothing reopens it.")
_status_command("reopen", "Reopen a resolved or ignored finding.")


# -- failcode store prune, with the projects' retention ----------------------------------------
_plain_prune = store.commands["prune"]


@click.command("prune", epilog=_examples(
    "failcode store prune --older-than 30d",
    "failcode store prune --project web-agents",
    "failcode store prune --all-projects"))
@click.option("--older-than", "older_than", metavar="AGE",
              help="Delete events older than this (30d, 12h); counts and knowledge stay. "
                   "Default with --project / --all-projects: each project's retention.")
@click.option("--project", "project_name", help="Prune this service project's store.")
@click.option("--all-projects", is_flag=True, help="Prune every project of the service.")
@_common
@_failures
def prune_command(older_than: str | None, project_name: str | None, all_projects: bool,
                  url: str | None, as_json: bool) -> None:
    """Delete old events; the per-signature aggregates, findings and knowledge stay."""
    from failcode.store._cli import parse_duration  # noqa: PLC0415

    if project_name is None and not all_projects:
        if older_than is None:
            raise click.UsageError("give --older-than AGE (or --project / --all-projects to "
                                   "use the projects' retention)")
        callback = _plain_prune.callback
        assert callback is not None
        callback(older_than=older_than, url=url, as_json=as_json)
        return
    seconds: float | None = None
    if older_than is not None:
        try:
            seconds = parse_duration(older_than)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--older-than") from None
    from failcode.service._projects import ProjectStores  # noqa: PLC0415
    from failcode.store import default_store_url  # noqa: PLC0415

    deleted: dict[str, int] = {}
    with _control(url) as control:
        chosen = ([control.require_project(project_name)] if project_name is not None
                  else control.projects())
        stores = ProjectStores(control.store, _settings(url)[0] or default_store_url())
        try:
            for found in chosen:
                age = seconds if seconds is not None else found.retention_days * 86_400.0
                deleted[found.name] = stores.get(found.name).prune(age)
        finally:
            stores.close()
    if as_json:
        _print_json({"deleted": deleted})
        return
    for name, count in deleted.items():
        click.echo(f"{name}: deleted {count} events")


store.add_command(prune_command)
