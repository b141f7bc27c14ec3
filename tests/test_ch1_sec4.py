"""Chapter §1.4 (all-reduce algorithms), page chapters/{zh,en}/ch1/04-allreduce-algorithms.md, book
code commbook.book.ch1.allreduce_numbers, allreduce_choice and allreduce_figures, and the
notebooks of Checkpoints 1.2 and 1.3.

Every number is checked against the chapter's stated result (within its rounding), a closed
form written out here, the simulator, or numpy.  Where the chapter is wrong both its number
and the page's are pinned."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from commbook import collectives as coll
from commbook.book.ch1 import allreduce_choice as ac
from commbook.book.ch1 import allreduce_facts as fx
from commbook.book.ch1 import allreduce_figures as af
from commbook.book.ch1 import allreduce_numbers as an
from commbook.book.ch1.boxes import BOX_LINKS
from commbook.collectives.butterfly import butterfly_pairs
from commbook.cost import allreduce_rabenseifner_on_ring
from commbook.hardware import IB_HDR
from commbook.units import GB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time, us

ST, SC = an.CHAPTER_STATED, ac.CHAPTER_STATED


def _texts(fig) -> dict[str, str]:
    return {t.get_gid(): t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid()} | \
        {t.get_gid(): t.get_text() for t in fig.texts if t.get_gid()}


def _lines(fig) -> dict:
    return {ln.get_gid(): ln for ax in fig.axes for ln in ax.lines if ln.get_gid()}


# ============================================================================ naive / parameter server
@pytest.fixture(scope="module")
def page04():
    """Page §1.4 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/ch1/04-allreduce-algorithms.md")


def test_parameter_server_centre_takes_n_minus_1_buffers(page04):
    """§1.4.1's cell: the star and K servers on 1,000 GPUs × 1 GB (simulated, α = 0): (p−1)·n/K
    bytes into one server in the push round, (p−1)·n into all of them, 2(p−1)·n/(Kβ)."""
    p, n = ST["ceiling_gpus"], ST["ceiling_bytes"]
    beta = BOX_LINKS["lb1.4"].beta
    assert BOX_LINKS["lb1.4"].alpha == 0 and (page04["ceil_p"], page04["ceil_n_bytes"]) == ("1,000", fmt_bytes(n))
    ring = 2 * (p - 1) / p * n / beta
    for key, k in (("naive", 1), ("mid", 8), ("big", 64)):
        g = lambda f: page04[f"ceil_{key}_{f}"]          # noqa: E731
        assert g("servers") == str(k)
        assert g("per_server_bytes") == fmt_bytes((p - 1) * n / k)          # the correct count
        assert g("all_servers_bytes") == fmt_bytes((p - 1) * n)             # whatever K
        assert g("time_s") == fmt_time(2 * (p - 1) * n / (k * beta))        # written out
        assert g("ring_x") == fmt_ratio(2 * (p - 1) * n / (k * beta) / ring)
    assert page04["ceil_naive_ring_x"] == fmt_ratio(p)                      # T ∝ N·M/β against 2M/β
    assert page04["ceil_chapter_into_bytes"] == fmt_bytes(p * n) != page04["ceil_naive_per_server_bytes"]   # N·M
    assert page04["ceil_ring_s"] == fmt_time(ring) and page04["ceil_ring_sent_bytes"] == fmt_bytes(ring * beta, digits=4)


def test_ps_table_adds_the_ring():
    rows = [dict(algo=f"K = {k}", time_s=1.0 / k, per_server_bytes=1e9 / k, all_servers_bytes=1e9, ring_x=10.0 / k)
            for k in (1, 8)]
    t = an.ps_table(rows, 0.1, 1000, 1 * GB, 50 * GB)
    assert t.column("algo") == ["K = 1", "K = 8", "ring"] and t.cell(2, "per_server_bytes") == "—"
    assert "1,000" in t.title["en"] and "50 GB/s" in t.title["zh"] and t.cell(1, "algo", "zh") == "参数服务器，K = 8"


# ============================================================================ lower bound
def test_lower_bound_example_64_gpus_1_gb(page04):
    """§1.4.2's cell: the bound 2(p−1)/p·n/β and the binomial tree's 2·log2(p)·n/β (α = 0 in the
    closed forms' bandwidth terms), on 50 and 450 GB/s, over 100,000 steps."""
    p, n = ST["lb_gpus"], ST["lb_bytes"]
    assert (page04["lb_p"], page04["lb_n_bytes"], page04["lb_speedup"]) == ("64", "1 GB", "9")
    assert float(page04["lb_factor"]) == pytest.approx(2 * (p - 1) / p)
    for key, beta in (("lb50", 50 * GB), ("lb450", 450 * GB)):
        link = BOX_LINKS["lb1.4" if key == "lb50" else "lb1.4-nvl"]
        bound, tree = 2 * (p - 1) / p * n / beta, 2 * math.log2(p) * n / beta
        assert link.beta == beta and link.alpha * 2 * math.log2(p) < 1e-3 * tree
        assert page04[f"{key}_bound_s"] == fmt_time(bound)
        assert page04[f"{key}_tree_x"] == fmt_ratio(tree / bound)
        lo, hi = ST["lb_difference_ms"]                   # "several ms": far too small
        assert float(page04[f"{key}_diff_s"].split()[0]) > hi
    assert (page04["lb50_diff_s"], page04["lb450_diff_s"]) == ("200.6 ms", "22.29 ms")
    assert (page04["lb50_over_steps_s"], page04["lb450_over_steps_s"]) == ("5.57 h", "37.2 min")


def test_lower_bound_table_shows_its_rows():
    rows = [dict(beta_Bps=b, bound_s=1.0 / b, tree_s=6.0 / b, diff_s=5.0 / b, over_steps_s=5e5 / b)
            for b in (50 * GB, 450 * GB)]
    t = an.lower_bound_table(rows, 100_000)
    assert t.column("diff_s") == [r["diff_s"] for r in rows]
    assert t.cells()[0][0] == "50 GB/s" and t.cells()[1][-1] == an.in_hours(5e5 / (450 * GB))
    assert "100,000" in " ".join(t.headers["en"])


# ============================================================================ ring
def test_example_1_1_trace_matches_figure_6_convention(page04):
    """Rank i ends the reduce-scatter owning chunk i; the inventory's recomputed trace; what
    §1.4.3's cell glues from it, and the ring's α steps on 10,000 nodes."""
    res = an.ring_trace()
    states = [[b[0].tolist() for b in st.state] for st in res.trace]
    assert states[0] == [[1, 5, 9, 7], [2, 6, 4, 15], [5, 7, 5, 9], [4, 15, 6, 10]]
    assert states[2] == [[10, 20, 9, 7], [2, 26, 13, 15], [5, 7, 18, 24], [9, 15, 6, 34]]
    assert states[4] == [[10, 20, 18, 34], [10, 26, 13, 34], [10, 26, 18, 24], [9, 26, 18, 34]]
    total = np.sum(np.asarray(an.EXAMPLE_1_1), axis=0).tolist()
    assert total == [10, 26, 18, 34] and states[-1] == [total] * 4
    f = an.trace_facts(res)
    assert f.owns_after_rs == [[0], [1], [2], [3]] and f.every_rank_sends_and_receives
    assert f.rounds == 6 and f.sent_bytes == [f.bound_bytes] * 4 == [2 * 3 / 4 * 4 * 8] * 4   # 2(p-1)/p of 4 int64s
    r = {k: page04[f"r_{k}"] for k in ("p", "rs", "rounds", "sum", "sent_buffers", "inputs")}
    assert r == dict(p="4", rs="3", rounds="6", sum=str(total), sent_buffers=f"{2 * 3 / 4:g}",
                     inputs=", ".join(str(x) for x in an.EXAMPLE_1_1))
    big = ST["ring_nodes"]
    assert BOX_LINKS["s1.4"].alpha == 5e-6 and page04["r_big_nodes"] == f"{big:,}"
    assert page04["r_big_steps"] == f"{2 * (big - 1):,}" and page04["r_big_latency_s"] == fmt_time(2 * (big - 1) * 5e-6, 3)


def test_algorithm_1_indices_are_the_schedule():
    """The page's pseudo-code: step s of reduce-scatter sends chunk (i − s) mod N, of
    all-gather chunk (i − s + 1) mod N."""
    res = an.ring_trace()
    N = len(an.EXAMPLE_1_1)
    for k, st in enumerate(res.trace):
        rs = k < N - 1
        s = k + 1 if rs else k - (N - 1) + 1
        for i, d, off in zip(st.round.src.tolist(), st.round.dst.tolist(), st.round.soff.tolist()):
            assert d == (i + 1) % N
            assert off == ((i - s) % N if rs else (i - s + 1) % N)


def test_trace_table_rows():
    t = an.trace_table()
    assert len(t) == 7 and t.value(0, "g0") == "[1, 5, 3, 7]"
    assert t.value(1, "msgs").startswith("0→1: 3") and t.value(6, "g3") == "[10, 26, 18, 34]"
    assert t.cell(1, "step", "zh") == "RS 第 1 步"


def test_ring_steps_10000_nodes():
    assert an.alpha_steps("ring", ST["ring_nodes"]) == 19_998
    assert round(19_998, -3) == ST["ring_hops"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figure6_draws_the_traced_shards(lang, cjk_font):
    fig = af.fig_ring_phases(lang)
    texts = _texts(fig)
    total = np.sum(np.asarray(an.EXAMPLE_1_1), axis=0)
    after_rs = [b[0] for b in an.ring_trace().trace[2].state]
    for g in range(4):
        for c in range(4):
            done = after_rs[g][c] == total[c]
            assert texts[f"shard:rs:{g}:{c}"] == ("Σ" if done else "") + "ABCD"[c]
            assert done == (g == c)                                  # rank i owns chunk i
            assert texts[f"shard:ag:{g}:{c}"] == "Σ" + "ABCD"[c]
    assert "1.5 M" in texts["foot"] and " 6 " in texts["foot"]


# ============================================================================ tree
def test_tree_steps_1024_and_8_gpus(page04):
    link = BOX_LINKS["tree1.4"]
    ring = an.run("ring", ST["tree_nodes"], 1.0, link).rounds
    tree = an.run("tree", ST["tree_nodes"], 1.0, link).rounds
    assert (ring, tree) == (ST["tree_ring_steps"], ST["tree_steps"]) == (2046, 20)
    assert round(ring / tree, -2) == ST["tree_step_ratio"]
    # §1.4.4's cell: 8 GPUs of a node, 1 MB; the simulated rounds and times against the closed forms
    p, n = ST["tree_small_gpus"], ST["tree_small_bytes"]
    assert (page04["t8_p"], page04["t8_n_bytes"]) == (str(p), fmt_bytes(n))
    assert (page04["t8_ring_rounds"], page04["t8_tree_rounds"]) == (str(ST["tree_small_ring_alpha"]),
                                                                    str(ST["tree_small_tree_alpha"]))
    a, b = link.alpha, link.beta
    ring_s, tree_s = 14 * a + 2 * 7 / 8 * n / b, 6 * a + 6 * n / b
    assert tree_s < ring_s
    assert (page04["t8_ring_time_s"], page04["t8_tree_time_s"]) == (fmt_time(ring_s, 3), fmt_time(tree_s, 3))
    n4 = 4 * MB                                           # the quiz: at 4 MB the ring is back ahead
    ring4, tree4 = 14 * a + 2 * 7 / 8 * n4 / b, 6 * a + 6 * n4 / b
    assert ring4 < tree4 and page04["q_t_n_bytes"] == "4 MB"
    assert (page04["q_t_ring_time_s"], page04["q_t_tree_time_s"]) == (fmt_time(ring4, 3), fmt_time(tree4, 3))
    assert page04["q_t_tree_bandwidth_s"] == fmt_time(6 * n4 / b, 3)


def test_tree_facts(page04):
    """§1.4.4's cell: the tree's senders on 8 GPUs, the α steps on 1,024 nodes, and 140 GB on
    1,000 GPUs (bandwidth terms only)."""
    g = lambda k: page04[f"t_{k}"]                        # noqa: E731
    assert (g("p"), g("senders"), g("share_frac")) == ("8", "4, 2, 1, 1, 2, 4", fmt_pct(14 / 48))
    assert (g("nodes"), g("ring_steps"), g("tree_steps")) == ("1,024", "2,046", "20")
    assert g("steps_x") == fmt_ratio(2 * 1023 / 20, 4)
    beta = BOX_LINKS["lb1.4"].beta
    assert (g("big_n_bytes"), g("big_p"), g("big_beta_Bps")) == ("140 GB", "1,000", "50 GB/s") and beta == 50 * GB
    assert g("big_ring_s") == fmt_time(2 * 999 / 1000 * ST["tree_big_bytes"] / beta, 3)
    assert g("big_tree_s") == fmt_time(2 * math.ceil(math.log2(1000)) * ST["tree_big_bytes"] / beta, 3)


def test_tree_leaves_ports_idle():
    act = an.tree_activity(8)
    assert act.senders == [4, 2, 1, 1, 2, 4]
    assert act.mean_share_frac == pytest.approx(14 / 48)


# ============================================================================ straggler (Checkpoint 1.2)
def test_straggler_slows_the_ring_exactly_one_and_a_half_times():
    S = an.STRAGGLER
    assert (S["p"], S["n"], S["link"].beta, S["link"].alpha) == (8, 1 * GB, 450 * GB, 0.0)
    for k in range(S["p"]):
        r = an.straggler("ring", k)
        assert r.ratio_x == pytest.approx(1.5, rel=1e-12)
        assert len(r.slowed_rounds) == r.rounds == 14
        assert r.time_s == pytest.approx(14 * (S["n"] / 8) / (450 * GB * 2 / 3))


def test_straggler_slows_the_tree_only_where_it_takes_part():
    root, leaf = an.straggler("tree", 0), an.straggler("tree", 1)
    assert root.ratio_x == pytest.approx(1.5) and root.slowed_rounds == list(range(6))
    assert leaf.slowed_rounds == leaf.touching_rounds == [0, 5]
    assert leaf.ratio_x == pytest.approx((4 + 2 * 1.5) / 6)


def test_checkpoint_1_3_reduce_scatter_trace():
    data = an.CHECKPOINT_1_3_TRACE["data"]
    res = an.rs_trace(data)
    assert len(res.trace) == 2
    sums = np.sum(np.asarray(data), axis=0)
    assert [int(o[0]) for o in res.outputs] == sums.tolist() == [111, 222, 333]


# ============================================================================ butterfly
def test_butterfly_pairs_are_the_chapters():
    near = butterfly_pairs(8, "near_first")
    assert near[:3] == SC["butterfly_pairs"]
    assert near[3:] == near[:3][::-1]                                  # all-gather undoes it
    for k, rnd in enumerate(SC["butterfly_pairs"]):
        assert rnd == sorted({(min(i, i ^ (1 << k)), max(i, i ^ (1 << k))) for i in range(8)})
    big = SC["butterfly_big_pow2"]
    last = butterfly_pairs(big, "near_first")[int(math.log2(big)) - 1]
    assert {b - a for a, b in last} == {SC["butterfly_last_xor"]} and len(last) == big // 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_butterfly_figure_draws_the_schedule(lang, cjk_font):
    fig = af.fig_butterfly(lang)
    lines, texts = _lines(fig), _texts(fig)
    for order in ac.ORDERS:
        pairs = butterfly_pairs(8, order)
        drawn = {(int(r), int(a), int(b)) for key in lines if key.startswith(f"pair:{order}:")
                 for _, _, r, a, b in [key.split(":")]}
        assert drawn == {(r + 1, a, b) for r, rnd in enumerate(pairs) for a, b in rnd}
        shares = [texts[f"share:{order}:{r}"] for r in range(1, 7)]
        dists = [b - a for a, b in (rnd[0] for rnd in pairs)]
        rs = ["M/2", "M/4", "M/8"]
        assert shares == rs + rs[::-1]
        far_round = dists.index(4)
        assert shares[far_round] == ("M/8" if order == "near_first" else "M/2")


def test_pairing_order_costs():
    t = ac.order_table()
    rows = {r["topo"]: r for r in t.rows}
    assert rows["switch"]["near_first"] == pytest.approx(rows["switch"]["far_first"], rel=1e-12)
    for k in ("ring", "torus", "twolevel", "twolevel_big"):
        assert rows[k]["near_first"] < rows[k]["far_first"]
    link, n = BOX_LINKS["cp1.3"], 64 * MB
    for order in ac.ORDERS:                       # the ring against its closed form
        assert rows["ring"][order] == pytest.approx(allreduce_rabenseifner_on_ring(8, n, link.alpha, link.beta, order))
    assert rows["switch"]["near_first"] == pytest.approx(6 * link.alpha + 2 * 7 / 8 * n / link.beta)


def test_rabenseifner_fold_for_1000():
    assert ac.alpha_steps_fold(SC["butterfly_big"]) == 2 and ac.alpha_steps_fold(1024) == 0


def test_butterfly_facts(page04):
    """§1.4.5's cell: the chapter's pairs, the two nodes, the last round's share and partners,
    MPICH's fold on 1,000 GPUs, and the far / near ratio on 128 nodes of eight."""
    g = lambda k: page04[f"bf_{k}"]                      # noqa: E731
    assert [g("k0"), g("k1"), g("k2")] == [", ".join(f"({a}, {b})" for a, b in rnd) for rnd in SC["butterfly_pairs"]]
    assert (g("p"), g("log"), g("gpn"), g("node0"), g("node1"), g("last_share")) == ("8", "3", "4", "0–3", "4–7", "M/8")
    assert (g("big"), g("big_pow2"), g("big_pow2_xor")) == ("1,000", "1,024", f"{SC['butterfly_last_xor']}")
    assert g("fold") == str(ac.alpha_steps_fold(SC["butterfly_big"])) == "2" and g("big_nodes") == "128"
    t = ac.order_table()
    assert g("big_x") == fmt_ratio(t.find(topo="twolevel_big")["ratio"]) and t.find(topo="twolevel_big")["ratio"] > 1
    # near first on two nodes of four: only the rounds with partners four apart cross the nodes
    rounds = af.butterfly_rounds(8, "near_first")
    assert [r["cross"] for r in rounds] == [b - a == 4 for a, b in (r["pairs"][0] for r in rounds)]


# ============================================================================ double tree
def test_double_tree_inner_nodes_are_complementary(page04):
    """§1.4.6's cell: each tree's inner ranks on 8 GPUs; every rank is inner in exactly one tree."""
    from commbook.double_tree import double_tree_parents
    assert page04["dt_p"] == "8"
    inner = [[int(r) for r in page04[f"dt_inner{t}"].split(", ")] for t in (0, 1)]
    assert not set(inner[0]) & set(inner[1]) and sorted(inner[0] + inner[1]) == list(range(8))
    for t, parent in enumerate(double_tree_parents(8)):       # an inner rank is someone's parent
        assert all(np.any(parent == r) for r in inner[t])


def test_figure7_data_and_crossovers():
    d = ac.figure7_data()
    assert d.p == SC["fig7"]["p"] and d.beta_Bps * 8 == SC["fig7"]["gbps"] * 1e9 and d.line_rate == "200 Gb/s"
    assert (d.lo_bytes, d.hi_bytes) == pytest.approx(SC["fig7"]["sizes"])
    assert d.x_tree_bytes == pytest.approx(coll.crossover("ring", "tree", 256, IB_HDR.alpha, IB_HDR.beta))
    assert round(d.x_tree_bytes / MB, 2) == 3.09 and round(d.x_env_bytes / GB, 2) == 5.53     # inventory, α = 3.5 µs
    p, a, b = 256, IB_HDR.alpha, IB_HDR.beta                 # the envelope crossover solved by numpy
    m = np.linalg.solve([[1, -2 * (p - 1) / p / b], [1, -2 / b]], [2 * (p - 1) * a, 2 * 8 * a])
    assert d.x_env_bytes == pytest.approx(m[1])
    assert d.approx_bytes == pytest.approx(p * a * b / 8)
    assert d.x_tree_bytes < d.x_dtree_bytes < d.x_env_bytes


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figure7_envelope_lies_below_the_tree(lang, cjk_font):
    fig = af.fig_crossover(lang)
    lines = _lines(fig)
    xs = lines["curve:tree"].get_xdata()
    env, tree = lines["curve:envelope"].get_ydata(), lines["curve:tree"].get_ydata()
    piped, ring = lines["curve:double_tree"].get_ydata(), lines["curve:ring"].get_ydata()
    assert np.array_equal(xs, lines["curve:envelope"].get_xdata())
    assert np.all(env < tree) and np.all(env <= piped) and np.all(piped <= tree)
    # drawn values are the closed forms
    for i in (0, len(xs) // 2, len(xs) - 1):
        n = xs[i]
        assert tree[i] == pytest.approx(2 * 8 * (IB_HDR.alpha + n / IB_HDR.beta))
        assert env[i] == pytest.approx(2 * 8 * IB_HDR.alpha + 2 * n / IB_HDR.beta)
        assert ring[i] == pytest.approx(2 * 255 * (IB_HDR.alpha + n / (256 * IB_HDR.beta)))
    for key in ("tree", "double_tree", "envelope"):
        assert f"xover:{key}" in lines


def test_table2_measured_columns_follow_the_formulas():
    res = fx.table2_numbers()
    t = fx.table2(res)
    p = res.p
    rows = {r["algo"]: r for r in t.rows}
    for name in ("ring", "tree", "rabenseifner"):
        spec, c = fx.TABLE2[name], rows[name]["cost"]
        assert c.rounds[0] == pytest.approx(spec["steps"][1](p), abs=1e-9)
        assert c.bandwidth[0] == pytest.approx(spec["bw"][1](p), rel=1e-9)
    assert [rows[k]["optimal"] for k in ("ring", "tree", "rabenseifner", "double_tree")] == ["yes", "no", "yes", "near"]
    c = rows["double_tree"]["cost"]
    assert c.rounds[1] == pytest.approx(2) and c.bandwidth[0] == pytest.approx(2)
    assert rows["double_tree"]["ratio"] == pytest.approx(p / (p - 1))
    assert res.dt_ratio == pytest.approx(p / (p - 1)) and res.bound == pytest.approx(2 * (p - 1) / p)


def test_buckets(page04):
    """§1.4.6's cell: the DDP buckets (25 and 100 MB) on InfiniBand HDR; the ring wins both up to
    64 GPUs and the double tree from 256, as the ring = double tree crossover says."""
    link = ac.FIG7["link"]
    assert SC["buckets"] == (25 * MB, 100 * MB) and (page04["bk_lo_bytes"], page04["bk_hi_bytes"]) == ("25 MB", "100 MB")
    x = {p: coll.crossover("ring", "double_tree", p, link.alpha, link.beta) for p in (8, 64, 256, 1024)}
    assert all(min(SC["buckets"]) > x[p] for p in (8, 64)) and all(max(SC["buckets"]) < x[p] for p in (256, 1024))
    assert (page04["bk_ring_max"], page04["bk_dt_min"], page04["bk_big"]) == ("64", "256", "1,024")
    assert page04["bk_xtree_big_bytes"] == fmt_bytes(coll.crossover("ring", "tree", 1024, link.alpha, link.beta))


def test_bucket_table_shows_its_rows():
    rows = [{"p": 8, "x_tree": 1e6, "x_dtree": 2e6, "b0": "ring", "b1": "ring"},
            {"p": 1024, "x_tree": 1e7, "x_dtree": 2e9, "b0": "double_tree", "b1": "double_tree"}]
    t = fx.bucket_table(rows, SC["buckets"], ac.FIG7["link"])
    assert t.cell(1, "p") == "1,024" and t.cell(1, "x_dtree") == "2 GB" and t.cell(0, "b0") == "ring"
    assert any("100 MB" in h for h in t.headers["en"]) and t.cell(1, "b1", "zh") != "double_tree"


# ============================================================================ switch point
def test_switch_point_n_100():
    sp = ac.switch_point(SC["s14"]["p"], BOX_LINKS["s1.4"])
    assert sp.approx_bytes == pytest.approx(100 * 5e-6 * 50e9 / math.log2(100))
    assert round(sp.approx_bytes / MB, 1) == SC["s14"]["mb"]                    # "≈ 3.8 MB"
    assert sp.approx_bytes / MB == pytest.approx(3.763, abs=5e-4)
    assert sp.exact_bytes == pytest.approx(sp.numeric_bytes, rel=1e-9) and sp.exact_bytes > sp.approx_bytes
    assert sp.crude_bytes == pytest.approx(25 * MB)


def test_napkin_math_1_5(page04):
    """Napkin Math 1.5's cell: ring against tree on 64 GPUs, 1 MB, α = 10 µs, β = 10 GB/s, each
    split into latency and bandwidth terms (written out here), the margin, the ratios and the
    switch points."""
    s, g = SC["nm15"], lambda k: page04[f"n15_{k}"]            # noqa: E731
    link = BOX_LINKS["nm1.5"]
    assert (link.alpha, link.beta) == (10e-6, 10e9)
    assert (g("p"), g("n_bytes"), g("alpha_s"), g("beta_Bps")) == (str(s["p"]), fmt_bytes(s["n"]), "10 µs", "10 GB/s")
    assert (g("log"), g("p_minus_1"), g("rough_bw_s")) == ("6", "63", ac.in_us(200 * us))
    ring_lat, ring_bw, tree_lat, tree_bw = 2 * 63 * 10 * us, 2 * 63 / 64 * 1e6 / 10e9, 12 * 10 * us, 12 * 1e6 / 10e9
    assert round(ring_lat / us) == s["ring_lat_us"] and round(ring_bw / us, 1) == s["ring_bw_us"]
    assert round((ring_lat + ring_bw) / us, 1) == s["ring_us"] and round((tree_lat + tree_bw) / us) == s["tree_us"]
    assert [g(k) for k in ("ring_latency_s", "ring_bandwidth_s", "tree_latency_s", "tree_bandwidth_s")] == \
        [ac.in_us(t) for t in (ring_lat, ring_bw, tree_lat, tree_bw)] == ["1,260 µs", "196.875 µs", "120 µs", "1,200 µs"]
    margin = ring_lat + ring_bw - tree_lat - tree_bw
    assert g("margin_s") == ac.in_us(margin) == "136.875 µs"
    assert g("margin_frac") == fmt_pct(margin / (ring_lat + ring_bw)) and round(100 * margin / (ring_lat + ring_bw)) == s["margin_pct"]
    assert g("lat_x") == fmt_ratio(10.5) and round(10.5, -1) == s["lat_x"]
    assert g("bw_x") == fmt_ratio(tree_bw / ring_bw) and round(tree_bw / ring_bw) == s["bw_x"]
    ab = 10e-6 * 10e9
    approx, exact = 64 * ab / 6, (2 * 63 - 12) * ab / (12 - 2 * 63 / 64)        # ring = tree, solved by hand
    assert round(approx / MB, 1) == s["crossover_mb"] and round(exact / MB, 3) == 1.136
    assert exact == pytest.approx(coll.crossover("ring", "tree", 64, 10e-6, 10e9), rel=1e-9)
    assert (g("switch_approx_bytes"), g("switch_exact_bytes")) == (fmt_bytes(approx, digits=4), fmt_bytes(exact, digits=4))
    # the table's 10 MB rows: the closed forms the cell calls, against the written-out ones
    ten = {a: coll.predict("all_reduce", a, 64, 10 * MB, link.alpha, link.beta) for a in ("ring", "tree")}
    assert (ten["ring"], ten["tree"]) == pytest.approx((ring_lat + 10 * ring_bw, tree_lat + 10 * tree_bw))
    assert (ten["ring"], ten["tree"]) == pytest.approx((3228.75 * us, 12120 * us))
    # the simulator agrees with the closed forms
    assert an.run("ring", 64, 1 * MB, link).time == pytest.approx(ring_lat + ring_bw)
    assert an.run("tree", 64, 1 * MB, link).time == pytest.approx(tree_lat + tree_bw)
    # the DDP buckets the page names (10, 50, 300 MB) lie above the exact switch point, 1 MB below
    assert 1 * MB < exact < 10 * MB and g("sizes") == "10 MB, 50 MB, 300 MB"


def test_fallacy_tree_1000_us_against_napkin_math(page04):
    """§1.9's pitfall repeats the box with 1,000 µs for the tree: that is the tree's bandwidth
    excess over the ring's (1,003.125 µs), not its bandwidth term (1,200 µs)."""
    f = SC["fallacy"]
    tree_bw, ring_bw = 12 * 1e6 / 10e9, 2 * 63 / 64 * 1e6 / 10e9
    assert f["tree_bw_us"] == 1000 and tree_bw / us != pytest.approx(f["tree_bw_us"], rel=0.1)
    assert page04["n15_tree_bw_excess_s"] == ac.in_us(tree_bw - ring_bw) == "1,003.125 µs"
    assert round((tree_bw - ring_bw) / us, -2) == f["tree_bw_us"]
    assert page04["n15_ring_lat_excess_s"] == ac.in_us(2 * 63 * 10 * us - 12 * 10 * us)
    assert (page04["n15_fallacy_tree_bw_s"], page04["n15_fallacy_ring_lat_s"]) == ("1,000 µs", "1,260 µs")


def test_checkpoint_1_3_numbers():
    cp = ac.checkpoint13()
    assert cp.switch.approx_bytes == pytest.approx(8 * MB) and round(cp.switch.exact_bytes / MB, 2) == 8.82
    assert round(cp.ring.total_s / us) == 2948 and cp.tree.total_s == pytest.approx(3280 * us)
    assert cp.choice == "ring"


def test_mpich_pairing_orders():
    """MPICH 4.3.2, written out from its loops: the Rabenseifner all-reduce
    (allreduce_intra_reduce_scatter_allgather.c:146-243) pairs newrank ^ mask for mask = 1,
    2, 4 … in the reduce-scatter, sending pof2/(2·mask) blocks (half the buffer first, to the
    nearest partner), then mask back down in the all-gather; the stand-alone recursive-halving
    reduce-scatter (reduce_scatter_intra_recursive_halving.c:167-230) starts at mask = pof2/2.
    commbook's near_first is the former, far_first the latter's order."""
    from commbook.collectives.butterfly import allreduce_rabenseifner, butterfly_pairs, halving_reduce_scatter

    pof2 = 8
    masks = [1 << k for k in range(3)]
    pairs = lambda mask: sorted({(min(r, r ^ mask), max(r, r ^ mask)) for r in range(pof2)})
    mpich_allreduce = [pairs(m) for m in masks] + [pairs(m) for m in masks[::-1]]
    assert butterfly_pairs(pof2, "near_first") == mpich_allreduce
    sched = allreduce_rabenseifner(np.arange(pof2)[None, :], 0, 8e6, True, order="near_first")
    assert [float(r.count.max()) for r in sched[:3]] == [8e6 * pof2 / (2 * m) / pof2 for m in masks]
    rs = halving_reduce_scatter(np.arange(pof2)[None, :], 0, 8e6, True, order="far_first")
    assert [sorted({(min(s, d), max(s, d)) for s, d in zip(r.src, r.dst)}) for r in rs] == \
        [pairs(m) for m in masks[::-1]]


def test_race_on_clusters_of_real_shape(page04):
    """§1.4.7's cell: on 32 nodes × 8 GPUs the ring with a channel per NIC (PXN) takes
    2(p-1)(α_IB + max(n/(pβ_NV), n/(Gpβ_IB))); the near-first butterfly takes its three NVLink
    rounds of n/2, n/4, n/8 and five rail rounds of n/16 … n/256, twice; at 1 GB the ring wins,
    at 64 KB the butterfly."""
    from commbook.hardware import IB_HDR, NVLINK4

    p, G, n = 256, 8, 1e9
    ring = 2 * (p - 1) * (IB_HDR.alpha + max(n / (p * NVLINK4.beta), n / (G * p * IB_HDR.beta)))
    fly = 2 * (sum(NVLINK4.alpha + n / 2 ** j / NVLINK4.beta for j in (1, 2, 3))
               + sum(IB_HDR.alpha + n / 2 ** j / IB_HDR.beta for j in range(4, 9)))
    assert ring < fly
    assert (page04["race_big_ring_s"], page04["race_big_rab_s"]) == (fmt_time(ring, 3), fmt_time(fly, 3))
    assert page04["race_steps"] == str(2 * (p - 1)) and page04["race_np_p"] == str(12 * 8)
    t = lambda k: float(page04[k].split()[0]) * {"ms": 1e-3, "µs": 1e-6}[page04[k].split()[1]]   # noqa: E731
    assert t("race_small_rab_s") < t("race_small_ring_s")                       # 64 KB: the butterfly
    assert t("race_np_ring_s") < t("race_np_rab_s") and t("race_far_ring_s") < t("race_far_s")   # 1 GB: the ring


def test_race_table_shows_its_rows():
    from commbook.book.ch1.allreduce_race import RACE_ALGORITHMS, race_clusters, race_key, race_table

    keys = [race_key(a, kw) for a, kw in RACE_ALGORITHMS]
    assert keys == ["ring", "rabenseifner_near_first", "rabenseifner_far_first", "tree"]
    rows = [{"cluster": "pow2", "p": 256, "n": 1e9, **dict(zip(keys, (1e-3, 2e-3, 3e-3, 4e-3))), "fastest": "ring"}]
    t = race_table(rows, race_clusters())
    assert t.cell(0, "rabenseifner_near_first") == fmt_time(2e-3, 3) and t.cell(0, "n") == "1 GB"
    assert t.cell(0, "cluster", "en") != "pow2" and t.column("fastest") == ["ring"]


# ---------------------------------------------------------------- tables the prose points to (issue 16 §2)
def test_tree_example_table_shows_its_rows():
    link = BOX_LINKS["tree1.4"]
    rows = [dict(algo="ring", rounds=14, latency_s=14 * link.alpha, bandwidth_s=1e-6, time_s=14 * link.alpha + 1e-6),
            dict(algo="tree", rounds=6, latency_s=6 * link.alpha, bandwidth_s=2e-6, time_s=6 * link.alpha + 2e-6)]
    t = an.tree_example_table(rows, 8, 1 * MB, link)
    assert t.column("rounds") == [14, 6] and t.cell(1, "latency_s") == fmt_time(6 * link.alpha, 3)
    assert "1 MB" in t.title["en"] and "8" in t.title["zh"] and t.cell(1, "algo", "zh") != t.cell(1, "algo", "en")


def test_dtree_table_rows_are_dtree_rows():
    d = ac.FIG7
    sizes = (1e3, 1e6, 1e10)
    t = ac.dtree_table(d["p"], sizes, d["link"])
    assert t.rows == [dataclasses.asdict(r) for r in ac.dtree_rows(d["p"], sizes, d["link"])]
    kb, _, gb = ac.dtree_rows(d["p"], sizes, d["link"])
    assert kb.chunks == 1 and kb.double_tree_s <= kb.tree_s and gb.ring_s < gb.double_tree_s


def test_napkin_1_5_table_has_both_sizes():
    rows = [dict(n=n, algo=a, latency_s=1e-3, bandwidth_s=t, total_s=1e-3 + t)
            for n, t in ((1 * MB, 1e-4), (10 * MB, 1e-3)) for a in ("ring", "tree")]
    t = ac.nm15_table(rows, 64, 1 * MB, 10 * MB, BOX_LINKS["nm1.5"])
    assert [(r["n"], r["algo"]) for r in t.rows] == [(1 * MB, "ring"), (1 * MB, "tree"), (10 * MB, "ring"),
                                                    (10 * MB, "tree")]
    assert t.cell(0, "total_s") == "1,100 µs" and t.cell(2, "n") == "10 MB" and "64" in t.title["en"]
