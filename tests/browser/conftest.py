"""The built site in a real browser: fixtures.

These checks need the full book built (`make book`), so the main suite (`pytest tests`,
which runs before the build in `make test`) skips them; `make test` runs them after the
build with ``COMMBOOK_SITE=_build/html``.  By hand:

    COMMBOOK_SITE=_build/html .venv/bin/python -m pytest tests/browser -q

The browser is Debian's Chromium (``/usr/bin/chromium``, or ``$COMMBOOK_CHROMIUM``)
driven by Playwright; the site is served by Python's http.server on 127.0.0.1.
Screenshots go to ``<site>/../screenshots`` (``_build/screenshots``).  Without Chromium
the checks are skipped with the reason; with CI=true (where `make venv` installs it)
that is a failure.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import pdf_book  # noqa: E402  (tools/ is not a package)

CHROMIUM = os.environ.get("COMMBOOK_CHROMIUM", "/usr/bin/chromium")
# The network is closed: without these flags Chromium waits on background connections.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 412, "height": 915}

# What each check found, printed at the end of the run (see pytest_terminal_summary).
SUMMARY: dict[str, dict[str, str]] = {"pages": {}, "search": {}}


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def site() -> Path:
    """The built HTML (``$COMMBOOK_SITE``); skipped when the variable is not set."""
    value = os.environ.get("COMMBOOK_SITE")
    if not value:
        pytest.skip("the browser check needs the built book: `make test` runs it after the build "
                    "(COMMBOOK_SITE=_build/html pytest tests/browser)")
    path = Path(value).resolve()
    if not (path / "index.html").is_file() or not (path / "searchindex.js").is_file():
        pytest.fail(f"COMMBOOK_SITE={value}: no built book there (index.html and searchindex.js "
                    "missing); run `make book` first")
    return path


@pytest.fixture(scope="session")
def executed(site: Path) -> Path:
    """The executed notebooks of the build (``<site>/../jupyter_execute``)."""
    path = site.parent / "jupyter_execute"
    if not path.is_dir():
        pytest.fail(f"{path} missing: the glued values are read from the build's executed notebooks")
    return path


@pytest.fixture(scope="session")
def screenshots(site: Path) -> Path:
    path = site.parent / "screenshots"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def server(site: Path) -> Iterator[str]:
    """The site served on 127.0.0.1 at a free port, in a thread (the PDF builder's
    :func:`pdf_book.serve`); yields the base URL."""
    with pdf_book.serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def browser_context(site: Path) -> Iterator[object]:
    """A headless Chromium with a fresh profile (Playwright BrowserContext)."""
    if not Path(CHROMIUM).is_file():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium, or `make venv` as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package playwright is missing (pip install -e '.[test]')")
    profile = tempfile.mkdtemp(prefix="commbook-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                viewport=DESKTOP, locale="en-US", service_workers="block")
            context.set_default_timeout(60_000)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: object) -> None:
    """Page -> checks passed, and term -> pages found, for the record."""
    pages, search = SUMMARY["pages"], SUMMARY["search"]
    if not pages and not search:
        return
    write = terminalreporter.write_line
    terminalreporter.section("browser check")
    if pages:
        width = max(map(len, pages))
        for page, result in pages.items():
            write(f"{page:<{width}}  {result}")
    for term, result in search.items():
        write(f"search {term!r}: {result}")
