"""The reader's side of the built site, checked on a small book built in a temp folder.

The small book uses the repository's own _config.yml, _static/ and _ext/ (the Sphinx
extension commbook_sphinx), with a pruned table of contents of the same shape as the
real one: a bilingual landing page, a Chinese part, then an English part, with twin
pages at the same path under chapters/{zh,en} and exercises/{zh,en}.  The pages are
short MyST pages written here (no code cells), so the build takes seconds, not the
ten minutes of the full book; `make book` builds the real pages with the same config.

Checks: MathJax is served locally and no page loads a script from elsewhere; Chinese
terms are searchable (searchindex.js, queried the way searchtools.js does); Chinese
pages declare lang="zh-Hans" and use Chinese interface words; twins carry the same
figure and equation numbers; every language page links to its twin from the header,
and previous/next stay inside one language.
"""

from __future__ import annotations

import base64
import html
import json
import re
import sys
from pathlib import Path

import pytest
import snowballstemmer

from conftest import build_small_book

ROOT = Path(__file__).resolve().parents[1]

# 1x1 PNG for the figures.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

TOC = """\
format: jb-book
root: index
parts:
  - caption: 中文 · 前置讲 P5
    chapters:
      - file: chapters/zh/p5/02-links
      - file: chapters/zh/ch1/02-models
      - file: exercises/zh/p5
  - caption: English · Lecture P5
    chapters:
      - file: chapters/en/p5/02-links
      - file: chapters/en/ch1/02-models
      - file: exercises/en/p5
"""

INDEX = """\
# commbook · 集合通信 / Collective Communication

## 中文

- [链路](chapters/zh/p5/02-links.md)
- [模型](chapters/zh/ch1/02-models.md)
- [练习](exercises/zh/p5.md)

## English

- [Links](chapters/en/p5/02-links.md)
- [Models](chapters/en/ch1/02-models.md)
- [Exercises](exercises/en/p5.md)
"""

PAGES = {
    "chapters/zh/p5/02-links.md": """\
(zh-p5-links)=
# 2 链路：α–β 模型 · Links

[English version / 英文版](../../en/p5/02-links.md)

(zh-p5-links-model)=
## 2.1 α–β 模型

一条链路的时间是启动延迟加上按带宽传输的时间：

```{math}
:label: zh-p5-links-eq-time

T(n) = \\alpha + n/\\beta
```

程序看到的是有效带宽 $n/T(n)$。式 {eq}`zh-p5-links-eq-time` 的两项在下面这个大小上持平：

```{math}
:label: zh-p5-links-eq-nhalf

n_{1/2} = \\alpha\\beta
```

```{figure} fig.png
:name: zh-p5-links-fig-effbw

有效带宽随消息大小变化
```

{numref}`zh-p5-links-fig-effbw` 画出了低延迟链路和高延迟链路。

:::{note}
本书的 KB 是十进制。
:::

(zh-p5-links-ring)=
## 2.2 环形算法

集合通信库在节点内用 ring all-reduce，每一步只和邻居交换数据；环形算法的延迟项随 GPU 数线性增长。

```{figure} fig.png
:name: zh-p5-links-fig-ring

ring 上的一步
```
""",
    "chapters/en/p5/02-links.md": """\
(en-p5-links)=
# 2 Links: the α–β model

[中文版 / Chinese version](../../zh/p5/02-links.md)

(en-p5-links-model)=
## 2.1 The α–β model

The time on one link is a start-up latency plus the bytes over the bandwidth:

```{math}
:label: en-p5-links-eq-time

T(n) = \\alpha + n/\\beta
```

A program sees the effective bandwidth $n/T(n)$. The two terms of eq. {eq}`en-p5-links-eq-time` are equal at

```{math}
:label: en-p5-links-eq-nhalf

n_{1/2} = \\alpha\\beta
```

```{figure} fig.png
:name: en-p5-links-fig-effbw

Effective bandwidth against message size
```

{numref}`en-p5-links-fig-effbw` shows a low-latency and a high-latency link.

(en-p5-links-ring)=
## 2.2 The ring algorithm

Collective communication libraries use a ring all-reduce inside a node; each step talks
to a neighbour only, and the latency term grows with the number of GPUs.

```{figure} fig.png
:name: en-p5-links-fig-ring

One step on a ring
```
""",
    "chapters/zh/ch1/02-models.md": """\
(zh-ch1-models)=
# 1.2 网络性能建模

[English version / 英文版](../../en/ch1/02-models.md)

```{figure} ../p5/fig.png
:name: zh-ch1-models-fig-hockney

Hockney 模型
```

节点间带宽决定大消息的时间，拓扑决定消息走几跳：

```{math}
:label: zh-ch1-models-eq-hockney

T = \\alpha + \\beta n
```

(zh-ch1-models-logp)=
## LogP 模型

LogP 把开销和间隔分开计。
""",
    "chapters/en/ch1/02-models.md": """\
(en-ch1-models)=
# 1.2 Modelling network performance

[中文版 / Chinese version](../../zh/ch1/02-models.md)

```{figure} ../p5/fig.png
:name: en-ch1-models-fig-hockney

The Hockney model
```

Inter-node bandwidth sets the time of large messages; the topology sets the hops:

```{math}
:label: en-ch1-models-eq-hockney

T = \\alpha + \\beta n
```

(en-ch1-models-logp)=
## The LogP model

LogP counts overhead and gap separately.
""",
    "exercises/zh/p5.md": """\
# 练习 1–10

[English version / 英文版](../en/p5.md)

1. 估算首token延迟里集合通信占多少。
2. 在 8 块 GPU 上比较 ring 和树形 all-reduce 的总线带宽。
""",
    "exercises/en/p5.md": """\
# Exercises 1–10

[中文版 / Chinese version](../zh/p5.md)

1. Estimate how much of the time to first token the collective communication takes.
2. Compare the bus bandwidth of ring and tree all-reduce on 8 GPUs.
""",
}

LANG_PAGES = [name[: -len(".md")] for name in PAGES]
ZH_PAGES = [p for p in LANG_PAGES if "/zh/" in p]
SEARCH_TERMS = ["延迟", "带宽", "集合通信", "all-reduce", "ring"]


def twin(docname: str) -> str:
    return docname.replace("/zh/", "/en/") if "/zh/" in docname else docname.replace("/en/", "/zh/")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the small book once; return its _build/html."""
    files = {"index.md": INDEX, **PAGES, **{f"chapters/{lang}/p5/fig.png": PNG for lang in ("zh", "en")}}
    return build_small_book(tmp_path_factory.mktemp("book"), TOC, files)


def read(site: Path, docname: str) -> str:
    return (site / f"{docname}.html").read_text(encoding="utf-8")


def article_text(page_html: str) -> str:
    """The page's content as text (what Sphinx indexes), without theme chrome."""
    match = re.search(r'<article class="bd-article"[^>]*>(.*?)</article>', page_html, re.S)
    assert match, "no <article class=bd-article> in page"
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", match.group(1), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


# ------------------------------------------------------------------ 1. MathJax offline


def test_formulas_typeset_with_the_book(site: Path) -> None:
    """No page loads a script or stylesheet from elsewhere, and none loads MathJax: every
    formula is typeset at build time (_ext/commbook_math.py), its page links the one
    stylesheet of the characters used, and the web fonts that stylesheet names are served."""
    css = site / "_static/commbook-math.css"
    assert css.is_file(), "no _static/commbook-math.css"
    for docname in ["index", *LANG_PAGES]:
        page = read(site, docname)
        srcs = re.findall(r'<script[^>]*\ssrc="([^"]+)"', page)
        remote = [s for s in srcs if re.match(r"(https?:)?//", s)]
        assert not remote, f"{docname} loads remote scripts: {remote}"
        remote_css = re.findall(r'<link[^>]*href="((?:https?:)?//[^"]+)"[^>]*stylesheet', page)
        assert not remote_css, f"{docname} loads remote stylesheets: {remote_css}"
        assert not [s for s in srcs if "mathjax" in s.lower()], f"{docname} still loads MathJax"
        formulas = re.findall(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', page, re.S)
        if "{math}" in PAGES.get(f"{docname}.md", ""):
            assert formulas, docname
        assert all("<mjx-container" in body for _, body in formulas), f"{docname}: a formula left as TeX"
        if formulas:
            href = re.search(r'<link rel="stylesheet" href="([^"]*commbook-math\.css)"', page)
            assert href and (site / f"{docname}.html").parent.joinpath(href.group(1)).resolve() == css.resolve()
    fonts = re.findall(r'url\("([^"]+\.woff)"\)', css.read_text(encoding="utf-8"))
    assert fonts and all((css.parent / f).is_file() for f in fonts), fonts[:3]


# ------------------------------------------------------------------ 2. Chinese search


def load_searchindex(site: Path) -> dict:
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    match = re.fullmatch(r"\s*Search\.setIndex\((.*)\)\s*", text, re.S)
    assert match, "searchindex.js is not Search.setIndex({...})"
    return json.loads(match.group(1))


def search(index: dict, query: str) -> set[str]:
    """searchtools.js (Sphinx 7.4) in Python: split, stem, every term required, partial
    matches for terms longer than two characters."""
    stopwords = {"a", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
                 "is", "it", "near", "no", "not", "of", "on", "or", "such", "that", "the",
                 "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"}
    stemmer = snowballstemmer.stemmer("porter")
    words = [w for w in re.split(r"[^\w]+", query.strip()) if w]
    terms = {stemmer.stemWord(w.lower()) for w in words if w.lower() not in stopwords and not w.isdigit()}
    assert terms, query
    docnames = index["docnames"]
    found: set[str] | None = None
    for term in terms:
        files: set[int] = set()
        for table in (index["terms"], index["titleterms"]):
            hits = [table[term]] if term in table else []
            if len(term) > 2 and term not in table:
                hits += [v for k, v in table.items() if term in k]
            for hit in hits:
                files.update(hit if isinstance(hit, list) else [hit])
        names = {docnames[i] for i in files}
        found = names if found is None else found & names
    return found or set()


DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})


def contains(text: str, term: str) -> bool:
    """Whether a page's text holds the term: a Chinese term anywhere, a Latin one as a
    word; any dash matches any dash (a reader types "α-β" for the page's "α–β")."""
    text, term = text.translate(DASHES), term.translate(DASHES)
    if re.search(r"[\u4e00-\u9fff]", term):
        return term in text
    return re.search(rf"(?<![A-Za-z]){re.escape(term)}(?![A-Za-z])", text, re.I) is not None


def test_search_finds_every_page_with_the_term(site: Path) -> None:
    index = load_searchindex(site)
    texts = {d: article_text(read(site, d)) for d in ["index", *LANG_PAGES]}
    for term in SEARCH_TERMS:
        expected = {d for d, text in texts.items() if contains(text, term)}
        assert expected, f"no test page contains {term!r}"
        missing = expected - search(index, term)
        assert not missing, f"searching {term!r} misses {sorted(missing)}"
    # Chinese pages are split into words, not indexed clause by clause.
    assert "集合通信" in index["terms"] and "延迟" in index["terms"]
    assert not any(len(t) > 12 and re.search(r"[\u4e00-\u9fff]", t) for t in index["terms"])


def test_search_page_uses_chinese_splitter(site: Path) -> None:
    # language_data.js of Sphinx's zh search language: English stopwords and stemmer.
    language_data = (site / "_static/language_data.js").read_text(encoding="utf-8")
    assert "Stemmer" in language_data and "stopwords" in language_data


# ------------------------------------------------------- 3. zh pages declared Chinese


def html_lang(page: str) -> str:
    match = re.search(r"<html[^>]*\slang=\"([^\"]+)\"", page)
    assert match, "no lang attribute on <html>"
    return match.group(1)


def test_pages_declare_their_language(site: Path) -> None:
    for docname in LANG_PAGES:
        assert html_lang(read(site, docname)) == ("zh-Hans" if "/zh/" in docname else "en"), docname
    assert html_lang(read(site, "index")) == "en"


def test_chinese_pages_use_chinese_interface_words(site: Path) -> None:
    zh, en = read(site, "chapters/zh/p5/02-links"), read(site, "chapters/en/p5/02-links")
    assert '<span class="caption-number">图 1 </span>' in zh
    assert '<span class="caption-number">Fig. 1 </span>' in en
    assert "图 1" in article_text(zh)  # {numref} text
    assert "目录" in zh and "Contents" in en
    assert "上一页" in zh or "下一页" in zh
    css = (site / "_static/commbook-lang.css").read_text(encoding="utf-8")
    assert "lang(zh-Hans)" in css and "Noto Sans CJK SC" in css
    assert "commbook-lang.css" in zh
    assert 'admonition-title">备注</p>' in zh and 'admonition-title">Note</p>' not in zh  # Sphinx's zh_CN


def test_folded_code_prompts_are_chinese_on_chinese_pages() -> None:
    sys.path.insert(0, str(ROOT / "_ext"))
    from commbook_sphinx import ZH_CODE_PROMPTS, localize_body

    body = "".join(f'<p class="collapsed admonition-title">{en}</p>' for en in ZH_CODE_PROMPTS)
    out = localize_body(body + '<p class="admonition-title">Tip</p>', {"Tip": "小技巧"}.get)
    assert not any(en in out for en in ZH_CODE_PROMPTS) and "小技巧" in out
    assert all(zh in out for zh in ZH_CODE_PROMPTS.values())


# ------------------------------------------------------------------ 4. twin numbering


def numbers(page: str) -> tuple[list[str], list[str]]:
    figs = re.findall(r'<span class="caption-number">\D*?(\d[\d.]*)\s*</span>', page)
    eqs = re.findall(r'<span class="eqno">\((\d[\d.]*)\)', page)
    return figs, eqs


def test_twins_carry_the_same_numbers(site: Path) -> None:
    for docname in ZH_PAGES:
        zh, en = numbers(read(site, docname)), numbers(read(site, twin(docname)))
        assert zh == en, f"{docname}: zh {zh} vs en {en}"
    figs, eqs = numbers(read(site, "chapters/en/ch1/02-models"))
    assert figs == ["1.2.1"] and eqs == ["1.2.1"]  # chapter 1: Figure 1.2.1, equation (1.2.1)
    figs, eqs = numbers(read(site, "chapters/en/p5/02-links"))
    assert figs == ["1", "2"] and eqs == ["1", "2"]


# --------------------------------------------------------------- 5. language navigation


def rel_link(page: str, cls: str) -> str | None:
    match = re.search(rf'<a class="{cls}"\s+href="([^"]+)"', page)
    return match.group(1) if match else None


def resolve(docname: str, href: str) -> str:
    target = (Path("/" + docname).parent / href.split("#")[0]).resolve()
    return str(target)[1:].removesuffix(".html")


def test_every_page_links_to_its_twin_from_the_header(site: Path) -> None:
    for docname in LANG_PAGES:
        page = read(site, docname)
        lang, other = ("zh", "en") if "/zh/" in docname else ("en", "zh")
        header_start, article_start = page.find('class="bd-header-article'), page.find('<article class="bd-article"')
        assert 0 < header_start < article_start, f"{docname}: no article header"
        switch = re.search(r'<nav class="commbook-lang-switch".*?</nav>', page[header_start:article_start], re.S)
        assert switch, f"{docname}: no 中文 / English switch in the header"
        link = re.search(r'class="commbook-twin-link" href="([^"]+)"[^>]*data-anchors="([^"]*)"', switch.group(0))
        href, anchors = link.group(1), json.loads(html.unescape(link.group(2)))
        assert resolve(docname, href) == twin(docname), (docname, href)
        assert f'<link rel="alternate" hreflang="{"en" if lang == "zh" else "zh-Hans"}"' in page
        # Section anchors: labelled sections map to the twin's section with the same label.
        twin_page = read(site, twin(docname))
        labels = re.findall(rf'<section[^>]*id="({lang}-[^"]+)"', page)
        labels += re.findall(rf'<span id="({lang}-[^"]+)"></span><h[1-6]', page)
        assert labels or docname.startswith("exercises/"), docname
        # Every section of the page maps to a section of the twin (by label or position).
        section_ids = re.findall(r'<section[^>]*\sid="([^"]+)"', page)
        assert set(section_ids) <= set(anchors), (docname, section_ids, anchors)
        assert all(f'id="{target}"' in twin_page for target in anchors.values()), docname
        for label in labels:
            target = anchors[label]
            twin_label = f"{other}-" + label[len(lang) + 1:]
            section = re.search(rf'<section[^>]*id="{re.escape(target)}"[^>]*>\s*(<span id="([^"]+)">)?', twin_page)
            assert section and twin_label in (target, section.group(2)), (docname, label, target)


def test_previous_next_stay_in_one_language(site: Path) -> None:
    for docname in LANG_PAGES:
        page = read(site, docname)
        lang = "zh" if "/zh/" in docname else "en"
        for cls in ("left-prev", "right-next"):
            href = rel_link(page, cls)
            if href is not None:
                target = resolve(docname, href)
                assert f"/{'en' if lang == 'zh' else 'zh'}/" not in target, (docname, cls, target)
    last_zh = read(site, "exercises/zh/p5")
    assert rel_link(last_zh, "right-next") is None
    first_en = read(site, "chapters/en/p5/02-links")
    assert resolve("chapters/en/p5/02-links", rel_link(first_en, "left-prev")) == "index"
    assert resolve("chapters/en/p5/02-links", rel_link(first_en, "right-next")) == "chapters/en/ch1/02-models"


def test_a_changed_page_sends_its_twin_to_be_read_again() -> None:
    """Incremental builds: the twin of a changed page is outdated too (its switch map)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from types import SimpleNamespace

    from commbook_sphinx import _twins_outdated

    env = SimpleNamespace(found_docs={"index", "chapters/zh/p5/02-links", "chapters/en/p5/02-links",
                                      "exercises/zh/p5", "exercises/en/p5", "chapters/en/p5/03-only-en"})
    assert _twins_outdated(None, env, set(), {"chapters/en/p5/02-links"}, set()) == ["chapters/zh/p5/02-links"]
    assert _twins_outdated(None, env, {"exercises/zh/p5"}, {"exercises/en/p5", "index"}, set()) == []
    assert _twins_outdated(None, env, set(), {"chapters/en/p5/03-only-en"}, set()) == []


def test_every_page_carries_the_licence(site: Path) -> None:
    """The footer names the licence of LICENSE (MIT) and the package version of pyproject.toml."""
    import tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == "MIT" and "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    for docname in ("index", *LANG_PAGES):
        page = read(site, docname)
        assert "MIT License" in page and f"commbook {meta['version']}" in page, docname


def test_pages_link_a_favicon_that_exists(site: Path) -> None:
    page = read(site, "index")
    href = re.search(r'<link rel="(?:shortcut )?icon" href="([^"]+)"', page)
    assert href, "no favicon link"
    assert (site / href.group(1)).is_file(), href.group(1)
