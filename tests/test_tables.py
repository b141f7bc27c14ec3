"""The link table (demo 01-1) reproduces the source's anchors and renders in both languages;
the preset sources it draws on cite documents without narrating."""
from __future__ import annotations

import re

import pytest

from commbook import hardware as hw
from commbook.book.p5.links import SIZES, demo_01_1
from commbook.book.text import texts
from commbook.units import GB, KB, MB, fmt_rate

LINKS = [hw.NVLINK4, hw.NVLINK5, hw.IB_NDR, hw.IB_HDR, hw.PCIE_GEN5, hw.ROCE_100G, hw.ICI_V5E]


def test_anchors_of_the_link_table():
    t = demo_01_1([hw.NVLINK4, hw.IB_NDR, hw.ICI_V5E], [4 * KB])
    assert t.column("n_half") == pytest.approx([900 * KB, 250 * KB, 45 * KB])
    assert t.column("at_4000")[0][1] == pytest.approx(4e3 / (2e-6 * 450e9 + 4e3))  # n / (αβ + n)
    assert [t.cell(i, "at_4000") for i in range(3)] == ["1.99 GB/s (0.44%)", "0.787 GB/s (1.6%)", "3.67 GB/s (8.2%)"]


def test_every_link_gets_half_of_beta_at_its_half_bandwidth_point():
    for link in LINKS:
        bw, frac = demo_01_1([link], [link.n_half]).value(0, f"at_{int(link.n_half)}")
        assert frac == pytest.approx(0.5)
        assert bw == pytest.approx(link.beta / 2)


def test_rows_are_monotone_and_below_beta():
    t = demo_01_1(LINKS)
    for row in t.rows:
        cells = [row[f"at_{int(n)}"] for n in SIZES]
        assert [bw for bw, _ in cells] == sorted(bw for bw, _ in cells)
        assert all(0 < f < 1 for _, f in cells)
    assert SIZES[0] == 4 * KB and SIZES[-1] == 256 * MB


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_render(lang):
    t = demo_01_1(LINKS)
    html = t.to_html(lang)
    assert html.count("<tr>") == len(LINKS) + 1
    assert texts("p5").get("links.h_beta", lang) in html
    assert "900 KB" in html and "0.44%" in html
    md = t.to_markdown(lang)
    assert sum(line.startswith("|") for line in md.splitlines()) == len(LINKS) + 2


def test_render_rejects_bad_input():
    with pytest.raises(ValueError, match="lang"):
        demo_01_1([hw.IB_NDR]).to_html("fr")
    with pytest.raises(ValueError, match="size"):
        demo_01_1([hw.IB_NDR], [-1])
    assert fmt_rate(450 * GB, 3) == "450 GB/s" and fmt_rate(1440 * GB, 3) == "1,440 GB/s"


def test_only_lecture_demo_keys_get_the_demo_prefix():
    from commbook.book.tables import Table
    t = lambda key: Table(key=key, title={"en": "Links", "zh": "链路"}, columns=["a"],
                          headers={"en": ["a"], "zh": ["a"]}, rows=[[1]])
    assert "<caption>Demo 03-1: Links</caption>" in t("03-1").to_html("en")
    assert "<caption>演示 02-2b：链路</caption>" in t("02-2b").to_html("zh")
    assert "<caption>Links</caption>" in t("hardware").to_html("en")
    assert t("hardware").to_text("zh").startswith("链路")


@pytest.mark.parametrize("preset", sorted({**hw.LINKS, **hw.CHIPS}))
def test_preset_sources_cite_a_document_without_narrating(preset):
    """The sources appear in the presets table of the §0 page: each names a datasheet, spec,
    report or book, says when α is assumed, and never narrates the lecture."""
    obj = hw.LINKS.get(preset) or hw.CHIPS[preset]
    assert not re.search(r"lecture|讲义|seed \d", obj.source, re.I), obj.source
    assert re.search(r"datasheet|spec|Report|Table \d|How to Scale Your Model|export variant",
                     obj.source), obj.source
    if isinstance(obj, hw.Link) and obj.alpha_range is None:
        assert "assumed" in obj.source, obj.source   # no datasheet gives α


def test_a_column_of_sentences_keeps_its_width():
    """A text column whose longest cell is wider than PROSE_WIDTH is marked cb-prose (so
    it does not wrap a word per line); short text and numbers are not."""
    from commbook.book.tables import PROSE_WIDTH, Table
    long = "N a power of two (otherwise two more steps)"
    assert len(long) > PROSE_WIDTH
    t = Table(key="t", title={"en": "t", "zh": "表"}, columns=["name", "n", "why"],
              headers={"en": ["name", "n", "why"], "zh": ["名", "n", "因"]},
              rows=[["ring", 510, long], ["tree", 16, "none"]])
    page = t.to_html("en")
    assert f'<td class="cb-prose">{long}</td>' in page and '<td class="cb-prose">none</td>' in page
    assert "<td>ring</td>" in page and '<td style="text-align:right">510</td>' in page


def test_dataclass_rows_take_their_format_from_the_field_suffix():
    from dataclasses import dataclass
    from commbook.book.tables import Table

    @dataclass(frozen=True)
    class Step:
        time_s: float

    @dataclass(frozen=True)
    class Row:
        algo: str
        n_bytes: float
        share_frac: float
        ring: Step
        p: int

    t = Table(key="x", title={"en": "t", "zh": "表"}, columns=["algo", "n_bytes", "share_frac", "ring.time_s", "p"],
              headers={l: ["a", "n", "share", "t", "p"] for l in ("en", "zh")},
              rows=[Row("ring", 4 * KB, 0.25, Step(2.5e-6), 1024)], formats={"ring.time_s": 2})
    assert t.cells("en") == [["ring", "4 KB", "25%", "2.5 µs", "1024"]]
    assert t.find(algo="ring")["ring"] == Step(2.5e-6) and t.column("ring.time_s") == [2.5e-6]
    with pytest.raises(ValueError, match="unit suffix"):
        Table(key="x", title={"en": "t", "zh": "表"}, columns=["p"], headers={"en": ["p"], "zh": ["p"]},
              rows=[Row("ring", 1.0, 0.1, Step(1.0), 2)], formats={"p": 3})
    with pytest.raises(ValueError, match="row 0 lacks"):
        Table(key="x", title={"en": "t", "zh": "表"}, columns=["ring.bw"], headers={"en": ["b"], "zh": ["b"]},
              rows=[Row("ring", 1.0, 0.1, Step(1.0), 2)])
