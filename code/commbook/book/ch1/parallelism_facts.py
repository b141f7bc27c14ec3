r"""Chapter §1.1: the numbers each section of ``chapters/{zh,en}/ch1/01-parallelism.md`` puts
into its prose, one typed result per section, built from :mod:`.parallelism_numbers` and
:mod:`commbook.physics` (the page glues them with :func:`commbook.book.glue.glue_fields`).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ... import physics
from ...collectives import t_formula
from ...hardware import IB_NDR_CHAPTER, Link
from ...units import fmt_bytes, fmt_number, fmt_time
from .parallelism_numbers import (BF16_BYTES, DEF_1_1_GPUS, EFFICIENCY_60, FIG2_MODEL, FIG2_SEQ_LEN,
                                  FIG2_SEQUENCES, FIG2_SIZES, H100_TDP_W, HALVING_STEPS, ILLUSTRATIVE_NVLINK_BIDIR,
                                  ILLUSTRATIVE_SHARES, ILLUSTRATIVE_TEXT_COMM_PLUS_STALL, INTRO_GPUS, LLAMA3_MFU,
                                  PARAMS_70B, SYNC_SHARE_RANGE, StepModel, at_efficiency, definition_1_1,
                                  energy_estimate, first_exposed, gpu_hours_saved, napkin_1_1, step_breakdown,
                                  zero_copy_host_bytes)

__all__ = ["D11", "d11_facts", "Q11", "q11_facts", "Physics", "physics_facts", "Energy", "energy_facts",
           "Estimate", "estimate_facts", "NM11", "nm11_facts", "Sync", "sync_facts", "Fig2", "fig2_facts", "Purpose", "purpose_facts"]


def _billions(x: float) -> str:
    return f"{fmt_number(x / 1e9, 3)}B"


def _kj(joules: float, digits: int = 3) -> str:
    return f"{fmt_number(joules / 1e3, digits)} kJ"


@dataclass(frozen=True)
class D11:
    """Definition 1.1 (:func:`.parallelism_numbers.definition_1_1`), with the opening
    sentence's cluster and the ring's rounds."""

    intro_gpus: int
    params: str
    bpv: int
    m_bytes: float
    gpus: int
    beta_Bps: float
    approx_s: float
    exact_s: float
    gap_frac: float
    worker_bytes: float
    server_bytes: float
    server_ratio: float
    rounds: int


def d11_facts() -> D11:
    d = definition_1_1()
    return D11(INTRO_GPUS, _billions(PARAMS_70B), BF16_BYTES, d.m_bytes, d.gpus, d.beta_Bps, d.approx_s, d.exact_s,
               1 - d.exact_s / d.approx_s, d.per_worker_bytes, d.server_bytes,
               d.server_bytes / d.per_worker_bytes, 2 * (d.gpus - 1))


@dataclass(frozen=True)
class Q11:
    """The quiz: Definition 1.1 on ten times the GPUs, and the α the ring then pays."""

    big: int
    factor: float
    exact_s: float
    exact_small_s: float
    rounds: int
    alpha_s: float
    lat_s: float


def q11_facts(link: Link = IB_NDR_CHAPTER) -> Q11:
    big = 10 * DEF_1_1_GPUS
    d, small = definition_1_1(gpus=big), definition_1_1()
    return Q11(big, d.factor, d.exact_s, small.exact_s, 2 * (big - 1), link.alpha, 2 * (big - 1) * link.alpha)


@dataclass(frozen=True)
class Physics:
    """Light in fibre: the chapter's speed, the delay over a kilometre and a rack row, over a
    kilometre of SMF-28, and the bytes in flight on InfiniBand NDR."""

    speed: str
    km_s: float
    rack_m: str
    rack_s: float
    smf_km_s: float
    smf_index: str
    bdp_beta_Bps: float
    bdp_rack_bytes: float
    bdp_km_bytes: float


def physics_facts(km: float = 1000.0, rack: float = 100.0, link: Link = IB_NDR_CHAPTER) -> Physics:
    return Physics(f"{fmt_number(physics.FIBER_SPEED_CHAPTER / 1e3)} km/s", physics.propagation_delay(km),
                   f"{fmt_number(rack)} m", physics.propagation_delay(rack),
                   physics.propagation_delay(km, physics.fiber_speed()), f"{physics.FIBER_GROUP_INDEX_SMF28}",
                   link.beta, physics.bandwidth_delay_product(link.beta, rack),
                   physics.bandwidth_delay_product(link.beta, km))


@dataclass(frozen=True)
class Energy:
    """Figure 1's tiers (pJ/bit, as the figure draws them) and their ratios to SRAM, with
    the other energy figures the section quotes."""

    SRAM: str
    HBM: str
    NVLink: str
    IB: str
    HBM_x: str
    NVLink_x: str
    IB_x: str
    fabric: str
    nvl_nvidia: float
    nvl_pcie: float
    optic_w: str
    ndr: str


def energy_facts(fabric_m: int = 50) -> Energy:
    E = physics.ENERGY
    pj = {k: fmt_number(E[k].figure_pj) for k in ("SRAM", "HBM", "NVLink", "IB")}
    x = {k: fmt_number(physics.energy_ratio(k), 4) for k in ("HBM", "NVLink", "IB")}
    lo, hi = physics.OPTICAL_400G_MODULE_W
    return Energy(pj["SRAM"], pj["HBM"], pj["NVLink"], pj["IB"], x["HBM"], x["NVLink"], x["IB"], f"{fabric_m} m",
                  physics.NVIDIA_NVLINK_PJ_PER_BIT, physics.NVLINK_VS_PCIE5_EFFICIENCY,
                  f"{fmt_number(lo)}–{fmt_number(hi)} W", f"{fmt_number(physics.NDR_LINE_RATE_BPS / 1e9)} Gb/s")


@dataclass(frozen=True)
class Estimate:
    """The energy estimate (:func:`.parallelism_numbers.energy_estimate`): its inputs, the
    energies as text (kJ), the GPUs' power for scale and the estimate's share of it."""

    gpus: int
    n_bytes: float
    pj: float
    factor: float
    j: str
    fig_ib: str
    ib_range: str
    ring: str
    tdp: str
    gpu_mj: str
    share_frac: float
    share_ib_frac: float


def estimate_facts() -> Estimate:
    e = energy_estimate()
    return Estimate(e.gpus, e.n_bytes, e.pj_per_bit, e.factor, _kj(e.joules),
                    _kj(e.joules_figure_ib), f"{_kj(e.joules_ib_low)} – {_kj(e.joules_ib_high)}",
                    _kj(e.joules_ring, 5), f"{fmt_number(H100_TDP_W)} W",
                    f"{fmt_number(e.gpu_joules_per_s / 1e6)} MJ", e.joules / e.gpu_joules_per_s,
                    e.joules_figure_ib / e.gpu_joules_per_s)


@dataclass(frozen=True)
class NM11:
    """Napkin Math 1.1 (:func:`.parallelism_numbers.napkin_1_1`), with the total at Table 1's
    α for comparison and the size at which the latency term is 1 % of the bandwidth term."""

    params: str
    gpus: int
    beta_Bps: float
    alpha_s: float
    bpv: int
    params_sci: str
    m_bytes: float
    factor: float
    tbw_s: float
    steps: int
    tlat_s: float
    tlat_ms_s: float
    total_s: float
    sim_s: float
    rounds: int
    table_alpha_s: float
    total_table_s: float
    run_share_frac: float
    run_n: int


def nm11_facts(run_share: float = 0.01, table: Link = IB_NDR_CHAPTER) -> NM11:
    from .parallelism_numbers import LINK_NM_1_1 as link

    nm = napkin_1_1()
    return NM11(_billions(PARAMS_70B), nm.gpus, nm.beta_Bps, nm.alpha_s, BF16_BYTES,
                f"{fmt_number(PARAMS_70B / 1e10)} × 10¹⁰", nm.m_bytes, nm.factor, nm.t_bw_s, nm.steps, nm.t_lat_s,
                nm.t_lat_s, nm.total_s, nm.sim_s, nm.sim_rounds, table.alpha,
                t_formula("ring", nm.gpus, nm.m_bytes, table.alpha, nm.beta_Bps), run_share,
                round(run_share * nm.m_bytes / (link.beta * link.alpha)))


@dataclass(frozen=True)
class Sync:
    """The cost of synchronization: the chapter's range, the zero-copy saving, a 60 %
    efficient algorithm, and the GPU-hours a halved all-reduce saves."""

    lo_frac: float
    hi_frac: float
    zc_bytes: float
    eff_frac: float
    eff_t_s: float
    half_steps: int
    half_gpuh: int
    half_saved_s: float


def sync_facts() -> Sync:
    nm = napkin_1_1()
    lo, hi = SYNC_SHARE_RANGE
    return Sync(lo, hi, zero_copy_host_bytes(nm.m_bytes), EFFICIENCY_60, at_efficiency(nm.total_s), HALVING_STEPS,
                round(gpu_hours_saved(nm.total_s, nm.gpus)), nm.total_s / 2)


@dataclass(frozen=True)
class Fig2:
    """Figure 2's model bars as the prose reads them (sizes, shares, times; the single ring,
    weak scaling and the hierarchical all-reduce at 4,096 GPUs; the model's inputs) and the
    chapter's illustrative shares and NVLink figure."""

    n8: int
    n64: int
    n1024: int
    n2048: int
    n4096: int
    n8192: int
    comm8192_frac: float
    alpha4096_s: float
    single_first: int
    single_tar64_s: float
    single_comm4096_frac: float
    compute8_frac: float
    tc8_s: float
    tar8_s: float
    tc64_s: float
    tar64_s: float
    stall64_frac: float
    comm1024_frac: float
    comm2048_frac: float
    comm4096_frac: float
    tc4096_s: float
    tar4096_s: float
    params: str
    layers: int
    seqs: int
    seqlen: int
    tokens: int
    flops: float
    bwd: str
    mfu_frac: float
    mfu_lo_frac: float
    mfu_hi_frac: float
    mfu_gpus: int
    g: int
    nvl: str
    ib: str
    layer_bytes: float
    first: int
    tar64_over_8: float
    first_tokens: int
    weak_tokens: int
    weak_compute8_frac: float
    weak_comm64_frac: float
    weak_comm4096_frac: float
    hier_tar_s: float
    hier_comm_frac: float
    hier_first: int
    ill_comm8_frac: float
    ill_comm64_frac: float
    ill_comm4096_frac: float
    ill_compute4096_frac: float
    ill_stall4096_frac: float
    ill_text_frac: float
    ill_nvl_Bps: float
    ill_nvl_one_Bps: float
    ill_ratio_bidir: float
    ill_ratio_one: float


def fig2_facts(M: StepModel = FIG2_MODEL) -> Fig2:
    n1, n64, n1k, n2k, nmax, nbig = FIG2_SIZES
    b = {n: step_breakdown(n, M) for n in FIG2_SIZES}
    sh = lambda n, part, model=M: step_breakdown(n, model).shares[part]
    S, H = M.single_ring(), M.hierarchical()
    weak_tokens = M.global_tokens // nmax
    W = M.weak(weak_tokens)
    first = first_exposed(M)
    ill = ILLUSTRATIVE_SHARES
    link = lambda L: f"{fmt_bytes(L.beta)}/s, α = {fmt_time(L.alpha)}"
    return Fig2(
        n1, n64, n1k, n2k, nmax, nbig, b[nbig].shares["comm"], M.layers * 2 * (nmax - 1) * M.inter.alpha,
        first_exposed(S), step_breakdown(n64, S).allreduce_s, sh(nmax, "comm", S), b[n1].shares["compute"],
        b[n1].compute_s, b[n1].allreduce_s, b[n64].compute_s, b[n64].allreduce_s, b[n64].shares["stall"],
        b[n1k].shares["comm"], b[n2k].shares["comm"], b[nmax].shares["comm"], b[nmax].compute_s,
        b[nmax].allreduce_s, _billions(M.params), M.layers, FIG2_SEQUENCES, FIG2_SEQ_LEN, M.global_tokens,
        M.flops_per_param_token, str(Fraction(M.backward_fraction).limit_denominator(10)), M.mfu,
        LLAMA3_MFU["range"][0], LLAMA3_MFU["range"][1], LLAMA3_MFU["gpus"], M.gpus_per_node, link(M.intra),
        link(M.inter), b[n1].layer_bytes, first, b[n64].allreduce_s / b[n1].allreduce_s,
        round(M.global_tokens / first), weak_tokens, sh(n1, "compute", W), sh(n64, "comm", W), sh(nmax, "comm", W),
        step_breakdown(nmax, H).allreduce_s, sh(nmax, "comm", H), first_exposed(H), ill[n1]["comm"],
        ill[n64]["comm"], ill[nmax]["comm"], ill[nmax]["compute"], ill[nmax]["stall"],
        ILLUSTRATIVE_TEXT_COMM_PLUS_STALL, ILLUSTRATIVE_NVLINK_BIDIR, M.intra.beta,
        ILLUSTRATIVE_NVLINK_BIDIR / M.inter.beta, M.intra.beta / M.inter.beta)


@dataclass(frozen=True)
class Purpose:
    """§1.0: ordered pairs N(N−1) and the ring's 2(N−1)/N on the smallest and largest cluster
    of the connections table, how much each grows between them; and the quiz's ``q_n`` GPUs."""

    small: int
    small_pairs: int
    large: int
    large_pairs: int
    grow_n: int
    grow_pairs: int
    ring_small: float
    ring_large: float
    q_n: int
    q_pairs: int
    q_ring: float
    q_ring_msgs: int


def purpose_facts(table, q_n: int = 64) -> Purpose:
    """Read :func:`.parallelism_tables.connections_table`."""
    from .parallelism_numbers import logical_connections

    sizes = [r["n"] for r in table.rows]
    small, large = sizes[0], sizes[-1]
    return Purpose(small, logical_connections(small), large, logical_connections(large), round(table.meta["grow_n"]),
                   round(table.meta["grow_pairs"]), physics.ring_traffic_factor(small),
                   physics.ring_traffic_factor(large), q_n, logical_connections(q_n), physics.ring_traffic_factor(q_n),
                   2 * (q_n - 1))
