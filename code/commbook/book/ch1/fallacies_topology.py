"""Chapter §1.9, fallacies and pitfalls, items 9–12 of ``chapters/{zh,en}/ch1/09-fallacies.md``:
(9) flat against hierarchical, :func:`flat_hier_table` and :func:`nic_load`; (10) one crossbar
hop inside a node, :func:`intra_node_table`; (11) rank placement, :func:`placement`; (12) a real
log without its algorithm, :data:`CONTEXT_LOG` (the page reads it).
Simulated where the item is about a schedule on a topology; each builder returns one typed
result (fields named with their units, as in :mod:`.fallacies`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import collectives as coll
from ...collectives import t_allreduce_hierarchical, t_formula
from ...comm_sim import VirtualCluster
from ...cost import p2p_time
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER
from ...topology import TwoLevel
from ...units import GB, MB, fmt_bytes, fmt_ratio, fmt_time
from ..names import display_name
from ..tables import Table
from ..text import texts
from .boxes import link_name
from .fallacies import CHAPTER

__all__ = ["FLAT", "flat_hier_table", "FlatHier", "nic_load", "nic_table", "INTRA",
           "intra_node_table", "PLACEMENT", "placement_ranks", "Placement", "placement", "placement_table",
           "CONTEXT_LOG", "SHARP_OFF"]

T = texts("ch1")
K = "fallacies."
_tx = T.under(K)
_txs = _tx.pairs
_tt = T.under("fallacies_tables.")     # the entries of the item tables
_t3 = lambda t: fmt_time(t, 3)
_x = fmt_ratio


# ============================================================================ 9 flat against hierarchical
FLAT = {"nodes": (8, 16, 64, 128), "gpn": 8, "sizes": (25 * MB, 1 * GB),
        "intra": NVLINK4_CHAPTER, "inter": IB_NDR_CHAPTER}
"""Clusters of 8-GPU nodes, a 25 MB bucket and a 1 GB gradient, Table 1's links."""


def flat_hier_table(nodes=FLAT["nodes"], gpn: int = FLAT["gpn"], sizes=FLAT["sizes"],
                    intra=FLAT["intra"], inter=FLAT["inter"]) -> Table:
    """Flat ring (on ``inter``) against hierarchical all-reduce, per cluster size and size."""
    rows = []
    for N in nodes:
        row = {"nodes": N, "gpus": N * gpn}
        for k, n in enumerate(sizes):
            f = t_formula("ring", N * gpn, n, inter.alpha, inter.beta)
            h = t_allreduce_hierarchical(N, gpn, n, intra, inter)
            row.update({f"flat{k}": f, f"hier{k}": h, f"x{k}": f / h})
        rows.append(row)
    cols = [c for k in range(len(sizes)) for c in (f"flat{k}", f"hier{k}", f"x{k}")]
    heads = {lang: [h for n in sizes for h in (T.get(K + "fh_flat", lang, n=fmt_bytes(n)),
                                                T.get(K + "fh_hier", lang, n=fmt_bytes(n)), T.get(K + "fh_ratio", lang))]
             for lang in ("en", "zh")}
    return Table(
        key="ch1-fall-flat",
        title=_tx("flat_ring_against_hierarchical", gpn=gpn),
        columns=["nodes", "gpus", *cols],
        headers={lang: [*_txs("fh_nodes", "fh_gpus")[lang], *heads[lang]] for lang in ("en", "zh")},
        rows=rows, formats={c: (_x if c.startswith("x") else _t3) for c in cols},
        notes=_txs("closed_forms_links_and", intra=link_name(intra, 'en'), inter=link_name(inter, 'en'), intra2=link_name(intra, 'zh'), inter2=link_name(inter, 'zh')),
    )


@dataclass(frozen=True)
class FlatHier:
    """Simulated single flat ring, hierarchical all-reduce and NCCL's ring (one channel per
    NIC, PXN) on a TwoLevel cluster: times, the busiest NIC's and all NICs' bytes out
    (``*_nic_bytes``, ``*_total_bytes``); the first two again with one NIC per node
    (``*_one_s``); and what the chapter says of them (``ch_``)."""
    nodes: int
    gpn: int
    idle: int                 # NICs idle under a leader
    n_bytes: float
    ch_cut: float             # the chapter's "8×" traffic cut
    ch_speedup: float
    ch_nvl_Bps: float
    nvl_Bps: float
    ib_Bps: float
    ring_s: float
    hier_s: float
    nccl_s: float
    ring_one_s: float
    hier_one_s: float
    nic_flat_bytes: float     # the busiest NIC's bytes under each
    hier_nic_bytes: float
    nccl_nic_bytes: float
    ring_total_bytes: float   # all NICs' bytes
    hier_total_bytes: float
    nccl_total_bytes: float
    speedup_x: float          # flat ring over the hierarchy
    nic_times: float          # busiest NIC, ring over hierarchy
    one_nic_x: float
    nccl_x: float             # the hierarchy over NCCL's ring


def nic_load(nodes: int = 8, gpn: int = 8, n: float = 1 * GB, intra=FLAT["intra"], inter=FLAT["inter"]) -> FlatHier:
    """The three all-reduces on ``nodes`` × ``gpn`` GPUs, simulated.

    >>> nic_load().idle
    7
    """
    t, nic = {}, {}
    for nics, tag, algos in ((gpn, "", ("ring", "hier", "nccl")), (1, "_one", ("ring", "hier"))):
        for algo in algos:
            c = VirtualCluster(TwoLevel(nodes, gpn, intra, inter, nics_per_node=nics, pxn=algo == "nccl"))
            how = {"ring": {"channels": 1}, "hier": {"algorithm": "hierarchical"}, "nccl": {"algorithm": "ring"}}[algo]
            r = coll.all_reduce(c, nbytes=n, **how)
            t[algo + tag] = r.time
            if not tag:
                nic[algo] = np.array([b for name, b in zip(r.link_names, r.link_bytes)
                                      if ".nic" in name and name.endswith(".out")])
    mx, tot = {a: float(v.max()) for a, v in nic.items()}, {a: float(v.sum()) for a, v in nic.items()}
    return FlatHier(nodes=nodes, gpn=gpn, idle=gpn - 1, n_bytes=n, ch_cut=CHAPTER["flat_traffic_cut"],
                    ch_speedup=CHAPTER["flat_speedup"], ch_nvl_Bps=CHAPTER["nvlink_bidirectional"],
                    nvl_Bps=intra.beta, ib_Bps=inter.beta, ring_s=t["ring"], hier_s=t["hier"], nccl_s=t["nccl"],
                    ring_one_s=t["ring_one"], hier_one_s=t["hier_one"], nic_flat_bytes=mx["ring"],
                    hier_nic_bytes=mx["hier"], nccl_nic_bytes=mx["nccl"], ring_total_bytes=tot["ring"],
                    hier_total_bytes=tot["hier"], nccl_total_bytes=tot["nccl"], speedup_x=t["ring"] / t["hier"],
                    nic_times=mx["ring"] / mx["hier"], one_nic_x=t["ring_one"] / t["hier_one"],
                    nccl_x=t["hier"] / t["nccl"])


def nic_table(nl: FlatHier | None = None) -> Table:
    """The simulated runs of :func:`nic_load`, NIC by NIC."""
    nl = nic_load() if nl is None else nl
    runs = {"ring": ("ring", "nic_flat"), "hierarchical": ("hier", "hier_nic"), "nccl": ("nccl", "nccl_nic")}
    rows = [{"algo": a, "time": getattr(nl, f"{k}_s"), "nic_max": getattr(nl, f"{m}_bytes"),
             "nic_total": getattr(nl, f"{k}_total_bytes"), "per_node": getattr(nl, f"{k}_total_bytes") / nl.nodes}
            for a, (k, m) in runs.items()]
    return Table(
        key="ch1-fall-nics",
        title=_tt("all_reduce_of_on", n=fmt_bytes(nl.n_bytes), nodes=nl.nodes, gpn=nl.gpn),
        columns=["algo", "time", "nic_max", "nic_total", "per_node"],
        headers=_tt.pairs("blank_3", "time_2", "busiest_nic_sends", "all_nics_send", "per_node"),
        rows=rows, formats={"time": _t3, "nic_max": fmt_bytes, "nic_total": fmt_bytes, "per_node": fmt_bytes},
        labels={lang: {k: T.get("fallacies_tables.labels." + k, lang) for k in runs} for lang in ("en", "zh")},
        notes=_tt.pairs("simulated_twolevel_one_nic", one=fmt_ratio(nl.one_nic_x)), meta=nl)


# ============================================================================ 10 inside one node
INTRA = {"p": 8, "sizes": (1 * MB, 1 * GB), "link": NVLINK4_CHAPTER,
         "algorithms": ("innet", "two_shot", "ring", "tree")}
"""One node of 8 GPUs on NVLink 4.0 (Table 1); the one-hop model is the switch reduction."""


def intra_node_table(p: int = INTRA["p"], sizes=INTRA["sizes"], link=INTRA["link"],
                     algorithms=INTRA["algorithms"]) -> Table:
    """Each algorithm's closed form at each size, and its ratio to the one-hop α + n/β."""
    rows = []
    for a in algorithms:
        t = [t_formula(a, p, n, link.alpha, link.beta) for n in sizes]
        rows.append({"algo": a, **{f"t{k}": x for k, x in enumerate(t)},
                     **{f"x{k}": x / p2p_time(n, link.alpha, link.beta) for k, (x, n) in enumerate(zip(t, sizes))}})
    cols = [c for k in range(len(sizes)) for c in (f"t{k}", f"x{k}")]
    hop = _tx("one_crossbar_hop_n")
    return Table(
        key="ch1-fall-intra",
        title=_tx("all_reduce_inside_one", p=p, link=link_name(link, 'en'), link2=link_name(link, 'zh')),
        columns=["algo", *cols],
        headers={lang: [T.get(K + "ix_model", lang), *[h for n in sizes for h in (fmt_bytes(n), T.get(K + "ix_hop", lang))]]
                 for lang in ("en", "zh")},
        rows=rows, formats={c: (_x if c.startswith("x") else _t3) for c in cols},
        labels={lang: {a: hop[lang] if a == "innet" else display_name("all_reduce", a, lang) for a in algorithms}
                for lang in ("en", "zh")},
    )


# ============================================================================ 11 rank placement
PLACEMENT = {"nodes": 4, "gpn": 8, "n": 1 * GB, "intra": NVLINK4_CHAPTER, "inter": IB_NDR_CHAPTER,
             "clusters": (("rails", {}), ("nic2", {"nics_per_node": 4}), ("nic4", {"nics_per_node": 2}),
                          ("spine2", {"spine_oversubscription": 2}))}
"""Four 8-GPU nodes: one NIC per GPU, two or four GPUs per NIC, a 2:1 spine."""


def placement_ranks(nodes: int, gpn: int) -> dict[str, np.ndarray | None]:
    """Ring orders: ``block`` (ranks 0..G-1 on node 0, …), ``round_robin`` (rank r on node
    r mod N) and ``snake`` (odd nodes visited backwards, so node-crossing hops keep their rail)."""
    return {"block": None, "round_robin": np.arange(nodes * gpn).reshape(nodes, gpn).T.ravel(),
            "snake": np.concatenate([np.arange(gpn)[::(-1) ** a] + a * gpn for a in range(nodes)])}


@dataclass(frozen=True)
class Placement:
    """A flat ring's time per cluster and placement (``times``: cluster → order → s), and
    what the page quotes: the spread (slowest over fastest) with 2 and 4 GPUs per NIC, the
    2:1 spine's block and snake times, against the chapter's "50–60 %"."""
    times: dict
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


def placement(nodes: int = PLACEMENT["nodes"], gpn: int = PLACEMENT["gpn"], n: float = PLACEMENT["n"],
              intra=PLACEMENT["intra"], inter=PLACEMENT["inter"], clusters=PLACEMENT["clusters"]) -> Placement:
    """Simulated flat ring all-reduce per cluster of ``clusters`` and order of :func:`placement_ranks`.

    >>> placement().k4
    4
    """
    times = {}
    for key, kw in clusters:
        c = VirtualCluster(TwoLevel(nodes, gpn, intra, inter, **kw))
        times[key] = {k: coll.all_reduce(c, nbytes=n, ranks=r, channels=1).time
                      for k, r in placement_ranks(nodes, gpn).items()}
    x = {k: max(t.values()) / min(t.values()) for k, t in times.items()}
    (lo, hi), kw = CHAPTER["mapping_share"], dict(clusters)
    return Placement(times=times, ch_lo_pct=100 * lo, ch_hi_frac=hi, first=f"0–{gpn - 1}", second=f"{gpn}–{2 * gpn - 1}",
                     x2_x=x["nic2"], share2_frac=1 / x["nic2"], x4_x=x["nic4"], share4_frac=1 / x["nic4"],
                     spine_block_s=times["spine2"]["block"], spine_snake_s=times["spine2"]["snake"],
                     k2=gpn // kw["nic2"]["nics_per_node"], k4=gpn // kw["nic4"]["nics_per_node"],
                     spine=f"{kw['spine2']['spine_oversubscription']}:1", last=gpn - 1)


def placement_table(pl: Placement | None = None, n: float = PLACEMENT["n"], nodes: int = PLACEMENT["nodes"],
                    gpn: int = PLACEMENT["gpn"], intra=PLACEMENT["intra"], inter=PLACEMENT["inter"]) -> Table:
    """:func:`placement` per cluster and placement, and slowest over fastest."""
    pl = placement() if pl is None else pl
    rows = [{"cluster": k, **t, "spread": max(t.values()) / min(t.values())} for k, t in pl.times.items()]
    orders = next(iter(pl.times.values()))
    return Table(
        key="ch1-fall-place",
        title=_tx("a_flat_ring_all", n=fmt_bytes(n), nodes=nodes, gpn=gpn),
        columns=["cluster", *orders, "spread"],
        headers=_txs("cluster", "block_0_7_on", "round_robin", "snake", "slowest_fastest"),
        rows=rows, formats={**{k: _t3 for k in orders}, "spread": _x},
        labels=T.labels(K + "cluster."),
        notes={lang: [T.get(K + "pl_note", lang, a=link_name(intra, lang), b=link_name(inter, lang))]
               for lang in ("en", "zh")},
    )


# ============================================================================ 12 benchmark context
CONTEXT_LOG, SHARP_OFF = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log", "htsym_allreduce_8xh100"
"""A real nccl-tests log of one 8 × H100 node, and the same kind of node measured with the
switch reduction off (both in code/commbook/data/measured/)."""
