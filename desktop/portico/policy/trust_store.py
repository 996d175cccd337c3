"""Persistent trust decisions for project servers.

Stored in ``<state dir>/trust.json``, keyed by the canonical project path, the server name
and the SHA-256 digest of everything that decides what the server may do or receive: the
transport target, command / args / env / cwd, URL and headers, OAuth, the client
certificate and identity header, the secret references, ``trust``, ``tool_costs``,
``spend_limit``, ``cost_unit``, ``sampling``, ``elicitation``, the tool filters and the
global server it replaces. Changing any of them means the stored decision no longer
matches and the server is reviewed again. Cosmetic keys (timeouts, lazy start, recycling,
protocol) are left out, so tuning them never re-asks.

A decision is also bound to what the config points at (``Bound``, checked beside the
digest): the contents of the project files a stdio launch names (``files``, see
``portico.policy.launch_files``) and the address classes an HTTP server resolved to at
the review (``net``: public / private / loopback / other). A different file or a move to
another class (DNS rebinding) no longer matches, so the server is reviewed again.

The file is read again whenever it changed on disk (a decision made by ``portico mcp trust``
in another process counts at once), and parsed only then: a gate asks for the decisions of
every project server in turn, and a 250-server project's file is 90 KB of JSON.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from portico.config.model import SandboxSpec, ServerSpec
from portico.paths import paths
from portico.policy.approval_store import write_json_atomic
from portico.policy.approvals import canonical_json, sha256
from portico.policy.secret_uses import secret_uses

FILE_NAME = "trust.json"
Decision = Literal["trust", "reject"]
# What else a decision binds to: "files" -> [[path, digest], ...], "net" -> [class, ...].
Bound = dict[str, Any]
BOUND_KEYS = ("files", "net")


def _without_timeout(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    data: dict[str, Any] = asdict(value)
    data.pop("timeout", None)  # how long something waits is not part of what runs
    return data


def trust_fields(spec: ServerSpec) -> dict[str, Any]:
    """What a trust decision binds to (see the module docstring)."""
    return {
        "transport": str(spec.transport),
        "command": spec.command,
        "args": list(spec.args),
        "env": sorted([k, v] for k, v in spec.env),
        "cwd": spec.cwd,
        "url": spec.url,
        "headers": sorted([k, v] for k, v in spec.headers),
        "oauth": _without_timeout(spec.oauth),
        "client_cert": asdict(spec.client_cert) if spec.client_cert else None,
        "identity_header": asdict(spec.identity_header) if spec.identity_header else None,
        "secrets": [use.line for use in secret_uses(spec)],
        "trust": str(spec.trust),
        "tool_costs": [[name, asdict(cost)] for name, cost in spec.tool_costs],
        "spend_limit": spec.spend_limit,
        "cost_unit": spec.cost_unit,
        "sampling": _without_timeout(spec.sampling),
        "elicitation": _without_timeout(spec.elicitation),
        "tools": asdict(spec.tools),
        "replaces": asdict(spec.replaces) if spec.replaces else None,
        # How it is looser than your rules; only when it is, so older decisions still match.
        **({"loosened": list(spec.loosened)} if spec.loosened else {}),
        # Whom TLS trusts for this server; only when set, so older decisions still match.
        **({"ca_cert": spec.ca_cert} if spec.ca_cert else {}),
        # What its sandbox lets it do, as written; only when set, likewise.
        **({"sandbox": asdict(spec.sandbox)} if spec.sandbox != SandboxSpec() else {}),
    }


def trust_digest(spec: ServerSpec) -> str:
    return sha256(canonical_json(trust_fields(spec)))


def project_of(spec: ServerSpec) -> Path:
    """The canonical project folder of a project-scope server (``<p>/.portico/x`` -> p)."""
    folder = spec.source.path.parent
    if folder.name == ".portico":
        folder = folder.parent
    return folder.resolve()


# A file's identity and version: every write (ours are atomic renames: a new inode) moves
# one of them, and ctime cannot be set back by an unprivileged program.
_Stamp = tuple[int, int, int, int, int]
_Index = dict[tuple[Any, Any], list[dict[str, Any]]]


def _stamp(st: os.stat_result) -> _Stamp:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths().state_dir / FILE_NAME
        self.problems: list[str] = []
        self._parsed: tuple[_Stamp, list[dict[str, Any]], _Index] | None = None

    def _read(self) -> list[dict[str, Any]]:
        return self._load()[0]

    def _load(self) -> tuple[list[dict[str, Any]], _Index]:
        """The entries and their index by (project, server), parsed again only when the
        file changed since the last read."""
        try:
            with self.path.open("rb") as handle:
                stamp = _stamp(os.fstat(handle.fileno()))
                if self._parsed is not None and self._parsed[0] == stamp:
                    return self._parsed[1], self._parsed[2]
                data = json.loads(handle.read().decode("utf-8"))
            entries = data.get("entries", [])
            if not isinstance(entries, list):
                raise ValueError("'entries' is not a list")
        except FileNotFoundError:
            self._parsed = None
            return [], {}
        except (OSError, ValueError, AttributeError) as exc:
            self._parsed = None
            self.problems.append(
                f"{self.path}: cannot read trust decisions ({exc}); project servers are "
                f"reviewed again. Delete the file to start over."
            )
            return [], {}
        kept = [e for e in entries if isinstance(e, dict)]
        index: _Index = {}
        for entry in kept:
            index.setdefault((entry.get("project"), entry.get("server")), []).append(entry)
        self._parsed = (stamp, kept, index)
        return kept, index

    def _entries_of(self, project: Path, server: str) -> list[dict[str, Any]]:
        return self._load()[1].get((str(project), server), [])

    def entry(self, project: Path, server: str) -> dict[str, Any] | None:
        """The stored record of ``server`` in ``project``, whatever its digest."""
        found = self._entries_of(project, server)
        return found[0] if found else None

    def get(
        self, project: Path, server: str, digest: str, bound: Bound | None = None
    ) -> Decision | None:
        """The stored decision for this exact config (the file is checked on every call, so a
        decision made by ``portico mcp trust`` in another process is seen at once).
        With ``bound``, a decision counts only if it was made for the same files and
        address classes (a decision without them does not match a server that has them)."""
        for entry in self._entries_of(project, server):
            if entry.get("digest") == digest and (
                bound is None or all(entry.get(k) == bound.get(k) for k in BOUND_KEYS)
            ):
                decision = entry.get("decision")
                if decision == "trust":
                    return "trust"
                if decision == "reject":
                    return "reject"
        return None

    def decision_for(self, spec: ServerSpec) -> Decision | None:
        return self.get(project_of(spec), spec.name, trust_digest(spec))

    def set(
        self,
        project: Path,
        server: str,
        digest: str,
        decision: Decision,
        bound: Bound | None = None,
    ) -> None:
        entries = [
            e
            for e in self._read()
            if not (e.get("project") == str(project) and e.get("server") == server)
        ]
        entries.append(
            {
                "project": str(project),
                "server": server,
                "digest": digest,
                "decision": decision,
                **{k: v for k, v in (bound or {}).items() if k in BOUND_KEYS and v is not None},
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        entries.sort(key=lambda e: (e["project"], e["server"]))
        write_json_atomic(self.path, {"version": 1, "entries": entries})

    def record(self, spec: ServerSpec, decision: Decision, bound: Bound | None = None) -> None:
        self.set(project_of(spec), spec.name, trust_digest(spec), decision, bound)
