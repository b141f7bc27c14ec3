"""The pages tools/pdf_book.py prints itself: the title page with the table of contents, and
the overlay that stamps every page's running head and number (HTML for Chromium)."""

from __future__ import annotations

import html
from typing import Protocol

SENTINEL = "https://commbook-pdf.invalid/"  # pdf_book turns links to it into links to pages


class Printed(Protocol):
    name: str
    title: str
    sections: list[dict]
    pages: int
    dests: dict[str, tuple[int, float]]


WORDS = {  # per language: the words, the <html lang> and the font of these pages
    "zh": {"language": "中文版", "contents": "目录", "version": "版本", "html_lang": "zh-Hans",
           "font": '"Noto Sans CJK SC", "Source Han Sans SC", sans-serif',
           "label": "中文"},
    "en": {"language": "English edition", "contents": "Contents", "version": "Version", "html_lang": "en",
           "font": '"Noto Sans", "DejaVu Sans", "Liberation Sans", sans-serif', "label": "English"},
}


def roman(n: int) -> str:
    out = ""
    for value, letters in ((10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + letters, n - value
    return out


def front_html(lang: str, title: str, version: str, parts: list[tuple[str, list[Printed]]], first: int) -> str:
    """The title page and the table of contents; ``first``: the PDF index of the first body page."""
    w = WORDS[lang]
    e = html.escape
    rows, at = [], first
    for caption, docs in parts:
        if caption:
            rows.append(f'<div class="part">{e(caption)}</div>')
        for doc in docs:
            rows.append(f'<a class="doc" href="{SENTINEL}{e(doc.name)}"><span>{e(doc.title)}</span>'
                        f'<span class="pg">{at - first + 1}</span></a>')
            for s in doc.sections:
                if s["level"] == 2 and s["id"] in doc.dests:
                    rows.append(f'<a class="sec" href="{SENTINEL}{e(doc.name)}#{e(s["id"])}"><span>{e(s["title"])}</span>'
                                f'<span class="pg">{at - first + 1 + doc.dests[s["id"]][0]}</span></a>')
            at += doc.pages
    return f"""<!doctype html><html lang="{w['html_lang']}"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 22mm 20mm; }}
body {{ font-family: {w['font']}; color: #111; margin: 0; }}
.title {{ height: 240mm; display: flex; flex-direction: column; justify-content: center; text-align: center;
          break-after: page; }}
.title h1 {{ font-size: 26pt; margin: 0 0 10mm; font-weight: 600; }}
.title .lang {{ font-size: 16pt; margin-bottom: 30mm; }}
.title .meta {{ font-size: 11pt; color: #444; line-height: 1.6; }}
h2 {{ font-size: 18pt; margin: 0 0 8mm; }}
.part {{ font-size: 12pt; font-weight: 700; margin: 6mm 0 2mm; break-after: avoid; }}
a {{ display: flex; justify-content: space-between; gap: 4mm; color: #111; text-decoration: none; }}
a.doc {{ font-size: 10.5pt; margin: 1.6mm 0 0.6mm; }}
a.sec {{ font-size: 9pt; color: #333; margin-left: 7mm; }}
a span:first-child {{ flex: 1; border-bottom: 1px dotted #aaa; }}
.pg {{ font-variant-numeric: tabular-nums; }}
</style></head><body>
<div class="title"><h1>{e(title)}</h1><div class="lang">{e(w['language'])}</div>
<div class="meta">{e(w['version'])} {e(version)}</div></div>
<h2>{e(w['contents'])}</h2>
{''.join(rows)}
</body></html>"""


def overlay_html(labels: list[str], heads: list[str], lang: str) -> str:
    """One A4 page per PDF page: its running head (top) and its number (bottom)."""
    e = html.escape
    pages = "".join(f'<div class="p"><div class="h">{e(h)}</div><div class="n">{e(n)}</div></div>'
                    for n, h in zip(labels, heads))
    return f"""<!doctype html><html lang="{WORDS[lang]['html_lang']}"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 0; }}
body {{ margin: 0; font-family: {WORDS[lang]['font']}; color: #555; }}
.p {{ position: relative; height: 296.5mm; break-after: page; overflow: hidden; }}
.p:last-child {{ break-after: auto; }}
.h {{ position: absolute; top: 9mm; left: 17mm; right: 17mm; font-size: 8pt; text-align: right;
      border-bottom: 0.4pt solid #bbb; padding-bottom: 1mm; }}
.h:empty {{ border: 0; }}
.n {{ position: absolute; bottom: 9mm; width: 100%; text-align: center; font-size: 9pt; }}
</style></head><body>{pages}</body></html>"""
