"""Chapter §1.5 (hierarchical communication), page chapters/{zh,en}/ch1/05-hierarchical.md,
book code commbook.book.ch1.hierarchy_numbers, hierarchy_routing and hierarchy_figures.

Every number is checked against the chapter's printed result (within its rounding), a
closed form written out here, or the simulator; every figure against the data it draws
(per-link bytes of a simulator run, recounted here from the schedule or from
``Topology.route``).  Where the chapter is wrong both its number and the page's are pinned.
"""
from __future__ import annotations


import matplotlib
import numpy as np
import pytest
from matplotlib.colors import Normalize, to_rgba

from commbook import collectives as coll
from commbook import cost
from commbook.book.ch1 import hierarchy_figures as hf
from commbook.book.ch1 import hierarchy_numbers as hn
from commbook.book.ch1 import hierarchy_routing as hr
from commbook.book.ch1 import hierarchy_where as hw
from commbook.book.ch1.boxes import BOX_LINKS, BOX_NAMES
from commbook.book.p5.allreduce import sharp_gain
from commbook.collectives import t_allreduce_hierarchical, t_formula
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR_CHAPTER, ICI_V5E, NVLINK4_CHAPTER
from commbook.topology import SwitchTree, Torus, TwoLevel, ring_order
from commbook.units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time, ms

NV, IB = NVLINK4_CHAPTER, IB_NDR_CHAPTER
ST = hn.CHAPTER_STATED
REL = 1e-12


def _printed(x: float, decimals: int) -> float:
    return round(x / ms, decimals)


def _by_gid(fig, kind: str) -> dict:
    """Artists of a figure with a gid: ``kind`` is "texts", "patches" or "lines"."""
    return {a.get_gid(): a for ax in fig.axes for a in getattr(ax, kind) if a.get_gid()}


# ============================================================================ tiers
def test_tier_table_nine_times_and_the_mixed_eighteen(page_glue):
    """The page's tiers are Table 1's 450 and 50 GB/s per direction, 9× either way; the
    chapter's printed 900 GB/s is both directions, and its 18× mixes the two conventions."""
    assert (page_glue["t_nv_one_Bps"], page_glue["t_ib_one_Bps"]) == ("450 GB/s", "50 GB/s")
    assert page_glue["t_ratio_x"] == fmt_ratio(ST["tier_ratio"]) == "9×"
    assert NV.beta / IB.beta == (2 * NV.beta) / (2 * IB.beta) == 9 == ST["tier_ratio"]
    assert 2 * NV.beta == ST["tier_bw"] == 2 * 450e9                 # the printed 900 GB/s is both directions
    assert 2 * NV.beta / IB.beta == 18 == ST["fig8_ratio"]          # 900 / 50: two conventions at once
    bars = ST["fig8_bars"][0] / ST["fig8_bars"][1]
    assert bars == pytest.approx(7.0) and bars not in (9, 18)
    table = hn.tier_table()
    assert [r["ratio"] for r in table.rows] == [9.0, 1.0]
    assert [r["both"] for r in table.rows] == [2 * NV.beta, 2 * IB.beta]
    for lang in ("en", "zh"):
        assert "9×" in table.to_html(lang)


# ============================================================================ napkin math 1.6
def test_napkin_1_6_in_the_chapter_convention_gives_its_printed_numbers():
    """RS 875 MB / 450 GB/s = 1.944 ms; inter 2·7/8·125 MB / 50 GB/s + 14·3 µs = 4.417 ms;
    8.306 ms in all; flat 2 GB / 50 GB/s = 40 ms; 4.82× (printed 1.94, 4.42, 8.3, 40, 4.8)."""
    d = hn.nm16()
    b = d.chapter
    a = BOX_LINKS["nm1.6"].alpha
    assert a == 3e-6 and d.inter is BOX_LINKS["nm1.6"] and "nm1.6" in BOX_NAMES
    assert (d.rs_s, d.inter_s, d.total_s, d.flat_s, d.speedup_x) == (b.reduce_scatter, b.inter, b.total, b.flat, b.speedup)
    assert (d.pr_rs, d.pr_inter, d.pr_total, d.pr_flat, d.pr_x) == ("1.94", "4.42", "8.3", "40", "4.8×")
    rs = 7 / 8 * 1e9 / 450e9
    inter = 2 * 7 * (a + 1e9 / 64 / 50e9)
    assert b.reduce_scatter == pytest.approx(rs, rel=REL) and round(rs / ms, 3) == 1.944
    assert b.inter == pytest.approx(inter, rel=REL) and round(inter / ms, 3) == 4.417
    assert b.total == pytest.approx(2 * rs + inter, rel=REL) and round(b.total / ms, 3) == 8.306
    assert b.flat == pytest.approx(2 * 1e9 / 50e9, rel=REL)
    for key, attr in (("rs", "reduce_scatter"), ("inter", "inter"), ("total", "total"), ("flat", "flat")):
        value, decimals = ST["nm16"][key]
        assert _printed(getattr(b, attr), decimals) == _printed(value, decimals)
    assert round(b.speedup, 2) == 4.82 and round(b.speedup, 1) == ST["nm16"]["speedup"][0]


def test_napkin_1_6_counted_consistently_is_the_simulator():
    """Every α and (p-1)/p: flat 2·63(α + M/(64β)) = 39.753 ms, hierarchy with NVLink α
    1.5 µs 8.327 ms, 4.77× — the simulator on TwoLevel(8, 8) gives the same, phase by phase."""
    d = hn.nm16()
    c = d.consistent
    a = BOX_LINKS["nm1.6"].alpha
    flat = 2 * 63 * (a + 1e9 / (64 * 50e9))
    rs = 7 * (NV.alpha + 1e9 / (8 * 450e9))
    inter = 2 * 7 * (a + 1e9 / (64 * 50e9))
    assert c.flat == pytest.approx(flat, rel=REL) and d.sim["flat"] == pytest.approx(flat, rel=REL)
    assert c.total == pytest.approx(2 * rs + inter, rel=REL) == d.sim["hier"]
    assert list(d.sim_phases.values()) == pytest.approx([rs, inter, rs], rel=REL)
    assert (round(c.flat / ms, 3), round(c.total / ms, 3), round(c.speedup, 2)) == (39.753, 8.327, 4.77)
    table = hn.nm16_table(d)
    assert table.find(what="total")["chapter"] == pytest.approx(d.chapter.total)
    assert "flat" not in table.column("what")                  # the single ring lives in the note only


def _ring_pxn(p, G, n, nv, ib):
    """NCCL's ring with one channel per NIC and PXN, written out: 2(p-1) rounds; in each a
    GPU's NVLink port carries G chunks of n/(Gp) (G-1 hops in the node, one relayed to the
    channel's NIC) and each NIC one, and a round waits for its node-crossing message."""
    nvl = n / (p * nv.beta)
    return 2 * (p - 1) * max(nv.alpha + nvl, ib.alpha + max(nvl, n / (G * p * ib.beta)))


def test_napkin_1_6_against_the_ring_nccl_runs():
    """8 channels: bandwidth term 2·63/64 · 125 MB / 50 GB/s = 4.922 ms; with every α
    126 (3 µs + 1 GB/(512 · 50 GB/s)) = 5.300 ms = simulator; the hierarchy 1.69× (box's
    count) and 1.57× (every term) as long."""
    d = hn.nm16()
    r, a, c = d.ring, d.chapter, d.consistent
    M, p, G, ib = 1e9, 64, 8, BOX_LINKS["nm1.6"]
    assert r["channels"] == 8
    assert r["bandwidth"] == pytest.approx(2 * (p - 1) / p * M / G / ib.beta, rel=REL)
    assert r["sim"] == pytest.approx(_ring_pxn(p, G, M, NV, ib), rel=REL) == r["model"]
    assert r["sim"] == pytest.approx(2 * (p - 1) * (ib.alpha + M / (G * p * ib.beta)), rel=REL)
    assert (round(r["bandwidth"] / ms, 2), round(r["sim"] / ms, 2)) == (4.92, 5.30)
    table = hn.nm16_table(d)
    assert table.find(what="slower")["chapter"] == pytest.approx(a.total / r["bandwidth"], rel=REL)
    assert table.find(what="slower")["consistent"] == pytest.approx(c.total / r["sim"], rel=REL)
    assert (round(a.total / r["bandwidth"], 2), round(c.total / r["sim"], 2)) == (1.69, 1.57)
    assert (d.k, d.ring_bw_s, d.c_ring_s) == (8, r["bandwidth"], r["sim"])


def _hier(N, G, n, nv, ib):
    """Three phases written out: 2(G-1)(α_NV + n/(Gβ_NV)) + 2(N-1)(α_IB + n/(GNβ_IB))."""
    return 2 * (G - 1) * (nv.alpha + n / (G * nv.beta)) + 2 * (N - 1) * (ib.alpha + n / (G * N * ib.beta))


@pytest.fixture(scope="module")
def overtake():
    return hw.overtake()


def test_the_hierarchy_overtakes_the_ring_where_the_closed_forms_cross(overtake):
    """The node count from the written-out forms (the ring's 2(p-1) α_IB against the
    hierarchy's 2(G-1) α_NV + 2(N-1) α_IB); the simulator agrees on both sides of it."""
    G, ib = 8, BOX_LINKS["nm1.6"]
    assert list(overtake) == list(hw.OVERTAKE_SIZES)
    for n, v in overtake.items():
        N = next(N for N in range(2, 4096) if _hier(N, G, n, NV, ib) < _ring_pxn(N * G, G, n, NV, ib))
        assert v.nodes == N and v.gpus == N * G
        for m, r in ((N - 1, v.before), (N, v.at)):
            assert r.ring_s == pytest.approx(_ring_pxn(m * G, G, n, NV, ib), rel=1e-9)
            assert r.hier_s == pytest.approx(_hier(m, G, n, NV, ib), rel=1e-9)
        assert v.before.ring_s < v.before.hier_s and v.at.hier_s < v.at.ring_s
        assert v.alpha_ring_s == pytest.approx(2 * (N * G - 1) * ib.alpha, rel=REL)
        assert v.alpha_hier_s == pytest.approx(2 * 7 * NV.alpha + 2 * (N - 1) * ib.alpha, rel=REL)
    assert [v.nodes for v in overtake.values()] == sorted(v.nodes for v in overtake.values())
    assert len(hw.overtake_table(overtake)) == len(hw.OVERTAKE_SIZES)


def test_where_the_hierarchy_wins_and_where_the_ring_does():
    """Each case written out (1 GB, α_NV 1.5 µs, α_IB 3 µs on 8 x 8; Table 1's links on the
    racks): one NIC per node leaves one channel through one NIC, 2(p-1)(α + n/(pβ)), against
    a rail phase of 8 GPUs on that NIC; a 2:1 spine without PXN puts the 8 nodes' hops of a
    channel on one leaf uplink of 8β/2; the racks as in the three-tier test."""
    w = hw.where_cases()
    M, p, G, N, ib = 1e9, 64, 8, 8, BOX_LINKS["nm1.6"]
    ring = lambda bw: 2 * (p - 1) * (ib.alpha + M / (G * p * bw))
    rs = (G - 1) * (NV.alpha + M / (G * NV.beta))
    hier = 2 * rs + 2 * (N - 1) * (ib.alpha + M / (G * N * ib.beta))
    for k in ("plain", "spine_pxn"):
        assert w[k].ring_s == pytest.approx(ring(ib.beta), rel=REL) and w[k].hier_s == pytest.approx(hier, rel=REL)
    assert w["one_nic"].channels == 1
    assert w["one_nic"].ring_s == pytest.approx(2 * (p - 1) * (ib.alpha + M / (p * ib.beta)), rel=REL)
    assert w["one_nic"].hier_s == pytest.approx(2 * rs + 2 * (N - 1) * (ib.alpha + G * M / (G * N * ib.beta)), rel=REL)
    assert w["spine"].ring_s == pytest.approx(ring(N * ib.beta / 2 / N), rel=REL)
    Gp = 128
    assert w["racks"].ring_s == pytest.approx(2 * (Gp - 1) * (IB.alpha + M / (G * Gp * IB.beta)), rel=REL)
    assert w["racks_no_pxn"].ring_s == pytest.approx(2 * (Gp - 1) * (IB.alpha + 4 * M / (G * Gp * 2 * IB.beta)), rel=REL)
    faster = {k: v.ratio_x > 1 for k, v in w.items()}
    assert faster == {"plain": True, "one_nic": False, "spine": False, "spine_pxn": True, "racks": True,
                      "racks_no_pxn": False}
    assert len(hw.where_table(w)) == 6


# ============================================================================ Figure 8
@pytest.fixture(scope="module")
def fig8():
    return hf.fig8_data()


def test_fig8_bytes_per_phase_per_port(fig8):
    """2 nodes x 8 GPUs, 1 GB: in each NVLink phase every GPU sends (G-1)/G·M and no NIC
    is used; in the rail phase every NIC sends 2(N-1)/N·M/G, every rail switch forwards N
    times that, and NVLink is idle; the phases add up to the closed form."""
    N, G, M = 2, 8, 1 * GB
    ph = fig8.phases
    assert list(ph) == ["node reduce-scatter", "rail all-reduce", "node all-gather"]
    for k in ("node reduce-scatter", "node all-gather"):
        assert list(ph[k]["nvlink"].values()) == pytest.approx([(G - 1) / G * M] * N * G, rel=REL)
        assert not any(ph[k]["nic"].values())
    rail = ph["rail all-reduce"]
    assert list(rail["nic"].values()) == pytest.approx([2 * (N - 1) / N * M / G] * N * G, rel=REL)
    assert [rail["leaf"][f"leaf{g}"] for g in range(G)] == pytest.approx([N * 2 * (N - 1) / N * M / G] * G)
    assert not any(rail["nvlink"].values())
    total = sum(p["time"] for p in ph.values())
    assert total == pytest.approx(t_allreduce_hierarchical(N, G, M, NV, IB), rel=REL)
    assert fig8.times["hierarchical"] == pytest.approx(total, rel=REL)


def test_fig8_leader_inset_puts_g_times_the_bytes_on_one_nic(fig8):
    """Only GPU 0 crosses nodes: its NIC carries the ring's 2(N-1)/N·M (1 GB for N = 2),
    8× the rail NIC's 125 MB; the other NICs carry nothing; its time is the closed form."""
    N, G, M = 2, 8, 1 * GB
    lead = fig8.nic["leader"]
    assert lead["gpu0.nic.out"] == pytest.approx(2 * (N - 1) / N * M, rel=REL)
    assert all(lead[f"gpu{g}.nic.out"] == 0 for g in range(1, G))
    assert lead["gpu0.nic.out"] / fig8.nic["hierarchical"]["gpu0.nic.out"] == pytest.approx(G, rel=REL)
    assert fig8.times["leader"] == pytest.approx(cost.allreduce_leader(N, G, M, NV, IB), rel=REL)
    assert round(fig8.times["leader"] / fig8.times["hierarchical"], 2) == 4.34


def test_fig8_draws_the_simulated_bytes(fig8):
    fig = hf.fig_hierarchical("en", fig8)
    bars, texts = _by_gid(fig, "patches"), _by_gid(fig, "texts")
    for name, ph in fig8.phases.items():
        for cls in ("nvlink", "nic"):
            want = max(ph[cls].values()) / MB
            assert bars[f"bytes:{name}:{cls}"].get_height() == pytest.approx(want, rel=REL)
    for g in range(8):
        assert bars[f"nic:hierarchical:{g}"].get_height() == pytest.approx(125.0, rel=REL)
        assert bars[f"nic:leader:{g}"].get_height() == pytest.approx(1000.0 if g == 0 else 0.0, abs=1e-9)
        assert texts[f"rail:{g}"].get_text().endswith(fmt_bytes(250 * MB))


# ============================================================================ three tiers
def test_three_tier_example_model_equals_simulator_and_corrects_the_chapter():
    """128 GPUs, 1 GB, Table 1's links, 2:1 between racks: 9.56 ms (closed form = simulator =
    the five phases written out), flat ring 79.9 ms in rank order (β/2 through the spine),
    40.2 ms rail-aligned; 32x smaller payload between racks; 160 ms would need 12.4 GB/s."""
    d = hn.three_tier()
    M, G, Nr, R, p = 1e9, 8, 4, 4, 128
    rs_node = 7 * (NV.alpha + M / (G * NV.beta))
    rs_rail = 3 * (IB.alpha + M / (G * Nr * IB.beta))
    ar_rack = 2 * 3 * (IB.alpha + M / (G * Nr * R * IB.beta / 2))
    assert [t for _, t in d.phases] == pytest.approx([rs_node, rs_rail, ar_rack, rs_rail, rs_node], rel=REL)
    assert d.model_s == pytest.approx(d.sim_s, rel=REL) == 2 * rs_node + 2 * rs_rail + ar_rack
    assert d.flat_s == pytest.approx(2 * (p - 1) * (IB.alpha + M / p / (IB.beta / 2)), rel=REL)
    # NCCL's ring, 8 channels with PXN: a rail hop inside the rack, one message per leaf uplink
    # (4·β/2 per leaf) between racks, so the NIC's M/(Gp) binds; without PXN the rack's 4 nodes
    # share each leaf uplink
    ring = 2 * (p - 1) * max(NV.alpha + M / (p * NV.beta), IB.alpha + max(M / (p * NV.beta), M / (G * p * IB.beta)))
    assert d.ring_s == pytest.approx(ring, rel=REL) == d.ring_model_s
    assert d.ring_nopxn_s == pytest.approx(2 * (p - 1) * (IB.alpha + Nr * M / (G * p * Nr * IB.beta / 2)), rel=REL)
    assert (d.k, round(d.ring_s / ms, 2), round(d.ring_nopxn_s / ms, 2)) == (8, 5.47, 10.43)
    assert d.aligned_s == pytest.approx(2 * (p - 1) * (IB.alpha + M / p / IB.beta), rel=REL)
    assert (round(d.sim_s / ms, 2), round(d.flat_s / ms, 1), round(d.aligned_s / ms, 1)) == (9.56, 79.9, 40.2)
    assert d.reduction == ST["three_tier"]["reduction"] == 32
    b160 = d.for_160_Bps
    assert 2 * (p - 1) * (IB.alpha + M / p / b160) == pytest.approx(ST["three_tier"]["flat"], rel=1e-12)
    assert round(b160 / 1e9, 1) == 12.4
    assert abs(d.sim_s - ST["three_tier"]["hier"]) > 5 * ms and abs(d.flat_s - ST["three_tier"]["flat"]) > 80 * ms
    assert len(hn.three_tier_table(d)) == 9


# ============================================================================ Figure 9
def _recount_tree(res, topo):
    """Bytes per link of a non-innet run, from route(): every hop of every message."""
    out = dict.fromkeys(topo.resource_names, 0.0)
    for step in res.trace:
        for s, d, n in zip(step.round.src, step.round.dst, step.round.count):
            path = topo.route(int(s), int(d))
            out[f"gpu{s}.up"] += n
            out[f"gpu{d}.down"] += n
            if "root" in path:
                out[f"{path[1]}.up"] += n
                out[f"{path[3]}.down"] += n
    return out


def test_fig9_labels_are_the_simulated_bytes_per_link():
    """Panel (a), reduction to GPU 0 through forwarding switches: leaf uplinks 2n each way,
    GPU 0's link 3n, the others n (recounted from route()); panel (b): n on every link."""
    n = hf.FIG9["n"]
    runs = hf.fig9_runs()
    topo = SwitchTree(2, 2, IB)
    traced = coll.all_reduce(VirtualCluster(topo), nbytes=n, algorithm="naive", trace=True)
    recount = _recount_tree(traced, topo)
    np.testing.assert_allclose(runs["naive"].link_bytes, [recount[k] for k in topo.resource_names])
    assert recount["leaf0.up"] == recount["leaf1.down"] == 2 * n and recount["gpu0.down"] == 3 * n
    np.testing.assert_allclose(runs["innet"].link_bytes, n)
    texts = _by_gid(hf.fig_in_network("en", runs), "texts")
    for key in ("naive", "innet"):
        b = dict(zip(runs[key].link_names, runs[key].link_bytes))
        for link in [f"gpu{d}" for d in range(4)] + ["leaf0", "leaf1"]:
            want = f"↑{b[link + '.up'] / n:g}n ↓{b[link + '.down'] / n:g}n"
            assert texts[f"{key}:{link}"].get_text() == want
    assert texts["naive:leaf1"].get_text() == "↑2n ↓2n" and texts["innet:leaf1"].get_text() == "↑1n ↓1n"
    assert runs["naive"].time == pytest.approx(2 * (IB.alpha + 3 * n / IB.beta), rel=REL)
    assert runs["innet"].time == pytest.approx(IB.alpha + n / IB.beta, rel=REL)


def test_fig9_speedup_curves_closed_form_simulator_and_measurement():
    """Panel (c), p = 8 on one switch: ring/in-switch = (14α + 1.75n/β)/(α + n/β), below 2
    at large n and 14 at small n; tree 6 and star → 14 for large n; the simulator's points
    lie on the curves; the measured point is 480/370 GB/s = 1.30."""
    p, link = 8, hn.SHARP_SETTING["link"]
    a, b = link.alpha, link.beta
    sizes = np.array(hf.FIG9["sim_sizes"])
    c = hn.sharp_curves(sizes)
    ring = (2 * (p - 1) * a + 2 * (p - 1) / p * sizes / b) / (a + sizes / b)
    np.testing.assert_allclose(c.ratio["ring"], ring, rtol=REL)
    np.testing.assert_allclose(c.ratio["tree"], 6.0, rtol=REL)
    sim = hn.sharp_sim(sizes)
    for algo in ("ring", "tree", "naive"):
        np.testing.assert_allclose(sim[algo], c.ratio[algo], rtol=1e-12)
    assert c.limit == {"ring": 1.75, "tree": 6.0, "naive": 14.0}
    big = hn.sharp_curves([10 * GB]).ratio["ring"][0]
    assert 1.75 < big < ST["sharp"][0]
    assert 1 + sharp_gain() == pytest.approx(480 / 370, rel=1e-12) and round(sharp_gain(), 2) == 0.30
    fig = hf.fig_in_network("en", curves=hn.sharp_curves(hf.FIG9["sizes"]), sim=sim)
    lines = _by_gid(fig, "lines")
    assert lines["measured"].get_ydata()[0] == pytest.approx(1 + sharp_gain())
    np.testing.assert_allclose(lines["sim:ring"].get_ydata(), sim["ring"])
    assert "claim" not in _by_gid(fig, "patches")    # no band for the original's range (its note)


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64, 1024])
def test_sharp_bandwidth_ratio_is_below_two_against_a_ring(p):
    from commbook.book.ch1.tier_budgets import sharp_ratio
    assert sharp_ratio(p) == pytest.approx(2 * (p - 1) / p) and sharp_ratio(p) < 2 <= sharp_ratio(p, "tree")
    assert sharp_ratio(p, "naive") == 2 * (p - 1)


# ============================================================================ Figure 10
@pytest.fixture(scope="module")
def torus():
    return hr.torus_runs()


def test_torus_steps_bytes_and_times(torus):
    """4x4 ICI: 30 vs 12 steps; 1.875·M per chip for the flat ring and the decomposition,
    3·M for full rings; times = closed forms, and P5 §6.1's 32.67 / 14.67 µs at 64 KB."""
    dims, L = (4, 4), ICI_V5E
    assert (torus["flat"].steps, torus["torus"].steps) == (ST["torus"]["flat_steps"], ST["torus"]["dim_steps"])
    assert torus["torus_rings"].steps == 12 and 30 / 12 == ST["torus"]["x"]
    assert torus["flat"].sent_m == pytest.approx(2 * 15 / 16)
    assert torus["torus"].sent_m == pytest.approx(2 * (3 / 4 + 3 / 16)) == 1.875
    assert torus["torus_rings"].sent_m == pytest.approx(2 * (3 / 4 + 3 / 4)) == 3.0
    for i, n in enumerate(hr.TORUS["sizes"]):
        assert torus["flat"].times_s[i] == pytest.approx(t_formula("ring", 16, n, L.alpha, L.beta), rel=REL)
        assert torus["torus"].times_s[i] == pytest.approx(cost.allreduce_torus(dims, n, L.alpha, L.beta), rel=REL)
        assert torus["torus_rings"].times_s[i] == pytest.approx(cost.allreduce_torus_rings(dims, n, L.alpha, L.beta),
                                                                 rel=REL)
    assert round(torus["flat"].times_s[0] * 1e6, 2) == 32.67 and round(torus["torus"].times_s[0] * 1e6, 2) == 14.67
    assert round(torus["torus"].times_s[1] * 1e3, 3) == 2.679 and round(torus["torus_rings"].times_s[1] * 1e3, 3) == 4.279


def test_torus_without_wraparound():
    """A 4x4 mesh (a v5e 4x4 slice): each ring's closing message takes 3 hops (3α) on the
    otherwise idle reverse links: 12 rounds of 3α + share/β, 38.67 µs at 64 KB."""
    mesh = hr.torus_runs(wraparound=False)
    L, n = ICI_V5E, 64 * KB
    want = 6 * (3 * L.alpha + n / 4 / L.beta) + 6 * (3 * L.alpha + n / 16 / L.beta)
    assert mesh["torus"].times_s[0] == pytest.approx(want, rel=REL)
    assert round(mesh["torus"].times_s[0] * 1e6, 2) == 38.67 and mesh["torus"].sent_m == pytest.approx(1.875)
    assert hr.V5E_WRAP_AXIS > hr.TORUS["dims"][0]


def test_fig10_colours_every_link_by_its_simulated_bytes(torus):
    """Recount: the decomposition puts 1.5·M on every + link of dimension 0 and 0.375·M on
    every + link of dimension 1; full rings 1.5·M on every + link; the snake ring 1.875·M on
    its 16 links; every - link is idle.  The drawn colours are these values."""
    topo = Torus((4, 4), ICI_V5E)
    names = topo.resource_names
    want = {v: np.zeros(len(names)) for v in hr.TORUS_VARIANTS}
    for i, name in enumerate(names):
        if name.endswith(", +)"):                                # "gpu5->gpu9 (dim 0, +)"
            want["torus"][i] = 1.5 if "(dim 0," in name else 0.375
            want["torus_rings"][i] = 1.5
    order = ring_order((4, 4), "snake")
    for r in range(16):
        u, w = int(order[r]), int(order[(r + 1) % 16])
        path = topo.route(u, w)
        assert len(path) == 2                                    # neighbours: one link
        du = topo.coords(u)
        dw = topo.coords(w)
        dim = int(np.flatnonzero(du != dw)[0])
        step = (dw[dim] - du[dim]) % 4
        want["flat"][names.index(f"gpu{u}->gpu{w} (dim {dim}, {'+' if step == 1 else '-'})")] = 2 * 15 / 16
    for v in hr.TORUS_VARIANTS:
        got = torus[v].run.link_bytes / torus[v].n_bytes
        np.testing.assert_allclose(got, want[v], rtol=1e-12, atol=1e-15)
    fig = hf.fig_torus("en", torus)
    lines = _by_gid(fig, "lines")
    norm = Normalize(0, max(w.max() for w in want.values()))
    cmap = matplotlib.colormaps["YlOrRd"]
    for v in hr.TORUS_VARIANTS:
        for i, name in enumerate(names):
            colour = lines[f"link:{v}:{name}"].get_color()
            expect = cmap(norm(want[v][i])) if want[v][i] > 0 else to_rgba("0.88")
            assert to_rgba(colour) == pytest.approx(expect)
    titles = {ax.title.get_gid(): ax.title.get_text() for ax in fig.axes if ax.title.get_gid()}
    assert "30 steps" in titles["title:flat"] and "12 steps" in titles["title:torus"]
    assert "3·M" in titles["title:torus_rings"] and "1.875·M" in titles["title:torus"]


def test_3d_torus_steps():
    t3 = hr.torus_runs(dims=(4, 4, 4), sizes=(64 * KB,))
    assert (t3["flat"].steps, t3["torus"].steps) == (126, 18)
    assert t3["flat"].sent_m == pytest.approx(t3["torus"].sent_m) == pytest.approx(2 * 63 / 64)
    assert t3["torus_rings"].sent_m == pytest.approx(4.5) and Torus((4, 4, 4), ICI_V5E).ports_per_device == 6


# ============================================================================ rails
def test_rail_table_is_m_over_8_per_rail():
    N, G, M = 8, 8, 1 * GB
    rows = hr.rail_rows()
    assert [r["rail"] for r in rows] == [f"leaf{k}" for k in range(G)]
    for r in rows:
        assert r["payload"] == pytest.approx(M / G, rel=REL) and r["share"] == pytest.approx(1 / G, rel=REL)
        assert r["bytes"] == pytest.approx(N * 2 * (N - 1) / N * M / G, rel=REL)
    zh = hr.rail_table(rows).to_html("zh")
    assert "节点 0–7 的 3 号 GPU" in zh and "125 MB" in zh


def test_nic_sharing_and_the_spine_multiply_the_inter_node_phase():
    """One NIC per node 8×, two GPUs per NIC 2×, rail-ignoring ranks through a 2:1 spine 2×,
    wrong affinity 2× and 4× (bandwidth term of the inter-node phase); the whole all-reduce
    1.53× and 2.58× for the wrong affinity; aligned is the hierarchical closed form."""
    c = hr.nic_cases()
    want = {"aligned": 1, "one_nic": 8, "two_per_nic": 2, "misaligned_spine": 2, "affinity2": 2, "affinity4": 4}
    for k, x in want.items():
        assert c[k].bw_x == pytest.approx(x, rel=1e-9), k
    base = c["aligned"]
    assert base.whole_s == pytest.approx(t_allreduce_hierarchical(8, 8, 1 * GB, NV, IB), rel=REL)
    assert base.bw_s == pytest.approx(2 * 7 / 8 * 1e9 / 8 / IB.beta, rel=1e-9)
    assert round(c["affinity2"].whole_x, 2) == 1.53 and round(c["affinity4"].whole_x, 2) == 2.58
    assert ST["mismatch"] == (2.0, 4.0)
    # the rotated placement changes nothing without the oversubscribed spine
    topo = TwoLevel(8, 8, NV, IB)
    sched = coll.algorithm("all_reduce", "hierarchical").builder(topo, 1e9, True, coll.algorithm("all_reduce", "ring").builder)
    cl = VirtualCluster(topo)
    assert cl.run(sched, ranks=hr.rotated(8, 8)).time == pytest.approx(base.whole_s, rel=REL)


def test_placement_changes_the_flat_ring_only_with_shared_nics_or_an_oversubscribed_spine():
    t = hr.placements()
    p, M = 64, 1 * GB
    ring = lambda bw: 2 * (p - 1) * (IB.alpha + M / p / bw)
    assert list(t["plain"].values()) == pytest.approx([ring(IB.beta)] * 4, rel=REL)
    assert t["shared"]["order"] == pytest.approx(ring(IB.beta), rel=REL)
    assert t["shared"]["round_robin"] == pytest.approx(ring(IB.beta / 2), rel=REL)
    assert t["spine"]["order"] == pytest.approx(ring(IB.beta / 2), rel=REL)
    assert t["spine"]["round_robin"] == pytest.approx(ring(IB.beta), rel=REL)
    for cluster in t:                                    # snake is never slow
        assert t[cluster]["snake"] == pytest.approx(ring(IB.beta), rel=REL)
    assert max(t["spine"].values()) / min(t["spine"].values()) == pytest.approx(ring(IB.beta / 2) / ring(IB.beta))
    assert round(t["spine"]["order"] / t["spine"]["snake"], 2) == 1.99        # the "2×"
    assert len(hr.placement_table(t).rows) == 3


def test_tables_render_in_both_languages():
    for table in (hn.tier_table(), hr.nic_table(), hr.torus_table(), hr.placement_table()):
        for lang in ("en", "zh"):
            html = table.to_html(lang)
            assert "<table" in html and "—" not in html


# ============================================================================ the pages
@pytest.fixture(scope="module", params=["en", "zh"])
def page_glue(request):
    from pathlib import Path

    from conftest import executed_glue
    root = Path(__file__).resolve().parents[1]
    return executed_glue(root / "chapters" / request.param / "ch1" / "05-hierarchical.md")


def test_page_glues_the_ring_nccl_runs(page_glue):
    """Both pages, executed: napkin math 1.6 and the three tiers against NCCL's ring, and
    where the hierarchy overtakes, each value recomputed here from a written-out form."""
    g, ib, M = page_glue, BOX_LINKS["nm1.6"], 1e9
    hier = 2 * 7 * (NV.alpha + M / (8 * NV.beta)) + 2 * 7 * (ib.alpha + M / (64 * ib.beta))
    assert g["nm_ring_bw_s"] == fmt_time(2 * 63 / 64 * M / 8 / ib.beta, 3) == "4.92 ms"
    assert g["nm_c_ring_s"] == fmt_time(_ring_pxn(64, 8, M, NV, ib), 3) == "5.3 ms"
    assert g["nm_c_slower_x"] == fmt_ratio(hier / _ring_pxn(64, 8, M, NV, ib))
    assert g["nm_speedup_x"] == "4.82×" and g["nm_c_flat_s"] == fmt_time(2 * 63 * (ib.alpha + M / (64 * ib.beta)))
    assert g["tt_ring_s"] == fmt_time(_ring_pxn(128, 8, M, NV, IB), 3) == "5.47 ms"
    N = next(N for N in range(2, 4096) if _hier(N, 8, M, NV, ib) < _ring_pxn(8 * N, 8, M, NV, ib))
    assert g["wh_nodes1"] == str(N) and g["wh_p1"] == f"{8 * N:,}"
    assert g["wh_a_ring_s"] == fmt_time(2 * (8 * N - 1) * ib.alpha, 3)
    # the check on 16 nodes: the hierarchy and NCCL's ring, written out
    assert g["q16_total_s"] == fmt_time(_hier(16, 8, M, NV, ib))
    assert g["q16_ring_s"] == fmt_time(_ring_pxn(128, 8, M, NV, ib), 3)


def test_fig8_nic_bytes_are_the_hand_count(fig8):
    """The simulator's bytes through each card are the hand count: 2(N-1)/N · M/G in the rail
    phase, 2(N-1)/N · M through the leader's card."""
    N, G, M = fig8.topology.nodes, fig8.topology.gpus_per_node, fig8.n_bytes
    assert max(fig8.phases["rail all-reduce"]["nic"].values()) == pytest.approx(2 * (N - 1) / N * M / G, rel=REL)
    assert fig8.nic["leader"]["gpu0.nic.out"] == pytest.approx(2 * (N - 1) / N * M, rel=REL)


def test_sharp_on_ethernet_names_infiniband_sharp():
    """The sentence on Ethernet says InfiniBand SHARP (NVLink SHARP lives in the NVSwitch)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    en = (root / "chapters/en/ch1/05-hierarchical.md").read_text()
    zh = (root / "chapters/zh/ch1/05-hierarchical.md").read_text()
    assert "SHARP is an InfiniBand feature" not in en and "InfiniBand SHARP lives in InfiniBand switches" in en
    assert "SHARP 只存在于 InfiniBand 上" not in zh and "InfiniBand SHARP 只在 InfiniBand 交换机里" in zh
    assert "原说法" not in (root / "code/commbook/book/ch1/hierarchy_figures.py").read_text()


def test_page_glues_figure_8_rails_against_the_leader(page_glue):
    """Figure 8's cell (2 nodes x 8 GPUs, 1 GB): each card sends 2(N-1)/N · M/G in the rail
    phase, the leader's card 2(N-1)/N · M, G times as much, with the other G - 1 idle; both
    schedules' times are their closed forms."""
    g, N, G, M = page_glue, 2, 8, 1 * GB
    hier, leader = t_allreduce_hierarchical(N, G, M, NV, IB), cost.allreduce_leader(N, G, M, NV, IB)
    assert (g["f8_nodes"], g["f8_g"], g["f8_idle"], g["f8_n_bytes"]) == ("2", "8", "7", "1 GB")
    assert g["f8_nic_bytes"] == fmt_bytes(2 * (N - 1) / N * M / G) == "125 MB"
    assert g["f8_lead_bytes"] == fmt_bytes(2 * (N - 1) / N * M) and g["f8_lead_x"] == fmt_ratio(G) == "8×"
    assert g["f8_total_s"] == fmt_time(hier, 3) and g["f8_leader_s"] == fmt_time(leader, 3)
    assert g["f8_lead_slow_x"] == fmt_ratio(leader / hier) == "4.34×"


def test_page_glues_in_network_reduction(page_glue):
    """Figure 9's cell: the tree's bytes (2n up a leaf, 3n down to GPU 0) and times
    2(α + 3n/β) and α + n/β on InfiniBand; the large-buffer ratios 2(p-1)/p, 2⌈log2 p⌉ and
    2(p-1) on 8 and 64 GPUs; (14α + 1.75n/β)/(α + n/β) at 1 KB on NVLink; the measured
    480/370; a ring's 2(p-1) start-ups on 1,024 GPUs."""
    g, n = page_glue, hf.FIG9["n"]
    assert (g["sh_p9"], g["sh_leaves"], g["sh_up_naive"], g["sh_gpu0"]) == ("4", "2", "2", "3")
    assert g["sh_naive_s"] == fmt_time(2 * (IB.alpha + 3 * n / IB.beta), 3) and g["sh_innet_s"] == fmt_time(
        IB.alpha + n / IB.beta, 3)
    for p, key in ((8, "sh"), (64, "sh_q")):
        assert g[f"{key}_ring_x"] == fmt_ratio(2 * (p - 1) / p)
        assert g[f"{key}_tree_x"] == fmt_ratio(2 * np.ceil(np.log2(p))) and g[f"{key}_star_x"] == fmt_ratio(2 * (p - 1))
    assert (g["sh_p"], g["sh_q_p"], g["sh_ring_x"], g["sh_q_star_x"]) == ("8", "64", "1.75×", "126×")
    a, b, small = NV.alpha, NV.beta, 1 * KB
    assert g["sh_small_bytes"] == "1 KB"
    assert g["sh_ring_small_x"] == fmt_ratio((14 * a + 1.75 * small / b) / (a + small / b))
    assert g["sh_gain_frac"] == fmt_pct(480 / 370 - 1) and g["sh_pred_frac"] == fmt_pct(0.75)
    assert (g["sh_sc_p"], g["sh_sc_steps"]) == ("1,024", "2,046")
    assert g["sh_sc_lat_s"] == fmt_time(2046 * IB.alpha, 3) and g["sh_sc_alpha_s"] == fmt_time(IB.alpha, 3)


def test_page_glues_where_the_hierarchy_wins(page_glue):
    """The cell on where the hierarchy still wins: the overtaking node counts of 1 GB and
    64 MB from the written-out forms, the start-ups at the first, and the one-NIC and 2:1
    spine cases (1 GB on 8 x 8) written out as in the cases' test."""
    g, M, p, G, N, ib = page_glue, 1e9, 64, 8, 8, BOX_LINKS["nm1.6"]
    first = lambda n: next(N for N in range(2, 4096) if _hier(N, G, n, NV, ib) < _ring_pxn(N * G, G, n, NV, ib))
    N1, N0 = first(M), first(64 * MB)
    assert (g["wh_nodes1"], g["wh_nodes0"], g["wh_n1_bytes"], g["wh_n0_bytes"]) == (str(N1), str(N0), "1 GB", "64 MB")
    assert g["wh_a_hier_s"] == fmt_time(2 * (G - 1) * NV.alpha + 2 * (N1 - 1) * ib.alpha, 3)
    ring = lambda bw: 2 * (p - 1) * (ib.alpha + M / (G * p * bw))
    assert g["wh_spine_s"] == fmt_time(ring(ib.beta / 2)) and g["wh_spine_pxn_s"] == fmt_time(ring(ib.beta), 3)
    assert g["wh_spine_h_s"] == fmt_time(_hier(N, G, M, NV, ib), 3)
    one_ring = 2 * (p - 1) * (ib.alpha + M / (p * ib.beta))
    one_hier = 2 * (G - 1) * (NV.alpha + M / (G * NV.beta)) + 2 * (N - 1) * (ib.alpha + M / (N * ib.beta))
    assert g["wh_one_k"] == "1" and g["wh_one_x"] == fmt_ratio(one_ring / one_hier)
    assert g["wh_racks_x"] == g["tt_ring_x"] == "1.75×"


def test_page_glues_the_rails_and_the_placements(page_glue):
    """The routing cell: each rail all-reduces M/8 and its switch forwards N·2(N-1)/N·M/8;
    the NIC cases' factors (8, 2, 2, 2, 4) over the aligned phase 2(N-1)(α + M/(GNβ)); the
    flat ring 2(p-1)(α + M/(pβ)) and, through a shared card or a 2:1 spine, at β/2."""
    g, N, G, M, p = page_glue, 8, 8, 1 * GB, 64
    assert (g["ra_nodes"], g["ra_g"], g["ra_p"], g["ra_n_bytes"], g["ra_share"]) == ("8", "8", "64", "1 GB", "1/8")
    assert g["ra_payload_bytes"] == fmt_bytes(M / G) and g["ra_rail_bytes"] == fmt_bytes(2 * (N - 1) * M / G)
    for k, x in (("one_nic", 8), ("two_per_nic", 2), ("misaligned_spine", 2), ("affinity2", 2), ("affinity4", 4)):
        assert g[f"ra_{k}_x"] == fmt_ratio(x), k
    aligned = 2 * (N - 1) * (IB.alpha + M / (G * N * IB.beta))
    assert g["ra_aligned_s"] == fmt_time(aligned, 3)
    assert g["ra_one_nic_s"] == fmt_time(2 * (N - 1) * (IB.alpha + M / (N * IB.beta)))
    ring = lambda bw: 2 * (p - 1) * (IB.alpha + M / p / bw)
    assert g["ra_plain_s"] == fmt_time(ring(IB.beta), 3)
    assert g["ra_shared_rr_s"] == g["ra_spine_order_s"] == fmt_time(ring(IB.beta / 2), 3)
    assert g["ra_spine_x"] == fmt_ratio(ring(IB.beta / 2) / ring(IB.beta)) == "1.99×"
    assert (g["ra_os"], g["ra_mm_lo"], g["ra_mm_hi"]) == ("2:1", "2", "4") and ST["mismatch"] == (2.0, 4.0)
    assert (g["ra_affinity2_whole_x"], g["ra_affinity4_whole_x"]) == ("1.53×", "2.58×")


def test_page_glues_the_torus_by_dimension(page_glue):
    """The torus cells: 2(p-1) against 2Σ(d-1) steps on 4x4 and 4x4x4, the bytes per chip of
    the decomposition (the flat ring's 2(p-1)/p) and of full rings (2Σ(d-1)/d), and their
    times by the closed forms of the cost module."""
    g, L = page_glue, ICI_V5E
    assert (g["to_dims"], g["to_p"], g["to_flat_steps"], g["to_dim_steps"], g["to_steps_x"]) == (
        "4×4", "16", "30", "12", "2.5×")
    assert (g["to_sent_m"], g["to_rings_m"], g["to_more_frac"]) == ("1.875", "3", fmt_pct(3 / 1.875 - 1))
    assert (g["to_small_bytes"], g["to_large_bytes"], g["to_link"]) == ("64 KB", "64 MB", L.name)
    n = 64 * MB
    assert g["to_rings_slow_x"] == fmt_ratio(cost.allreduce_torus_rings((4, 4), n, L.alpha, L.beta)
                                             / cost.allreduce_torus((4, 4), n, L.alpha, L.beta))
    assert (g["q3_dims"], g["q3_p"], g["q3_ports"], g["q3_flat_steps"], g["q3_dim_steps"], g["q3_steps_x"]) == (
        "4×4×4", "64", "6", "126", "18", "7")
    assert g["q3_sent_m"] == "1.969" and 2 * 63 / 64 == pytest.approx(1.96875)
    n = 64 * KB
    assert g["q3_flat_s"] == fmt_time(t_formula("ring", 64, n, L.alpha, L.beta))
    assert g["q3_dim_s"] == fmt_time(cost.allreduce_torus((4, 4, 4), n, L.alpha, L.beta))
