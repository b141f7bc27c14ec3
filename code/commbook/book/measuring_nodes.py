"""The page "Measuring collectives", section "Across nodes": the numbers its prose quotes,
one typed result (:class:`Nodes`) glued whole by :func:`commbook.book.glue.glue_fields`,
read from :func:`.measuring_cluster.cluster_misses`, :func:`.measuring_cluster.racks` and
the accuracy table (:func:`.measuring_cluster.accuracy_table`) the page shows.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import measuring_cluster as MC
from .measuring import size_text

__all__ = ["Nodes", "node_numbers"]


@dataclass(frozen=True)
class Nodes:
    """NCCL's model on the multi-node logs: rank counts, where it holds (H100 with SHARP, the
    small sizes), and the lines t = α + n/β through the logs it misses."""
    a1_ranks: int                  # the ranks busbw/algbw gives the log named "a100x128"
    h_ranks: int
    gb2_ranks: int
    gb_gpus: int                   # GPUs of one NVL72 rack, one NCCL node
    h_nvls_bw_Bps: float           # channels × bwInter of NVLS on the H100 preset
    h_top_Bps: float
    h_med_frac: float
    h_worst_frac: float
    t_s_med_frac: float            # TCPXO below 1 MiB
    a_s_med_frac: float            # A100 with SHARP below 1 MiB
    t_over_s: float
    a_over_s: float
    t1_alpha_s: float              # TCPXO, 1 MiB to 16 MiB
    t1_beta_Bps: float
    t2_alpha_s: float              # TCPXO, 32 MiB up
    t2_beta_Bps: float
    t_worst_frac: float
    t1_hi_size: str
    a_lo_size: str                 # A100 with SHARP, its line from here
    a_alpha_s: float
    a_beta_Bps: float
    a_top_Bps: float
    a_pred_top_Bps: float
    a_med_frac: float
    g_release: str                 # the NCCL release of the GB200 file names
    g1_alpha_s: float              # one rack, the log's line
    g1_beta_Bps: float
    g1m_alpha_s: float             # ... and the model's
    g1m_beta_Bps: float
    g_lo_size: str                 # the GB200 logs' smallest size
    g20_alpha_s: float
    g20_beta_Bps: float
    g_n_size: str                  # the size the three racks are compared at
    g_model_Bps: float
    g1_top_Bps: float
    g20_top_Bps: float


def node_numbers(et) -> Nodes:
    """From the accuracy table ``et`` (its ``meta["comparisons"]`` holds every log's)."""
    comps = {k: v for k, v in et.meta["comparisons"].items() if k[0] in MC.LOGS}
    cm = MC.cluster_misses(comps)
    rk = MC.racks(comps)
    row = lambda s, band=">= 1 MiB": et.find(system=s, band=band)
    nv = MC.NC.graphs(cm["h100_sharp"]["cluster"])["nvls"]
    (t1, _), (t2, _) = cm["tcpxo"]["lines"]
    (a1, _), = cm["a100_sharp"]["lines"]
    (g1, g1m), = cm["gb1"]["lines"]
    (g20, _), = cm["gb20"]["lines"]
    return Nodes(
        a1_ranks=cm["a100_sharp"]["cluster"].nranks, h_ranks=cm["h100_sharp"]["cluster"].nranks,
        gb2_ranks=cm["gb2"]["cluster"].nranks, gb_gpus=cm["gb1"]["cluster"].gpus_per_node,
        h_nvls_bw_Bps=nv.n_channels * nv.bw_inter * 1e9, h_top_Bps=cm["h100_sharp"]["bus_top"],
        h_med_frac=row("h100_sharp")["model"], h_worst_frac=row("h100_sharp")["worst"],
        t_s_med_frac=row("tcpxo", "< 1 MiB")["model"], a_s_med_frac=row("a100_sharp", "< 1 MiB")["model"],
        t_over_s=row("tcpxo", "< 1 MiB")["overhead"], a_over_s=row("a100_sharp", "< 1 MiB")["overhead"],
        t1_alpha_s=t1["alpha"], t1_beta_Bps=t1["beta"], t2_alpha_s=t2["alpha"], t2_beta_Bps=t2["beta"],
        t_worst_frac=cm["tcpxo"]["worst"], t1_hi_size=size_text(t1["hi"]),
        a_lo_size=size_text(a1["lo"]), a_alpha_s=a1["alpha"], a_beta_Bps=a1["beta"],
        a_top_Bps=cm["a100_sharp"]["bus_top"], a_pred_top_Bps=cm["a100_sharp"]["pred_top"],
        a_med_frac=row("a100_sharp")["model"], g_release=cm["gb1"]["release"],
        g1_alpha_s=g1["alpha"], g1_beta_Bps=g1["beta"], g1m_alpha_s=g1m["alpha"], g1m_beta_Bps=g1m["beta"],
        g_lo_size=size_text(min(comps[(g, "all_reduce")].sizes.min() for g in ("gb1", "gb2", "gb20"))),
        g20_alpha_s=g20["alpha"], g20_beta_Bps=g20["beta"], g_n_size=size_text(rk["n"]),
        g_model_Bps=list(rk["model"].values())[0], g1_top_Bps=rk["measured"]["gb1"],
        g20_top_Bps=rk["measured"]["gb20"])
