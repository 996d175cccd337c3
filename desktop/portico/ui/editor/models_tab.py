"""The config editor's Models tab: the model providers and the default model of your own
(global) config files.

Every change is a key-path edit of the file's round-trip document
(``portico.config.models_edit``), so the rest of the file keeps every byte. An API key
goes to the OS keychain; the file gets only its ``${keyring:NAME}`` reference. A project
file may not configure models (a cloned repository must not redirect your prompts or reach
your keys), so project files are not offered here; what one sets is listed as ignored.
Test connection runs one tiny completion off the GUI thread (the runtime thread when the
app runs one) through ``portico.ui.ops``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from portico.config import models_edit
from portico.config.document import ConfigDocument, DocumentParseError, EditError
from portico.config.editing import EditedFile
from portico.config.model import Diagnostic, ProviderSpec, Scope
from portico.config.models_config import KINDS
from portico.config.secrets import has_references, literal_text
from portico.config.validate import server_name_problem
from portico.ui.editor.provider_form import ProviderForm
from portico.ui.ops import Ops
from portico.ui.palette import set_tone

if TYPE_CHECKING:
    from portico.auth.secret_store import SecretStore
    from portico.chat.detect import TestReport
    from portico.chat.providers.catalog import KeyringLookup
    from portico.ui.facade import RuntimeThread

NO_DEFAULT = "(none: chats ask for a model)"
PROJECT_NOTE = (
    "Models are configured in your own files only: a project file may not add providers "
    "or change the default model (a cloned repository must not redirect your prompts or "
    "reach your keys)."
)
_SECRET_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
MENU_LIMIT = 40  # models offered in the Fetch list menu
T = TypeVar("T")


def is_models_key(diagnostic: Diagnostic) -> bool:
    key = diagnostic.key or ""
    return key == "models" or key.startswith("models.") or key == "default_model"


def secret_name(provider: str) -> str:
    """The keychain name a provider's key is stored under (as `portico model add` does)."""
    return _SECRET_UNSAFE.sub("-", f"{provider}-api-key").strip("-")


class AddProviderDialog(QDialog):
    """Name, kind, base URL and models of a new provider (non-modal; ``chosen`` on Add)."""

    chosen = Signal(str, object)  # object: a dict would become a QVariantMap (sorted keys)

    def __init__(self, taken: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a model provider")
        self.setModal(False)
        self.taken = set(taken)
        form = QFormLayout(self)
        self.name = QLineEdit()
        self.name.setAccessibleName("provider name")
        self.name.setPlaceholderText("letters, digits, - and _  (e.g. openai, ollama)")
        self.kind = QComboBox()
        self.kind.setAccessibleName("provider kind")
        for kind in KINDS:
            self.kind.addItem(kind, kind)
        self.base_url = QLineEdit()
        self.base_url.setAccessibleName("provider base url")
        self.base_url.setPlaceholderText("(the public API)  e.g. http://127.0.0.1:11434/v1")
        self.models = QLineEdit()
        self.models.setAccessibleName("provider models")
        self.models.setPlaceholderText("gpt-4.1, gpt-4.1-mini")
        self.problem = QLabel()
        self.problem.setAccessibleName("add provider problem")
        self.problem.setWordWrap(True)
        set_tone(self.problem, "error")
        for text, widget in (
            ("&Name:", self.name),
            ("&Kind:", self.kind),
            ("&Base URL:", self.base_url),
            ("&Models:", self.models),
        ):
            label = QLabel(text)
            label.setBuddy(widget)
            form.addRow(label, widget)
        form.addRow(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton("&Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setDefault(True)
        buttons.accepted.connect(self._add)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _add(self) -> None:
        name = self.name.text().strip()
        problem = server_name_problem(name) if name else "Type a name for the provider."
        if problem:
            self.problem.setText(problem.replace("server name", "provider name"))
            return
        if name in self.taken:
            self.problem.setText(f"A provider named {name} exists already; pick another name.")
            return
        fields: dict[str, Any] = {"kind": self.kind.currentData()}
        url = self.base_url.text().strip().rstrip("/")
        if url:
            fields["base_url"] = url
        models = [m.strip() for m in self.models.text().split(",") if m.strip()]
        if models:
            fields["models"] = list(dict.fromkeys(models))
        self.chosen.emit(name, fields)
        self.accept()


class ModelsTab(QWidget):
    """``ModelsTab(secrets, runtime)``: ``secrets`` returns the secret store to use (an
    awaitable: the app session's, or one for the editor); ``runtime`` is the app's runtime
    thread, where Test connection runs (without one, a worker thread runs it).
    ``edited(file)`` after each change, so the window refreshes the file's raw tab."""

    edited = Signal(object)

    def __init__(
        self,
        secrets: Callable[[], Awaitable[SecretStore]],
        runtime: Callable[[], RuntimeThread | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setAccessibleName("models")
        self.secrets = secrets
        self.runtime = runtime
        self.ops = Ops()
        self.files: list[EditedFile] = []
        self.dialogs: list[QDialog] = []
        self._filling = False
        self.last_test: TestReport | None = None

        column = QVBoxLayout(self)
        top = QFormLayout()
        self.file_combo = QComboBox()
        self.file_combo.setAccessibleName("models file")
        self.file_combo.currentIndexChanged.connect(lambda _i: self.refresh())
        file_label = QLabel("F&ile:")
        file_label.setBuddy(self.file_combo)
        top.addRow(file_label, self.file_combo)
        self.default_combo = QComboBox()
        self.default_combo.setAccessibleName("default model")
        self.default_combo.setToolTip("The model a new chat uses (written in this file)")
        self.default_combo.activated.connect(lambda _i: self._default_chosen())
        default_label = QLabel("&Default model:")
        default_label.setBuddy(self.default_combo)
        top.addRow(default_label, self.default_combo)
        column.addLayout(top)
        self.scope_note = QLabel(PROJECT_NOTE)
        self.scope_note.setWordWrap(True)
        self.scope_note.setAccessibleName("models scope")
        column.addWidget(self.scope_note)

        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        self.provider_list = QListWidget()
        self.provider_list.setAccessibleName("providers")
        self.provider_list.currentItemChanged.connect(lambda _c, _p: self._show_selected())
        left_column.addWidget(self.provider_list, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add &provider…")
        self.add_button.clicked.connect(self.open_add)
        self.remove_button = QPushButton("Remo&ve")
        self.remove_button.setAccessibleName("remove provider")
        self.remove_button.clicked.connect(self.remove_selected)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left_column.addLayout(buttons)

        self.form = ProviderForm()
        self.form.edited.connect(self._field_edited)
        self.form.keyStored.connect(self._store_key_clicked)
        self.form.testRequested.connect(self.test_selected)
        self.form.fetchRequested.connect(self.fetch_models)
        self.models_menu: QMenu | None = None
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.form)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 600])
        column.addWidget(splitter, 1)

        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.problems.setAccessibleName("models problems")
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_tone(self.problems, "error")
        column.addWidget(self.problems)
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setAccessibleName("models notice")
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.notice)

    # --- files -------------------------------------------------------------------------

    def show_files(self, files: list[EditedFile]) -> None:
        """The editor's files: the global ones are offered; the file that already holds
        providers is chosen first (else config.yaml, where the models block reads best)."""
        self.files = files
        mine = [f for f in files if f.scope is Scope.GLOBAL]
        chosen = next((f for f in mine if f.doc and models_edit.providers(f.doc)), None)
        chosen = chosen or next((f for f in mine if f.path.suffix != ".toml"), None)
        self.file_combo.blockSignals(True)
        self.file_combo.clear()
        for file in mine:
            self.file_combo.addItem(file.label, str(file.path))
        if chosen is not None:
            self.file_combo.setCurrentIndex(self.file_combo.findData(str(chosen.path)))
        self.file_combo.blockSignals(False)
        self.refresh()

    def choose_file(self, file: EditedFile) -> None:
        self.file_combo.setCurrentIndex(self.file_combo.findData(str(file.path)))

    @property
    def file(self) -> EditedFile | None:
        path = self.file_combo.currentData()
        return next((f for f in self.files if str(f.path) == path), None)

    def selected(self) -> str | None:
        item = self.provider_list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def select(self, name: str) -> bool:
        for row in range(self.provider_list.count()):
            item = self.provider_list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == name:
                self.provider_list.setCurrentItem(item)
                return True
        return False

    def refresh(self) -> None:
        """Show the chosen file as it is now (after an edit, a raw edit or a reload)."""
        keep = self.selected()
        file = self.file
        self._filling = True
        try:
            self.provider_list.clear()
            found = models_edit.providers(file.doc) if file and file.doc else {}
            for name, fields in found.items():
                kind = fields.get("kind", "?")
                item = QListWidgetItem(f"{name} ({kind})")
                item.setData(Qt.ItemDataRole.UserRole, name)
                self.provider_list.addItem(item)
            editable = file is not None and file.doc is not None
            self.add_button.setEnabled(editable)
            self.default_combo.setEnabled(editable)
            self._fill_defaults(file)
        finally:
            self._filling = False
        if not (keep and self.select(keep)) and self.provider_list.count():
            self.provider_list.setCurrentRow(0)
        self._show_selected()
        self._show_problems()

    def _fill_defaults(self, file: EditedFile | None) -> None:
        """Every ``provider/model`` of your files; the chosen file's default selected."""
        self.default_combo.clear()
        self.default_combo.addItem(NO_DEFAULT, None)
        refs: list[str] = []
        for other in self.files:
            if other.scope is not Scope.GLOBAL or other.doc is None:
                continue
            for name, fields in models_edit.providers(other.doc).items():
                models = fields.get("models")
                names = [fields.get("default_model"), *(models if isinstance(models, list) else [])]
                shown = [str(m) for m in dict.fromkeys(names) if isinstance(m, str) and m]
                refs.extend(f"{name}/{m}" for m in shown)
                if not shown:
                    refs.append(name)
        current = models_edit.default_model(file.doc) if file and file.doc else None
        elsewhere = [
            (other, models_edit.default_model(other.doc))
            for other in self.files
            if other is not file and other.scope is Scope.GLOBAL and other.doc is not None
        ]
        found = [(other, ref) for other, ref in elsewhere if ref]
        if current is None and found:
            other, ref = found[0]
            self.default_combo.setItemText(0, f"(none here; {other.path.name} sets {ref})")
        if current and current not in refs:
            refs.append(current)  # as written (the validator says what is wrong with it)
        for ref in dict.fromkeys(refs):
            self.default_combo.addItem(ref, ref)
        self.default_combo.setCurrentIndex(max(0, self.default_combo.findData(current)))

    def _show_selected(self) -> None:
        if self._filling:
            return
        file, name = self.file, self.selected()
        fields = models_edit.provider(file.doc, name) if file and file.doc and name else None
        self.form.show_provider(name if fields is not None else None, fields)
        self.remove_button.setEnabled(fields is not None)
        self.form.set_diagnostics(list(file.diagnostics()) if file else [])

    def show_diagnostics(self) -> None:
        """The chosen file's check finished (in the window's worker): show its problems."""
        file = self.file
        self.form.set_diagnostics(list(file.diagnostics()) if file else [])
        self._show_problems()

    def _show_problems(self) -> None:
        lines: list[str] = []
        file = self.file
        if file is not None and file.doc is None:
            lines.append(f"{file.path} does not parse; fix it in its raw tab first.")
        if file is not None:
            lines += [str(d) for d in file.diagnostics() if is_models_key(d)]
        for other in self.files:
            if other.scope is Scope.PROJECT:
                lines += [str(d) for d in other.diagnostics() if is_models_key(d)]
        self.problems.setText("\n".join(lines))
        self.problems.setVisible(bool(lines))

    # --- edits -------------------------------------------------------------------------

    def _edit(self, change: Callable[[ConfigDocument], Any]) -> tuple[bool, Any]:
        """(done, what ``change`` returned); a refused edit is said and changes nothing."""
        file = self.file
        if file is None:
            return False, None
        try:
            result = file.edit(change)
        except (EditError, DocumentParseError) as exc:
            self.say(str(exc))
            return False, None
        self.edited.emit(file)
        self.refresh()
        return True, result

    def say(self, text: str) -> None:
        self.notice.setText(text)

    def open_add(self) -> AddProviderDialog:
        file = self.file
        taken = list(models_edit.providers(file.doc)) if file and file.doc else []
        dialog = AddProviderDialog(taken, self)
        dialog.chosen.connect(self.add_provider)
        self.dialogs.append(dialog)
        dialog.finished.connect(lambda _r: self.dialogs.remove(dialog))
        dialog.show()
        return dialog

    def add_provider(self, name: str, fields: dict[str, Any]) -> None:
        done, _ = self._edit(lambda doc: models_edit.add_provider(doc, name, fields))
        if done and self.file is not None:
            self.select(name)
            note = ""
            if fields.get("kind") == "anthropic" or "base_url" not in fields:
                note = " Paste its API key and Store in keychain."
            self.say(f"Added provider {name} to {self.file.path.name}; Save to keep.{note}")

    def remove_selected(self) -> None:
        name, file = self.selected(), self.file
        if name is None or file is None:
            return
        done, cleared = self._edit(lambda doc: models_edit.remove_provider(doc, name))
        if not done:
            return
        extra = " The default model named it, so it was cleared too." if cleared else ""
        self.say(f"Removed provider {name} from {file.path.name}; Save to keep.{extra}")

    def _field_edited(self, key: str, value: Any) -> None:
        name = self.selected()
        if name is None:
            return
        if key == "api_key" and isinstance(value, str) and not has_references(value):
            self.form.api_key.setText("")
            self.say(
                "That is not a reference: a key never goes in the file. Paste the key in the "
                "API key field and press Store in keychain, or write ${env:VAR}."
            )
            return
        if key == "api_key" and isinstance(value, str) and literal_text(value).strip():
            self.say("Write only the reference (${keyring:NAME} or ${env:VAR}), nothing else.")
            return
        self._edit(lambda doc: models_edit.set_provider_key(doc, name, key, value))

    def _default_chosen(self) -> None:
        if self._filling:
            return
        ref = self.default_combo.currentData()
        done, _ = self._edit(lambda doc: models_edit.set_default_model(doc, ref))
        if done:
            shown = ref or "none"
            self.say(f"The default model is {shown} in {self.file.path.name if self.file else ''}.")

    # --- the key -----------------------------------------------------------------------

    def _store_key_clicked(self, value: str) -> None:
        self.ops.spawn(self.store_key(value), "Store the key")

    async def store_key(self, value: str) -> str | None:
        """Store the typed key in the keychain and write its reference; the keychain name,
        or None (with a note saying why) when nothing was done."""
        name = self.selected()
        value = value.strip()
        if name is None:
            return None
        if not value:
            self.say("There is no key to store: paste it in the API key field first.")
            return None
        secret = secret_name(name)
        try:
            store = await self.secrets()
            # Refuses (and nothing is written) when the key would not persist.
            where = await store.store_secret(secret, value)
        except Exception as exc:  # no secure keyring, a locked or broken one
            self.say(f"Could not store the key: {exc}")
            return None
        reference = f"${{keyring:{secret}}}"
        if self.selected() != name:
            self.select(name)
        done, _ = self._edit(
            lambda doc: models_edit.set_provider_key(doc, name, "api_key", reference)
        )
        if not done:
            return None
        self.form.key.clear()
        self.say(f"Stored the key as {secret} in {where}; the file says {reference}.")
        return secret

    # --- test and fetch ------------------------------------------------------------------

    def _edited_spec(self) -> ProviderSpec | None:
        """The selected provider as edited (not saved), or None (and why, said)."""
        file, name = self.file, self.selected()
        if file is None or name is None:
            return None
        # The window's worker checked the text after the last edit; a check here (on the
        # GUI thread) only when that one has not finished yet.
        config = file.config if file.checked and file.config is not None else file.validate()
        spec = config.models.provider(name)
        if spec is None:
            mine = [str(d) for d in config.diagnostics if is_models_key(d)]
            self._tested("The provider's settings have errors; fix them first:\n" + "\n".join(mine))
        return spec

    async def _off_gui(self, work: Callable[[KeyringLookup], Coroutine[Any, Any, T]]) -> T:
        """Run ``work`` (given the secret store's lookup) on the runtime thread, or on a
        worker thread when the app runs none: never on the GUI loop."""
        store = await self.secrets()
        runtime = self.runtime()
        if runtime is not None and runtime.is_running:
            return await runtime.submit(work(store.lookup_secret))
        return await asyncio.to_thread(asyncio.run, work(store.lookup_secret))

    def test_selected(self) -> asyncio.Task[None] | None:
        """One tiny completion with the provider as edited (not saved)."""
        spec = self._edited_spec()
        if spec is None:
            return None
        name, model = spec.name, spec.model
        if not model:
            self._tested(f"{name} names no model: fill in Models or Default model first.")
            return None
        self.form.test_button.setEnabled(False)
        self.form.test_result.setText(f"Asking {name}/{model}…")

        async def work() -> TestReport:
            from portico.chat.detect import test_provider

            return await self._off_gui(
                lambda lookup: test_provider(spec, model, timeout=30.0, lookup=lookup)
            )

        def ok(report: TestReport) -> None:
            self.last_test = report
            self._tested(
                f"{name}/{report.model} answered in {report.latency:.2f} s: {report.text!r}",
                ok=True,
            )

        return (
            self.ops.op(work, f"Test {name}")
            .success(ok)
            .failure(lambda exc: self._tested(f"{name}/{model} did not answer: {exc}"))
            .finally_(lambda: self.form.test_button.setEnabled(self.selected() is not None))
            .run()
        )

    def fetch_models(self) -> asyncio.Task[None] | None:
        """Ask the server for its models; a menu offers them to add (``models_menu``)."""
        spec = self._edited_spec()
        if spec is None:
            return None
        name = spec.name
        self.form.fetch_button.setEnabled(False)
        self.form.test_result.setText(f"Asking {name} for its models…")

        async def work() -> list[str]:
            from portico.chat.detect import list_models

            return await self._off_gui(lambda lookup: list_models(spec, lookup=lookup))

        return (
            self.ops.op(work, f"List the models of {name}")
            .success(lambda found: self._offer_models(name, found))
            .failure(lambda exc: self._tested(f"{name} did not list its models: {exc}"))
            .finally_(lambda: self.form.fetch_button.setEnabled(self.selected() is not None))
            .run()
        )

    def _offer_models(self, name: str, found: list[str]) -> None:
        if self.selected() != name:
            return
        if not found:
            self._tested(f"{name} lists no models.")
            return
        self._tested(f"{name} offers {len(found)} model(s): pick one to add.", ok=True)
        menu = QMenu(self)
        menu.setAccessibleName("models the server offers")
        have = set(self._models_of(name))
        for model in found[:MENU_LIMIT]:
            action = menu.addAction(model)
            action.setCheckable(True)
            action.setChecked(model in have)
            action.setEnabled(model not in have)
            action.triggered.connect(lambda _=False, m=model: self.add_model(name, m))
        if len(found) > MENU_LIMIT:
            more = menu.addAction(f"…and {len(found) - MENU_LIMIT} more (type them in Models)")
            more.setEnabled(False)
        self.models_menu = menu
        button = self.form.fetch_button
        menu.popup(button.mapToGlobal(button.rect().bottomLeft()))

    def _models_of(self, name: str) -> list[str]:
        file = self.file
        fields = models_edit.provider(file.doc, name) if file and file.doc else None
        models = (fields or {}).get("models")
        if isinstance(models, str):
            return [models]
        return [str(m) for m in models] if isinstance(models, list) else []

    def add_model(self, name: str, model: str) -> None:
        models = list(dict.fromkeys([*self._models_of(name), model]))
        done, _ = self._edit(lambda doc: models_edit.set_provider_key(doc, name, "models", models))
        if done:
            self.say(f"Added {model} to the models of {name}; Save to keep.")

    def _tested(self, text: str, *, ok: bool = False) -> None:
        self.form.test_result.setText(text)
        set_tone(self.form.test_result, "ok" if ok else "error")
