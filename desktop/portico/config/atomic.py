"""Atomic writes of config files, refusing to overwrite a file that changed on disk.

A write goes to a temp file in the same directory (so the rename cannot cross file
systems), is fsynced, takes the original file's permission bits, replaces the original by
``os.replace`` and then fsyncs the directory, so a crash leaves either the old or the new
file, never half of one. A file this user may not write is refused (``ReadOnlyError``):
the rename would replace it regardless of its mode. Before replacing, the current bytes
on disk are compared with what was read (``Snapshot``); if someone else wrote the file
since, ``ConflictError``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODE = 0o644  # new files: what a text editor would create (umask permitting)


class ConflictError(Exception):
    """The file changed on disk since it was read: reload it and apply the edit again."""

    def __init__(self, path: Path, detail: str = "") -> None:
        self.path = path
        why = f" ({detail})" if detail else ""
        super().__init__(
            f"{path}: the file changed on disk since it was read{why}; nothing was written. "
            "Reload it and retry the edit."
        )


class ReadOnlyError(PermissionError):
    """The file exists but this user may not write it: it is left as it is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"{path}: read-only file; nothing was written (make it writable, e.g. "
            "chmod u+w, to edit it)"
        )

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Snapshot:
    """What a file held when it was read. ``exists=False`` means there was no file."""

    path: Path
    exists: bool
    sha256: str = ""
    mtime_ns: int = 0
    size: int = 0

    @staticmethod
    def missing(path: Path) -> Snapshot:
        return Snapshot(path=path, exists=False)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _target(path: Path) -> Path:
    """Write through a symlink to the file it points at, so the link survives."""
    return Path(os.path.realpath(path))


def read_bytes(path: Path) -> tuple[bytes | None, Snapshot]:
    """The file's bytes (``None`` if there is no file) and a snapshot to check saves against."""
    target = _target(path)
    try:
        with open(target, "rb") as handle:
            data = handle.read()
            info = os.fstat(handle.fileno())
    except FileNotFoundError:
        return None, Snapshot.missing(path)
    snap = Snapshot(
        path=path, exists=True, sha256=_digest(data), mtime_ns=info.st_mtime_ns, size=len(data)
    )
    return data, snap


def current_snapshot(path: Path) -> Snapshot:
    return read_bytes(path)[1]


def check_unchanged(snapshot: Snapshot) -> None:
    """Raise ``ConflictError`` if the file is not what ``snapshot`` recorded."""
    now = current_snapshot(snapshot.path)
    if not snapshot.exists:
        if now.exists:
            raise ConflictError(snapshot.path, "it was created by someone else")
        return
    if not now.exists:
        raise ConflictError(snapshot.path, "it was deleted")
    if now.sha256 != snapshot.sha256:
        raise ConflictError(snapshot.path, "its content is different")


def write_atomic(
    path: Path, data: bytes | str, *, expected: Snapshot | None = None, mode: int | None = None
) -> Snapshot:
    """Replace ``path`` with ``data`` atomically and return the snapshot of what was written.

    ``expected``: the snapshot taken when the file was read; the write is refused with
    ``ConflictError`` if the file changed since. ``mode``: permission bits for a new file
    (an existing file keeps its own).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target = _target(path)
    if expected is not None:
        check_unchanged(expected)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        keep_mode = None
    # the rename below would replace a file this user may not write: refuse instead
    if keep_mode is not None and not os.access(target, os.W_OK):
        raise ReadOnlyError(path)
    # os.open applies the umask to a new file's mode, as any editor's write would.
    create_mode = DEFAULT_MODE if mode is None else mode
    tmp, fd = _create_temp(target, create_mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        if expected is not None:
            # Last look right before the rename: keeps the window for a lost update tiny.
            check_unchanged(expected)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)
    info = os.stat(target)
    return Snapshot(
        path=path,
        exists=True,
        sha256=_digest(payload),
        mtime_ns=info.st_mtime_ns,
        size=len(payload),
    )


def _create_temp(target: Path, mode: int) -> tuple[Path, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, mode)
        except FileExistsError:
            continue
    raise FileExistsError(
        f"{target.parent}: could not create a temporary file next to {target.name}"
    )


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
