"""The book as one PDF per language (issue 19 §4), printed from the built site.

    python tools/pdf_book.py _build/html                      # both languages
    python tools/pdf_book.py _build/html --lang zh --out _build/pdf/commbook-zh.pdf

Chromium (Debian's ``/usr/bin/chromium`` or ``$COMMBOOK_CHROMIUM``, driven by Playwright)
prints every page of one language in ``_toc.yml`` order, as a reader's browser shows it:
MathJax has typeset the formulas, the fonts it uses are embedded (CJK included), figures
keep their resolution.  Before printing, ``_static/commbook-print.css`` hides the site's
interface and every fold (code cell, dropdown, answer) is opened in place.  pypdf then
joins the pages behind a generated title page and table of contents and adds:

* PDF bookmarks: part > page > section > subsection;
* page numbers (roman on the front matter, arabic from the first page) and a running head,
  stamped from one Chromium-printed overlay, and matching page labels for the viewer;
* links: the table of contents and every link between pages of the book go to the page
  and place of their target; a link to a page outside this PDF (the other language, the
  API reference) keeps its text and loses its link; the twin-language note is dropped;
* text that extracts, searches and copies as typed (tools/pdf_unicode.py: the ToUnicode maps
  name 大, not the radical ⼤ that shares its glyph in Noto Sans CJK).

The title page, the contents and the overlay are HTML written by tools/pdf_front.py.
Progress is printed per page.  The site must be built first (``make book``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import io
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pdf_unicode  # tools/pdf_unicode.py, beside this script
# Links between pages of the book are printed to SENTINEL and turned into PDF links to the
# target's page afterwards (Chromium links only anchors inside the page it prints).
from pdf_front import SENTINEL, WORDS, front_html, overlay_html, roman

ROOT = Path(__file__).resolve().parents[1]
PRINT_CSS = ROOT / "_static" / "commbook-print.css"
LANGS = ("zh", "en")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  await Promise.all([...document.images].map(img => img.complete ? null : img.decode().catch(() => null)));
}"""

# Open every fold, point the links, and report the page's title and sections.  Links to
# an anchor of this page stay (Chromium makes them PDF links); to another page of this
# PDF they go to SENTINEL + docname#id; to anything else on the site they lose their href
# (a "source" link keeps the function's full name).  A hidden list of links to every id of
# the article makes Chromium write a named destination for each (their pages and places).
PREPARE = """({docs, here, sentinel, twin}) => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll(".toggle-hidden").forEach(e => e.classList.remove("toggle-hidden"));
  const article = document.querySelector("article") || document.body;
  const docOf = url => url.pathname.replace(/^\\//, "").replace(/\\.html$/, "").replace(/\\/$/, "/index");
  for (const a of [...article.querySelectorAll("a[href]")]) {
    const url = new URL(a.getAttribute("href"), location.href);
    if (url.origin !== location.origin) continue;
    const doc = docOf(url);
    if (doc === here && url.hash) { a.setAttribute("href", url.hash); continue; }
    if (docs.includes(doc)) { a.setAttribute("href", sentinel + doc + url.hash); continue; }
    const p = a.closest("p");
    if (doc === twin && p && p.textContent.trim() === a.textContent.trim()) { p.remove(); continue; }
    if (a.classList.contains("cb-source") && a.title) {
      const code = a.querySelector("code");
      if (code) code.textContent = a.title;
    }
    a.replaceWith(...a.childNodes);
  }
  // Chromium prints a shadow or a gradient as a bitmap: none on paper (the theme's are !important).
  for (const e of document.querySelectorAll("body *")) {
    const style = getComputedStyle(e);
    if (style.boxShadow !== "none") e.style.setProperty("box-shadow", "none", "important");
    if (style.backgroundImage.includes("gradient")) e.style.setProperty("background-image", "none", "important");
  }
  const ids = [...article.querySelectorAll("[id]")].map(e => e.id).filter(id => id);
  const box = document.createElement("div");
  box.className = "commbook-pdf-dests";
  box.setAttribute("aria-hidden", "true");
  for (const id of ids) {
    const a = document.createElement("a");
    a.href = "#" + id;
    box.appendChild(a);
  }
  article.appendChild(box);
  const heading = s => s.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4");
  const text = h => { const c = h.cloneNode(true); c.querySelectorAll(".headerlink").forEach(e => e.remove());
                      return c.textContent.replace(/\\s+/g, " ").trim(); };
  const sections = [...article.querySelectorAll("section[id]")].filter(heading).map(s => ({
    id: s.id, level: Number(heading(s).tagName[1]), title: text(heading(s))}));
  const h1 = article.querySelector("h1");
  return {title: h1 ? text(h1) : document.title, sections};
}"""


class SiteError(RuntimeError):
    """The site to print is missing or incomplete."""


@dataclass
class Doc:
    """One printed page of the book: its PDF, title, sections and named destinations."""

    name: str
    part: str
    title: str = ""
    sections: list[dict] = field(default_factory=list)
    pdf: bytes = b""
    pages: int = 0
    dests: dict[str, tuple[int, float]] = field(default_factory=dict)  # id -> (page, top)
    seconds: float = 0.0


def _docnames(entries: list[dict]) -> Iterator[str]:
    for entry in entries or []:
        if "file" in entry:
            yield re.sub(r"\.(md|ipynb|rst)$", "", entry["file"])
        yield from _docnames(entry.get("sections", []))


def book_parts(toc: Path, lang: str) -> list[tuple[str, list[str]]]:
    """(part caption, docnames) of one language in ``_toc.yml`` order: the pages with a
    path component ``lang`` (chapters/zh/..., exercises/en/...); the caption without its
    language prefix ("中文 · ", "English · ")."""
    import yaml

    if lang not in LANGS:
        raise ValueError(f"lang: {lang!r} is not one of {LANGS}")
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    parts = data.get("parts") or [{"caption": "", "chapters": data.get("chapters", [])}]
    out = []
    for part in parts:
        docs = [d for d in _docnames(part.get("chapters", [])) if lang in d.split("/")[:-1]]
        if docs:
            words = (part.get("caption") or "").split(" · ")
            caption = " · ".join(words[1:] if len(words) > 1 and words[0] in ("中文", "English") else words)
            out.append((caption, docs))
    return out


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """The site served on 127.0.0.1 at a free port, in a thread; yields the base URL."""
    handler = type("Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def _twin(docname: str, lang: str) -> str:
    other = LANGS[1 - LANGS.index(lang)]
    return "/".join(other if p == lang else p for p in docname.split("/"))


def print_doc(page: object, base: str, doc: Doc, docs: list[str], lang: str, css: str) -> None:
    from pypdf import PdfReader

    start = time.perf_counter()
    page.goto(f"{base}{doc.name}.html", wait_until="load")
    page.evaluate(READY)
    page.add_style_tag(content=css)
    info = page.evaluate(PREPARE, {"docs": docs, "here": doc.name, "sentinel": SENTINEL,
                                   "twin": _twin(doc.name, lang)})
    page.evaluate(READY)
    doc.title, doc.sections = info["title"], info["sections"]
    doc.pdf = page.pdf(format="A4", print_background=True, prefer_css_page_size=True)
    reader = PdfReader(io.BytesIO(doc.pdf))
    doc.pages = len(reader.pages)
    for name, dest in reader.named_destinations.items():
        top = dest.get("/Top")
        doc.dests[str(name).lstrip("/")] = (reader.get_destination_page_number(dest),
                                            float(top) if top is not None else 842.0)
    doc.seconds = time.perf_counter() - start


def build_pdf(site: Path, lang: str, out: Path, toc: Path, browser: object, base: str) -> dict:
    """Print one language of the built ``site`` to ``out``; returns what it measured."""
    import yaml
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject, TextStringObject

    import commbook

    config = toc.parent / "_config.yml"
    title = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("title", "commbook") \
        if config.is_file() else "commbook"
    parts = [(caption, [Doc(name, caption) for name in names]) for caption, names in book_parts(toc, lang)]
    docs = [d for _, ds in parts for d in ds]
    if not docs:
        raise SiteError(f"{toc}: no page of language {lang!r}")
    missing = [d.name for d in docs if not (site / f"{d.name}.html").is_file()]
    if missing:
        raise SiteError(f"{site}: {len(missing)} page(s) of {toc.name} not built ({', '.join(missing[:3])}); "
                        "run `make book` first")
    css = PRINT_CSS.read_text(encoding="utf-8")
    names = [d.name for d in docs]
    page = browser.new_page()
    page.set_default_timeout(120_000)
    start = time.perf_counter()
    for i, doc in enumerate(docs, 1):
        print_doc(page, base, doc, names, lang, css)
        print(f"[{lang}] {i:2}/{len(docs)} {doc.name}: {doc.pages} pages, {doc.seconds:.1f} s", flush=True)
    version = getattr(commbook, "__version__", "?")
    front_pages, front = 2, b""
    for _ in range(4):  # the contents' page numbers depend on its own length
        page.set_content(front_html(lang, title, version, parts, front_pages), wait_until="load")
        page.evaluate("async () => { await document.fonts.ready; }")
        front = page.pdf(format="A4", prefer_css_page_size=True)
        n = len(PdfReader(io.BytesIO(front)).pages)
        if n == front_pages:
            break
        front_pages = n
    body_pages = sum(d.pages for d in docs)
    labels = [""] + [roman(i) for i in range(2, front_pages + 1)] + [str(i) for i in range(1, body_pages + 1)]
    heads = [""] * front_pages
    for doc in docs:
        heads += [""] + [f"{doc.part} · {doc.title}" if doc.part else doc.title] * (doc.pages - 1)
    page.set_content(overlay_html(labels, heads, lang), wait_until="load")
    page.evaluate("async () => { await document.fonts.ready; }")
    overlay = PdfReader(io.BytesIO(page.pdf(format="A4", prefer_css_page_size=True)))
    page.close()
    if len(overlay.pages) != len(labels):
        raise RuntimeError(f"overlay: {len(overlay.pages)} pages for {len(labels)}")

    writer = PdfWriter()
    first: dict[str, int] = {}
    sources = [(None, PdfReader(io.BytesIO(front)))] + [(d, PdfReader(io.BytesIO(d.pdf))) for d in docs]
    owner: list[Doc | None] = []
    for doc, reader in sources:
        if doc is not None:
            first[doc.name] = len(writer.pages)
        for p in reader.pages:
            writer.add_page(p)
            owner.append(doc)
    for i, p in enumerate(writer.pages):
        p.merge_page(overlay.pages[i])
        p.compress_content_streams()  # merge_page leaves the joined stream uncompressed

    def dest(docname: str, anchor: str) -> ArrayObject | None:
        target = next((d for d in docs if d.name == docname), None)
        if target is None:
            return None
        local, top = target.dests.get(anchor, (0, 842.0)) if anchor else (0, 842.0)
        ref = writer.pages[first[docname] + local].indirect_reference
        return ArrayObject([ref, NameObject("/XYZ"), NullObject(), FloatObject(top), NullObject()])

    links = 0
    for i, p in enumerate(writer.pages):
        for annot in p.get("/Annots") or []:
            a = annot.get_object()
            if a.get("/Subtype") != "/Link":
                continue
            action = a.get("/A")
            uri = str(action.get("/URI", "")) if action is not None else ""
            if uri.startswith(SENTINEL):
                docname, _, anchor = uri[len(SENTINEL):].partition("#")
                target = dest(docname, anchor)
            elif "/Dest" in a and owner[i] is not None:
                target = dest(owner[i].name, str(a["/Dest"]).lstrip("/"))
            else:
                continue
            if target is not None:
                a[NameObject("/Dest")] = target
                a.pop("/A", None)
                links += 1

    roots: dict[str, object] = {}
    for doc in docs:
        parent = None
        if doc.part:
            if doc.part not in roots:
                roots[doc.part] = writer.add_outline_item(title=doc.part, page_number=first[doc.name])
            parent = roots[doc.part]
        item = writer.add_outline_item(title=doc.title, page_number=first[doc.name], parent=parent)
        stack = [(1, item)]
        for s in doc.sections:
            if s["level"] < 2 or s["id"] not in doc.dests:
                continue
            while stack[-1][0] >= s["level"]:
                stack.pop()
            stack.append((s["level"], writer.add_outline_item(
                title=s["title"], page_number=first[doc.name] + doc.dests[s["id"]][0], parent=stack[-1][1])))
    writer.set_page_label(0, front_pages - 1, style="/r")
    writer.set_page_label(front_pages, len(writer.pages) - 1, style="/D", start=1)
    writer.add_metadata({"/Title": f"{title} ({WORDS[lang]['label']})", "/Author": "commbook authors",
                         "/Subject": f"commbook {version}"})
    writer._root_object[NameObject("/Lang")] = TextStringObject(WORDS[lang]["html_lang"])
    writer.page_mode = "/UseOutlines"
    remapped = pdf_unicode.fix_writer(writer, pdf_unicode.preferred())
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    seconds = time.perf_counter() - start
    print(f"[{lang}] {out}: {len(writer.pages)} pages ({front_pages} front), {len(docs)} chapter pages, "
          f"{links} links, {remapped} ToUnicode maps mended, {out.stat().st_size / 1e6:.1f} MB, {seconds:.0f} s "
          f"({sum(d.seconds for d in docs) / len(docs):.1f} s per page)", flush=True)
    return {"pages": len(writer.pages), "docs": len(docs), "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML (_build/html)")
    parser.add_argument("--lang", choices=LANGS, action="append", help="a language (default: both)")
    parser.add_argument("--out", type=Path, help="the PDF (one --lang only; default <site>/../pdf/commbook-<lang>.pdf)")
    parser.add_argument("--toc", type=Path, help="the book's _toc.yml (default: <site>/../../_toc.yml)")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    langs = args.lang or list(LANGS)
    if args.out and len(langs) != 1:
        parser.error("--out: give exactly one --lang with it")
    toc = (args.toc or site.parent.parent / "_toc.yml").resolve()
    if not (site / "index.html").is_file():
        print(f"error: {args.site}: no built site (index.html missing); run `make book` first", file=sys.stderr)
        return 2
    if not toc.is_file():
        print(f"error: {toc}: no _toc.yml (give the book's with --toc)", file=sys.stderr)
        return 2
    chromium = os.environ.get("COMMBOOK_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).is_file():
        print(f"error: no Chromium at {chromium} (apt-get install chromium, or set COMMBOOK_CHROMIUM)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    try:
        with serve(site) as base, sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            context = pw.chromium.launch_persistent_context(profile, executable_path=chromium, args=CHROMIUM_ARGS,
                                                            headless=True, service_workers="block",
                                                            viewport={"width": 1280, "height": 900})
            try:
                for lang in langs:
                    build_pdf(site, lang, args.out or site.parent / "pdf" / f"commbook-{lang}.pdf", toc, context, base)
            finally:
                context.close()
    except SiteError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
