"""Prompters that live in the core: the one that can never ask anybody.

``NonInteractivePrompter`` is used by ``portico chat -q``, scripts and CI. Every question
raises :class:`portico.prompts.Refused` with a message that says exactly what to run or
where to click instead. Notices are written to a sink (stderr by default).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    AuthorizeRequest,
    DeviceCodeRequest,
    ElicitationAnswer,
    ElicitationRequest,
    Notice,
    Refused,
    SamplingAnswer,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustChoice,
    TrustRequest,
    UnsandboxedRequest,
)


def source_file(source: str) -> str:
    """``/p/.portico/mcp.toml:12`` -> ``/p/.portico/mcp.toml`` (the line is optional)."""
    head, sep, tail = source.rpartition(":")
    return head if sep and tail.isdigit() else source


TRUST_LEVEL_TEXT = {
    "default": "asks before tools not marked read-only",
    "full": "runs every tool and sampling request without asking",
    "untrusted": "asks before every tool",
}


def trust_level_line(level: str) -> str:
    return f"{level} ({TRUST_LEVEL_TEXT.get(level, 'see its config')})"


def review_detail_lines(request: TrustRequest) -> list[str]:
    """The review's launch, loosenings, pinned project files and sandbox as terminal
    lines, each whole (a terminal wraps a long line; nothing is cut)."""
    lines: list[str] = []
    if request.launch:
        lines.append("launch:")
        lines += [f"  {line}" for line in request.launch]
    if request.loosenings:
        lines.append("This server would:")
        lines += [f"  - {line}" for line in request.loosenings]
    if request.pinned_files:
        lines.append("project files it loads (a change asks again):")
        lines += [f"  {line}" for line in request.pinned_files]
    if request.sandbox:
        lines.append("sandbox:")
        lines += [f"  {line}" for line in request.sandbox]
    return lines


def trust_refusal(request: TrustRequest) -> str:
    text = (
        f"server '{request.server}' in {source_file(request.source)} is waiting for trust "
        f"review: run 'portico mcp trust {request.server}' or open it in the app"
    )
    if request.secrets:
        text += "; it would receive your secrets: " + "; ".join(request.secrets)
    if request.trust_level != "default":
        text += f"; trust: {trust_level_line(request.trust_level)}"
    return text


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


class NonInteractivePrompter:
    """Refuses every question with an actionable message."""

    def __init__(self, sink: Callable[[str], None] | None = None) -> None:
        self._sink = sink or _stderr

    async def review_trust(self, request: TrustRequest) -> TrustChoice:
        raise Refused(trust_refusal(request))

    async def approve_tool(self, request: ToolApprovalRequest) -> ApprovalAnswer:
        raise Refused(
            f"tool '{request.tool}' of server '{request.server}' needs approval "
            f"({request.reason or 'not marked read-only'}) and nobody can answer here: "
            f"run it from the app or an interactive 'portico chat', or set trust = \"full\" "
            f"for '{request.server}' in its config if you trust every call"
        )

    async def approve_spend(self, request: SpendApprovalRequest) -> ApprovalChoice:
        raise Refused(
            f"{request.limit_line} Nobody can approve that here, so the call was refused "
            f"without running. Do not retry it; ask the person to run it from the app or "
            f"raise spend_limit for '{request.server}'."
        )

    async def run_unsandboxed(self, request: UnsandboxedRequest) -> bool:
        raise Refused(
            f"server '{request.server}' ({request.source}) is set to run in a sandbox, but "
            f"{request.why}; nobody can agree to run it unsandboxed here: run "
            f"'portico mcp test {request.server}' in a terminal or open the app to answer, "
            f"or set {request.server}.sandbox.enabled = false"
        )

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        raise Refused(
            f"server '{request.server}' needs you to sign in: run "
            f"'portico mcp login {request.server}' or sign in from the app"
        )

    async def device_code(self, request: DeviceCodeRequest) -> None:
        raise Refused(
            f"server '{request.server}' needs you to sign in: run "
            f"'portico mcp login {request.server} --flow device' or sign in from the app"
        )

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        raise Refused(
            f"server '{request.server}' asked the person a question and nobody can answer "
            f"here: run this from the app or an interactive 'portico chat'"
        )

    async def review_sampling(self, request: SamplingRequest) -> SamplingAnswer:
        raise Refused(
            f"server '{request.server}' asked to use the model and nobody can review the "
            f'request here: run this from the app, or set trust = "full" for '
            f"'{request.server}' to let it sample without review"
        )

    async def notify(self, notice: Notice) -> None:
        where = f"{notice.server}: " if notice.server else ""
        self._sink(f"{notice.level}: {where}{notice.text}")
