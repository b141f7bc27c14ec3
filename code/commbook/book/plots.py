"""Figures of the book: one style, bilingual labels, and safe CJK font handling.

Every figure function takes ``lang`` ("zh" or "en") and labels itself from
:data:`LABELS`.  Chinese labels need a CJK font; :func:`find_cjk_font` looks for one
by family name among the fonts matplotlib knows.  When none is installed, a Chinese
figure is drawn with **English** labels and one :class:`CJKFontWarning` is issued:
the book never shows empty boxes ("tofu") in place of characters.

Figures are built with :class:`matplotlib.figure.Figure` directly (not through
``pyplot``), so they hold no global state and are not shown twice in notebooks;
:func:`figure_png` turns one into PNG bytes for ``IPython.display.Image`` or glue.

The figures of lecture P5 (topologies, collectives, all-reduce costs, mappings) live in
:mod:`commbook.book.p5.figures`, which builds on the style helpers here.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import struct
import sys
import warnings
import zlib
from typing import Iterable, Iterator, Sequence

import matplotlib


def _select_headless_backend() -> None:
    """Use Agg when nothing else was asked for and there is no display to draw on."""
    if os.environ.get("MPLBACKEND") or "ipykernel" in sys.modules:
        return  # an explicit choice, or a notebook kernel (inline backend)
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        matplotlib.use("Agg")


_select_headless_backend()

import numpy as np  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.axis import Axis  # noqa: E402
from matplotlib.table import Cell  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .names import display_name  # noqa: E402
from ..cost import effective_bandwidth, half_bandwidth_point  # noqa: E402
from .labels import LABELS  # noqa: E402
from ..hardware import Link  # noqa: E402
from ..units import GB, fmt_bytes, fmt_time  # noqa: E402

__all__ = [
    "CJK_FONT_CANDIDATES", "CJKFontWarning", "LABELS", "PALETTE", "COLUMN_IN", "SMALL_PT",
    "find_cjk_font", "resolve_lang", "label", "book_style",
    "figure_png", "min_font_pt", "PNG_KEYS", "label_line_ends", "TICK_FORMATS", "log_axis", "fig_effective_bandwidth",
]

CJK_FONT_CANDIDATES: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR",
    "Source Han Sans SC", "Source Han Sans CN", "Source Han Sans",
    "Noto Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
    "SimHei", "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
)
"""CJK font families tried in order (the Debian package ``fonts-noto-cjk`` provides
"Noto Sans CJK JP" as the first face of its .ttc files, which covers Chinese)."""

LATIN_FONT = "DejaVu Sans"
"""Latin, Greek and math glyphs come from matplotlib's bundled font; CJK glyphs fall
back to the CJK family (matplotlib >= 3.6 falls back glyph by glyph)."""

PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
)
"""Okabe–Ito colours: distinguishable with the common colour-vision deficiencies."""

COLUMN_IN = 6.9
"""The widest a figure is drawn, in inches: the book's text column (about 690 CSS px on a
desktop) at 100 px per inch, so that a figure is shown at most at its drawn scale there
(at :data:`FIGURE_DPI` its PNG has 3 pixels per CSS pixel)."""

SMALL_PT = 10.0
"""The smallest font size, in points, a figure of :data:`COLUMN_IN` width may use: on a
412 px phone the column is 364 px (:data:`PHONE_COLUMN_PX`), so such a figure is shown at
364 / 6.9 = 53 px per inch and 10 pt text at 10 / 72 * 53 = 7.3 px (the rule: at least
7 px there, 9 px on the desktop column, where it is 13.9 px)."""

PHONE_COLUMN_PX = 364.0
"""The text column on a 412 x 915 phone, in CSS px (measured in the built site: an
``<img>`` of the article is at most this wide there)."""


class CJKFontWarning(UserWarning):
    """No CJK font is installed: Chinese figure labels fall back to English."""


_warned_no_cjk = False


@functools.lru_cache(maxsize=None)
def find_cjk_font(candidates: tuple[str, ...] = CJK_FONT_CANDIDATES) -> str | None:
    """Return the first family in ``candidates`` that matplotlib has, else ``None``.

    Matching is by exact family name (case-insensitive) against
    ``matplotlib.font_manager.fontManager``; nothing falls back to a look-alike, so
    ``None`` really means "no CJK font".  After installing a font, delete
    matplotlib's font cache (``matplotlib.get_cachedir()``) so that it is seen.
    """
    installed = {f.name.lower(): f.name for f in font_manager.fontManager.ttflist}
    for name in candidates:
        if name.lower() in installed:
            return installed[name.lower()]
    return None


def resolve_lang(lang: str) -> str:
    """The language a figure can actually be labelled in.

    ``"en"`` stays ``"en"``.  ``"zh"`` stays ``"zh"`` when a CJK font exists;
    otherwise it becomes ``"en"`` and a :class:`CJKFontWarning` is issued (once per
    process).  Any other value raises ``ValueError``.
    """
    global _warned_no_cjk
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {sorted(LABELS)}, got {lang!r}")
    if lang == "en" or find_cjk_font() is not None:
        return lang
    if not _warned_no_cjk:
        _warned_no_cjk = True
        warnings.warn(
            "No CJK font found (tried: " + ", ".join(CJK_FONT_CANDIDATES) + "). "
            "Chinese figures are labelled in English instead. To fix: install one, e.g. "
            "'apt-get install fonts-noto-cjk' (or run 'make venv' as root), then delete "
            f"matplotlib's font cache in {matplotlib.get_cachedir()}.",
            CJKFontWarning,
            stacklevel=3,
        )
    return "en"


def label(key: str, lang: str, **fields: object) -> str:
    """Label ``key`` in ``lang`` (already resolved with :func:`resolve_lang`), with
    ``{field}`` placeholders filled from ``fields``."""
    if key.startswith("algo_"):  # algorithm names come from the one registry
        text = display_name("all_reduce", key[len("algo_"):], lang)
    else:
        text = LABELS[lang][key]
    return text.format(**fields) if fields else text


def _style_rc(lang: str) -> dict:
    families = [LATIN_FONT]
    cjk = find_cjk_font()
    if lang == "zh" and cjk is not None:
        families.append(cjk)
    return {
        # explicit family names (not the generic "sans-serif"), so that text objects
        # keep their fonts even when drawn outside this context
        "font.family": families,
        "font.size": 10.5,
        "axes.titlesize": 11.5,
        "axes.labelsize": 10.5,
        "xtick.labelsize": SMALL_PT,
        "ytick.labelsize": SMALL_PT,
        "legend.title_fontsize": SMALL_PT,
        "figure.titlesize": 12,
        "figure.labelsize": 10.5,
        "axes.prop_cycle": matplotlib.cycler(color=list(PALETTE)),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.axisbelow": True,
        "grid.alpha": 0.3,
        "grid.linewidth": 0.6,
        "lines.linewidth": 1.8,
        "legend.frameon": False,
        "legend.fontsize": SMALL_PT,
        "figure.figsize": (COLUMN_IN, 4.3),
        "figure.dpi": 100,
        "savefig.dpi": FIGURE_DPI,
        "figure.constrained_layout.use": True,
        "axes.unicode_minus": False,
    }


@contextlib.contextmanager
def book_style(lang: str = "en") -> Iterator[str]:
    """Context manager: the book's matplotlib style with fonts for ``lang``.

    Yields the language the labels should use (see :func:`resolve_lang`).
    """
    used = resolve_lang(lang)
    with matplotlib.rc_context(_style_rc(used)):
        yield used


PNG_KEYS = {"min_font_pt": "commbook:min-font-pt", "width_in": "commbook:width-in",
            "dpi": "commbook:dpi"}
"""The PNG text keys :func:`figure_png` writes: the smallest font size (points) of the
figure's visible text, the figure's width (inches) and the dpi it was rendered at.  The
browser check (tests/browser/test_figures.py) reads them to compute each figure's
smallest text in CSS px as drawn on the page: ``min_font_pt / 72 * shown_px / width_in``."""


def min_font_pt(fig: Figure) -> float | None:
    """The smallest font size, in points, of the text ``fig`` draws (titles, labels, tick
    labels, legends, annotations, table cells): non-empty text artists whose every holder
    is visible, tick labels only of the ticks inside the view limits (those drawn).
    ``None`` when the figure draws no text."""
    sizes = [t.get_fontsize() for t in _drawn_texts(fig) if t.get_text().strip()]
    return min(sizes) if sizes else None


def _drawn_texts(artist) -> Iterator[Text]:
    """The text artists that drawing ``artist`` draws (its visible subtree)."""
    if not artist.get_visible():
        return
    if isinstance(artist, Text):
        yield artist
    if isinstance(artist, Axis):  # the ticks in view, not every tick object kept
        children = [artist.label, artist.offsetText]
        for tick in artist._update_ticks():
            children += [tick.label1, tick.label2]
    elif isinstance(artist, Cell):  # a table cell holds its text outside its children
        children = [artist.get_text()]
    elif isinstance(artist, Axes) and not artist.axison:  # ax.axis("off"): no axes drawn
        children = [c for c in artist.get_children() if not isinstance(c, Axis)]
    else:
        children = artist.get_children()
    for child in children:
        yield from _drawn_texts(child)


FIGURE_DPI = 300
"""Pixels per inch of a chapter figure: print resolution.  A 6.9 in figure
(:data:`COLUMN_IN`) is 2,070 px, three times the ~690 px column: sharp on 2x and 3x
screens, and 300 dpi in the PDF, where it is printed at the column's width."""


def figure_png(fig: Figure, dpi: int = FIGURE_DPI) -> bytes:
    """Render ``fig`` to PNG bytes (for ``IPython.display.Image`` or ``myst_nb.glue``).

    The image is stored with a palette of 256 colours (Pillow's median cut, no
    dithering): a figure's flat colours and anti-aliased edges need no more, and the
    file is about 40 % of the full-colour one.  The PNG carries, as ``tEXt`` chunks
    (:data:`PNG_KEYS`), the smallest font size of the figure's text, its width in inches
    and ``dpi``: what the browser check needs to compute the smallest text a reader sees.

    >>> fig = Figure(figsize=(2, 1)); _ = fig.text(0.5, 0.5, "n", fontsize=10)
    >>> from PIL import Image
    >>> Image.open(io.BytesIO(figure_png(fig, dpi=100))).size
    (200, 100)
    """
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)  # draws: ticks and layout are final now
    smallest = min_font_pt(fig)
    meta = {PNG_KEYS["min_font_pt"]: "none" if smallest is None else f"{smallest:.4g}",
            PNG_KEYS["width_in"]: f"{fig.get_figwidth():.4g}", PNG_KEYS["dpi"]: str(dpi)}
    image = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        small, format="PNG", optimize=True)
    return _with_text_chunks(small.getvalue(), meta)


def _with_text_chunks(png: bytes, meta: dict[str, str]) -> bytes:
    """``png`` with one ``tEXt`` chunk per item of ``meta`` inserted after its header."""
    end_of_ihdr = 8 + 4 + 4 + 13 + 4  # signature, then IHDR: length, type, 13 bytes, CRC
    assert png[12:16] == b"IHDR", "not a PNG"
    chunks = b""
    for key, value in meta.items():
        body = b"tEXt" + key.encode("latin-1") + b"\0" + value.encode("latin-1")
        chunks += struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    return png[:end_of_ihdr] + chunks + png[end_of_ihdr:]


def label_line_ends(ax, lines: Sequence, fontsize: float = SMALL_PT, pad: float = 0.015) -> list:
    """Write each line's label at its right end, just outside ``ax``, in its colour,
    instead of a legend; labels whose ends are close are spread apart vertically so that
    they never overlap (one text line apart).  Call it after the axes' limits are final.
    Returns the texts (gid ``"end:<line gid or label>"``)."""
    ax.figure.canvas.draw()  # limits autoscaled and the layout done: the axes' final height
    to_axes = ax.transScale + ax.transLimits  # data -> axes fraction, log scales included
    ends = []
    for line in lines:
        x, y = line.get_xdata(), line.get_ydata()
        ends.append([float(to_axes.transform((x[-1], y[-1]))[1]), line])
    ends.sort(key=lambda e: e[0])
    height_pt = ax.get_window_extent().height * 72 / ax.figure.dpi
    gap = 1.5 * fontsize / max(height_pt, 1e-6)  # a text box is ~1.4 font sizes tall
    for i in range(1, len(ends)):  # push up what sits too close to the one below
        ends[i][0] = max(ends[i][0], ends[i - 1][0] + gap)
    over = ends[-1][0] - 1.0 if ends else 0.0
    if over > 0:  # then back down, keeping the gaps, if the top one left the axes
        for e in ends:
            e[0] -= over
        for i in range(len(ends) - 2, -1, -1):
            ends[i][0] = min(ends[i][0], ends[i + 1][0] - gap)
    out = []
    for yf, line in ends:
        name = line.get_label()
        out.append(ax.text(1 + pad, yf, name, transform=ax.transAxes, ha="left", va="center",
                           fontsize=fontsize, color=line.get_color(), clip_on=False,
                           gid=f"end:{line.get_gid() or name}"))
    return out


def _bytes_tick(x: float, _pos: object = None) -> str:
    return fmt_bytes(x) if x >= 1 else f"{x:g} B"


def _time_tick(t: float, _pos: object = None) -> str:
    return fmt_time(t, digits=3) if t > 0 else "0"


TICK_FORMATS = {"bytes": _bytes_tick, "time": _time_tick, "plain": lambda v, _pos=None: f"{v:g}"}
"""Tick label formats: byte counts (decimal units), times (s/ms/µs/ns) and plain numbers."""


def log_axis(ax, which: str = "x", unit: str = "bytes", base: int = 10,
             subs: Sequence[float] = (1.0,)) -> None:
    """Put the ``which`` ("x" or "y") axis of ``ax`` on a log scale whose major ticks
    (at ``subs`` times the powers of ``base``; (1, 2, 5) for a short range) are labelled
    as ``unit`` (a key of :data:`TICK_FORMATS`) and minor ticks are not labelled."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    axis.set_major_locator(LogLocator(base=base, subs=subs, numticks=12))
    axis.set_major_formatter(FuncFormatter(TICK_FORMATS[unit]))
    axis.set_minor_formatter(NullFormatter())


_effbw = np.vectorize(effective_bandwidth, otypes=[float])


def fig_effective_bandwidth(
    links: Iterable[Link], lang: str = "en", sizes: Sequence[float] | np.ndarray | None = None
) -> Figure:
    """Effective bandwidth n/T(n) against message size, one curve per link (log–log).

    Each link's half-bandwidth point n½ = αβ is marked where its curve reaches β/2,
    and its peak β is drawn as a faint dotted line.  Curves carry ``gid``
    ``"effbw:<name>"`` and the markers ``"nhalf:<name>"`` (in bytes and GB/s), so tests
    and readers can find them.

    Parameters
    ----------
    links : iterable of :class:`~commbook.hardware.Link`
    lang : "zh" or "en"
        Label language; "zh" falls back to English without a CJK font.
    sizes : array of bytes, optional
        Message sizes to evaluate; default 100 B to 1 GB, log-spaced.
    """
    links = list(links)
    if not links:
        raise ValueError("fig_effective_bandwidth needs at least one link")
    n = np.logspace(2, 9, 281) if sizes is None else np.asarray(sizes, dtype=float)
    if n.ndim != 1 or n.size < 2 or np.any(n <= 0):
        raise ValueError("sizes must be a 1-D array of at least two positive byte counts")
    n = np.sort(n)

    with book_style(lang) as lang:
        fig = Figure()
        ax = fig.add_subplot()
        for i, link in enumerate(links):
            color = PALETTE[i % len(PALETTE)]
            bw = _effbw(n, link.alpha, link.beta) / GB
            ax.plot(n, bw, color=color, label=link.name, gid=f"effbw:{link.name}")
            ax.axhline(link.beta / GB, color=color, lw=0.8, ls=":", alpha=0.6,
                       gid=f"beta:{link.name}")
            nh = half_bandwidth_point(link.alpha, link.beta)
            ax.plot([nh], [link.beta / 2 / GB], marker="o", ms=6, ls="none", color=color,
                    markeredgecolor="white", gid=f"nhalf:{link.name}")
        # one legend entry explains all the markers
        ax.plot([], [], marker="o", ls="none", color="0.4", label=label("n_half", lang))
        log_axis(ax, "x", "bytes")
        log_axis(ax, "y", "plain")
        ax.set_xlim(n[0], n[-1])
        ax.set_xlabel(label("size", lang))
        ax.set_ylabel(label("effbw", lang))
        ax.set_title(label("effbw_title", lang))
        ax.legend(loc="lower right")
        ax.set_ylim(bottom=max(ax.get_ylim()[0], 1e-3 * min(l.beta for l in links) / GB))
    return fig

