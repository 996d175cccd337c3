"""Real OAuth peers for tests: oidc-provider (Node 22) and a protected MCP server.

``oidc`` starts one authorization server per module (a sync fixture: no event loop is
shared across tests). ``protected`` runs the protected MCP server in the test's loop on
the port the authorization server was told about. ``ScriptedBrowser`` plays the person:
it follows the authorize URL, signs in and consents on oidc-provider's real forms.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from portico.auth.manager import AuthManager
from portico.config.model import Dialect, OAuthSpec, Scope, ServerSpec, Source, Transport
from portico.prompts import (
    ApprovalAnswer,
    AuthorizeRequest,
    DeviceCodeRequest,
    Notice,
)
from tests.helpers.warm import python_command

REPO = Path(__file__).resolve().parents[2]
NODE = REPO / "tests" / "peers" / "node_modules" / ".bin" / "node"
LAUNCHER = REPO / "tests" / "servers" / "oidc" / "launcher.mjs"
sys.path.insert(0, str(REPO / "tests" / "servers"))

from protected import ProtectedApp, ProtectedState  # noqa: E402

# --- ports and the authorization server -----------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Clock:
    """Wall-clock seconds that a test can move forward."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Oidc:
    issuer: str
    resource: str
    port: int  # the protected server's port
    process: subprocess.Popen[str]


def start_oidc(resources: list[str], **settings: object) -> tuple[str, subprocess.Popen[str]]:
    env = {
        "PATH": str(NODE.parent),
        "OIDC_SETTINGS": json.dumps({"resources": resources, **settings}),
    }
    process = subprocess.Popen(
        [str(NODE), str(LAUNCHER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("READY "):
        stop(process)
        raise RuntimeError(f"oidc-provider did not start: {line!r}")
    return line.split()[1], process


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


def make_oidc(**settings: object) -> Iterator[Oidc]:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    issuer, process = start_oidc([resource], **settings)
    yield Oidc(issuer, resource, port, process)
    stop(process)


@pytest.fixture(scope="module")
def oidc() -> Iterator[Oidc]:
    yield from make_oidc()


@pytest.fixture
async def protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    async with serve_protected(oidc) as state:
        yield state


@contextlib.asynccontextmanager
async def serve_protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    state = ProtectedState(
        resource=oidc.resource, authorization_server=oidc.issuer, trusted_issuers={oidc.issuer}
    )
    config = uvicorn.Config(
        ProtectedApp(state), host="127.0.0.1", port=oidc.port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(200):
        if server.started:
            break
        await asyncio.sleep(0.02)
    try:
        yield state
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


def server_spec(name: str, url: str, **oauth: object) -> ServerSpec:
    return ServerSpec(
        name=name,
        source=Source(Path("/cfg/config.yaml"), 3, Scope.GLOBAL, Dialect.YAML),
        transport=Transport.HTTP,
        url=url,
        oauth=OAuthSpec(**oauth),  # type: ignore[arg-type]
        connect_timeout=20.0,
    )


# --- the scripted person ---------------------------------------------------------------------


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, object]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = dict(attrs)
        if tag == "form":
            self.forms.append({"action": data.get("action") or "", "fields": {}, "buttons": {}})
        elif tag == "button" and self.forms and data.get("name"):
            buttons = self.forms[-1]["buttons"]
            assert isinstance(buttons, dict)
            buttons[data["name"]] = data.get("value") or ""
        elif tag == "input" and self.forms and data.get("name"):
            fields = self.forms[-1]["fields"]
            assert isinstance(fields, dict)
            fields[data["name"]] = data.get("value") or ""


class ScriptedBrowser:
    """Follows an authorize URL through oidc-provider's login and consent forms."""

    def __init__(self, login: str = "alice", *, deny: bool = False) -> None:
        self.login = login
        self.deny = deny  # press the provider's Cancel (access_denied) instead of Continue
        self.user_code: str | None = None

    async def run(self, url: str, stop_at: str | None, follow_final: bool) -> str:
        """Return the URL the browser ends on (the redirect back to the client)."""
        async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as client:
            for _ in range(30):
                if not url:
                    return url
                if stop_at and url.startswith(stop_at):
                    if follow_final:
                        await client.get(url)
                    return url
                response = await client.get(url)
                if response.is_redirect:
                    url = urljoin(url, response.headers["location"])
                    continue
                if stop_at is None and "<form" not in response.text:
                    return url  # a page without a form: the end (device flow)
                url = await self._submit(client, url, response)
            raise AssertionError("the sign-in did not finish")

    async def _submit(self, client: httpx2.AsyncClient, url: str, page: httpx2.Response) -> str:
        if self.deny:
            cancel = re.search(r'href="([^"]*/interaction/[^"]*/abort)"', page.text)
            if cancel is None:
                raise AssertionError(f"no Cancel link at {url}: {page.text[:300]}")
            return urljoin(url, cancel.group(1))
        parser = _Forms()
        parser.feed(page.text)
        if not parser.forms:
            raise AssertionError(f"no form at {url}: {page.status_code} {page.text[:300]}")
        form = parser.forms[0]
        fields = dict(form["fields"])  # type: ignore[arg-type]
        if "login" in fields or "password" in fields:
            fields.update(login=self.login, password="any")
        if "user_code" in fields and not fields["user_code"]:
            if self.user_code is None:
                raise AssertionError("a user code is needed")
            fields["user_code"] = self.user_code
        buttons = form["buttons"]
        assert isinstance(buttons, dict)
        if "confirm" in buttons:  # press "Continue", never "Abort"
            fields["confirm"] = buttons["confirm"] or "yes"
        action = urljoin(url, str(form["action"]))
        response = await client.post(action, data=fields)
        if response.is_redirect:
            return urljoin(action, response.headers["location"])
        if response.status_code == 200:
            parser2 = _Forms()
            parser2.feed(response.text)
            if parser2.forms:
                return await self._submit(client, action, response)
            self.final_text = response.text
            return ""
        raise AssertionError(f"form post failed: {response.status_code} {response.text[:300]}")


@dataclass
class ScriptedPrompter:
    """A Prompter whose person signs in with the scripted browser.

    ``mode``: "browser" (the redirect reaches the loopback listener), "paste" (the final
    URL is pasted back, shaped by ``paste_shape``), "cancel", or "wait" (never answers).
    """

    mode: str = "browser"
    paste_shape: str = "url"  # url | query | bare
    tamper_state: int = 0  # how many pastes get a forged state first
    requests: list[AuthorizeRequest] = field(default_factory=list)
    device_requests: list[DeviceCodeRequest] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    paste_checks: list[str | None] = field(default_factory=list)
    browser: ScriptedBrowser = field(default_factory=ScriptedBrowser)

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        self.requests.append(request)
        if self.mode == "cancel":
            return None
        if self.mode == "wait":
            await asyncio.Event().wait()
        if self.mode == "browser":
            await self.browser.run(request.authorize_url, request.redirect_uri, follow_final=True)
            await asyncio.Event().wait()  # cancelled once the listener has the redirect
        final = await self.browser.run(request.authorize_url, request.redirect_uri, False)
        query = urlparse(final).query
        if self.tamper_state:
            self.tamper_state -= 1
            query = re.sub(r"state=[^&]*", "state=forged", query)
            final = final.split("?")[0] + "?" + query
        text = {"url": final, "query": "?" + query, "bare": query}[self.paste_shape]
        self.paste_checks.append(request.check_paste(text))
        return text

    async def device_code(self, request: DeviceCodeRequest) -> None:
        self.device_requests.append(request)
        url = request.verification_uri_complete or request.verification_uri
        self.browser.user_code = request.user_code
        await self.browser.run(url, stop_at=None, follow_final=False)
        await asyncio.Event().wait()  # cancelled once the token arrived

    async def notify(self, notice: Notice) -> None:
        self.notices.append(notice)

    async def review_trust(self, request: object) -> object:
        raise NotImplementedError

    async def approve_tool(self, request: object) -> ApprovalAnswer:
        raise NotImplementedError

    async def approve_spend(self, request: object) -> object:
        raise NotImplementedError

    async def elicit(self, request: object) -> object:
        raise NotImplementedError

    async def review_sampling(self, request: object) -> object:
        raise NotImplementedError

    async def run_unsandboxed(self, request: object) -> bool:
        # Its servers are HTTP ones, never sandboxed: a question here is a test's mistake.
        raise NotImplementedError(f"the sign-in prompter was asked to run unsandboxed: {request}")


async def call_echo(manager: AuthManager, spec, *, interactive: bool = False) -> str:
    auth = await manager.auth_for(spec, interactive=interactive)
    assert auth is not None
    async with httpx2.AsyncClient(auth=auth, timeout=20) as http:
        transport = streamable_http_client(spec.url, http_client=http)
        async with Client(transport, mode="legacy") as client:
            result = await client.call_tool("echo", {"text": "hi"})
    return result.content[0].text  # type: ignore[union-attr]


def has_needs_auth(exc: BaseException) -> bool:
    if type(exc).__name__ == "NeedsAuth" or "NeedsAuth" in type(exc).__name__:
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(has_needs_auth(e) for e in exc.exceptions)
    for inner in (exc.__cause__, exc.__context__):
        if inner is not None and inner is not exc and has_needs_auth(inner):
            return True
    return False


async def revoke_refresh_token(oidc: Oidc, manager: AuthManager, spec: object) -> None:
    storage = manager.storage_for(spec)  # type: ignore[arg-type]
    tokens = await storage.raw_tokens()
    client = await storage.get_client_info()
    assert tokens is not None and tokens.refresh_token and client is not None
    async with httpx2.AsyncClient() as http:
        revoked = await http.post(
            f"{oidc.issuer}/token/revocation",
            data={"token": tokens.refresh_token, "client_id": client.client_id},
        )
    assert revoked.status_code == 200


class FakeDeviceServer:
    def __init__(
        self,
        answers: list[str],
        expires_in: float = 30,
        device_body: str | None = None,
        token_body: str | None = None,
    ) -> None:
        self.answers = answers  # errors to give before the token ("" = token)
        self.expires_in = expires_in
        self.device_body = device_body  # a raw (malformed) device authorization answer
        self.token_body = token_body  # a raw (malformed) token answer
        self.polls: list[float] = []
        self.forms: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def device(request: Request) -> Response:
            self.forms.append(dict(await request.form()))
            if self.device_body is not None:
                return Response(self.device_body, media_type="application/json")
            return JSONResponse(
                {
                    "device_code": "dc",
                    "user_code": "ABCD-EFGH",
                    "verification_uri": "http://127.0.0.1/device",
                    "expires_in": self.expires_in,
                    "interval": 0.05,
                }
            )

        async def token(request: Request) -> Response:
            self.polls.append(time.monotonic())
            form = dict(await request.form())
            assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code"
            answer = self.answers.pop(0) if self.answers else "authorization_pending"
            if answer:
                return JSONResponse({"error": answer}, status_code=400)
            if self.token_body is not None:
                return Response(self.token_body, media_type="application/json")
            return JSONResponse({"access_token": "at", "token_type": "bearer"})

        return Starlette(
            routes=[
                Route("/device", device, methods=["POST"]),
                Route("/token", token, methods=["POST"]),
            ]
        )


def cli_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PORTICO_HOME"] = str(home)
    # Never the real keyring: the fail backend makes Portico use its 0600 files.
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return env


async def run_portico(
    home: Path, *args: str, stdin: bytes = b"", keyring_backend: str | None = None
) -> tuple[int, str, str]:
    env = cli_env(home)
    if keyring_backend:
        env["PYTHON_KEYRING_BACKEND"] = keyring_backend
    process = await asyncio.create_subprocess_exec(
        *python_command("-m", "portico.cli.main", *args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    return process.returncode or 0, out.decode(), err.decode()


def write_config(home: Path, url: str, *, file_fallback: bool = True) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    fallback = "secrets:\n  file_fallback: true\n" if file_fallback else ""
    (config / "config.yaml").write_text(
        f"{fallback}mcp_servers:\n  guarded:\n    url: {url}\n    auth: oauth\n"
        # The test authorization server is plain http on another loopback port.
        "    oauth:\n      allow_private_endpoints: true\n",
        encoding="utf-8",
    )


async def cli_login(
    home: Path, project: Path, name: str = "guarded", *, deny: bool = False
) -> tuple[int, str, str]:
    """``portico mcp login NAME --no-browser`` in its own process; the scripted browser
    follows the URL it prints to the loopback listener it names."""
    process = await asyncio.create_subprocess_exec(
        *python_command(
            "-m",
            "portico.cli.main",
            "mcp",
            "login",
            name,
            "--no-browser",
            "--project",
            str(project),
        ),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(home),
    )
    assert process.stdout is not None
    url = None
    redirect = None
    while url is None or redirect is None:
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line, "login ended before printing the URL"
        if line.strip().startswith("http") and "code_challenge" in line:
            url = line.strip()
        if "Waiting for the redirect to " in line:
            redirect = line.split("Waiting for the redirect to ")[1].split()[0]
    await ScriptedBrowser(deny=deny).run(url, redirect, follow_final=True)
    out, err = await asyncio.wait_for(process.communicate(), 30)
    return process.returncode or 0, out.decode(), err.decode()


@pytest.fixture
def no_real_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", "true")  # `true URL`: a sign-in never opens a real tab
