"""The config editor window: every config file of both scopes, a form and a raw tab each.

The raw text of each file is the truth while editing. A form edit goes through the file's
round-trip :class:`ConfigDocument` and comes back as text (comments and layout survive);
a raw edit is re-parsed (debounced) and, when it parses, becomes the document the form
shows. Validation is ``parse_text`` on the current text, in a worker after each edit (on a
big file it takes longer than a frame): the markers and the field errors are the CLI's own
diagnostics, and only the check of the text the file still holds is shown. Save writes each
changed file through ``ConfigDocument.save()``; a file changed on disk meanwhile is reported
with a Reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from portico.auth.secret_store import SecretStore
from portico.config import schema
from portico.config.atomic import read_bytes
from portico.config.document import DocumentParseError, EditError
from portico.config.editing import EditedFile, EditorModel, read_disk, reread
from portico.config.secrets import has_references
from portico.ui.editor.add_server import AddServerDialog
from portico.ui.editor.diff_view import DiffDialog
from portico.ui.editor.form import UNSET, ServerForm
from portico.ui.editor.models_tab import ModelsTab
from portico.ui.editor.raw_tab import RawTab
from portico.ui.editor.server_list import ServerList
from portico.ui.editor.settings_form import SettingsForm
from portico.ui.editor.test_panel import TestResultDialog
from portico.ui.icons import app_icon
from portico.ui.ops import Ops

if TYPE_CHECKING:
    from portico.config.model import Config
    from portico.runtime.hooks import ConnectionHooks
    from portico.ui.facade import RuntimeThread

log = logging.getLogger(__name__)

DISK_SETTLE_MS = 200  # a burst of file events (an atomic save) is over after this long
QUIT_WAIT_S = 15.0  # at quit, a running save (or read) may end within this long

FORM_TAB = "Form"
SETTINGS_TAB = "Settings"
MODELS_TAB = "Models"
FIXED_TABS = 3  # Form, Settings and Models; a raw tab per file follows
NO_RUNTIME = (
    "Test needs the server runtime, which is not running; start it (restart Portico) "
    "and test again."
)
_KEYRING_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


class ConfigEditorWindow(QMainWindow):
    """``ConfigEditorWindow(project, runtime=..., hooks=...)``.

    ``runtime``: the app's runtime thread; the Test button's connection runs there.
    ``hooks``: returns the ConnectionHooks a test connection uses (the app passes its
    session's: trust review, secrets, sign-in), or None while there is no session. Without
    both, Test refuses: a probe without the trust gate would run a project server's command
    unreviewed, and MCP traffic does not belong on the GUI loop.
    """

    saved = Signal(list)  # the paths written

    def __init__(
        self,
        project: Path | None = None,
        *,
        runtime: RuntimeThread | None = None,
        hooks: Callable[[], ConnectionHooks | None] | None = None,
        secrets: Callable[[], SecretStore | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Portico — Config Editor")
        self.setWindowIcon(app_icon())
        self.setAccessibleName("config editor")
        self.runtime = runtime
        self.hooks_factory = hooks
        self.secrets_factory = secrets
        self._own_secrets: SecretStore | None = None
        self.project = project
        # The files and their edits: none until open_project's worker has read them.
        self.model = EditorModel(project, files=[])
        self.reading = True  # "Reading…": a worker reads and parses the files
        self._opened = 0  # counts opens: only the latest one's files are shown
        self._pending_select: tuple[str, Path | str | None] | None = None
        self._checking = False  # a look at the disk runs in a worker
        self._check_again = False  # and another was asked for meanwhile
        self.saved_config: Config | None = None  # what the last save read, for the app
        self._saving = False  # a save runs in a worker thread: the files are its own
        self._validating: set[Path] = set()  # the files whose check runs in a worker
        self._raw_texts: dict[Path, str] = {}  # settled raw texts not read yet
        self._raw_reading: dict[Path, asyncio.Task[None]] = {}  # their reads in a worker
        self.ops = Ops(lambda notice: self._say(notice.text))
        self.raw_tabs: dict[Path, RawTab] = {}
        self.dialogs: list[QWidget] = []  # open non-modal dialogs (kept alive)
        self.last_test: TestResultDialog | None = None
        self._wanted: tuple[str, str] | None = None  # the last server the person selected
        self._closing = False  # the unsaved-changes question was answered: close now
        self._quitting = False  # the app quits: ``finish`` runs

        self.server_list = ServerList()
        self.server_list.serverSelected.connect(self._selected)
        self.form = ServerForm()
        self.form.edited.connect(self._field_edited)
        self.form.typing.connect(self._typed_in_form)
        self.form.entryEdited.connect(self._entry_edited)
        self.form.renamed.connect(self.rename_selected)
        self.form.keychainRequested.connect(
            lambda key, entry, value: self.spawn(
                self.store_in_keychain(key, entry, value), "Store in keychain"
            )
        )
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("editor tabs")
        self.tabs.addTab(self.form, FORM_TAB)
        self.settings = SettingsForm()
        self.settings.edited.connect(self._setting_edited)
        self.settings.typed.typing.connect(self._typed_in_form)
        self.settings_file = QComboBox()
        self.settings_file.setAccessibleName("settings file")
        self.settings_file.currentIndexChanged.connect(lambda _i: self._show_settings())
        settings_page = self.settings_page = QWidget()
        settings_column = QVBoxLayout(settings_page)
        file_row = QHBoxLayout()
        file_label = QLabel("F&ile:")
        file_label.setBuddy(self.settings_file)
        file_row.addWidget(file_label)
        file_row.addWidget(self.settings_file, 1)
        settings_column.addLayout(file_row)
        settings_column.addWidget(self.settings, 1)
        self.tabs.addTab(settings_page, SETTINGS_TAB)
        self.models = ModelsTab(self._secret_store, lambda: self.runtime)
        self.models.edited.connect(self._models_edited)
        self.models.form.typed.typing.connect(self._typed_in_form)
        self.tabs.addTab(self.models, MODELS_TAB)
        self.tabs.currentChanged.connect(lambda _i: self._tab_changed())

        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.addWidget(self.server_list, 1)
        left_buttons = QHBoxLayout()
        self.add_button = QPushButton("&Add server…")
        self.add_button.clicked.connect(self.open_add_server)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setAccessibleName("remove server")
        self.remove_button.clicked.connect(self.remove_selected)
        left_buttons.addWidget(self.add_button)
        left_buttons.addWidget(self.remove_button)
        left_column.addLayout(left_buttons)

        splitter = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([270, 700])

        self.conflict_bar = QWidget()
        bar = QHBoxLayout(self.conflict_bar)
        bar.setContentsMargins(8, 4, 8, 4)
        self.conflict_bar.setStyleSheet("background: rgba(211, 47, 47, 40);")
        self.conflict_label = QLabel()
        self.conflict_label.setWordWrap(True)
        self.conflict_label.setAccessibleName("conflict")
        self.reload_button = QPushButton("&Reload")
        self.reload_button.setAccessibleName("reload from disk")
        self.reload_button.clicked.connect(self.reload_conflicted)
        self.keep_button = QPushButton("&Keep mine…")
        self.keep_button.setAccessibleName("keep my edits")
        self.keep_button.setToolTip("Write your version over the file (the difference is shown)")
        self.keep_button.clicked.connect(lambda: self.spawn(self.keep_mine(), "Keep mine"))
        bar.addWidget(self.conflict_label, 1)
        bar.addWidget(self.reload_button)
        bar.addWidget(self.keep_button)
        self.conflict_bar.hide()
        self._conflicted: list[Path] = []

        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setAccessibleName("editor notice")
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bottom = QHBoxLayout()
        bottom.addWidget(self.notice, 1)
        self.test_button = QPushButton("&Test")
        self.test_button.setToolTip("Connect the edited server without saving")
        self.test_button.clicked.connect(lambda: self.spawn(self.test_selected(), "Test"))
        self.save_button = QPushButton("&Save")
        self.save_button.clicked.connect(lambda: self.save())
        bottom.addWidget(self.test_button)
        bottom.addWidget(self.save_button)

        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.conflict_bar)
        column.addWidget(splitter, 1)
        column.addLayout(bottom)
        self.setCentralWidget(central)

        save_action = QAction("Save", self)
        save_action.setShortcut(QKeySequence.StandardKey.Save)
        save_action.triggered.connect(lambda: self.save())
        self.addAction(save_action)
        close_action = QAction("Close", self)
        close_action.setShortcut(QKeySequence.StandardKey.Close)
        close_action.triggered.connect(self.close)
        self.addAction(close_action)

        self._disk_due = QTimer(self)
        self._disk_due.setSingleShot(True)
        self._disk_due.setInterval(DISK_SETTLE_MS)
        self._disk_due.timeout.connect(self._disk_changed)
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(lambda _p: self._disk_due.start())
        self.watcher.directoryChanged.connect(lambda _p: self._disk_due.start())
        self.confirmation: QDialog | None = None  # the open question (unsaved, Keep mine)

        self.resize(1040, 700)
        self.open_project(project)

    # --- files -------------------------------------------------------------------------

    def open_project(self, project: Path | None) -> asyncio.Task[None]:
        """(Re)open every config file of both scopes; unsaved edits are dropped. The files
        are read and parsed in a worker thread; the window says "Reading…" until then."""
        self.project = project
        self._opened += 1
        self._set_reading(True)
        title = "Portico — Config Editor"
        self.setWindowTitle(f"{title} — {project.name}" if project else title)
        return self.spawn(self._open(project, self._opened), "Reading the config files")

    def _set_reading(self, reading: bool) -> None:
        self.reading = reading
        self.splitter.setEnabled(not reading)
        if reading:
            self.save_button.setEnabled(False)
            self.test_button.setEnabled(False)
            self._say("Reading the config files…")
        else:
            self.test_button.setEnabled(True)

    async def _open(self, project: Path | None, opened: int) -> None:
        try:
            model = await asyncio.to_thread(EditorModel, project, check_later=True)
            watched = await asyncio.to_thread(_watch_paths, [f.path for f in model.files])
        except BaseException:
            if opened == self._opened:
                self._say("Could not read the config files.")
            raise
        if opened != self._opened:
            return  # a later open is under way
        self._show_model(model, watched)
        self._set_reading(False)
        self._say("")
        if self._check_again:
            self._disk_due.start()  # the disk changed while it was read
        if self._pending_select is not None:
            server, path = self._pending_select
            self._pending_select = None
            self.select(server, path)

    def _show_model(self, model: EditorModel, watched: list[str]) -> None:
        self.model = model
        while self.tabs.count() > FIXED_TABS:
            widget = self.tabs.widget(FIXED_TABS)
            self.tabs.removeTab(FIXED_TABS)
            if widget is not None:
                widget.deleteLater()
        self.raw_tabs = {}
        for file in self.files:
            tab = RawTab(file.text, file.dialect)
            tab.setAccessibleName(f"raw {file.label}")
            tab.textSettled.connect(lambda text, f=file: self.apply_raw(f, text))
            self.raw_tabs[file.path] = tab
            self.tabs.addTab(tab, file.label)
            tab.set_diagnostics(file.diagnostics())
        self._refresh_list()
        self._refresh_titles()
        self.form.show_server(None, None)
        self.settings_file.blockSignals(True)
        self.settings_file.clear()
        for file in self.files:
            self.settings_file.addItem(file.label, str(file.path))
        self.settings_file.blockSignals(False)
        self._show_settings()
        self.models.show_files(self.files)
        self._watch(watched)

    @property
    def files(self) -> list[EditedFile]:
        return self.model.files

    def file_for(self, path: Path | str) -> EditedFile:
        return self.model.file_for(path)

    def raw_tab(self, path: Path | str) -> RawTab:
        return self.raw_tabs[Path(path)]

    @property
    def dirty(self) -> bool:
        """Unsaved edits, counting a value typed in the form and not yet applied."""
        typed = any(field.pending for field in self.form.fields.values())
        typed = typed or self.settings.typed.pending or self.models.form.typed.pending
        raw = bool(self._raw_reading) or any(t.timer.isActive() for t in self.raw_tabs.values())
        return typed or raw or self.model.dirty

    def _apply_typed(self) -> None:
        """Apply every value typed in the form and not yet applied (focus still in it)."""
        for field in self.form.fields.values():
            if field.pending:
                field._commit_line()
        self.settings.typed.apply()
        self.models.form.typed.apply()

    def _typed_in_form(self) -> None:
        self.save_button.setEnabled(self.dirty)

    def _refresh_list(self) -> None:
        self.server_list.populate(self.files)

    def _refresh_titles(self) -> None:
        for index in range(1, self.tabs.count()):
            tab = self.tabs.widget(index)
            for file in self.files:
                if self.raw_tabs.get(file.path) is tab:
                    mark = " •" if file.dirty else ""
                    self.tabs.setTabText(index, file.label + mark)
                    errors = sum(d.is_error for d in file.diagnostics())
                    self.tabs.setTabToolTip(
                        index, f"{file.path}\n{errors} error(s)" if errors else str(file.path)
                    )
        self.save_button.setEnabled(self.dirty)

    def _say(self, text: str) -> None:
        self.notice.setText(text)

    # --- selection ---------------------------------------------------------------------

    def current(self) -> tuple[EditedFile, str] | None:
        chosen = self.server_list.selected()
        if chosen is None:
            return None
        return self.file_for(chosen[0]), chosen[1]

    def select(self, server: str, path: Path | str | None = None) -> bool:
        """Show ``server`` (of ``path``, else where it is defined, project first); while
        the files are being read, once they are."""
        if self.reading:
            self._pending_select = (server, path)
            return True
        if path is not None:
            found = self.server_list.select(str(path), server)
        else:
            found = self.server_list.select_name(server)
        if found:
            self.tabs.setCurrentWidget(self.form)
        return found

    def _selected(self, path: str, server: str) -> None:
        self._wanted = (path, server) if server else None
        if not server:
            self.form.show_server(None, None)
            return
        self.form.show_server(self.file_for(path), server)

    # --- keeping the two views in step -------------------------------------------------

    def apply_raw(self, file: EditedFile, text: str) -> asyncio.Task[None] | None:
        """A raw edit settled: parse and check it in a worker (on a big file that takes
        longer than a frame), then mark its problems and refresh list and form. Texts
        settled meanwhile are read after it, the latest only."""
        reading = self._raw_reading.get(file.path)
        if reading is None and text == file.text and file.config is not None:
            return None
        self._raw_texts[file.path] = text
        if reading is not None:
            return reading
        task = self._raw_reading[file.path] = self.spawn(
            self._read_raw(file), f"Reading your edit of {file.path.name}"
        )
        return task

    async def _read_raw(self, file: EditedFile) -> None:
        try:
            while (text := self._raw_texts.pop(file.path, None)) is not None:
                view = file.view()
                # A detached copy holding ``text``, parsed and checked off the GUI thread.
                parsed = await asyncio.to_thread(
                    EditedFile.merged, view, view.baseline, view.snapshot, text
                )
                if not any(f is file for f in self.files):
                    return  # the files were opened again meanwhile
                if file.path in self._raw_texts or file.view() != view:
                    continue  # a newer text waits, or a reload replaced the file
                self._adopt_raw(file, parsed)
        finally:
            self._raw_reading.pop(file.path, None)
            self._raw_texts.pop(file.path, None)

    def _adopt_raw(self, file: EditedFile, parsed: EditedFile) -> None:
        wanted = self._wanted
        file.adopt(parsed)
        self.raw_tab(file.path).set_diagnostics(file.diagnostics())
        if self.form.file is file:
            self.form.set_diagnostics(file.diagnostics())
        self._refresh_list()
        if self.server_list.selected() is None and wanted is not None:
            # The server was gone while the text did not parse: show it again once it does.
            if not self.server_list.select(*wanted) and wanted[0] == str(file.path):
                self.form.show_server(file, wanted[1])
            self._wanted = wanted
        elif self.form.file is file:
            self.form.show_server(file, self.form.server)
        self.models.refresh()
        self._refresh_titles()

    async def raw_read(self) -> None:
        """Wait until every settled raw edit has been read (save, test and a look at the
        disk work on the document the text became)."""
        while self._raw_reading:
            await asyncio.wait(list(self._raw_reading.values()))

    def _reading(self, file: EditedFile, edit: Callable[[], Any]) -> bool:
        """True when a raw edit of ``file`` is being read: ``edit`` (a form, settings or
        list edit) runs once it has been, on the document that text became."""
        if file.path not in self._raw_reading:
            return False

        async def later() -> None:
            await self.raw_read()
            edit()

        self.spawn(later(), f"Editing {file.path.name}")
        return True

    def _after_form_edit(self, file: EditedFile) -> None:
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_titles()

    def _validate(self, file: EditedFile) -> asyncio.Task[None] | None:
        """Check ``file``'s text in a worker, then show its diagnostics (markers, field
        errors, tab titles). One check per file at a time; an edit made meanwhile is
        checked next, and a check of a text the file no longer holds is dropped."""
        if file.path in self._validating or file.checked:
            return None
        self._validating.add(file.path)
        return self.spawn(self._validate_now(file), f"Checking {file.path.name}")

    async def _validate_now(self, file: EditedFile) -> None:
        try:
            while not file.checked:
                text = file.text
                config = await asyncio.to_thread(file.check, text)
                if not any(f is file for f in self.files):
                    return  # the files were opened again meanwhile
                if file.adopt_check(text, config):
                    self._show_diagnostics(file)
        finally:
            self._validating.discard(file.path)

    def _show_diagnostics(self, file: EditedFile) -> None:
        self.raw_tab(file.path).set_diagnostics(file.diagnostics())
        if self.form.file is file:
            self.form.set_diagnostics(file.diagnostics())
        if self.models.file is file:
            self.models.show_diagnostics()
        self._refresh_titles()

    def _field_edited(self, key: str, value: Any) -> None:
        self._entry_edited(key, None, value)

    def _entry_edited(self, key: str, entry: str | None, value: Any) -> None:
        """A form field (``entry`` None) or one entry of a table field (env, headers)."""
        current = self.current()
        if current is None:
            return
        file, server = current
        if self._reading(file, lambda: self._edit_entry(file, server, key, entry, value)):
            return
        self._edit_entry(file, server, key, entry, value)

    def _edit_entry(
        self, file: EditedFile, server: str, key: str, entry: str | None, value: Any
    ) -> None:
        path = schema.key(key).path(file.dialect)
        if entry is not None:
            path = (*path, entry)
        try:
            if value is UNSET:
                file.unset(server, path)
            else:
                file.set(server, path, value)
        except EditError as exc:
            self._say(str(exc))
            return
        self._after_form_edit(file)

    def commit_pending(self) -> None:
        """Apply a form field that still has focus (Ctrl+S while typing)."""
        focused = self.focusWidget()
        for field in self.form.fields.values():
            if field.editor is focused:
                field._commit_line()
        self.models.form.commit_pending(focused)

    # --- keychain ----------------------------------------------------------------------

    async def store_in_keychain(self, key: str, entry: str, value: str) -> str | None:
        """Store ``value`` in the keyring and write ``${keyring:NAME}`` in its place.

        Returns the keyring name, or None (with a notice saying why) when nothing was done.
        """
        current = self.current()
        if current is None:
            return None
        file, server = current
        await self.raw_read()
        spec = schema.key(key)
        if not value:
            self._say("There is no value to store: type it first.")
            return None
        if has_references(value):
            self._say(
                f"{key} already holds a ${{...}} reference: there is no plain value to store."
            )
            return None
        name = _KEYRING_UNSAFE.sub("-", f"{server}-{entry or spec.leaf}").strip("-")
        try:
            store = await self._secret_store()
            # Refuses (and writes no reference) when the value would not persist.
            where = await store.store_secret(name, value)
        except Exception as exc:  # no secure keyring, a broken or locked keyring
            self._say(f"Could not store the secret: {exc}")
            return None
        reference = f"${{keyring:{name}}}"
        path = spec.path(file.dialect)
        if entry:
            path = (*path, entry)
            new_value: Any = reference
        elif key == "client_cert":
            current_value = file.doc.get(server, *path) if file.doc else None
            if not isinstance(current_value, list) or len(current_value) < 3:
                self._say("client_cert has no password to store ([cert, key, password]).")
                return None
            new_value = [*current_value[:2], reference, *current_value[3:]]
        else:
            new_value = reference
        try:
            file.set(server, path, new_value)
        except EditError as exc:
            self._say(str(exc))
            return None
        self._after_form_edit(file)
        self.form.refresh()
        self._say(f"Stored {name} in {where}; the file now says {reference}.")
        return name

    async def _secret_store(self) -> SecretStore:
        """The app session's store; without a session, one for this window that follows
        the config's ``secrets.file_fallback``."""
        store = self.secrets_factory() if self.secrets_factory is not None else None
        if store is not None:
            return store
        if self._own_secrets is None:
            from portico.config import load

            config = await asyncio.to_thread(load, self.project)
            self._own_secrets = SecretStore(file_fallback=config.settings.file_fallback_for_secrets)
        return self._own_secrets

    # --- add / remove ------------------------------------------------------------------

    def open_add_server(self) -> AddServerDialog:
        taken = sorted({n for f in self.files for n in f.server_names()})
        targets = [(f.path, f.label) for f in self.files if f.doc is not None]
        dialog = AddServerDialog(targets, project=self.project, taken=taken, parent=self)
        current = self.current()
        if current is not None:
            dialog.target.setCurrentIndex(max(0, dialog.target.findData(str(current[0].path))))
        dialog.chosen.connect(self.add_servers)
        self._keep(dialog)
        dialog.show()  # non-modal (open() would make it window-modal); never exec()
        return dialog

    def add_servers(self, path: str, servers: list[tuple[str, dict[str, Any]]]) -> None:
        file = self.file_for(path)
        if self._reading(file, lambda: self.add_servers(path, servers)):
            return
        added = []
        for name, fields in servers:
            try:
                file.add_server(name, fields)
            except EditError as exc:
                self._say(str(exc))
                continue
            added.append(name)
        if not added:
            return
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_list()
        self.select(added[-1], file.path)
        self._refresh_titles()
        self._say(
            f"Added {', '.join(added)} to {file.path.name} ({file.scope.value}); Save to keep."
        )

    def rename_selected(self, new: str) -> None:
        current = self.current()
        if current is None:
            return
        file, server = current
        if self._reading(file, lambda: self._rename(file, server, new)):
            return
        self._rename(file, server, new)

    def _rename(self, file: EditedFile, server: str, new: str) -> None:
        try:
            file.rename_server(server, new)
        except EditError as exc:
            self._say(str(exc))
            self.form.name_edit.setText(server)
            return
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_list()
        self.select(new, file.path)
        self._refresh_titles()
        self._say(f"Renamed {server} to {new} in {file.path.name}; Save to keep.")

    def _tab_changed(self) -> None:
        self.flush_raw()
        # Test connects the selected server: not offered where no server is shown.
        shown = self.tabs.currentWidget()
        self.test_button.setVisible(shown is not self.models and shown is not self.settings_page)

    def flush_raw(self) -> None:
        """Apply raw edits still waiting for their debounce timer."""
        for tab in self.raw_tabs.values():
            if tab.timer.isActive():
                tab.flush()

    def remove_selected(self) -> None:
        current = self.current()
        if current is None:
            return
        file, server = current
        if self._reading(file, lambda: self._remove(file, server)):
            return
        self._remove(file, server)

    def _remove(self, file: EditedFile, server: str) -> None:
        try:
            file.remove_server(server)
        except EditError as exc:
            self._say(str(exc))
            return
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_list()
        self._refresh_titles()
        self._say(f"Removed {server} from {file.path.name}; Save to keep.")

    # --- save / reload -----------------------------------------------------------------

    def save(self, then: Callable[[list[Path]], Any] | None = None) -> asyncio.Task[None]:
        """Start a save in the background (``save_now``); ``then`` gets what was written."""
        op = self.ops.op(self.save_now, "Save")
        if then is not None:
            op.success(then)
        return op.run()

    async def save_now(self) -> list[Path]:
        """Write every changed file, off the GUI thread; a conflict shows the Reload bar.
        Returns what was written. The save reads the config once, for the app to apply."""
        self.commit_pending()
        self.flush_raw()
        await self.raw_read()
        if self._saving:
            self._say("A save is running; try again when it has finished.")
            return []
        self._saving = True
        self.save_button.setEnabled(False)
        try:
            outcome = await asyncio.to_thread(self.model.save)
        finally:
            self._saving = False
            self.save_button.setEnabled(self.dirty)
            if self._check_again:
                self._disk_due.start()  # the disk changed during the save
        self.saved_config = outcome.config
        written, conflicts, problems = outcome.written, outcome.conflicts, outcome.problems
        self._conflicted = list(outcome.conflicted)
        if conflicts:
            self.conflict_label.setText(
                "\n".join(conflicts) + "\nReload to see the file as it is now (your edits of "
                "that file are dropped), or copy them from the raw tab first."
            )
            self.conflict_bar.show()
        else:
            self.conflict_bar.hide()
        self._refresh_list()
        self._refresh_titles()
        errors = outcome.errors
        if written:
            note = f"Saved {', '.join(str(p) for p in written)}."
            if errors:
                note += f" It has {errors} error(s): the servers concerned do not start."
            problems.insert(0, note)
        elif not conflicts and not problems:
            problems.append("Nothing to save.")
        self._say("\n".join(problems))
        if written:
            self.saved.emit([str(p) for p in written])
        return written

    # --- the files on disk ----------------------------------------------------------------

    def _watch(self, paths: list[str]) -> None:
        """Watch ``paths``: every open file and its folder that exist (an atomic save
        replaces the file), found by ``_watch_paths`` in a worker."""
        old = self.watcher.files() + self.watcher.directories()
        if old:
            self.watcher.removePaths(old)
        if paths:
            self.watcher.addPaths(paths)

    async def check_disk(self) -> list[str]:
        """Compare each file with the disk, in a worker: reload it quietly when it has no
        edits, re-apply the edits onto the new file when they touch other keys, else ask
        (the bar). An edit made while the worker reads is never overwritten: that file is
        looked at again with it. Returns what was said (reloads, merges, conflicts)."""
        if self.reading or self._checking or self._saving:
            self._check_again = True  # after the open, the running check or the save
            return []
        self._checking = True
        said: list[str] = []
        try:
            while True:
                await self.raw_read()  # the edits are merged as the document they became
                self._check_again = False
                said += await self._check_disk_once()
                if not self._check_again:
                    break
        finally:
            self._checking = False
        return said

    async def _check_disk_once(self) -> list[str]:
        self._apply_typed()  # a typed value is an edit: merged or asked about, never dropped
        changes = await asyncio.to_thread(read_disk, self.model.views())
        watched = await asyncio.to_thread(_watch_paths, [f.path for f in self.files])
        if self.reading:
            return []  # the files were opened again meanwhile
        self._apply_typed()
        outcome = self.model.apply_disk(changes, self._conflicted)
        if outcome.stale:
            self._check_again = True
        for path in outcome.changed:
            self._show_file(self.file_for(path))
        self._conflicted += outcome.conflicted
        conflicts = outcome.conflicts
        said = outcome.said
        if conflicts:
            self.conflict_label.setText(
                "\n".join(conflicts) + "\nReload drops your edits of that file; Keep mine "
                "writes your version over it (you see the difference first)."
            )
            self.conflict_bar.show()
        if said:
            self._say("\n".join(said))
        self._watch(watched)
        return said + conflicts

    def _disk_changed(self) -> None:
        if not self.isVisible() or self._quitting:
            return  # a closed editor reads its files again when it is opened
        self.spawn(self.check_disk(), "Checking the files on disk")

    def _settings_target(self) -> EditedFile | None:
        path = self.settings_file.currentData()
        return self.file_for(path) if path else None

    def _show_settings(self) -> None:
        self.settings.show_file(self._settings_target())

    def _setting_edited(self, name: str, value: Any) -> None:
        file = self._settings_target()
        if file is None or self._reading(file, lambda: self._set_setting(file, name, value)):
            return
        self._set_setting(file, name, value)

    def _set_setting(self, file: EditedFile, name: str, value: Any) -> None:
        try:
            file.set_setting(name, value)
        except (EditError, DocumentParseError) as exc:
            self._say(str(exc))
            return
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_titles()

    def _models_edited(self, file: EditedFile) -> None:
        self.raw_tab(file.path).set_text(file.text)
        self._validate(file)
        self._refresh_titles()

    def _show_file(self, file: EditedFile) -> None:
        keep = self.server_list.selected()
        tab = self.raw_tab(file.path)
        tab.set_text(file.text)
        tab.set_diagnostics(file.diagnostics())
        self._refresh_list()
        if keep is not None:
            self.server_list.select(*keep)
        if self.form.file is file:
            self.form.show_server(file, self.form.server)
        if self._settings_target() is file:
            self._show_settings()
        self.models.refresh()
        self._refresh_titles()

    async def keep_mine(self) -> DiffDialog | None:
        """Show what writing the edits over the changed files would do; Overwrite saves."""
        await self.raw_read()
        files = [self.file_for(p) for p in self._conflicted] or [f for f in self.files if f.dirty]
        if not files:
            return None
        diffs: list[str] = []
        disk_texts = await asyncio.to_thread(self.model.disk_texts, [f.path for f in files])
        for file in files:
            disk = disk_texts[file.path]
            diffs.extend(
                difflib.unified_diff(
                    disk.splitlines(),
                    file.text.splitlines(),
                    f"{file.path} (on disk)",
                    f"{file.path} (yours)",
                    lineterm="",
                )
            )
        box = DiffDialog(self, "\n".join(diffs))

        async def overwrite() -> None:
            snapshots = await asyncio.to_thread(lambda: [read_bytes(f.path)[1] for f in files])
            for file, snapshot in zip(files, snapshots, strict=True):
                file.take_snapshot(snapshot)
            self._conflicted = []
            self.conflict_bar.hide()
            await self.save_now()

        box.accepted.connect(lambda: self.spawn(overwrite(), "Save"))

        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirmation = box
        box.show()
        return box

    def reload_conflicted(self) -> asyncio.Task[None]:
        paths = self._conflicted or [f.path for f in self.files]
        return self.spawn(self.reload(*paths), "Reload")

    async def reload(self, *paths: Path | str, quiet: bool = False) -> list[Path]:
        """Read files from disk again, in a worker (their unsaved edits are dropped). A file
        edited while it was being read keeps that edit and is named. Returns the reloaded."""
        files = [self.file_for(p) for p in paths]
        views = [f.view() for f in files]
        fresh = await asyncio.to_thread(reread, views)
        done, kept = [], []
        for file, view, new in zip(files, views, fresh, strict=True):
            if file.view() != view:
                kept.append(file.path.name)
                continue
            file.adopt(new)
            self._show_file(file)
            done.append(file.path)
        self._conflicted = [p for p in self._conflicted if p not in done]
        if not self._conflicted:
            self.conflict_bar.hide()
        said = [f"Reloaded {p} from disk." for p in done] if not quiet else []
        if kept:
            said.append(f"Not reloaded: {', '.join(kept)} was edited meanwhile; Reload again.")
        if said:
            self._say("\n".join(said))
        return done

    # --- test --------------------------------------------------------------------------

    async def test_selected(self) -> TestResultDialog | None:
        """Connect the selected server as edited (not saved) and show what it offers."""
        current = self.current()
        if current is None:
            self._say("Select a server to test.")
            return None
        file, server = current
        await self.raw_read()
        hooks = self.hooks_factory() if self.hooks_factory is not None else None
        if hooks is None or self.runtime is None or not self.runtime.is_running:
            self._say(NO_RUNTIME)
            return None
        dialog = TestResultDialog(server, self)
        self._keep(dialog)
        self.last_test = dialog
        dialog.show()
        config = file.config if file.checked else None
        if config is None:
            config = await asyncio.to_thread(file.check, file.text)
        spec = config.server(server)
        if spec is None:
            mine = [str(d) for d in config.diagnostics if d.server in (server, None)]
            dialog.show_error(
                "This server's settings have errors; fix them first:\n" + "\n".join(mine)
            )
            return dialog
        from portico.runtime.probe import probe, report_lines

        self.test_button.setEnabled(False)
        try:
            result = await self.runtime.submit(probe(spec, None, hooks))
        except Exception as exc:
            log.exception("testing %s failed", server)
            dialog.show_error(f"{type(exc).__name__}: {exc}")
            return dialog
        finally:
            self.test_button.setEnabled(True)
        dialog.show_result(result, report_lines(result))
        return dialog

    # --- plumbing ----------------------------------------------------------------------

    def spawn(
        self, coro: Coroutine[Any, Any, Any], what: str = "The editor's task"
    ) -> asyncio.Task[None]:
        """Run ``coro`` as a background operation: kept alive, its failure a notice."""
        return self.ops.spawn(coro, what)

    def _keep(self, dialog: QWidget) -> None:
        self.dialogs.append(dialog)
        dialog.finished.connect(  # type: ignore[attr-defined]
            lambda _r, d=dialog: self.dialogs.remove(d) if d in self.dialogs else None
        )

    def ask_unsaved(self, then: Callable[[], None]) -> QMessageBox | None:
        """Unsaved edits: Save / Discard / Cancel, as every editor asks; ``then`` runs
        after Save (when it wrote everything) or Discard. None when nothing is unsaved."""
        self._apply_typed()
        self.flush_raw()
        if not self.dirty:
            then()
            return None
        names = ", ".join(f.path.name for f in self.files if f.dirty)
        box = QMessageBox(self)
        box.setWindowTitle("Unsaved changes")
        box.setIcon(QMessageBox.Icon.Question)
        box.setText(f"Save your changes to {names}?")
        box.setInformativeText("If you don't save, your changes are lost.")
        save = box.addButton(QMessageBox.StandardButton.Save)
        discard = box.addButton(QMessageBox.StandardButton.Discard)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.setEscapeButton(cancel)

        def clicked(button: Any) -> None:
            if button is save:
                self.save(lambda _written: None if self.dirty else then())
            elif button is discard:
                self.spawn(drop_edits(), "Discard")

        async def drop_edits() -> None:
            await self.raw_read()
            dirty = self.model.dirty_files()
            await self.reload(*[f.path for f in dirty], quiet=True)
            then()

        box.buttonClicked.connect(clicked)
        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirmation = box
        box.show()
        return box

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.dirty and self._closing is False:
            event.ignore()
            self.ask_unsaved(self._close_now)
            return
        self._closing = False
        self._disk_due.stop()
        self.ops.cancel_all()
        self.models.ops.cancel_all()
        with contextlib.suppress(RuntimeError):
            super().closeEvent(event)

    async def finish(self, wait_s: float = QUIT_WAIT_S) -> bool:
        """At quit: let a running save (and reads, checks) end, at most ``wait_s``
        seconds, then cancel what is left. False (and logged) when a save did not end:
        its file is as it was or as written, never half-written (atomic replace)."""
        self._disk_due.stop()
        self._quitting = True  # no new look at the disk starts
        ended = await self.ops.settle(wait_s)
        if not ended and self._saving:
            log.error("quit while saving the config: the save did not end within %.0f s", wait_s)
        await self.ops.drain()
        await self.models.ops.drain()
        return ended

    def _close_now(self) -> None:
        self._closing = True
        self.close()


def _watch_paths(files: list[Path]) -> list[str]:
    """The files that exist and their folders (stat calls: a worker's)."""
    paths = {str(f) for f in files if f.exists()}
    paths |= {str(f.parent) for f in files if f.parent.exists()}
    return sorted(paths)
