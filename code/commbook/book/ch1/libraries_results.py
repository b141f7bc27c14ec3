"""Chapter §1.7, the numbers its prose quotes, one typed result per section: every field
carries its unit in its name (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``, ``_bin`` (a
binary size as text), ``_times`` (a plain multiple, written without ×); counts are ints),
so the page glues a result whole with :func:`commbook.book.glue.glue_fields`.

Each function reads what :mod:`.libraries` and :mod:`.libraries_protocols` build for the
tables (or :mod:`commbook.measure.nccl_model` itself) and derives here what the page used
to work out by hand.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...measure import nccl_model as M
from ...units import fmt_bytes
from . import libraries as L
from . import libraries_protocols as LP

__all__ = ["Intro", "intro_numbers", "Protocols", "protocol_numbers", "Picks", "pick_numbers", "Flat",
           "flat_numbers", "Mpi", "mpi_numbers", "Diagnosis", "diagnosis_numbers"]


def _bin(n: float) -> str:
    return fmt_bytes(n, binary=True)


@dataclass(frozen=True)
class Intro:
    n_axes: int
    n_libs: int
    nic_count: int
    nic_bw_Bps: float
    nic_node_Bps: float
    nic_x: float
    t5_rows: int              # Table 5, and its NCCL rows
    t5_nccl: int


def intro_numbers() -> Intro:
    nic, t5 = L.nic_ceiling(), L.table5()
    return Intro(n_axes=len(L.AXES), n_libs=len(L.LIBRARY_AXES), nic_count=nic.nics, nic_bw_Bps=nic.per_nic_Bps,
                 nic_node_Bps=nic.node_Bps, nic_x=nic.x, t5_rows=len(t5), t5_nccl=t5.meta["nccl_rows"])


# ============================================================================ protocols
@dataclass(frozen=True)
class Protocols:
    """LL, LL128 and Simple: their line layouts, ceilings on NVLink 4.0, ring latencies on
    the table's node, and the tuning constants behind the H100 rows."""
    ll_line: int
    ll_flag: int
    ll_share_frac: float
    ll128_line: int
    ll128_data: int
    ll128_flag: int
    ll128_share_frac: float
    nv4_Bps: float
    ll_nv4_Bps: float
    ll128_nv4_Bps: float
    p: int
    lat_ll_s: float
    lat_ll128_s: float
    lat_simple_s: float
    lat_x: float              # Simple's ring latency over LL's
    version: str
    f_ll: float
    f_ll128: float
    ring_ch: int
    ring_bw_Bps: float        # per channel
    llmax_Bps: float
    bus_simple_Bps: float


def protocol_numbers(prot) -> Protocols:
    """From :func:`.libraries.protocol_table`."""
    P = L.PROTOCOLS
    ll, ll128, simple = P["LL"], P["LL128"], P["Simple"]
    nv4, p = prot.meta["nv4"], prot.meta["p"]
    ring_ch, ring_bw = M.graphs(M.H100_8).ring
    return Protocols(ll_line=ll.line, ll_flag=ll.flag, ll_share_frac=float(ll.share), ll128_line=ll128.line,
                     ll128_data=ll128.payload, ll128_flag=ll128.flag, ll128_share_frac=float(ll128.share), nv4_Bps=nv4,
                     ll_nv4_Bps=ll.ceiling(nv4), ll128_nv4_Bps=ll128.ceiling(nv4), p=p, lat_ll_s=ll.ring_latency(p),
                     lat_ll128_s=ll128.ring_latency(p), lat_simple_s=simple.ring_latency(p),
                     lat_x=simple.ring_latency(p) / ll.ring_latency(p), version=L.NCCL_TUNING_VERSION,
                     f_ll=ll.bw_factor, f_ll128=ll128.bw_factor, ring_ch=ring_ch, ring_bw_Bps=ring_bw * 1e9,
                     llmax_Bps=prot.find(proto="LL")["model"], bus_simple_Bps=prot.find(proto="Simple")["model"])


@dataclass(frozen=True)
class Picks:
    """Where NCCL's pick changes on each node (:func:`.libraries_protocols.switches`), the
    NVLS entry of its model, and the channel rule."""
    nvls_bytes: float
    nvls_lat_s: float
    nvls_bus_Bps: float
    ll128_bytes: float        # 8×H100 without NVLS
    simple_bytes: float
    a_ll128_bytes: float      # 8×A100
    a_simple_bytes: float
    a_llmax_Bps: float
    ch_per_bin: str
    ch_n: int
    ch_full_bin: str


def pick_numbers() -> Picks:
    sw = {key: LP.switches(node) for key, node in LP.NODES.items()}
    h100 = {(s["algo"], s["proto"]): s for s in sw["h100"]}
    no_nvls = {s["proto"]: s for s in sw["h100_no_nvls"]}
    a100 = {s["proto"]: s for s in sw["a100"]}
    nvls = M.table(M.H100_8, "all_reduce")[("nvls", "Simple")]
    p = M.H100_8.ngpus
    rule = LP.channel_rule(M.H100_8, "LL")
    return Picks(nvls_bytes=h100[("nvls", "Simple")]["start"], nvls_lat_s=nvls.latency,
                 nvls_bus_Bps=nvls.bandwidth * 2 * (p - 1) / p, ll128_bytes=no_nvls["LL128"]["start"],
                 simple_bytes=no_nvls["Simple"]["start"], a_ll128_bytes=a100["LL128"]["start"],
                 a_simple_bytes=a100["Simple"]["start"], a_llmax_Bps=LP.ring_busbw(M.A100_8, "LL"),
                 ch_per_bin=_bin(rule["per_channel"]), ch_n=rule["channels"], ch_full_bin=_bin(rule["full"]))


# ============================================================================ the A100 log
@dataclass(frozen=True)
class Flat:
    """The flat stretch of the A100 log (:func:`.libraries.flat_region`), the fit below it,
    and the protocol ceilings it rules out."""
    p: int
    cols: int
    lo_bin: str
    hi_bin: str
    x_times: float
    tmin_s: float
    tmax_s: float
    bus_lo_Bps: float
    bus_hi_Bps: float
    small_lo_bin: str
    small_hi_bin: str
    alpha_s: float
    beta_Bps: float
    rms_frac: float
    beta_share_frac: float
    pred_hi_s: float
    pred_x: float
    nv3_Bps: float
    ll_cap_Bps: float
    ll128_cap_Bps: float
    not_ll_bin: str
    not_ll_bus_Bps: float
    max_bus_Bps: float
    max_share_frac: float
    model_bus_Bps: float
    model_gap_frac: float


def flat_numbers(fr: dict) -> Flat:
    i, j = fr["flat"]
    n, t, bus, b, k = fr["sizes"], fr["times"], fr["busbw"], fr["below"], fr["first_not_ll"]
    return Flat(p=fr["p"], cols=len(fr["run"].columns), lo_bin=_bin(n[i]), hi_bin=_bin(n[j]), x_times=n[j] / n[i],
                tmin_s=t[i:j + 1].min(), tmax_s=t[i:j + 1].max(), bus_lo_Bps=bus[i], bus_hi_Bps=bus[j],
                small_lo_bin=_bin(n[0]), small_hi_bin=_bin(n[i - 1]), alpha_s=b.alpha, beta_Bps=b.beta,
                rms_frac=b.rms_rel, beta_share_frac=b.beta / fr["beta"], pred_hi_s=fr["pred"][j],
                pred_x=fr["pred"][j] / t[j], nv3_Bps=fr["beta"], ll_cap_Bps=fr["ll_cap"], ll128_cap_Bps=fr["ll128_cap"],
                not_ll_bin=_bin(n[k]), not_ll_bus_Bps=bus[k], max_bus_Bps=fr["max_busbw"],
                max_share_frac=fr["max_busbw"] / fr["beta"], model_bus_Bps=LP.A100_RING_BUSBW,
                model_gap_frac=LP.A100_RING_BUSBW / fr["max_busbw"] - 1)


# ============================================================================ MPI, diagnosis
@dataclass(frozen=True)
class Mpi:
    v1: str
    v2: str
    v3: str
    v4: str
    d1: str
    d2: str
    d3: str
    d4: str
    cite: str                 # years, as written
    y1: str


def mpi_numbers(lang: str) -> Mpi:
    """The MPI versions and their release dates written in ``lang``."""
    v = L.MPI_VERSIONS
    names = [f"MPI-{x.version}" for x in v]
    dates = [L.date_text(x.released, lang) for x in v]
    return Mpi(*names, *dates, cite=str(L.CHAPTER_MPI_CITATION_YEAR), y1=str(v[0].released.year))


@dataclass(frozen=True)
class Diagnosis:
    """A traced all-reduce against its baseline (:func:`.libraries.diagnosis`), far and close."""
    n_bin: str
    traced_s: float
    base_s: float
    ratio_x: float
    excess_s: float
    bus_base_Bps: float
    bus_traced_Bps: float
    share_frac: float
    q_traced_s: float
    q_ratio_x: float
    q_excess_s: float


def diagnosis_numbers(dg: dict, dq: dict) -> Diagnosis:
    return Diagnosis(n_bin=_bin(dg["n"]), traced_s=dg["traced"], base_s=dg["baseline"], ratio_x=dg["ratio"],
                     excess_s=dg["excess"], bus_base_Bps=dg["bus_base"], bus_traced_Bps=dg["bus_traced"],
                     share_frac=dg["base_share"], q_traced_s=dq["traced"], q_ratio_x=dq["ratio"], q_excess_s=dq["excess"])
