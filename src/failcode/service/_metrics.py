"""The metrics door of ``failcode serve``: an OTLP/HTTP metrics export is read, then dropped.

An agent whose OpenTelemetry is on exports metrics beside its logs and traces (Gemini CLI and
Qwen Code always do, every 10 s; Claude Code and Codex CLI when asked), to
``<endpoint>/v1/metrics``. failcode maps failures, and a metric only counts what happened, so
nothing of it is stored; the door exists so that the exporter sees a success instead of a 404
it reports, with a stack trace, at every export. :func:`read_metrics` is pure (no I/O).

Rules:

- Media types as on ``/v1/logs`` (:mod:`failcode.service._otlp`): ``application/x-protobuf``
  is decoded as an ``ExportMetricsServiceRequest`` of ``opentelemetry-proto``,
  ``application/json`` as OTLP/JSON (lowerCamelCase field names, the proto names accepted
  too, unknown fields ignored); parameters and case are ignored; any other type is
  ``FC-SVC-006``. The body arrives decompressed.
- A body that does not decode is ``FC-DATA-001`` of class ``malformed_json``. JSON of the
  wrong shape is ``FC-DATA-001`` of class ``validation`` naming where, e.g.
  ``resourceMetrics[0].scopeMetrics[0].metrics[2].sum.dataPoints: expected a list, got an
  object``. Only the structure down to the data points is checked: resources, scopes,
  metrics, a metric's ``name`` and the ``dataPoints`` of its ``gauge``, ``sum``,
  ``histogram``, ``exponentialHistogram`` or ``summary``; the values are never read. Nothing
  else is ever raised, whatever the bytes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode.service._otlp import (
    JSON,
    PROTOBUF,
    from_protobuf,
    media_type,
    otlp_problem,
    shown_type,
    unsupported_media,
)

if TYPE_CHECKING:
    from failcode import FailureError

__all__ = ["MetricsExport", "read_metrics"]

_KINDS: Final = (("gauge", "gauge"), ("sum", "sum"), ("histogram", "histogram"),
                 ("exponentialHistogram", "exponential_histogram"), ("summary", "summary"))
"""A metric's data fields: (OTLP/JSON name, proto name)."""


class MetricsExport(msgspec.Struct, frozen=True, kw_only=True):
    """What one metrics export held (counted, never kept).

    Attributes:
        resources: the ``resourceMetrics`` entries.
        metrics: the metrics of all their scopes.
        points: the data points of all those metrics.
    """

    resources: int
    metrics: int
    points: int


def _problem(problem: str, error_class: str) -> FailureError:
    return otlp_problem("metrics", problem, error_class)


@functools.cache
def _message() -> Any:
    """``ExportMetricsServiceRequest`` of ``opentelemetry-proto``, imported on first use."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: PLC0415
        ExportMetricsServiceRequest,
    )

    return ExportMetricsServiceRequest


def _read_pb(body: bytes) -> MetricsExport:
    request = from_protobuf("metrics", _message(), body)
    metrics = points = 0
    for resource in request.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                metrics += 1
                kind = metric.WhichOneof("data")
                if kind is not None:
                    points += len(getattr(metric, kind).data_points)
    return MetricsExport(resources=len(request.resource_metrics), metrics=metrics,
                         points=points)


def _field(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None and snake != camel else value


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    """``value`` as a list of objects (absent or null: none), else the problem at ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _problem(f"{where}: expected a list, got {shown_type(value)}", "validation")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise _problem(f"{where}[{index}]: expected an object, got {shown_type(item)}",
                           "validation")
    return value


def _read_json(body: bytes) -> MetricsExport:
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise _problem(f"the body is not JSON ({str(exc)[:160]})", "malformed_json") from None
    except RecursionError:
        raise _problem("the body is JSON nested too deeply to read", "malformed_json") from None
    if not isinstance(data, dict):
        raise _problem(f"the body: expected a JSON object, got {shown_type(data)}", "validation")
    resources = _objects(_field(data, "resourceMetrics", "resource_metrics"), "resourceMetrics")
    metrics = points = 0
    for r, resource in enumerate(resources):
        where = f"resourceMetrics[{r}]"
        if not isinstance(resource.get("resource", {}), (dict, type(None))):
            raise _problem(f"{where}.resource: expected an object, got "
                           f"{shown_type(resource['resource'])}", "validation")
        scopes = _objects(_field(resource, "scopeMetrics", "scope_metrics"),
                          f"{where}.scopeMetrics")
        for s, scope in enumerate(scopes):
            found = _objects(scope.get("metrics"), f"{where}.scopeMetrics[{s}].metrics")
            for m, metric in enumerate(found):
                at = f"{where}.scopeMetrics[{s}].metrics[{m}]"
                name = metric.get("name")
                if name is not None and not isinstance(name, str):
                    raise _problem(f"{at}.name: expected a string, got {shown_type(name)}",
                                   "validation")
                metrics += 1
                for camel, snake in _KINDS:
                    data_field = _field(metric, camel, snake)
                    if data_field is None:
                        continue
                    if not isinstance(data_field, dict):
                        raise _problem(f"{at}.{camel}: expected an object, got "
                                       f"{shown_type(data_field)}", "validation")
                    points += len(_objects(_field(data_field, "dataPoints", "data_points"),
                                           f"{at}.{camel}.dataPoints"))
    return MetricsExport(resources=len(resources), metrics=metrics, points=points)


def read_metrics(body: bytes, *, content_type: str) -> MetricsExport:
    """Check one OTLP/HTTP metrics export and count what it holds (the module's rules).

    Args:
        body: the request body, already decompressed.
        content_type: the request's Content-Type: ``application/x-protobuf`` or
            ``application/json`` (parameters and case ignored).

    Returns:
        The counts of resources, metrics and data points; nothing else is kept.

    Raises:
        FailureError: FC-SVC-006 for another content type; FC-DATA-001 (``malformed_json``)
            for a body that does not decode, (``validation``) for JSON of the wrong shape,
            naming where. Never anything else, whatever the bytes.
    """
    media = media_type(content_type if isinstance(content_type, str) else "")
    if media == PROTOBUF:
        return _read_pb(bytes(body))
    if media == JSON:
        return _read_json(bytes(body))
    raise unsupported_media("metrics", content_type)
