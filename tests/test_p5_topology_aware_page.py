"""P5 §6 (topology-aware collectives): the numbers its cells glue, read from the executed page,
against closed forms and independent computations written out here, and the claims the page
used to assert in its cells (Table 04-x's own values are tested in tests/test_demos.py)."""
from __future__ import annotations

import numpy as np
import pytest

from commbook.book.p5.topology import all_to_all_race, demo_04_1, demo_04_3
from commbook.collectives import all_reduce
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import TwoLevel
from commbook.units import KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time

ICI = ICI_V5E


@pytest.fixture(scope="module")
def t41():
    return demo_04_1((4, 4), 64 * MB, ICI, median_seeds=20)


@pytest.fixture(scope="module")
def page06():
    """Page §6 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/06-topology-aware.md")


@pytest.fixture(scope="module")
def t43():
    return demo_04_3((2, 4, 8, 16, 32), 8, (64 * KB, 256 * MB), NVLINK4, IB_NDR)


def test_row_major_pays_one_alpha_per_step_per_extra_hop(t41, page06):
    n, p = 64 * MB, 16
    snake, rowm, rowm2 = (t41.find(mapping=m) for m in ("snake", "row-major", "row-major, 2α per extra hop"))
    ideal = 2 * (p - 1) * (ICI.alpha + n / p / ICI.beta)            # 2(p-1) steps of n/p
    assert t41.meta["ideal"] == pytest.approx(ideal) and page06["map_ideal_s"] == fmt_time(ideal, 5)
    assert (rowm["time"] - snake["time"]) / 30 == pytest.approx(ICI.alpha)
    assert (rowm2["time"] - snake["time"]) / 30 == pytest.approx(2 * ICI.alpha)
    assert page06["map_extra_step_s"] == fmt_time(ICI.alpha, 3)
    assert page06["map_extra_step2_s"] == fmt_time(2 * ICI.alpha, 3)
    assert (page06["map_hop1"], page06["map_hop2"]) == ("1", "2")
    assert rowm["max_link"] == snake["max_link"]         # same bytes, longer hops
    assert page06["map_link_snake_bytes"] == fmt_bytes(2 * (p - 1) * n / p)   # one chunk a step
    # the row-major ring's edges r -> r+1 (mod 16) on the 4x4 torus, in hops: the four row wraps
    xy = np.array([(r // 4, r % 4) for r in range(p)])
    d = np.abs(xy - np.roll(xy, -1, axis=0))
    hops = np.minimum(d, 4 - d).sum(axis=1)
    assert (hops > 1).sum() == 4 and page06["map_long_edges"] == "4"


def test_two_d_saves_the_rounds_times_alpha(t41, page06):
    """§6.1's cell on a 4×4 torus: the flat ring's 2(16 − 1) = 30 rounds against the 2D
    all-reduce's 2·2·(4 − 1) = 12, and the 18 rounds saved cost 18α at both sizes."""
    small, large = t41.part("04-1b").rows
    assert (page06["td_flat_rounds"], page06["td_two_d_rounds"]) == ("30", "12")
    assert page06["td_saved_s"] == fmt_time(18 * ICI.alpha, 3)
    assert small["flat"] - small["two_d"] == pytest.approx(18 * ICI.alpha, rel=1e-9)
    assert large["flat"] - large["two_d"] == pytest.approx(18 * ICI.alpha, rel=1e-9)
    assert page06["td_flat_small_s"] == fmt_time(small["flat"]) and page06["td_two_d_large_s"] == fmt_time(large["two_d"], 5)


def test_checks_of_section_6_follow_the_closed_forms(page06):
    """§6.1's question (8×8 torus: 2(64 − 1) ring steps against 2·2·(8 − 1)), §6.2's 16-GPU ring
    (the egress bound (p − 1)/p·n/β) and §6.3's start-ups at 8 nodes of 8 GPUs."""
    assert (page06["q61_dims"], page06["q61_flat_steps"], page06["q61_two_d_steps"]) == ("8×8", "126", "28")
    n, p = 16 * MB, 16
    assert page06["q62_p"] == "16" and page06["q62_egress_s"] == fmt_time((p - 1) / p * n / ICI.beta, 3)
    assert (page06["q63_flat_ib"], page06["q63_hier_ib"], page06["q63_hier_nv"]) == ("126", "14", "14")
    assert page06["lk_cliff_x"] == "9×" and page06["lk_tables"] == "3"


def test_all_to_all_on_a_switch_is_its_egress_bound_plus_p_minus_one_alphas():
    p, n = 64, 16 * MB
    a = all_to_all_race(p, n, ICI)
    egress = n * (p - 1) / p / ICI.beta
    assert a.sw_egress_s == pytest.approx(egress) and a.sw_s == pytest.approx(egress + 63 * ICI.alpha)
    assert a.ring_bisect_s == pytest.approx(n * p / 4 / a.bis_ring_Bps)   # p/2 · n/2 across the cut
    assert a.one_way_x > a.ring_sw_x / 2                 # one direction only: no better than half the ring


def test_hierarchy_rows_are_the_closed_forms(t43):
    g, ib, nv = 8, IB_NDR, NVLINK4
    for r in t43.rows:
        nodes, n, p = r["nodes"], r["n"], 8 * r["nodes"]
        assert r["flat"] == pytest.approx(2 * (p - 1) * (ib.alpha + n / (p * ib.beta)), rel=1e-9)
        hier = 2 * (g - 1) * (nv.alpha + n / (g * nv.beta)) + 2 * (nodes - 1) * (ib.alpha + n / (g * nodes * ib.beta))
        assert r["hier"] == pytest.approx(hier, rel=1e-9)
        assert r["flat_rounds"] == 2 * (p - 1) and r["hier_rounds"] == 2 * (g - 1) + 2 * (nodes - 1)


def test_the_hierarchy_spreads_the_bytes_over_every_card(page06):
    """4 nodes of 8 GPUs, 256 MB: the single ring sends through one card per node, each
    carrying 2(p − 1)/p·n; the hierarchy through all 32, each 2(N − 1)/N·n/G."""
    n, g, nodes = 256 * MB, 8, 4
    assert (page06["h_nic_flat_n"], page06["h_nic_hier_n"]) == ("4", "32")
    assert page06["h_nic_flat_bytes"] == fmt_bytes(2 * (g * nodes - 1) / (g * nodes) * n)
    assert page06["h_nic_hier_bytes"] == fmt_bytes(2 * (nodes - 1) / nodes * n / g)


def test_bandwidth_terms_of_the_hierarchy_and_of_nccls_ring(page06):
    """§6.3's bandwidth-only ratios from eq. (hier) and eq. (nccl) with α = 0, the many-node
    limits taken numerically at a million nodes."""
    g, nv, ib = 8, NVLINK4.beta, IB_NDR.beta

    def flat(N):                                         # seconds per byte of the message
        return 2 * (g * N - 1) / (g * N) / ib

    def hier(N):
        return 2 * (g - 1) / g / nv + 2 * (N - 1) / N / (g * ib)

    def nccl(N):
        return 2 * (g * N - 1) * max(1 / (g * N * nv), 1 / (g * g * N * ib))

    big = 10 ** 6
    assert page06["h_cross2"] == "1" and page06["h_bw2_x"] == fmt_ratio(flat(2) / hier(2))
    assert page06["h_bw_limit_x"] == fmt_ratio(flat(big) / hier(big))
    assert page06["h_nv_share_frac"] == fmt_pct((2 * (g - 1) / g / nv) / (2 * (big - 1) / big / (g * ib)))
    assert page06["h_nccl_bw_x"] == fmt_ratio(hier(big) / nccl(big))


def test_nccl_ring_wins_up_to_some_nodes_then_loses(t43, page06):
    large = [t43.find(n=float(256 * MB), nodes=n)["nccl_vs_hier"] for n in (2, 4, 8, 16, 32)]
    wins = [n for n, v in zip((2, 4, 8, 16, 32), large) if v < 1]
    assert wins == [2, 4, 8] and (page06["h_nccl_win_hi"], page06["h_nccl_lose_n"]) == ("8", "16")
    assert int(page06["h_never_hi"]) < int(page06["h_first_n"])


def test_run_it_yourself_check():
    cluster = VirtualCluster(TwoLevel(4, 8, NVLINK4, IB_NDR, pxn=True))
    schedules = {"single ring": {"channels": 1}, "NCCL ring": {}, "hierarchical": {"algorithm": "hierarchical"}}
    small = {a: all_reduce(cluster, nbytes=64 * KB, **o).time for a, o in schedules.items()}
    big = {a: all_reduce(cluster, nbytes=256 * MB, **o).time for a, o in schedules.items()}
    assert min(big, key=big.get) == "NCCL ring" and min(small, key=small.get) == "hierarchical"
