"""The book's names of the registry's algorithms (book/names.py, book/texts/common.toml).

The registry declares each algorithm once, with an English display name; the book's
English/Chinese pair lives in the common text file.  These tests keep the two in step:
one pair per algorithm, none for an algorithm the registry does not have, the English
word for word the registry's.
"""
from __future__ import annotations

import pytest

from commbook.book.names import algorithm_labels, display_name, text_key
from commbook.book.text import texts
from commbook.collectives import ALGORITHMS, algorithm

PAIRS = {k: v for k, v in texts("common").entries.items() if k.startswith("algorithm_")}


def test_one_pair_per_registry_algorithm():
    expected = {f"algorithm_{c}_{name}" for c, algos in ALGORITHMS.items() for name in algos}
    assert set(PAIRS) == expected


@pytest.mark.parametrize("collective,name", [(c, n) for c, algos in ALGORITHMS.items() for n in algos])
def test_english_is_the_registry_display_name(collective, name):
    assert display_name(collective, name, "en") == algorithm(collective, name).en
    assert display_name(collective, name, "zh").strip()


def test_aliases_and_chapter_names():
    """An alias names the same algorithm; the Chinese of a few the chapter uses."""
    assert display_name("all_reduce", "ps", "zh") == display_name("all_reduce", "parameter_server", "zh")
    assert text_key("all_reduce", "dbtree") == "algorithm_all_reduce_double_tree"
    assert display_name("all_reduce", "tree", "zh") == "二项树"
    assert display_name("all_reduce", "rd", "zh") == "递归倍增"


def test_labels_by_collective_and_for_all():
    one = algorithm_labels("all_gather")
    assert set(one) == {"en", "zh"} and set(one["en"]) == set(ALGORITHMS["all_gather"])
    every = algorithm_labels()
    assert every["zh"]["reduce_scatter:rh"] == display_name("reduce_scatter", "rh", "zh")
    assert len(every["en"]) == sum(len(a) for a in ALGORITHMS.values())


def test_bad_names_say_which_argument():
    with pytest.raises(ValueError, match="collective"):
        algorithm_labels("all_sum")
    with pytest.raises(ValueError, match="all_reduce algorithm"):
        display_name("all_reduce", "fastest")
    with pytest.raises(ValueError, match="lang"):
        display_name("all_reduce", "ring", "fr")
