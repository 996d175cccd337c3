"""Imported first by the SDK test servers: when the test session runs a fork server
(tests/helpers/forkserver.py, started by tests/conftest.py), the script's run is handed
to a child forked from it, which has the MCP SDK imported already (0.4-0.5 s of CPU per
start saved; the suite starts these servers a few hundred times). This process then only
passes signals on and ends as the child ends. The server is still its own process on the
same pipes with the same arguments, environment and folder, under the same checks.

Only a server on pipes (stdin and stdout: a stdio server, started by Portico) is handed
off. A server a test starts itself on a port (its stdout not a pipe) runs here: a test
that kills it expects its port closed at once, and a forked child notices its client's
death a moment later. No fork server (a person running the script, another platform),
or a refusal (this process is sandboxed, or its ``PYTHON*`` variables differ): the
script runs here, as always. In the forked child this module is replaced by an empty
one: the child is warm. The socket's path is in ``.forkserver`` beside this file (git
ignores it): a server started by Portico gets only a few environment variables, so the
path cannot travel in one."""

import os
import stat
import sys
from pathlib import Path

MARKER = Path(__file__).with_name(".forkserver")


def _run_as_a_script() -> bool:
    """Imported by a script of this folder that runs as ``__main__`` (a test importing a
    server's module, e.g. for a helper, is not handed anywhere)."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return main is not None and Path(main).resolve().parent == Path(__file__).resolve().parent


def _on_pipes() -> bool:
    try:
        return all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (0, 1))
    except OSError:
        return False


def _hand_off() -> None:
    try:
        path = MARKER.read_text(encoding="utf-8").strip()
    except OSError:
        return
    if not path or not os.path.exists(path):
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))
    try:
        from forkclient import hand_off
    except ImportError:
        return  # out of reach (a sandbox that cannot read tests/helpers)
    finally:
        del sys.path[0]
    code = hand_off(path, list(sys.argv))
    if code is not None:
        sys.stdout.flush()
        os._exit(code)


if sys.platform == "linux" and _run_as_a_script() and _on_pipes():
    _hand_off()
