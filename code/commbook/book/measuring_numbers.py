"""The page "Measuring collectives", the numbers its prose quotes: one typed result per
section, each field named with its unit (``_s``, ``_Bps``, ``_x``, ``_frac``; ``_size`` is a
size as the tables print it, ``_range`` a "lo–hi" span as text), glued whole by
:func:`commbook.book.glue.glue_fields`.  Each builder reads the tables and comparisons of
:mod:`.measuring`, :mod:`.measuring_models` and :mod:`.measuring_cluster` (which the tables
and figures share) and derives here what the page used to work out by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..measure.nccl_model import TARGETS, WORST_TARGET
from ..units import fmt_pct
from . import measuring as M
from . import measuring_cluster as MC
from . import measuring_models as MM
from .glue import glue_fields
from .p5.common import span

__all__ = ["glue3", "Accuracy", "accuracy_numbers", "Nodes", "node_numbers"]

BIG, SMALL = ">= 1 MiB", "< 1 MiB"


def glue3(prefix: str, result, **how: int) -> None:
    """:func:`~commbook.book.glue.glue_fields` with the times and rates of ``result`` to 3
    significant digits, as the page's tables print them, then ``how`` (field=digits) over it."""
    glue_fields(prefix, result, **{**{f.name: 3 for f in fields(result) if f.name.endswith(("_s", "_Bps"))}, **how})


# ============================================================================ model vs measurement
@dataclass(frozen=True)
class Accuracy:
    """The accuracy table's rows the prose quotes (medians of |error| by band), the targets,
    and the A100 log's line from 16 to 256 MiB against NCCL's ring Simple latency."""
    tgt_big_frac: float
    tgt_small_frac: float
    tgt_worst_frac: float
    logs: int
    release: str
    h_pred_range: str              # 8×H100, ≥ 1 MiB, its three collectives
    h_fit_range: str
    az_s_pred_frac: float
    az_s_fit_frac: float
    az_s_nccl_frac: float
    az_b_pred_frac: float
    az_b_fit_frac: float
    az_over_s: float
    a1_b_pred_frac: float
    a1_s_pred_frac: float
    a1_b_fit_frac: float
    a1_s_fit_frac: float
    a1_lo_size: str
    a1_hi_size: str
    a1_alpha_s: float
    a1_lat_s: float
    a1_over_lat: float             # the line's start-up over NCCL's latency


def accuracy_numbers(et) -> Accuracy:
    """From :func:`.measuring_cluster.accuracy_table` and :func:`.measuring_models.simple_miss`."""
    row = lambda s, band, op="all_reduce": et.find(system=s, collective=op, band=band)
    h = [row("h100", BIG, op) for op in ("all_reduce", "all_gather", "reduce_scatter")]
    az_b, az_s, a1_b, a1_s = row("azure", BIG), row("azure", SMALL), row("a100", BIG), row("a100", SMALL)
    sm = MM.simple_miss()
    return Accuracy(
        tgt_big_frac=TARGETS[BIG], tgt_small_frac=TARGETS[SMALL], tgt_worst_frac=WORST_TARGET,
        logs=len({r["log"] for r in et.rows}), release=MM.NCCL_RELEASE,
        h_pred_range=span([r["model_frac"] for r in h], fmt_pct), h_fit_range=span([r["fit_frac"] for r in h], fmt_pct),
        az_s_pred_frac=az_s["model_frac"], az_s_fit_frac=az_s["fit_frac"], az_s_nccl_frac=az_s["nccl_frac"],
        az_b_pred_frac=az_b["model_frac"], az_b_fit_frac=az_b["fit_frac"], az_over_s=az_s["overhead_s"],
        a1_b_pred_frac=a1_b["model_frac"], a1_s_pred_frac=a1_s["model_frac"], a1_b_fit_frac=a1_b["fit_frac"],
        a1_s_fit_frac=a1_s["fit_frac"], a1_lo_size=M.size_text(MM.SIMPLE_BAND[0]),
        a1_hi_size=M.size_text(MM.SIMPLE_BAND[1]), a1_alpha_s=sm.alpha_s, a1_lat_s=sm.nccl_lat_s,
        a1_over_lat=sm.over_lat_x)


# ============================================================================ across nodes
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
    """From the accuracy table ``et``, the multi-node comparisons and their lines."""
    ar = lambda s: MC.cluster_comparisons()[(s, "all_reduce")]
    row = lambda s, band=">= 1 MiB": et.find(system=s, band=band)
    lines = MC.cluster_lines()
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
        h_med_frac=row("h100_sharp")["model_frac"], h_worst_frac=row("h100_sharp")["worst_frac"],
        t_s_med_frac=row("tcpxo", "< 1 MiB")["model_frac"], a_s_med_frac=row("a100_sharp", "< 1 MiB")["model_frac"],
        t_over_s=row("tcpxo", "< 1 MiB")["overhead_s"], a_over_s=row("a100_sharp", "< 1 MiB")["overhead_s"],
        t1_alpha_s=t1.alpha, t1_beta_Bps=t1.beta, t2_alpha_s=t2.alpha, t2_beta_Bps=t2.beta,
        t_worst_frac=row("tcpxo")["worst_frac"], t1_hi_size=M.size_text(t1.sizes.max()),
        a_lo_size=M.size_text(a1.sizes.min()), a_alpha_s=a1.alpha, a_beta_Bps=a1.beta,
        a_top_Bps=float(ar("a100_sharp").measured[-1]), a_pred_top_Bps=float(ar("a100_sharp").prediction.busbw[-1]),
        a_med_frac=row("a100_sharp")["model_frac"], g_release=MC.log_release("gb1"),
        g1_alpha_s=g1.alpha, g1_beta_Bps=g1.beta, g1m_alpha_s=g1m.alpha, g1m_beta_Bps=g1m.beta,
        g_lo_size=M.size_text(min(c.sizes.min() for c in gb)), g20_alpha_s=g20.alpha, g20_beta_Bps=g20.beta,
        g_n_size=M.size_text(n), g_model_Bps=at_n(gb[0], gb[0].prediction.busbw),
        g1_top_Bps=at_n(gb[0], gb[0].measured), g20_top_Bps=at_n(gb[2], gb[2].measured))
