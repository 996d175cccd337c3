"""What lives on the runtime thread in the app: the event bus, the hub, policy and auth.

Every method here runs on the runtime loop; the GUI calls them through
``RuntimeThread.submit``. Building the session imports ``mcp`` (1.3-1.8 s), so it is only
done after the first paint, on the runtime thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from portico.prompts import Prompter
from portico.runtime.events import ConfigChanged, EventBus, ServerState
from portico.ui.bridge import EventBridge
from portico.ui.runtime_thread.chat_service import Emit, InlinePrompter

if TYPE_CHECKING:
    from portico.config.model import Config, ServerSpec
    from portico.gateway.endpoint import Endpoint
    from portico.runtime.hub import Hub
    from portico.runtime.watcher import ConfigWatcher
    from portico.services import Services
    from portico.ui.runtime_thread.page_service import PageService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadResult:
    diagnostics: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    scopes: dict[str, str] = field(default_factory=dict)
    sandboxes: dict[str, str] = field(default_factory=dict)  # name -> the list's badge
    # name -> how this machine sandboxes it and why (the list's tooltip)
    sandbox_notes: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    secrets_notice: str | None = None  # said when secrets cannot go to a secure keyring
    models: int = 0  # model providers configured (the app opens on a chat when > 0)


# Imported here, before any server connects, so the first connects and the first tool call
# do not import them (an import holds the GIL in long stretches: the window would stall).
PREIMPORTS = (
    "jsonschema",
    "mcp",
    "mcp.client.stdio",
    "mcp.client.sse",
    "mcp.client.streamable_http",
    "mcp.shared.subscriptions",
    "mcp_types.version",
    "portico.runtime.connection",
    "portico.runtime.transports.stdio",
    "portico.runtime.transports.http",
)


def _preimport() -> None:
    import importlib

    for name in PREIMPORTS:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # a module moved: the connect imports what it needs
            log.info("pre-import of %s skipped: %s", name, exc)


def _nowhere(chat_id: str, event: object) -> None:
    """No chat pane: no question is for one (none is visible)."""


def _use_icon_cache(services: Services) -> None:
    """The app shows servers' and tools' icons: keep them under the cache dir; WebP only
    where this Qt has the plugin to decode it."""
    from PySide6.QtGui import QImageReader

    from portico.paths import paths
    from portico.runtime.icons import IconCache

    services.hooks.icon_cache = IconCache(paths().cache_dir / "icons")
    services.hooks.icon_webp = b"webp" in {f.data() for f in QImageReader.supportedImageFormats()}


class RuntimeSession:
    def __init__(
        self, bus: EventBus, hub: Hub, services: Services, prompter: InlinePrompter
    ) -> None:
        self.bus = bus
        self.hub = hub
        self.services = services
        self.auth = services.auth
        self.policy = services.policy
        self.prompter = prompter  # what the services ask (chat approvals go inline)
        self.config: Config | None = None
        self._watcher: ConfigWatcher | None = None
        self._watched: Path | None = None
        self._pages: PageService | None = None
        # The local endpoint (endpoint.enabled), started after the first apply.
        self.endpoint: Endpoint | None = None
        self._endpoint_stack = contextlib.AsyncExitStack()
        self._stamp: str | None = None

    @classmethod
    async def create(
        cls, prompter: Prompter, bridge: EventBridge, chat_emit: Emit | None = None
    ) -> RuntimeSession:
        """Build on the runtime loop (call through ``RuntimeThread.submit``).
        ``chat_emit``: where questions answered in a chat's cards go (the chat bridge)."""
        _preimport()

        from portico.services import build_services

        bus = EventBus()
        bridge.attach(bus)
        inline = InlinePrompter(prompter, chat_emit or _nowhere)
        services = build_services(inline)
        _use_icon_cache(services)
        return cls(bus, services.start_hub(bus), services, inline)

    async def load(self, project: Path | None, config: Config | None = None) -> LoadResult:
        """Read the config files (in a worker thread); ``apply()`` then starts the servers.

        ``config``: the files as the editor's save just read them (its one parse); the
        watcher is told, so the save is not read a second time."""
        from portico.config import keep_previous, load
        from portico.gateway.discovery import config_stamp

        # Taken before reading: an edit made meanwhile makes the CLI go direct, never stale.
        self._stamp = await asyncio.to_thread(config_stamp, project)
        given = config is not None
        if config is None:
            config = await asyncio.to_thread(load, project)
        # A file that stopped parsing (a half-typed edit) keeps its servers running.
        config = keep_previous(config, self.config)
        self.config = config
        self.services.configure(config)
        await _ask_sandbox(config)
        await self._watch(project)
        if given and self._watcher is not None:
            self._watcher.acknowledge(config)  # a stat per file
        return LoadResult(
            diagnostics=tuple(str(d) for d in config.diagnostics),
            order=tuple(s.name for s in config.servers),
            scopes={s.name: str(s.source.scope) for s in config.servers},
            sandboxes={s.name: _sandbox_badge(s) for s in config.servers},
            sandbox_notes=_sandbox_notes(config),
            files=tuple(str(p) for p in config.files),
            secrets_notice=await asyncio.to_thread(self.services.secrets.insecure_notice),
            models=len(config.models.providers) if getattr(config, "models", None) else 0,
        )

    async def apply(self) -> str:
        """Reconcile the hub with the last loaded config; returns the summary line."""
        if self.config is None:
            raise RuntimeError("load() the config before apply()")
        line = await self.hub.apply(self.config)
        await self._serve(self.config)
        return line

    async def _serve(self, config: Config) -> None:
        """Start the local endpoint once the setting asks for it (it stays until quit:
        turning the setting off takes effect at the next start)."""
        if self.endpoint is not None:
            self.endpoint.config_stamp = self._stamp
            return
        if not config.settings.endpoint_enabled:
            return
        from portico.gateway.endpoint import EndpointError
        from portico.gateway.run import running_endpoint

        try:
            self.endpoint = await self._endpoint_stack.enter_async_context(
                running_endpoint(
                    self.hub,
                    self.services.guard,
                    self.services.secrets,
                    port=config.settings.endpoint_port,
                    policy=self.services.policy,
                )
            )
        except EndpointError as exc:
            log.warning("the local endpoint did not start: %s", exc)
            return
        self.endpoint.config_stamp = self._stamp
        log.info("local endpoint at %s", self.endpoint.url)

    async def endpoint_url(self) -> str | None:
        """The local endpoint's URL while it runs, else None (for the tray)."""
        return self.endpoint.url if self.endpoint is not None else None

    async def retry(self, name: str) -> ServerState:
        return await self.hub.retry(name)

    async def restart(self, name: str) -> ServerState:
        return await self.hub.restart(name)

    async def authorize(self, name: str) -> ServerState:
        """Sign in (the Prompter shows the hand-off), then connect again."""
        spec = self.hub.connection(name).spec
        await self.auth.login(spec)
        return await self.hub.retry(name)

    @property
    def pages(self) -> PageService:
        """The server pages' runtime side."""
        if self._pages is None:
            from portico.ui.runtime_thread.page_service import PageService

            self._pages = PageService(self)
        return self._pages

    def states(self) -> list[ServerState]:
        return self.hub.states()

    @property
    def watcher(self) -> ConfigWatcher | None:
        """The watcher of the config files (outside edits), once the config was loaded."""
        return self._watcher

    async def _watch(self, project: Path | None) -> None:
        """Watch the files of this project (and the global ones) for outside edits."""
        if self._watcher is not None and project == self._watched:
            return
        from portico.runtime.watcher import ConfigWatcher

        if self._watcher is not None:
            await self._watcher.stop()
        self._watched = project
        self._watcher = ConfigWatcher(self._files_changed, project=project, previous=self.config)
        self._watcher.start()

    async def _files_changed(self, config: Config) -> None:
        # The face reloads through load() + apply(), so its notices and list follow too.
        self.bus.publish(ConfigChanged(tuple(str(p) for p in config.files)))

    async def detach_tasks(self) -> None:
        """The app is quitting: cancelled calls leave their tasks running (Hub)."""
        self.hub.detach_tasks()

    async def close(self) -> None:
        if self._watcher is not None:
            await self._watcher.stop()
        await self._endpoint_stack.aclose()  # before the hub: no client call lands on it
        self.endpoint = None
        await self.hub.close()


async def _ask_sandbox(config: Config) -> None:
    """How this machine sandboxes, asked once (a worker runs the probe) before the list
    is shown, so its badges say it for a server that has not started too."""
    from portico.runtime.sandbox.describe import wants_sandbox
    from portico.runtime.sandbox.probe import sandbox_method

    if any(wants_sandbox(spec) for spec in config.servers):
        await sandbox_method()


def _sandbox_badge(spec: ServerSpec) -> str:
    """What the Servers list says of a server's sandbox: "sandboxed: bwrap", "sandboxed,
    network: landlock", "sandboxed: none" where this machine cannot, "no sandbox" for a
    project server without one, else nothing."""
    from portico.runtime.sandbox.describe import method_word, sandbox_badge, wants_sandbox

    badge = sandbox_badge(spec)
    if badge == "off":
        return "no sandbox" if str(spec.source.scope) == "project" else ""
    if badge == "network":
        badge = "sandboxed, network"
    word = method_word() if wants_sandbox(spec) else ""
    return f"{badge}: {word}" if word else badge


def _sandbox_notes(config: Config) -> dict[str, str]:
    from portico.runtime.sandbox.describe import method_note, wants_sandbox

    note = method_note()
    if not note:
        return {}
    return {s.name: f"Sandbox: {note}" for s in config.servers if wants_sandbox(s)}
