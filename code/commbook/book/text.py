"""The book layer's words, one text file per chapter: ``book/texts/{chapter}.toml``.

Python under :mod:`commbook` holds no Chinese: every caption, header, note and label of a
chapter lives in its text file as an English/Chinese pair under a key, and the code names
the key.  ``tests/test_no_copy.py`` reads these files with the pages, so a table note is
held to the same "our own sentences" rule as the prose.

A file holds one ``[key]`` table per entry, with exactly an ``en`` and a ``zh`` string,
both with the same ``{name}`` placeholders (``en = "All-reduce of {size} on {p} GPUs"``
and its Chinese twin); the code ``T = texts("ch1"); T("key", size="1 GB", p="1,000")``
gives ``{"en": ..., "zh": ...}`` with the placeholders filled, the shape
:class:`~commbook.book.tables.Table` takes for titles.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

__all__ = ["CHAPTERS", "Texts", "texts"]

CHAPTERS: tuple[str, ...] = ("common", "p5", "ch1", "measure")
"""The text files: ``common`` (labels every chapter uses), then one per chapter."""

LANGS = ("en", "zh")


@dataclass(frozen=True)
class Texts:
    """The English/Chinese pairs of one chapter, by key.

    >>> T = texts("common")
    >>> sorted(T("source"))
    ['en', 'zh']
    """

    chapter: str
    entries: dict[str, dict[str, str]]
    prefix: str = ""

    def __call__(self, key: str, **fields: object) -> dict[str, str]:
        """Both languages of ``key``, with ``{name}`` placeholders filled from ``fields``."""
        entry = self._entry(key)
        return {lang: entry[lang].format(**fields) if fields else entry[lang] for lang in LANGS}

    def get(self, key: str, lang: str, **fields: object) -> str:
        """One language of ``key`` (``lang`` is "en" or "zh")."""
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        return self(key, **fields)[lang]

    def pairs(self, *keys: str, **fields: object) -> dict[str, list[str]]:
        """Several keys as ``{"en": [...], "zh": [...]}`` (a table's notes)."""
        both = [self(k, **fields) for k in keys]
        return {lang: [b[lang] for b in both] for lang in LANGS}

    def labels(self, prefix: str) -> dict[str, dict[str, str]]:
        """Every key that starts with ``prefix``, as ``{"en": {rest: text}, "zh": {...}}`` (a
        figure's labels, unformatted)."""
        found = {k[len(prefix):]: e for k, e in self.entries.items() if k.startswith(prefix)}
        if not found:
            raise KeyError(f"prefix: no key starts with {prefix!r} in book/texts/{self.chapter}.toml")
        return {lang: {k: e[lang] for k, e in found.items()} for lang in LANGS}

    def two(self, key: str, **fields: object) -> tuple[str, str]:
        """The (English, Chinese) pair of ``key`` as a tuple."""
        both = self(key, **fields)
        return both["en"], both["zh"]

    def under(self, prefix: str) -> "Texts":
        """The same file with ``prefix`` put before every key: a module's own entries
        (``texts("ch1").under("summary.")("title")`` is the entry ``summary.title``)."""
        return replace(self, prefix=self.prefix + prefix)

    def _entry(self, key: str) -> dict[str, str]:
        try:
            return self.entries[self.prefix + key]
        except KeyError:
            raise KeyError(f"key: no {self.prefix + key!r} in book/texts/{self.chapter}.toml") from None


@lru_cache(maxsize=None)
def texts(chapter: str) -> Texts:
    """The text file of ``chapter`` (one of :data:`CHAPTERS`), read once."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {CHAPTERS}, got {chapter!r}")
    raw = resources.files("commbook.book").joinpath("texts", f"{chapter}.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    for key, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != set(LANGS):
            raise ValueError(f"book/texts/{chapter}.toml: [{key}] must have exactly en and zh")
    return Texts(chapter, data)
