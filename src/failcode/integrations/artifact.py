"""Encrypted developer artifacts for security-sensitive detail.

User text summarizes a policy or security failure; the detail a developer needs (the refused
command, the matched rule, the unredacted input) can be kept in an artifact encrypted with
Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``), referenced from the Failure's
``evidence_refs`` by an ``EntityRef("encrypted_artifact", <file name>)``. Needs the ``crypto``
extra. The key is the caller's to keep: failcode never stores it.

The artifact holds ``{"format": "failcode-artifact/1", "failure": <canonical record>,
"developer_detail": <render_developer text>, "sensitive": {...caller's values, unredacted}}``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

try:
    from cryptography.fernet import Fernet, InvalidToken
except ImportError as exc:  # pragma: no cover - depends on the environment
    msg = "failcode.integrations.artifact needs cryptography: pip install 'failcode[crypto]'"
    raise ImportError(msg) from exc

from failcode.record._failure import EntityRef, Failure

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["ARTIFACT_FORMAT", "ArtifactError", "generate_key", "read_artifact", "write_artifact"]

ARTIFACT_FORMAT: Final = "failcode-artifact/1"


class ArtifactError(ValueError):
    """The artifact cannot be read: a wrong key, a corrupt file, or not a failcode artifact."""


def generate_key() -> bytes:
    """A new random Fernet key (URL-safe base64, 32 bytes of key material)."""
    return Fernet.generate_key()


def write_artifact(
    failure: Failure, directory: Path, key: bytes, *,
    sensitive: Mapping[str, str] | None = None, exc: BaseException | None = None,
) -> EntityRef:
    """Encrypt the failure's developer detail (and ``sensitive`` values) into ``directory``.

    Args:
        sensitive: values too sensitive for logs, stored as given (encrypted, not redacted).
        exc: the exception, for the developer detail's traceback.

    Returns:
        ``EntityRef("encrypted_artifact", "<error_id>.fcenc")``, for the record's evidence_refs.
    """
    from failcode.render._render import render_developer  # noqa: PLC0415 - rendering on demand

    payload = {"format": ARTIFACT_FORMAT, "failure": failure.to_dict(),
               "developer_detail": render_developer(failure, exc=exc),
               "sensitive": dict(sensitive or {})}
    token = Fernet(key).encrypt(json.dumps(payload, sort_keys=True).encode("utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{failure.error_id}.fcenc"
    (directory / name).write_bytes(token)
    return EntityRef("encrypted_artifact", name)


def read_artifact(path: Path, key: bytes) -> dict[str, Any]:
    """Decrypt an artifact written by :func:`write_artifact`.

    Raises:
        ArtifactError: the key is wrong, the file was altered, or it is not a failcode artifact
            (the message names the file).
    """
    try:
        data = json.loads(Fernet(key).decrypt(path.read_bytes()))
    except InvalidToken:
        msg = f"{path}: cannot decrypt (wrong key, or the file was altered)"
        raise ArtifactError(msg) from None
    if not isinstance(data, dict) or data.get("format") != ARTIFACT_FORMAT:
        msg = f"{path}: not a failcode artifact (expected format {ARTIFACT_FORMAT})"
        raise ArtifactError(msg)
    return data
