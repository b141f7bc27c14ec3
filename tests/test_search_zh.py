"""The Chinese search's index terms (_ext/commbook_search.py; issue 19 §2): a page's
Chinese runs give every character and every adjacent pair, besides jieba's words, so a
one-character query (环) and a run jieba cuts differently (交换机内归约) find it; the query
side is checked in the built site by tests/browser/test_browser.py::test_search."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import commbook_search  # noqa: E402  (_ext/ is not a package)


def test_han_grams_are_characters_and_adjacent_pairs():
    assert commbook_search.han_grams("交换机") == ["交", "换", "机", "交换", "换机"]
    assert commbook_search.han_grams("环") == ["环"]


def test_the_index_holds_every_pair_a_query_is_cut_into():
    lang = commbook_search.CommbookChinese({})
    terms = {t for t in lang.split("在交换机内做归约叫作交换机内归约，α–β 模型。") if lang.word_filter(t)}
    query = "交换机内归约"
    pairs = {query[i:i + 2] for i in range(len(query) - 1)}
    assert pairs <= terms
    assert {"环"} <= {t for t in lang.split("环形") if lang.word_filter(t)}
    assert {"α", "β"} <= terms                     # "α-β" is cut into α and β
