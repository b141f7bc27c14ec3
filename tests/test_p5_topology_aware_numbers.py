"""P5 §6 (topology-aware collectives): the numbers its prose quotes
(book/p5/topology_aware_numbers.py) against closed forms written out here, and the claims the
page used to assert in its cells (Table 04-x's own values are tested in tests/test_demos.py)."""
from __future__ import annotations

import pytest

from commbook.book.p5 import topology_aware_numbers as N
from commbook.book.p5.topology import all_to_all_race, demo_04_1, demo_04_3
from commbook.collectives import all_reduce
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import TwoLevel
from commbook.units import KB, MB, fmt_time

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


def test_row_major_pays_one_alpha_per_step_per_extra_hop(t41):
    m = N.mapping_numbers(t41, (4, 4), 64 * MB, ICI, seeds=20)
    assert m.ideal_s == pytest.approx(30 * (ICI.alpha + 64 * MB / 16 / ICI.beta))   # 2(p-1) steps of n/p
    assert m.extra_step_s == pytest.approx(ICI.alpha) and m.extra_step2_s == pytest.approx(2 * ICI.alpha)
    assert m.hop1 == pytest.approx(1) and m.hop2 == pytest.approx(2)
    assert t41.find(mapping="row-major")["max_link"] == t41.find(mapping="snake")["max_link"]   # same bytes, longer hops
    assert m.long_edges == 4                             # the four row wraps of a 4×4 row-major order


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
    h = N.hier_numbers(t43)
    assert h.nic_flat_n == 4 and h.nic_hier_n == 32      # the single ring uses one card per node, the hierarchy all


def test_nccl_ring_wins_up_to_some_nodes_then_loses(t43):
    hn = N.hier_nccl_numbers(t43)
    large = [t43.find(n=float(256 * MB), nodes=n)["nccl_vs_hier"] for n in (2, 4, 8, 16, 32)]
    wins = [n for n, v in zip((2, 4, 8, 16, 32), large) if v < 1]
    assert wins == [2, 4, 8] and hn.nccl_win_hi == 8 and hn.nccl_lose_n == 16
    assert hn.never_hi < hn.first_n


def test_run_it_yourself_check():
    cluster = VirtualCluster(TwoLevel(4, 8, NVLINK4, IB_NDR, pxn=True))
    schedules = {"single ring": {"channels": 1}, "NCCL ring": {}, "hierarchical": {"algorithm": "hierarchical"}}
    small = {a: all_reduce(cluster, nbytes=64 * KB, **o).time for a, o in schedules.items()}
    big = {a: all_reduce(cluster, nbytes=256 * MB, **o).time for a, o in schedules.items()}
    assert min(big, key=big.get) == "NCCL ring" and min(small, key=small.get) == "hierarchical"
