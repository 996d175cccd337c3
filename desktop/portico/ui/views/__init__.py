"""MCP Apps views in the GUI: a server's interactive page under its tool result.

``page_html.py`` builds the page (pure); ``engine.py`` holds everything QtWebEngine, and
is imported only when the first view is shown; ``view_pane.py`` is the widget. The rules a
view is held to live in the core (``portico.apps``); here is only the rendering and the
web engine's own fences (a private profile per server, no navigation, no new windows, no
permission granted, no request to an origin the server did not declare).
"""
