"""A stored conversation as Markdown (the shown branch, for people) or JSON (all of it)."""

from __future__ import annotations

import json
import time
from typing import Any

from portico.chat.attachments import size_text
from portico.chat.messages import Message, text_beyond_rounds
from portico.chat.store import StoredConversation
from portico.chat.tree import path_to


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def to_markdown(stored: StoredConversation) -> str:
    lines = [f"# {stored.title or 'Untitled chat'}", ""]
    meta = [f"Started {_when(stored.created)}"]
    if stored.model:
        meta.append(f"model {stored.model}")
    lines += [", ".join(meta) + ".", ""]
    for message in path_to(stored.messages, stored.leaf_id):
        who = "You" if message.role == "user" else f"Assistant ({message.model or 'direct'})"
        lines += [f"## {who}", ""]
        for attachment in message.attachments:
            where = attachment.uri or attachment.path
            size = size_text(attachment.size) if attachment.size else ""
            kind = ", ".join(x for x in (attachment.mime_type, size) if x)
            lines.append(f"> Attached: {attachment.name} ({where}{'; ' + kind if kind else ''})")
        if message.attachments:
            lines.append("")
        lines += _body(message)
        if message.status == "stopped":
            lines += ["", "_(stopped)_"]
        elif message.status == "failed":
            lines += ["", f"_(failed: {message.error})_"]
        elif message.status == "streaming":
            lines += ["", "_(interrupted)_"]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _body(message: Message) -> list[str]:
    if not message.rounds:
        out = [message.text] if message.text else []
        out += [_call(c) for c in message.tool_calls]
        return out
    calls = {c.id: c for c in message.tool_calls}
    out = []
    for round_ in message.rounds:
        if round_.text:
            out += [round_.text, ""]
        for call_id in round_.tool_call_ids:
            call = calls.get(call_id)
            if call is not None:
                out += [_call(call), ""]
    beyond = text_beyond_rounds(message)  # an answer stored while it streamed
    return [*out, beyond] if beyond else out


def _call(call: Any) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    result = call.result_text.strip() or f"({call.outcome})"
    quoted = "\n".join(f"    {line}" for line in result.splitlines()) or "    "
    return f"**Tool call** `{call.name}` `{arguments}` — {call.outcome}:\n\n{quoted}"


def to_json(stored: StoredConversation) -> str:
    data = {
        "format": 1,
        "id": stored.id,
        "title": stored.title,
        "created": stored.created,
        "updated": stored.updated,
        "model": stored.model,
        "parent": stored.parent_id,
        "leaf": stored.leaf_id,
        "active_tools": stored.active_tools,
        "spend": stored.spend,
        "tokens": {"input": stored.input_tokens, "output": stored.output_tokens},
        "messages": [
            {
                "id": m.id,
                "parent": m.parent_id,
                "role": m.role,
                "text": m.text,
                "status": m.status,
                "model": m.model,
                "error": m.error,
                "created": m.created,
                "tokens": {"input": m.input_tokens, "output": m.output_tokens},
                "attachments": [
                    {
                        "kind": a.kind,
                        "name": a.name,
                        "uri": a.uri,
                        "path": str(a.path) if a.path else None,
                        "server": a.server,
                        "mime_type": a.mime_type,
                        "size": a.size,
                    }
                    for a in m.attachments
                ],
                "tool_calls": [
                    {
                        "id": c.id,
                        "name": c.name,
                        "arguments": c.arguments,
                        "outcome": c.outcome,
                        "result": c.result_text,
                        "images": [str(p) for p in c.result_images],
                        "is_error": c.is_error,
                        "duration": c.duration,
                    }
                    for c in m.tool_calls
                ],
            }
            for m in stored.messages
        ],
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
