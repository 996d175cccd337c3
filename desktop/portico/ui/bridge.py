"""Hub events -> Qt signals on the GUI thread.

The EventBus calls subscribers synchronously on the runtime loop. :class:`EventBridge`
lives on the GUI thread; its subscriber only emits an internal signal, which Qt delivers
through a queued connection to the GUI thread, where the public signals fire.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal

from portico.runtime.events import (
    ActivityChanged,
    AuthRequired,
    ConfigChanged,
    DiscoveryFinished,
    Event,
    EventBus,
    LogLine,
    ResourceUpdated,
    SandboxRefused,
    StatusChanged,
    ToolsChanged,
)


class EventBridge(QObject):
    statusChanged = Signal(object)  # ServerState
    toolsChanged = Signal(str, int)  # server, tool count
    logLine = Signal(object)  # LogLine
    discoveryFinished = Signal(str)  # summary line
    authRequired = Signal(str, str)  # server, reason
    configChanged = Signal()  # a config file changed on disk
    activityChanged = Signal(str)  # server: new exchanges in its activity log
    resourceUpdated = Signal(str, str)  # server, uri: a subscribed resource changed
    sandboxRefused = Signal(object)  # SandboxRefused: the sandbox's proxy refused a host

    _crossed = Signal(object)  # internal: emitted on the runtime thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._crossed.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)
        self._unsubscribers: list[Callable[[], None]] = []

    def on_event(self, event: Event) -> None:
        """The EventBus subscriber; safe to call from any thread."""
        self._crossed.emit(event)

    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Subscribe to ``bus``. Call it on the thread that publishes (the runtime loop)."""
        unsubscribe = bus.subscribe(self.on_event)
        self._unsubscribers.append(unsubscribe)
        return unsubscribe

    def detach_all(self) -> None:
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers.clear()

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, StatusChanged):
            self.statusChanged.emit(event.state)
        elif isinstance(event, ToolsChanged):
            self.toolsChanged.emit(event.server, event.tool_count)
        elif isinstance(event, LogLine):
            self.logLine.emit(event)
        elif isinstance(event, DiscoveryFinished):
            self.discoveryFinished.emit(event.summary)
        elif isinstance(event, AuthRequired):
            self.authRequired.emit(event.server, event.reason)
        elif isinstance(event, ConfigChanged):
            self.configChanged.emit()
        elif isinstance(event, ActivityChanged):
            self.activityChanged.emit(event.server)
        elif isinstance(event, ResourceUpdated):
            self.resourceUpdated.emit(event.server, event.uri)
        elif isinstance(event, SandboxRefused):
            self.sandboxRefused.emit(event)


async def attach_on_runtime(bridge: EventBridge, bus: EventBus) -> Callable[[], None]:
    """A coroutine to ``runtime.submit``: subscribes on the runtime loop's own thread."""
    return bridge.attach(bus)
