"""The book's words in both languages: figure labels, and the one list of terms.

The words themselves live in ``book/texts/common.toml`` (``labels.term.*``,
``labels.not_zh.*``, ``labels.box.*``, ``labels.fig.*``), read here once into the dicts
every chapter's code uses.  Algorithm names are not here: they live once, in the same file
(``algorithm_*``), read by :mod:`commbook.book.names`.
"""
from __future__ import annotations

from .text import texts

__all__ = ["TERMS", "BOXES", "LABELS"]


def _group(prefix: str) -> dict[str, dict[str, str]]:
    entries = texts("common").entries
    return {k[len(prefix):]: dict(v) for k, v in entries.items() if k.startswith(prefix)}


TERMS: dict[str, dict[str, str]] = _group("labels.term.")
for _key, _pair in _group("labels.not_zh.").items():
    TERMS[_key]["not_zh"] = _pair["zh"]
"""Bilingual terms, ``{key: {"en": English, "zh": the Chinese the book uses, "not_zh": the
Chinese it must not use}}``; ``tests/test_terms.py`` checks that the Chinese pages call the
binomial tree by its ``zh`` (a binomial tree is not a binary tree: the Chinese word for a
binary tree is reserved for the double binary tree) and never write a term's ``not_zh`` form
in their prose."""

BOXES: dict[str, dict[str, str]] = _group("labels.box.")
"""One name per kind of box of chapter 1 and the exercises, ``{kind: {"en": ..., "zh": ...}}``;
``tests/test_terms.py`` checks every Chinese admonition title starts with one of them."""

_FIG = _group("labels.fig.")
LABELS: dict[str, dict[str, str]] = {lang: {k: v[lang] for k, v in _FIG.items()} for lang in ("en", "zh")}
"""Figure labels by language; every figure function looks its text up here.

No mathtext (``$...$``) in labels: matplotlib draws a whole string containing
mathtext with the math font, which has no CJK glyphs."""
