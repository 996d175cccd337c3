"""The in-sandbox end of the network proxy: 127.0.0.1:port -> the proxy's Unix socket.

Inside `bwrap --unshare-net` there is only loopback, and the proxy's Unix socket is the
one way out. This runs first inside the sandbox: it listens on 127.0.0.1:port, relays each
connection to the socket, runs the server's command as its child with stdio passed
through, forwards the signals it gets, and exits with the command's status.

    python -I -S bridge.py --socket PATH --port N -- CMD ARGS...
    python -m portico.runtime.sandbox.bridge --socket PATH --port N -- CMD ARGS...

It imports only the standard library and never the rest of Portico, so it can run as a
file (`BRIDGE_SCRIPT`, bound into the sandbox on its own) with `-I -S` for a fast start.
"""

from __future__ import annotations

# The C modules under socket, signal and threading: the public ones build enums and pull
# in selectors and collections, which doubles the bridge's start-up CPU (about 19 ms more
# than a bare interpreter; docs/platform-notes.md) before the server's command can start.
import _signal  # type: ignore[import-not-found]  # typeshed has no stub for it
import _socket
import _thread
import os
import sys

BRIDGE_SCRIPT = os.path.abspath(__file__)
FORWARDED_SIGNALS = (
    _signal.SIGTERM,
    _signal.SIGINT,
    _signal.SIGHUP,
    _signal.SIGQUIT,
    _signal.SIGUSR1,
    _signal.SIGUSR2,
)
CHUNK = 64 * 1024
NO_PROXY = "localhost,127.0.0.1,::1"


def bridge_prefix(python: str, socket_in_sandbox: str, port: int) -> list[str]:
    """The argv that runs the bridge; append the server's command to it."""
    return [
        python,
        "-I",
        "-S",
        BRIDGE_SCRIPT,
        "--socket",
        socket_in_sandbox,
        "--port",
        str(port),
        "--",
    ]


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a server's HTTP(S) through the bridge.

    Both spellings, since tools disagree on which they read; `NODE_USE_ENV_PROXY` makes
    Node's own fetch and http honour them (Node 22.21 / 24.5 and later).
    """
    url = f"http://127.0.0.1:{port}"
    env = {}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = url
        env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = NO_PROXY
    env["NODE_USE_ENV_PROXY"] = "1"
    return env


def _relay(source: _socket.socket, target: _socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            target.sendall(data)
    except OSError:
        pass
    try:  # noqa: SIM105 (contextlib is one of the imports kept out)
        target.shutdown(_socket.SHUT_WR)
    except OSError:
        pass


def _relay_back(source: _socket.socket, target: _socket.socket, done: _thread.LockType) -> None:
    try:
        _relay(source, target)
    finally:
        done.release()


def _connect(client: _socket.socket, socket_path: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError as exc:
        print(f"portico bridge: cannot reach the proxy at {socket_path}: {exc}", file=sys.stderr)
        client.close()
        upstream.close()
        return
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(_relay_back, (upstream, client, done))
    _relay(client, upstream)
    done.acquire()  # the other direction has finished too
    client.close()
    upstream.close()


def _accept(listener: _socket.socket, socket_path: str) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]  # not in typeshed's stub
        except OSError:
            return
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, fd)
        _thread.start_new_thread(_connect, (client, socket_path))


def _usage(message: str) -> int:
    print(f"portico bridge: {message}", file=sys.stderr)
    print("usage: bridge --socket PATH --port N -- CMD [ARGS...]", file=sys.stderr)
    return 2


def _parse(argv: list[str]) -> tuple[str, int, list[str]] | str:
    if "--" not in argv:
        return "no '--' before the command"
    cut = argv.index("--")
    options, command = argv[:cut], argv[cut + 1 :]
    socket_path, port = None, None
    while options:
        name = options.pop(0)
        if not options:
            return f"{name} needs a value"
        value = options.pop(0)
        if name == "--socket":
            socket_path = value
        elif name == "--port" and value.isdigit() and 0 < int(value) < 65536:
            port = int(value)
        else:
            return f"unknown option or bad value: {name} {value}"
    if socket_path is None or port is None:
        return "--socket and --port are required"
    if not command:
        return "no command after '--'"
    return socket_path, port, command


def main(argv: list[str]) -> int:
    parsed = _parse(argv)
    if isinstance(parsed, str):
        return _usage(parsed)
    socket_path, port, command = parsed
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as exc:
        print(f"portico bridge: cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
        return 126
    listener.listen(64)
    # Listening before the command starts: its first request finds the port open.
    _thread.start_new_thread(_accept, (listener, socket_path))
    child = 0

    def forward(signum: int, _frame: object) -> None:
        if child:
            try:  # noqa: SIM105 (contextlib is one of the imports kept out)
                os.kill(child, signum)
            except ProcessLookupError:
                pass

    for signum in FORWARDED_SIGNALS:
        _signal.signal(signum, forward)
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the command gets them back as the default.
        child = os.posix_spawnp(
            command[0], command, os.environ, setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ)
        )
    except OSError as exc:
        print(f"portico bridge: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        # Die of the same signal, so whoever waits on the sandbox sees what happened.
        died_of = os.WTERMSIG(status)
        if died_of != _signal.SIGKILL:  # the one fatal signal with no handler to reset
            _signal.signal(died_of, _signal.SIG_DFL)
        sys.stdout.flush()
        os.kill(os.getpid(), died_of)
        return 128 + died_of
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
