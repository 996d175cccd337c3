"""Atomic writes: permissions kept, symlinks kept, and no write over a changed file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from portico.config.atomic import ConflictError, read_bytes, write_atomic
from portico.config.document import ConfigDocument

TOML = '# mine\n[mcp.a]\ncommand = ["a"]  # keep me\n'


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_write_keeps_the_original_permissions(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    os.chmod(path, 0o600)
    _, snap = read_bytes(path)
    write_atomic(path, TOML + "# more\n", expected=snap)
    assert _mode(path) == 0o600
    assert path.read_text().endswith("# more\n")
    os.chmod(path, 0o640)
    doc = ConfigDocument.load(path)
    doc.set_enabled("a", False)
    doc.save()
    assert _mode(path) == 0o640
    assert "enabled = false" in path.read_text()
    assert _leftovers(tmp_path) == []


def test_new_file_gets_the_umask_mode_and_parent_dirs(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "mcp.toml"
    old = os.umask(0o027)
    try:
        write_atomic(path, "x = 1\n")
    finally:
        os.umask(old)
    assert path.read_text() == "x = 1\n"
    assert _mode(path) == 0o640


def test_refuses_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    doc = ConfigDocument.load(path)
    doc.set("a", "timeout", 5000)
    path.write_text(TOML + "# someone else\n")
    with pytest.raises(ConflictError) as caught:
        doc.save()
    message = str(caught.value)
    assert str(path) in message
    assert "changed on disk" in message
    assert "Reload" in message and "retry" in message
    assert caught.value.path == path
    # the other writer's content is intact, and no temp file is left behind
    assert path.read_text() == TOML + "# someone else\n"
    assert _leftovers(tmp_path) == []
    # reloading picks up their change and the edit can be applied again
    fresh = doc.reload()
    fresh.set("a", "timeout", 5000)
    fresh.save()
    text = path.read_text()
    assert "# someone else" in text and "timeout = 5000" in text


def test_refuses_when_the_file_was_deleted_or_created_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    doc = ConfigDocument.load(path)
    doc.set_enabled("a", False)
    path.unlink()
    with pytest.raises(ConflictError, match="deleted"):
        doc.save()
    assert not path.exists()

    new = ConfigDocument.new(tmp_path / "config.yaml")
    new.add_server("b", {"url": "https://example.com/mcp"})
    (tmp_path / "config.yaml").write_text("mcp_servers: {}\n")
    with pytest.raises(ConflictError, match="created"):
        new.save()
    assert (tmp_path / "config.yaml").read_text() == "mcp_servers: {}\n"


def test_same_bytes_rewritten_is_not_a_conflict(tmp_path: Path) -> None:
    """Only content counts: an editor that saves identical bytes changes nothing."""
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    doc = ConfigDocument.load(path)
    path.write_text(TOML)  # new mtime, same bytes
    doc.set_enabled("a", False)
    doc.save()
    assert "enabled = false" in path.read_text()


def test_successive_saves_of_one_document(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    doc = ConfigDocument.load(path)
    doc.set("a", "timeout", 1000)
    doc.save()
    doc.set("a", "timeout", 2000)
    doc.save()  # the snapshot moved on with the first save
    assert "timeout = 2000" in path.read_text()
    assert not doc.changed


def test_writes_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.toml"
    real.parent.mkdir()
    real.write_text(TOML)
    link = tmp_path / "mcp.toml"
    link.symlink_to(real)
    doc = ConfigDocument.load(link)
    doc.set_enabled("a", False)
    doc.save()
    assert link.is_symlink()
    assert "enabled = false" in real.read_text()
    assert _leftovers(real.parent) == []


def test_a_failed_write_leaves_the_original_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    _, snap = read_bytes(path)
    with pytest.raises(TypeError):
        write_atomic(path, 12345, expected=snap)  # type: ignore[arg-type]
    assert path.read_text() == TOML
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["mcp.toml", "config.yaml"])
def test_crlf_line_endings_and_bom_are_kept(tmp_path: Path, name: str) -> None:
    if name.endswith(".toml"):
        lines = ["# windows file", "[mcp.a]", 'url = "https://a"  # first', ""]
    else:
        lines = ["# windows file", "mcp_servers:", "  a:", "    url: https://a  # first", ""]
    original = "\ufeff" + "\r\n".join(lines)
    path = tmp_path / name
    path.write_bytes(original.encode())
    doc = ConfigDocument.load(path)
    assert not doc.changed
    doc.set_enabled("a", False)
    doc.add_server("b", {"url": "https://b"})
    doc.save()
    data = path.read_bytes().decode()
    assert data.startswith("\ufeff# windows file\r\n")
    assert data.count("\n") == data.count("\r\n")
    assert data.startswith(original[:-2])
    assert ConfigDocument.load(path).server_names() == ["a", "b"]
