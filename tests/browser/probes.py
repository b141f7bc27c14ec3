"""JavaScript that tests/browser/test_browser.py evaluates in the page (Playwright's
``page.evaluate``): each snippet returns plain data for the Python side to judge."""

from __future__ import annotations

# MathJax has typeset the page and the web fonts are in.
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
}"""

# Sphinx's math nodes (class "math") and what MathJax made of them; the article's text
# without formulas and code, where no TeX should be left.
MATH = """() => {
  const math = [...document.querySelectorAll("article .math")];
  const untypeset = math.filter(m => !m.querySelector("mjx-container")).map(m => m.textContent.slice(0, 60));
  const errors = [...document.querySelectorAll("article mjx-merror")].map(e => e.textContent.slice(0, 60));
  const clone = document.querySelector("article").cloneNode(true);
  clone.querySelectorAll("mjx-container, pre, code, script, style, textarea").forEach(e => e.remove());
  return {count: math.length, untypeset, errors, text: clone.textContent};
}"""

IMAGES = """() => [...document.images].map(img => ({
  src: img.getAttribute("src"), ok: img.complete && img.naturalWidth > 0}))"""

TEXT = """() => document.querySelector("article").textContent"""

# The article's sections in document order, and the height of each leaf (no sections
# inside) but the page's first: the twin check scrolls one of those to the top.
SECTIONS = """() => {
  const all = [...document.querySelectorAll("article section[id]")];
  return {ids: all.map(s => s.id),
          leaf: all.map((s, i) => i > 0 && !s.querySelector("section[id]") ? s.getBoundingClientRect().height : 0)};
}"""

# After a scroll: let the lazy explorers see it (two frames), then wait for the chart
# library if that started loading, so that following a link does not abort its request.
SETTLED = """async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const tag = document.querySelector('script[src*="commbook-vega"]');
  if (tag && !(window.vega && window.vegaLite)) await new Promise(r => {
    tag.addEventListener("load", r, {once: true});
    tag.addEventListener("error", r, {once: true});
  });
}"""

TOP_OF = """(id) => {
  const el = document.getElementById(id);
  return el ? el.getBoundingClientRect().top : null;
}"""

# The page's width against the window's, and the first few article elements that stick
# out (tables, code blocks and formulas scroll inside their own boxes: not counted).
OVERFLOW = """() => ({
  scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth,
  wide: [...document.querySelectorAll("article *")]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
                 && !e.closest("table, pre, .highlight, mjx-container, .output"))
    .slice(0, 5).map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.slice(0, 60)}`)})"""

# WCAG 2 contrast of captions and table notes against the background they are drawn on
# (the first opaque background up the tree), under the theme given ("light" or "dark").
CONTRAST = """(theme) => {
  document.documentElement.dataset.theme = theme;
  const rgba = c => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => {
    const f = v => (v /= 255) <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) return c;
    }
    return [255, 255, 255, 1];
  };
  const sel = "article figcaption, article table caption, article p.commbook-note";
  const out = [...document.querySelectorAll(sel)].map(el => {
    const fg = rgba(getComputedStyle(el).color), bg = background(el);
    const seen = [0, 1, 2].map(i => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
    const [hi, lo] = [lum(seen), lum(bg)].sort((a, b) => b - a);
    return {what: el.tagName.toLowerCase() + (el.className ? "." + el.className : ""),
            color: getComputedStyle(el).color, bg: `rgb(${bg.slice(0, 3).join(", ")})`,
            ratio: Math.round((hi + 0.05) / (lo + 0.05) * 100) / 100, text: el.textContent.trim().slice(0, 40)};
  });
  document.documentElement.dataset.theme = "light";
  return out;
}"""

# Draw the sample (an emoji) in the font of the first article text that contains it and
# count coloured pixels: a colour emoji font draws some, a missing glyph's box does not.
EMOJI = """(sample) => {
  const el = [...document.querySelectorAll("article h1, article h2, article h3, article p, article li")]
    .find(e => e.textContent.includes(sample));
  const font = getComputedStyle(el).fontFamily;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const ctx = canvas.getContext("2d");
  ctx.font = `48px ${font}`;
  ctx.textBaseline = "top";
  ctx.fillStyle = "#000";
  ctx.fillText(sample, 0, 0);
  const d = ctx.getImageData(0, 0, 64, 64).data;
  let colored = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] > 0 && Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40) colored++;
  }
  return {font, colored};
}"""
