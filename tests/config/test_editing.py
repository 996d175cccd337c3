"""The config editor's model without Qt: edits, dirty state, validation, save and the disk.

These drive ``portico.config.editing.EditorModel`` exactly as the editor window does, with
no display and no widget: the window is only a view of this model.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from portico import paths
from portico.config import parse_count
from portico.config.editing import EditorModel

TEXT = """\
# my servers, by hand
[mcp.files]   # the file server
command = ["npx", "-y", "fs"]
timeout = 30000  # slow disk

[mcp.web]
url = "https://example.com/mcp"
"""


def _global(text: str = TEXT) -> Path:
    target = paths.paths().global_toml
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def test_the_model_imports_no_qt() -> None:
    code = (
        "import sys, portico.config.editing; "
        "print([m for m in sys.modules if m.startswith(('PySide6', 'qasync', 'portico.ui'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_edit_makes_the_file_dirty_and_a_save_writes_only_that_line() -> None:
    target = _global()
    model = EditorModel(None)
    file = model.file_for(target)
    assert not model.dirty
    assert file.server_names() == ["files", "web"]
    file.set("web", ("url",), "https://example.org/mcp")
    assert model.dirty and [f.path for f in model.dirty_files()] == [target]
    outcome = model.save()
    assert outcome.written == [target] and not outcome.conflicts and not outcome.problems
    assert target.read_text(encoding="utf-8") == TEXT.replace("example.com", "example.org")
    assert not model.dirty


def test_validation_is_the_loaders_and_names_file_line_server_and_key() -> None:
    target = _global()
    model = EditorModel(None)
    file = model.file_for(target)
    file.set("files", ("timeout",), "soon")
    errors = [d for d in file.diagnostics() if d.is_error]
    assert errors and errors[0].server == "files" and "timeout" in str(errors[0])
    assert str(target) in str(errors[0]) and errors[0].line == 4
    outcome = model.save()
    assert outcome.written == [target] and outcome.errors == len(errors)


def test_a_file_that_does_not_parse_is_not_saved() -> None:
    target = _global()
    model = EditorModel(None)
    file = model.file_for(target)
    assert not file.set_text(TEXT + "[mcp.broken\n")
    outcome = model.save()
    assert outcome.written == [] and "does not parse" in outcome.problems[0]
    assert target.read_text(encoding="utf-8") == TEXT


def test_a_file_changed_on_disk_is_refused_then_merged_or_reported() -> None:
    target = _global()
    model = EditorModel(None)
    file = model.file_for(target)
    file.set("web", ("url",), "https://example.org/mcp")
    theirs = TEXT.replace("30000", "60000")
    target.write_text(theirs, encoding="utf-8")
    outcome = model.save()
    assert outcome.written == [] and outcome.conflicted == [target]
    assert target.read_text(encoding="utf-8") == theirs  # nothing half-written
    disk = model.check_disk()
    assert disk.merged == [target] and "re-applied" in disk.said[0]
    assert model.save().written == [target]
    assert target.read_text(encoding="utf-8") == theirs.replace("example.com", "example.org")
    # the same key on both sides: a conflict the person decides
    file.set("web", ("url",), "https://mine.example/mcp")
    target.write_text(theirs.replace("example.com", "theirs.example"), encoding="utf-8")
    disk = model.check_disk()
    assert disk.conflicted == [target] and "web.url" in disk.conflicts[0]


def test_a_file_without_edits_is_reloaded_and_discard_drops_edits() -> None:
    target = _global()
    model = EditorModel(None)
    target.write_text(TEXT + '\n[mcp.more]\ncommand = ["x"]\n', encoding="utf-8")
    disk = model.check_disk()
    assert disk.reloaded == [target]
    assert model.file_for(target).server_names() == ["files", "web", "more"]
    model.file_for(target).remove_server("more")
    assert model.dirty
    assert [f.path for f in model.discard()] == [target] and not model.dirty
    assert model.file_for(target).server_names() == ["files", "web", "more"]


def test_a_save_parses_each_file_once_and_returns_the_config_it_read() -> None:
    target = _global()
    yaml = paths.paths().global_yaml
    yaml.write_text("# mine\nmcp_servers:\n  y: {command: npx}\n", encoding="utf-8")
    model = EditorModel(None)
    model.file_for(target).set("web", ("url",), "https://example.org/mcp")
    parse_count.reset()
    outcome = model.save()
    assert dict(parse_count.PARSES) == {str(target): 1, str(yaml): 1}
    assert outcome.config is not None
    web = outcome.config.server("web")
    assert web is not None and web.url == "https://example.org/mcp"
    assert {s.name for s in outcome.config.servers} == {"files", "web", "y"}
    parse_count.reset()
    assert model.save().config is None and parse_count.total() == 0  # nothing to write


def test_a_check_of_an_older_text_is_refused() -> None:
    """The editor checks in a worker: a check that ends after a newer edit is dropped."""
    target = _global()
    model = EditorModel(None, check_later=True)
    file = model.file_for(target)
    file.set("files", ("timeout",), "soon")
    assert not file.checked  # check_later: the window's worker checks
    old_text = file.text
    old = file.check(old_text)
    file.set("files", ("timeout",), 5000)
    new_text = file.text
    new = file.check(new_text)
    assert file.adopt_check(new_text, new) and file.checked
    assert not file.adopt_check(old_text, old)  # ended last, checked an older text
    assert not [d for d in file.diagnostics() if d.is_error]
