"""Shared fixtures."""
from __future__ import annotations

import os

import pytest


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
