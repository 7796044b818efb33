"""The MCP tools: each answers with a JSON shape failcode already has, built by the code that
builds it for the CLI, the store or the service.

Rules:

- **Results.** Every tool's result carries its JSON as structured content, and as text: the
  JSON itself, or for ``explain`` and ``timeline`` the text ``failcode explain`` and
  ``failcode triage --session`` print (the JSON stays in the structured content).
- **Errors.** What the caller can correct (a path that does not exist, an unknown code, a
  session not in the file, a store that cannot be opened, a service that does not answer or
  refuses the key) is a tool error (``isError``) whose text says what is wrong and what to do;
  the server keeps running. A crash inside failcode is the SDK's generic tool error.
- **Bounds.** ``triage`` lists at most ``limit`` findings and signatures (default 20), the
  inputs that could not be read and the first ``limit`` files skipped, and leaves the sessions
  out unless asked (a run's sessions hold every failure); ``omitted`` counts what was left
  out. ``findings`` lists at most ``limit`` findings (default 20).
- **Where.** Relative paths are read from the server's working directory: the project the
  agent started it in.
"""

from __future__ import annotations

import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import msgspec
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from failcode.store import Store
    from failcode.triage._result import SessionResult, TriageResult

__all__ = ["build_server"]

DEFAULT_LIMIT: Final = 20
"""How many findings ``triage`` and ``findings`` list unless told otherwise."""
_TIMEOUT_S: Final = 30.0
"""How long ``findings`` waits for a service."""
_MAX_NAMES: Final = 20
"""How many session names an unknown session's error lists."""

_INSTRUCTIONS = (
    "failcode reads AI-agent session logs and says why they fail. Use triage to find the "
    "failures that cost a project most (its own sessions when given no paths), timeline to "
    "follow one session step by step, explain to learn what a code (FC-...) or a signature "
    "means and how to fix it, classify to get the code and the next action for a command "
    "that just failed, and findings for the failures a store or a failcode service has "
    "tracked over time.")

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

Purpose = Literal["build", "test", "static_analysis", "doctor", "debug", "merge", "general"]
""":data:`failcode.PURPOSES` (a test checks they agree)."""
Status = Literal["new", "ongoing", "resolved", "regressed", "ignored"]
"""The findings' statuses (``failcode.service._findings.STATUSES``; a test checks)."""


def _result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    """``data`` as structured content, with ``text`` (default: the JSON) for the model."""
    shown = json.dumps(data, indent=2, ensure_ascii=False) if text is None else text
    return CallToolResult(content=[TextContent(type="text", text=shown)],
                          structured_content=data)


def _existing(paths: list[str]) -> list[Path]:
    missing = [path for path in paths if not os.path.lexists(path)]
    if missing:
        msg = (f"no such file or folder: {', '.join(missing)} (relative paths are read from "
               f"{Path.cwd()})")
        raise ToolError(msg)
    return [Path(path) for path in paths]


def _run_triage(paths: list[Path], *, cache: bool = False) -> TriageResult:
    """Triage ``paths`` as ``failcode triage`` does (in processes when there are many; with
    the results cache when ``cache``, as ``--home`` does)."""
    from failcode.triage import triage  # noqa: PLC0415 - loaded on first use
    from failcode.triage.analysis._run import default_jobs  # noqa: PLC0415

    return triage(paths, jobs=default_jobs(), cache=cache)


def _document(result: TriageResult) -> dict[str, Any]:
    """``failcode triage --json``'s document of ``result``, built by the code that writes it."""
    from failcode.triage.report._stream import JsonDocument  # noqa: PLC0415

    parts: list[str] = []
    JsonDocument.write_result(result, parts.append)
    document: dict[str, Any] = json.loads("".join(parts))
    if result.cached_inputs is not None:  # as triage --json says it
        document["cached_inputs"] = result.cached_inputs
        document["resumed_inputs"] = result.resumed_inputs or 0
    return document


def _home_logs() -> list[Path]:
    """What ``failcode triage --home`` reads; none found is a tool error naming the places."""
    from failcode.triage._discover import home_logs  # noqa: PLC0415

    found, looked = home_logs()
    if not found:
        msg = ("FC-DATA-004: no session log in any agent's default place; looked in "
               + ", ".join(map(str, looked)) + ". Pass paths to triage.")
        raise ToolError(msg)
    return found


def triage(
        paths: Annotated[list[str] | None, Field(
            description="Session logs: files or folders (walked). Empty or absent: the logs "
                        "every supported agent keeps for this user (failcode triage --home).")]
        = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many findings "
                                    "and signatures.")] = DEFAULT_LIMIT,
        sessions: Annotated[bool, Field(description="Also list every session with all its "
                                        "failures (large).")] = False,
) -> CallToolResult:
    """Triage agent session logs: the failures that cost most, ranked ("what to fix first"),
    with their codes, who must act and examples; how the sessions ended; who is to blame.

    Use it first to learn why an agent's sessions fail. With no paths, reads the logs of every
    supported agent on this machine. The result is failcode triage --json's document, cut to
    `limit` findings and signatures; `omitted` counts what was left out."""
    files = _existing(paths) if paths else _home_logs()
    document = _document(_run_triage(files, cache=not paths))  # no paths: as --home, cached
    omitted: dict[str, int] = {}

    def cut(key: str, keep: list[Any]) -> None:
        dropped = len(document[key]) - len(keep)
        if dropped:
            omitted[key] = dropped
        document[key] = keep

    cut("findings", document["findings"][:limit])
    cut("signatures", document["signatures"][:limit])
    cut("inputs", [item for item in document["inputs"] if item.get("error")])
    cut("skipped", document["skipped"][:limit])
    if not sessions:
        omitted["sessions"] = len(document.pop("sessions"))
    document["omitted"] = omitted
    return _result(document)


def explain(
        code: Annotated[str, Field(
            min_length=1, max_length=400,
            description="A code (FC-CMD-001), its slug (command-not-found) or a signature "
                        "(kind:surface:class:location:digest, as triage lists them).")],
) -> CallToolResult:
    """Explain a failcode code or a signature: its meaning, who must act, whether retrying
    helps, the remedy and an example.

    Use it when a triage finding, a classify result or a log names a code (FC-...) or a
    signature and you need to know what it means and what to do. The text is what failcode
    explain prints; the structured content is the code's entry of the code reference
    (failcode codes docs --format json)."""
    from failcode.codes._docs import _spec_dict, explain_text  # noqa: PLC0415
    from failcode.codes._registry import catalogs, suggest_codes  # noqa: PLC0415

    wanted = code.strip()
    if wanted.count(":") >= 4:  # a signature has five parts
        return _explain_signature(wanted)
    for catalog in catalogs():
        for spec in catalog:
            if wanted.upper() == spec.code or wanted.lower() == spec.slug:
                return _result(_spec_dict(catalog, spec), explain_text(catalog, spec))
    suggestions = suggest_codes(wanted)
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    msg = f"unknown code {wanted!r}{hint}"
    raise ToolError(msg)


def _explain_signature(signature: str) -> CallToolResult:
    """A signature's visible parts and the entries of the codes it can come from."""
    from failcode.codes._docs import _spec_dict, explain_text  # noqa: PLC0415
    from failcode.codes._registry import catalogs  # noqa: PLC0415

    kind, surface, error_class, *middle, digest = signature.split(":")
    location = ":".join(middle)
    specs = [(catalog, spec) for catalog in catalogs() for spec in catalog
             if spec.kind.value == kind and spec.error_class == error_class]
    data = {"signature": signature, "kind": kind, "surface": surface,
            "error_class": error_class, "location": None if location == "none" else location,
            "digest": digest, "codes": [_spec_dict(catalog, spec) for catalog, spec in specs]}
    text = "\n".join([
        f"signature {signature}",
        f"  kind      {kind} (what failed)",
        f"  surface   {surface} (where: the entry point or tool family)",
        f"  class     {error_class} (the failure's class within its kind)",
        f"  location  {location if location != 'none' else '(none)'}",
        f"  digest    {digest}",
        "", *(explain_text(catalog, spec) for catalog, spec in specs)]
        if specs else ["", "No code of failcode's catalogs has that kind and class."])
    return _result(data, text)


def classify(  # noqa: PLR0917 - the parameters are the tool's input schema
        command: Annotated[str, Field(min_length=1, max_length=65_536,
                                      description="The command as run (a shell string).")],
        exit_status: Annotated[int | None, Field(
            description="Its exit status (-N: killed by signal N); null if none was "
                        "reported.")],
        output: Annotated[str, Field(max_length=262_144,
                                     description="Its standard output (or both streams).")]
        = "",
        stderr: Annotated[str, Field(max_length=262_144,
                                     description="Its standard error, when kept apart.")] = "",
        purpose: Annotated[Purpose | None, Field(
            description="What the command was for; default: inferred from the command and "
                        "its output.")] = None,
        timed_out: Annotated[bool, Field(description="It was stopped at its time limit.")]
        = False,
) -> CallToolResult:
    """Classify a finished command: the failure's code, kind, category (who must act),
    retryability and signature, failcode's decision for a first occurrence (retry, change
    something, block...) and the text a user would see.

    Use it right after a command fails, to know whether to retry, change the approach or ask
    the user. The answer is the service's classify door's (POST /v1/classify): kind
    "failure", "outcome" (a probe that found nothing, a cancellation: not an error) or "none"
    (it succeeded)."""
    from pydantic import ValidationError  # noqa: PLC0415

    from failcode.service._classify import (  # noqa: PLC0415
        ClassifyRequest,
        CommandInput,
        classify_payload,
    )

    try:
        request = ClassifyRequest(command=CommandInput(
            command=command, exit_code=exit_status, stdout=output, stderr=stderr,
            timed_out=timed_out))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, error['loc'])) or 'command'}: {error['msg']}"
                             for error in exc.errors())
        raise ToolError(problems) from None
    answer = classify_payload(request, purpose=purpose)
    return _result(answer.model_dump(mode="json"))


def _open_store(spec: str | None) -> Store:
    """The store ``spec`` names (a URL, or the path of a SQLite file), else the configured one
    ($FAILCODE_STORE, failcode.toml, the user's default), opened; it must exist."""
    from failcode.store import StoreError  # noqa: PLC0415
    from failcode.store._cli import open_configured  # noqa: PLC0415

    url = spec
    if spec is not None and "://" not in spec:
        if not Path(spec).is_file():
            msg = (f"no store at {spec} (relative paths are read from {Path.cwd()}); pass a "
                   "SQLite file or a store URL")
            raise ToolError(msg)
        url = "sqlite:///" + str(Path(spec).resolve())
    try:
        open_configured(url, read_only=True).close()  # it exists: never make one
        return open_configured(url)
    except StoreError as exc:
        failure = exc.failure
        msg = f"{failure.code}: {failure.message}" + (
            f" Remedy: {failure.remedy}" if failure.remedy else "")
        raise ToolError(msg) from None


def _store_findings(spec: str | None, status: str | None, limit: int) -> dict[str, Any]:
    """``failcode store findings --json``'s answer."""
    from failcode.service._findings import Findings, ensure_tables  # noqa: PLC0415

    store = _open_store(spec)
    try:
        ensure_tables(store)
        page, total = Findings(store).list(status=status, limit=limit)
    finally:
        store.close()
    data: dict[str, Any] = msgspec.to_builtins({"total": total, "findings": page})
    return data


def _service_findings(url: str, key: str | None, status: str | None,
                      limit: int) -> dict[str, Any]:
    """The service's ``GET /v1/findings`` answer, as it sends it."""
    if not key:
        msg = ("the service needs a key with the read scope: pass key, or set FAILCODE_KEY "
               "(failcode token create --scope read)")
        raise ToolError(msg)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"url {url!r}: expected the service's http:// or https:// URL"
        raise ToolError(msg)
    query = urllib.parse.urlencode({"limit": limit, **({"status": status} if status else {})})
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        f"{url.rstrip('/')}/v1/findings?{query}",
        headers={"Authorization": f"Bearer {key}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:  # noqa: S310
            data: dict[str, Any] = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read(2000).decode("utf-8", "replace")
        try:
            detail = json.loads(body).get("detail") or body
        except (ValueError, AttributeError):
            detail = body
        msg = f"the service at {url} answered {exc.code}: {str(detail)[:500]}"
        raise ToolError(msg) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        msg = f"the service at {url} does not answer: {reason}"
        raise ToolError(msg) from None
    return data


def findings(
        store: Annotated[str | None, Field(
            description="A store: the path of a SQLite file or a store URL "
                        "(sqlite:///failcode.db, postgresql://...).")] = None,
        url: Annotated[str | None, Field(
            description="A failcode service's URL (default: $FAILCODE_URL).")] = None,
        key: Annotated[str | None, Field(
            description="The service's read key (default: $FAILCODE_KEY).")] = None,
        status: Annotated[Status | None, Field(description="Only findings in this status.")]
        = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many findings.")]
        = DEFAULT_LIMIT,
) -> CallToolResult:
    """List the findings a store or a failcode service tracks: one per signature, with its
    status (new, ongoing, resolved, regressed, ignored), code, counts, sessions and when it
    was first and last seen.

    Use it to see which failures keep coming back across many sessions, or whether one
    reappeared after it was resolved. Reads `store` when given; else the service at `url`
    (or $FAILCODE_URL) with `key` (or $FAILCODE_KEY); else the configured store
    ($FAILCODE_STORE, failcode.toml, the user's default). The answer is failcode store
    findings --json's, or the service's GET /v1/findings."""
    service = url or (None if store is not None else os.environ.get("FAILCODE_URL"))
    if service:
        return _result(_service_findings(service, key or os.environ.get("FAILCODE_KEY"),
                                         status, limit))
    return _result(_store_findings(store, status, limit))


def timeline(
        path: Annotated[str, Field(min_length=1, description="The session log (a file or an "
                                   "OpenHands conversation folder).")],
        session: Annotated[str | None, Field(
            description="The session's name (as triage lists it), or the path of a file "
                        "holding one session; default: the log's only session.")] = None,
) -> CallToolResult:
    """One session's timeline: each step at which something failed or was refused, with its
    code, exit status, loop and evidence, the quiet steps between them, and how the session
    ended.

    Use it after triage to follow what one agent session did, step by step. The text is what
    failcode triage --session prints; the structured content is the session's entry of
    triage's --json document (every failure in full)."""
    from failcode.triage._result import Tables  # noqa: PLC0415
    from failcode.triage.report._drill import render_session  # noqa: PLC0415
    from failcode.triage.report._terminal import Out  # noqa: PLC0415

    result = _run_triage(_existing([path]))
    for item in result.inputs:
        if item.error_code:
            msg = f"{item.error_code}: cannot read {item.path}: {item.error_message}"
            raise ToolError(msg)
    chosen = _sessions_named(result.sessions, session, path)
    text = io.StringIO()
    findings_of = Tables.of(result.sessions).findings
    for entry in chosen:
        render_session(entry, findings_of, Out(text))
    return _result({"sessions": [entry.to_dict() for entry in chosen]}, text.getvalue())


def _sessions_named(sessions: list[SessionResult], name: str | None,
                    path: str) -> list[SessionResult]:
    """The sessions ``triage --session NAME`` shows; no name: the only one there is."""
    if name is not None:
        chosen = [entry for entry in sessions if name in (entry.session, entry.path)]
        if chosen:
            return chosen
    elif len(sessions) == 1:
        return sessions
    names = sorted({entry.session for entry in sessions})
    listed = ", ".join(names[:_MAX_NAMES]) + (" ..." if len(names) > _MAX_NAMES else "")
    if not names:
        msg = f"{path} holds no session"
    elif name is None:
        msg = f"{path} holds {len(names)} sessions; name one: {listed}"
    else:
        msg = f"no session named {name!r} in {path}; its sessions: {listed}"
    raise ToolError(msg)


def build_server() -> MCPServer:
    """The server with the five tools."""
    from failcode import __version__  # noqa: PLC0415

    server: MCPServer = MCPServer("failcode", version=__version__, instructions=_INSTRUCTIONS,
                                  log_level="WARNING")
    for tool in (triage, explain, classify, timeline):
        server.add_tool(tool, annotations=_READ_ONLY)
    # a store's findings are kept in tables of its own, made on first use
    server.add_tool(findings, annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True,
        open_world_hint=True))
    return server
