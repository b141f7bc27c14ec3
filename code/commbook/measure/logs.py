"""The nccl-tests logs copied under ``data/measured/nccl-tests/`` (see its PROVENANCE.md)."""
from __future__ import annotations

from pathlib import Path

from .busbw_table import parse_busbw_markdown
from .nccl_tests import parse_nccl_tests
from .records import Run

__all__ = ["LOG_DIR", "available_logs", "load_log"]

LOG_DIR = Path(__file__).resolve().parents[3] / "data" / "measured" / "nccl-tests"
"""Where the copied logs live: ``data/measured/nccl-tests/`` (see its PROVENANCE.md)."""

def available_logs() -> tuple[str, ...]:
    """File names of the logs in :data:`LOG_DIR` (PROVENANCE.md excluded)."""
    if not LOG_DIR.is_dir():
        return ()
    return tuple(sorted(p.name for p in LOG_DIR.iterdir() if p.is_file() and p.name != "PROVENANCE.md"))


def load_log(name: str, **kwargs) -> tuple[Run, ...]:
    """Parse one log of :data:`LOG_DIR`: ``.md`` files with :func:`parse_busbw_markdown`,
    anything else with :func:`parse_nccl_tests`; always a tuple of runs."""
    path = LOG_DIR / name
    if path.name != name or not path.is_file():
        raise ValueError(f"no log {name!r} in {LOG_DIR}; available: {', '.join(available_logs()) or 'none'}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return (parse_busbw_markdown(text, **kwargs),)
    return parse_nccl_tests(text, **kwargs)
