"""What other parts plug into a connection: policy, auth, secrets, callbacks.

A :class:`ConnectionHooks` is a bag of optional callables. Every field may be ``None``;
the connection then uses the documented default. ``portico.services`` fills them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import httpx2

    from portico.config.model import ServerSpec
    from portico.runtime.icons import IconCache


@dataclass(frozen=True)
class TrustVerdict:
    """The trust gate's answer for one server config.

    ``allowed=False`` parks the connection in ``AwaitingTrust`` (``Rejected`` when
    ``rejected``: the person said no at a review) with ``reasons`` as the shown error.
    ``pinned`` maps host -> IP addresses the HTTP client must connect to (DNS pinning;
    TLS still checks the host name).
    """

    allowed: bool
    reasons: tuple[str, ...] = ()
    pinned: Mapping[str, tuple[str, ...]] | None = None
    rejected: bool = False


class TrustGate(Protocol):
    """Decides whether ``spec`` may start; calls ``asking()`` just before it puts the
    question to a person (the connection then shows AwaitingTrust while it waits)."""

    def __call__(
        self, spec: ServerSpec, *, asking: Callable[[], None] | None = None
    ) -> Awaitable[TrustVerdict]: ...


SecretLookup = Callable[[str], Awaitable[str | None]]
AuthFor = Callable[..., Awaitable["httpx2.Auth | None"]]  # (spec, *, interactive: bool)
CallbackFactory = Callable[["ServerSpec"], Any]  # returns an SDK callback or None
PinnedAddresses = Callable[["ServerSpec"], Mapping[str, list[str]] | None]
AuthStamp = Callable[["ServerSpec"], Awaitable[str | None]]


class UnsandboxedOk(Protocol):
    """(spec, why no sandbox[, weaker: what the weaker sandbox it gets cannot do])."""

    def __call__(self, spec: ServerSpec, why: str, *, weaker: str = "") -> Awaitable[bool]: ...


@dataclass
class ConnectionHooks:
    """Optional plug-ins of a :class:`portico.runtime.connection.Connection`.

    - ``trust_gate(spec)``: awaited before every start; no gate means allowed.
    - ``lookup_secret(name)``: resolves ``${keyring:NAME}``; ``None`` = not stored.
    - ``auth_for(spec, interactive=bool)``: an ``httpx2.Auth`` for HTTP servers (OAuth);
      may raise :class:`portico.runtime.errors.NeedsAuth` when a sign-in is required
      and ``interactive`` is False (background connects are never interactive).
    - ``sampling_callback(spec)`` / ``elicitation_callback(spec)``: return the SDK
      callback (``Client(sampling_callback=...)``) for that server, or ``None``.
    - ``list_roots_callback(spec)`` / ``logging_callback(spec)``: same idea.
    - ``pinned_addresses(spec)``: host -> IPs to connect to (policy's DNS pinning);
      a trust verdict's ``pinned`` is used when this hook is absent.
    - ``active_profile()``: the profile name used by ``identity_header`` with
      ``value_from = "profile"`` (defaults to ``"default"``).
    - ``environ``: the environment ``${env:NAME}`` references read (default os.environ).
    - ``auth_stamp(spec)``: a stamp (fingerprint) of the server's stored sign-in, or None
      without one; read from storage only. A server parked in NeedsAuth reconnects by
      itself once the stamp changes (a new login); without this hook it waits for
      retry_now.
    - ``write_schema_cache``: False for a one-off probe (``portico mcp test``): its
      connection is not the configured server's live connect, so it must not replace
      (or delete) that server's schema cache entry.
    - ``unsandboxed_ok(spec, why)``: a sandboxed server on a machine that cannot sandbox
      (``why``): True when the person agreed to run it without one (asked through the
      Prompter, remembered per server). Absent: such a server does not start.
    - ``icon_cache``: where announced icons (server, tools) are kept; ``None`` (the CLI)
      fetches none. ``icon_webp``: the face can decode WebP, so WebP icons are kept.
    """

    trust_gate: TrustGate | None = None
    lookup_secret: SecretLookup | None = None
    auth_for: AuthFor | None = None
    sampling_callback: CallbackFactory | None = None
    elicitation_callback: CallbackFactory | None = None
    list_roots_callback: CallbackFactory | None = None
    logging_callback: CallbackFactory | None = None
    pinned_addresses: PinnedAddresses | None = None
    active_profile: Callable[[], str] | None = None
    environ: Mapping[str, str] | None = None
    auth_stamp: AuthStamp | None = None
    write_schema_cache: bool = True
    icon_cache: IconCache | None = None
    icon_webp: bool = False
    unsandboxed_ok: UnsandboxedOk | None = None
