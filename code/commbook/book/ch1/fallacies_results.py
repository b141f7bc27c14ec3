"""Chapter §1.9, the numbers its prose quotes, one typed result per fallacy: every field
carries its unit in its name (``_s``, ``_us`` (a plain number of µs), ``_bytes``, ``_Bps``,
``_x``, ``_frac``, ``_times`` (a plain multiple, written without ×); counts are ints; powers
of ten are text), so the page glues a result whole with
:func:`commbook.book.glue.glue_fields`.

Each function reads the runs and tables of :mod:`.fallacies` (which the tables share) and
derives here what the page used to work out by hand.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ...cost import LogP
from ...hardware import NVLINK4_CHAPTER, Link
from ...measure import load_log
from ...measure.points import load as load_measurement
from ...overlap import transfer_beside_compute
from ...parallelism import min_microbatches, pipeline_bubble_fraction
from ...units import us
from . import fallacies as fa
from .perf_numbers import NM13

__all__ = ["sci", "Bandwidth", "bandwidth_numbers", "AllToAll", "alltoall_numbers", "Bubble", "bubble_numbers",
           "RingTree", "ring_tree_numbers", "Feedback", "feedback_numbers", "TimeToTrain", "train_numbers",
           "Async", "async_example", "Flips", "bit_flips", "FlatHier", "flat_numbers", "Intra", "intra_numbers",
           "Placement", "placement_numbers", "Benchmark", "benchmark_context"]


def sci(x: float, digits: int = 2) -> str:
    """A large or small number with a power of ten: 2.76e21 -> '2.8 × 10²¹'."""
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mant} × 10{str(int(exp)).translate(sup)}"


# ============================================================================ 1 bandwidth
@dataclass(frozen=True)
class Bandwidth:
    alpha_s: float
    r0: str                   # the slower link rate, "100 Gb/s"
    r1: str
    small_bytes: float
    small_gain_x: float       # 400G over 100G at the smallest message
    big_gain_x: float
    nstar0_bytes: float       # n* = αβ of each rate
    nstar1_bytes: float
    nstar2_bytes: float


def bandwidth_numbers(bw) -> Bandwidth:
    """From :func:`.fallacies.bandwidth_table`."""
    rates = [f"{r / 1e9:g} Gb/s" for r in fa.BANDWIDTH["rates_bps"]]
    stars = bw.meta["n_star"]
    return Bandwidth(alpha_s=fa.BANDWIDTH["alpha"], r0=rates[0], r1=rates[1], small_bytes=bw.rows[0]["n"],
                     small_gain_x=bw.rows[0]["gain"], big_gain_x=bw.rows[-1]["gain"], nstar0_bytes=stars[0],
                     nstar1_bytes=stars[1], nstar2_bytes=stars[2])


@dataclass(frozen=True)
class AllToAll:
    p: int
    bytes_times: float        # all-reduce as routing over all-to-all, bytes
    t_times: float            # ... time


def alltoall_numbers() -> AllToAll:
    ar = fa.alltoall_by_allreduce()
    return AllToAll(p=ar["p"], bytes_times=ar["bytes_ar"] / ar["bytes_a2a"], t_times=ar["t_ar"] / ar["t_a2a"])


# ============================================================================ 3 pipeline bubble
@dataclass(frozen=True)
class Bubble:
    p: int
    m: int
    target_frac: float
    bubble_frac: float
    frac: str                 # the bubble as a fraction, "(p−1)/(m+p−1)"
    m_min: int
    chapter_m: int
    q16: int
    q32: int
    factor: float             # (1 − target)/target
    m16: int
    at16_frac: float
    at32_frac: float
    q_p: int                  # the check-yourself pipeline
    q_t_frac: float
    q_m: int
    q_b_frac: float
    q_b_before_frac: float


def bubble_numbers(q_p: int = 12, q_t: float = 0.1) -> Bubble:
    """From :func:`.fallacies.bubble_numbers`; the check-yourself case by
    :func:`commbook.parallelism.min_microbatches`."""
    bb = fa.bubble_numbers()
    q16, q32 = fa.BUBBLE["deeper"]
    d16, d32 = bb["deeper"][q16], bb["deeper"][q32]
    q_m = min_microbatches(q_p, q_t)
    return Bubble(p=bb["p"], m=bb["m"], target_frac=bb["target"], bubble_frac=bb["bubble"],
                  frac=f"{bb['p'] - 1}/{bb['m'] + bb['p'] - 1}", m_min=bb["m_min"], chapter_m=fa.CHAPTER["bubble_m"],
                  q16=q16, q32=q32, factor=(1 - bb["target"]) / bb["target"], m16=d16["m_min"],
                  at16_frac=d16["at_chapter_m"], at32_frac=d32["at_chapter_m"], q_p=q_p, q_t_frac=q_t, q_m=q_m,
                  q_b_frac=pipeline_bubble_fraction(q_p, q_m), q_b_before_frac=pipeline_bubble_fraction(q_p, q_m - 1))


# ============================================================================ 4 ring against tree
@dataclass(frozen=True)
class RingTree:
    p: int
    n_bytes: float
    ring_lat_us: float
    ring_us: float
    tree_bw_us: float
    tree_us: float
    steps: int
    step_bw_us: float
    chapter_bw_us: float
    chapter_steps: int        # the tree steps the chapter's penalty implies
    cross_bytes: float
    cross_log_bytes: float
    cross_crude_bytes: float
    crude_times: float
    q_p: int                  # twice the GPUs
    q_cross_bytes: float
    q_cross_log_bytes: float
    q_ring_s: float
    q_tree_s: float
    q_lat_s: float


def ring_tree_numbers() -> RingTree:
    """From :func:`.fallacies.ring_tree`, at its ``p`` and at twice that."""
    rt = fa.ring_tree()
    q = fa.ring_tree(p=2 * rt["p"])
    step = rt["tree_bw"] / rt["tree_steps"]
    return RingTree(p=rt["p"], n_bytes=rt["n"], ring_lat_us=rt["ring_lat"] / us, ring_us=rt["ring"] / us,
                    tree_bw_us=rt["tree_bw"] / us, tree_us=rt["tree"] / us, steps=rt["tree_steps"], step_bw_us=step / us,
                    chapter_bw_us=fa.CHAPTER["tree_bw"] / us, chapter_steps=round(fa.CHAPTER["tree_bw"] / step),
                    cross_bytes=rt["cross"], cross_log_bytes=rt["cross_log"], cross_crude_bytes=rt["cross_crude"],
                    crude_times=rt["cross_crude"] / rt["cross"], q_p=q["p"], q_cross_bytes=q["cross"],
                    q_cross_log_bytes=q["cross_log"], q_ring_s=q["ring"], q_tree_s=q["tree"], q_lat_s=q["ring_lat"])


# ============================================================================ 5-7 compression, asynchrony
@dataclass(frozen=True)
class Feedback:
    keep_frac: float
    drop_frac: float
    ratio_x: float
    steps: int
    with_ef: str              # the gap with error feedback, a power of ten
    without_frac: float
    end_frac: float
    drift: float


def feedback_numbers() -> Feedback:
    ef = fa.ef_runs()
    return Feedback(keep_frac=ef["fraction"], drop_frac=1 - ef["fraction"], ratio_x=ef["ratio_1e6"], steps=ef["steps"],
                    with_ef=sci(ef["ef"]), without_frac=ef["plain"], end_frac=ef["plain_end"], drift=ef["drift_topk"])


@dataclass(frozen=True)
class TimeToTrain:
    ratio_x: float
    more_x: float
    base_s: float
    comp_s: float
    break_s: float


def train_numbers() -> TimeToTrain:
    tt = fa.time_to_train_example()
    return TimeToTrain(ratio_x=tt["ratio"], more_x=1 + tt["extra_steps"], base_s=tt["baseline"],
                       comp_s=tt["compressed"], break_s=tt["break_even"])


@dataclass(frozen=True)
class Async:
    """LogP timeline of one transfer beside ``t_s`` of compute."""
    t_s: float
    L_s: float
    o_s: float
    step_s: float
    stall_s: float
    hidden_frac: float
    exposed_o_s: float        # the two overheads 2o


def async_example(t_compute: float = fa.ASYNC_COMPUTE, L: float = NM13["L"], o: float = NM13["o"]) -> Async:
    """:func:`commbook.overlap.transfer_beside_compute` of one transfer beside ``t_compute``."""
    tl = transfer_beside_compute(t_compute, LogP(L=L, o=o))
    return Async(t_s=t_compute, L_s=L, o_s=o, step_s=tl.step_time, stall_s=tl.stall, hidden_frac=tl.hidden_fraction,
                 exposed_o_s=2 * o)


# ============================================================================ 8 silent corruption
@dataclass(frozen=True)
class Flips:
    """Each of the 32 bits of one value flipped in turn: whether a norm check (change >
    ``threshold_frac``) and a CRC-32 of the bytes notice it; the fleet's bits in a day."""
    nodes: int
    nics: int
    rate_Bps: float
    bits: str                 # bits the fleet moves in a day
    ber: str                  # the error rate of one flip a day
    d: int
    threshold_frac: float
    value: float              # the value before the flips
    norm: int                 # flips the norm check catches
    crc: int
    worst: float              # the largest |value after / before| the norm check misses
    rows: tuple               # per bit: (bit, value after, relative norm change, norm sees, CRC sees)


def bit_flips(d: int = fa.SDC["d"], scale: float = fa.SDC["scale"], seed: int = fa.SDC["seed"],
              threshold: float = fa.SDC["threshold"]) -> Flips:
    rng = np.random.default_rng(seed)
    g, i = (scale * rng.standard_normal(d)).astype(np.float32), int(rng.integers(d))
    norm, crc = float(np.linalg.norm(g.astype(np.float64))), zlib.crc32(g.tobytes())
    rows = []
    for bit in range(32):
        h = g.copy()
        h.view(np.uint32)[i] ^= np.uint32(1 << bit)
        change = abs(float(np.linalg.norm(h.astype(np.float64))) - norm) / norm
        rows.append((bit, float(h[i]), change, change > threshold, zlib.crc32(h.tobytes()) != crc))
    bits = fa.fleet_bits_per_day()
    return Flips(nodes=fa.SDC["nodes"], nics=fa.SDC["nics"], rate_Bps=fa.IB_NDR_CHAPTER.beta, bits=sci(bits),
                 ber=sci(1 / bits), d=d, threshold_frac=threshold, value=float(g[i]), norm=sum(r[3] for r in rows),
                 crc=sum(r[4] for r in rows), worst=max(abs(r[1] / float(g[i])) for r in rows if not r[3]), rows=tuple(rows))


# ============================================================================ 9-11 topology
@dataclass(frozen=True)
class FlatHier:
    nodes: int
    idle: int
    ch_cut: float             # the chapter's "8×" traffic cut
    ch_speedup: float
    ch_nvl_Bps: float
    gpn: int
    n_bytes: float
    nvl_Bps: float
    ib_Bps: float
    speedup_x: float          # flat ring over the hierarchy
    nic_flat_bytes: float
    nic_times: float          # busiest NIC, ring over hierarchy
    one_nic_x: float
    nccl_s: float
    nccl_nic_bytes: float
    nccl_x: float             # the hierarchy over NCCL's ring


def flat_numbers() -> FlatHier:
    nl, ch = fa.nic_load(), fa.CHAPTER
    return FlatHier(nodes=nl["nodes"], idle=nl["gpn"] - 1, ch_cut=ch["flat_traffic_cut"], ch_speedup=ch["flat_speedup"],
                    ch_nvl_Bps=ch["nvlink_bidirectional"], gpn=nl["gpn"], n_bytes=nl["n"], nvl_Bps=fa.FLAT["intra"].beta,
                    ib_Bps=fa.FLAT["inter"].beta, speedup_x=nl["ring"] / nl["hierarchical"],
                    nic_flat_bytes=nl["ring_nic_max"], nic_times=nl["ring_nic_max"] / nl["hierarchical_nic_max"],
                    one_nic_x=nl["ring_one_nic"] / nl["hierarchical_one_nic"], nccl_s=nl["nccl"],
                    nccl_nic_bytes=nl["nccl_nic_max"], nccl_x=nl["hierarchical"] / nl["nccl"])


@dataclass(frozen=True)
class Intra:
    p: int
    steps: int
    small_bytes: float
    big_bytes: float
    ring_big_x: float
    ring_small_x: float


def intra_numbers(ix) -> Intra:
    """From :func:`.fallacies.intra_node_table`."""
    ring = next(r for r in ix.rows if r["algo"] == "ring")
    p, sizes = fa.INTRA["p"], fa.INTRA["sizes"]
    return Intra(p=p, steps=2 * (p - 1), small_bytes=sizes[0], big_bytes=sizes[1], ring_big_x=ring["x1"],
                 ring_small_x=ring["x0"])


@dataclass(frozen=True)
class Placement:
    ch_lo_pct: float          # the chapter's "50–60 %", lower end as a number
    ch_hi_frac: float
    first: str                # a node's ranks, "0–7"
    second: str
    x2_x: float
    share2_frac: float
    x4_x: float
    share4_frac: float
    spine_block_s: float
    spine_snake_s: float
    k2: int                   # GPUs per NIC
    k4: int
    spine: str
    last: int


def placement_numbers(pl) -> Placement:
    """From :func:`.fallacies.placement_table`."""
    row = {r["cluster"]: r for r in pl.rows}
    lo, hi = fa.CHAPTER["mapping_share"]
    g, kw = fa.PLACEMENT["gpn"], dict(fa.PLACEMENT["clusters"])
    return Placement(ch_lo_pct=100 * lo, ch_hi_frac=hi, first=f"0–{g - 1}", second=f"{g}–{2 * g - 1}",
                     x2_x=row["nic2"]["spread"], share2_frac=1 / row["nic2"]["spread"], x4_x=row["nic4"]["spread"],
                     share4_frac=1 / row["nic4"]["spread"], spine_block_s=row["spine2"]["block"],
                     spine_snake_s=row["spine2"]["snake"], k2=g // kw["nic2"]["nics_per_node"],
                     k4=g // kw["nic4"]["nics_per_node"], spine=f"{kw['spine2']['spine_oversubscription']}:1", last=g - 1)


@dataclass(frozen=True)
class Benchmark:
    """The log's largest all-reduce bus bandwidth against the wire rate and against the
    switch-reduction-off measurement at its largest size; what the log records."""
    ranks: int
    size_bytes: float
    busbw_Bps: float
    wire_Bps: float
    over_frac: float
    off_Bps: float
    off_size_bytes: float
    gap_frac: float
    hosts: tuple[str, ...]
    rank_is_device: bool
    algo: str | None
    nccl: str


def benchmark_context(log: str = fa.CONTEXT_LOG, sharp_off: str = fa.SHARP_OFF, wire: Link = NVLINK4_CHAPTER) -> Benchmark:
    run = next(r for r in load_log(log) if r.collective == "all_reduce")
    busbw = run.column("busbw", "out_of_place")
    k = int(np.argmax(busbw))
    off = load_measurement(sharp_off).points[-1]
    bus = float(busbw[k])
    return Benchmark(ranks=run.nranks, size_bytes=float(run.sizes()[k]), busbw_Bps=bus, wire_Bps=wire.beta,
                     over_frac=bus / wire.beta - 1, off_Bps=off.busbw, off_size_bytes=off.bytes, gap_frac=bus / off.busbw - 1,
                     hosts=tuple(sorted({d.host for d in run.devices})),
                     rank_is_device=all(d.rank == d.device for d in run.devices),
                     algo=run.parameters.get("NCCL_ALGO") or run.parameters.get("algo"), nccl=run.nccl_version)
