"""Chapter §1.10, summary: the archetype table (Lighthouse 1.1) as data, with one computed
figure per archetype, the recap's examples (computed on the page) and the numbers of the seven
key takeaways, for the page ``chapters/{zh,en}/ch1/10-summary.md``.

Every number is computed here or in :mod:`.fallacies`, :mod:`.fallacies_training` and
:mod:`.fallacies_topology` (the same examples the §1.9 page works through),
:mod:`.primitives_moe` (the all-to-all flow counts of §1.3) and the package; none is typed.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...compression import Int8, Sign
from ...hardware import IB_NDR_CHAPTER
from ...overlap import hidden_fraction_equal_layers
from ...units import fmt_bytes, fmt_count, fmt_number, fmt_ratio
from ..tables import Table
from ..text import texts
from .fallacies import ring_tree
from .fallacies_topology import nic_load, placement
from .fallacies_training import ef_runs
from .primitives_moe import flow_counts

__all__ = ["ARCHETYPES", "archetype_figures", "lighthouse_table", "RECAP", "STATED_RESIDUAL", "Takeaways",
           "takeaway_numbers"]

T = texts("ch1")
K = "summary."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys)
_txs = _tx.pairs


ARCHETYPES: tuple[dict, ...] = (
    {"key": "A",
     "name": _tx("a_dense_language_model"),
     "collective": _tx("all_reduce"),
     "limit": _tx("bandwidth"),
     "technique": _tx("hierarchical_all_reduce_rail")},
    {"key": "B",
     "name": _tx("b_large_recommendation_model"),
     "collective": _tx("all_to_all"),
     "limit": _tx("message_granularity_fabric_capacity"),
     "technique": _tx("message_coalescing_topology_aware")},
    {"key": "C",
     "name": _tx("c_federated_learning_mobilenet"),
     "collective": _tx("point_to_point_asynchronous"),
     "limit": _tx("connectivity_and_latency"),
     "technique": _tx("aggressive_quantization_error_feedback")},
)
"""The three archetypes: main collective, the limit that tends to bind, the techniques."""


def archetype_figures(gradient_dim: int = 10**6) -> dict[str, dict[str, str]]:
    """One computed figure per archetype, in both languages: A, hierarchical against flat ring
    (:func:`.fallacies_topology.nic_load`); B, cross-node flows of the direct and the hierarchical
    all-to-all (:func:`.primitives_moe.flow_counts`); C, the bytes INT8 and 1-bit sign with
    error feedback save on a ``gradient_dim``-value gradient."""
    nl, fl = nic_load(), flow_counts()
    x, y = nl.speedup_x, nl.nccl_x
    d, h = fl.direct.cross_node_gpu_pairs, fl.hierarchical.cross_node_gpu_pairs
    i8, s1 = Int8().ratio(gradient_dim), Sign().ratio(gradient_dim)
    a_gpus, b_gpus = f"{nl.nodes} × {nl.gpn}", f"{fl.nodes} × {fl.gpus}"
    return {
        "A": _tx("faster_than_a_single", x=fmt_ratio(x), y=fmt_ratio(y), xn=fmt_number(x, 3), yn=fmt_number(y, 3),
                 a_gpus=a_gpus, n=fmt_bytes(nl.n_bytes)),
        "B": _tx("cross_node_flows_gpus", d=d, h=h, b_gpus=b_gpus),
        "C": _tx("int8_to_1_bit", i8=fmt_ratio(i8), s1=fmt_ratio(s1), i8n=fmt_number(i8, 3), s1n=fmt_number(s1, 3)),
    }


def lighthouse_table(gradient_dim: int = 10**6) -> Table:
    """Lighthouse 1.1: archetype → main collective → likely limit → technique, and a figure
    computed for each (:func:`archetype_figures`)."""
    figs = archetype_figures(gradient_dim)
    rows = [{"name": f"name_{a['key']}", "collective": f"coll_{a['key']}", "limit": f"limit_{a['key']}",
             "technique": f"tech_{a['key']}", "figure": f"fig_{a['key']}"} for a in ARCHETYPES]
    labels = {lang: {} for lang in ("en", "zh")}
    for a in ARCHETYPES:
        for field, prefix in (("name", "name"), ("collective", "coll"), ("limit", "limit"), ("technique", "tech")):
            for lang in labels:
                labels[lang][f"{prefix}_{a['key']}"] = a[field][lang]
        for lang in labels:
            labels[lang][f"fig_{a['key']}"] = figs[a["key"]][lang]
    return Table(
        key="ch1-lighthouse",
        title=_tx("lighthouse_1_1_each"),
        columns=["name", "collective", "limit", "technique", "figure"],
        headers=_txs("archetype", "main_collective", "limit_that_tends_to", "techniques", "in_numbers"),
        rows=rows, labels=labels,
        notes=_txs("lighthouse_note", d=fmt_count(gradient_dim)),
        meta={"figures": figs},
    )


STATED_RESIDUAL = (0.05, 0.15)
"""The share of the step that communication still costs in a well-configured system, as the
chapter's summary states it (no source and no derivation given)."""
RECAP = {"layers": (6, 20), "topk_fine": 0.001, "dim": 10**6}
"""The recap's examples: equal-layer models of 6 and 20 layers; top-0.1 % on a 10⁶-value gradient."""


@dataclass(frozen=True)
class Takeaways:
    """One number (or pair) per key takeaway, from the computations of §1.9 and the package."""
    nstar_bytes: float
    p: int                    # GPUs of the ring/tree crossover
    cross_log_bytes: float
    cross_bytes: float
    cross_crude_bytes: float
    nodes: int
    gpn: int
    cluster: str              # "8 × 8"
    flow_cluster: str
    nic_times: float          # busiest NIC, flat ring over hierarchy
    hier_x: float
    hier_one_x: float         # ... with one NIC per node
    hier_nccl_x: float        # the hierarchy over NCCL's ring
    flows_d: int
    flows_h: int
    ef_keep_frac: float
    ef_drop_frac: float
    ef_steps: int
    ef_gap: float             # the gap left with error feedback (far below 1)
    ef_plain_frac: float
    l10: int
    l20: int
    h10_frac: float
    h20_frac: float
    map2_x: float
    map4_x: float


def takeaway_numbers(layers: tuple[int, int] = (10, 20)) -> Takeaways:
    """``layers`` are the two equal-layer models of the overlap takeaway."""
    rt, nl, ef, pl, fl = ring_tree(), nic_load(), ef_runs(), placement(), flow_counts()
    return Takeaways(
        nstar_bytes=IB_NDR_CHAPTER.n_half, p=rt.p, cross_log_bytes=rt.cross_log_bytes, cross_bytes=rt.cross_bytes,
        cross_crude_bytes=rt.cross_crude_bytes, nodes=nl.nodes, gpn=nl.gpn, cluster=f"{nl.nodes} × {nl.gpn}",
        flow_cluster=f"{fl.nodes} × {fl.gpus}", nic_times=nl.nic_times, hier_x=nl.speedup_x,
        hier_one_x=nl.one_nic_x, hier_nccl_x=nl.nccl_x, flows_d=fl.direct.cross_node_gpu_pairs,
        flows_h=fl.hierarchical.cross_node_gpu_pairs, ef_keep_frac=ef.keep_frac, ef_drop_frac=ef.drop_frac,
        ef_steps=ef.steps, ef_gap=ef.gap, ef_plain_frac=ef.without_frac, l10=layers[0], l20=layers[1],
        h10_frac=hidden_fraction_equal_layers(layers[0]), h20_frac=hidden_fraction_equal_layers(layers[1]),
        map2_x=pl.x2_x, map4_x=pl.x4_x)
