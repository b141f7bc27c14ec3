"""Chinese search that finds what a reader types (issue 19 §2).

Sphinx's Chinese search indexes jieba's words and drops every one-character word, and its
query splitter keeps a run of Chinese characters as one term.  So "环" found nothing (it is
part of 环形, 环上, …), and "交换机内归约" found only the pages whose text jieba happened to
cut into that very word.  Here the index holds, besides jieba's words, every Chinese
character and every pair of adjacent ones (a run "交换机" gives 交, 换, 机, 交换, 换机), and
the query splitter cuts a Chinese run the same way: one character stays a term, a longer
run becomes its pairs, all of which a page must contain (Sphinx's search needs every term).
Greek letters are kept as one-letter terms, and any dash counts as a separator, so "α-β"
finds the pages that write α–β.
"""
from __future__ import annotations

import re

from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
GREEK = re.compile(r"[\u0391-\u03a9\u03b1-\u03c9]+")


def han_grams(run: str) -> list[str]:
    """Every character of a run of Chinese characters and every pair of adjacent ones."""
    return list(run) + [run[i:i + 2] for i in range(len(run) - 1)]


# The query side of the same cut (language_data.js defines splitQuery with this; Sphinx's
# searchtools.js keeps its own only when none is defined).
JS_SPLITTER = r"""
var splitQuery = (query) => {
  const out = [];
  const runs = query.replace(/[\u2010-\u2015\u2212]/g, " ")
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu);
  for (const run of runs) {
    for (const part of run.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu) || []) {
      if (!/\p{Script=Han}/u.test(part)) { out.push(part); continue; }
      if (part.length === 1) { out.push(part); continue; }
      for (let i = 0; i + 1 < part.length; i++) out.push(part.slice(i, i + 2));
    }
  }
  return out;
};
"""


class _Terms(set):
    """A set that takes ``extend`` (what Sphinx's Chinese splitter calls on its list)."""

    def extend(self, items) -> None:
        self.update(items)


class CommbookChinese(SearchChinese):
    """Sphinx's Chinese search, with Chinese characters and pairs of them as terms.

    Sphinx 7.4 keeps every Latin term it has split in one list, a class attribute that
    grows with every page, and ``stem`` looks each word up in it (``word in
    self.latin_terms``): indexing became quadratic in the book's size, minutes per page
    by the last pages.  Here the terms are a set.
    """

    js_splitter_code = JS_SPLITTER

    def init(self, options: dict) -> None:
        super().init(options)
        self.latin_terms = _Terms()

    def split(self, input: str) -> list[str]:
        grams = [g for run in HAN.findall(input) for g in han_grams(run)]
        return super().split(input) + grams + GREEK.findall(input)

    def word_filter(self, stemmed_word: str) -> bool:
        return (len(stemmed_word) > 1 or bool(HAN.fullmatch(stemmed_word))
                or bool(GREEK.fullmatch(stemmed_word)))


def setup(app: Sphinx) -> dict:
    app.add_search_language(CommbookChinese)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
