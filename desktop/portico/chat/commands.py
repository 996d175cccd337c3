"""Slash commands and mentions as both faces type them; parsed here, run by the Chat.

- ``/server:prompt arg1 "arg two" key=value`` renders an MCP prompt (positional
  arguments fill the prompt's arguments in order);
- ``/call server__tool {"json": "arguments"}`` calls a tool directly (through the guard);
- ``@server:uri`` anywhere in a message attaches that resource;
- ``/new``, ``/branch``, ``/model [NAME]``, ``/yolo [on|off]``, ``/retry``, ``/compact
  summarise|trim``, ``/reload-mcp``,
  ``/help``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

BUILTINS = ("new", "branch", "model", "yolo", "retry", "compact", "reload-mcp", "help", "call")
HELP = """\
/server:prompt ARGS…   render a server's prompt (positional or name=value arguments)
/call server__tool {…}  call a tool directly with JSON arguments
@server:uri            attach a server's resource to your message
/model [NAME]          show or change the model (provider/model; "none" for direct mode)
/yolo [on|off]         skip tool approvals in this chat (spend limits still ask)
/retry                 ask again for the last answer (after a failed or stopped turn)
/compact summarise|trim  leave older messages out of what is sent (a summary instead, or
                       nothing); they stay in the chat
/new                   start a new chat
/branch                continue this chat in a new branch
/reload-mcp            reload the config and reconnect changed servers
/help                  this list"""

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]+):(\S+)")
_PROMPT = re.compile(r"^/([A-Za-z0-9_-]+):(\S+)(?:\s+(.*))?$", re.DOTALL)
_BUILTIN = re.compile(r"^/([a-z-]+)(?:\s+(.*))?$", re.DOTALL)

Kind = Literal["text", "builtin", "prompt", "unknown"]


@dataclass(frozen=True)
class Parsed:
    kind: Kind
    name: str = ""  # builtin name, or the prompt's name
    server: str = ""
    rest: str = ""  # everything after the command word


def parse(text: str) -> Parsed:
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return Parsed("text", rest=text[1:] if stripped.startswith("//") else text)
    match = _PROMPT.match(stripped)
    if match:
        return Parsed(
            "prompt",
            name=match.group(2),
            server=match.group(1),
            rest=(match.group(3) or "").strip(),
        )
    match = _BUILTIN.match(stripped)
    if match and match.group(1) in BUILTINS:
        return Parsed("builtin", name=match.group(1), rest=(match.group(2) or "").strip())
    return Parsed("unknown", name=stripped.split()[0])


def mentions(text: str, servers: Sequence[str]) -> list[tuple[str, str]]:
    """``(server, uri)`` for every ``@server:uri`` naming a configured server."""
    known = set(servers)
    return [
        (m.group(1), m.group(2).rstrip(".,;:!?)"))
        for m in MENTION.finditer(text)
        if m.group(1) in known
    ]


def strip_mentions(text: str, servers: Sequence[str]) -> str:
    known = set(servers)
    return MENTION.sub(lambda m: "" if m.group(1) in known else m.group(0), text).strip()


class UsageError(ValueError):
    """A command typed wrongly; the message has the usage line."""


def split_call(rest: str) -> tuple[str, dict[str, Any]]:
    """``server__tool {json}`` -> (name, arguments)."""
    name, _, raw = rest.partition(" ")
    name = name.strip()
    if not name:
        raise UsageError('usage: /call server__tool {"argument": "value"}')
    raw = raw.strip()
    if not raw:
        return name, {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise UsageError(
            f"/call {name}: the arguments are not valid JSON ({exc}); usage: /call "
            f'{name} {{"argument": "value"}}'
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"/call {name}: the arguments must be a JSON object {{...}}")
    return name, value


def prompt_usage(server: str, prompt: Any) -> str:
    words = []
    for argument in getattr(prompt, "arguments", None) or []:
        name = argument.name.upper()
        words.append(name if argument.required else f"[{name}]")
    return f"usage: /{server}:{prompt.name} {' '.join(words)}".rstrip()


def prompt_arguments(server: str, prompt: Any, rest: str) -> dict[str, str]:
    """Positional and ``name=value`` words -> the prompt's arguments; UsageError with the
    usage line when a required one is missing or there are too many."""
    declared = list(getattr(prompt, "arguments", None) or [])
    try:
        words = shlex.split(rest) if rest else []
    except ValueError as exc:
        raise UsageError(f"{exc}; {prompt_usage(server, prompt)}") from None
    names = [a.name for a in declared]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if len(positional) > len(free):
        if not free:
            raise UsageError(f"too many arguments; {prompt_usage(server, prompt)}")
        # the last free argument takes the rest of the line ("/x:summarise a long text")
        head, tail = positional[: len(free) - 1], positional[len(free) - 1 :]
        positional = [*head, " ".join(tail)]
    for name, value in zip(free, positional, strict=False):
        values[name] = value
    missing = [a.name for a in declared if a.required and a.name not in values]
    if missing:
        raise UsageError(
            f"/{server}:{prompt.name} needs {', '.join(missing)}; {prompt_usage(server, prompt)}"
        )
    return values
