"""Slash commands and mentions as both faces type them; parsed here, run by the Chat.

- ``/server:prompt arg1 "arg two" key=value`` renders an MCP prompt (positional
  arguments fill the prompt's arguments in order);
- ``/call server__tool {"json": "arguments"}`` calls a tool directly (through the guard);
- ``@server:uri`` anywhere in a message attaches that resource;
- the built-ins of :data:`COMMANDS` (``/new``, ``/model [NAME]``, ``/help``…), the one
  table both faces' ``/help`` is made from.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Face = Literal["gui", "cli"]
BOTH: frozenset[Face] = frozenset(("gui", "cli"))


@dataclass(frozen=True)
class Command:
    """One row of the command table: ``/help`` on both faces, the completion hints and
    the GUI's F1 list are made from it (never a second, hand-kept list)."""

    usage: str  # as typed: "/model [NAME]"
    what: str
    name: str = ""  # a built-in's word ("model"); "" for a syntax (a prompt, a mention)
    faces: frozenset[Face] = BOTH


COMMANDS: tuple[Command, ...] = (
    Command(
        "/server:prompt ARGS…", "render a server's prompt (positional or name=value arguments)"
    ),
    Command("/call server__tool {…}", "call a tool directly with JSON arguments", "call"),
    Command("@server:uri", "attach a server's resource to your message"),
    Command(
        "/model [NAME]",
        'show or change the model (provider/model; "none" for direct mode)',
        "model",
    ),
    Command("/yolo [on|off]", "skip tool approvals in this chat (spend limits still ask)", "yolo"),
    Command("/retry", "ask again for the last answer (after a failed or stopped turn)", "retry"),
    Command(
        "/compact summarise|trim",
        "leave older messages out of what is sent (summarised or trimmed); they stay in the chat",
        "compact",
    ),
    Command("/new", "start a new chat", "new"),
    Command("/branch", "continue this chat in a new branch", "branch"),
    Command("/reload-mcp", "reload the config and reconnect changed servers", "reload-mcp"),
    Command("/help", "list the commands", "help"),
    Command("/exit, /quit", "leave the chat (Ctrl+D too)", faces=frozenset(("cli",))),
)
BUILTINS = tuple(c.name for c in COMMANDS if c.name)
# After the table, what each face adds (its keys are not commands: F1 lists the GUI's)
_FOOTER: dict[Face, str] = {
    "gui": "F1 lists the keyboard shortcuts; // at the start sends a message starting with /.",
    "cli": "Ctrl+C stops a turn, Ctrl+D leaves; Tab completes; // at the start sends a "
    "message starting with /.",
}


def commands_of(face: Face) -> tuple[Command, ...]:
    return tuple(c for c in COMMANDS if face in c.faces)


def help_text(face: Face) -> str:
    """``/help`` as ``face`` shows it: the table's rows for that face, then its footer
    (a terminal's in two columns; the GUI's one "usage — what" a line, its font being
    proportional)."""
    rows = commands_of(face)
    if face == "gui":
        lines = [f"{c.usage}  —  {c.what}" for c in rows]
    else:
        width = max(len(c.usage) for c in rows) + 2
        lines = [c.usage.ljust(width) + c.what for c in rows]
    return "\n".join([*lines, "", _FOOTER[face]])


def hint(name: str) -> str:
    """What the built-in ``name`` does (the completion popup's hint), "" when unknown."""
    return next((c.what for c in COMMANDS if c.name == name), "")


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
