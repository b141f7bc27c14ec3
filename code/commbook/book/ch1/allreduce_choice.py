r"""Chapter §1.4, all-reduce algorithms, second half: the butterfly's pairing orders, NCCL's
double binary tree, Table 2, the DDP buckets, Figure 7's data, the switch point and
Napkin Math 1.5, for ``chapters/{zh,en}/ch1/04-allreduce-algorithms.md`` and the notebooks
of Checkpoint 1.3.  The first half is :mod:`.allreduce_numbers`.

* Butterfly: the chapter's 8-GPU trace pairs i with i xor 2^k, k = 0, 1, 2 (``near_first``
  in :mod:`commbook.collectives.butterfly`), as MPICH's Rabenseifner all-reduce does;
  MPICH's stand-alone recursive-halving reduce-scatter pairs the far ranks first
  (``far_first``).
  Both cost the same on a switch; :func:`order_table` runs both on other topologies.
* Double binary tree: the chapter's 2log₂N·α + 2M/β is
  :func:`commbook.double_tree.allreduce_double_tree_envelope`, a lower envelope; the time
  of the pipelined schedule at its best chunk count is
  :func:`commbook.double_tree.double_tree_optimum`.
* Switch point: :func:`commbook.cost.crossover_tree_ring` (``exact=False`` is N·α·β/log₂N),
  and :func:`commbook.collectives.crossover` for any two algorithms.
"""
from __future__ import annotations

import math

import numpy as np

from ... import collectives as coll
from ...collectives import crossover, predict
from ...collectives.butterfly import butterfly_pairs
from ...comm_sim import VirtualCluster
from ...cost import crossover_tree_ring, lower_bound_bytes
from ...double_tree import allreduce_double_tree_envelope, double_tree_optimum, double_tree_parents
from ...hardware import IB_NDR, NVLINK4, Link
from ...topology import Ring, Switch, Torus, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_time, us
from ..cheatsheet import measure
from ..names import display_name
from ..tables import Table, bilingual, bilingual_notes
from .boxes import BOX_LINKS

__all__ = [
    "CHAPTER_STATED", "ORDERS", "pairs", "order_topologies", "order_table", "dtree_inner",
    "dtree_rows", "dtree_table", "FIG7", "figure7_data", "bucket_table", "TABLE2", "table2", "switch_point",
    "nm15", "nm15_table", "checkpoint13",
]

CHAPTER_STATED = {
    "butterfly_pairs": [[(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 2), (1, 3), (4, 6), (5, 7)],
                        [(0, 4), (1, 5), (2, 6), (3, 7)]],   # the 8-GPU reduce-scatter, k = 0, 1, 2
    "butterfly_big": 1000, "butterfly_big_pow2": 1024, "butterfly_last_xor": 512,
    "buckets": (25 * MB, 100 * MB),                  # "通常为 25–100 MB"
    "fig7": {"p": 256, "gbps": 200, "sizes": (1 * KB, 10 * GB)},
    "s14": {"p": 100, "mb": 3.8},                    # "≈ 3.8 MB" at α = 5 µs, β = 50 GB/s
    "nm15": {"p": 64, "n": 1 * MB, "ten": 10 * MB,
             "ring_lat_us": 1260, "ring_bw_us": 196.9, "ring_us": 1456.9,
             "tree_lat_us": 120, "tree_bw_us": 1200, "tree_us": 1320,
             "margin_pct": 9, "lat_x": 10, "bw_x": 6, "crossover_mb": 1.1},
    "fallacy": {"ring_lat_us": 1260, "tree_bw_us": 1000},   # §1.9: "1,260 µs … exceeds … 1,000 µs"
}
"""The numbers the chapter states in the second half of §1.4 (and the pitfall of §1.9 that
repeats Napkin Math 1.5)."""

ORDERS = ("near_first", "far_first")


# ============================================================================ butterfly
def pairs(p: int = 8, order: str = "near_first") -> list[list[tuple[int, int]]]:
    """The pairs of each round of Rabenseifner's all-reduce on ``p`` ranks (reduce-scatter,
    then all-gather), read from the schedule (:func:`commbook.collectives.butterfly.butterfly_pairs`)."""
    return butterfly_pairs(p, order)


def order_topologies(link: Link = BOX_LINKS["cp1.3"]) -> dict:
    """8 GPUs four ways (a switch, a bidirectional ring, a 4×2 torus, two nodes of four
    NVLink GPUs joined by InfiniBand NDR) and 1,024 GPUs as 128 such nodes of eight."""
    return {"switch": Switch(8, link), "ring": Ring(8, link), "torus": Torus((4, 2), link),
            "twolevel": TwoLevel(2, 4, NVLINK4, IB_NDR), "twolevel_big": TwoLevel(128, 8, NVLINK4, IB_NDR)}


def order_table(n: float = 64 * MB, link: Link = BOX_LINKS["cp1.3"]) -> Table:
    """Rabenseifner's all-reduce of ``n`` bytes in both pairing orders on the topologies of
    :func:`order_topologies` (simulator), with the ratio far-first / near-first."""
    rows, topos = [], order_topologies(link)
    for key, topo in topos.items():
        t = {o: coll.all_reduce(VirtualCluster(topo), nbytes=n, algorithm="rabenseifner", order=o).time
             for o in ORDERS}
        rows.append({"topo": key, "p": topo.p, "near_first": t["near_first"], "far_first": t["far_first"],
                     "ratio": t["far_first"] / t["near_first"]})
    dims = " × ".join(map(str, topos["torus"].dims))
    names = {"switch": ("switch", "交换机"), "ring": ("bidirectional ring", "双向环"),
             "torus": (f"{dims} torus", f"{dims} 环面")}
    for key in ("twolevel", "twolevel_big"):
        t = topos[key]
        names[key] = (f"{t.nodes} nodes × {t.gpus_per_node} GPUs (NVLink + InfiniBand)",
                      f"{t.nodes} 个节点 × {t.gpus_per_node} 块 GPU（NVLink + InfiniBand）")
    return Table(
        key="ch1-butterfly-orders",
        title=bilingual(f"Recursive halving and doubling of {fmt_bytes(n)} in the two pairing orders (simulator)",
                        f"递归减半加倍处理 {fmt_bytes(n)}：两种配对顺序（模拟器）"),
        columns=["topo", "p", "near_first", "far_first", "ratio"],
        headers={"en": ["Network", "GPUs", "near partners first", "far partners first", "far / near"],
                 "zh": ["网络", "GPU 数", "先近后远", "先远后近", "先远 / 先近"]},
        rows=rows,
        formats={"p": lambda p: f"{p:,}", "near_first": lambda t: fmt_time(t, 4),
                 "far_first": lambda t: fmt_time(t, 4), "ratio": lambda x: f"{x:.2f}×"},
        labels={lang: {k: v[i] for k, v in names.items()} for i, lang in enumerate(("en", "zh"))},
        notes=bilingual_notes((
            f"Switch, ring and torus links: α = {fmt_time(link.alpha, 3)}, β = {link.beta / GB:g} GB/s. "
            f"Nodes: NVLink 4 ({fmt_time(NVLINK4.alpha, 3)}, {NVLINK4.beta / GB:g} GB/s) inside, one InfiniBand "
            f"NDR NIC per GPU ({fmt_time(IB_NDR.alpha, 3)}, {IB_NDR.beta / GB:g} GB/s) between them.",
            f"交换机、环和环面的链路：α = {fmt_time(link.alpha, 3)}，β = {link.beta / GB:g} GB/s。节点内为 NVLink 4"
            f"（{fmt_time(NVLINK4.alpha, 3)}，{NVLINK4.beta / GB:g} GB/s），节点之间每块 GPU 一块 InfiniBand NDR 网卡"
            f"（{fmt_time(IB_NDR.alpha, 3)}，{IB_NDR.beta / GB:g} GB/s）。")),
    )


# ============================================================================ double tree
def dtree_inner(p: int = 8) -> dict:
    """The two trees of NCCL's double binary tree on ``p`` ranks: each one's inner ranks
    (those with children) and whether the two sets are disjoint."""
    inner = [sorted(set(int(x) for x in par[par >= 0])) for par in double_tree_parents(p)]
    return {"p": p, "parents": [par.tolist() for par in double_tree_parents(p)], "inner": inner,
            "disjoint": not set(inner[0]) & set(inner[1])}


def dtree_rows(p: int, sizes, link: Link) -> list[dict]:
    """Per size: ring, tree, the chapter's envelope and the pipelined double tree at its best
    chunk count k (closed forms)."""
    out = []
    for n in sizes:
        k, best = double_tree_optimum(p, n, link.alpha, link.beta)
        out.append({"n": float(n), "ring": predict("all_reduce", "ring", p, n, link.alpha, link.beta),
                    "tree": predict("all_reduce", "tree", p, n, link.alpha, link.beta),
                    "envelope": allreduce_double_tree_envelope(p, n, link.alpha, link.beta),
                    "double_tree": best, "chunks": k})
    return out


def dtree_table(p: int, sizes, link: Link) -> Table:
    """:func:`dtree_rows` as a table: per size the best chunk count, the pipelined double tree,
    the chapter's envelope, the binomial tree and the ring."""
    rows = dtree_rows(p, sizes, link)
    t4 = lambda t: fmt_time(t, 4)
    return Table(
        key="ch1-dtree-chunks",
        title=bilingual(f"The pipelined double tree at its best chunk count against its formula, {p} GPUs "
                        f"(α = {fmt_time(link.alpha, 3)}, β = {link.beta / GB:g} GB/s)",
                        f"按最佳块数流水的双二叉树对比其公式，{p} 块 GPU"
                        f"（α = {fmt_time(link.alpha, 3)}，β = {link.beta / GB:g} GB/s）"),
        columns=["n", "chunks", "double_tree", "envelope", "tree", "ring"],
        headers={"en": ["Message", "Best chunks per tree", "Double tree (pipelined)", "Formula 2log₂N·α + 2M/β",
                        "Binomial tree", "Ring"],
                 "zh": ["消息", "每棵树的最佳块数", "双二叉树（流水）", "公式 2log₂N·α + 2M/β", "二项树", "ring"]},
        rows=rows,
        formats={"n": fmt_bytes, "chunks": lambda k: f"{k:,}", "double_tree": t4, "envelope": t4,
                 "tree": t4, "ring": t4},
        notes=bilingual_notes((
            "Closed forms; the double tree's time is that of its schedule at the best chunk count.",
            "闭式计算；双二叉树的用时是其调度在最佳块数下的用时。")),
    )


FIG7 = {"p": 256, "link": BOX_LINKS["fig7"], "sizes": (1 * KB, 10 * GB), "points": 8}
"""Figure 7: 256 GPUs on InfiniBand HDR (25 GB/s, α = 3.5 µs), 1 KB to 10 GB, ``points`` sizes per decade."""


def _affine_crossover(f, g) -> float:
    """Where two times affine in n meet (from their values at n = 0 and n = 1)."""
    a0, a1 = f(0.0), f(1.0) - f(0.0)
    b0, b1 = g(0.0), g(1.0) - g(0.0)
    return (b0 - a0) / (a1 - b1)


def figure7_data(p: int = FIG7["p"], link: Link = FIG7["link"], sizes=FIG7["sizes"],
                 points: int = FIG7["points"]) -> dict:
    """Figure 7's curves (:func:`dtree_rows` over log-spaced sizes) and its crossovers: ring =
    tree and ring = pipelined double tree (:func:`commbook.collectives.crossover`), ring =
    envelope (both affine in n)."""
    lo, hi = (math.log10(s) for s in sizes)
    grid = np.logspace(lo, hi, round((hi - lo) * points) + 1)
    rows = dtree_rows(p, grid, link)
    a, b = link.alpha, link.beta
    env = _affine_crossover(lambda n: predict("all_reduce", "ring", p, n, a, b),
                            lambda n: allreduce_double_tree_envelope(p, n, a, b))
    return {"p": p, "link": link, "rows": rows,
            "crossovers": {"tree": crossover("ring", "tree", p, a, b),
                           "double_tree": crossover("ring", "double_tree", p, a, b), "envelope": env},
            "approx": crossover_tree_ring(p, a, b, exact=False)}


def bucket_table(ps=(8, 64, 256, 1024), buckets=CHAPTER_STATED["buckets"], link: Link = FIG7["link"]) -> Table:
    """For each N: the ring–tree and ring–double-tree crossovers on ``link``, and which of ring,
    tree and the pipelined double tree is fastest for each DDP bucket size."""
    a, b = link.alpha, link.beta
    rows = []
    for p in ps:
        row = {"p": p, "x_tree": crossover("ring", "tree", p, a, b), "x_dtree": crossover("ring", "double_tree", p, a, b)}
        for i, n in enumerate(buckets):
            t = {x: predict("all_reduce", x, p, n, a, b) for x in ("ring", "tree")}
            t["double_tree"] = double_tree_optimum(p, n, a, b)[1]
            row[f"b{i}"] = min(t, key=t.get)
            row[f"t{i}"] = t
        rows.append(row)
    heads = [fmt_bytes(n) for n in buckets]
    return Table(
        key="ch1-buckets",
        title=bilingual(f"Where the DDP buckets fall ({display_name('all_reduce', 'double_tree')} pipelined at its "
                        f"best chunk count; α = {fmt_time(a, 3)}, β = {b / GB:g} GB/s)",
                        f"DDP 梯度桶落在哪个区间（{display_name('all_reduce', 'double_tree', 'zh')}按最佳块数流水；"
                        f"α = {fmt_time(a, 3)}，β = {b / GB:g} GB/s）"),
        columns=["p", "x_tree", "x_dtree", "b0", "b1"],
        headers={"en": ["GPUs N", "ring = tree at", "ring = double tree at"] + [f"fastest at {h}" for h in heads],
                 "zh": ["GPU 数 N", "ring 与树相交于", "ring 与双二叉树相交于"] + [f"{h} 时最快" for h in heads]},
        rows=rows,
        formats={"p": lambda p: f"{p:,}", "x_tree": fmt_bytes, "x_dtree": fmt_bytes},
        labels={lang: {x: display_name("all_reduce", x, lang) for x in ("ring", "tree", "double_tree")}
                for lang in ("en", "zh")},
    )


# ============================================================================ Table 2
TABLE2 = {
    "ring": {"steps": ("2(N−1)", lambda N: 2 * (N - 1)), "bw": ("2(N−1)/N", lambda N: 2 * (N - 1) / N),
             "constraint": ("none", "无")},
    "tree": {"steps": ("2⌈log₂N⌉", lambda N: 2 * math.ceil(math.log2(N))),
             "bw": ("2⌈log₂N⌉", lambda N: 2 * math.ceil(math.log2(N))), "constraint": ("none", "无")},
    "rabenseifner": {"steps": ("2log₂N", lambda N: 2 * math.log2(N)), "bw": ("2(N−1)/N", lambda N: 2 * (N - 1) / N),
                     "constraint": ("N a power of two (otherwise {extra} more steps at N = {odd})",
                                    "N 为 2 的幂（否则 N = {odd} 时多 {extra} 步）")},
    "double_tree": {"steps": ("2(k + D − 1)", None), "bw": ("2 + c/k → 2", None),
                    "constraint": ("two trees, each rank inner in at most one", "两棵树，每个 rank 至多在一棵中是内部节点")},
}
"""Table 2's symbolic columns (text, and the function of N the measured column must equal;
for the double tree: k chunks per tree, D the trees' depth, c a constant of N)."""


def table2(p: int = 256, link: Link = FIG7["link"]) -> Table:
    """Table 2: per algorithm the α steps and the bandwidth coefficient b of T = steps·α +
    b·M/β, symbolic and measured on the simulator at ``p`` ranks (:func:`commbook.book.cheatsheet.measure`),
    and whether b meets the lower bound 2(N−1)/N."""
    bound = lower_bound_bytes("all_reduce", p, 1.0)
    odd, extra = p - 1, alpha_steps_fold(p - 1)
    rows = []
    for name, spec in TABLE2.items():
        c = measure("all_reduce", name, p, link)
        b = c.bandwidth[0]              # the double tree: the limit of 2 + c/k for many chunks
        status = "yes" if math.isclose(b, bound, rel_tol=1e-9) else ("near" if b / bound < 1.01 else "no")
        bw = f"{round(b, 9):.4g}" + (f" + {round(c.bandwidth[1], 9):.4g}/k" if c.pipelined else "")
        rows.append({"algo": name, "steps_f": spec["steps"][0], "steps": c.rounds_text(), "bw_f": spec["bw"][0],
                     "bw": bw, "optimal": status, "ratio": b / bound,
                     "constraint": spec["constraint"][0].format(extra=extra, odd=odd), "cost": c})
    labels = {"en": {}, "zh": {"yes": "是", "no": "否", "near": "接近"}}
    for name, spec in TABLE2.items():
        labels["en"][name] = display_name("all_reduce", name, "en")
        labels["zh"][name] = display_name("all_reduce", name, "zh")
        labels["zh"][spec["constraint"][0].format(extra=extra, odd=odd)] = spec["constraint"][1].format(extra=extra, odd=odd)
    labels["en"].update({"yes": "yes", "no": "no", "near": "nearly (as k grows)"})
    labels["zh"]["near"] = "接近（块数越多越接近）"
    return Table(
        key="ch1-table2",
        title=bilingual(f"Table 2: all-reduce algorithms compared (measured on the simulator at N = {p})",
                        f"表 2：all-reduce 算法比较（N = {p} 时在模拟器上测得）"),
        columns=["algo", "steps_f", "steps", "bw_f", "bw", "optimal", "constraint"],
        headers={"en": ["Algorithm", "α steps", f"at N = {p}", "bandwidth term × M/β", f"at N = {p}",
                        "bandwidth-optimal?", "constraint"],
                 "zh": ["算法", "α 步数", f"N = {p} 时", "带宽项 × M/β", f"N = {p} 时", "带宽最优？", "限制"]},
        rows=rows, labels=labels,
        notes=bilingual_notes((
            f"Lower bound of the bandwidth term: 2(N−1)/N = {bound:.4g} at N = {p}. The double tree is "
            "pipelined in k chunks per tree; D is the depth of its trees.",
            f"带宽项的下界为 2(N−1)/N，N = {p} 时是 {bound:.4g}。双二叉树每棵树切成 k 块流水；D 是树的深度。")),
        meta={"bound": bound, "p": p},
    )


def alpha_steps_fold(p: int) -> int:
    """Extra α steps of Rabenseifner's all-reduce on ``p`` ranks (not a power of two) over
    2⌊log₂p⌋: MPICH's fold and unfold, read from the closed form at n = 0, α = 1."""
    return round(predict("all_reduce", "rabenseifner", p, 0.0, 1.0, 1.0)) - 2 * (p.bit_length() - 1)


# ============================================================================ switch point
def switch_point(p: int, link: Link) -> dict:
    """The ring–tree switch point on ``p`` ranks of ``link``: the chapter's N·α·β/log₂N, the
    cruder N·α·β, and the exact size where the closed forms meet."""
    a, b = link.alpha, link.beta
    return {"p": p, "link": link, "approx": crossover_tree_ring(p, a, b, exact=False), "crude": p * a * b,
            "exact": crossover_tree_ring(p, a, b, exact=True), "numeric": crossover("ring", "tree", p, a, b)}


def _terms(name: str, p: int, n: float, link: Link) -> dict:
    lat = predict("all_reduce", name, p, 0.0, link.alpha, link.beta)
    total = predict("all_reduce", name, p, n, link.alpha, link.beta)
    return {"latency": lat, "bandwidth": total - lat, "total": total}


def nm15(p: int = 64, n: float = 1 * MB, ten: float = 10 * MB, link: Link = BOX_LINKS["nm1.5"]) -> dict:
    """Napkin Math 1.5: ring against tree at ``n`` and at ``ten`` on ``p`` GPUs of ``link``,
    each split into its latency and bandwidth terms; the margin, the ratios, and the switch
    points (:func:`switch_point`).  Also the pitfall's comparison: the tree's bandwidth excess
    over the ring's against the ring's latency excess over the tree's."""
    ring, tree = _terms("ring", p, n, link), _terms("tree", p, n, link)
    return {"p": p, "n": n, "link": link, "ring": ring, "tree": tree,
            "margin": ring["total"] - tree["total"], "margin_share": 1 - tree["total"] / ring["total"],
            "lat_x": ring["latency"] / tree["latency"], "bw_x": tree["bandwidth"] / ring["bandwidth"],
            "switch": switch_point(p, link), "ten": ten,
            "ten_ring": _terms("ring", p, ten, link), "ten_tree": _terms("tree", p, ten, link),
            "ring_lat_excess": ring["latency"] - tree["latency"],
            "tree_bw_excess": tree["bandwidth"] - ring["bandwidth"]}


def nm15_table(x: dict | None = None) -> Table:
    """Napkin Math 1.5's table: latency, bandwidth and total of ring and tree, at the box's
    size (first two rows) and at ten times it."""
    x = nm15() if x is None else x
    rows = [{"n": x["n"], "algo": a, **x[a]} for a in ("ring", "tree")]
    rows += [{"n": x["ten"], "algo": a, **x[f"ten_{a}"]} for a in ("ring", "tree")]
    us2 = lambda t: f"{t / us:,.3f}".rstrip("0").rstrip(".") + " µs"
    link = x["link"]
    return Table(
        key="ch1-nm1.5",
        title=bilingual(f"Ring against tree on {x['p']} GPUs: {fmt_bytes(x['n'])} and {fmt_bytes(x['ten'])} "
                        f"(α = {fmt_time(link.alpha, 3)}, β = {link.beta / GB:g} GB/s)",
                        f"ring 对比树：{x['p']} 块 GPU 上的 {fmt_bytes(x['n'])} 与 {fmt_bytes(x['ten'])}"
                        f"（α = {fmt_time(link.alpha, 3)}，β = {link.beta / GB:g} GB/s）"),
        columns=["n", "algo", "latency", "bandwidth", "total"],
        headers={"en": ["Message", "Algorithm", "Latency term", "Bandwidth term", "Total"],
                 "zh": ["消息", "算法", "延迟项", "带宽项", "合计"]},
        rows=rows, formats={"n": fmt_bytes, "latency": us2, "bandwidth": us2, "total": us2},
        labels={lang: {a: display_name("all_reduce", a, lang) for a in ("ring", "tree")} for lang in ("en", "zh")},
    )


def checkpoint13(link: Link = BOX_LINKS["cp1.3"], p: int = 256, n: float = 10 * MB) -> dict:
    """Checkpoint 1.3, question 2: the switch point on ``p`` GPUs of ``link`` and the choice
    for an ``n``-byte buffer."""
    t = {a: _terms(a, p, n, link) for a in ("ring", "tree")}
    return {"switch": switch_point(p, link), "n": n, **t, "choice": min(t, key=lambda a: t[a]["total"])}
