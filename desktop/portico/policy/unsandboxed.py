"""On a machine that cannot sandbox: a sandboxed server runs only if the person agrees.

The question goes through the Prompter (``run_unsandboxed``); a yes is remembered per
server in ``<state dir>/unsandboxed.json``, bound to the server's config (its trust
digest), so an edited server asks again. A no, a refusal (nobody can answer) or a closed
question leaves the server stopped, asked again at its next start.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from portico.config.model import ServerSpec
from portico.paths import paths
from portico.policy.approval_store import write_json_atomic
from portico.policy.ask import ask_outcome
from portico.policy.trust_store import trust_digest
from portico.prompts import Prompter, UnsandboxedRequest

FILE_NAME = "unsandboxed.json"


def _key(spec: ServerSpec, weaker: str = "") -> str:
    # a yes to a weaker sandbox is not a yes to none (nor the other way)
    return f"{spec.source.path}::{spec.name}" + ("::weaker" if weaker else "")


class UnsandboxedConsent:
    """``ConnectionHooks.unsandboxed_ok``: ask once per server config, remember a yes."""

    def __init__(self, prompter: Prompter, path: Path | None = None) -> None:
        self.prompter = prompter
        self.path = path or paths().state_dir / FILE_NAME
        self._lock = asyncio.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def agreed(self, spec: ServerSpec, weaker: str = "") -> bool:
        """The person said yes to this very config before (storage only)."""
        return self._read().get(_key(spec, weaker)) == trust_digest(spec)

    async def __call__(self, spec: ServerSpec, why: str, *, weaker: str = "") -> bool:
        """May it run without a sandbox (``weaker`` empty) or in a weaker one that
        cannot do what ``weaker`` says?"""
        async with self._lock:  # one question per server at a time, one file writer
            if await asyncio.to_thread(self.agreed, spec, weaker):
                return True
            request = UnsandboxedRequest(spec.name, str(spec.source), why, weaker)
            outcome = await ask_outcome(self.prompter.run_unsandboxed(request))
            if not outcome.answered or not outcome.answer:
                return False
            await asyncio.to_thread(self.remember, spec, weaker)
            return True

    def remember(self, spec: ServerSpec, weaker: str = "") -> None:
        """Store a yes for this very config (as if the person had agreed)."""
        data = self._read()
        data[_key(spec, weaker)] = trust_digest(spec)
        write_json_atomic(self.path, data)
