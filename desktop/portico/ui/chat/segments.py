"""A message as a list of segments (text parts and tool-call lines), in the order the
transcript shows them: what Select text puts in its document."""

from __future__ import annotations

from dataclasses import dataclass

from portico.chat.messages import Message, text_beyond_rounds
from portico.ui.chat.card_state import from_stored
from portico.ui.chat.tool_card import OUTCOME_WORDS, CardState


@dataclass(frozen=True)
class Segment:
    """A piece of a message as shown: Markdown text, or a tool call's summary line."""

    kind: str  # "text" | "call" | "note"
    text: str


def call_line(state: CardState) -> str:
    where = f"{state.server} · " if state.server else ""
    outcome = OUTCOME_WORDS.get(state.outcome or "", "Running") if state.outcome else "Running"
    return f"Tool call {where}{state.tool or state.qualified_name}: {outcome}"


def message_segments(message: Message) -> list[Segment]:
    """A stored message in the order the transcript shows it (see MessageWidget._fill)."""
    out: list[Segment] = []
    if message.role == "user":
        if message.text:
            out.append(Segment("text", message.text))
        out += [Segment("note", f"Attached: {a.name}") for a in message.attachments]
        return out
    calls = {call.id: call for call in message.tool_calls}
    if message.rounds:
        for part in message.rounds:
            if part.text:
                out.append(Segment("text", part.text))
            for call_id in part.tool_call_ids:
                if call_id in calls:
                    out.append(Segment("call", call_line(from_stored(calls.pop(call_id)))))
        beyond = text_beyond_rounds(message)
        if beyond:
            out.append(Segment("text", beyond))
    elif message.text:
        out.append(Segment("text", message.text))
    out += [Segment("call", call_line(from_stored(c))) for c in calls.values()]
    return out


def author(message: Message) -> str:
    return "You" if message.role == "user" else (message.model or "Assistant")
