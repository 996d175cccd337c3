"""One app per user (and per PORTICO_HOME): a second launch asks the first to show itself."""

from __future__ import annotations

import getpass
import hashlib

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from portico.paths import paths

_RAISE = b"raise\n"


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

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server: QLocalServer | None = None

    def acquire(self, timeout_ms: int = 1000) -> bool:
        """True: we are the first instance and now listen. False: another one was told to
        raise its window (this process should exit 0)."""
        if self._ask_existing(timeout_ms):
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

    def _ask_existing(self, timeout_ms: int) -> bool:
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write(_RAISE)
        socket.waitForBytesWritten(timeout_ms)
        socket.disconnectFromServer()
        return True

    def _on_connection(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        data = bytes(socket.readAll().data())
        if _RAISE.strip() in data:
            self.raiseRequested.emit()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
