"""P5 §2's typed results (book/p5/links_numbers.py) against the α–β model written out
here and the data-sheet facts the chapter states; the checks the page's cells asserted."""
from __future__ import annotations

import pytest

from commbook.book.glue import fields
from commbook.book.p5.links_numbers import (BYTE_UNITS, NODE_LINKS, delivered, fan_out, hop_cost,
                                            sim_corners)
from commbook.collectives import all_reduce, t_formula
from commbook.comm_sim import Round, VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4, NVLINK5
from commbook.topology import Switch
from commbook.units import MB, GB

NV = NVLINK4


def test_delivered_is_n_over_alpha_plus_n_over_beta():
    d = delivered(NV, NV.n_half)
    assert d.share_frac == pytest.approx(0.5) and d.per_nhalf == pytest.approx(1)
    k = 9                                                            # share k/(1+k) = 90 %
    assert delivered(IB_NDR, k * IB_NDR.n_half).share_frac == pytest.approx(k / (1 + k))
    n = 4e3
    assert delivered(NV, n).bw_Bps == pytest.approx(n / (NV.alpha + n / NV.beta))


def test_node_links_match_the_data_sheets():
    assert NODE_LINKS.nvlinks * NODE_LINKS.nvlink_link_Bps == NV.beta == 18 * 25 * GB
    assert NODE_LINKS.cliff == "1/9" and NV.beta / IB_NDR.beta == 9
    assert NVLINK5.alpha == NV.alpha and NODE_LINKS.nvl5_vs_nvl4 == pytest.approx(2)
    assert NODE_LINKS.nic_gbit == "400 Gb/s"                            # ConnectX-7
    assert fields("u", BYTE_UNITS) == {"u_kb": "1,000", "u_mb": "1,000,000", "u_kib": "1,024",
                                       "u_mib": "1,048,576"}


def test_hop_cost():
    h = hop_cost(hops=3)
    assert h.alphas == pytest.approx(1 + h.hop_alpha * 2)


def test_sim_corners():
    c = sim_corners(8, NV)
    assert c.time_s == pytest.approx(c.rounds * NV.alpha) and c.rounds == 14
    assert c.innet_link_bytes == 0 and c.innet_sent_bytes == 8 * MB
    local = VirtualCluster(Switch(2, NV)).run([Round.make(0, 0, MB), Round.make(1, 1, MB)])
    assert local.rounds == 0 and local.time == 0                     # a message to itself costs nothing


def test_ring_simulated_is_its_closed_form_and_one_port_serializes():
    p, n = 8, 4 * MB
    run = all_reduce(VirtualCluster(Switch(p, NV)), nbytes=n, algorithm="ring")
    assert run.time == pytest.approx(t_formula("ring", p, n, NV.alpha, NV.beta), rel=1e-12)
    f = fan_out(NV, messages=2, n=MB)
    assert f.time_s == pytest.approx(NV.alpha + 2 * MB / NV.beta) and f.single_s == pytest.approx(NV.alpha + MB / NV.beta)
