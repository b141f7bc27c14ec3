"""Chapter §1.3 (collective primitives), page chapters/{zh,en}/ch1/03-primitives.md, book
code commbook.book.ch1.primitives, primitives_moe and primitives_use.

Every number of the page is checked against the chapter's stated result (within its
rounding), a closed form written out here, or an independent reference (numpy, exact
rational binomial sums, a seeded Monte Carlo).  Where the chapter is wrong or ambiguous
both its number and the page's are pinned."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from commbook import collectives as coll
from commbook import moe, parallelism
from commbook.book.ch1 import primitives as pr
from commbook.book.ch1 import primitives_moe as pm
from commbook.book.ch1.inputs import NM_1_4
from commbook.book.ch1 import primitives_use as pu
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR_CHAPTER, NVLINK4, NVLINK4_CHAPTER
from commbook.topology import Switch
from commbook.units import fmt_bytes, fmt_time

ST = pr.CHAPTER_STATED


def _texts(fig) -> dict[str, str]:
    """Every text artist of a figure with a gid, by gid."""
    out = {}
    for ax in fig.axes:
        for t in ax.texts:
            if t.get_gid():
                out[t.get_gid()] = t.get_text()
    return out


# ============================================================================ Figure 5
@pytest.fixture(scope="module")
def fig5_en():
    return pr.fig_primitives("en")


def _independent_runs():
    """The four collectives run again, on another switch (NVLink 4 of the lecture), so
    the figure is compared with outputs it did not draw from."""
    c = VirtualCluster(Switch(4, NVLINK4))
    x = pr.figure5_inputs()
    return x, {op: getattr(coll, op)(c, x[op]).outputs for op in pr.FIG5_OPS}


def test_fig5_draws_the_simulator_outputs(fig5_en):
    texts = _texts(fig5_en)
    x, runs = _independent_runs()
    for op in pr.FIG5_OPS:
        for r, out in enumerate(runs[op]):
            for j, v in enumerate(np.ravel(out)):
                assert texts[f"{op}:out:{r}:{j}"] == pr.fig5_text(op, v, r, "out")
            for j, v in enumerate(np.ravel(x[op][r])):
                assert texts[f"{op}:in:{r}:{j}"] == pr.fig5_text(op, v, r, "in")
            assert f"{op}:out:{r}:{np.size(out)}" not in texts       # nothing extra drawn


def test_fig5_all_reduce_is_ten_everywhere(fig5_en):
    """The chapter's Figure 5: inputs [1], [2], [3], [4], every output [10]."""
    texts = _texts(fig5_en)
    x = pr.figure5_inputs()["all_reduce"]
    assert [int(a[0]) for a in x] == [1, 2, 3, 4]
    total = int(np.sum(np.concatenate(x)))                     # numpy reference
    assert total == 10
    assert [texts[f"all_reduce:out:{r}:0"] for r in range(4)] == [str(total)] * 4


def test_fig5_other_panels_against_numpy(fig5_en):
    texts = _texts(fig5_en)
    x, runs = _independent_runs()
    # all-gather: every rank holds [a, b, c, d]
    for r in range(4):
        assert [texts[f"all_gather:out:{r}:{j}"] for j in range(4)] == list("abcd")
    # reduce-scatter: rank r holds the column sum Σ(letter r)
    cols = np.sum(np.stack(x["reduce_scatter"]), axis=0)
    for r in range(4):
        assert int(runs["reduce_scatter"][r][0]) == cols[r]
        assert texts[f"reduce_scatter:out:{r}:0"] == f"Σ{'abcd'[r]} = {cols[r]}"
    # all-to-all: a transpose, rank j holds block j of every rank (a_0 … a_3 on G0)
    m = np.stack(x["all_to_all"])
    for j in range(4):
        assert np.array_equal(runs["all_to_all"][j], m[:, j])
        assert [texts[f"all_to_all:out:{j}:{i}"] for i in range(4)] == ["abcd"[j] + "₀₁₂₃"[i] for i in range(4)]


def test_fig5_chinese_draws_the_same_values(fig5_en, cjk_font):
    zh = _texts(pr.fig_primitives("zh"))
    en = _texts(fig5_en)
    cells = [k for k in en if ":in:" in k or ":out:" in k]
    assert cells and all(zh[k] == en[k] for k in cells)
    assert pr.FIG5_LABELS["zh"]["all_reduce_use"] != pr.FIG5_LABELS["en"]["all_reduce_use"]


def test_figure5_values_the_page_glues(page03):
    """Figure 5 on 4 GPUs: the all-reduce of 1..4 is 10 everywhere; GPU i holds (i + 1)·10^j,
    so the reduce-scatter leaves 10·10^j on GPU j, and GPU 1 holds 2, 20, 200, 2000."""
    g, p = page03, 4
    assert (g["f5_p"], g["f5_last"], g["f5_ar_in"], g["f5_ar_out"]) == ("4", "3", "1, 2, 3, 4", str(sum(range(1, p + 1))))
    assert g["f5_rs_out"] == ", ".join(str(10 * 10 ** j) for j in range(p))
    assert g["f5_rs_g1"] == ", ".join(str(2 * 10 ** j) for j in range(p))


# ============================================================================ Definition 1.3
@pytest.fixture(scope="module")
def page03():
    """Page §1.3 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/ch1/03-primitives.md")


def test_naive_ring_ratio_both_conventions(page03):
    """Definition 1.3's cell: 1 GB per rank on 1,024 ranks at 50 GB/s, bandwidth terms only."""
    g, p, n, beta = page03, 1024, 1e9, 50e9
    assert (g["def_p"], g["def_n_bytes"], g["def_beta_Bps"]) == ("1,024", "1 GB", "50 GB/s")
    ring = 2 * (p - 1) / p * n / beta                       # closed forms, written out
    serial, overlap = 2 * (p - 1) * n / beta, (p - 1) * n / beta
    assert g["def_ring_s"] == fmt_time(ring, 3) and g["def_naive_serial_s"] == fmt_time(serial, 3)
    assert serial / ring == pytest.approx(p, rel=1e-12)                   # N = 1024
    assert float(g["def_ratio_overlap"]) == pytest.approx(overlap / ring) == p / 2   # N/2 = 512


def test_naive_ratio_against_the_chapter(page03):
    """The chapter's "500×" at N = 1024 is N/2 rounded; its own naive section gives N."""
    assert ST["naive_ring_ratio"] == 500 and ST["naive_ring_p"] == 1024
    assert page03["def_p"] == f"{ST['naive_ring_p']:,}"
    assert round(float(page03["def_ratio_overlap"]), -2) == ST["naive_ring_ratio"]
    assert page03["def_ratio_serial"] == f"{ST['naive_ring_p']:,}" and page03["def_ratio_stated"] == "500"
    assert ST["naive_ring_p"] != pytest.approx(ST["naive_ring_ratio"], rel=0.1)   # the serial ratio is N


def test_naive_simulated_equals_serial_convention():
    """The simulator's naive all-reduce (gather into the root, then send back) is the
    serial convention: its bandwidth term is 2(N−1)M/β."""
    p, n = 16, 1e6
    link = IB_NDR_CHAPTER
    t = coll.all_reduce(VirtualCluster(Switch(p, link)), nbytes=n, algorithm="naive").time
    assert t == pytest.approx(2 * (link.alpha + (p - 1) * n / link.beta), rel=1e-12)


# ============================================================================ six primitives
def test_primitives_table_is_the_closed_forms():
    x = pr.primitives()
    t = pr.primitives_table(x)
    N, M, a, b = x.p, x.n_bytes, x.link.alpha, x.link.beta
    lg = math.ceil(math.log2(N))
    expect = {
        ("broadcast", "binomial"): lg * (a + M / b),
        ("broadcast", "scatter_allgather"): N * a + 2 * (N - 1) / N * M / b,
        ("reduce", "binomial"): lg * (a + M / b),
        ("all_reduce", "ring"): 2 * (N - 1) * a + 2 * (N - 1) / N * M / b,
        ("all_reduce", "tree"): 2 * lg * (a + M / b),
        ("all_gather", "ring"): (N - 1) * a + (N - 1) / N * M / b,
        ("reduce_scatter", "ring"): (N - 1) * a + (N - 1) / N * M / b,
        ("all_to_all", "direct"): (N - 1) * a + (N - 1) / N * M / b,
    }
    assert len(t) == len(expect)
    for (c, alg), v in expect.items():
        assert t.find(collective=c, algorithm=alg)["time"] == pytest.approx(v, rel=1e-12)
    assert (x.bc_tree_s, x.bc_sag_s, x.ar_ring_s, x.ar_tree_s, x.ag_ring_s) == pytest.approx(
        [expect[k] for k in (("broadcast", "binomial"), ("broadcast", "scatter_allgather"), ("all_reduce", "ring"),
                             ("all_reduce", "tree"), ("all_gather", "ring"))], rel=1e-12)
    assert x.levels == lg == 6
    for lang in ("en", "zh"):
        html = t.to_html(lang)
        assert all(r.formula in html for r in pr.PRIMITIVE_ROWS)


def test_reduce_scatter_then_all_gather_is_all_reduce(page03):
    """The page's run on 4 ranks of 8 integers, rank d holding (d + 1)·[0..7]: the sum is 10·[0..7]."""
    x = [(d + 1) * np.arange(8, dtype=np.int64) for d in range(4)]
    ref = np.sum(np.stack(x), axis=0)                   # numpy reference
    assert (page03["dec_p"], page03["dec_len"]) == ("4", "8")
    assert page03["dec_ar"] == ", ".join(str(v) for v in ref.tolist()) == "0, 10, 20, 30, 40, 50, 60, 70"
    cluster = VirtualCluster(Switch(4, NVLINK4_CHAPTER))
    rs = coll.reduce_scatter(cluster, x).outputs
    for a in coll.all_gather(cluster, rs).outputs:
        assert a.dtype == np.int64 and np.array_equal(a, ref)
    assert np.array_equal(np.concatenate(rs), ref)


def test_float_order_changes_the_sum(page03):
    """float32: 1e8 + 1 rounds back to 1e8, so the order of [1e8, 1, −1e8, 1] decides the sum;
    ring and tree all-reduce of 8 × 16 float32 differ in some elements, by rounding only."""
    v = np.float32([1e8, 1, -1e8, 1])
    left, paired = ((v[0] + v[1]) + v[2]) + v[3], (v[0] + v[2]) + (v[1] + v[3])
    assert (page03["fp_vals"], page03["fp_left"], page03["fp_paired"]) == ("[1e8, 1, -1e8, 1]", f"{left:g}", f"{paired:g}")
    assert left != paired and (page03["fp_p"], page03["fp_len"]) == ("8", "16")
    assert 0 < int(page03["fp_differ"]) <= 16 and 0 < float(page03["fp_diff"]) < 1e-5
    rng = np.random.default_rng(0)
    x = [rng.standard_normal(16).astype(np.float32) for _ in range(8)]
    exact = np.sum(np.asarray(x, dtype=np.float64), axis=0)
    cluster = VirtualCluster(Switch(8, NVLINK4_CHAPTER))
    for alg in ("ring", "tree"):                          # both stay close to the float64 sum
        out = coll.all_reduce(cluster, x, algorithm=alg).outputs
        assert all(np.array_equal(o, out[0]) for o in out) and np.max(np.abs(out[0] - exact)) < 1e-5


def test_all_to_all_pair_counts(page03):
    """An all-to-all on N ranks has N(N−1) point-to-point pairs: 56 on 8, 4,032 on 64."""
    assert (page03["sp_p8"], page03["sp_n8"], page03["sp_p64"], page03["sp_n64"]) == ("8", f"{8 * 7}", "64", f"{64 * 63:,}")


# ============================================================================ Napkin Math 1.4
@pytest.fixture(scope="module")
def nm():
    return pm.napkin_1_4()


def test_nm_1_4_link():
    assert pr.NM_1_4_LINK.alpha == 3e-6 and pr.NM_1_4_LINK.beta == 50e9
    assert "napkin math 1.4" in pr.NM_1_4_LINK.source


def test_nm_1_4_volumes(nm):
    """262.144 KB per pair (exact); 7 × 262.144 KB = 1.835 MB, the chapter's 1.84 MB."""
    assert nm.tpp == 512 // 8 == 64
    assert nm.pair_bytes == 64 * 2048 * 2 == 262_144
    assert nm.sent_bytes == nm.recv_bytes == 7 * 262_144
    assert round(nm.sent_bytes / 1e6, 2) == ST["nm14_sent_mb"]


def test_nm_1_4_times(nm):
    a, b = 3e-6, 50e9
    transfer = a + 262_144 / b
    assert nm.transfer_s == pytest.approx(transfer, rel=1e-12)              # 8.243 µs
    assert round(nm.transfer_s * 1e6) == ST["nm14_transfer_us"]             # "3 + 5 = 8 µs"
    assert round(nm.transfer_bw_s * 1e6) == ST["nm14_transfer_bw_us"]
    assert nm.serial_s == pytest.approx(7 * transfer, rel=1e-12)            # 57.70 µs
    assert 7 * ST["nm14_transfer_us"] == ST["nm14_serial_us"]                # the chapter's 56 µs
    assert round(nm.serial_s * 1e6, 1) == 57.7 and nm.serial_s * 1e6 > ST["nm14_serial_us"]
    assert nm.inject_s == pytest.approx(a + 7 * 262_144 / b, rel=1e-12)
    assert round(nm.inject_s * 1e6, 1) == ST["nm14_injection_us"]       # 39.7 µs


def test_nm_1_4_simulated_shift_rounds(nm):
    """The direct all-to-all on a switch: P−1 rounds of α + n/(Pβ), n = the whole buffer."""
    P, n = 8, 512 * 4096
    closed = (P - 1) * (3e-6 + n / (P * 50e9))
    assert nm.rounds == P - 1
    assert nm.sim_s == pytest.approx(closed, rel=1e-12)
    assert nm.sim_v_s == pytest.approx(closed, rel=1e-12)
    assert nm.closed_s == pytest.approx(closed, rel=1e-12)
    assert nm.sim_s - nm.inject_s == pytest.approx((P - 2) * 3e-6, rel=1e-9)


# ============================================================================ MoE load
def _binomial_tail(n: int, q: Fraction, c: int) -> tuple[Fraction, Fraction]:
    """P(N > c) and E[max(N − c, 0)] for N ~ Binomial(n, q), exactly: with q = a/b every
    term is comb(n, k)·a^k·(b − a)^(n−k) / b^n, summed as integers."""
    a, b = q.numerator, q.denominator
    over = dropped = 0
    t = math.comb(n, c + 1) * a ** (c + 1) * (b - a) ** (n - c - 1)
    for k in range(c + 1, n + 1):
        over += t
        dropped += (k - c) * t
        if k < n:                       # next term, an exact integer division
            t = t * (n - k) * a // ((k + 1) * (b - a))
    return Fraction(over, b ** n), Fraction(dropped, b ** n)


def test_capacities_and_exact_drops():
    cap = pm.capacity()
    t = pm.capacity_table(cap)
    cfg = NM_1_4
    for row in t.rows:
        c = row["C"]
        assert row["capacity"] == math.ceil(Fraction(cfg.tokens * cfg.top_k, cfg.experts) * Fraction(str(c)))
        over, drop = _binomial_tail(cfg.tokens, Fraction(cfg.top_k, cfg.experts), row["capacity"])
        assert row["overflow"] == pytest.approx(float(over), rel=1e-9)
        assert row["dropped"] == pytest.approx(float(drop) / 64, rel=1e-9)
    assert [r["capacity"] for r in t.rows] == [64, 80, 96]      # the closed form at C = 1, 1.25, 1.5
    assert (cap.mid, cap.c1, cap.c_hi, cap.factors) == (80, 1.0, 1.5, "1, 1.25, 1.5")
    assert (cap.over1_frac, cap.drop1_frac) == (t.rows[0]["overflow"], t.rows[0]["dropped"])
    load = cap.load
    assert load.mean == 64 and load.var == pytest.approx(63) and load.sd == pytest.approx(math.sqrt(63))


def test_busiest_expert_monte_carlo():
    mc = pm.expert_max_monte_carlo(batches=300, seed=1)
    ref = mc.independent
    assert mc.counts.shape == (300, 64) and (mc.counts.sum(axis=1) == 4096).all()
    # the independent approximation is a lower bound, within a few standard errors
    assert mc.mean_max > ref - 3 * mc.stderr
    assert abs(mc.mean_max - ref) < 1.0


def test_expert_load_figure_draws_the_binomial():
    fig = pm.fig_expert_load("en", batches=50)
    ax = fig.axes[0]
    q = 1 / 64
    heights = {round(p.get_x() + p.get_width() / 2): p.get_height() for p in ax.containers[0]}
    for k in (50, 64, 80):
        exact = math.comb(4096, k) * q ** k * (1 - q) ** (4096 - k)
        assert heights[k] == pytest.approx(exact, rel=1e-9)
    caps = {ln.get_gid(): ln.get_xdata()[0] for ln in ax.lines if (ln.get_gid() or "").startswith("cap:")}
    assert caps == {f"cap:{c:g}": NM_1_4.capacity(c) + 0.5 for c in (1.0, 1.25, 1.5)}
    assert ax.containers[0].get_label() == pm.FIG_LOAD_LABELS["en"]["pmf"].format(n=4096, k=1, e=64)


# ============================================================================ skew and bounds
def test_skew_table_bounds():
    sk = pm.skew()
    t = pm.skew_table(sk)
    a, b = pr.NM_1_4_LINK.alpha, pr.NM_1_4_LINK.beta
    exact = t.find(routing="exact")
    assert exact["injection"] == pytest.approx(a + 7 * 262_144 / b, rel=1e-12)
    assert exact["reception"] == pytest.approx(exact["injection"], rel=1e-12)
    assert exact["startup"] == pytest.approx(7 * a)
    assert exact["binding"] == "injection"
    assert exact["simulated"] == pytest.approx(7 * (a + 262_144 / b), rel=1e-12)
    for row in t.rows:
        C = row["counts"].astype(float)
        off = C * (1 - np.eye(8))
        assert row["reception"] == pytest.approx(a + off.sum(axis=0).max() / b, rel=1e-12)
        assert row["injection"] == pytest.approx(a + off.sum(axis=1).max() / b, rel=1e-12)
        assert row["simulated"] >= max(row["injection"], row["reception"]) - 1e-15
    z = t.find(routing="zipf:1")
    assert z["binding"] == "reception" and z["reception"] > 1.5 * exact["reception"]
    # seeded: the same table twice
    assert pm.skew_table().find(routing="zipf:1")["hot_gpu"] == z["hot_gpu"]
    assert (sk.z1_rx_s, sk.z1_sim_s, sk.cap) == (z["reception"], z["simulated"], 80)
    assert sk.z1_gamma == z["hot_gpu"] / 512 and sk.os_full_bw_Bps == 8 * b / 2


def test_oversubscribed_bisection():
    o = pm.oversubscribed_bisection(4.0)
    P, beta, a = 8, 50e9, 3e-6
    assert o.bisection_bw_Bps == P * beta / (2 * 4.0)
    v_cut = (P // 2) * (P // 2) * 262_144                       # uniform: 4 × 4 pairs cross
    assert o.bounds.bisection == pytest.approx(a + v_cut / o.bisection_bw_Bps, rel=1e-12)
    assert o.bounds.binding == "bisection"


# ============================================================================ hierarchical
def test_flow_counts_chapter_and_like_for_like():
    f = pm.flow_counts()
    P, N, G = f.p, f.nodes, f.gpus
    d, h = f.direct, f.hierarchical
    assert d.gpu_pairs == P * (P - 1) == 4032                  # the chapter's P(P−1)
    assert h.node_pairs == N * (N - 1) == 56                   # the chapter's N_nodes(N_nodes−1)
    assert d.cross_node_gpu_pairs == P * (P - G) == 3584
    assert h.cross_node_gpu_pairs == G * N * (N - 1) == 448
    assert d.cross_node_gpu_pairs / h.cross_node_gpu_pairs == G
    assert h.max_per_rail == N * (N - 1)


def test_hierarchical_wins_for_small_chunks_only():
    t = pm.hierarchical_table()
    speed = [r["speedup"] for r in t.rows]
    assert speed[0] > 3 and all(x > y for x, y in zip(speed, speed[1:]))
    assert speed[-1] < 1.1
    N, G = 8, 8
    assert all(r["r_direct"] == N * G - 1 and r["r_hier"] == 2 * (G - 1) for r in t.rows)


# ============================================================================ tables
def test_schedule_and_selection_tables_render_both_languages():
    for t in (pu.schedule_table(), pu.selection_table()):
        en, zh = t.to_html("en"), t.to_html("zh")
        assert en != zh and "_when" not in en + zh and "b_" not in en + zh
    sel = pu.selection_table()
    assert [r["prim"] for r in sel.rows if r["par"] == "pp"] == ["send / recv"]


# ============================================================================ FSDP
def test_fsdp_counts_chapter_and_correct():
    f = pu.fsdp_numbers()
    L = f.layers
    assert f.k_chapter * L == ST["fsdp_collectives_per_layer"] * L == 2 * L     # chapter: 2·N_L
    assert f.n_full == 3 * L and f.k_full == 3                                  # FULL_SHARD: 3·N_L
    assert f.n_grad == 2 * L and f.k_grad == 2                                  # no reshard: 2·N_L
    assert f.steps["full"].count("all_gather") == 2 * L and f.steps["full"].count("reduce_scatter") == L


def test_zero3_over_ddp_bytes():
    f = pu.fsdp_numbers()
    p = f.world
    ag = rs = (p - 1) / p
    ar = 2 * (p - 1) / p
    assert f.ratio_full == pytest.approx((2 * ag + rs) / ar, rel=1e-12) == 1.5
    assert f.ratio_grad == pytest.approx((ag + rs) / ar, rel=1e-12) == 1.0
    z = parallelism.zero(3, pu.FSDP_MODEL["params"], p, n_layers=f.layers)
    assert z.bytes_per_gpu / f.steps["ddp"].bytes_per_gpu == pytest.approx(1.5)


def test_ddp_bucket_count_mib_and_mb():
    f = pu.fsdp_numbers()
    model = 7e9 * 2
    assert f.bucket_cap == 25 * 1024 * 1024 and f.bucket_mib == "25 MiB"
    assert f.buckets == math.ceil(model / (25 * 1024 * 1024)) == 535
    assert f.buckets_mb == math.ceil(model / 25e6) == 560
    assert f.n_ddp == f.buckets


def test_fsdp_startup():
    f = pu.fsdp_numbers()
    p, L, a = f.world, f.layers, f.link.alpha
    assert f.a_ring_s == pytest.approx((p - 1) * a)
    assert f.a_rd_s == pytest.approx(math.log2(p) * a)
    assert f.s_full_s == pytest.approx(3 * L * (p - 1) * a)
    assert f.s_rd_s == pytest.approx(3 * L * math.log2(p) * a)
    assert f.steps["grad_op"].startup_cost(f.a_ring_s) == pytest.approx(2 * L * (p - 1) * a)
    assert f.s_ddp_s == pytest.approx(f.buckets * 2 * (p - 1) * a)
    t = pu.fsdp_table(f)
    assert t.column("startup") == pytest.approx([f.s_ddp_s, 2 * L * (p - 1) * a, 3 * L * (p - 1) * a])
    for n, ring, rd in f.layer_times:
        b = f.link.beta
        assert ring == pytest.approx((p - 1) * (a + n / (p * b)))
        assert rd == pytest.approx(math.log2(p) * a + (p - 1) / p * n / b)
    assert (f.l10_bytes, f.l100_bytes) == (10e6, 100e6)
    assert f.l10_save_frac == pytest.approx(1 - f.layer_times[0][2] / f.layer_times[0][1])


def test_link_names():
    assert pr.link_name(IB_NDR_CHAPTER, "en").startswith("InfiniBand NDR") and "Gb/s" in pr.link_name(IB_NDR_CHAPTER, "en")
    assert "（" in pr.link_name(IB_NDR_CHAPTER, "zh")
    with pytest.raises(ValueError):
        pr.link_name(IB_NDR_CHAPTER, "fr")


def test_fsdp_start_ups_against_ddps_buckets():
    """§1.3's FSDP table: the ring start-ups of DDP's 25 MiB buckets (2(N-1)α each) exceed
    FSDP FULL_SHARD's per-layer ((N-1)α each), counted here from the calls and α; the pages
    no longer say that FSDP is the more α-sensitive of the two."""
    from pathlib import Path
    from commbook.book.ch1 import primitives_use as pu
    fs = pu.fsdp_numbers()
    ring_ag = fs.a_ring_s                          # (N-1)α, one ring all-gather's latency term
    assert fs.s_full_s == pytest.approx(fs.n_full * ring_ag, rel=1e-12)
    assert fs.s_ddp_s == pytest.approx(fs.buckets * 2 * ring_ag, rel=1e-12)
    assert fs.s_ddp_s > fs.s_full_s
    root = Path(__file__).resolve().parents[1]
    assert "more sensitive to α" not in (root / "chapters/en/ch1/03-primitives.md").read_text()
    assert "对 α 更敏感" not in (root / "chapters/zh/ch1/03-primitives.md").read_text()


# ---------------------------------------------------------------- tables the prose points to (issue 16 §2)
def test_decomposition_table_shows_all_gather_equal_to_all_reduce():
    x = [(d + 1) * np.arange(4, dtype=np.int64) for d in range(2)]
    ref = x[0] + x[1]
    t = pu.decomposition_table(x, [ref[:2], ref[2:]], [ref, ref], [ref, ref])
    assert len(t.rows) == 2 and all(r["ag"] == r["ar"] == "0, 3, 6, 9" for r in t.rows)
    assert t.rows[1]["input"] == "0, 2, 4, 6" and t.rows[1]["rs"] == "6, 9"


def test_flow_table_counts_and_the_factor_the_page_states():
    f = pm.flow_counts()
    t = pm.flow_table(f)
    d, h = t.rows
    assert d["cross"] / h["cross"] == d["rail"] / h["rail"] == f.gpus
    assert d["gpu_pairs"] == f.p * (f.p - 1) and d["node_pairs"] == h["node_pairs"] == f.nodes * (f.nodes - 1)


def test_fsdp_layer_table_and_napkin_setting():
    fs = pu.fsdp_numbers()
    t = pu.fsdp_layer_table(fs)
    assert [r["n"] for r in t.rows] == [n for n, *_ in fs.layer_times]
    assert t.rows[0]["save"] > t.rows[1]["save"] > 0                 # the saving shrinks as bytes dominate
    s = {r["what"]: r["value"] for r in pm.napkin_1_4_table().rows}
    nm = pm.napkin_1_4()
    assert s["tpe"] == str(nm.tpe) and s["gpus"] == str(nm.config.ranks)


# ---------------------------------------------------------------- the page's section facts (issue 18 §1)
def test_section_facts_the_page_glues(page03):
    from commbook import parallelism

    nm, g = pm.napkin_1_4(), page03
    # the quiz: top-2 sends every token to two experts
    assert g["q_k"] == "2" and g["q_sent_bytes"] == fmt_bytes(2 * nm.sent_bytes, digits=4)
    assert g["q_pair_bytes"] == fmt_bytes(2 * nm.pair_bytes, digits=6)
    assert g["q_sim_s"] == fmt_time(7 * (3e-6 + 2 * nm.pair_bytes / 50e9), 3) and float(g["q_ratio"]) > 1
    assert g["q_inject_s"] == fmt_time(3e-6 + 2 * nm.sent_bytes / 50e9, 3)
    f = nm
    assert (f.st_sent_bytes, f.st_transfer_s, f.st_serial_s) == pytest.approx((1.84e6, 8e-6, 56e-6))
    skew = pm.skew_table()
    exact, z1 = skew.find(routing="exact"), skew.find(routing="zipf:1")
    assert exact["simulated"] > exact["injection"] and abs(z1["injection"] / exact["injection"] - 1) < 0.15
    flows = pm.flow_counts()
    d, h = flows.direct, flows.hierarchical
    assert d.max_per_rail / h.max_per_rail == flows.gpus
    assert d.cross_node_gpu_pairs / h.cross_node_gpu_pairs == flows.gpus
    assert g["h_fl_cross_ratio"] == f"{flows.gpus:g}" and g["h_fl_direct"] == f"{flows.p * (flows.p - 1):,}"
    assert g["h_fl_nodes"] == f"{flows.nodes * (flows.nodes - 1)}"
    assert float(g["h_fl_chapter_ratio"]) == pytest.approx(flows.p * (flows.p - 1) / (flows.nodes * (flows.nodes - 1)), rel=1e-3)
    # four FSDP units per layer move the same bytes as one
    assert parallelism.fsdp(7e9, 128, 64).bytes_per_gpu == pytest.approx(parallelism.fsdp(7e9, 32, 64).bytes_per_gpu)
