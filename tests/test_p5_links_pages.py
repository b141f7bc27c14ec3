"""P5 §0–§3 (navigation, why, links, topologies): the executed pages' glued numbers and the
book/p5/links builders against the α–β model written out here and the data-sheet facts the
chapter states; the checks the page's cells asserted."""
from __future__ import annotations

import pytest

from commbook.collectives import all_reduce, t_formula
from commbook.comm_sim import Round, VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4, NVLINK5
from commbook.topology import Switch
from commbook.units import KB, MB, GB, fmt_bytes, fmt_number, fmt_pct, fmt_rate, fmt_time

NV = NVLINK4


@pytest.fixture(scope="module")
def page02():
    """Page §2 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/02-links.md")


def test_delivered_is_n_over_alpha_plus_n_over_beta(page00, page02):
    """§2's shares of β: a message of k·n½ gets n/(T·β) = k/(1 + k) of β, on any link, with
    T = α + n/β; the bandwidth it gets is n/T."""
    def share(link, n):                                              # k/(1 + k), k = n/(αβ)
        k = n / (link.alpha * link.beta)
        return k / (1 + k)

    assert page02["half_share_frac"] == fmt_pct(0.5) == "50%"      # n = n½: half of β
    assert (page02["q_k_per_nhalf"], page02["q_k_share_frac"]) == ("2", fmt_pct(2 / 3))
    k = 9                                                            # share k/(1+k) = 90 %
    assert (page02["q_share_per_nhalf"], page02["q_share_share_frac"]) == ("9", fmt_pct(0.9))
    assert page02["q_share_n_bytes"] == fmt_bytes(k * NV.alpha * NV.beta)
    n = 4e3                                                          # 4 KB on NVLink, IB and ICI
    assert page02["small_nvl_n_bytes"] == fmt_bytes(n)
    assert page02["small_nvl_bw_Bps"] == fmt_rate(n / (NV.alpha + n / NV.beta), 3)
    for key, link in (("nvl", NV), ("ib", IB_NDR), ("ici", ICI_V5E)):
        assert page02[f"small_{key}_share_frac"] == fmt_pct(share(link, n))
    token = 8192 * 2                                                 # one BF16 token of hidden size 8192
    assert (page02["hidden"], page02["token_n_bytes"]) == ("8192", fmt_bytes(token))
    assert page02["token_share_frac"] == fmt_pct(share(NV, token))
    # §2.2's question: 1 MB over NVLink 4 and InfiniBand NDR
    for key, link in (("nvl", NV), ("ib", IB_NDR)):
        t = MB / link.beta + link.alpha
        assert page02[f"q_mid_{key}_time_s"] == fmt_time(t)
        assert page02[f"q_mid_{key}_bw_Bps"] == fmt_rate(MB / t, 3)
        assert page02[f"q_mid_{key}_share_frac"] == fmt_pct(share(link, MB))
        assert page02[f"q_mid_{key}_per_nhalf"] == fmt_number(MB / (link.alpha * link.beta), 2)
    assert page02["q_mid_nvl_n_bytes"] == fmt_bytes(MB)
    ratio = (IB_NDR.alpha + MB / IB_NDR.beta) / (NV.alpha + MB / NV.beta)
    assert page02["q_mid_ratio_x"] == f"{ratio:.1f}"
    # §0.2's goal: one decode all-reduce of Llama-3.1-70B at batch 1 (its hidden size, BF16)
    from commbook.llm import LLAMA31_70B
    m = 2 * LLAMA31_70B.d_model
    assert page00["nav_goal_n_bytes"] == fmt_bytes(m) == page02["token_n_bytes"]
    assert page00["nav_goal_per_nhalf"] == fmt_pct(m / (NV.alpha * NV.beta))
    assert page00["nav_goal_share_frac"] == fmt_pct(share(NV, m))


def test_node_links_match_the_data_sheets(page00, page02):
    assert NV.beta == 18 * 25 * GB                                   # 18 NVLinks of 25 GB/s per H100
    assert (page02["node_nvlinks"], page02["node_nvlink_link_Bps"]) == ("18", fmt_rate(25 * GB, 3))
    assert page02["node_nvlink_total_Bps"] == fmt_rate(NV.beta, 3) == "450 GB/s"
    assert (page00["nav_node_nvlinks"], page00["nav_node_nvlink_link_Bps"]) == (
        page02["node_nvlinks"], page02["node_nvlink_link_Bps"])
    assert page02["node_cliff"] == "1/9" and NV.beta / IB_NDR.beta == 9
    assert NVLINK5.alpha == NV.alpha and NVLINK5.beta == 2 * NV.beta and page02["node_nvl5_vs_nvl4"] == "2"
    assert (page02["node_nvl72_gpus"], page02["node_nvl72_Bps"]) == ("72", fmt_rate(NVLINK5.beta, 3))
    assert page02["node_nic_gbit"] == "400 Gb/s" and page02["node_nic_Bps"] == fmt_rate(400e9 / 8, 3)  # ConnectX-7
    assert page02["node_dgx_gpus"] == "8"
    # §2.3's question: one GPU's eighth of Llama-3.1-70B's BF16 weights, copied over NVLink and the NIC
    from commbook.llm import LLAMA31_70B
    w = 2 * LLAMA31_70B.n_params / 8
    t_nvl, t_nic = NV.alpha + w / NV.beta, IB_NDR.alpha + w / IB_NDR.beta
    assert page02["q_w_nvl_n_bytes"] == fmt_bytes(w)
    assert (page02["q_w_nvl_time_s"], page02["q_w_nic_time_s"]) == (fmt_time(t_nvl, 3), fmt_time(t_nic, 3))
    assert page02["q_w_ratio_x"] == f"{t_nic / t_nvl:.0f}" == "9"
    assert {k: page02[f"unit_{k}"] for k in ("kb", "mb", "kib", "mib")} == {
        "kb": "1,000", "mb": "1,000,000", "kib": "1,024", "mib": "1,048,576"}


def test_hop_cost(page02):
    """§2's rule 4: a 3-hop message on a torus pays α·(1 + hop_alpha·2), hop_alpha = 1 by default."""
    assert (page02["hop_hop_alpha"], page02["hop_hops"], page02["hop_alphas"]) == ("1", "3", "3")


def test_sim_corners(page02):
    """An empty ring all-reduce on 8 GPUs pays α in each of its 2(p − 1) = 14 rounds; in-network
    reduction sends p·n = 8 MB into the switch and none over device links."""
    assert (page02["c0_p"], page02["c0_rounds"]) == ("8", "14")
    assert page02["c0_time_s"] == fmt_time(14 * NV.alpha)
    assert page02["c0_innet_link_bytes"] == fmt_bytes(0) and page02["c0_innet_sent_bytes"] == fmt_bytes(8 * MB)
    local = VirtualCluster(Switch(2, NV)).run([Round.make(0, 0, MB), Round.make(1, 1, MB)])
    assert local.rounds == 0 and local.time == 0                     # a message to itself costs nothing


def test_ring_simulated_is_its_closed_form_and_one_port_serializes(page02):
    p, n = 8, 4 * MB
    run = all_reduce(VirtualCluster(Switch(p, NV)), nbytes=n, algorithm="ring")
    assert run.time == pytest.approx(t_formula("ring", p, n, NV.alpha, NV.beta), rel=1e-12)
    ring = 2 * (p - 1) * (NV.alpha + n / p / NV.beta)                   # the ring's closed form
    assert page02["sim_time_s"] == page02["sim_formula_s"] == fmt_time(ring) and page02["sim_rounds"] == "14"
    # one send port carries both messages' bytes at β, each round pays α once
    assert (page02["q_pair_messages"], page02["q_pair_n_bytes"]) == ("2", fmt_bytes(MB))
    assert page02["q_pair_time_s"] == fmt_time(NV.alpha + 2 * MB / NV.beta)
    assert page02["q_pair_single_s"] == fmt_time(NV.alpha + MB / NV.beta)


# ----------------------------------------------------------------------------- §3 (links: topologies, p2p)
from inspect import signature                                          # noqa: E402

from commbook.book.p5.links import (demo_01_3, point_to_point, shape_of, superpod,  # noqa: E402
                                    topologies)
from commbook.topology import Torus                                    # noqa: E402


def test_demo_01_2_p_is_the_smallest_square_and_cube():
    p = signature(topologies).parameters["p"].default
    assert p == next(k for k in range(2, 10**4) if round(k ** 0.5) ** 2 == k and round(k ** (1 / 3)) ** 3 == k)
    t2 = topologies(p).t2
    assert (t2.name, t2.diameter, t2.links) == ("8×8", 8, 16)           # 2·8 links cross the cut of an 8×8 torus


def test_shape_of_a_torus():
    s = shape_of(Torus((16, 16), ICI_V5E), ICI_V5E.beta)
    assert (s.p, s.ports, s.diameter, s.links) == (256, 4, 16, 32)
    assert s.per_device_Bps == pytest.approx(s.bisection_Bps / 128)


def test_superpod_wiring():
    s = superpod()
    assert (s.nodes, s.sus, s.leaves, s.per_leaf, s.uplinks, s.spine_ports) == (128, 4, 32, 32, 1024, 64)
    assert s.ratio == "1/9" and s.bisection_Bps == pytest.approx(512 * IB_NDR.beta)
    with pytest.raises(ValueError, match="leaves_per_su"):
        superpod(leaves_per_su=4)
    with pytest.raises(ValueError, match="su_nodes"):
        superpod(su_nodes=48)


def test_p2p_times_follow_the_hop_rule():
    p = point_to_point()
    n = p.small_bytes
    same, other = p.paths[4], p.paths[5]
    assert p.same_small_s == same.times_s[0] == pytest.approx(NV.alpha + n / NV.beta, abs=1e-15)  # one α, a switch
    assert p.other_small_s == pytest.approx(IB_NDR.alpha + n / IB_NDR.beta, abs=1e-15)
    h = signature(Torus).parameters["hop_alpha"].default
    for q in p.paths[:4]:
        assert q.times_s[0] == pytest.approx(ICI_V5E.alpha * (1 + h * (q.hops - 1)) + n / ICI_V5E.beta, abs=1e-15)
    assert p.hi_alphas == 1 + h * (p.h_hi - 1) and p.sw_hops == same.hops == 2
    assert p.small_hi_s == pytest.approx(ICI_V5E.alpha * (1 + h * 7) + n / ICI_V5E.beta, abs=1e-15)
    with pytest.raises(ValueError, match="sizes"):
        point_to_point(sizes=(1e3, 1e6))
    assert demo_01_3(p).value(4, "t_4000") == same.times_s[0]


@pytest.fixture(scope="module")
def page03():
    """Page §3 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/03-topologies.md")


def test_hop_message_is_latency_plus_bytes(page03):
    """§3's question: 1 MB over 4 hops of an ICI ring takes α(1 + hop_alpha·3) + n/β."""
    for key, ha in (("q_p2p", 1), ("q_p2p2", 2)):
        lat = ICI_V5E.alpha * (1 + ha * 3)
        assert page03[f"{key}_time_s"] == fmt_time(lat + MB / ICI_V5E.beta)
        assert page03[f"{key}_latency_s"] == fmt_time(lat) and page03[f"{key}_hops"] == "4"
        assert page03[f"{key}_latency_frac"] == f"{100 * lat / (lat + MB / ICI_V5E.beta):.0f}%"
    assert page03["q_p2p2_hop_alpha"] == "2"


# ----------------------------------------------------------------------------- §0 and §1 (their cells)
@pytest.fixture(scope="module")
def page00():
    """Page §0 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/00-navigation.md")


@pytest.fixture(scope="module")
def page01():
    """Page §1 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/01-why.md")


def test_decode_numbers_weights_do_not_fit_one_gpu(page00):
    """§0.1's cell: Llama-3.1-70B's BF16 weights (2 bytes a parameter) against one H100, the
    passes over them per second on 8 GPUs, and the scripts' demo counts."""
    import math

    from commbook.hardware import H100
    from commbook.llm import LLAMA31_70B
    from commbook.units import fmt_bytes

    w = 2 * LLAMA31_70B.n_params
    assert w > H100.hbm_bytes and page00["nav_min_gpus"] == str(math.ceil(w / H100.hbm_bytes)) == "2"
    assert page00["nav_weights_bytes"] == fmt_bytes(w) and page00["nav_hbm_bytes"] == fmt_bytes(H100.hbm_bytes)
    assert page00["nav_reads_tp"] == f"{8 * H100.hbm_bandwidth / w:.0f}"
    assert page00["nav_b1_ring_s"] == "4.49 ms"             # demo 05-1's anchor: 160 all-reduces x 14 α of 2 µs
    assert page00["nav_scripts"] == "5"
    assert page00["nav_demos"] == str(sum(len(page00[f"nav_demos_0{i}"].split(", ")) for i in range(1, 6))) == "18"
    assert page00["nav_n03"] == str(len(page00["nav_demos_03"].split(", "))) == "4"


def test_why_decode_is_memory_bound_and_tp_divides_it(page01):
    from commbook import llm
    from commbook.llm import LLAMA31_70B
    from commbook.units import fmt_bytes

    one, many = llm.decode_step(LLAMA31_70B, 1, tp=1), llm.decode_step(LLAMA31_70B, 1, tp=8)
    assert one.memory > one.compute and many.memory > many.compute          # batch 1 decode is memory-bound
    assert page01["why_dec_speedup"] == "8" and page01["why_ar_per_layer"] == "2"
    assert page01["why_ar_msg_bytes"] == fmt_bytes(2 * LLAMA31_70B.d_model)  # one token, BF16
    assert page01["why_q_wide"] == "16" and page01["why_q_nhalf_bytes"] == fmt_bytes(NV.n_half)
    b = int(page01["why_q_b_half"])
    assert llm.tp_message_bytes(LLAMA31_70B, b) >= NV.n_half > llm.tp_message_bytes(LLAMA31_70B, b - 1)
    assert page01["why_q_msg_half_bytes"] == fmt_bytes(llm.tp_message_bytes(LLAMA31_70B, b))
