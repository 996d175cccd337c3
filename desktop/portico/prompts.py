"""The Prompter port: every question the core asks a person goes through here.

The core awaits one method per question. A face answers it: ``ui/`` with a non-modal
dialog, ``cli/`` with a terminal prompt, ``NonInteractivePrompter`` (in
``portico.policy.prompters``) by refusing with an actionable message.

Aborting a question (server gone, timeout, chat stopped) is done by cancelling the task
that awaits it; an implementation must then close whatever it showed. The policy layer
(see ``portico.policy.ask``) turns an aborted or timed-out question into a decline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

log = logging.getLogger(__name__)


class Refused(Exception):
    """Raised by a Prompter that cannot ask anybody. The message says what to do instead."""


# How a question ended: an answer, a Prompter that cannot ask (Refused), its time ran out,
# or it was closed / cancelled without an answer.
EndedBy = Literal["answered", "refused", "timeout", "aborted"]


# --- trust review -------------------------------------------------------------------


class TrustChoice(StrEnum):
    ONCE = "once"  # connect for this process only   (key o)
    TRUST = "trust"  # persist trust for this exact config (key p)
    REJECT = "reject"  # persist rejection in the person's trust store (key r)
    DECLINE = "decline"  # closed / aborted: nothing decided, the server keeps waiting


@dataclass(frozen=True)
class TrustRequest:
    server: str
    source: str  # "file:line"
    project: str
    transport: str
    target: str  # "command arg arg" or the URL
    env_names: tuple[str, ...] = ()
    header_names: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    can_persist: bool = True  # False while DNS fails: only ONCE/REJECT make sense
    # Each secret it would receive: "header X-Api-Key ← keyring secret GITHUB_PAT".
    secrets: tuple[str, ...] = ()
    trust_level: str = "default"  # the server's `trust`: default | full | untrusted
    costs: tuple[str, ...] = ()  # "spend limit: 50 credits", "tool render: 20 credits"
    # The whole resolved launch, one line each: "command: npx", "argument 1: -y",
    # "cwd: /p", "env NODE_OPTIONS = --require ./x.js", "url: ...", "address: h -> ip (public)".
    # Secret references appear as written (${keyring:NAME}), never resolved.
    launch: tuple[str, ...] = ()
    # Each way it is looser than your rules: "trust full: calls run without asking ...".
    loosenings: tuple[str, ...] = ()
    # The project files its launch names, pinned by content: ".portico/x.js (120 bytes, ...)".
    pinned_files: tuple[str, ...] = ()
    # What its sandbox lets it read, write and reach ("may read: /p"), or that it has none.
    sandbox: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnsandboxedRequest:
    """A server meant to run in a sandbox, on a machine that cannot sandbox it: may it
    run without one? Yes is remembered for this server's config."""

    server: str
    source: str  # "file:line"
    why: str  # why there is no sandbox here, in plain words
    # set when it would run in a weaker sandbox instead of none: what that one cannot do
    weaker: str = ""

    @property
    def question(self) -> str:
        if self.weaker:
            return (
                f"'{self.server}' ({self.source}) is set to run in a sandbox, but {self.why}. "
                f"Run it in the weaker sandbox, your files kept out but the {self.weaker}?"
            )
        return (
            f"'{self.server}' ({self.source}) is set to run in a sandbox, but {self.why}. "
            "Run it unsandboxed, with all of your rights (your files, your network)?"
        )


# --- tool approval and spend ----------------------------------------------------------


CallerKind = Literal["chat", "try_it", "cli", "view", "client"]


@dataclass(frozen=True)
class Caller:
    """Who makes a tool call: a chat (``id``: its conversation), a server page's Try it,
    ``portico mcp call``, a server's view (MCP Apps; ``id``: the shown view,
    ``server``: whose view it is, the only server it may call), or another MCP client
    through the local endpoint (``id``: the client's name, e.g. ``claude-code``). A
    call's context names it, and so does every question the call asks, so a face can
    show the question where the call is (the chat's card)."""

    kind: CallerKind
    id: str = ""
    server: str = ""
    view: str = ""  # kind "view": the view's ui:// URI

    def describe(self) -> str:
        """For a person: "chat 3f2a…", "Try it", "portico mcp call", "the view ui://… of docs"."""
        if self.kind == "chat":
            return f"chat {self.id[:8]}" if self.id else "a chat"
        if self.kind == "view":
            return f"the view {self.view or '(unnamed)'} of {self.server}"
        if self.kind == "client":
            return f"client {self.id}" if self.id else "another MCP client"
        return "Try it" if self.kind == "try_it" else "portico mcp call"


class ApprovalChoice(StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalAnswer:
    choice: ApprovalChoice
    any_arguments: bool = False  # widen a SESSION/ALWAYS approval to every argument set


@dataclass(frozen=True)
class ToolApprovalRequest:
    server: str
    tool: str  # the server's own tool name
    qualified_name: str  # <server>__<tool>
    description: str
    arguments: Mapping[str, Any]
    arguments_json: str  # the complete validated arguments, pretty-printed
    annotations: Mapping[str, Any] = field(default_factory=dict)
    cost_line: str | None = None  # "Costs about 20 credits."
    spend_line: str | None = None  # "This chat has used about 40 credits on 'x' (limit 100)."
    reason: str = ""  # why we ask ("not marked read-only", "server is untrusted")
    choices: tuple[ApprovalChoice, ...] = (
        ApprovalChoice.ONCE,
        ApprovalChoice.SESSION,
        ApprovalChoice.ALWAYS,
        ApprovalChoice.DENY,
    )
    offers_any_arguments: bool = True
    call_id: str = ""  # the call that asks (its CallContext), "" for one nobody named
    caller: Caller | None = None


@dataclass(frozen=True)
class SpendApprovalRequest:
    """A costed call that would take the chat past its spend limit: Allow Once or Deny."""

    server: str
    tool: str
    qualified_name: str
    arguments_json: str
    cost_line: str
    spend_line: str
    limit_line: str  # "This call would take the chat past the limit of 100 credits on 'x'."
    choices: tuple[ApprovalChoice, ...] = (ApprovalChoice.ONCE, ApprovalChoice.DENY)
    call_id: str = ""
    caller: Caller | None = None


# --- OAuth hand-off ----------------------------------------------------------------------


@dataclass(frozen=True)
class AuthorizeRequest:
    """Browser sign-in. The loopback listener runs at the same time; whichever wins."""

    server: str
    authorize_url: str
    redirect_uri: str
    timeout: float  # seconds until the login gives up
    browser_opened: bool
    # Returns None when a pasted text is a usable redirect, else what is wrong with it
    # ("no code= in the pasted text", "state does not match this login").
    check_paste: Callable[[str], str | None] = field(default=lambda _text: None)
    reauth: bool = False  # a grant died: "X needs you to sign in again"


class StatusLine:
    """One line of progress text the core updates while a face shows a question.

    Thread-safe: the core calls ``set`` on its loop; a watcher is called on the setter's
    thread and must hop to its own (the Qt prompter uses ``call_soon_threadsafe``).
    A watcher that raises is logged and kept; it never breaks the core.
    """

    def __init__(self, text: str = "") -> None:
        self._lock = threading.Lock()
        self._text = text
        self._watchers: list[Callable[[str], None]] = []

    @property
    def text(self) -> str:
        with self._lock:
            return self._text

    def set(self, text: str) -> None:
        with self._lock:
            self._text = text
            watchers = list(self._watchers)
        for watcher in watchers:
            try:
                watcher(text)
            except Exception:
                log.exception("a status watcher failed")

    def watch(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(text)`` now (if there is text) and on every change; returns the
        function that stops watching."""
        with self._lock:
            self._watchers.append(callback)
            current = self._text
        if current:
            callback(current)

        def stop() -> None:
            with self._lock:
                if callback in self._watchers:
                    self._watchers.remove(callback)

        return stop


@dataclass(frozen=True)
class DeviceCodeRequest:
    server: str
    verification_uri: str
    user_code: str
    verification_uri_complete: str | None
    expires_in: float
    interval: float
    # The poller's state in plain words ("Waiting for you to approve…", "Slowing down: …",
    # "Approved.", "Denied.", "Expired."), updated by the core while the face shows the code.
    status: StatusLine = field(default_factory=StatusLine, compare=False)


# --- elicitation and sampling --------------------------------------------------------------


@dataclass(frozen=True)
class ElicitationRequest:
    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    schema: Mapping[str, Any] = field(default_factory=dict)  # requestedSchema (form mode)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # url mode: shown, never opened automatically; each face reviews it itself
    # (policy/url_review.py: the host set apart, look-alike warnings)
    url: str | None = None
    error: str | None = None  # set when re-asking after an answer failed validation


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SamplingMessage:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class SamplingRequest:
    server: str
    messages: tuple[SamplingMessage, ...]
    system_prompt: str | None
    requested_model: str | None  # from the server's model preferences, if any
    model: str  # what we would use
    max_tokens: int


@dataclass(frozen=True)
class SamplingAnswer:
    action: Literal["approve", "deny"]
    # Set when the person edited the request before approving it.
    messages: tuple[SamplingMessage, ...] | None = None
    system_prompt: str | None = None
    max_tokens: int | None = None


# --- notices -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Notice:
    level: Literal["info", "warning", "error"]
    text: str
    server: str | None = None
    # What the notice is about ("auth", "trust", "keyring", ...): a face shows one notice
    # per (server, kind) and replaces it when a newer one of the same kind arrives.
    kind: str = ""


@runtime_checkable
class Prompter(Protocol):
    """What the core may ask a person. Every method may raise ``Refused``."""

    async def review_trust(self, request: TrustRequest) -> TrustChoice: ...

    async def approve_tool(self, request: ToolApprovalRequest) -> ApprovalAnswer: ...

    async def approve_spend(self, request: SpendApprovalRequest) -> ApprovalChoice: ...

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        """Show the hand-off; return a pasted redirect (URL or query), or None if cancelled.

        The core cancels this call when the loopback listener got the redirect first.
        """
        ...

    async def device_code(self, request: DeviceCodeRequest) -> None:
        """Show the code and wait; return only when the person cancels (cancelled on success)."""
        ...

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer: ...

    async def review_sampling(self, request: SamplingRequest) -> SamplingAnswer: ...

    async def run_unsandboxed(self, request: UnsandboxedRequest) -> bool:
        """True: run it without a sandbox (and remember that for this server)."""
        ...

    async def notify(self, notice: Notice) -> None: ...
