"""Everything QtWebEngine for views; imported only when the first view is shown.

Per server: one off-the-record profile (nothing a view stores survives it or reaches
another server's views) whose request interceptor lets through only the origins that
server's views declared. Per view: a page that refuses every navigation after its own
first load (but a subframe of a declared ``frameDomains`` origin), opens no windows and
passes the permissions its resource declared (camera, microphone, clipboard, location) to
the pane, which asks the person each time (the profile keeps no answer); a permission it
did not declare is refused unasked. The documents a view's frame loads come from the
server's own scheme handler; every other request passes the server's fence.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
from urllib.parse import quote, urlsplit

# WebRTC's ICE traffic (STUN/TURN over UDP) passes neither the CSP nor the request fence:
# the engine may send UDP only through a proxy (there is none), and the page script below
# takes the API away. Read by the engine when it starts, so set before the first profile.
_NO_WEBRTC_UDP = "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"
# One renderer process per site in a profile: a server's views (one profile, one origin)
# share one renderer instead of one each (3 views: 5 engine processes -> 3, their summed
# RSS 407 -> 211 MiB). Views of different servers never share one: a renderer belongs to
# one profile, and each server has its own.
_ONE_RENDERER_PER_SERVER = "--process-per-site"
_FLAGS = [_NO_WEBRTC_UDP, _ONE_RENDERER_PER_SERVER]


def _gpu_unusable() -> bool:
    """No OpenGL context can be made here (offscreen, a machine without GPU drivers):
    the engine would fall back to software anyway, after setting up GPU compositing."""
    from PySide6.QtGui import QGuiApplication, QOpenGLContext

    return QGuiApplication.instance() is not None and not QOpenGLContext().create()


# Where the GPU cannot be used, the engine without it: its compositing set up for
# nothing cost Portico's own process ~58 MiB with three views (PSS +155 -> +97 MiB,
# offscreen, tests/benchmarks/test_bench_chat_views.py). With a GPU it stays on (WebGL).
if _gpu_unusable():
    _FLAGS.append("--disable-gpu")
for _flag in _FLAGS:
    if _flag not in os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", ""):
        os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = (
            os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "") + " " + _flag
        ).strip()

from PySide6.QtCore import (  # noqa: E402
    QBuffer,
    QByteArray,
    QFile,
    QIODevice,
    QObject,
    QUrl,
    Signal,
    Slot,
)
from PySide6.QtWebEngineCore import (  # noqa: E402
    QWebEnginePage,
    QWebEnginePermission,
    QWebEngineProfile,
    QWebEngineScript,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineUrlRequestJob,
    QWebEngineUrlScheme,
    QWebEngineUrlSchemeHandler,
)

from portico.apps.session import permission_declared  # noqa: E402

log = logging.getLogger(__name__)

HOST_SUFFIX = ".portico.invalid"  # the host pages' origins: nothing is ever fetched there
# The views' own documents are served at ``portico-view://v-<server label>/<view id>``:
# a secure origin per server, apart from its host page's. Registered here, after the
# application started and before the first profile (verified on 6.11: the frame's
# origin is then ``portico-view://v-...``, a secure context; unregistered it is opaque
# and insecure, and every permission it asks for is denied before Qt hears of it).
VIEW_SCHEME = b"portico-view"
if not QWebEngineUrlScheme.schemeByName(VIEW_SCHEME).name():
    _scheme = QWebEngineUrlScheme(VIEW_SCHEME)
    _scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    _scheme.setFlags(QWebEngineUrlScheme.Flag.SecureScheme)
    QWebEngineUrlScheme.registerScheme(_scheme)


def server_label(server: str) -> str:
    return hashlib.sha256(server.encode()).hexdigest()[:16]


def host_url(server: str) -> str:
    """The host page's base URL: one origin per server, never fetched."""
    return f"https://view-{server_label(server)}{HOST_SUFFIX}/"


def frame_url(server: str, view_id: str) -> str:
    """Where the view's own document is served: its server's view origin."""
    return f"{VIEW_SCHEME.decode()}://v-{server_label(server)}/{quote(view_id, safe='')}"


class _Documents(QWebEngineUrlSchemeHandler):
    """Serves each shown view's document (GET only) at :func:`frame_url`; nothing else."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.documents: dict[str, bytes] = {}

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        url = job.requestUrl().toString()
        document = self.documents.get(url)
        if document is None or bytes(job.requestMethod().data()) != b"GET":
            job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)
            return
        buffer = QBuffer(job)
        buffer.setData(QByteArray(document))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        job.reply(b"text/html;charset=utf-8", buffer)


_channel_js: str | None = None


def channel_js() -> str:
    """Qt's qwebchannel.js, read once from Qt's resources."""
    global _channel_js
    if _channel_js is None:
        f = QFile(":/qtwebchannel/qwebchannel.js")
        if not f.open(QIODevice.OpenModeFlag.ReadOnly):
            raise RuntimeError("Qt's qwebchannel.js is missing (is QtWebChannel installed?)")
        _channel_js = bytes(f.readAll().data()).decode("utf-8")
        f.close()
    return _channel_js


def origin_allowed(url: str, allowed: set[str]) -> bool:
    """``url``'s origin is one of ``allowed`` (entries may be ``https://*.example.com``)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "about", "blob"):
        return True
    port = f":{parts.port}" if parts.port else ""
    origin = f"{parts.scheme}://{(parts.hostname or '').lower()}{port}"
    return any(origin == a or ("*" in a and fnmatch.fnmatchcase(origin, a)) for a in allowed)


class _Fence(QWebEngineUrlRequestInterceptor):
    """Blocks a request to an origin none of the server's views declared."""

    def __init__(self, server: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.server = server
        self.own = f"{VIEW_SCHEME.decode()}://v-{server_label(server)}/"
        self.allowed: set[str] = set()
        self.blocked: list[str] = []

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl().toString()
        if url.startswith(self.own):
            return  # the server's own view documents (served only while shown)
        if urlsplit(url).hostname and str(urlsplit(url).hostname).endswith(HOST_SUFFIX):
            info.block(True)  # the host page's own origin (the engine asks for a favicon)
            return
        if not origin_allowed(url, self.allowed):
            info.block(True)
            self.blocked.append(url)
            log.warning(
                "a view of %s tried to reach %s, which it did not declare", self.server, url
            )


class _Profiles(QObject):
    """The view profiles of one window, deleted with it (after its pages: a profile must
    outlive every page that uses it, and one kept past its window's end crashed the next
    window's first view)."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.setObjectName("portico-view-profiles")
        self.by_server: dict[str, QWebEngineProfile] = {}
        self.fences: dict[str, _Fence] = {}
        self.documents: dict[str, _Documents] = {}


def _keeper(anchor: QObject) -> _Profiles:
    found = anchor.findChild(_Profiles, "portico-view-profiles")
    return found if isinstance(found, _Profiles) else _Profiles(anchor)


def profile_for(anchor: QObject, server: str, origins: tuple[str, ...]) -> QWebEngineProfile:
    """The server's profile in ``anchor``'s window (made on its first view there)."""
    keeper = _keeper(anchor)
    profile = keeper.by_server.get(server)
    if profile is None:
        profile = QWebEngineProfile(keeper)  # no storage name: off the record
        # All of a server's views share its origin: an answer kept for one would be
        # given to the next without the person being asked.
        profile.setPersistentPermissionsPolicy(
            QWebEngineProfile.PersistentPermissionsPolicy.AskEveryTime
        )
        fence = keeper.fences[server] = _Fence(server, profile)
        profile.setUrlRequestInterceptor(fence)
        documents = keeper.documents[server] = _Documents(profile)
        profile.installUrlSchemeHandler(VIEW_SCHEME, documents)
        settings = profile.settings()
        for attribute, on in (
            (QWebEngineSettings.WebAttribute.JavascriptCanOpenWindows, False),
            (QWebEngineSettings.WebAttribute.LocalContentCanAccessRemoteUrls, False),
            (QWebEngineSettings.WebAttribute.LocalContentCanAccessFileUrls, False),
            (QWebEngineSettings.WebAttribute.PluginsEnabled, False),
            (QWebEngineSettings.WebAttribute.JavascriptCanAccessClipboard, False),
            (QWebEngineSettings.WebAttribute.JavascriptCanPaste, False),
        ):
            settings.setAttribute(attribute, on)
        profile.scripts().insert(_no_webrtc_script())
        keeper.by_server[server] = profile
    keeper.fences[server].allowed |= set(origins)
    return profile


_NO_WEBRTC = """(function () {
  var names = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel",
               "RTCIceCandidate", "RTCSessionDescription", "RTCRtpSender", "RTCRtpReceiver"];
  for (var i = 0; i < names.length; i++) {
    try {
      Object.defineProperty(window, names[i], {value: undefined, writable: false,
                                               configurable: false});
    } catch (e) {}
  }
})();"""


def _no_webrtc_script() -> QWebEngineScript:
    """Takes WebRTC away in every frame of a view's page, before the view's own scripts."""
    script = QWebEngineScript()
    script.setName("portico-no-webrtc")
    script.setSourceCode(_NO_WEBRTC)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld)
    script.setRunsOnSubFrames(True)
    return script


def fence_of(anchor: QObject, server: str) -> _Fence | None:
    return _keeper(anchor).fences.get(server)


def serve(anchor: QObject, server: str, url: str, document: str | None) -> None:
    """Serve ``document`` at ``url`` from the server's profile (None: no longer)."""
    try:
        keeper = anchor.findChild(_Profiles, "portico-view-profiles")
    except RuntimeError:  # the window went, and its profiles with it
        return
    documents = keeper.documents.get(server) if isinstance(keeper, _Profiles) else None
    if documents is None:
        return
    if document is None:
        documents.documents.pop(url, None)
    else:
        documents.documents[url] = document.encode("utf-8")


def _permission_kinds() -> dict[object, str]:
    kinds = QWebEnginePermission.PermissionType
    return {
        kinds.MediaVideoCapture: "camera",
        kinds.MediaAudioCapture: "microphone",
        kinds.MediaAudioVideoCapture: "camera and microphone",
        kinds.ClipboardReadWrite: "clipboard",
        kinds.Geolocation: "geolocation",
    }


class ViewWebPage(QWebEnginePage):
    """One view's page: its own first load and its frame's document, nothing else. A
    permission it asks for (camera, microphone, clipboard, location) that its resource
    declared goes to ``asks`` (the pane asks the person and calls :meth:`answer`); any
    other permission is denied without a question."""

    asks = Signal(str, object)  # (kind, the QWebEnginePermission to grant or deny)

    def __init__(
        self,
        profile: QWebEngineProfile,
        server: str,
        parent: QObject | None = None,
        *,
        frames: tuple[str, ...] = (),
        frame: str = "",
        declared: tuple[str, ...] = (),
    ):
        super().__init__(profile, parent)
        self.server = server
        self.frames = set(frames)  # the view's declared frameDomains: its only subframes
        self.frame = frame  # where the view's own document is served (frame_url)
        self.declared = declared  # the resource's _meta.ui.permissions
        self.refused: list[str] = []
        self._loaded = False
        self.loadFinished.connect(self._first_load_done)
        self.permissionRequested.connect(self._permission)

    def _first_load_done(self, _ok: bool) -> None:
        self._loaded = True

    def _permission(self, permission: QWebEnginePermission) -> None:
        kind = _permission_kinds().get(permission.permissionType())
        if kind is None or not permission_declared(kind, self.declared):
            self.refused.append(f"permission {kind or permission.permissionType()}")
            log.info("a view of %s asked for %s; refused", self.server, permission)
            permission.deny()
            return
        self.asks.emit(kind, permission)

    def answer(self, kind: str, permission: QWebEnginePermission, granted: bool) -> None:
        """The person's answer to :attr:`asks`."""
        if granted:
            permission.grant()
        else:
            self.refused.append(f"permission {kind}")
            permission.deny()

    def acceptNavigationRequest(
        self, url: QUrl | str, navigation: QWebEnginePage.NavigationType, main_frame: bool
    ) -> bool:
        text = url.toString() if isinstance(url, QUrl) else str(url)
        if main_frame and not self._loaded:
            return True
        if not main_frame and text in (self.frame, "about:blank"):
            return True
        if not main_frame and self.frames and origin_allowed(text, self.frames):
            return True  # a frame of an origin the view declared (its CSP frame-src too)
        self.refused.append(text)
        log.info("a view of %s tried to open %s; links open only when it asks", self.server, text)
        return False

    def createWindow(  # type: ignore[override]
        self, _type: QWebEnginePage.WebWindowType
    ) -> QWebEnginePage | None:
        self.refused.append("a new window")
        return None  # Qt then opens nothing

    def javaScriptConsoleMessage(
        self,
        level: QWebEnginePage.JavaScriptConsoleMessageLevel,
        message: str,
        line: int,
        source: str,
    ) -> None:
        log.debug("view of %s console: %s (%s:%d)", self.server, message, source, line)


class Bridge(QObject):
    """The object the host page's relay talks to over QWebChannel."""

    deliver = Signal(str)  # Portico -> view (JSON text)
    posted = Signal(str)  # view -> Portico (JSON text)
    resized = Signal(int)
    is_ready = Signal()

    @Slot(str)
    def post(self, text: str) -> None:
        self.posted.emit(text)

    @Slot(int)
    def resize(self, height: int) -> None:
        self.resized.emit(height)

    @Slot()
    def ready(self) -> None:
        self.is_ready.emit()
