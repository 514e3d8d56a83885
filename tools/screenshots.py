"""Screenshots of the two pages for the README, drawn from the repository's own fixtures.

    .venv/bin/python tools/screenshots.py [OUT_DIR]      (default: docs/img)

Writes session-page.png (one real session, tests/fixtures/transcripts/258c7280-...) and
report-page.png (`report --html` over tests/fixtures/transcripts), both at 1400 px wide in the light
scheme, plus *-dark.png in the dark one and *-phone.png at 390 px (light). Uses Playwright with
Debian's chromium (/usr/bin/chromium, or $SESSION_WATCHER_CHROMIUM); nothing is downloaded. The
pages' clock is pinned, so a re-run only changes the images when the pages change.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
SESSION = FIXTURES / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CHROMIUM = os.environ.get("SESSION_WATCHER_CHROMIUM", "/usr/bin/chromium")
NOW = 1770919200.0  # 2026-02-12 18:00 UTC: the report's "today" is the fixtures' last day


def build(work: Path) -> tuple[Path, Path]:
    """The session page and the report page (its rows linked to session pages beside it), in `work`."""
    os.environ["SESSION_WATCHER_HOME"] = str(work / "home")  # no config or state of the user's
    sys.path.insert(0, str(ROOT))
    from session_watcher.cli.report import write_session_pages
    from session_watcher.reports.collect import run_report
    from session_watcher.reports.render_html import render
    from session_watcher.reports.session_page import write_html

    session = work / "session.html"
    write_html(str(SESSION), str(session), now=NOW)  # its restart-now line priced at the pinned clock too
    report = work / "report.html"
    doc, _stats = run_report([str(FIXTURES)], str(work / "index.db"), now=NOW, utc_offset=0.0)
    pages = write_session_pages(doc, str(report), [str(FIXTURES)])
    report.write_text(render(doc, pages), encoding="utf-8")
    return session, report


# scheme, width, suffix
VIEWS: tuple[tuple[Literal["light", "dark"], int, str], ...] = (("light", 1400, ""), ("dark", 1400, "-dark"),
                                                               ("light", 390, "-phone"))


def shoot(pages: dict[str, Path], out: Path, height: int = 900) -> list[Path]:
    from playwright.sync_api import sync_playwright

    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            for scheme, width, suffix in VIEWS:
                ctx = browser.new_context(viewport={"width": width, "height": height}, timezone_id="UTC",
                                          color_scheme=scheme)
                page = ctx.new_page()
                for name, path in pages.items():
                    page.goto(path.as_uri())
                    page.wait_for_load_state("load")
                    shot = out / f"{name}{suffix}.png"
                    page.screenshot(path=str(shot))
                    written.append(shot)
                ctx.close()
        finally:
            browser.close()
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        session, report = build(Path(tmp))
        for shot in shoot({"session-page": session, "report-page": report}, out):
            print(shot)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
