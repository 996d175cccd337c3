"""TerminalPrompter: asks the person at the terminal, without blocking the event loop.

Answers are read with ``loop.add_reader`` on the input's file descriptor (a TTY or a pipe),
so the loop keeps running MCP traffic while the person types, and an aborted question
(its task cancelled) simply stops waiting. Where ``add_reader`` is not available the
line is read in a worker thread. One question at a time: questions queue on a lock.
A closed input (EOF) refuses the question.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Mapping
from typing import Any, Literal, TextIO, TypeVar

from portico.policy.prompters import review_detail_lines, trust_level_line
from portico.policy.url_review import review_url
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
    SamplingMessage,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustChoice,
    TrustRequest,
    UnsandboxedRequest,
)
from portico.text import visible

T = TypeVar("T")
ElicitAction = Literal["accept", "decline", "cancel"]


class LineReader:
    """Reads lines from a file descriptor without blocking the loop."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._buffer = b""
        self._eof = False
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None

    async def readline(self) -> str:
        """One line without its newline; raises EOFError when the input is closed."""
        if self._fd is None:
            line = await asyncio.to_thread(self.stream.readline)
            if not line:
                raise EOFError
            return line.rstrip("\r\n")
        while b"\n" not in self._buffer and not self._eof:
            await self._wait_readable(self._fd)
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                self._eof = True
            self._buffer += data
        if b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
        elif self._buffer:
            raw, self._buffer = self._buffer, b""
        else:
            raise EOFError
        return raw.decode(errors="replace").rstrip("\r")

    async def _wait_readable(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def on_ready() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(fd, on_ready)
        except (NotImplementedError, ValueError, OSError):
            # No selector support (e.g. Windows' proactor loop): read in a thread.
            chunk = await asyncio.to_thread(self.stream.buffer.readline)
            if not chunk:
                self._eof = True
            self._buffer += chunk
            self._fd = None if not chunk else self._fd
            return
        try:
            await ready
        finally:
            loop.remove_reader(fd)


def _coerce(value: str, prop: Mapping[str, Any]) -> Any:
    """Turn typed text into the JSON type the schema asks for (ValueError if it can't)."""
    kind = prop.get("type")
    if kind == "boolean":
        low = value.strip().lower()
        if low in ("y", "yes", "true", "1"):
            return True
        if low in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if kind == "integer":
        return int(value)
    if kind == "number":
        number = float(value)
        return int(number) if number.is_integer() and "." not in value else number
    if kind == "array":
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _choices(prop: Mapping[str, Any]) -> list[str]:
    if "enum" in prop:
        return [str(v) for v in prop["enum"]]
    for key in ("oneOf", "anyOf"):
        if key in prop:
            return [str(o.get("const")) for o in prop[key] if isinstance(o, Mapping)]
    items = prop.get("items")
    if isinstance(items, Mapping):
        return _choices(items)
    return []


class TerminalPrompter:
    def __init__(self, input: TextIO | None = None, output: TextIO | None = None) -> None:
        self.input = input or sys.stdin
        self.output = output or sys.stdout
        self._reader = LineReader(self.input)
        self._lock = asyncio.Lock()

    # --- plumbing ------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        self.output.write(visible(text, multiline=True) + "\n")
        self.output.flush()

    def say_url(self, url: str) -> None:
        """A URL as every face shows one: the site first (with its punycode form), the
        whole address, then each look-alike warning (``policy.url_review``)."""
        for line in review_url(url).lines(address=""):
            self.say(f"  {line}")

    async def read(self, prompt: str) -> str:
        self.output.write(prompt)
        self.output.flush()
        try:
            return (await self._reader.readline()).strip()
        except EOFError:
            raise Refused("the terminal input was closed, so nobody can answer") from None

    async def pick(self, prompt: str, keys: Mapping[str, T], *, default: T | None = None) -> T:
        """Ask until one of ``keys`` is typed; an empty line gives ``default`` if set."""
        while True:
            answer = await self.read(prompt)
            if not answer and default is not None:
                return default
            if answer in keys:
                return keys[answer]
            if answer.lower() in keys:
                return keys[answer.lower()]
            self.say(f"Please type one of: {', '.join(keys)}")

    # --- trust ---------------------------------------------------------------------
    async def review_trust(self, request: TrustRequest) -> TrustChoice:
        async with self._lock:
            self.say()
            self.say(f"Server '{request.server}' is waiting for a trust review")
            self.say(f"  defined in: {request.source}")
            label = "command" if request.transport == "stdio" else "url"
            self.say(f"  {label}: {request.target}")
            if request.env_names:
                self.say(f"  env: {', '.join(request.env_names)} (values hidden)")
            if request.header_names:
                self.say(f"  headers: {', '.join(request.header_names)} (values hidden)")
            self.say(f"  trust: {trust_level_line(request.trust_level)}")
            for detail in review_detail_lines(request):
                self.say(f"  {detail}")
            for cost in request.costs:
                self.say(f"  cost: {cost}")
            if request.secrets:
                self.say("  your secrets it would receive:")
                for line in request.secrets:
                    self.say(f"    {line}")
            for reason in request.reasons:
                self.say(f"  - {reason}")
            keys: dict[str, TrustChoice] = {"o": TrustChoice.ONCE}
            line = "  [o] connect once"
            if request.can_persist:
                keys["p"] = TrustChoice.TRUST
                line += "  [p] trust this exact config"
            else:
                line += "  (trust cannot be saved while DNS fails)"
            keys["r"] = TrustChoice.REJECT
            line += "  [r] reject and disable  [Enter] later"
            self.say(line)
            return await self.pick("> ", keys, default=TrustChoice.DECLINE)

    # --- approvals -----------------------------------------------------------------
    async def approve_tool(self, request: ToolApprovalRequest) -> ApprovalAnswer:
        async with self._lock:
            self.say()
            self.say(f"'{request.server}' wants to run {request.tool}")
            if request.caller is not None and request.caller.kind == "client":
                self.say(f"  asked by {request.caller.describe()}")
            if request.reason:
                self.say(f"  ({request.reason})")
            if request.description:
                self.say(f"  {request.description.splitlines()[0]}")
            for line in (request.cost_line, request.spend_line):
                if line:
                    self.say(f"  {line}")
            self.say("  arguments:")
            for line in request.arguments_json.splitlines():
                self.say(f"    {line}")
            labels = {
                ApprovalChoice.ONCE: ("o", "allow once"),
                ApprovalChoice.SESSION: ("s", "allow for this session"),
                ApprovalChoice.ALWAYS: ("a", "always allow"),
                ApprovalChoice.DENY: ("d", "deny"),
            }
            keys: dict[str, ApprovalAnswer] = {}
            shown: list[str] = []
            for choice in request.choices:
                key, text = labels[choice]
                keys[key] = ApprovalAnswer(choice)
                shown.append(f"[{key}] {text}")
                if request.offers_any_arguments and choice in (
                    ApprovalChoice.SESSION,
                    ApprovalChoice.ALWAYS,
                ):
                    keys[key + "*"] = ApprovalAnswer(choice, any_arguments=True)
                    shown.append(f"[{key}*] {text} with any arguments")
            self.say("  " + "  ".join(shown))
            return await self.pick("> ", keys)

    async def approve_spend(self, request: SpendApprovalRequest) -> ApprovalChoice:
        async with self._lock:
            self.say()
            self.say(f"'{request.server}' wants to run {request.tool}")
            for line in (request.cost_line, request.spend_line, request.limit_line):
                self.say(f"  {line}")
            self.say("  arguments:")
            for line in request.arguments_json.splitlines():
                self.say(f"    {line}")
            keys = {"o": ApprovalChoice.ONCE, "d": ApprovalChoice.DENY}
            self.say("  [o] allow once  [d] deny")
            return await self.pick("> ", {k: v for k, v in keys.items() if v in request.choices})

    # --- no sandbox on this machine ---------------------------------------------------
    async def run_unsandboxed(self, request: UnsandboxedRequest) -> bool:
        async with self._lock:
            self.say()
            self.say(request.question)
            self.say("  [y] yes, run it unsandboxed (remembered for this server)  [n] no")
            return await self.pick("> ", {"y": True, "n": False})

    # --- OAuth ---------------------------------------------------------------------
    async def authorize(self, request: AuthorizeRequest) -> str | None:
        async with self._lock:
            self.say()
            if request.reauth:
                self.say(f"'{request.server}' needs you to sign in again.")
            opened = "A browser window was opened. " if request.browser_opened else ""
            self.say(f"Sign in to '{request.server}': {opened}Open this URL:")
            self.say_url(request.authorize_url)
            while True:
                text = await self.read("Or paste the redirect URL here (Enter to cancel): ")
                if not text:
                    return None
                problem = request.check_paste(text)
                if problem is None:
                    return text
                self.say(f"That did not work: {problem}")

    async def device_code(self, request: DeviceCodeRequest) -> None:
        async with self._lock:
            self.say()
            self.say(f"Sign in to '{request.server}' on any device: open")
            self.say_url(request.verification_uri_complete or request.verification_uri)
            self.say(f"  and enter the code {request.user_code}")
            with contextlib.suppress(Refused):
                await self.read("Waiting for approval (Enter to cancel) ")

    # --- elicitation ---------------------------------------------------------------
    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        async with self._lock:
            self.say()
            self.say(f"'{request.server}' asks: {request.message}")
            if request.mode == "url":
                self.say("  It wants you to open:")
                self.say_url(request.url or "")
                keys: dict[str, ElicitAction] = {"a": "accept", "d": "decline", "c": "cancel"}
                self.say("  [a] open it in my browser  [d] decline  [c] cancel")
                return ElicitationAnswer(await self.pick("> ", keys))
            if request.error:
                self.say(f"  The last answer was not accepted: {request.error}")
            keys = {"y": "accept", "n": "decline", "c": "cancel"}
            question = "  Answer it? [y] yes  [n] decline  [c] cancel > "
            action: ElicitAction = await self.pick(question, keys)
            if action != "accept":
                return ElicitationAnswer(action)
            return ElicitationAnswer("accept", await self._form(request))

    async def _form(self, request: ElicitationRequest) -> dict[str, Any]:
        properties: Mapping[str, Any] = request.schema.get("properties") or {}
        required = set(request.schema.get("required") or ())
        content: dict[str, Any] = {}
        for name, prop in properties.items():
            prop = prop if isinstance(prop, Mapping) else {}
            title = prop.get("title") or name
            if prop.get("description"):
                self.say(f"  {title}: {prop['description']}")
            choices = _choices(prop)
            if choices:
                self.say(f"    choices: {', '.join(choices)}")
            default = request.defaults.get(name)
            hint = f" [{json.dumps(default) if not isinstance(default, str) else default}]"
            mark = "" if name in required else " (optional)"
            while True:
                text = await self.read(f"  {title}{mark}{hint if default is not None else ''}: ")
                if not text:
                    if default is not None:
                        content[name] = default
                    break
                try:
                    content[name] = _coerce(text, prop)
                except ValueError as exc:
                    self.say(f"    {exc or 'not a valid value'}")
                    continue
                break
        return content

    # --- sampling ------------------------------------------------------------------
    async def review_sampling(self, request: SamplingRequest) -> SamplingAnswer:
        async with self._lock:
            self.say()
            self.say(f"'{request.server}' asks to use the model ({request.model})")
            if request.requested_model:
                self.say(f"  it asked for: {request.requested_model}")
            self.say(f"  max tokens: {request.max_tokens}")
            if request.system_prompt:
                self.say(f"  system: {request.system_prompt}")
            for message in request.messages:
                self.say(f"  {message.role}: {message.text}")
            keys = {"a": "approve", "e": "edit", "d": "deny"}
            action = await self.pick("  [a] approve  [e] edit  [d] deny > ", keys)
            if action == "deny":
                return SamplingAnswer("deny")
            if action == "approve":
                return SamplingAnswer("approve")
            return await self._edit_sampling(request)

    async def _edit_sampling(self, request: SamplingRequest) -> SamplingAnswer:
        messages = list(request.messages)
        last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
        if last_user is not None:
            text = await self.read("  new text of the last user message (Enter keeps it): ")
            if text:
                messages[last_user] = SamplingMessage("user", text)
        system = await self.read("  new system prompt (Enter keeps it): ")
        max_tokens: int | None = None
        while True:
            raw = await self.read(f"  max tokens [{request.max_tokens}]: ")
            if not raw:
                break
            try:
                max_tokens = int(raw)
            except ValueError:
                self.say("    type a whole number")
                continue
            break
        return SamplingAnswer(
            "approve",
            messages=tuple(messages),
            system_prompt=system or None,
            max_tokens=max_tokens,
        )

    # --- notices -------------------------------------------------------------------
    async def notify(self, notice: Notice) -> None:
        where = f"{notice.server}: " if notice.server else ""
        self.say(f"{notice.level}: {where}{notice.text}")
