"""The core, assembled: one place that wires policy, auth and secrets into the hub's hooks.

Both faces build their runtime through :func:`build_services` with their own Prompter, so
the CLI and the app can never differ in which guards a connection passes, and start their
hub through :meth:`Services.start_hub`, which also builds the process's one ToolGuard:
every tool call (a chat's, Try it's) passes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from portico.auth.manager import AuthManager
from portico.auth.secret_store import SecretStore
from portico.chat.providers.catalog import ModelCatalog
from portico.config.model import Config
from portico.policy.setup import Policy
from portico.prompts import Prompter
from portico.runtime.hooks import ConnectionHooks

if TYPE_CHECKING:
    from portico.policy.guard import ToolGuard
    from portico.runtime.events import EventBus
    from portico.runtime.hub import Hub


@dataclass
class Services:
    policy: Policy
    auth: AuthManager
    hooks: ConnectionHooks
    secrets: SecretStore
    # The configured model providers: chat uses them, and they answer sampling requests.
    models: ModelCatalog = field(default_factory=ModelCatalog)
    _guard: ToolGuard | None = field(default=None, repr=False)

    def start_hub(self, bus: EventBus | None = None, *, yolo: bool = False) -> Hub:
        """The hub these services' hooks wire, and the one ToolGuard over its registry
        (``yolo``: every call of this process skips the trust-based approvals)."""
        from portico.runtime.hub import Hub

        hub = Hub(bus, self.hooks)
        if self.hooks.active_profile is None:  # identity_header value_from: profile
            self.hooks.active_profile = lambda: hub.settings.profile
        self._guard = self.policy.guard(
            hub.registry,
            approvals_off=lambda: hub.settings.approvals_mode == "off",
            yolo=yolo,
        )
        return hub

    @property
    def guard(self) -> ToolGuard:
        """The ToolGuard every tool call passes (built by :meth:`start_hub`)."""
        if self._guard is None:
            raise RuntimeError("start_hub() builds the guard; call it first")
        return self._guard

    def configure(self, config: Config) -> None:
        """Apply the settings of a freshly loaded config that live outside the hub."""
        self.secrets.configure(file_fallback=config.settings.file_fallback_for_secrets)
        self.auth.use_client_metadata_url(config.settings.oauth_client_metadata_url)
        self.models.configure(config.models)
        self.policy.sampling.default_model = self.models.default_ref


def build_services(
    prompter: Prompter,
    *,
    ask_trust: bool = True,
    auth_prompter: Prompter | None = None,
    config: Config | None = None,
) -> Services:
    """Policy (trust gate, DNS pins, sampling, elicitation) + OAuth + keyring lookups +
    the model providers (empty until :meth:`Services.configure` gives them a config).

    ``ask_trust=False`` parks untrusted project servers in AwaitingTrust instead of asking
    (``portico mcp list``). ``auth_prompter`` answers sign-in questions when they should
    go elsewhere than the others (the CLI never starts a browser login in the background).
    ``config`` applies its settings (``secrets.file_fallback``) at once.
    """
    secrets = SecretStore()
    models = ModelCatalog(keyring=secrets.lookup_secret)
    policy = Policy(prompter, ask_trust=ask_trust, provider=models)
    auth = AuthManager(auth_prompter or prompter, store=secrets)
    services = Services(
        policy=policy,
        auth=auth,
        hooks=auth.hooks(policy.hooks()),
        secrets=secrets,
        models=models,
    )
    if config is not None:
        services.configure(config)
    return services
