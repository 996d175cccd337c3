"""The browser hand-off: show the authorize URL, open a browser, take the redirect.

The loopback listener and a pasted redirect race; the first usable one wins and the
other is cancelled. ``state`` is always checked; ``iss`` is passed through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import threading
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlparse, urlunparse

from portico.auth.loopback import LoopbackListener, RedirectPlan
from portico.auth.pasteback import (
    PasteError,
    ProviderRefused,
    Redirect,
    check_paste,
    parse_redirect,
)
from portico.prompts import AuthorizeRequest, Prompter, Refused

log = logging.getLogger(__name__)

GRACE_SECONDS = 15.0
OPENER_WAIT = 10.0  # seconds an opener such as xdg-open has to hand the link over


class LoginCancelled(Exception):
    """The person closed the sign-in."""


class LoginDenied(Exception):
    """The authorization server answered this login with an error (the person declined
    at the provider, or it refused); the message is one line saying which."""


class LoginTimeout(TimeoutError):
    pass


def login_wait(oauth_timeout: float, connect_timeout: float) -> float:
    """How long a login (or re-auth) waits: oauth.timeout + 15 s or connect_timeout."""
    return max(oauth_timeout + GRACE_SECONDS, connect_timeout)


def timeout_message(server: str, seconds: float) -> str:
    return (
        f"Connecting to MCP server '{server}' timed out after {seconds:g}s while waiting for "
        "the sign-in. Finish signing in sooner, or raise oauth.timeout (the time you have to "
        "sign in) or connect_timeout on the server."
    )


def state_of(authorize_url: str) -> str | None:
    values = parse_qs(urlparse(authorize_url).query).get("state")
    return values[0] if values else None


def replace_param(url: str, name: str, value: str) -> str:
    parts = urlparse(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != name]
    query.append((name, value))
    return urlunparse(parts._replace(query=urlencode(query)))


def browser_available() -> bool:
    """True when Python's webbrowser module has something to open (BROWSER honoured)."""
    if os.environ.get("BROWSER"):
        return True
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def _open_with(browser: webbrowser.BaseBrowser, url: str) -> bool:
    if not isinstance(browser, webbrowser.BackgroundBrowser):
        # the others report honestly: a command run to its end, or a remote call's status
        return bool(browser.open(url, 2))
    # A background opener (xdg-open, gio open, open) is only started by webbrowser, which
    # then says True before it fails; it hands off and exits, so its exit status is the answer.
    cmdline = [browser.name, *(arg.replace("%s", url) for arg in browser.args)]
    try:
        process = subprocess.Popen(
            cmdline,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
        )
    except OSError:
        return False
    try:
        return process.wait(OPENER_WAIT) == 0
    except subprocess.TimeoutExpired:
        # Still running: it became the browser rather than handing off. A thread waits for
        # it, so it is reaped when it ends (no zombie, no "still running" at collection).
        threading.Thread(target=process.wait, name="browser-reaper", daemon=True).start()
        return True


def _open_if_available(url: str) -> bool:
    """Open url the way webbrowser.open does (BROWSER first, then the system's openers),
    but say True only when one of them reported success."""
    # the first webbrowser.get() runs xdg-settings and many shutil.which: never on the loop
    if not browser_available():
        return False
    try:
        webbrowser.get()  # registers the standard browsers once
    except webbrowser.Error:
        return False
    for name in list(getattr(webbrowser, "_tryorder", None) or []):
        try:
            browser = webbrowser.get(name)
        except webbrowser.Error:
            continue
        if _open_with(browser, url):
            return True
        log.info("the browser opener %s did not open the sign-in page", name)
    return False


async def open_browser(url: str) -> bool:
    try:
        return await asyncio.to_thread(_open_if_available, url)
    except Exception:
        log.info("could not open a browser", exc_info=True)
        return False


async def browser_handoff(
    *,
    server: str,
    authorize_url: str,
    plan: RedirectPlan,
    port: int,
    prompter: Prompter,
    wait_seconds: float,
    use_browser: bool = True,
    reauth: bool = False,
    on_redirect_uri: Callable[[str], None] | None = None,
) -> Redirect:
    """Run one hand-off; return the redirect or raise LoginCancelled / LoginTimeout."""
    state = state_of(authorize_url) or ""
    listener = LoopbackListener(plan, port, server, state)
    await listener.start()
    if listener.port != port:
        # The listener had to move: tell the server the URI it really listens on.
        authorize_url = replace_param(authorize_url, "redirect_uri", listener.redirect_uri)
        if on_redirect_uri is not None:
            on_redirect_uri(listener.redirect_uri)
    prompt_task: asyncio.Task[str | None] | None = None
    try:
        opened = await open_browser(authorize_url) if use_browser else False
        request = AuthorizeRequest(
            server=server,
            authorize_url=authorize_url,
            redirect_uri=listener.redirect_uri,
            timeout=wait_seconds,
            browser_opened=opened,
            check_paste=lambda text: check_paste(text, state),
            reauth=reauth,
        )
        prompt_task = asyncio.ensure_future(prompter.authorize(request))
        try:
            async with asyncio.timeout(wait_seconds):
                while True:
                    waiting: set[asyncio.Future[Any]] = {listener.result, prompt_task}
                    done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                    if listener.result in done:
                        return _redirect_of(listener.result)
                    try:
                        pasted = prompt_task.result()
                    except Refused:
                        if not opened:
                            raise
                        # Nobody can paste, but the browser was opened: the listener may
                        # still get the redirect.
                        with contextlib.suppress(ProviderRefused):
                            await listener.result
                        return _redirect_of(listener.result)
                    if pasted is None:
                        raise LoginCancelled(f"Sign-in to '{server}' was cancelled.")
                    try:
                        return parse_redirect(pasted, state)
                    except ProviderRefused as exc:
                        raise LoginDenied(str(exc)) from None
                    except PasteError as exc:
                        # A face should have checked it with check_paste; ask again.
                        log.warning("server '%s': the pasted redirect is unusable: %s", server, exc)
                        prompt_task = asyncio.ensure_future(prompter.authorize(request))
        except TimeoutError as exc:
            raise LoginTimeout(timeout_message(server, wait_seconds)) from exc
    finally:
        if prompt_task is not None and not prompt_task.done():
            prompt_task.cancel()
            with contextlib.suppress(BaseException):
                await prompt_task
        await listener.close()


def _redirect_of(result: asyncio.Future[Redirect]) -> Redirect:
    try:
        return result.result()
    except ProviderRefused as exc:
        raise LoginDenied(str(exc)) from None
