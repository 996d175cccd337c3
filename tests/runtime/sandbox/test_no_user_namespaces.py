"""A machine without user namespaces: bwrap cannot set up, so a sandboxed server does not
start until the person agrees (through the Prompter) to run it unsandboxed; a yes is
remembered for that server. Run for real in a child whose user namespace allows no
nested user or mount namespace (``max_user_namespaces`` and ``max_mnt_namespaces`` 0
inside ``unshare -Ur``), where bwrap fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.conftest import REPO

pytestmark = pytest.mark.slow

CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from portico.config.model import Protocol, Scope
from portico.policy.unsandboxed import UnsandboxedConsent
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus
from portico.runtime.hooks import ConnectionHooks
from tests.helpers.specs import spec_for

project, store, secret, prying = map(Path, sys.argv[1:5])


class Person:
    def __init__(self, answer):
        self.answer, self.asked = answer, []

    async def run_unsandboxed(self, request):
        self.asked.append(request.question)
        if self.answer is None:
            raise AssertionError("asked again")
        return self.answer


async def attempt(answer):
    spec = spec_for("prying", scope=Scope.PROJECT, project=project, command=sys.executable,
                    args=[str(prying)], protocol=Protocol.LEGACY, connect_timeout=60.0)
    person = Person(answer)
    hooks = ConnectionHooks(unsandboxed_ok=UnsandboxedConsent(person, store))
    conn = Connection(spec, bus=EventBus(), hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(60)
        read = None
        if state.status.value == "Running":
            result = await conn.call_tool("read", {"path": str(secret)})
            read = result.content[0].text
        return {"status": state.status.value, "error": state.error, "asked": person.asked,
                "read": read}
    finally:
        await conn.stop()


async def main():
    out = [await attempt(False), await attempt(True), await attempt(None)]
    print(json.dumps(out))

asyncio.run(main())
"""


def _without_user_namespaces(command: list[str]) -> list[str]:
    """``command`` where no user namespace can be made (as this machine may already be)."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare to take user namespaces away")
    probe = subprocess.run(["unshare", "-Ur", "true"], capture_output=True)
    if probe.returncode != 0:
        return command  # this machine has none already
    # As root bwrap needs no user namespace of its own, so take mount namespaces too.
    limits = ("max_user_namespaces", "max_mnt_namespaces")
    script = " && ".join(f"echo 0 > /proc/sys/user/{name}" for name in limits) + ' && exec "$@"'
    return ["unshare", "-Ur", "sh", "-c", script, "sh", *command]


def test_no_sandbox_asks_and_remembers_a_yes(tmp_path: Path, project: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the project\n")
    store = tmp_path / "state" / "unsandboxed.json"
    command = [
        sys.executable,
        "-c",
        CHILD,
        str(project),
        str(store),
        str(secret),
        str(REPO / "tests" / "servers" / "prying.py"),
    ]
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'desktop'}{os.pathsep}{REPO}")
    env["PORTICO_SANDBOX_METHODS"] = "bwrap"  # no Landlock fallback: no sandbox at all
    done = subprocess.run(
        _without_user_namespaces(command), capture_output=True, text=True, env=env, timeout=240
    )
    assert done.returncode == 0, done.stderr
    no, yes, remembered = json.loads(done.stdout.splitlines()[-1])
    assert no["status"] == "Failed", no
    assert "not started" in no["error"] and "cannot set up a sandbox" in no["error"], no
    assert len(no["asked"]) == 1 and "Run it unsandboxed" in no["asked"][0]
    assert "user namespaces may be off" in no["asked"][0]
    assert yes["status"] == "Running" and len(yes["asked"]) == 1, yes
    assert yes["read"] == "ok: outside the project"  # unsandboxed: it is not hidden
    assert remembered["status"] == "Running" and remembered["asked"] == [], remembered
