"""Open a report's self-contained HTML page in a real headless Chromium: the helper the report
tests share (``test_report.py``, ``test_reproduce.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def render(html: Path, check, screenshot: Path | None = None) -> tuple[list[str], list[str]]:
    """Load ``html``, call ``check(page)`` on it (its assertions), screenshot the whole page to
    ``screenshot``; returns (console errors and warnings, page errors; every URL requested)."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs it (apt-get install chromium)")
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in (
                "error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html.as_uri(), wait_until="load")
            check(page)
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return problems, requests
