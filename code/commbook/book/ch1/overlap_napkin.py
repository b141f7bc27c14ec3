"""Chapter §1.8: Napkin math 1.8 (:func:`nm18`, :func:`nm18_check`, :func:`nm18_table`) of
``chapters/{zh,en}/ch1/08-overlap.md``, whose cells also run the single-node 70B check
(:func:`commbook.overlap.single_node_check`); the chapter's printed values are kept apart
(``CHAPTER_*``).  Results name their units as in :mod:`.overlap_numbers` (``_ms``: a plain
number of milliseconds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...collectives import t_allreduce_hierarchical, t_formula
from ...overlap import layerwise_timeline
from ...hardware import Link
from ...units import MB, fmt_bytes, fmt_pct, fmt_time, ms
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS
from .overlap_numbers import in_flight

__all__ = ["NM18", "CHAPTER_NM18", "Nm18Run", "nm18", "Nm18Check", "nm18_check", "nm18_table",
           "CHAPTER_SINGLE_NODE"]

T = texts("ch1")
K = "overlap_numbers."
_tx = T.under(K)       # the entries of the section (ch1.toml, under overlap_numbers.)
_txs = _tx.pairs


# ============================================================================ Napkin math 1.8
NM18 = {"layers": 32, "params": 7e9, "bytes_per_value": 4, "nodes": 8, "gpus_per_node": 8,
        "backward": 15 * ms, "allreduce": 26.4 * ms, "bucket": 100 * MB}
"""Napkin math 1.8: 32 layers, 7B parameters, FP32 gradients, 64 GPUs (8 × 8), 15 ms of
backward per layer, 26.4 ms per layer's hierarchical all-reduce (given), 100 MB buckets."""
CHAPTER_NM18 = {"sequential": (1324.8 * ms, 1), "pipelined": (859.8 * ms, 1), "saving": (35.1, 1),
                "layer_bytes": (880 * MB, -1)}
"""The box's printed results: value and decimals (ms, %; −1: rounded to tens of MB)."""


@dataclass(frozen=True)
class Nm18Run:
    """:func:`nm18`: the bytes per layer, the backward pass, both step times,
    the exposed all-reduce per layer, the stall, the saving, the share hidden, and the
    all-reduces still in flight when the backward pass ends."""
    layer_bytes: float
    backward_total_s: float
    sequential_s: float
    pipelined_s: float
    exposed_per_layer_s: float
    stall_s: float
    saving_frac: float
    hidden_frac: float
    in_flight: int


def nm18(allreduce: float | None = None) -> Nm18Run:
    """Napkin math 1.8 as two timelines (one run per per-layer all-reduce: the table runs
    three; the page's cell quotes the given one)."""
    c = NM18
    L, b = c["layers"], c["backward"]
    a = c["allreduce"] if allreduce is None else allreduce
    seq = layerwise_timeline([b] * L, [a] * L, overlap=False)
    pipe = layerwise_timeline([b] * L, [a] * L)
    return Nm18Run(c["params"] / L * c["bytes_per_value"], L * b, seq.step_time, pipe.step_time, max(a - b, 0.0),
                   pipe.stall, 1 - pipe.step_time / seq.step_time, pipe.hidden_fraction, in_flight(pipe, L * b))


@dataclass(frozen=True)
class Nm18Check:
    """:func:`nm18_check`: the layer's bytes, one all-reduce of them, the buckets and their
    sizes, the bucketed time, the bandwidth terms alone, a flat ring, the two links, and
    the given all-reduce over the hierarchical one."""
    n_bytes: float
    one_s: float
    buckets: int
    pieces: list
    bucketed_s: float
    bandwidth_only_s: float
    flat_s: float
    intra: Link
    inter: Link
    ratio_x: float


def nm18_check() -> Nm18Check:
    """The per-layer all-reduce of Napkin math 1.8 from the hierarchical model (8 × 8, NVLink
    4.0 inside the nodes, InfiniBand NDR between them): one all-reduce of the layer's bytes,
    the same in 100 MB buckets, the bandwidth terms alone, and a flat ring over InfiniBand."""
    c = NM18
    n = c["params"] / c["layers"] * c["bytes_per_value"]
    nvl, ib = BOX_LINKS["nm1.8-nvl"], BOX_LINKS["nm1.8"]
    hier = lambda x: t_allreduce_hierarchical(c["nodes"], c["gpus_per_node"], x, nvl, ib)
    k = math.ceil(n / c["bucket"])
    pieces = [c["bucket"]] * (k - 1) + [n - (k - 1) * c["bucket"]]
    g, m = c["gpus_per_node"], c["nodes"]
    bw_only = 2 * (g - 1) / g * n / nvl.beta + 2 * (m - 1) / m * (n / g) / ib.beta
    return Nm18Check(n, hier(n), k, pieces, sum(hier(x) for x in pieces), bw_only,
                     t_formula("ring", m * g, n, ib.alpha, ib.beta), nvl, ib, c["allreduce"] / hier(n))


def nm18_table() -> Table:
    """Napkin math 1.8 for three per-layer all-reduces: the given one, the hierarchical
    model's (100 MB buckets) and a flat ring's."""
    chk = nm18_check()
    variants = [("given", NM18["allreduce"]), ("hierarchical", chk.bucketed_s), ("flat", chk.flat_s)]
    rows = []
    for key, a in variants:
        r = nm18(a)
        rows.append({"variant": key, "allreduce": a, "sequential": r.sequential_s, "pipelined": r.pipelined_s,
                     "saving": r.saving_frac, "hidden": r.hidden_frac, "in_flight": r.in_flight})
    t_ms = lambda v: f"{v / ms:,.1f} ms"
    gb = fmt_bytes(chk.n_bytes, digits=3)
    return Table(
        key="ch1-nm18",
        title=_tx("napkin_math_1_8"),
        columns=["variant", "allreduce", "sequential", "pipelined", "saving", "hidden", "in_flight"],
        headers=_txs("per_layer_all_reduce", "time", "sequential", "pipelined", "saved", "comm_hidden", "still_in_flight_when"),
        rows=rows,
        formats={"allreduce": t_ms, "sequential": t_ms, "pipelined": t_ms, "saving": fmt_pct,
                 "hidden": fmt_pct, "in_flight": lambda v: f"{v}"},
        labels={lang: {k: T.get(K + "nm18_" + k, lang, buckets=chk.buckets) for k in ("given", "hierarchical", "flat")}
                for lang in ("en", "zh")},
        notes=_txs("layers_of_backward_and", layers=NM18['layers'], backward=fmt_time(NM18['backward'], 3), gb=gb, nodes=NM18['nodes'], gpus_per_node=NM18['gpus_per_node'], alpha=fmt_time(chk.intra.alpha, 3), beta=chk.intra.beta / 1e9, alpha2=fmt_time(chk.inter.alpha, 3), beta2=chk.inter.beta / 1e9, bucket=fmt_bytes(NM18['bucket'])),
    )


# ============================================================================ single node
CHAPTER_SINGLE_NODE = {"time": (0.54, 2), "share": (26, 0)}
"""The printed results: ≈ 0.54 s, ≈ 26 % of a 2.1 s step."""
