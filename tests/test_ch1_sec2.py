"""Chapter §1.2 (network performance models): the page's numbers, tables and figures
(``commbook.book.ch1.models`` and ``chapters/{zh,en}/ch1/02-performance-models.md``).

Every check compares the book's value with the chapter's stated result at the chapter's own
rounding, with a closed form written out here, or with an independent numpy computation; where
the chapter is wrong, both numbers are pinned.
"""
from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from conftest import executed_glue

from commbook import hardware as hw
from commbook import physics
from commbook.book.ch1 import models as m
from commbook.cost import LogP
from commbook.measure import load_log
from commbook.units import GB, KB, MB, fmt_bytes, fmt_rate, fmt_time, ms, us

ROOT = Path(__file__).resolve().parents[1]
PAGE = {lang: ROOT / "chapters" / lang / "ch1" / "02-performance-models.md" for lang in ("en", "zh")}


# ============================================================================ Table 1
# The chapter's Table 1 as printed: α range (µs), β (GB/s), n* as printed and its unit.
CHAPTER_TABLE1 = {
    "NVLINK4_CHAPTER": ((1, 2), 450, 0.7, MB),
    "IB_NDR_CHAPTER": ((1, 3), 50, 100, KB),
    "IB_HDR": ((2, 5), 25, 87.5, KB),
    "PCIE_GEN5": ((2, 5), 64, 224, KB),
    "ROCE_100G": ((5, 10), 12.5, 93.7, KB),
}


def _decimals(x: float) -> int:
    s = f"{x:g}"
    return len(s.split(".")[1]) if "." in s else 0


def test_table1_rows_are_the_presets_with_their_ranges():
    t = m.table1()
    assert [r["link"] for r in t.rows] == list(CHAPTER_TABLE1)
    for row in t.rows:
        (lo, hi), beta, _, _ = CHAPTER_TABLE1[row["link"]]
        link = getattr(hw, row["link"])
        assert row["alpha_range"] == pytest.approx((lo * us, hi * us))
        assert row["alpha"] == pytest.approx((lo + hi) / 2 * us) == link.alpha
        assert row["beta"] == pytest.approx(beta * GB)
        assert row["n_star"] == pytest.approx((lo + hi) / 2 * us * beta * GB)


@pytest.mark.parametrize("key", list(CHAPTER_TABLE1))
def test_table1_nstar_against_the_printed_column(key):
    """n* = αβ at the midpoint α; every printed value is the computed one at the printed
    precision, except Ethernet's 93.75 KB, printed 93.7 (cut off, not rounded)."""
    (lo, hi), beta, printed, unit = CHAPTER_TABLE1[key]
    exact = (Fraction(lo) + Fraction(hi)) / 2 / 10 ** 6 * Fraction(beta) * 10 ** 9 / int(unit)  # in `unit`
    row = next(r for r in m.table1().rows if r["link"] == key)
    assert row["n_star"] == pytest.approx(float(exact) * unit, rel=1e-12)
    assert m.CHAPTER_PRINTED_NSTAR[key][0] == pytest.approx(printed * unit)
    q = Decimal(1).scaleb(-_decimals(printed))
    value = Decimal(exact.numerator) / Decimal(exact.denominator)
    rounded = value.quantize(q, rounding=ROUND_HALF_UP)
    if key == "ROCE_100G":
        assert value == Decimal("93.75")
        assert rounded == Decimal("93.8") != Decimal(str(printed))   # rounding gives 93.8 ...
        assert value.quantize(q, rounding=ROUND_DOWN) == Decimal(str(printed))  # ... the chapter cut it off
    else:
        assert rounded == Decimal(str(printed))
    if key == "NVLINK4_CHAPTER":
        assert float(exact) * unit == pytest.approx(675 * KB)


def test_table1_notes_are_built_from_the_parameters():
    t = m.table1()
    en, zh = t.notes["en"], t.notes["zh"]
    for r in m.TABLE1:
        assert f"{r.link.alpha / us:g} µs" in en[0] and f"{r.link.alpha / us:g} µs" in zh[0]
    both = 2 * hw.NVLINK4_CHAPTER.beta
    assert f"{both / GB:.0f} GB/s" in en[1] and f"{hw.NVLINK4_CHAPTER.beta / GB:.0f} GB/s" in en[1]
    assert "93.75 KB" in t.to_text("en") and "675 KB" in t.to_text("zh")


def test_intra_and_inter_node_regimes_corrected(page_glue):
    """NVLink has the largest n* of Table 1, so no message is bandwidth-bound in the node and
    latency-bound outside it (the chapter says the opposite); the sizes between the two n*
    are latency-bound on NVLink and bandwidth-bound on the network."""
    nv = hw.NVLINK4_CHAPTER
    others = [r.link for r in m.TABLE1 if r.key != "NVLINK4_CHAPTER"]
    sizes = np.logspace(2, 9, 2001)
    for link in others:
        alpha_share_nv = nv.alpha / (nv.alpha + sizes / nv.beta)
        alpha_share_x = link.alpha / (link.alpha + sizes / link.beta)
        assert not np.any((alpha_share_nv < 0.5) & (alpha_share_x > 0.5))
        assert np.any((alpha_share_nv > 0.5) & (alpha_share_x < 0.5))
    n = 300 * KB
    assert m.regime(n, nv) == "latency" and m.regime(n, hw.IB_NDR_CHAPTER) == "bandwidth"
    g, stars = page_glue, [link.alpha * link.beta for link in others]
    assert nv.alpha * nv.beta == max(r.link.n_half for r in m.TABLE1) > max(stars)   # NVLink has the largest n*
    assert g["t1_nv_nstar_bytes"] == fmt_bytes(nv.alpha * nv.beta) and g["t1_mid_bytes"] == fmt_bytes(n)
    assert (g["t1_max_inter_bytes"], g["t1_min_inter_bytes"]) == (fmt_bytes(max(stars), digits=4),
                                                                  fmt_bytes(min(stars), digits=4))
    nv_share, ib_share = 1.5e-6 / (1.5e-6 + n / 450e9), 2e-6 / (2e-6 + n / 50e9)
    assert float(g["t1_mid_nv_share_frac"].rstrip("%")) == pytest.approx(100 * nv_share, abs=0.05)
    assert float(g["t1_mid_ib_share_frac"].rstrip("%")) == pytest.approx(100 * ib_share, abs=0.05)
    assert nv_share > 0.5 > ib_share


# ============================================================================ Definition 1.2, NM 1.2
def test_definition_1_2_fusion_with_and_without_the_bandwidth_term():
    """100 × 4 KB against one 400 KB on IB NDR (2 µs, 50 GB/s): n* = 100 KB; the chapter's
    20× counts α only (200 µs vs 10 µs); with the small messages' bandwidth term 208 µs → 20.8×."""
    link = m.BOX_LINKS["def1.2"]
    a, b = 2e-6, 50e9
    assert (link.alpha, link.beta) == (a, b)
    f = m.hockney_fusion(link, 4e3, 100)
    assert f.n_star_bytes == pytest.approx(100e3)
    fused = a + 400e3 / b
    assert f.t_fused_s == pytest.approx(10e-6)
    assert f.t_small_alpha_s == pytest.approx(200e-6) and f.t_small_s == pytest.approx(208e-6)
    assert f.alpha_x == pytest.approx(100 * a / fused) == pytest.approx(20)       # the chapter's 20×
    assert f.full_x == pytest.approx(100 * (a + 4e3 / b) / fused) == pytest.approx(20.8)
    assert f.beta_share_frac == pytest.approx(8e-6 / 208e-6) and f.fused_per_nstar == pytest.approx(4)
    assert m.regime(4e3, link) == "latency"
    # the same messages on NVLink (n* = 675 KB) gain more from fusing: the fused 400 KB is still below n*
    q = m.hockney_fusion(hw.NVLINK4_CHAPTER, 4e3, 100)
    assert q.full_x > f.full_x and q.fused_per_nstar == pytest.approx(400e3 / (1.5e-6 * 450e9))


@pytest.mark.parametrize("count", [2, 10, 100, 1000])
def test_n_small_messages_cost_up_to_n_times_one(count):
    link = m.BOX_LINKS["def1.2"]
    for total in np.logspace(2, 10, 17):
        f = m.hockney_fusion(link, total / count, count)
        assert 1 <= f.full_x <= count * (1 + 1e-12)
    tiny = m.hockney_fusion(link, 1e-9, count)                  # n/N << n*: the bound is reached
    assert tiny.full_x == pytest.approx(count, rel=1e-6)


def test_compressed_gradient_still_bandwidth_bound(page_glue):
    link, g = m.BOX_LINKS["def1.2"], page_glue
    grad = m.LLAMA["params"] * m.LLAMA["bytes_per_value"]
    assert grad == pytest.approx(140 * GB)
    assert m.regime(grad / 100, link) == "bandwidth" and grad / 100 / link.n_half > 1e4
    assert (g["d12_c_factor"], g["d12_c_grad_bytes"], g["d12_c_comp_bytes"]) == ("100", "140 GB", fmt_bytes(1.4 * GB))
    assert g["d12_c_comp_k"] == f"{round(1.4e9 / 100e3):,}"
    assert g["d12_c_comp_alpha_frac"] == f"{100 * 2e-6 / (2e-6 + 1.4e9 / 50e9):.2g}%"


def test_napkin_math_1_2():
    link = m.BOX_LINKS["nm1.2"]
    assert link.beta == pytest.approx(400e9 / 8) and link.alpha == pytest.approx(2e-6)
    assert link.n_half == pytest.approx(2e-6 * 5e10) == pytest.approx(100 * KB)


def test_box_links_name_their_boxes_and_differ_in_alpha(page_glue):
    """Inventory D.1: InfiniBand NDR appears with α = 1.5, 2, 3 and 5 µs in the boxes."""
    ndr = sorted({link.alpha for link in m.BOX_LINKS.values() if link.name == "InfiniBand NDR"})
    assert ndr == pytest.approx([1.5e-6, 2e-6, 3e-6, 5e-6])
    assert (page_glue["box_ib_alphas"], page_glue["box_ib_count"]) == ("1.5, 2, 3, 5 µs", "4")
    assert "1.5, 2, 3, 5" in m.box_link_table().to_text("en")
    for key, link in m.BOX_LINKS.items():
        assert "chapter" in link.source and f"{link.alpha / us:g} µs" in link.source
    assert (m.BOX_LINKS["nm1.5"].alpha, m.BOX_LINKS["nm1.5"].beta) == (10e-6, 10 * GB)
    assert (m.BOX_LINKS["cp1.1"].alpha, m.BOX_LINKS["cp1.1"].beta) == (2e-6, 10 * GB)


def test_checkpoint_1_1_givens_and_answers():
    c = m.CHECKPOINT_1_1
    link, n = c["link"], c["message"]
    assert n == 10 * KB and link.n_half == pytest.approx(20 * KB) and m.regime(n, link) == "latency"
    t = link.alpha + n / link.beta
    assert t == pytest.approx(3e-6) and round(100 * link.alpha / t) == 67
    r0, r1 = c["rates_bps"]
    assert link.alpha * r0 / 8 == pytest.approx(25 * KB) and link.alpha * r1 / 8 == pytest.approx(100 * KB)


# ============================================================================ LogP, Figure 4
def test_napkin_math_1_3():
    """Backward 500 µs, L = 100 µs, o = 50 µs each side: 2o + max(500, 100) = 600 µs."""
    lp = LogP(L=m.NM13["L"], o=m.NM13["o"])
    assert lp.overlapped(m.NM13["backward"]) == pytest.approx(600e-6)
    _, tb = m.figure4_timelines()
    assert tb.step_time == pytest.approx(2 * 50e-6 + max(500e-6, 100e-6))
    wire = [b for b in tb.blocks if b.kind == "allreduce"]
    o = [b for b in tb.blocks if b.kind in ("launch", "complete")]
    assert len(wire) == 1 and wire[0].duration == pytest.approx(100e-6) and tb.stall == 0
    assert sum(b.duration for b in o) == pytest.approx(100e-6)
    assert all(b.stream == "compute" for b in o) and wire[0].stream == "network"


def test_figure4_facts_the_page_glues(page_glue):
    """Figure 4(a): of the four layers' all-reduces, three hide behind backward work; the step is
    4 × 2.4 + 2.4 + 2.2 = 14.2 units, and 3/4 of the communication is hidden."""
    g = page_glue
    assert (g["f4_layers"], g["f4_hidden_n"], g["f4_hidden_frac"]) == ("4", "3", "75%")
    assert float(g["f4_step"]) == pytest.approx(4 * 2.4 + 2.4 + 2.2)


def test_napkin_math_1_3_and_its_quiz_on_the_page(page_glue):
    """2o + max(backward, L) = 600 µs; a block of 80 µs < L waits 20 µs for the wire (200 µs);
    with o halved to 25 µs the step is 550 µs."""
    g, o, L, bwd = page_glue, 50e-6, 100e-6, 500e-6
    want = {"bwd_s": bwd, "L_s": L, "o_s": o, "two_o_s": 2 * o, "t_s": 2 * o + max(bwd, L), "hidden_s": L,
            "exposed_s": 2 * o, "max_s": max(bwd, L), "q_short_s": 80e-6, "q_short_t_s": 2 * o + max(80e-6, L),
            "q_short_wait_s": L - 80e-6, "q_o_s": o / 2, "q_o_t_s": o + max(bwd, L)}
    assert {k: g[f"n13_{k}"] for k in want} == {k: fmt_time(v, 3) for k, v in want.items()}


def test_checkpoint_1_1_givens_on_the_page(page_glue):
    assert (page_glue["cp_msg_bytes"], page_glue["cp_rate_from"], page_glue["cp_rate_to"]) == \
        (fmt_bytes(10 * KB), "100 Gb/s", "400 Gb/s")
    assert (page_glue["cp_alpha_s"], page_glue["cp_beta_Bps"]) == ("2 µs", "10 GB/s")


def test_figure4_step_with_the_last_layer_exposed():
    """Figure 4's ticks: compute ends at 9.6, the last all-reduce at 12.0, the step at 14.2 =
    backward + tail + optimizer."""
    ta, _ = m.figure4_timelines()
    n, blk, opt = m.FIG4["layers"], m.FIG4["backward"], m.FIG4["optimizer"]
    bwd = sum(b.duration for b in ta.blocks if b.kind == "backward")
    assert bwd == pytest.approx(n * blk) == pytest.approx(9.6)
    assert ta.stall == pytest.approx(m.FIG4["allreduce"]) == pytest.approx(2.4)
    assert ta.step_time == pytest.approx(bwd + ta.stall + opt) == pytest.approx(14.2)
    last = max((b for b in ta.blocks if b.kind == "allreduce"), key=lambda b: b.start)
    assert (last.start, last.end) == pytest.approx((9.6, 12.0))


def _patches(fig):
    out = {}
    for k, ax in enumerate(fig.axes):
        for p in ax.patches:
            gid = p.get_gid()
            if gid and gid.startswith("block:"):
                out[(k, gid)] = (p.get_x(), p.get_width())
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figure4_draws_the_timeline_blocks(lang, cjk_font):
    """Every non-idle block of both timelines is one bar at its start with its duration
    (panel (b) in µs), read back from the figure."""
    fig = m.fig_overlap(lang=lang)
    drawn = _patches(fig)
    want = {}
    for k, (tl, scale) in enumerate(zip(m.figure4_timelines(), (1.0, us))):
        for b in tl.blocks:
            if b.kind != "idle":
                want[(k, f"block:{b.stream}:{b.kind}:{b.label}")] = (b.start / scale, b.duration / scale)
    assert drawn.keys() == want.keys()
    for key in want:
        assert drawn[key] == pytest.approx(want[key])
    ends = [next(l for l in ax.get_lines() if l.get_gid() == "step_end").get_xdata()[0] for ax in fig.axes]
    assert ends == pytest.approx([tl.step_time / s for tl, s in zip(m.figure4_timelines(), (1.0, us))])
    assert ends == pytest.approx([14.2, 600.0])                 # the chapter's figure and box


# ============================================================================ Figure 3
def test_figure3_ratios_and_the_flag():
    """Flag: "an order of magnitude throughout, and widening" holds for NVLink only (6.4–12×),
    not for PCIe (1.26–2.31×); the NVLink gap reaches 18× only pairing B200 with NDR."""
    r = m.gap_ratios()
    independent = {}
    for fam in ("PCIe", "NVLink"):
        ib = sorted((g for g in physics.GENERATIONS.values() if g.family == "InfiniBand"), key=lambda g: g.year)
        for g in (g for g in physics.GENERATIONS.values() if g.family == fam):
            inter = [x for x in ib if x.year <= g.year][-1]
            independent[g.name] = (g.lanes * g.lane_bps * g.efficiency) / (inter.lanes * inter.lane_bps * inter.efficiency)
    for a, _, ratio in r.pcie + r.nvlink:
        assert ratio == pytest.approx(independent[a])
    pcie = [x for *_, x in r.pcie]
    nvl = [x for *_, x in r.nvlink]
    assert max(pcie) == pytest.approx(2.3106, abs=1e-4) and min(pcie) == pytest.approx(1.2603, abs=1e-4)
    assert max(pcie) < r.claim_x / 4 and min(nvl) == pytest.approx(6.4) and max(nvl) == pytest.approx(12)
    assert nvl[-1] == pytest.approx(9) and r.nvlink_dgx[-1][2] == pytest.approx(18)
    assert r.nvlink_dgx[-1][2] > max(nvl)                     # "widening" needs the NDR pairing
    assert r.within == {"PCIe": False, "NVLink": True}
    assert (r.pcie_lo_x, r.pcie_hi_x, r.nvl5_ndr_x) == pytest.approx((min(pcie), max(pcie), 18))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figure3_draws_every_generation_and_ratio(lang, cjk_font):
    fig = m.fig_bandwidth_gap(lang=lang)
    ax, bx = fig.axes
    lines = {l.get_gid(): l for l in ax.get_lines() if l.get_gid()}
    for fam in ("PCIe", "NVLink", "InfiniBand"):
        gens = sorted((g for g in physics.GENERATIONS.values() if g.family == fam), key=lambda g: g.year)
        assert list(lines[f"gen:{fam}"].get_xdata()) == [g.year for g in gens]
        assert lines[f"gen:{fam}"].get_ydata() == pytest.approx([g.beta / 1e9 for g in gens])
    blines = {l.get_gid(): l for l in bx.get_lines() if l.get_gid()}
    r = m.gap_ratios()
    assert blines["ratio:PCIe"].get_ydata() == pytest.approx([x for *_, x in r.pcie])
    assert blines["ratio:NVLink"].get_ydata() == pytest.approx([x for *_, x in r.nvlink])
    assert blines["ratio:dgx"].get_ydata() == pytest.approx([18.0])
    assert blines["claimed"].get_ydata()[0] == pytest.approx(10.0)


# ============================================================================ Llama-70B budget
def test_llama_budget_against_the_closed_forms_and_the_chapter():
    """Flat ring 2·127(α + n/(128β)) ≈ 5,557 ms; hierarchical 2·7(α_nv + n/(8β_nv)) +
    2·15(α_ib + n/(8·16·β_ib)) ≈ 1,200.8 ms (with Table 1's midpoint α)."""
    b = m.llama_budget()
    n, nv, ib = 140e9, (1.5e-6, 450e9), (2e-6, 50e9)
    flat = 2 * 127 * (ib[0] + n / (128 * ib[1]))
    hier = 2 * 7 * (nv[0] + n / (8 * nv[1])) + 2 * 15 * (ib[0] + n / 8 / (16 * ib[1]))
    assert b.flat_s == pytest.approx(flat, rel=1e-12) and b.hier_s == pytest.approx(hier, rel=1e-12)
    assert round(b.flat_s / ms) == 5557 and round(b.hier_s / ms, 1) == 1200.8
    for key, (value, decimals) in m.CHAPTER_LLAMA.items():
        assert round(getattr(b, f"{key}_s") / ms, decimals) == round(value / ms, decimals)
    assert b.flat_bw_s == pytest.approx(2 * 127 / 128 * n / 50e9) and b.hier_bw_s == pytest.approx(1.2006944, rel=1e-6)
    assert b.speedup_x == pytest.approx(flat / hier) and b.shard_bytes == pytest.approx(n / 8)
    q = m.llama_budget(nodes=32, gpus_per_node=4)                # the quiz: four GPUs per node
    assert q.p == b.p and q.hier_s == pytest.approx(2 * 3 * (1.5e-6 + n / (4 * 450e9))
                                                    + 2 * 31 * (2e-6 + n / 4 / (32 * 50e9)))
    # the inventory's range: α_IB from 1.5 to 3 µs moves the flat ring within 5,556.6–5,557.0 ms
    for a in (1.5e-6, 3e-6):
        assert round(2 * 127 * (a + n / (128 * 50e9)) / ms) == 5557
    assert sum(ph[4] for ph in b.phases) == pytest.approx(b.hier_s)
    assert [ph[5] for ph in b.phases] == [7, 30, 7] and b.flat_steps == 254


def test_llama_budget_table():
    t = m.llama_budget_table()
    assert t.column("time")[0] == pytest.approx(m.llama_budget().flat_s)
    assert t.column("time")[-1] == pytest.approx(m.llama_budget().hier_s)
    flat, hier = m.llama_budget().flat_s, m.llama_budget().hier_s
    assert round(flat / ms, 1) == 5556.8 and round(hier / ms, 1) == 1200.8
    assert "5.56 s" in t.to_text("en") and "1.2 s" in t.to_text("zh")      # fmt_time, 3 digits


# ============================================================================ calibration
def _independent_ring_fit(sizes, times, p):
    """Least squares on relative errors of T = 2(p-1)·α + 2(p-1)/p·n·(1/β), in numpy."""
    a = np.full_like(sizes, 2 * (p - 1))
    bcoef = 2 * (p - 1) / p * sizes
    w = 1 / times
    (alpha, inv_beta), *_ = np.linalg.lstsq(np.column_stack([a * w, bcoef * w]), times * w, rcond=None)
    return alpha, 1 / inv_beta


def test_calibration_on_the_real_log():
    run = next(r for r in load_log(m.CALIBRATION_LOG) if r.collective == "all_reduce")
    n, t = run.sizes(), run.times("out_of_place")
    p = run.nranks
    alpha, beta = _independent_ring_fit(n, t, p)
    c = m.calibration()
    assert c.alpha_s == pytest.approx(alpha, rel=1e-9) and c.beta_Bps == pytest.approx(beta, rel=1e-9)
    # the biased point-to-point fit: 2(p-1)α and β·p/(2(p-1)), same residuals
    assert c.p2p_alpha_s == pytest.approx(2 * (p - 1) * alpha, rel=1e-6)
    assert c.p2p_beta_Bps == pytest.approx(beta * p / (2 * (p - 1)), rel=1e-6)
    assert c.p2p_rms_frac == pytest.approx(c.rms_frac, rel=1e-6)
    assert beta > hw.NVLINK4_CHAPTER.beta                        # above the wire rate: not a ring (NVLS)
    assert m.log_record_table(c).meta["missing"] == ["algo"]
    assert c.busbw == pytest.approx([r.out_of_place.busbw for r in run.rows], rel=0.01)


def test_calibration_figure_plots_the_log(cjk_font):
    c = m.calibration()
    fig = m.fig_calibration(lang="zh", cal=c)
    ax, bx = fig.axes
    lines = {l.get_gid(): l for l in ax.get_lines() if l.get_gid()}
    assert lines["measured"].get_xdata() == pytest.approx(c.sizes)
    assert lines["measured"].get_ydata() == pytest.approx(c.times)
    x, y = lines["fit:ring"].get_xdata(), lines["fit:ring"].get_ydata()
    p = c.p
    assert y == pytest.approx(2 * (p - 1) * c.alpha_s + 2 * (p - 1) / p * x / c.beta_Bps)
    assert lines["fit:p2p"].get_ydata() == pytest.approx(y, rel=1e-6)   # the two fits are one line
    blines = {l.get_gid(): l for l in bx.get_lines() if l.get_gid()}
    assert blines["beta:nominal"].get_ydata()[0] == pytest.approx(450)


# ============================================================================ the page itself
@pytest.fixture(scope="module")
def page_glue() -> dict:
    """Execute the English page once and collect its glued text values."""
    return executed_glue(PAGE["en"])


def test_page_glues_the_independent_values(page_glue):
    g = page_glue
    run = next(r for r in load_log(m.CALIBRATION_LOG) if r.collective == "all_reduce")
    p = run.nranks
    alpha, beta = _independent_ring_fit(run.sizes(), run.times("out_of_place"), p)
    assert g["cal_alpha_s"] == fmt_time(alpha, 3) and g["cal_beta_Bps"] == fmt_rate(beta, 4)
    assert g["cal_p2p_alpha_s"] == fmt_time(2 * (p - 1) * alpha, 3)
    assert g["cal_p2p_beta_Bps"] == fmt_rate(beta * p / (2 * (p - 1)), 4)
    n = 140e9
    flat = 2 * 127 * (2e-6 + n / (128 * 50e9))
    hier = 2 * 7 * (1.5e-6 + n / (8 * 450e9)) + 2 * 15 * (2e-6 + n / 8 / (16 * 50e9))
    assert g["ll_flat_s"] == f"{flat / ms:,.1f} ms" and g["ll_hier_s"] == f"{hier / ms:,.1f} ms"
    # the chapter's "约 5,557 ms" and "约 1200.8 ms", and the page's values at that rounding
    assert g["ll_chapter_flat"] == f"{round(flat / ms):,} ms" == "5,557 ms"
    assert g["ll_chapter_hier"] == f"{round(hier / ms, 1):,.1f} ms" == "1,200.8 ms"
    fused = 2e-6 + 400e3 / 50e9
    assert g["d12_fu_alpha_x"] == f"{100 * 2e-6 / fused:.3g}×" == "20×"            # the chapter's 20×
    assert g["d12_fu_full_x"] == f"{100 * (2e-6 + 4e3 / 50e9) / fused:.3g}×"
    assert g["d12_nstar_bytes"] == fmt_bytes(2e-6 * 50e9) == "100 KB"                   # the chapter's n*
    assert g["t1_nv_nstar_bytes"] == fmt_bytes(1.5e-6 * 450e9) and g["t1_nv_printed"] == "~0.7 MB"
    assert g["t1_roce_nstar_bytes"] == fmt_bytes(7.5e-6 * 12.5e9, digits=4) and g["t1_roce_printed"] == "~93.7 KB"
    assert g["n12_nstar_bytes"] == "100 KB"                                             # napkin math 1.2
    assert g["n13_t_s"] == fmt_time(2 * 50e-6 + max(500e-6, 100e-6), 3) == "600 µs"  # napkin math 1.3
    assert float(g["f4_step"]) == pytest.approx(4 * 2.4 + 2.4 + 2.2)            # the figure's 14.2
    assert g["f3_nvl5_ndr_x"] == f"{900 / 50:.3g}×" and g["f3_nvl5_xdr_x"] == f"{900 / 100:.3g}×"
    assert g["cp_msg_bytes"] == fmt_bytes(10 * KB)


def test_both_pages_cite_the_flags_in_collapsed_notes():
    for lang, marker in (("en", "{ref}`note "), ("zh", "{ref}`注 ")):   # notes: chapters/*/notes/ch1-sources.md
        text = PAGE[lang].read_text(encoding="utf-8")
        assert text.count(marker) == 5
        assert text.count(":class: dropdown") >= 4              # check-yourself answers


def test_nccl_merges_calls_only_in_a_group():
    """§1.2: NCCL aggregates collectives only between ncclGroupStart/ncclGroupEnd (NCCL
    2.29.2 src/enqueue.cc:421-429, ncclPrepareTasks: tasks of one kind within 4x in size);
    fusing small gradients is the framework's bucketing.  Both pages say so and cite it."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    for lang, wrong in (("en", "NCCL fuses small all-reduce calls"), ("zh", "NCCL 会把零碎的 all-reduce 调用攒成一批")):
        text = (root / f"chapters/{lang}/ch1/02-performance-models.md").read_text()
        assert wrong not in text
        assert "ncclGroupStart" in text and "src/enqueue.cc" in text and "421–429" in text


def test_fusion_table_is_definition_1_2():
    """Definition 1.2's table: the small messages one by one against the fused one."""
    from commbook.book.ch1 import perf_numbers as pn
    fu = m.hockney_fusion(m.BOX_LINKS["def1.2"], 4 * KB, 100)
    sep, fused = pn.fusion_table(fu).rows
    assert sep["time"] / fused["time"] == pytest.approx(fu.full_x) and sep["alpha"] == pytest.approx(fu.t_small_alpha_s)
    assert fused["alpha"] == pytest.approx(m.BOX_LINKS["def1.2"].alpha)
