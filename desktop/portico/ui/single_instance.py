"""One app per user (and per PORTICO_HOME): a second launch asks the first to show itself,
or hands it a ``portico://`` link to open (one line each: ``raise`` / ``open URL``)."""

from __future__ import annotations

import getpass
import hashlib

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from portico.paths import paths

_RAISE = b"raise\n"
_OPEN = b"open "
MAX_MESSAGE = 64 * 1024  # far above a link's cap; past it the link is cut (and then refused)


def server_name() -> str:
    home = str(paths().config_dir)
    digest = hashlib.sha256(home.encode()).hexdigest()[:12]
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment: the digest still separates homes
        user = "user"
    return f"portico-{user}-{digest}"


class SingleInstance(QObject):
    raiseRequested = Signal()
    urlReceived = Signal(str)  # a link another launch passed on (unvalidated)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server: QLocalServer | None = None

    def acquire(self, timeout_ms: int = 1000, *, url: str | None = None) -> bool:
        """True: we are the first instance and now listen. False: another one was told to
        raise its window, or to open ``url`` (this process should exit 0)."""
        if self._ask_existing(timeout_ms, _message(url)):
            return False
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # A crashed instance left its socket behind: nobody answered, so remove it.
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                raise RuntimeError(
                    f"cannot open the single-instance socket {self.name!r}: {server.errorString()}"
                )
        server.newConnection.connect(self._on_connection)
        self._server = server
        return True

    def _ask_existing(self, timeout_ms: int, message: bytes = _RAISE) -> bool:
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(message)
        socket.waitForBytesWritten(timeout_ms)
        socket.disconnectFromServer()
        return True

    def _on_connection(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            buffer = bytearray()
            socket.readyRead.connect(lambda s=socket, b=buffer: self._read(s, b))
            socket.disconnected.connect(lambda s=socket, b=buffer: self._finish(s, b))
            if socket.bytesAvailable():
                self._read(socket, buffer)

    def _read(self, socket: QLocalSocket, buffer: bytearray) -> None:
        buffer += bytes(socket.readAll().data())
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            self._handle(line)
        if len(buffer) > MAX_MESSAGE:
            self._handle(bytes(buffer[: MAX_MESSAGE + 1]))
            buffer.clear()
            socket.abort()

    def _finish(self, socket: QLocalSocket, buffer: bytearray) -> None:
        if buffer:
            self._handle(bytes(buffer))
            buffer.clear()
        socket.deleteLater()

    def _handle(self, line: bytes) -> None:
        if line.strip() == _RAISE.strip():
            self.raiseRequested.emit()
        elif line.startswith(_OPEN):
            self.urlReceived.emit(line[len(_OPEN) :].decode("utf-8", "replace"))

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


def _message(url: str | None) -> bytes:
    if url is None:
        return _RAISE
    one_line = url.replace("\r", "%0D").replace("\n", "%0A")
    return _OPEN + one_line.encode("utf-8") + b"\n"
