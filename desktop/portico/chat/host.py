"""``ChatHost``: where conversations come from, wired to the hub, the policy and the store.

One per process, on the loop that runs the hub (the runtime thread in the app). A face
builds it once with its own Prompter::

    host = ChatHost(hub, services.policy, prompter, config=config)
    chat = await host.new()                 # or await host.open(conversation_id)
    async for event in chat.send("hello"):  # render events
        ...

``apply_config`` follows config reloads (providers, default model, settings).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from portico.config.model import Config

if TYPE_CHECKING:
    from portico.chat.conversation import Chat
    from portico.chat.providers.catalog import ModelCatalog
    from portico.chat.store import ChatStore
    from portico.policy.setup import Policy
    from portico.prompts import Prompter
    from portico.runtime.hub import Hub


class ChatHost:
    def __init__(
        self,
        hub: Hub,
        policy: Policy,
        prompter: Prompter,
        *,
        config: Config | None = None,
        store: ChatStore | None = None,
        store_path: Path | None = None,
        yolo: bool = False,
        max_tool_rounds: int = 25,
        project: Path | None = None,
    ) -> None:
        """``store``/``store_path``: default ``<state dir>/chats.sqlite3``. ``yolo``: every
        chat of this process skips tool approvals (``--yolo``). ``project``: the folder
        project-scope conversations belong to (shown in the list)."""
        raise NotImplementedError

    @property
    def store(self) -> ChatStore:
        raise NotImplementedError

    @property
    def models(self) -> ModelCatalog:
        """The configured providers; also the ModelProvider that answers sampling."""
        raise NotImplementedError

    def apply_config(self, config: Config) -> None:
        """Take the providers, default model and settings of a reloaded config."""
        raise NotImplementedError

    async def new(self, model: str | None = None, *, title: str = "") -> Chat:
        """A new conversation (model: ``"P/M"``, default: the configured default)."""
        raise NotImplementedError

    async def open(self, conversation_id: str) -> Chat:
        """Resume a stored conversation: its messages, model, loaded tools and spend
        totals come back. Raises ChatError (plain words) for an unknown or unreadable id;
        a unique id prefix is accepted."""
        raise NotImplementedError

    async def branch(self, chat: Chat, at_message_id: str | None = None) -> Chat:
        """A new conversation continuing ``chat`` (up to ``at_message_id``, default the
        end): same messages and loaded tools, spend totals shared, ``parent_id`` set."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop running turns and flush the store."""
        raise NotImplementedError
