"""The page "Measuring collectives", section "Across nodes": the numbers its prose quotes,
one typed result (:class:`Nodes`) glued whole by :func:`commbook.book.glue.glue_fields`,
read from the comparisons and the accuracy table (:func:`.measuring_cluster.accuracy_table`)
the page shows and the lines of :func:`.measuring_cluster.cluster_lines`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    comps = et.meta["comparisons"]
    ar = lambda s: comps[(s, "all_reduce")]
    row = lambda s, band=">= 1 MiB": et.find(system=s, band=band)
    lines = MC.cluster_lines(comps)
    nv = MC.NC.graphs(MC.CLUSTERS["h100_sharp"])["nvls"]
    (t1, _), (t2, _) = lines["tcpxo"]
    (a1, _), = lines["a100_sharp"]
    (g1, g1m), = lines["gb1"]
    (g20, _), = lines["gb20"]
    gb = [ar(s) for s in ("gb1", "gb2", "gb20")]
    n = max(set.intersection(*(set(c.sizes.tolist()) for c in gb)))     # the racks' largest common size
    at_n = lambda c, y: float(y[np.nonzero(c.sizes == n)[0][0]])
    return Nodes(
        a1_ranks=MC.CLUSTERS["a100_sharp"].nranks, h_ranks=MC.CLUSTERS["h100_sharp"].nranks,
        gb2_ranks=MC.CLUSTERS["gb2"].nranks, gb_gpus=MC.CLUSTERS["gb1"].gpus_per_node,
        h_nvls_bw_Bps=nv.n_channels * nv.bw_inter * 1e9, h_top_Bps=float(ar("h100_sharp").measured[-1]),
        h_med_frac=row("h100_sharp")["model"], h_worst_frac=row("h100_sharp")["worst"],
        t_s_med_frac=row("tcpxo", "< 1 MiB")["model"], a_s_med_frac=row("a100_sharp", "< 1 MiB")["model"],
        t_over_s=row("tcpxo", "< 1 MiB")["overhead"], a_over_s=row("a100_sharp", "< 1 MiB")["overhead"],
        t1_alpha_s=t1.alpha, t1_beta_Bps=t1.beta, t2_alpha_s=t2.alpha, t2_beta_Bps=t2.beta,
        t_worst_frac=row("tcpxo")["worst"], t1_hi_size=size_text(t1.sizes.max()),
        a_lo_size=size_text(a1.sizes.min()), a_alpha_s=a1.alpha, a_beta_Bps=a1.beta,
        a_top_Bps=float(ar("a100_sharp").measured[-1]), a_pred_top_Bps=float(ar("a100_sharp").prediction.busbw[-1]),
        a_med_frac=row("a100_sharp")["model"], g_release=MC.log_release("gb1"),
        g1_alpha_s=g1.alpha, g1_beta_Bps=g1.beta, g1m_alpha_s=g1m.alpha, g1m_beta_Bps=g1m.beta,
        g_lo_size=size_text(min(c.sizes.min() for c in gb)), g20_alpha_s=g20.alpha, g20_beta_Bps=g20.beta,
        g_n_size=size_text(n), g_model_Bps=at_n(gb[0], gb[0].prediction.busbw),
        g1_top_Bps=at_n(gb[0], gb[0].measured), g20_top_Bps=at_n(gb[2], gb[2].measured))
