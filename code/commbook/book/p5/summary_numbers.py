"""P5 §9, the summary and its pitfalls: the numbers its prose quotes, gathered from the
tables of §§1–7 (the functions script 01–05 prints), one typed result per part, each field
named with its unit (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``; ``_range`` a "lo–hi"
span as text; counts are ints), glued whole by :func:`commbook.book.glue.glue_fields`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import cost, llm
from ...bandwidth import busbw
from ...collectives import t_formula
from ...hardware import IB_NDR, NVLINK4
from ...units import MB, fmt_bytes, fmt_pct, fmt_ratio
from ..measuring_p5 import p5_curve
from .allreduce import demo_03_1, demo_03_2
from .allreduce_numbers import race, sharp_gain
from .common import span
from .inference import decode_run, demo_05_4, kv_run, prefill_run, tp_nodes
from .links import demo_01_1, topologies
from .semantics import bounds
from .topology import all_to_all_race, demo_04_1, demo_04_3

__all__ = ["Summary", "summary_numbers", "Pitfalls", "pitfall_numbers"]

NV, IB = NVLINK4, IB_NDR


@dataclass(frozen=True)
class Summary:
    """The summary's list: one or two numbers from each section."""
    nv_nhalf_bytes: float
    ib_nhalf_bytes: float
    decode_msg_bytes: float
    prefill_msg_range: str
    kv_range: str
    p64: int
    sw_diam: int
    sw_bis_Bps: float
    ring_diam: int
    ring_bis_Bps: float
    torus: str
    torus_diam: int
    torus_bis_Bps: float
    gap_x: float                   # NVLink's β over InfiniBand's
    ar_bound: float                # bytes per device over n, all-reduce
    a2a_bound: float
    p8: int
    ring_rounds: int
    rd_rounds: int
    rab_rounds: int
    ring_sent: float               # bytes per device over n
    rd_sent: float
    big_bytes: float
    innet_share_frac: float        # in-network over ring, the largest message
    sharp_frac: float              # NVLink SHARP's measured busbw gain
    cross_naive_bytes: float
    cross_rab_bytes: float
    mapping_x: float               # random mappings' median over the ideal
    flat_rounds: int
    two_d_rounds: int
    two_d_n_bytes: float
    two_d_x: float
    hier_big_range: str
    hier_small_range: str
    hier_n_big_bytes: float
    hier_n_small_bytes: float
    nccl_small_range: str          # NCCL's ring over the hierarchy, small message
    nccl_ring_to: int              # NCCL's ring ahead up to this many nodes (large message)
    nccl_ring_x: float
    nccl_hier_from: int
    nccl_hier_range: str
    ring_from_n_lo: int
    ring_from_n_hi: int
    ring_from_lo_bytes: float      # NCCL's ring faster from this size per GPU
    ring_from_hi_bytes: float
    tp_ring_s: float
    tp_compute_s: float
    tp_rd_s: float
    tp_share_frac: float
    hidden_from: int
    tp16_x: float
    moe_range: str
    kv8_range: str
    kv1_range: str
    alpha_eff_s: float
    alpha_link_s: float
    alpha_x: float
    m58_bytes: float
    bstar_ring: int
    bstar_rd: int
    mbig_frac: float
    mbig_bytes: float
    nv_beta_Bps: float
    rate_ring: int                 # decode steps per second, ring
    rate_rd: int


def summary_numbers(p8: int = 8) -> Summary:
    topo, lb, run = topologies(), bounds(p8, MB, NV), race(p8, MB, NV)
    sw, ring, torus2 = topo.sw, topo.ring, topo.t2
    algos = demo_03_1(p=p8)
    cross, big = algos.part("03-1b"), algos.rows[-1]
    mapping = demo_04_1()
    flat2d = mapping.part("04-1b").rows[0]
    hier = demo_04_3()
    n_big, n_small = max(hier.column("n")), min(hier.column("n"))
    hier_big = [r["speedup"] for r in hier.rows if r["n"] == n_big]
    hier_small = [r["speedup"] for r in hier.rows if r["n"] == n_small]
    nccl_small = [r["nccl_vs_hier"] for r in hier.rows if r["n"] == n_small]
    nccl_big = {r["nodes"]: r["nccl_vs_hier"] for r in hier.rows if r["n"] == n_big}
    ring_ahead = [N for N, v in nccl_big.items() if v < 1]
    hier_ahead = [N for N, v in nccl_big.items() if v > 1]
    ring_from = {r["nodes"]: r["per_gpu"] for r in hier.part("04-3b").rows}
    tp = decode_run(batches=(1,)).at(batch=1)
    pre, kv = prefill_run(), kv_run()
    moe_x = [r["vs_intra"] for r in demo_05_4().rows if r["ep"] > 8 and r["dtype"] == "BF16"]
    m = p5_curve(NV).measured                      # §5.6: the measured tensor and the largest stated point
    model = llm.LLAMA31_70B
    n_tok = llm.tp_message_bytes(model, 1)
    return Summary(
        nv_nhalf_bytes=NV.n_half, ib_nhalf_bytes=IB.n_half, decode_msg_bytes=n_tok,
        prefill_msg_range=span([r.msg_bytes for r in pre.rows], fmt_bytes), kv_range=span([r.kv_bytes for r in kv.rows], fmt_bytes),
        p64=2 * ring.diameter, sw_diam=sw.diameter, sw_bis_Bps=sw.bisection_Bps, ring_diam=ring.diameter,
        ring_bis_Bps=ring.bisection_Bps, torus=torus2.name, torus_diam=torus2.diameter,
        torus_bis_Bps=torus2.bisection_Bps, gap_x=NV.beta / IB.beta,
        ar_bound=lb.all_reduce_per_n, a2a_bound=cost.lower_bound_bytes("all_to_all", p8, 1.0),
        p8=p8, ring_rounds=run.ring.rounds, rd_rounds=run.rd.rounds, rab_rounds=run.rabenseifner.rounds,
        ring_sent=run.ring.sent_per_n, rd_sent=run.rd.sent_per_n, big_bytes=big["n_bytes"], innet_share_frac=big["innet"].time_s / big["ring"].time_s,
        sharp_frac=sharp_gain(), cross_naive_bytes=cross.find(boundary="naive → RD")["n"],
        cross_rab_bytes=cross.find(boundary="RD → Rabenseifner")["n"], mapping_x=mapping.meta["random_median"],
        flat_rounds=flat2d["flat_rounds"], two_d_rounds=flat2d["two_d_rounds"], two_d_n_bytes=flat2d["n"],
        two_d_x=flat2d["speedup"], hier_big_range=span(hier_big, fmt_ratio), hier_small_range=span(hier_small, fmt_ratio),
        hier_n_big_bytes=n_big, hier_n_small_bytes=n_small, nccl_small_range=span(nccl_small, fmt_ratio),
        nccl_ring_to=max(ring_ahead), nccl_ring_x=1 / min(nccl_big.values()), nccl_hier_from=min(hier_ahead),
        nccl_hier_range=span([nccl_big[N] for N in hier_ahead], fmt_ratio), ring_from_n_lo=min(ring_from),
        ring_from_n_hi=max(ring_from), ring_from_lo_bytes=ring_from[min(ring_from)],
        ring_from_hi_bytes=ring_from[max(ring_from)], tp_ring_s=tp.ring_s, tp_compute_s=tp.compute_s,
        tp_rd_s=tp.rd_s, tp_share_frac=tp.ring_s / llm.decode_step(model, 1, tp=p8).time,
        hidden_from=next(r.tokens for r in pre.rows if r.ratio_frac < 1),
        tp16_x=tp_nodes().speedup_x, moe_range=span(moe_x, fmt_ratio),
        kv8_range=span([r.share8_frac for r in kv.rows], fmt_pct),
        kv1_range=span([r.share1_frac for r in kv.rows], fmt_pct),
        alpha_eff_s=m.blog_alpha_exact_s, alpha_link_s=NV.alpha, alpha_x=m.blog_alpha_x, m58_bytes=m.blog_exact_bytes,
        bstar_ring=-(-p8 * NV.n_half // n_tok), bstar_rd=-(-NV.n_half // n_tok),
        mbig_frac=m.blog_top_Bps / NV.beta, mbig_bytes=m.blog_top_bytes, nv_beta_Bps=NV.beta,
        rate_ring=round(1 / tp.ring_s), rate_rd=round(1 / tp.rd_s))


@dataclass(frozen=True)
class Pitfalls:
    """The pitfalls' numbers: the half-bandwidth point, long rings, all-to-all bounds, TP across
    nodes, and the measured bus bandwidth."""
    small_bytes: float
    small_bw_Bps: float
    small_frac: float
    p: int
    n_bytes: float
    ring_s: float
    ring_rounds: int
    rd_s: float
    rd_rounds: int
    nbig_bytes: float
    pmin: int
    pmid: int
    ring_big_min_s: float
    ring_big_mid_s: float
    ring_big_max_s: float
    rab_big_min_s: float
    rab_big_max_s: float
    ring_small_min_s: float
    a2a_p: int
    a2a_sim_s: float
    a2a_egress_s: float
    a2a_bis_s: float
    k8_s: float
    k16_s: float
    nodes: int
    c8_s: float
    c16_s: float
    bus_meas_Bps: float
    bus_spec_Bps: float
    bus_frac: float
    bus_model_Bps: float


def pitfall_numbers(p_mid: int = 64) -> Pitfalls:
    links = demo_01_1()
    small = links.meta["sizes"][0]
    bw_small, frac_small = links.find(link=NV.name)[f"at_{small:.0f}"]
    scale = demo_03_2()
    n_small, n_big = min(scale.column("n")), max(scale.column("n"))
    p_max, p_min = max(scale.column("p")), min(scale.column("p"))
    far, near = scale.find(n=n_small, p=p_max), scale.find(n=n_small, p=p_min)
    big_p = {p: scale.find(n=n_big, p=p) for p in scale.column("p")}
    a2a = all_to_all_race(check_p16=False)
    tpn = tp_nodes()
    m = p5_curve(NV).measured
    n, p = m.blog_exact_bytes, 8                    # §5.6's tensor on one 8-GPU node
    return Pitfalls(
        small_bytes=small, small_bw_Bps=bw_small, small_frac=frac_small, p=p_max, n_bytes=n_small,
        ring_s=far["ring"], ring_rounds=far["ring_rounds"], rd_s=far["rd"], rd_rounds=far["rd_rounds"],
        nbig_bytes=n_big, pmin=p_min, pmid=p_mid, ring_big_min_s=big_p[p_min]["ring"],
        ring_big_mid_s=big_p[p_mid]["ring"], ring_big_max_s=big_p[p_max]["ring"],
        rab_big_min_s=big_p[p_min]["rabenseifner"], rab_big_max_s=big_p[p_max]["rabenseifner"],
        ring_small_min_s=near["ring"], a2a_p=2 * topologies().ring.diameter,
        a2a_sim_s=a2a.sw_s, a2a_egress_s=a2a.sw_egress_s, a2a_bis_s=a2a.rows[0].bisection_s, k8_s=tpn.comm8_s,
        k16_s=tpn.comm16_s, nodes=tpn.factor, c8_s=tpn.compute8_s, c16_s=tpn.compute16_s,
        bus_meas_Bps=m.blog_mid_Bps, bus_spec_Bps=NV.beta, bus_frac=m.blog_mid_Bps / NV.beta,
        bus_model_Bps=busbw("all_reduce", n, t_formula("ring", p, n, NV.alpha, NV.beta), p))
