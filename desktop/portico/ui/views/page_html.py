"""The page a view is rendered in: a small host page of ours, the view in a sandboxed
frame inside it, and a relay between the two (the extension's "sandbox proxy").

The view's own document, with the view's policy as its first element, is served to the
frame at its own origin (``portico-view://v-<server>/<view id>``, ``engine``), never the
host page's: the frame has ``allow-scripts allow-forms allow-same-origin``, so the view
runs in an origin of its own (a permission can be asked for only by a real origin) that
can reach neither the host page nor the web channel. Its ``allow`` attribute delegates
only the permissions the view declared; each is still asked of the person. The relay
forwards every message the frame posts to Portico (``host.post``) and every message
Portico sends into the frame, and keeps what the frame says before the channel is up; it
also reports the view's height so the widget can follow it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

# a declared permission (``_meta.ui.permissions``) -> its Permissions Policy feature
FEATURES = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}

_RELAY = """
(function () {
  var frame = document.getElementById("view");
  var early = [];
  var host = null;
  function toHost(data) {
    var text;
    try { text = JSON.stringify(data); } catch (e) { return; }
    if (host === null) { early.push(text); } else { host.post(text); }
  }
  window.addEventListener("message", function (event) {
    if (event.source !== frame.contentWindow) { return; }
    var data = event.data;
    if (data && data.method === "ui/notifications/size-changed" && data.params) {
      var h = Number(data.params.height);
      if (h > 0) { frame.style.height = h + "px"; if (host) { host.resize(h); } }
    }
    toHost(data);
  });
  new QWebChannel(qt.webChannelTransport, function (channel) {
    host = channel.objects.host;
    host.deliver.connect(function (text) {
      frame.contentWindow.postMessage(JSON.parse(text), "*");
    });
    var waiting = early; early = [];
    for (var i = 0; i < waiting.length; i++) { host.post(waiting[i]); }
    host.ready();
  });
})();
"""


def view_document(view_html: str, csp: str) -> str:
    """The view's HTML with its policy as the first thing the document holds."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(csp)}">'
    return meta + view_html


def allow_attribute(permissions: Iterable[str]) -> str:
    """The frame's ``allow`` value: the declared permissions' features, nothing else."""
    return "; ".join(FEATURES[p] for p in dict.fromkeys(permissions) if p in FEATURES)


def host_page(frame_url: str, channel_js: str, *, border: bool, allow: str = "") -> str:
    """The whole page: ``channel_js`` is Qt's qwebchannel.js (read from Qt's resources),
    ``frame_url`` where the view's document is served (its origin is the page's only
    frame source)."""
    frame_border = "1px solid rgba(127,127,127,.35)" if border else "0"
    frame_origin = frame_url.split("/", 3)
    policy = (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        f"frame-src {'/'.join(frame_origin[:3])}"
    )
    allowed = f' allow="{html.escape(allow, quote=True)}"' if allow else ""
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
        "<style>html,body{margin:0;padding:0;background:transparent}"
        f"iframe{{display:block;width:100%;height:150px;border:{frame_border};"
        "box-sizing:border-box}</style>"
        f"<script>{channel_js}</script></head><body>"
        '<iframe id="view" sandbox="allow-scripts allow-forms allow-same-origin"'
        f'{allowed} src="{html.escape(frame_url, quote=True)}"></iframe>'
        f"<script>{_RELAY}</script></body></html>"
    )
