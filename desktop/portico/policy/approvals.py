"""Tool approvals: when a call must be approved, and what an approval is bound to.

An approval covers one server *authority* (the digest of a stdio command line, or the
URL origin of an HTTP server), one tool *contract* (``RegisteredTool.digest``: the
registry's digest of its name, description, input schema and annotations) and, unless
"any arguments" was chosen, one exact set of arguments (canonical JSON). A server renamed
onto another command, or a tool whose definition changed after a reconnect, therefore no
longer matches an earlier approval.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from portico.config.model import ServerSpec, Transport, TrustLevel

ANY_ARGUMENTS = "*"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def arguments_digest(arguments: Mapping[str, Any] | None) -> str:
    return sha256(canonical_json(dict(arguments or {})))


def url_origin(url: str) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def server_authority(spec: ServerSpec) -> str:
    """What a server *is*, for binding approvals: command digest or URL origin."""
    if spec.transport is Transport.STDIO:
        line = canonical_json({"command": spec.command, "args": list(spec.args), "cwd": spec.cwd})
        return f"stdio:{sha256(line)[:32]}"
    return url_origin(spec.url or "")


def is_read_only(annotations: Mapping[str, Any] | None) -> bool:
    return bool(annotations) and annotations.get("readOnlyHint") is True  # type: ignore[union-attr]


def approval_reason(
    spec: ServerSpec,
    annotations: Mapping[str, Any] | None,
    *,
    skip_trust_prompts: bool = False,
) -> str | None:
    """Why this call must be approved, or None when it may run without asking.

    ``skip_trust_prompts`` is YOLO (chat or process) or ``approvals.mode: off``: they
    skip these trust-based prompts, never the spend limit (see ``portico.policy.spend``).
    """
    if skip_trust_prompts or spec.trust is TrustLevel.FULL:
        return None
    if is_read_only(annotations):
        return None
    if spec.trust is TrustLevel.UNTRUSTED:
        return f"server '{spec.name}' is untrusted and this tool is not marked read-only"
    return "this tool is not marked read-only"


@dataclass(frozen=True)
class ApprovalKey:
    server: str
    tool: str
    authority: str
    contract: str
    arguments: str  # arguments_digest(...) or ANY_ARGUMENTS

    def widened(self) -> ApprovalKey:
        return ApprovalKey(self.server, self.tool, self.authority, self.contract, ANY_ARGUMENTS)

    def as_dict(self) -> dict[str, str]:
        return {
            "server": self.server,
            "tool": self.tool,
            "authority": self.authority,
            "contract": self.contract,
            "arguments": self.arguments,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalKey:
        return cls(
            server=str(data["server"]),
            tool=str(data["tool"]),
            authority=str(data["authority"]),
            contract=str(data["contract"]),
            arguments=str(data["arguments"]),
        )
