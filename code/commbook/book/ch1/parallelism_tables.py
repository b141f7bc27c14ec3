"""Chapter "Collective communication", purpose page and §1.1: the tables.

* :func:`connections_table`: N(N−1) logical pairs against the N links and 2(N−1)/N bytes
  per worker of a ring all-reduce (purpose page).
* :func:`transport_manifest`: parallelism → where the gradient goes → primitive →
  constraint (§1.1.3).
"""
from __future__ import annotations

from typing import Sequence

from ... import physics
from ...units import fmt_number
from ..tables import Table
from ..text import texts
from .boxes import split_pairs

T, K = texts("ch1"), "parallelism_tables."


__all__ = ["connections_table", "transport_manifest", "ENERGY_SCOPES", "energy_table"]

# ============================================================================ purpose page
def connections_table(rows: list[dict]) -> Table:
    """The purpose page's rows (it computes them), one per number of workers N: the N(N−1)
    ordered pairs of the most general exchange, the N links a ring uses, and the bytes each
    worker sends in a ring all-reduce, as a multiple of its buffer (2(N−1)/N) (``n``,
    ``pairs``, ``ring_links``, ``ring_factor``).  The note compares the last row with the first."""
    lo, hi = rows[0], rows[-1]
    return Table(
        key="ch1-connections",
        title=T(K + "conn_title"),
        columns=["n", "pairs", "ring_links", "ring_factor"],
        headers=split_pairs(T(K + "conn_heads")),
        rows=rows,
        formats={"n": lambda v: f"{v:,}", "pairs": lambda v: f"{v:,}", "ring_links": lambda v: f"{v:,}",
                 "ring_factor": lambda v: f"{v:.4f}"},
        notes=T.pairs(K + "conn_note", lo=f"{lo['n']:,}", hi=f"{hi['n']:,}", grow_n=fmt_number(round(hi["n"] / lo["n"]), 7),
                      grow_pairs=fmt_number(round(hi["pairs"] / lo["pairs"]), 7),
                      grow_ring=fmt_number(hi["ring_factor"] / lo["ring_factor"], 4)),
    )


# ============================================================================ the manifest
_MANIFEST_ROWS = [
    # (strategy, destination, primitive, constraint) in English; Chinese via labels
    ("Data parallel", "meet every replica to form the global mean", "all-reduce",
     "bandwidth (large payload)"),
    ("FSDP / ZeRO", "find the shards and rebuild the whole", "all-gather + reduce-scatter",
     "bandwidth (many collectives per step)"),
    ("Tensor parallel", "a quick exchange inside the node", "all-reduce",
     "latency (small, frequent messages)"),
    ("Pipeline parallel", "hand over to the next stage", "point-to-point (send/recv)",
     "latency (each stage waits for the previous one)"),
    ("Expert parallel (MoE)", "routed to the GPU that holds its expert", "all-to-all",
     "start-up cost, injection or bisection bandwidth, or load skew"),
]
_MANIFEST_ZH = {en: zh for en, zh in zip(*(d.values() for d in T.labels(K + "manifest.").values()))}


def transport_manifest() -> Table:
    """The transport manifest: for each parallelism strategy, where its gradients (or
    activations, or tokens) must go, the primitive that takes them there, and the limit
    that usually binds.  The note counts the strategies that use a collective."""
    rows = [dict(zip(("strategy", "destination", "primitive", "constraint"), r)) for r in _MANIFEST_ROWS]
    p2p = [r["strategy"] for r in rows if r["primitive"].startswith("point-to-point")]
    coll = len(rows) - len(p2p)
    names = {"en": p2p, "zh": [_MANIFEST_ZH[s] for s in p2p]}
    return Table(
        key="ch1-manifest",
        title=T(K + "mf_title"),
        columns=["strategy", "destination", "primitive", "constraint"],
        headers=split_pairs(T(K + "mf_heads")),
        rows=rows,
        notes={lang: [T.get(K + "mf_note", lang, coll=coll, rows=len(rows),
                            p2p=T.get(K + "list_sep", lang).join(names[lang]))] for lang in ("en", "zh")},
        labels={"en": {}, "zh": dict(_MANIFEST_ZH)},
        meta={"point_to_point": p2p, "collective_rows": coll},
    )


ENERGY_SCOPES = {k: tuple(T(f"{K}scope.{k}").values()) for k in ("SRAM", "HBM", "NVLink", "IB")}
"""What each published range of Figure 1 counts (the figure's values also count NIC,
SerDes and switch for NVLink and InfiniBand)."""


def energy_table(order: Sequence[str] = ("SRAM", "HBM", "NVLink", "IB")) -> Table:
    """Figure 1's levels: the figure's value, the published range and what that range counts
    (:data:`commbook.physics.ENERGY`)."""
    rows = [{"level": physics.ENERGY[k].name, "figure": physics.ENERGY[k].figure_pj,
             "low": physics.ENERGY[k].low_pj, "high": physics.ENERGY[k].high_pj,
             "scope": ENERGY_SCOPES[k][0], "key": k} for k in order]
    return Table(
        key="ch1-energy-ranges",
        title=T(K + "en_title"),
        columns=["level", "figure", "low", "high", "scope"],
        headers=split_pairs(T(K + "en_heads")),
        rows=rows,
        formats={"figure": lambda x: f"{x:,g}", "low": lambda x: f"{x:.2g}", "high": lambda x: f"{x:.2g}"},
        labels={"en": {}, "zh": {v[0]: v[1] for v in ENERGY_SCOPES.values()}},
        notes=T.pairs(K + "en_note"),
    )
