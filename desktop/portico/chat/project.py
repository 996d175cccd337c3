"""A chat opened in a project: its instructions, model and tool set.

Instructions: ``<project>/.portico/instructions.md``, untrusted text from whoever wrote
the project. Before a chat first uses them they are shown in full through the Prompter's
trust review (``TrustRequest`` with every line of the file and its digest, like a project
server's pinned files); "trust" is remembered in the trust store for exactly that content
(an edit asks again), "once" counts for this run, "reject" is remembered too. In the
system prompt they are labelled as the project's, below Portico's own lines.

Tool set: ``chat.servers`` / ``chat.tools`` (the project may only narrow yours, see
``portico.config.project_rules``) decide which tools a chat offers; a call to any other
tool is refused before it runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from portico.prompts import TrustChoice, TrustRequest

if TYPE_CHECKING:
    from portico.config.model import RuntimeSettings
    from portico.policy.trust_store import Decision, TrustStore
    from portico.prompts import Prompter

log = logging.getLogger(__name__)

INSTRUCTIONS = Path(".portico") / "instructions.md"
TRUST_NAME = "__instructions__"  # "__" is never in a server name: no server shares it
MAX_BYTES = 200_000
UTILITY = ("tool_search",)  # offered whatever the tool set (it only finds tools)

State = Literal["none", "on", "off"]


@dataclass(frozen=True)
class Instructions:
    path: Path
    text: str
    digest: str
    state: State  # on: used; off: declined or not reviewed yet


def tool_allowed(name: str, settings: RuntimeSettings) -> bool:
    """Whether the chat offers and may call ``name`` (``server__tool``)."""
    if name in UTILITY:
        return True
    server = name.split("__", 1)[0] if "__" in name else ""
    if settings.chat_servers and server not in settings.chat_servers:
        return False
    patterns = settings.chat_tools
    return not patterns or any(fnmatchcase(name, p) for p in patterns)


def tool_set_text(settings: RuntimeSettings) -> str:
    """``all tools`` / ``servers github, files · tools github__*``."""
    parts = []
    if settings.chat_servers:
        parts.append("servers " + ", ".join(settings.chat_servers))
    if settings.chat_tools:
        parts.append("tools " + ", ".join(settings.chat_tools))
    return " · ".join(parts) or "all tools"


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("%s: cannot read the project's instructions (%s)", path, exc)
        return None
    if len(data) > MAX_BYTES:
        log.warning("%s: over %d bytes; the instructions are not used", path, MAX_BYTES)
        return None
    return data.decode("utf-8", errors="replace")


class ProjectInstructions:
    """The project's instructions, reviewed once per content."""

    def __init__(self, project: Path | None, prompter: Prompter, store: TrustStore) -> None:
        self.project = project
        self._prompter = prompter
        self._store = store
        self._once: set[str] = set()  # digests the person allowed for this run
        self._lock = asyncio.Lock()

    async def current(self, *, ask: bool) -> Instructions | None:
        """The instructions and whether they are on; ``ask``: review them now if they
        were never decided (a chat is about to use them)."""
        if self.project is None:
            return None
        path = self.project / INSTRUCTIONS
        text = await asyncio.to_thread(_read, path)
        if text is None or not text.strip():
            return None
        digest = hashlib.sha256(text.encode()).hexdigest()
        async with self._lock:
            state = await self._decided(digest)
            if state is None and ask:
                state = await self._review(path, text, digest)
        return Instructions(path, text, digest, state or "off")

    async def _decided(self, digest: str) -> State | None:
        if digest in self._once:
            return "on"
        assert self.project is not None
        decision = await asyncio.to_thread(self._store.get, self.project, TRUST_NAME, digest)
        if decision == "trust":
            return "on"
        if decision == "reject":
            return "off"
        return None

    async def _review(self, path: Path, text: str, digest: str) -> State | None:
        assert self.project is not None
        lines = text.splitlines()
        request = TrustRequest(
            server="project instructions",
            source=str(INSTRUCTIONS),
            project=str(self.project),
            transport="chat instructions",
            target=str(path),
            reasons=(
                "A chat opened in this project sends these instructions to the model with "
                "every request. Whoever wrote the project wrote them: read them first.",
            ),
            launch=tuple(f"line {n}: {line}" for n, line in enumerate(lines, 1)),
            pinned_files=(f"{INSTRUCTIONS} ({len(text.encode()):,} bytes, sha256 {digest[:16]})",),
        )
        try:
            choice = await self._prompter.review_trust(request)
        except Exception as exc:  # nobody can answer here (the non-interactive Prompter)
            log.info("the project's instructions were not reviewed: %s", exc)
            return None
        if choice is TrustChoice.ONCE:
            self._once.add(digest)
            return "on"
        if choice in (TrustChoice.TRUST, TrustChoice.REJECT):
            decision: Decision = "trust" if choice is TrustChoice.TRUST else "reject"
            await asyncio.to_thread(self._store.set, self.project, TRUST_NAME, digest, decision)
            return "on" if decision == "trust" else "off"
        return None  # declined or closed: off now, asked again next time


def system_section(instructions: Instructions) -> str:
    return (
        f"Instructions of the project this chat was opened in ({INSTRUCTIONS}; the person "
        "reviewed them):\n" + instructions.text.strip()
    )
