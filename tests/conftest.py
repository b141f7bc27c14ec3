"""Shared fixtures."""
from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cjk_font() -> str:
    """The CJK font the Chinese figures render with.  Without one a test that needs it is
    skipped with the reason; with CI=true (the Makefile installs fonts-noto-cjk) it fails."""
    from commbook.book.plots import find_cjk_font

    font = find_cjk_font()
    if font is None:
        why = ("no CJK font installed (apt-get install fonts-noto-cjk, or 'make venv' as root): "
               "the Chinese (zh) variant of the figures cannot be rendered or checked here")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {why}")
        pytest.skip(why)
    return font


def executed_glue(page: Path) -> dict[str, str]:
    """Execute a MyST page as the book build does (working directory: the repository
    root) and return its glued text values by key.  A cell that raises fails the test.
    Each page runs once per test session (the pages are deterministic)."""
    return dict(_executed_glue(Path(page).resolve()))


@functools.cache
def _executed_glue(page: Path) -> dict[str, str]:
    import jupytext
    import nbclient

    nb = jupytext.read(page)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            assert o.get("output_type") != "error", f"{page.name}: {o}"
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            text = next((v for k, v in o.get("data", {}).items() if k.endswith("text/plain")), None)
            if name and text is not None:
                out[name] = text.strip("'\"")
    return out


def build_small_book(book: Path, toc: str, files: dict[str, str | bytes]) -> Path:
    """Build a small book in ``book`` with the repository's _config.yml, _static/ and
    _ext/ (Sphinx warnings are errors, every page rebuilt), the table of contents ``toc``
    and ``files`` (path relative to the book -> text or bytes, the root page among them).
    Returns its _build/html; a failed build fails the test with the build's output."""
    import shutil
    import subprocess
    import sys

    jb = Path(sys.executable).parent / "jupyter-book"
    assert jb.exists(), f"{jb} missing: run `make venv`"
    book.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    shutil.copytree(ROOT / "_static", book / "_static")
    shutil.copytree(ROOT / "_ext", book / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "_toc.yml").write_text(toc, encoding="utf-8")
    if (ROOT / "node_modules").is_dir():  # npm ci's packages (MathJax for _ext/commbook_math.py)
        (book / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    for name, content in files.items():
        path = book / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    result = subprocess.run([str(jb), "build", str(book), "--warningiserror", "--keep-going", "--all"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"small book build failed:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
    return book / "_build" / "html"
