"""The registry's algorithms as the book names them, in both languages.

The core's registry (:mod:`commbook.collectives.registry`) carries one English display
name per algorithm (:attr:`~commbook.collectives.registry.Algorithm.en`, what its error
messages say); the book's pair of names lives in ``book/texts/common.toml`` under
``algorithm_{collective}_{name}``, so no Chinese is written in the core.

>>> display_name("all_reduce", "dbtree", "en")
'double binary tree'
>>> algorithm_labels("reduce_scatter")["en"]["rh"]
'recursive halving'
"""
from __future__ import annotations

from ..checks import check_choice
from ..collectives.registry import ALGORITHMS, COLLECTIVES, algorithm
from .text import LANGS, texts

__all__ = ["display_name", "algorithm_labels", "text_key"]


def text_key(collective: str, name: str) -> str:
    """The key of an algorithm's names in ``book/texts/common.toml`` (``name`` canonical
    or an alias)."""
    return f"algorithm_{collective}_{algorithm(collective, name).name}"


def display_name(collective: str, name: str, lang: str = "en") -> str:
    """The algorithm's name as the book prints it in ``lang`` ("en" or "zh")."""
    return texts("common").get(text_key(collective, name), lang)


def algorithm_labels(collective: str | None = None) -> dict[str, dict[str, str]]:
    """Display names by language: ``{"en": {name: text}, "zh": {...}}`` for one
    collective's algorithms (keyed by canonical name), or for every collective's
    (keyed ``"collective:name"``) when ``collective`` is None."""
    if collective is None:
        keys = [(c, a, f"{c}:{a}") for c, algos in ALGORITHMS.items() for a in algos]
    else:
        keys = [(collective, a, a) for a in ALGORITHMS[check_choice(collective, "collective", COLLECTIVES)]]
    return {lang: {label: display_name(c, a, lang) for c, a, label in keys} for lang in LANGS}
