r"""Chapter §1.3: direct against hierarchical all-to-all on 8 × 8 GPUs, simulated
(:func:`hierarchical_table`), and the flows of each counted four ways (:func:`flow_counts`,
:func:`flow_table`), with the chapter's Table 1 presets.  Units are decimal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import collectives as coll
from ... import moe
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from ...topology import TwoLevel
from ...units import fmt_bytes, fmt_ratio, fmt_time
from ..tables import Table
from ..text import texts
from .boxes import split_pairs
from .inputs import NM_1_4
from .primitives import link_name

T = texts("ch1")
__all__ = ["HIER_TOKENS", "hierarchical_table", "Flows", "flow_counts", "flow_table"]


HIER_TOKENS: tuple[int, ...] = (1, 4, 64, 1024)
"""Tokens per GPU pair in the hierarchical comparison (× 4,096 B per token)."""


def hierarchical_table(tokens: Sequence[int] = HIER_TOKENS, nodes: int = 8, gpus: int = 8,
                       bytes_per_token: int = NM_1_4.bytes_per_token,
                       intra: Link = NVLINK4_CHAPTER, inter: Link = IB_NDR_CHAPTER) -> Table:
    """Direct against hierarchical all-to-all-v on ``nodes`` × ``gpus`` GPUs, every pair
    exchanging ``tokens`` tokens (simulated, size only)."""
    topo = TwoLevel(nodes, gpus, intra, inter)
    P = topo.p
    rows = []
    for t in tokens:
        counts = np.full((P, P), float(t * bytes_per_token))
        d = coll.all_to_all_v(VirtualCluster(topo), counts=counts, algorithm="direct")
        h = coll.all_to_all_v(VirtualCluster(topo), counts=counts, algorithm="hierarchical")
        rows.append({"tokens": t, "chunk": t * bytes_per_token, "direct": d.time, "hier": h.time,
                     "speedup": d.time / h.time, "r_direct": d.rounds, "r_hier": h.rounds})
    t3 = lambda x: fmt_time(x, 3)
    return Table(
        key="ch1-hier-a2a",
        title={lang: T.get("primitives_moe.hier_title", lang, nodes=nodes, gpus=gpus,
                           intra=intra.name if lang == "en" else link_name(intra, lang),
                           inter=inter.name if lang == "en" else link_name(inter, lang)) for lang in ("en", "zh")},
        columns=["tokens", "chunk", "direct", "hier", "speedup", "r_direct", "r_hier"],
        headers=split_pairs(T("primitives_moe.hierarchical_table.headers")),
        rows=rows, formats={"chunk": fmt_bytes, "direct": t3, "hier": t3, "speedup": lambda x: fmt_ratio(x, 3)},
        notes=split_pairs(T("primitives_moe.hierarchical_table.notes")),
        meta={"topology": topo},
    )


@dataclass(frozen=True)
class Flows:
    """:func:`flow_counts`: the cluster and the flows of each all-to-all."""
    p: int
    nodes: int
    gpus: int
    direct: moe.FlowCount
    hierarchical: moe.FlowCount


def flow_counts(nodes: int = 8, gpus: int = 8, intra: Link = NVLINK4_CHAPTER,
                inter: Link = IB_NDR_CHAPTER) -> Flows:
    """Flows of the direct and the hierarchical all-to-all on ``nodes`` × ``gpus``
    (:func:`commbook.moe.count_flows` on the runs' rounds)."""
    topo = TwoLevel(nodes, gpus, intra, inter)
    counts = np.full((topo.p, topo.p), 1.0)
    run = lambda algo: coll.all_to_all_v(VirtualCluster(topo), counts=counts, algorithm=algo, trace=True)  # noqa: E731
    return Flows(topo.p, nodes, gpus, *(moe.count_flows(run(a), topo) for a in ("direct", "hierarchical")))


def flow_table(flows: Flows | None = None) -> Table:
    """The flows of :func:`flow_counts`, direct against hierarchical, counted four ways."""
    flows = flow_counts() if flows is None else flows
    rows = [{"algo": a, "gpu_pairs": f.gpu_pairs, "cross": f.cross_node_gpu_pairs, "node_pairs": f.node_pairs,
             "rail": f.max_per_rail} for a, f in (("direct", flows.direct), ("hierarchical", flows.hierarchical))]
    n = lambda x: f"{x:,}"
    return Table(
        key="ch1-a2a-flows",
        title=T("primitives_moe.flow_title", nodes=flows.nodes, gpus=flows.gpus),
        columns=["algo", "gpu_pairs", "cross", "node_pairs", "rail"],
        headers=split_pairs(T("primitives_moe.flow_table.headers")),
        rows=rows, formats={"gpu_pairs": n, "cross": n, "node_pairs": n, "rail": n},
        labels=T.labels("primitives_moe.flow_table.labels."),
    )
