"""The first-run paths, end to end: the welcome's three actions, each ending in a running
server or a model that answered, written through the round-trip ConfigDocument (never
the config editor). File work runs in worker threads; model detection and the test
completion run on the runtime thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from portico.prompts import Notice
from portico.runtime.events import ServerState
from portico.ui.onboarding.add_server_flow import AddServerFlow
from portico.ui.onboarding.import_flow import ImportFlow
from portico.ui.onboarding.model_flow import ModelChoiceRequest, ModelFlow
from portico.ui.onboarding.setup import (
    FoundImport,
    add_provider,
    add_servers,
    found_imports,
    secret_name,
)
from portico.ui.onboarding.welcome import WelcomePage
from portico.ui.ops import Ops

if TYPE_CHECKING:
    from portico.ui.facade import RuntimeThread

log = logging.getLogger(__name__)


class Onboarding(QObject):
    configWritten = Signal()  # the app reloads the config
    modelConnected = Signal(str)  # "provider/model"
    chatRequested = Signal()

    def __init__(
        self,
        parent_widget: Callable[[], QWidget | None],
        runtime: RuntimeThread,
        apply_config: Callable[[], Coroutine[Any, Any, None]],
        project: Callable[[], Path | None] = lambda: None,
        taken: Callable[[], set[str]] = set,
        secrets: Callable[[], Any] = lambda: None,
        notify: Callable[[Notice], None] | None = None,
    ) -> None:
        super().__init__()
        self.parent_widget = parent_widget
        self.runtime = runtime
        self.apply_config = apply_config
        self.project = project
        self.taken = taken
        self._secrets = secrets
        self.welcome = WelcomePage()
        self.welcome.addServerRequested.connect(self.add_server)
        self.welcome.importRequested.connect(self.import_from)
        self.welcome.connectModelRequested.connect(self.connect_model)
        self.welcome.startChatRequested.connect(self.chatRequested)
        self.flows: list[Any] = []  # open flow dialogs (they get status updates)
        self.ops = Ops(notify)  # a failed step is a notice in the window

    def secrets(self) -> Any:
        """The process's secret store (the session's), else one over the keyring alone."""
        from portico.auth.secret_store import SecretStore

        return self._secrets() or SecretStore()

    def _spawn(self, coro: Coroutine[Any, Any, Any], what: str = "The first-run step") -> None:
        self.ops.spawn(coro, what)

    def close(self) -> None:
        self.ops.cancel_all()

    # --- the welcome -------------------------------------------------------------------

    async def refresh_imports(self) -> list[FoundImport]:
        found = await asyncio.to_thread(found_imports, self.project())
        self.welcome.set_imports(found)
        return found

    def states_changed(self, states: list[ServerState]) -> None:
        for flow in list(self.flows):
            for state in states:
                flow.show_state(state)

    def _forget(self, flow: Any) -> None:
        if flow in self.flows:
            self.flows.remove(flow)

    def _keep(self, flow: Any) -> None:
        self.flows.append(flow)
        flow.finished.connect(lambda _r, f=flow: self._forget(f))
        flow.destroyed.connect(lambda *_a, f=flow: self._forget(f))
        flow.chatRequested.connect(self.chatRequested)
        flow.show()
        flow.raise_()
        flow.activateWindow()

    # --- add a server ------------------------------------------------------------------

    def add_server(self) -> AddServerFlow:
        flow = AddServerFlow(self.taken(), self.parent_widget())
        flow.submitted.connect(
            lambda servers, secrets: self._spawn(self._add(flow, servers, secrets))
        )
        self._keep(flow)
        return flow

    async def _add(
        self,
        flow: AddServerFlow,
        servers: list[tuple[str, dict[str, Any]]],
        secrets: dict[str, str],
    ) -> None:
        try:
            store = self.secrets()
            for name, value in secrets.items():
                await store.store_secret(name, value)
            _path, names = await asyncio.to_thread(add_servers, servers)
        except Exception as exc:
            log.info("adding a server failed: %s", exc)
            flow.failed(f"Could not add the server: {exc}")
            return
        flow.name = names[0]
        flow.say(f"Added {names[0]}. Starting it…", "muted")
        self.configWritten.emit()
        await self.apply_config()

    # --- import ------------------------------------------------------------------------

    def import_from(self, found: FoundImport) -> None:
        self._spawn(self._open_import(found))

    async def _open_import(self, found: FoundImport) -> ImportFlow | None:
        from portico.config.importers import import_servers

        try:
            result = await asyncio.to_thread(
                import_servers, found.kind, found.path, project=self.project()
            )
        except Exception as exc:
            log.info("reading %s failed: %s", found.path, exc)
            self.welcome.import_note.setText(f"Could not read {found.path}: {exc}")
            return None
        flow = ImportFlow(found, result, self.parent_widget())
        flow.submitted.connect(lambda servers: self._spawn(self._import(flow, servers)))
        self._keep(flow)
        return flow

    async def _import(self, flow: ImportFlow, servers: list[tuple[str, dict[str, Any]]]) -> None:
        try:
            _path, names = await asyncio.to_thread(add_servers, servers)
        except Exception as exc:
            log.info("importing failed: %s", exc)
            flow.failed(f"Could not import: {exc}")
            return
        flow.imported(names)
        self.configWritten.emit()
        await self.apply_config()

    # --- connect a model -----------------------------------------------------------------

    def connect_model(self) -> ModelFlow:
        flow = ModelFlow(self.parent_widget())
        flow.chosen.connect(lambda request: self._spawn(self._connect(flow, request)))
        self._keep(flow)
        self._spawn(self._detect(flow))
        return flow

    async def _detect(self, flow: ModelFlow) -> None:
        from portico.chat.detect import detect_local

        try:
            servers = await self.runtime.submit(detect_local())
        except Exception as exc:
            log.info("model detection failed: %s", exc)
            servers = []
        flow.set_detected(servers)

    async def _connect(self, flow: ModelFlow, request: ModelChoiceRequest) -> None:
        from portico.config.model import Dialect, ProviderSpec, Scope, Source
        from portico.ui.onboarding.setup import target_file

        key_ref = None
        secret = secret_name(request.name)
        try:
            store = self.secrets()
            if request.api_key:
                await store.store_secret(secret, request.api_key)
                key_ref = f"${{keyring:{secret}}}"
            path = target_file(self.project())
            spec = ProviderSpec(
                name=request.name,
                source=Source(path, 1, Scope.GLOBAL, Dialect.TOML),
                kind=request.kind,  # type: ignore[arg-type]
                base_url=request.base_url,
                api_key=key_ref,
                models=(request.model,),
                default_model=request.model,
            )
            reply = await self.runtime.submit(_test(spec, request.model))
        except Exception as exc:
            log.info("testing the model failed: %s", exc)
            if key_ref:
                await store.delete_secret(secret)
            flow.failed(
                f"{request.name} / {request.model} did not answer: {exc or type(exc).__name__}"
            )
            return
        try:
            models = tuple(dict.fromkeys((request.model, *request.models)))
            await asyncio.to_thread(
                add_provider,
                request.name,
                kind=request.kind,
                base_url=request.base_url,
                key_ref=key_ref,
                models=models,
                default_model=request.model,
                path=path,
            )
        except Exception as exc:
            log.info("writing the provider failed: %s", exc)
            flow.failed(f"Could not save the model settings: {exc}")
            return
        ref = f"{request.name}/{request.model}"
        self.configWritten.emit()
        await self.apply_config()
        flow.connected(ref, reply)
        self.modelConnected.emit(ref)


async def _test(spec: Any, model: str) -> str:
    """One tiny completion through the core (on the runtime thread); the reply's text."""
    from portico.chat.detect import test_provider

    return (await test_provider(spec, model)).text
