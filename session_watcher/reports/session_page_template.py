"""The session page's one HTML file, from package data: `assets/session_page.{html,css,js}`
and the theme it shares with the report page, `assets/theme.css`.

No network: no CDN, no web font, no image file. The same renderer (JS drawing SVG) draws the static
file and the live view; the live view only adds an EventSource on `/events` that replaces the data and
redraws. The page slots (`__CSS__`, `__JS__`, `__MODEL__`, ...) are filled by reports.session_page.
"""

from __future__ import annotations

from importlib import resources


def asset(name: str) -> str:
    """The text of one file in reports/assets/ (installed as package data)."""
    return resources.files("session_watcher.reports").joinpath("assets", name).read_text(encoding="utf-8")


THEME = asset("theme.css")  # shared with the report page (reports.render_html)
CSS = asset("session_page.css")
JS = asset("session_page.js")
PAGE = asset("session_page.html")
