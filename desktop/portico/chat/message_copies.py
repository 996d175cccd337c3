"""Copies of a chat's messages for another thread, copy-on-write.

The app's GUI gets a chat as a snapshot of copies (the core goes on changing its own
messages on the runtime thread). A deep copy of every message each time cost ~30 ms (idle) on
a 2,000-message chat; here a message whose :func:`stamp` is what it was at the last
snapshot shares the copy made then, and only the messages that changed (the answer being
written, a call whose task result arrived) are copied again. The copies are shared
between snapshots: nobody may change them.

The stamp is every field of a message, of its rounds and of its tool calls (strings by
hash, which Python keeps with each string, so a stamp costs a few microseconds);
``arguments`` and ``Round.native`` (set once, when the call or the round is made) by
identity and length. :data:`STAMPED` names the fields it covers: a test fails when a
field is added to one of these classes and not here.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Sequence

from portico.chat.messages import Message, Round, ToolCall

STAMPED: dict[type, tuple[str, ...]] = {
    Message: (
        "id",
        "role",
        "text",
        "parent_id",
        "created",
        "status",
        "model",
        "tool_calls",
        "attachments",
        "error",
        "input_tokens",
        "output_tokens",
        "rounds",
    ),
    Round: ("text", "tool_call_ids", "thinking", "native", "native_kind"),
    ToolCall: (
        "id",
        "name",
        "arguments",
        "raw_arguments",
        "outcome",
        "result_text",
        "result_images",
        "is_error",
        "duration",
        "view_uri",
    ),
}


def _call(c: ToolCall) -> Hashable:
    return (
        c.id,
        c.name,
        id(c.arguments),
        len(c.arguments),
        hash(c.raw_arguments),
        c.outcome,
        hash(c.result_text),
        c.result_images,
        c.is_error,
        c.duration,
        c.view_uri,
    )


def _round(r: Round) -> Hashable:
    return (
        hash(r.text),
        tuple(r.tool_call_ids),
        hash(r.thinking),
        id(r.native),
        len(r.native),
        r.native_kind,
    )


def stamp(m: Message) -> Hashable:
    """What ``m`` holds now, cheaply: equal stamps, equal messages (up to hash
    collisions of their strings)."""
    return (
        m.id,
        m.role,
        hash(m.text),
        m.parent_id,
        m.created,
        m.status,
        m.model,
        tuple(map(_call, m.tool_calls)),
        tuple(m.attachments),  # frozen dataclasses: compared by value
        m.error,
        m.input_tokens,
        m.output_tokens,
        tuple(map(_round, m.rounds)),
    )


class MessageCopies:
    """One chat's copies, kept from one snapshot to the next."""

    def __init__(self) -> None:
        # message id -> (the core's message, its stamp, the copy made of it)
        self._kept: dict[str, tuple[Message, Hashable, Message]] = {}
        self.copied = 0  # messages copied (again) so far

    def copies(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        out = []
        for message in messages:
            now = stamp(message)
            kept = self._kept.get(message.id)
            if kept is not None and kept[0] is message and kept[1] == now:
                out.append(kept[2])
                continue
            made = copy.deepcopy(message)
            self.copied += 1
            self._kept[message.id] = (message, now, made)
            out.append(made)
        if len(self._kept) > len(out):  # messages gone (a branch left, a chat trimmed)
            here = {m.id for m in out}
            self._kept = {k: v for k, v in self._kept.items() if k in here}
        return tuple(out)
