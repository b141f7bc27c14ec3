"""Chapter §1.9, fallacies and pitfalls: one computed counter-example per item, for the page
``chapters/{zh,en}/ch1/09-fallacies.md``, in its order: (1) bandwidth only,
:func:`bandwidth_table`; (2) all-reduce for routing, :func:`alltoall_by_allreduce`; (3) the
pipeline bubble, :func:`bubble_numbers`; (4) ring against tree, :func:`ring_tree`; (5) top-k
without error feedback, :func:`ef_runs`; (6) time to train, :func:`time_to_train_example`;
(7) LogP and asynchronous calls, :func:`.fallacies_results.async_example`; (8) bit flips against a norm check and
a CRC-32, :func:`.fallacies_results.bit_flips`; (9) flat against hierarchical, :func:`flat_hier_table` and
:func:`nic_load`; (10) one crossbar hop inside a node, :func:`intra_node_table`; (11) rank
placement, :func:`placement_table`; (12) a real log without its algorithm,
:func:`benchmark_context`.  Simulated where the item is about a schedule on a topology.

No result is typed: every number comes from the package, table notes from the same
parameters; what the chapter prints where it differs is kept in :data:`CHAPTER`.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ... import collectives as coll
from ...collectives import crossover, t_allreduce_hierarchical, t_formula
from ...comm_sim import VirtualCluster
from ...compression import TopK, compression_decision, least_squares, train_sgd, update_at_optimum
from ...cost import p2p_time
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER
from ...parallelism import min_microbatches, pipeline_bubble_fraction
from ...topology import Switch, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time
from ..names import display_name
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS, link_name

__all__ = [
    "CHAPTER", "BANDWIDTH", "bandwidth_table", "alltoall_by_allreduce", "BUBBLE",
    "bubble_numbers", "bubble_table", "RING_TREE", "ring_tree", "ring_tree_table",
    "EF", "ef_runs", "TIME_TO_TRAIN", "time_to_train_example", "ASYNC_COMPUTE",
    "SDC", "fleet_bits_per_day", "FLAT", "flat_hier_table", "nic_load", "INTRA", "intra_node_table",
    "PLACEMENT", "placement_ranks", "placement_table", "CONTEXT_LOG", "SHARP_OFF"]

T = texts("ch1")
K = "fallacies."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


CHAPTER = {"bubble_m": 32, "tree_bw": 1000e-6, "flat_traffic_cut": 8, "flat_speedup": 4.8,
           "nvlink_bidirectional": 900e9, "mapping_share": (0.5, 0.6)}
"""What the chapter prints where the page differs or quotes it: m ≥ 32 micro-batches for p ≥ 8;
the tree's 1,000 µs (napkin math 1.5: 1,200); "8× less inter-node traffic, ≈ 4.8×"; NVLink's
900 GB/s (both directions); training at 50–60 % of nccl-tests' bandwidth."""

_t3 = lambda t: fmt_time(t, 3)
_x = fmt_ratio


# ============================================================================ 1 bandwidth
BANDWIDTH = {"alpha": 5e-6, "rates_bps": (100e9, 400e9, 800e9),
             "sizes": (4 * KB, 64 * KB, 1 * MB, 100 * MB, 1 * GB)}
"""A message path with 5 µs of software start-up, on three line rates (bits/s)."""


def bandwidth_table(alpha: float = BANDWIDTH["alpha"], rates_bps=BANDWIDTH["rates_bps"],
                    sizes=BANDWIDTH["sizes"]) -> Table:
    """α + n/β for each size on each line rate, and what the second and third rate gain
    over the first; ``meta["n_star"]`` holds αβ per rate."""
    betas = [r / 8 for r in rates_bps]
    rows = []
    for n in sizes:
        t = [p2p_time(n, alpha, b) for b in betas]
        rows.append({"n": n, **{f"t{i}": x for i, x in enumerate(t)},
                     "gain": t[0] / t[1], "gain_top": t[0] / t[-1]})
    names = [f"{r / 1e9:g} Gb/s" for r in rates_bps]
    stars = ", ".join(fmt_bytes(alpha * b) for b in betas)
    cols = [f"t{i}" for i in range(len(betas))]
    return Table(
        key="ch1-fall-bw",
        title=_tx("one_message_with_on", alpha=fmt_time(alpha, 3)),
        columns=["n", *cols, "gain", "gain_top"],
        headers={lang: [T.get(K + "bw_message", lang), *names,
                        *(T.get(K + "bw_gain", lang, a=names[0], b=x) for x in (names[1], names[-1]))]
                 for lang in ("en", "zh")},
        rows=rows, formats={"n": fmt_bytes, **{c: _t3 for c in cols}, "gain": _x, "gain_top": _x},
        notes=_txs("n_n_is_on", stars=stars),
        meta={"n_star": [alpha * b for b in betas], "betas": betas},
    )


# ============================================================================ 2 all-reduce as routing
def alltoall_by_allreduce(p: int = 8, n: float = 8 * MB, link=IB_NDR_CHAPTER, block: int = 4) -> dict:
    """An all-to-all of ``n`` bytes per rank against the same routing done by an all-reduce:
    every rank writes its buffer into its own row of a zero p × n buffer, the ring sums the
    rows, and rank j reads block j of every row.  Size-only runs give bytes and times on a
    switch of ``link``; a real-data run (``block`` int64 values per destination) checks that
    both deliver the same outputs."""
    c = VirtualCluster(Switch(p, link))
    a2a, ar = coll.all_to_all(c, nbytes=n), coll.all_reduce(c, nbytes=p * n)
    x = [np.arange(p * block, dtype=np.int64) + 1000 * r for r in range(p)]
    want = coll.all_to_all(c, x).outputs
    padded = [np.zeros((p, p * block), dtype=np.int64) for _ in range(p)]
    for r in range(p):
        padded[r][r] = x[r]
    rows = coll.all_reduce(c, [b.ravel() for b in padded]).outputs[0].reshape(p, p * block)
    same = all(np.array_equal(want[j], rows[:, j * block:(j + 1) * block].ravel()) for j in range(p))
    return {"p": p, "n": n, "link": link, "bytes_a2a": float(a2a.bytes_sent.max()),
            "bytes_ar": float(ar.bytes_sent.max()), "t_a2a": a2a.time, "t_ar": ar.time,
            "buffer_ar": p * n, "same": same}


# ============================================================================ 3 pipeline bubble
BUBBLE = {"p": 8, "m": 32, "target": 0.2, "ms": (8, 16, 28, 29, 32, 64), "deeper": (16, 32)}
"""The pipeline of the item: 8 stages, 32 micro-batches, a bubble under 20 %."""


def bubble_numbers(p: int = BUBBLE["p"], m: int = BUBBLE["m"], target: float = BUBBLE["target"],
                   deeper=BUBBLE["deeper"]) -> dict:
    """Bubble at (p, m); the smallest m strictly below ``target`` and its bubble; for the
    ``deeper`` pipelines, their smallest m and the bubble at the chapter's m."""
    m_min = min_microbatches(p, target)
    return {"p": p, "m": m, "target": target, "bubble": pipeline_bubble_fraction(p, m),
            "m_min": m_min, "bubble_min": pipeline_bubble_fraction(p, m_min),
            "bubble_before": pipeline_bubble_fraction(p, m_min - 1),
            "deeper": {q: {"m_min": min_microbatches(q, target),
                           "at_chapter_m": pipeline_bubble_fraction(q, CHAPTER["bubble_m"])} for q in deeper}}


def bubble_table(p: int = BUBBLE["p"], ms=BUBBLE["ms"], target: float = BUBBLE["target"]) -> Table:
    """The bubble for several micro-batch counts at ``p`` stages, and whether it is below ``target``."""
    rows = [{"m": m, "bubble": pipeline_bubble_fraction(p, m), "below": pipeline_bubble_fraction(p, m) < target}
            for m in ms]
    return Table(
        key="ch1-fall-bubble",
        title=_tx("pipeline_bubble_with_p", p=p),
        columns=["m", "bubble", "below"],
        headers=_txs("pp_m", "pp_bubble", "pp_below", target=fmt_pct(target)),
        rows=rows, formats={"bubble": fmt_pct},
        notes=_txs("smallest_m_below", target=fmt_pct(target), p=min_microbatches(p, target)),
    )


# ============================================================================ 4 ring against tree
RING_TREE = {"p": 64, "n": 1 * MB, "link": BOX_LINKS["nm1.5"], "sizes": (64 * KB, 1 * MB, 16 * MB)}
"""Napkin math 1.5's case, which the item repeats: 64 GPUs, 1 MB, α = 10 µs, β = 10 GB/s."""


def ring_tree(p: int = RING_TREE["p"], n: float = RING_TREE["n"], link=RING_TREE["link"]) -> dict:
    """Latency and bandwidth terms of ring and binomial tree (registry closed forms with
    β → ∞ or α = 0), their totals, and the switch size: exact (:func:`crossover`), the
    log-aware estimate pαβ/log₂p and the crude pαβ."""
    a, b = link.alpha, link.beta
    f = lambda algo, nn, aa, bb: t_formula(algo, p, nn, aa, bb)
    return {"p": p, "n": n, "link": link,
            "ring_lat": f("ring", 0.0, a, b), "ring_bw": f("ring", n, 0.0, b), "ring": f("ring", n, a, b),
            "tree_lat": f("tree", 0.0, a, b), "tree_bw": f("tree", n, 0.0, b), "tree": f("tree", n, a, b),
            "cross": crossover("ring", "tree", p, a, b), "cross_log": p * a * b / math.log2(p),
            "cross_crude": p * a * b, "tree_steps": round(f("tree", 0.0, a, b) / a)}


def ring_tree_table(p: int = RING_TREE["p"], sizes=RING_TREE["sizes"], link=RING_TREE["link"]) -> Table:
    """Ring and tree all-reduce at several sizes, and which is faster."""
    rows, a, b = [], link.alpha, link.beta
    for n in sizes:
        r, t = t_formula("ring", p, n, a, b), t_formula("tree", p, n, a, b)
        rows.append({"n": n, "ring": r, "tree": t, "best": "tree" if t < r else "ring"})
    given, cross = f"α = {fmt_time(a, 3)}, β = {b / GB:g} GB/s", fmt_bytes(crossover("ring", "tree", p, a, b))
    return Table(
        key="ch1-fall-ring",
        title=_tx("ring_against_tree_on", p=p, given=given),
        columns=["n", "ring", "tree", "best"],
        headers=_txs("all_reduce_of", "ring", "binomial_tree", "faster"),
        rows=rows, formats={"n": fmt_bytes, "ring": _t3, "tree": _t3},
        labels={lang: {a: display_name("all_reduce", a, lang) for a in ("ring", "tree")} for lang in ("en", "zh")},
        notes=_txs("the_two_cross_at", cross=cross),
    )


# ============================================================================ 5 error feedback
EF = {"fraction": 0.01, "steps": 500, "steps_long": 4000, "window": 1000}
"""Top-1 % on the seeded least-squares problem: 500 steps, and 4,000 without feedback."""


@functools.lru_cache(maxsize=None)
def ef_runs(fraction: float = EF["fraction"], steps: int = EF["steps"], steps_long: int = EF["steps_long"],
            window: int = EF["window"]) -> dict:
    """Top-k with and without error feedback on :func:`~commbook.compression.least_squares`:
    relative excess loss after ``steps``; without feedback also after ``steps_long`` and its
    relative change over the last ``window`` steps; the mean decoded update at the optimum
    (zero only where the optimum is a fixed point)."""
    prob, op = least_squares(), TopK(fraction)
    plain = train_sgd(prob, op, feedback=False, steps=steps_long)
    ef = train_sgd(prob, op, feedback=True, steps=steps)
    end, before = plain.excess[-1], plain.excess[-1 - window]
    return {"dim": prob.dim, "workers": prob.workers, "kept": op.k(prob.dim), "fraction": fraction,
            "steps": steps, "steps_long": steps_long, "window": window,
            "plain": float(plain.excess[steps]), "ef": ef.final, "plain_end": float(end),
            "plain_change": float((before - end) / before), "drift_topk": update_at_optimum(prob, op),
            "drift_none": update_at_optimum(prob), "ratio_1e6": op.ratio(10**6)}


# ============================================================================ 6 time to train
TIME_TO_TRAIN = {"steps": 100_000, "t_compute": 0.3, "t_comm": 0.2, "ratio": 100, "extra_steps": 1.0}
"""100× less communication that costs twice the steps (twice = 100 % more)."""


def time_to_train_example(**kw) -> dict:
    """Time to train without and with the compressor (:func:`compression_decision`)."""
    c = {**TIME_TO_TRAIN, **kw}
    d = compression_decision(c["steps"], c["t_compute"], c["t_comm"], c["ratio"], c["extra_steps"])
    return {**c, "comm_after": c["t_comm"] / c["ratio"], "baseline": d.baseline, "compressed": d.compressed,
            "change": d.change, "break_even": d.break_even_comm}


# ============================================================================ 7 async
ASYNC_COMPUTE = 80e-6
"""A compute block longer than napkin math 1.3's o and shorter than its L."""


# ============================================================================ 8 silent corruption
SDC = {"d": 100_000, "scale": 0.01, "seed": 0, "threshold": 0.01, "nodes": 10_000, "nics": 8}
"""A float32 gradient of 100,000 values ~ N(0, 0.01²); a norm check that flags a 1 % change."""


def fleet_bits_per_day(nodes: int = SDC["nodes"], nics: int = SDC["nics"], link=IB_NDR_CHAPTER) -> float:
    """Bits a fleet moves in a day if every NIC sends at ``link``'s rate all day (an upper bound)."""
    return nodes * nics * link.beta * 8 * 86400


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


def nic_load(nodes: int = 8, gpn: int = 8, n: float = 1 * GB, intra=FLAT["intra"], inter=FLAT["inter"]) -> dict:
    """Simulated single flat ring, hierarchical all-reduce and NCCL's ring (``nccl``: one channel
    per NIC, PXN) on a TwoLevel cluster: times, the busiest NIC's and all NICs' bytes out; the
    first two again with one NIC per node."""
    out = {"nodes": nodes, "gpn": gpn, "n": n}
    for nics, tag, algos in ((gpn, "", ("ring", "hierarchical", "nccl")), (1, "_one_nic", ("ring", "hierarchical"))):
        for algo in algos:
            c = VirtualCluster(TwoLevel(nodes, gpn, intra, inter, nics_per_node=nics, pxn=algo == "nccl"))
            r = coll.all_reduce(c, nbytes=n, **({"channels": 1} if algo == "ring" else {"algorithm": algo.replace("nccl", "ring")}))
            nic = np.array([b for name, b in zip(r.link_names, r.link_bytes) if ".nic" in name and name.endswith(".out")])
            out[f"{algo}{tag}"] = r.time
            if not tag:
                out[f"{algo}_nic_max"], out[f"{algo}_nic_total"] = float(nic.max()), float(nic.sum())
    return out


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

_CLUSTER_NAMES = {
    "rails": _tx("one_nic_per_gpu"),
    "nic2": _tx("2_gpus_share_a"),
    "nic4": _tx("4_gpus_share_a"),
    "spine2": _tx("one_nic_per_gpu_2"),
}


def placement_ranks(nodes: int, gpn: int) -> dict[str, np.ndarray | None]:
    """Ring orders: ``block`` (ranks 0..G-1 on node 0, …), ``round_robin`` (rank r on node
    r mod N) and ``snake`` (odd nodes visited backwards, so node-crossing hops keep their rail)."""
    return {"block": None, "round_robin": np.arange(nodes * gpn).reshape(nodes, gpn).T.ravel(),
            "snake": np.concatenate([np.arange(gpn)[::(-1) ** a] + a * gpn for a in range(nodes)])}


def placement_table(nodes: int = PLACEMENT["nodes"], gpn: int = PLACEMENT["gpn"], n: float = PLACEMENT["n"],
                    intra=PLACEMENT["intra"], inter=PLACEMENT["inter"], clusters=PLACEMENT["clusters"]) -> Table:
    """Simulated flat ring all-reduce per cluster and placement, and slowest over fastest."""
    orders, rows = placement_ranks(nodes, gpn), []
    for key, kw in clusters:
        c = VirtualCluster(TwoLevel(nodes, gpn, intra, inter, **kw))
        t = {k: coll.all_reduce(c, nbytes=n, ranks=r, channels=1).time for k, r in orders.items()}
        rows.append({"cluster": key, **t, "spread": max(t.values()) / min(t.values())})
    return Table(
        key="ch1-fall-place",
        title=_tx("a_flat_ring_all", n=fmt_bytes(n), nodes=nodes, gpn=gpn),
        columns=["cluster", *orders, "spread"],
        headers=_txs("cluster", "block_0_7_on", "round_robin", "snake", "slowest_fastest"),
        rows=rows, formats={**{k: _t3 for k in orders}, "spread": _x},
        labels={lang: {k: v[lang] for k, v in _CLUSTER_NAMES.items()} for lang in ("en", "zh")},
        notes={lang: [T.get(K + "pl_note", lang, a=link_name(intra, lang), b=link_name(inter, lang))]
               for lang in ("en", "zh")},
    )


# ============================================================================ 12 benchmark context
CONTEXT_LOG, SHARP_OFF = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log", "htsym_allreduce_8xh100"
"""A real nccl-tests log of one 8 × H100 node, and the same kind of node measured with the
switch reduction off (both in code/commbook/data/measured/)."""
