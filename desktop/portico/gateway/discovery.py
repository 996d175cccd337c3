"""The discovery file: where a running endpoint is, for the CLI of the same user.

``<state dir>/endpoint.json`` (mode 0600) holds the URL, the Unix socket (if any), the
process id and the CLI's token of the endpoint that wrote it. Standard library only: the
CLI reads it before it decides whether to import anything heavy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from portico.paths import paths, project_toml, project_yaml

FILE_NAME = "endpoint.json"
CLI_PREFIX = "/portico/cli"  # the routes only the CLI's token may use (cli_routes.py)
CLI_CLIENT = "portico-cli"  # the client name of that token
SOCKET_NAME = "endpoint.sock"
MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes depending on the platform


def config_stamp(project: Path | None) -> str:
    """What the config files of ``project`` (and the global ones) are right now: the
    paths, sizes and modification times of those that exist, hashed. The endpoint keeps
    the stamp of what it loaded; a command whose stamp differs (another project, an edit
    not loaded yet) goes direct."""
    p = paths()
    files = [p.global_toml, p.global_yaml]
    if project is not None:
        files += [project_toml(project), project_yaml(project)]
    parts: list[str] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue  # absent: a project without files reads as no project at all
        parts.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def discovery_file() -> Path:
    return paths().state_dir / FILE_NAME


def socket_path() -> Path | None:
    """Where the endpoint's Unix socket goes, or None where there is none (Windows, or a
    state dir too deep for a socket path)."""
    if os.name != "posix":
        return None
    path = paths().state_dir / SOCKET_NAME
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


@dataclass(frozen=True)
class Discovery:
    url: str
    token: str
    pid: int
    socket: str | None = None

    def alive(self) -> bool:
        """The process that wrote it still runs (it may still have stopped serving)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # it exists, as another user: not ours to use, but alive
        return True


def write(found: Discovery, path: Path | None = None) -> Path:
    path = path or discovery_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(found), handle)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read(path: Path | None = None) -> Discovery | None:
    """The file's endpoint, or None when there is none or the file is not one of ours."""
    path = path or discovery_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = Discovery(
            url=str(data["url"]),
            token=str(data["token"]),
            pid=int(data["pid"]),
            socket=str(data["socket"]) if data.get("socket") else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return found


def remove_if_ours(path: Path | None = None) -> None:
    """Delete the file if this process wrote it (another endpoint may have replaced it)."""
    path = path or discovery_file()
    found = read(path)
    if found is not None and found.pid == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()
