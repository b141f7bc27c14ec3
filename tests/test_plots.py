"""Figures: Chinese labels render with real glyphs (or fall back to English, loudly),
and the effective-bandwidth figure draws what it claims."""
from __future__ import annotations

import io
import logging
import re
import warnings

import matplotlib
import numpy as np
import pytest
from matplotlib.text import Text

from commbook import hardware as hw
from commbook.book import plots
from commbook.cost import effective_bandwidth, half_bandwidth_point
from commbook.units import GB

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
GLYPH_PROBLEM = re.compile(r"missing from font|does not have a glyph|findfont: Font family", re.I)
LINKS = [hw.NVLINK4, hw.IB_NDR, hw.ICI_V5E]


def _render(fig) -> None:
    """Draw every text of ``fig`` (PNG into memory): glyph lookups happen here."""
    fig.savefig(io.BytesIO(), format="png")


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def _draw_zh(caplog):
    """Build and render a zh figure; return (figure, warnings, glyph problems)."""
    caplog.set_level(logging.WARNING, logger="matplotlib")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = plots.fig_effective_bandwidth(LINKS, lang="zh")
        _render(fig)
    problems = [str(w.message) for w in caught if GLYPH_PROBLEM.search(str(w.message))]
    problems += [r.getMessage() for r in caplog.records if GLYPH_PROBLEM.search(r.getMessage())]
    return fig, caught, problems


def _assert_english_fallback(fig, caught) -> None:
    cjk_warnings = [w for w in caught if issubclass(w.category, plots.CJKFontWarning)]
    assert len(cjk_warnings) == 1, f"expected one CJKFontWarning, got {len(cjk_warnings)}"
    assert "fonts-noto-cjk" in str(cjk_warnings[0].message)
    texts = _texts(fig)
    assert plots.LABELS["en"]["effbw_title"] in texts
    assert not [t for t in texts if CJK.search(t)], "CJK text drawn without a CJK font"


# ----------------------------------------------------------------------------- CJK
def test_zh_figure_has_no_missing_glyphs(caplog, cjk_font):
    """Without a CJK font: skipped with the reason (failed with CI=true);
    test_fallback_in_this_environment then checks the English fallback."""
    fig, _caught, problems = _draw_zh(caplog)
    assert not problems, f"glyph problems with font {cjk_font!r}: {problems[:5]}"
    texts = _texts(fig)
    assert plots.LABELS["zh"]["effbw_title"] in texts
    assert any(CJK.search(t) for t in texts)


def test_fallback_in_this_environment(caplog, monkeypatch):
    font = plots.find_cjk_font()
    if font is not None:
        pytest.skip(f"CJK font {font!r} is installed, so there is no fallback here; "
                    "test_fallback_simulated covers it")
    monkeypatch.setattr(plots, "_warned_no_cjk", False)
    fig, caught, problems = _draw_zh(caplog)
    _assert_english_fallback(fig, caught)
    assert not problems, problems[:5]


def test_fallback_simulated(caplog, monkeypatch):
    """Pretend no CJK font exists: English labels, exactly one warning for two figures."""
    from matplotlib import font_manager

    names = {n.lower() for n in plots.CJK_FONT_CANDIDATES}
    visible = [f for f in font_manager.fontManager.ttflist if f.name.lower() not in names]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", visible)
    monkeypatch.setattr(plots, "_warned_no_cjk", False)
    plots.find_cjk_font.cache_clear()
    try:
        assert plots.find_cjk_font() is None
        fig, caught, problems = _draw_zh(caplog)
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            plots.fig_effective_bandwidth(LINKS, lang="zh")
    finally:
        monkeypatch.undo()
        plots.find_cjk_font.cache_clear()
    assert not [w for w in again if issubclass(w.category, plots.CJKFontWarning)], \
        "the fallback must warn only once per process"
    _assert_english_fallback(fig, caught)
    assert not problems, problems[:5]


def test_labels_have_no_mathtext():
    # a string with $...$ is drawn entirely in the math font, which has no CJK glyphs
    for lang, table in plots.LABELS.items():
        for key, text in table.items():
            assert "$" not in text, f"{lang}/{key} uses mathtext: {text!r}"
    assert plots.LABELS["zh"].keys() == plots.LABELS["en"].keys()


def test_unknown_language_is_rejected():
    with pytest.raises(ValueError, match="lang"):
        plots.fig_effective_bandwidth(LINKS, lang="fr")


def test_headless_backend(monkeypatch):
    import os

    if os.environ.get("DISPLAY") or os.environ.get("MPLBACKEND"):
        pytest.skip("a display or an explicit MPLBACKEND is set: plots keeps that backend")
    assert matplotlib.get_backend().lower() == "agg"


# ----------------------------------------------------------------------------- content
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_effective_bandwidth_figure(lang):
    links = [hw.NVLINK4, hw.NVLINK5, hw.IB_NDR, hw.IB_HDR, hw.PCIE_GEN5, hw.ROCE_100G, hw.ICI_V5E]
    fig = plots.fig_effective_bandwidth(links, lang=lang)
    (ax,) = fig.axes
    lines = ax.get_lines()
    curves = [ln for ln in lines if (ln.get_gid() or "").startswith("effbw:")]
    marks = {ln.get_gid()[len("nhalf:"):]: ln for ln in lines
             if (ln.get_gid() or "").startswith("nhalf:")}
    assert len(curves) == len(links), "one curve per link"
    assert [c.get_gid()[len("effbw:"):] for c in curves] == [link.name for link in links]
    for link in links:
        x, y = marks[link.name].get_data()
        assert x[0] == pytest.approx(half_bandwidth_point(link.alpha, link.beta))
        assert y[0] == pytest.approx(link.beta / 2 / GB)
    # each curve passes through its marker and stays below its peak beta
    for curve, link in zip(curves, links):
        xs, ys = curve.get_data()
        at_half = np.interp(np.log(link.n_half), np.log(xs), ys)
        assert at_half == pytest.approx(link.beta / 2 / GB, rel=1e-2)
        assert np.all(ys < link.beta / GB)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    _render(fig)


def test_custom_sizes_and_validation():
    fig = plots.fig_effective_bandwidth([hw.IB_NDR], sizes=[1e3, 1e6, 1e9])
    (curve,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "effbw:InfiniBand NDR"]
    xs, ys = curve.get_data()
    assert list(xs) == [1e3, 1e6, 1e9]
    assert ys[1] == pytest.approx(effective_bandwidth(1e6, hw.IB_NDR.alpha, hw.IB_NDR.beta) / GB, rel=1e-12)
    with pytest.raises(ValueError):
        plots.fig_effective_bandwidth([])
    with pytest.raises(ValueError):
        plots.fig_effective_bandwidth([hw.IB_NDR], sizes=[0, 1e3])


def test_figure_png_is_png():
    png = plots.figure_png(plots.fig_effective_bandwidth([hw.ICI_V5E]))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
