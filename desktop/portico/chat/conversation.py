"""``Chat``: one conversation = messages (a tree) + loaded tools + spend + model choice.

Plain asyncio, thread-agnostic: create and drive a Chat on one loop (the runtime thread
in the app, ``asyncio.run`` in the CLI). Every turn method returns an async iterator of
:mod:`portico.chat.events`; iterate it to run the turn. To stop a turn, cancel the task
that iterates it: streaming stops, running tool calls are cancelled (their servers get
``notifications/cancelled``), the partial answer is kept with ``status="stopped"``, and a
``TurnFinished(stop_reason="stopped")`` is yielded if the iterator is still consumed
(``Chat.stop()`` does the cancelling for a face that does not hold the task).

Only one turn runs at a time per Chat: starting another while one runs raises ChatBusy.
Everything is written to the store as it happens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from portico.chat.events import Event
from portico.chat.messages import Attachment, Message

if TYPE_CHECKING:
    from portico.policy.guard import ChatContext
    from portico.runtime.toolsearch import ActiveSet


class ChatError(Exception):
    """A request a face made that cannot be done (unknown model, unknown message id);
    the message says what to do."""


class ChatBusy(ChatError):
    """A turn is already running in this conversation."""


class Chat:
    """Created by :class:`portico.chat.host.ChatHost` (``new`` / ``open`` / ``branch``)."""

    id: str

    # --- state --------------------------------------------------------------------
    @property
    def title(self) -> str:
        """The title ("" until the first exchange produced one)."""
        raise NotImplementedError

    @property
    def model(self) -> str | None:
        """``"provider/model"`` the next turn uses; None: no model (direct mode only)."""
        raise NotImplementedError

    @property
    def yolo(self) -> bool:
        """Tool approvals skipped for this chat (spend limits still ask)."""
        raise NotImplementedError

    @property
    def messages(self) -> list[Message]:
        """The shown path of the tree, oldest first (copies are not made: do not mutate)."""
        raise NotImplementedError

    @property
    def active_tools(self) -> ActiveSet:
        """Deferred tools this conversation loaded through tool_search."""
        raise NotImplementedError

    @property
    def context(self) -> ChatContext:
        """What the guard sees: chat id, spend ledger (shared with branches), yolo."""
        raise NotImplementedError

    @property
    def busy(self) -> bool:
        raise NotImplementedError

    @property
    def parent_id(self) -> str | None:
        """The conversation this one was branched from."""
        raise NotImplementedError

    # --- turns ----------------------------------------------------------------------
    def send(self, text: str, attachments: Sequence[Attachment] = ()) -> AsyncIterator[Event]:
        """Send a message and run the turn. Slash commands (``/help`` lists them) and
        ``@server:uri`` mentions are resolved here, so every face gets them; with no
        model configured, commands run in direct mode."""
        raise NotImplementedError

    def retry(self) -> AsyncIterator[Event]:
        """Run the last turn again after a TurnFailed (or a stopped turn): the failed
        assistant message is replaced, the user message is kept."""
        raise NotImplementedError

    def edit(
        self, message_id: str, text: str, attachments: Sequence[Attachment] | None = None
    ) -> AsyncIterator[Event]:
        """Edit-and-resend: a new sibling of user message ``message_id`` (a branch; the old
        one stays reachable through :meth:`siblings`), then a turn from there.
        ``attachments=None`` keeps the original message's attachments."""
        raise NotImplementedError

    def regenerate(self, message_id: str | None = None) -> AsyncIterator[Event]:
        """A new answer to the same question, as a sibling of assistant message
        ``message_id`` (default: the last answer)."""
        raise NotImplementedError

    def stop(self) -> bool:
        """Cancel the running turn (as cancelling its task does); False if none runs."""
        raise NotImplementedError

    # --- branches -------------------------------------------------------------------
    def siblings(self, message_id: str) -> list[str]:
        """Ids of the versions of that message (itself included), oldest first."""
        raise NotImplementedError

    async def switch_to(self, message_id: str) -> None:
        """Show the branch that contains ``message_id`` (its newest descendants)."""
        raise NotImplementedError

    # --- settings -----------------------------------------------------------------
    async def set_model(self, ref: str | None) -> None:
        """``"provider/model"``, ``"provider"`` (its default model) or None (no model).
        Raises ChatError naming the configured choices when ``ref`` is unknown."""
        raise NotImplementedError

    async def set_yolo(self, on: bool) -> None:
        raise NotImplementedError

    async def rename(self, title: str) -> None:
        raise NotImplementedError

    def completions(self, text: str) -> list[str]:
        """Completions for a partly typed slash command or mention (``/ev`` ->
        ``/everything:``..., ``@everything:`` -> resource URIs known so far)."""
        raise NotImplementedError
