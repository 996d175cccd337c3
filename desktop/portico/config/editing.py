"""The config editor's model: the files being edited, their edits, validation and saving.

No Qt here: the GUI editor is a view of an :class:`EditorModel`, and a test or the CLI can
drive one without a display. Each :class:`EditedFile` holds one file's text, its round-trip
document and its diagnostics. The raw text is the truth while the person types; ``doc`` is
rebuilt from it whenever it parses, and every form edit goes through ``doc`` and comes back
as text. Everything here reads or writes files: in the app it runs off the GUI thread.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from portico.config.atomic import ConflictError, Snapshot, read_bytes
from portico.config.document import (
    SPANS_FROM_CHARS,
    ConfigDocument,
    DocumentParseError,
    KeyPath,
)
from portico.config.load import config_files, load, parse_text
from portico.config.merge import three_way
from portico.config.model import Config, Diagnostic, Dialect, Scope

T = TypeVar("T")


def dialect_of(path: Path) -> Dialect:
    return Dialect.TOML if path.suffix.lower() == ".toml" else Dialect.YAML


class EditedFile:
    """A config file open in the editor (it may not exist on disk yet: ``is_new``)."""

    def __init__(self, path: Path, scope: Scope) -> None:
        self.path = Path(path)
        self.scope = scope
        self.doc: ConfigDocument | None = None
        self.parse_error: str | None = None
        self.snapshot: Snapshot = Snapshot.missing(self.path)
        self.baseline = ""  # the text on disk (or the new-file header): "dirty" compares to it
        self.text = ""
        self.config: Config | None = None
        self.checked_text: str | None = None  # the text ``config`` was checked from
        # True (the GUI editor): an edit does not check the file; the window runs
        # ``check`` in a worker and hands the result to ``adopt_check``.
        self.check_later = False
        self.reload()

    # --- reading -----------------------------------------------------------------------

    @property
    def dialect(self) -> Dialect:
        return dialect_of(self.path)

    @property
    def is_new(self) -> bool:
        return not self.snapshot.exists

    @property
    def dirty(self) -> bool:
        return self.text != self.baseline

    @property
    def label(self) -> str:
        """``mcp.toml (global)``, ``config.yaml (project, new)``."""
        tags = [self.scope.value] + (["new"] if self.is_new else [])
        return f"{self.path.name} ({', '.join(tags)})"

    @property
    def badge(self) -> str:
        return f"{self.scope.value} · {self.dialect.value}"

    def reload(self) -> None:
        """Read the file again; unsaved edits of this file are dropped."""
        data, self.snapshot = read_bytes(self.path)
        if data is None:
            doc = ConfigDocument.new(self.path)
            self.doc, self.parse_error = doc, None
            self.baseline = self.text = doc.text()
        else:
            text = data.decode("utf-8", errors="replace")
            self.baseline = text
            self.set_text(text)
        self.validate()

    def server_names(self) -> list[str]:
        return self.doc.server_names() if self.doc is not None else []

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.config.diagnostics if self.config is not None else ()

    def validate(self) -> Config:
        """Check the current text exactly as ``portico config check`` would."""
        text = self.text
        self.config, self.checked_text = self.check(text), text
        return self.config

    def check(self, text: str) -> Config:
        """``text`` checked as this file (no state touched: a worker may run it)."""
        return parse_text(text, self.path, self.scope, self.dialect)

    @property
    def checked(self) -> bool:
        """``config`` (and so ``diagnostics``) is the check of the current text."""
        return self.config is not None and self.checked_text == self.text

    def adopt_check(self, text: str, config: Config) -> bool:
        """Take a worker's check of ``text``; refused (False) when the file holds another
        text by now, so an older check never replaces a newer one's diagnostics."""
        if text != self.text:
            return False
        self.config, self.checked_text = config, text
        return True

    # --- editing -----------------------------------------------------------------------

    def set_text(self, text: str) -> bool:
        """Adopt raw text; True when it parses (then ``doc`` follows it)."""
        self.text = text
        try:
            # A big file: a tree of the servers an edit touches (a whole-file round trip
            # costs 0.4 s to parse and 30 ms to write out per edit at 400 servers).
            spans = len(text) >= SPANS_FROM_CHARS
            self.doc = ConfigDocument(self.path, self.dialect, text, self.snapshot, spans=spans)
        except DocumentParseError as exc:
            self.doc = None  # the form waits until the text parses again
            self.parse_error = str(exc)
            return False
        self.parse_error = None
        return True

    def _after_edit(self) -> None:
        assert self.doc is not None
        self.text = self.doc.text()
        if not self.check_later:
            self.validate()

    def set(self, server: str, key_path: KeyPath, value: Any) -> None:
        self._require_doc().set(server, key_path, value)
        self._after_edit()

    def unset(self, server: str, key_path: KeyPath) -> None:
        self._require_doc().unset(server, key_path)
        self._after_edit()

    def set_setting(self, name: str, value: Any) -> None:
        """A top-level setting by its logical name (``defer_tools``, ``approvals.mode``);
        ``None`` removes it (the default applies)."""
        doc = self._require_doc()
        path = tuple(name.split("."))
        if value is None:
            doc.unset_setting(path)
        else:
            doc.set_setting(path, value)
        self._after_edit()

    def edit(self, change: Callable[[ConfigDocument], T]) -> T:
        """Any key-path edit of the document (``portico.config.models_edit``'s, say); the
        text and diagnostics follow it."""
        result = change(self._require_doc())
        self._after_edit()
        return result

    def add_server(self, name: str, fields: dict[str, Any]) -> None:
        self._require_doc().add_server(name, fields)
        self._after_edit()

    def rename_server(self, old: str, new: str) -> None:
        self._require_doc().rename_server(old, new)
        self._after_edit()

    def remove_server(self, name: str) -> None:
        self._require_doc().remove_server(name)
        self._after_edit()

    def _require_doc(self) -> ConfigDocument:
        if self.doc is None:
            raise DocumentParseError(self.path, f"does not parse ({self.parse_error})")
        return self.doc

    def adopt_disk(self, disk: str, snapshot: Snapshot, merged: str) -> None:
        """The file changed on disk: ``disk`` is the new baseline, ``merged`` (the edits
        re-applied onto it) the text being edited."""
        self.snapshot = snapshot
        self.baseline = disk
        self.set_text(merged)
        self.validate()

    def adopt(self, other: EditedFile) -> None:
        """Take ``other``'s state (a copy read and parsed off the GUI thread)."""
        self.snapshot, self.baseline, self.text = other.snapshot, other.baseline, other.text
        self.doc, self.parse_error, self.config = other.doc, other.parse_error, other.config
        self.checked_text = other.checked_text

    def view(self) -> FileView:
        """What this file holds now, as plain data a worker thread may read."""
        return FileView(self.path, self.scope, self.snapshot, self.baseline, self.text)

    @classmethod
    def merged(cls, view: FileView, disk: str, snapshot: Snapshot, text: str) -> EditedFile:
        """A detached copy of a file whose edits (``text``) were re-applied onto ``disk``."""
        file = cls.__new__(cls)
        file.path, file.scope = view.path, view.scope
        file.doc, file.parse_error, file.config = None, None, None
        file.checked_text, file.check_later = None, False
        file.snapshot, file.baseline = snapshot, disk
        file.set_text(text)
        file.validate()
        return file

    def take_disk_snapshot(self) -> None:
        """Keep mine: the next save may replace the file as it is on disk now."""
        self.take_snapshot(read_bytes(self.path)[1])

    def take_snapshot(self, snapshot: Snapshot) -> None:
        """Keep mine with the snapshot a worker read: the next save may replace that file."""
        self.snapshot = snapshot
        self.set_text(self.text)

    def save(self) -> None:
        """Write through the round-trip document; ConflictError if the disk changed."""
        doc = self._require_doc()
        text = self.text  # what is written, even if an edit lands meanwhile
        doc.save()
        self.snapshot = read_bytes(self.path)[1]
        self.baseline = text

    # --- showing values ----------------------------------------------------------------

    def inline(self, value: Any) -> str:
        """``value`` as this dialect writes it inline (for one-line form fields)."""
        if self.dialect is Dialect.TOML:
            from portico.config.toml_edit import literal

            return literal(value)
        return json.dumps(value, ensure_ascii=False)

    def parse_value(self, text: str) -> Any:
        doc = self.doc or ConfigDocument.new(self.path)
        return doc.parse_value(text)


@dataclass(frozen=True)
class FileView:
    """One open file as the GUI held it when a look at the disk started: a worker compares
    it with the disk while the person edits on, and the result applies only if the file
    still holds this (else the look is made again: an edit is merged or asked about)."""

    path: Path
    scope: Scope
    snapshot: Snapshot
    baseline: str
    text: str

    @property
    def dirty(self) -> bool:
        return self.text != self.baseline


@dataclass(frozen=True)
class DiskChange:
    """One file that changed on disk, as a worker found it: ``fresh`` is the file to adopt
    (reloaded, or the edits re-applied onto it), None for a conflict on ``keys``."""

    view: FileView
    fresh: EditedFile | None
    keys: tuple[str, ...] = ()


def read_disk(views: Sequence[FileView]) -> list[DiskChange]:
    """Compare each file with the disk, reading and parsing what changed (no shared state:
    this runs in a worker thread)."""
    changes = []
    for view in views:
        data, snapshot = read_bytes(view.path)
        if snapshot.exists == view.snapshot.exists and snapshot.sha256 == view.snapshot.sha256:
            continue
        if not view.dirty:
            changes.append(DiskChange(view, EditedFile(view.path, view.scope)))
            continue
        disk = data.decode("utf-8", errors="replace") if data is not None else ""
        merge = three_way(view.path, dialect_of(view.path), view.baseline, view.text, disk)
        if merge.text is not None:
            changes.append(DiskChange(view, EditedFile.merged(view, disk, snapshot, merge.text)))
        else:
            changes.append(DiskChange(view, None, tuple(merge.conflicts)))
    return changes


def reread(views: Sequence[FileView]) -> list[EditedFile]:
    """Each file read from disk again, parsed (a worker's half of a reload)."""
    return [EditedFile(view.path, view.scope) for view in views]


def open_files(project: Path | None) -> list[EditedFile]:
    """Every config file of both scopes (global first), existing or not."""
    pairs: Sequence[tuple[Path, Scope]] = config_files(project)
    return [EditedFile(path, scope) for path, scope in pairs]


@dataclass
class SaveOutcome:
    """What one save did: the files written, the ones that changed on disk meanwhile, and
    every other problem, one line each."""

    written: list[Path] = field(default_factory=list)
    conflicted: list[Path] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: int = 0  # the diagnostics of the written files that are errors
    # The effective config after the save (every file of both scopes, each parsed once),
    # for the app to apply as it is: None when nothing was written.
    config: Config | None = None


@dataclass
class DiskOutcome:
    """What a look at the disk found: files reloaded (no edits), files whose edits were
    re-applied onto the new file, and files whose edits clash with the change."""

    reloaded: list[Path] = field(default_factory=list)
    merged: list[Path] = field(default_factory=list)
    conflicted: list[Path] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # what was reloaded or merged, in words
    stale: list[Path] = field(default_factory=list)  # edited while the disk was read

    @property
    def changed(self) -> list[Path]:
        return self.reloaded + self.merged


class EditorModel:
    """Every config file of both scopes, as the editor holds them (global first)."""

    def __init__(
        self,
        project: Path | None,
        files: list[EditedFile] | None = None,
        *,
        check_later: bool = False,
    ) -> None:
        """Reads every file of both scopes; ``files=[]``: none yet (the editor's window
        while a worker reads them). ``check_later``: see ``EditedFile.check_later``."""
        self.project = project
        self.files = open_files(project) if files is None else files
        for file in self.files:
            file.check_later = check_later

    def file_for(self, path: Path | str) -> EditedFile:
        for file in self.files:
            if file.path == Path(path):
                return file
        raise KeyError(path)

    @property
    def dirty(self) -> bool:
        return any(f.dirty for f in self.files)

    def dirty_files(self) -> list[EditedFile]:
        return [f for f in self.files if f.dirty]

    def save(self) -> SaveOutcome:
        """Write every changed file; a file changed on disk meanwhile is not written."""
        out = SaveOutcome()
        for file in self.files:
            if not file.dirty:
                continue
            if file.doc is None:
                out.problems.append(f"{file.path} does not parse; fix it in its raw tab first.")
                continue
            try:
                file.save()
            except ConflictError as exc:
                out.conflicted.append(file.path)
                out.conflicts.append(str(exc))
                continue
            except OSError as exc:
                out.problems.append(f"Could not write {file.path}: {exc}")
                continue
            out.written.append(file.path)
        if not out.written:
            return out
        out.config = config = load(self.project)
        for path in out.written:
            file = self.file_for(path)
            # The edit's own check, or (still running in the window's worker) the save's
            # read of that file: a save never parses a file twice.
            diagnostics = (
                file.diagnostics()
                if file.checked
                else [d for d in config.diagnostics if d.path == path]
            )
            out.errors += sum(d.is_error for d in diagnostics)
        return out

    def views(self) -> list[FileView]:
        return [file.view() for file in self.files]

    def check_disk(self, conflicted: Sequence[Path] = ()) -> DiskOutcome:
        """Compare each file with the disk: reload it when it has no edits, re-apply the
        edits onto the new file when they touch other keys, else report a conflict.
        ``conflicted``: files already reported (not reported again)."""
        return self.apply_disk(read_disk(self.views()), conflicted)

    def apply_disk(
        self, changes: Sequence[DiskChange], conflicted: Sequence[Path] = ()
    ) -> DiskOutcome:
        """Adopt what ``read_disk`` found; a file edited (or saved) since its view was taken
        is left as it is and listed in ``stale``: look at the disk again for it."""
        out = DiskOutcome()
        for change in changes:
            file = self.file_for(change.view.path)
            if file.view() != change.view:
                out.stale.append(file.path)
                continue
            if change.fresh is not None and not change.view.dirty:
                file.adopt(change.fresh)
                out.reloaded.append(file.path)
                out.said.append(f"{file.path.name} changed on disk and was reloaded.")
            elif change.fresh is not None:
                file.adopt(change.fresh)
                out.merged.append(file.path)
                out.said.append(
                    f"{file.path.name} changed on disk; your edits were re-applied onto it."
                )
            else:
                if file.path not in conflicted:
                    out.conflicted.append(file.path)
                out.conflicts.append(
                    f"{file.path} changed on disk, and your unsaved edits touch the same "
                    f"keys ({', '.join(change.keys)})."
                )
        return out

    def disk_texts(self, paths: Sequence[Path]) -> dict[Path, str]:
        """The text on disk now of each of ``paths`` ("" for a missing file)."""
        texts = {}
        for path in paths:
            data, _snapshot = read_bytes(path)
            texts[Path(path)] = data.decode("utf-8", errors="replace") if data is not None else ""
        return texts

    def discard(self) -> list[EditedFile]:
        """Drop every unsaved edit (each dirty file read again); returns those files."""
        dropped = self.dirty_files()
        for file in dropped:
            file.reload()
        return dropped
