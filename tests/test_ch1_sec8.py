"""Chapter §1.8 (overlapping communication with computation): the page's numbers, tables and
figures (``commbook.book.ch1.overlap_numbers``, ``overlap_figures`` and
``chapters/{zh,en}/ch1/08-overlap.md``).

Every check compares the book's value with the chapter's stated result at the chapter's own
rounding, with a closed form written out here, or with an independent numpy computation; where
the chapter is wrong (the 26.4 ms all-reduce, 66.7 % at three layers, the single-node memory),
both numbers are pinned.
"""
from __future__ import annotations

import math
from pathlib import Path
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from commbook import hardware as hw
from commbook.book.ch1 import overlap_figures as figs
from commbook.book.ch1 import overlap_buckets as ob
from commbook.book.ch1 import overlap_napkin as on
from commbook.book.ch1 import overlap_numbers as ov
from commbook.book.ch1 import overlap_tables as ovt
from commbook.book.ch1.boxes import BOX_LINKS, BOX_NAMES
from commbook.overlap import FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, ddp_bucket_assignment
from commbook.units import GB, MB, MiB, ms, us

CAP, FIRST = 25 * 2**20, 2**20          # PyTorch: bucket_cap_mb = 25 → 25 MiB; first bucket 1 MiB


def _round(x: float, decimals: int) -> float:
    """Half-up rounding, as a printed number is rounded (not banker's rounding)."""
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


# ============================================================================ Napkin math 1.8
L, B, A = 32, 15e-3, 26.4e-3             # the box: 32 layers, 15 ms backward, 26.4 ms all-reduce


def test_nm18_inputs_are_the_box():
    c = on.NM18
    assert (c["layers"], c["params"], c["nodes"] * c["gpus_per_node"]) == (32, 7e9, 64)
    assert c["backward"] == pytest.approx(B) and c["allreduce"] == pytest.approx(A)
    assert c["bucket"] == 100 * MB and c["bytes_per_value"] == 4


def test_nm18_timeline_equals_the_closed_forms_and_the_chapter():
    """Sequential N(b + a); pipelined, the box's T_bwd + T_first + (N − 1)(a − b), which is
    b + N·a when a > b (the network stream never rests); 1,324.8 ms, 859.8 ms, 35.1 %."""
    r = on.nm18()
    assert r.sequential_s == pytest.approx(L * (B + A), rel=1e-12)
    assert r.pipelined_s == pytest.approx(L * B + A + (L - 1) * (A - B), rel=1e-12)
    assert r.pipelined_s == pytest.approx(B + L * A, rel=1e-12)
    assert _round(r.sequential_s * 1e3, 1) == 1324.8
    assert _round(r.pipelined_s * 1e3, 1) == 859.8
    assert _round((1 - r.pipelined_s / r.sequential_s) * 100, 1) == 35.1
    assert r.stall_s == pytest.approx(r.pipelined_s - L * B, rel=1e-12)
    assert r.hidden_frac == pytest.approx(1 - (B + L * A - L * B) / (L * A), rel=1e-12)
    for key in ("sequential", "pipelined"):
        value, dec = on.CHAPTER_NM18[key]
        assert _round(getattr(r, f"{key}_s") * 1e3, dec) == _round(value * 1e3, dec)


def test_nm18_layer_bytes_round_to_the_chapter():
    """7e9 / 32 × 4 B = 875 MB of FP32 gradients per layer; the box says about 880 MB."""
    r = on.nm18()
    assert r.layer_bytes == pytest.approx(7e9 / 32 * 4) == pytest.approx(875 * MB)
    assert round(r.layer_bytes, -7) == on.CHAPTER_NM18["layer_bytes"][0] == 880 * MB


def test_nm18_in_flight_when_backward_ends():
    """All-reduce k (1-based) ends at b + k·a when the network is the bottleneck; those that
    end after N·b are still in flight: N − ⌊(N·b − b)/a⌋ = 15."""
    ends = B + A * np.arange(1, L + 1)
    expected = int(np.sum(ends > L * B + 1e-12))
    assert on.nm18().in_flight == expected == L - math.floor((L * B - B) / A)
    hier = on.nm18(on.nm18_check().bucketed_s)
    assert hier.in_flight == 1                      # only the last one: it is hidden otherwise


def _hierarchical(nodes, g, n, intra, inter):
    """Ring reduce-scatter in the node, ring all-reduce of n/g across the nodes, ring
    all-gather in the node."""
    rs = (g - 1) * (intra.alpha + n / g / intra.beta)
    ar = 2 * (nodes - 1) * (inter.alpha + n / g / nodes / inter.beta)
    return 2 * rs + ar


def test_nm18_all_reduce_against_the_hierarchical_model():
    """The given 26.4 ms is 3.6× the model's 7.28 ms (7.23 ms of it bandwidth);
    in 100 MB buckets 7.67 ms; only a flat ring (34.7 ms) is slower than the given value."""
    chk = on.nm18_check()
    n = 875e6
    nvl, ib = BOX_LINKS["nm1.8-nvl"], BOX_LINKS["nm1.8"]
    assert (nvl.alpha, nvl.beta) == (hw.NVLINK4_CHAPTER.alpha, hw.NVLINK4_CHAPTER.beta)
    assert (ib.alpha, ib.beta) == (hw.IB_NDR_CHAPTER.alpha, hw.IB_NDR_CHAPTER.beta)
    assert chk.one_s == pytest.approx(_hierarchical(8, 8, n, nvl, ib), rel=1e-12)
    assert chk.bandwidth_only_s == pytest.approx(2 * 7 / 8 * n / 450e9 + 2 * 7 / 8 * (n / 8) / 50e9, rel=1e-12)
    assert round(chk.bandwidth_only_s * 1e3, 2) == 7.23
    pieces = [100e6] * 8 + [75e6]
    assert chk.buckets == 9 and sum(chk.pieces) == pytest.approx(n)
    assert chk.bucketed_s == pytest.approx(sum(_hierarchical(8, 8, x, nvl, ib) for x in pieces), rel=1e-12)
    assert chk.flat_s == pytest.approx(2 * 63 * ib.alpha + 2 * 63 / 64 * n / ib.beta, rel=1e-12)
    assert chk.one_s < chk.bucketed_s < B < A < chk.flat_s
    assert chk.ratio_x == pytest.approx(A / chk.one_s) and chk.ratio_x > 3.5


def test_nm18_table_rows():
    t = on.nm18_table()
    chk = on.nm18_check()
    given, hier, flat = t.rows
    assert [r["variant"] for r in t.rows] == ["given", "hierarchical", "flat"]
    assert given["pipelined"] == pytest.approx(B + L * A) and given["in_flight"] == 15
    # the model's all-reduce fits under the next block: all but the last hidden
    assert hier["pipelined"] == pytest.approx(L * B + chk.bucketed_s, rel=1e-12)
    assert hier["hidden"] == pytest.approx((L - 1) / L, rel=1e-12)
    assert flat["pipelined"] == pytest.approx(B + L * chk.flat_s, rel=1e-12)
    for lang in ("en", "zh"):
        assert f"{chk.buckets}" in t.cell(1, "variant", lang)
        assert t.notes[lang] and "875 MB" in t.notes[lang][0]


def test_box_links_of_the_section():
    for key in ("nm1.8", "nm1.8-nvl", "sn1.8"):
        assert key in BOX_NAMES and set(BOX_NAMES[key]) == {"en", "zh"}
    assert BOX_LINKS["sn1.8"].alpha == 0 and BOX_LINKS["sn1.8"].beta == 450 * GB


# ============================================================================ single node
@pytest.fixture(scope="module")
def page08():
    """Page §1.8 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/ch1/08-overlap.md")


def test_single_node_check_and_its_memory(page08):
    """2·(7/8)·140 GB / 450 GB/s = 0.5444 s ≈ 0.54 s, 25.9 % ≈ 26 % of 2.1 s; plain data
    parallelism needs 16 B per parameter, 1.12 TB per GPU, 14× an 80 GB H100;
    ZeRO-3 over 8 GPUs still 140 GB."""
    from commbook.units import fmt_bytes, fmt_number, fmt_pct
    g = {k[3:]: v for k, v in page08.items() if k.startswith("sn_")}
    t = 2 * 7 / 8 * 140e9 / 450e9
    assert g["time_s"] == f"{fmt_number(t, 4)} s" == "0.5444 s"
    assert _round(t, 2) == on.CHAPTER_SINGLE_NODE["time"][0] == 0.54 and g["chapter_time_s"] == "0.54 s"
    assert g["share_frac"] == fmt_pct(t / 2.1)
    assert _round(t / 2.1 * 100, 0) == on.CHAPTER_SINGLE_NODE["share"][0] == 26
    assert _round(t / 2.1 * 100, 1) == 25.9 and g["chapter_share_frac"] == fmt_pct(0.26)
    assert (g["n_bytes"], g["gpus"], g["beta_Bps"], g["params"]) == ("140 GB", "8", "450 GB/s", "70B")
    assert g["mem_bytes"] == fmt_bytes((2 + 2 + 12) * 70e9, digits=3) == "1.12 TB" and g["bpp"] == "16"
    assert g["mem_times"] == "14" and g["gpu_mem_bytes"] == "80 GB"                 # 14× what fits
    assert g["zero3_bytes"] == fmt_bytes(16 * 70e9 / 8, digits=3) and 16 * 70e9 / 8 > 80e9


# ============================================================================ limits
@pytest.mark.parametrize("layers", [2, 3, 10, 20, 32])
def test_hidden_fraction_of_equal_layers(layers):
    assert ov.hidden_fractions()[layers] == pytest.approx((layers - 1) / layers, rel=1e-12)


def test_chapter_hidden_ranges():
    """'50–60 %' for 2–3 layers: 2 layers give 50 %, 3 layers 66.7 %, above the range;
    '90–95 %' for deep models is L = 10 … 20."""
    hf = ov.hidden_fractions()
    (lo_l, hi_l), (lo, hi) = ov.CHAPTER_HIDDEN["shallow"]
    assert (lo_l, hi_l, lo, hi) == (2, 3, 0.5, 0.6)
    assert hf[2] == pytest.approx(lo) and hf[3] == pytest.approx(2 / 3)
    assert hf[3] > hi
    (d_lo_l, d_hi_l), (d_lo, d_hi) = ov.CHAPTER_HIDDEN["deep"]
    assert hf[d_lo_l] == pytest.approx(d_lo) and hf[d_hi_l] == pytest.approx(d_hi)


def test_page_quotes_the_hidden_shares(page08):
    """(L − 1)/L at 2, 3 and 10 layers, beside the chapter's 50–60 % and 90–95 %."""
    from commbook.units import fmt_pct
    assert (page08["hf_l2"], page08["hf_l3"], page08["hf_l10"]) == ("2", "3", "10")
    assert (page08["hf_f2_frac"], page08["hf_f3_frac"], page08["hf_f10_frac"]) == (
        fmt_pct(1 / 2), fmt_pct(2 / 3), fmt_pct(9 / 10))
    assert (page08["hf_sh_range"], page08["hf_dp_range"]) == ("50–60%", "90–95%")
    assert (page08["hf_sh_layers"], page08["hf_dp_layers"]) == ("2–3", "10–20")


# The three worked examples in closed form (the page's cells compute them with the library):
# 100 layers of 30 µs backward and a 20 µs all-reduce, o = 50 µs; the residual 500 MB ring on
# 64 GPUs (α = 5 µs, β = 50 GB/s) beside 30 ms of backward; 32 layers of 1 MB, ring against tree.
_N, _B, _A, _O = 100, 30 * us, 20 * us, 50 * us
_OVERHEAD = dict(layers=_N, b_s=_B, wire_s=_A, o_s=_O, compute_s=_N * _B, overhead_s=2 * _N * _O,
                 wire_total_s=_N * _A, over_s=_N * _B + 2 * _N * _O + _A, block_s=_N * (_B + 2 * _O + _A))
_WIRE = 2 * 63 * 5e-6 + 2 * 63 / 64 * 500e6 / 50e9
_RESIDUAL = dict(n_bytes=500e6, gpus=64, alpha_s=5e-6, beta_Bps=50e9, wire_s=_WIRE, compute_s=30e-3, o_s=_O,
                 block_s=30e-3 + 2 * _O + _WIRE, over_s=2 * _O + max(30e-3, _WIRE), hidden_s=_WIRE)
_P, _NB, _AL, _BE = 64, 1e6, 5e-6, 50e9
_RING = 2 * (_P - 1) * _AL + 2 * (_P - 1) / _P * _NB / _BE
_TREE = 2 * math.log2(_P) * (_AL + _NB / _BE)
_CROSS = (2 * math.log2(_P) - 2 * (_P - 1)) * _AL / (2 * (_P - 1) / _P / _BE - 2 * math.log2(_P) / _BE)
_RING_TREE = dict(layers=32, n_bytes=_NB, backward_s=1e-3, gpus=_P, cross_bytes=_CROSS, ring_s=_RING, tree_s=_TREE,
                  ring_block_s=32 * (1e-3 + _RING), tree_block_s=32 * (1e-3 + _TREE),
                  ring_over_s=32e-3 + _RING, tree_over_s=32e-3 + _TREE,     # each all-reduce hides under a 1 ms block
                  pen_block_s=32 * (_RING - _TREE), pen_over_s=_RING - _TREE)


def test_overhead_example(page08):
    """Σb + 2Lo + a_last with overlap (each 20 µs wire hides under the next block), Σ(b + 2o + a)
    without: overlap saves the wire time of all but the last layer and nothing else."""
    from commbook.units import fmt_pct, fmt_time
    e = _OVERHEAD
    assert (page08["oe_layers"], page08["oe_o_s"], page08["oe_b_s"], page08["oe_wire_s"]) == ("100", "50 µs", "30 µs", "20 µs")
    assert page08["oe_over_s"] == fmt_time(e["over_s"], 4) and page08["oe_block_s"] == fmt_time(e["block_s"], 4)
    assert e["overhead_s"] > e["compute_s"] and _B < 2 * _O
    assert page08["oe_overhead_s"] == fmt_time(e["overhead_s"], 4) and page08["oe_compute_s"] == fmt_time(3e-3, 4)
    assert page08["oe_saved_s"] == fmt_time((_N - 1) * _A, 3)
    assert page08["oe_share_frac"] == fmt_pct(2 * _N * _O / e["over_s"])


def test_residual_example(page08):
    """2o + max(compute, wire) against compute + 2o + wire; the wire is the ring closed form."""
    from commbook.units import fmt_time
    r = _RESIDUAL
    assert round(_WIRE * 1e3) == 20 and page08["res_wire_s"] == fmt_time(_WIRE, 3)
    assert page08["res_over_s"] == fmt_time(r["over_s"], 3) and page08["res_block_s"] == fmt_time(r["block_s"], 3)
    assert page08["res_hidden_s"] == fmt_time(_WIRE, 4)                 # all of the wire is hidden
    assert (page08["res_n_bytes"], page08["res_alpha_s"], page08["res_beta_Bps"]) == ("500 MB", "5 µs", "50 GB/s")


def test_ring_against_tree(page08):
    """Ring 2(p−1)α + 2(p−1)/p·n/β, binomial tree 2·log2(p)(α + n/β); the ring's penalty is
    L·Δ without overlap and Δ with it (both hidden under 1 ms blocks)."""
    from commbook.units import fmt_bytes, fmt_time
    assert page08["rt_ring_s"] == fmt_time(_RING, 3) and page08["rt_tree_s"] == fmt_time(_TREE, 3)
    assert page08["rt_pen_block_s"] == fmt_time(32 * (_RING - _TREE), 3)
    assert page08["rt_pen_over_s"] == fmt_time(_RING - _TREE, 3) and page08["rt_shrink_times"] == "32"
    assert page08["rt_cross_bytes"] == fmt_bytes(_CROSS, digits=3)      # ring = tree there
    assert (page08["rt_layers"], page08["rt_n_bytes"]) == ("32", "1 MB") and _NB < _CROSS


# ============================================================================ buckets
@pytest.mark.parametrize("cap", [CAP, 50 * MiB, 10 * MiB])
def test_bucket_boundaries_on_the_synthetic_list(cap):
    t = ob.bucket_table(cap=cap)
    sizes = [int(s) for _, s in ob.SYNTHETIC_PARAMS]
    walks = {"first": (False, False), "construction": (False, True), "rebuilt": (True, False)}
    assert t.meta["first"] == [list(range(len(sizes)))]           # the default's 1st iteration
    for key, (rebuilt, unused) in walks.items():
        expected = ddp_bucket_assignment(sizes, cap, FIRST, rebuilt=rebuilt,  # the rule, tested in
                                         find_unused_parameters=unused)      # test_overlap_buckets
        assert t.meta[key] == expected
        rows = [r for r in t.rows if r["order"] == key]
        assert [r["size"] for r in rows] == [sum(sizes[i] for i in b) for b in expected]
        assert [r["indices"] for r in rows] == [tuple(b) for b in expected]


def test_synthetic_table_shows_the_rule():
    """At 25 MiB: the construction walk's first bucket is the embedding alone (it passes
    1 MiB by itself) and is reduced last; the rebuilt first bucket overshoots 1 MiB; buckets
    above the cap exist; the open bucket and the default's single first-iteration bucket
    show no limit."""
    t = ob.bucket_table()
    sizes = t.meta["sizes"]
    cons, reb = t.meta["construction"], t.meta["rebuilt"]
    assert cons[-1] == [0] and sizes[0] > CAP
    assert sum(sizes[i] for i in reb[0]) > FIRST
    over = sum(1 for r in t.rows if r["size"] > CAP)
    assert over == t.meta["over_cap"] >= 1
    for r in t.rows:
        if r["order"] == "first":
            assert r["limit"] is None and r["size"] == sum(sizes)
        elif r["limit"] is None:
            assert r["size"] < CAP
        else:
            assert r["size"] >= r["limit"]
    assert str(over) in t.notes["en"][0] and str(over) in t.notes["zh"][0]
    assert {r["order"] for r in t.rows} == {"first", "construction", "rebuilt"}


def _maxplus(plan, shape):
    """o = 0: a bucket's all-reduce starts at max(ready, previous end); the step ends at the
    last end or the end of backward, whichever is later."""
    ready_order = list(range(len(shape.param_bytes)))[::-1]
    t_ready = np.cumsum([shape.backward[i] for i in ready_order])
    pos = {p: k for k, p in enumerate(ready_order)}
    end = 0.0
    cost = ob.ring_allreduce_cost(ob.SWEEP_GPUS, ov.EXAMPLE_LINK)
    for bucket, nbytes in zip(plan.buckets, plan.bucket_bytes):
        start = max(t_ready[max(pos[i] for i in bucket)], end)
        end = start + cost(nbytes)
    return max(end, t_ready[-1])


@pytest.mark.parametrize("shape", [MANY_SMALL_LAYERS, FEW_LARGE_LAYERS], ids=lambda s: s.name)
def test_sweep_optimum_is_interior(shape):
    s = ob.sweep_summary(shape)
    caps = [c for c, _ in s.sweep]
    steps = np.array([p.step_time for _, p in s.sweep])
    k = int(np.argmin(steps))
    assert 0 < k < len(caps) - 1 and s.cap_bytes == caps[k]
    assert s.step_s < s.first_s and s.step_s < s.last_s
    assert s.step_s == pytest.approx(_maxplus(s.plan, shape), rel=1e-12)
    assert s.step_s >= s.compute_s


def test_sweep_optimum_against_the_chapter_ranges():
    """Many small layers: 5 MiB = 5.24 MB, inside '5–10 MB'; few large layers: 120 MiB =
    126 MB, above '50–100 MB', with 100 MiB (104.9 MB) within 0.2 % of it."""
    small, large = ob.sweep_summary(MANY_SMALL_LAYERS), ob.sweep_summary(FEW_LARGE_LAYERS)
    lo, hi = small.range_bytes
    assert lo <= small.cap_bytes <= hi and small.cap_bytes == 5 * MiB
    lo, hi = large.range_bytes
    assert large.cap_bytes > hi and large.cap_bytes == 120 * MiB
    near = dict((c, p.step_time) for c, p in large.sweep)[100 * MiB]
    assert near <= large.step_s * 1.002


def test_sweep_assumptions():
    """Compute per gradient byte 0.2 ns and 0.04 ns; the ring's 2(p−1)/(pβ) per byte and
    2(p−1)α per call on 64 GPUs, α = 5 µs, β = 50 GB/s."""
    small, large = ob.sweep_summary(MANY_SMALL_LAYERS), ob.sweep_summary(FEW_LARGE_LAYERS)
    assert small.compute_per_byte_s == pytest.approx(0.2e-9) and large.compute_per_byte_s == pytest.approx(0.04e-9)
    assert small.net_per_byte_s == pytest.approx(2 * 63 / 64 / 50e9, rel=1e-9)
    assert small.start_up_s == pytest.approx(2 * 63 * 5e-6) == ob.ring_startup()
    fb = ob.FEW_LARGE_BASIS
    d = fb["d_model"]
    assert sum(ob.layer_tensors(FEW_LARGE_LAYERS)) == (4 * d * d + 2 * d * 4 * d) * fb["bytes_per_value"]
    per_byte = fb["flops_per_param_token"] * fb["tokens"] / fb["flops"] / fb["bytes_per_value"]
    assert per_byte == pytest.approx(large.compute_per_byte_s, rel=0.03)
    assert max(ob.layers_of(MANY_SMALL_LAYERS)) + 1 == 100 and max(ob.layers_of(FEW_LARGE_LAYERS)) + 1 == 8


def test_construction_against_rebuilt():
    cr = ob.construction_vs_rebuilt()
    assert cr["rebuilt"].step_time < cr["construction"].step_time
    # the rebuilt first bucket is the 1 MiB-limited one; the constructor's is reduced last
    assert cr["rebuilt"].bucket_bytes[0] < CAP and cr["construction"].bucket_bytes[-1] < CAP


def test_bucket_plans_for_the_figure():
    plans = ob.bucket_plans()
    caps = [c for c, _ in plans]
    best = ob.sweep_summary(ob.TIMELINE_SHAPE).cap_bytes
    assert caps == [CAP, best, ob.SWEEP_GRID[-1]]
    steps = [p.step_time for _, p in plans]
    assert steps[1] == min(steps)


# ============================================================================ figures
def _rects(ax):
    return {a.get_gid(): a for a in ax.patches if (a.get_gid() or "").startswith("block:")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bucket_timeline_figure_draws_the_plans(lang):
    fig = figs.fig_bucket_timeline(lang)
    axes = fig.axes
    plans = ob.bucket_plans()
    assert len(axes) == len(plans)
    for ax, (_, plan) in zip(axes, plans):
        rects = _rects(ax)
        blocks = [b for b in plan.timeline.blocks if b.kind != "idle"]
        assert len(rects) == len(blocks)
        for b in blocks:
            r = rects[f"block:{b.stream}:{b.kind}:{b.label}"]
            assert r.get_x() == pytest.approx(b.start / ms) and r.get_width() == pytest.approx(b.duration / ms)
        wires = [r for g, r in rects.items() if ":allreduce:" in g]
        assert len(wires) == len(plan.buckets)
        end = next(l for l in ax.lines if l.get_gid() == "step_end")
        assert end.get_xdata()[0] == pytest.approx(plan.step_time / ms)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bucket_sweep_figure_draws_the_sweep(lang):
    fig = figs.fig_bucket_sweep(lang)
    for ax, shape in zip(fig.axes, ob.SHAPES):
        s = ob.sweep_summary(shape)
        line = next(l for l in ax.lines if l.get_gid() == f"sweep:{shape.name}")
        assert list(line.get_xdata()) == [c for c, _ in s.sweep]
        np.testing.assert_allclose(line.get_ydata(), [p.step_time / ms for _, p in s.sweep])
        best = next(l for l in ax.lines if l.get_gid() == f"best:{shape.name}")
        assert best.get_xdata()[0] == s.cap_bytes
        assert best.get_ydata()[0] == pytest.approx(min(line.get_ydata()))
        compute = next(l for l in ax.lines if l.get_gid() == f"compute:{shape.name}")
        assert compute.get_ydata()[0] == pytest.approx(sum(shape.backward) / ms)
        span = next(p for p in ax.patches if p.get_gid() == f"range:{shape.name}")
        x0, x1 = span.get_x(), span.get_x() + span.get_width()
        assert x0 == pytest.approx(s.range_bytes[0]) and x1 == pytest.approx(s.range_bytes[1])


# ============================================================================ the small tables (issue 16 §2)


_TABLES = {"residual_table": lambda: ovt.residual_table(_RESIDUAL),
           "ring_tree_table": lambda: ovt.ring_tree_table(_RING_TREE), "plans_table": ovt.plans_table,
           "shapes_table": ovt.shapes_table, "overhead_table": lambda: ovt.overhead_table(_OVERHEAD),
           "hidden_table": ovt.hidden_table}


@pytest.mark.parametrize("name", list(_TABLES))
def test_overlap_tables_render_in_both_languages_and_are_on_both_pages(name):
    """Each table the prose points to renders in both languages, every Chinese row label is
    translated, and both pages show it."""
    t = _TABLES[name]()
    for lang in ("en", "zh"):
        assert "<table" in t.to_html(lang)
    if "what" in t.columns:
        assert all(r["what"] in t.labels["zh"] for r in t.rows)
    root = Path(__file__).resolve().parents[1]
    for lang in ("en", "zh"):
        page = (root / "chapters" / lang / "ch1" / "08-overlap.md").read_text(encoding="utf-8")
        assert f"HTML(ovt.{name}(" in page


def test_overlap_tables_carry_the_worked_numbers():
    """The tables hold the same numbers the prose used to: the residual (blocking = compute +
    2o + wire, the overlapped step hides all of the wire), ring against tree (the penalty row
    is the difference), the three bucket caps, 2o per collective and (L − 1)/L."""
    r = _RESIDUAL
    raw = {row["what"]: row["raw"] for row in ovt.residual_table(r).rows}
    assert raw["Step, sent after the backward"] == pytest.approx(r["compute_s"] + 2 * r["o_s"] + r["wire_s"])
    assert raw["Step, sent as gradients appear"] == pytest.approx(r["compute_s"] + 2 * r["o_s"])
    assert raw["Network time hidden"] == pytest.approx(raw["Transfer on the wire"])
    rt = ovt.ring_tree_table(_RING_TREE)
    ring, tree, pen = rt.rows
    for col in ("allreduce", "blocking", "overlapped"):
        assert pen[col] == pytest.approx(ring[col] - tree[col])
    assert pen["blocking"] > 10 * pen["overlapped"]                       # overlap shrinks the penalty
    plans = ovt.plans_table().rows
    assert [p["cap"] for p in plans] == [c for c, _ in ob.bucket_plans()]
    assert plans[1]["step"] == min(p["step"] for p in plans) and plans[1]["wait"] == min(p["wait"] for p in plans)
    for p in plans:
        assert p["startups"] == pytest.approx(p["buckets"] * 2 * (ob.SWEEP_GPUS - 1) * ov.EXAMPLE_LINK.alpha)
    oe = {row["what"]: row["raw"] for row in ovt.overhead_table(_OVERHEAD).rows}
    assert oe["Step, not overlapped"] - oe["Step, overlapped"] == pytest.approx(oe["Wire time in all"], rel=0.02)
    assert oe["Overheads in all"] == pytest.approx(2 * oe["LogP overhead o"] * oe["Layers"])
    for row in ovt.hidden_table().rows:
        assert row["hidden"] == pytest.approx((row["layers"] - 1) / row["layers"])
    sh = ovt.shapes_table()
    small, large = sh.meta["small"], sh.meta["large"]
    best = next(row for row in sh.rows if row["what"] == "Best cap")
    assert best["raw"] == (small.cap_bytes, large.cap_bytes)


# ============================================================================ the page's check-yourself cases
def test_check_yourself_timelines_follow_the_slower_stream(page08):
    """Equal layers: with half the backward per layer the ring is the slower stream, the
    step is b + L·a; the tree is faster than b, the step is L·b + a (written out); with
    twice napkin math 1.8's backward, L·2b + a pipelined against L·(2b + a) in sequence."""
    from commbook.units import fmt_number, fmt_pct, fmt_time
    qb, n = 0.5e-3, 32
    assert _TREE <= qb < _RING and page08["rt_q_b_s"] == fmt_time(qb, 3)
    assert page08["rt_q_ring_s"] == fmt_time(qb + n * _RING, 3)
    assert page08["rt_q_tree_s"] == fmt_time(n * qb + _TREE, 3)
    assert page08["rt_q_pen_s"] == fmt_time(qb + n * _RING - (n * qb + _TREE), 3)
    c = on.NM18
    b2, a, L = 2 * c["backward"], c["allreduce"], c["layers"]
    assert b2 > a
    assert page08["nm_q18_pipe_ms"] == fmt_number((L * b2 + a) * 1e3, 4)
    assert page08["nm_q18_seq_ms"] == fmt_number(L * (b2 + a) * 1e3, 5)
    assert page08["nm_q18_saving_frac"] == fmt_pct(1 - (L * b2 + a) / (L * (b2 + a)))


def test_page_quotes_napkin_math_1_8(page08):
    """The box: b + L·a pipelined (a > b: the all-reduces are the slower stream), L(b + a)
    in sequence, 880 MB per layer, the given all-reduce against the hierarchical model."""
    from commbook.units import fmt_bytes, fmt_number, fmt_pct
    seq, pipe = L * (B + A), B + L * A              # a > b: the all-reduces are the slower stream
    assert (page08["nm_layers"], page08["nm_gpus"], page08["nm_a_ms"], page08["nm_rest"]) == ("32", "64", "26.4", "31")
    assert page08["nm_seq_ms"] == fmt_number(seq * 1e3, 5)
    assert _round(seq * 1e3, 1) == on.CHAPTER_NM18["sequential"][0] * 1e3
    assert page08["nm_pipe_ms"] == fmt_number(pipe * 1e3, 4)
    assert page08["nm_saving_frac"] == fmt_pct(1 - pipe / seq)
    assert page08["nm_lb_bytes"] == fmt_bytes(7e9 / 32 * 4, digits=3) and page08["nm_chapter_lb_bytes"] == "880 MB"
    assert page08["nm_exp_ms"] == fmt_number((A - B) * 1e3, 4) and page08["nm_commtot_ms"] == fmt_number(L * A * 1e3, 4)
    chk = on.nm18_check()
    assert page08["nm_ck_k"] == str(math.ceil(7e9 / 32 * 4 / (100 * MB))) and page08["nm_ck_ratio"] == fmt_number(A / chk.one_s, 2)


def test_check_yourself_buckets_at_50_mib():
    """At a 50 MiB cap the rebuilt order keeps the same first bucket, the embedding alone
    closes the list, and the last bucket stays below the cap."""
    from commbook.units import MiB
    base, q = ob.bucket_table().meta, ob.bucket_table(cap=50 * MiB).meta
    sizes = base["sizes"]
    assert q["rebuilt"][-1] == [0] and q["rebuilt"][0] == base["rebuilt"][0]
    assert sum(sizes[i] for i in q["rebuilt"][-1]) < 50 * MiB


def test_page_quotes_the_buckets_plans_and_sweep(page08):
    """What the bucket paragraphs quote: PyTorch's 25 MiB cap and 1 MiB first bucket, the
    synthetic list (12 tensors), the 50 MiB check, the best cap of the timeline figure, the
    sweep's shapes and the chapter's ranges, on 64 GPUs."""
    from commbook.hardware import IB_NDR_CHAPTER
    from commbook.units import fmt_bytes, fmt_pct
    g = page08
    sizes = [s for _, s in ob.SYNTHETIC_PARAMS]
    assert (g["bk_cap_mb"], g["bk_cap_mib"], g["bk_first_mib"], g["bk_cap_dec_bytes"]) == (
        "25", "25 MiB", "1 MiB", fmt_bytes(CAP, digits=3))
    assert g["bk_start_up_s"] == "630 µs" and ob.ring_startup() == pytest.approx(2 * 63 * 5e-6)
    assert (g["bk_syn_n"], g["bk_syn_embed"]) == ("12", "embed.weight")
    assert g["bk_syn_total_mib"] == f"{sum(sizes) / MiB:.3g} MiB"
    q = ob.bucket_table(cap=50 * MiB).meta
    assert (g["bk_q_cap_mib"], g["bk_q_cap_mb"], g["bk_q_n"]) == ("50 MiB", "50", str(len(q["rebuilt"])))
    assert g["bk_q_last_mib"] == f"{sum(sizes[i] for i in q['rebuilt'][-1]) / MiB:.3g} MiB" == "30 MiB"
    best = ob.sweep_summary(ob.TIMELINE_SHAPE).cap_bytes
    assert g["tl_best_cap_mib"] == f"{best / MiB:.3g} MiB" == "120 MiB"
    assert (g["sw_gpus"], g["sw_lg_layers"], g["sw_within_frac"]) == ("64", "8", fmt_pct(ob.NEAR_OPTIMUM))
    assert (g["sw_sm_range"], g["sw_lg_range"]) == ("5–10 MB", "50–100 MB")
    assert g["sw_alt_best_bytes"] == fmt_bytes(ob.sweep_summary(ob.SHAPES[0], IB_NDR_CHAPTER).cap_bytes, digits=3)
    assert g["sw_alt_alpha_s"] == f"{IB_NDR_CHAPTER.alpha / us:g} µs" == "2 µs"


def test_a_smaller_alpha_moves_the_best_bucket_down():
    from commbook.hardware import IB_NDR_CHAPTER
    small = ob.sweep_summary(ob.SHAPES[0])
    assert ob.sweep_summary(ob.SHAPES[0], IB_NDR_CHAPTER).cap_bytes < small.cap_bytes
