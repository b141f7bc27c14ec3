"""Figures of lecture P5, one import for the pages: topologies, ring mappings on a
torus, hierarchical all-reduce and LLM inference are drawn here; the six collectives and
the step diagrams (:mod:`.steps`) and the algorithm costs (:mod:`.figures_algorithms`)
are re-exported from their modules.

Every function takes ``lang`` ("zh" or "en"), labels itself from
:data:`commbook.book.labels.LABELS` and returns a :class:`matplotlib.figure.Figure`.  No
number is typed in: each figure computes what it draws with :mod:`commbook` (the
simulator in :mod:`commbook.collectives`, the closed forms in :mod:`commbook.cost`,
the metrics and routes of :mod:`commbook.topology`).  Artists that carry data have a
``gid`` (e.g. ``"t:ring"``, ``"state3:2:1"``) so that tests and readers can find them.
"""
from __future__ import annotations

import math
from typing import Sequence

import matplotlib
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from ... import collectives as coll
from ...collectives import t_formula
from ... import llm
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ..diagrams import blank_axes, curve, draw_nodes, grid_positions, torus_links, wrap_bulge
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, label, log_axis
from ...topology import Ring, Switch, Topology, Torus, TwoLevel, ring_order
from ...units import KB, MB, fmt_bytes, fmt_rate, fmt_time
from .figures_algorithms import (ALLREDUCE_LINES, SCALING_LINES, fig_allreduce_vs_p,  # noqa: F401
                                 fig_allreduce_vs_size, fig_broadcast_pipeline)
from .steps import EXAMPLE_1_1, fig_allreduce_steps, fig_collectives, fig_ring_trace  # noqa: F401

__all__ = [
    "fig_topologies", "fig_collectives", "fig_ring_trace", "fig_allreduce_steps",
    "fig_allreduce_vs_size", "fig_allreduce_vs_p", "fig_broadcast_pipeline", "fig_ring_mapping",
    "fig_hierarchical_speedup", "fig_tp_decode_share", "fig_kv_transfer",
]

# ============================================================================ 1 topologies
def _route_edges(topo: Topology) -> list[tuple]:
    """Every hop of every route between two devices: the graph the topology wires up."""
    edges = set()
    for s in range(topo.p):
        for d in range(topo.p):
            path = topo.route(s, d)
            edges.update(tuple(sorted(e, key=str)) for e in zip(path, path[1:]))
    return sorted(edges, key=str)


def _circle(p: int, r: float = 1.0) -> dict:
    a = np.pi / 2 - 2 * np.pi * np.arange(p) / p
    return {d: (r * np.cos(a[d]), r * np.sin(a[d])) for d in range(p)}


def _two_level_pos(topo: TwoLevel) -> dict:
    """Each node's GPUs in two rows (room for readable labels), its NVSwitch below, the
    leaves spread over the nodes' width, the spine on top."""
    G, N = topo.gpus_per_node, topo.nodes
    cols = math.ceil(G / 2)
    pitch = cols + 1.0
    pos = {}
    for a in range(N):
        for g in range(G):
            pos[a * G + g] = (a * pitch + (g % cols - (cols - 1) / 2), -float(g // cols))
        pos[f"nvswitch{a}"] = (a * pitch, -2.2)
    mid = (N - 1) * pitch / 2
    spread = max((N - 1) * pitch / max(G - 1, 1), 1.6)
    for g in range(G):
        pos[f"leaf{g}"] = (mid + (g - (G - 1) / 2) * spread, 1.6)
    pos["spine"] = (mid, 3.0)
    return pos


def _edge_color(u, v) -> str:
    """Rail edges (GPU g to leaf g) take rail g's colour; all others are grey."""
    for a, b in ((u, v), (v, u)):
        if isinstance(a, str) and a.startswith("leaf") and not isinstance(b, str):
            return PALETTE[int(a[4:]) % len(PALETTE)]
    return "0.6"


def _switch_label(k: str, lang: str) -> tuple[str | None, bool]:
    """Label of a switch node and whether it goes above it (one NVSwitch is named)."""
    if k in ("switch", "spine"):
        return label(f"node_{k}", lang), True
    if k.startswith("leaf"):
        return label("node_leaf", lang, g=k[4:]), True
    return (label("node_nvswitch", lang), False) if k == "nvswitch0" else (None, False)


def _draw_topology(ax, topo: Topology, pos: dict, title: str, lang: str) -> None:
    for u, v in _route_edges(topo):
        bulge = wrap_bulge(pos[u], pos[v]) if isinstance(topo, Torus) and topo.nd > 1 else (0, 0)
        xs, ys = curve(pos[u], pos[v], bulge)
        ax.plot(xs, ys, color=_edge_color(u, v), lw=1.0, zorder=1)
    switches = [k for k in pos if isinstance(k, str)]
    size = 110 if isinstance(topo, TwoLevel) else 150
    draw_nodes(ax, pos, switches, switch=True, size=size)
    draw_nodes(ax, pos, list(range(topo.p)), size=size)
    for k in switches:
        text, above = _switch_label(k, lang)
        if text:
            ax.text(pos[k][0], pos[k][1] + (0.2 if above else -0.2), text, ha="center",
                    va="bottom" if above else "top", fontsize=SMALL_PT, color="0.3",
                    bbox=dict(fc="white", ec="none", pad=0.5, alpha=0.8), zorder=4)
    metrics = label("topo_metrics", lang, ports=topo.ports_per_device, diam=topo.diameter,
                    bis=fmt_rate(topo.bisection_bandwidth))
    ax.set_title(f"{title}\n{metrics}", fontsize=SMALL_PT, gid=f"title:{type(topo).__name__}")
    blank_axes(ax)


def fig_topologies(lang: str = "en", p: int = 16, link: Link = ICI_V5E) -> Figure:
    """Four networks of ``p`` devices drawn as graphs: a switch, a ring, a square 2D
    torus and a two-level cluster (p/4 nodes x 4 GPUs, NVSwitch in the node, GPU g of
    every node on rail (leaf switch) g, leaves under a spine).

    The edges are the hops of :meth:`Topology.route` between every pair of devices; each
    title carries the topology's ``ports_per_device``, ``diameter`` and
    ``bisection_bandwidth`` (the direct networks on ``link``, the two-level one on
    NVLINK4 inside and IB_NDR across nodes, as in the lecture's demo 01-2).
    """
    side = int(round(np.sqrt(p)))
    if side * side != p or p % 4:
        raise ValueError(f"fig_topologies needs p = a square that 4 divides, got {p}")
    torus, two = Torus((side, side), link), TwoLevel(p // 4, 4, NVLINK4, IB_NDR)
    panels = [
        (Switch(p, link), {**_circle(p), "switch": (0.0, 0.0)}, "topo_switch"),
        (Ring(p, link), _circle(p), "topo_ring"),
        (torus, grid_positions(torus), "topo_torus"),
        (two, _two_level_pos(two), "topo_twolevel"),
    ]
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 7.2))
        for ax, (topo, pos, key) in zip(fig.subplots(2, 2).ravel(), panels):
            title = label(key, lang, dims=f"{side}×{side}", nodes=two.nodes, gpus=4)
            _draw_topology(ax, topo, pos, title, lang)
        fig.suptitle(label("topo_title", lang))
    return fig


# ============================================================================ 7 ring mapping
MAPPING_PANELS = (("snake", None), ("row_major", None), ("random", 0))
"""The mappings of :func:`fig_ring_mapping`: kind and seed for :func:`ring_order`."""


def fig_ring_mapping(lang: str = "en", n: float = 64 * MB, link: Link = ICI_V5E,
                     dims: tuple[int, int] = (4, 4),
                     panels: Sequence[tuple[str, int | None]] = MAPPING_PANELS) -> Figure:
    """A ring all-reduce of ``n`` on a 2D torus under rank-to-chip mappings, one panel
    each: ``panels`` holds (kind, seed) for :func:`commbook.topology.ring_order`, by
    default snake, row-major and random with seed 0.

    Each panel draws the logical ring (arrows from rank r to rank r+1; nodes show the
    rank) over the torus, and colours every directed link by the bytes it carried in
    the simulated run (``RunResult.link_bytes`` of :func:`commbook.collectives.all_reduce`,
    links named by ``Topology.resource_names``).  Titles give the simulated time over
    the ideal ring time :func:`commbook.collectives.t_formula` ``("ring", p, n)``; they have
    gid ``"ratio:<kind>"``.
    """
    topo = Torus(dims, link)
    pos = grid_positions(topo)
    ideal = t_formula("ring", topo.p, n, link.alpha, link.beta)
    runs = []
    for kind, seed in panels:
        order = ring_order(dims, kind, seed)
        runs.append((kind, seed, order, coll.all_reduce(VirtualCluster(topo), nbytes=n, ranks=order)))
    norm = Normalize(0, max(r.link_bytes.max() for *_, r in runs) / MB)
    cmap = matplotlib.colormaps["YlOrRd"]
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 3.3 * math.ceil(len(runs) / 2) + 0.8))
        axes = np.atleast_1d(fig.subplots(math.ceil(len(runs) / 2), 2)).ravel()  # two per row
        for ax, (kind, seed, order, res) in zip(axes, runs):
            for i, u, v in torus_links(topo):
                used = res.link_bytes[i] > 0
                xs, ys = curve(pos[u], pos[v], wrap_bulge(pos[u], pos[v]), shift=0.07)
                ax.plot(xs, ys, color=cmap(norm(res.link_bytes[i] / MB)) if used else "0.88",
                        lw=2.6 if used else 1.0, solid_capstyle="butt", zorder=1)
            ranked = {int(d): r for r, d in enumerate(order)}
            for r in range(topo.p):
                u, v = int(order[r]), int(order[(r + 1) % topo.p])
                ax.add_patch(FancyArrowPatch(pos[u], pos[v], connectionstyle="arc3,rad=0.25",
                                             arrowstyle="-|>", mutation_scale=7, color="0.15",
                                             lw=0.8, shrinkA=7, shrinkB=7, zorder=2))
            draw_nodes(ax, {ranked[d]: xy for d, xy in pos.items()}, list(range(topo.p)), size=170)
            name = label(f"map_{kind}", lang, seed=seed)
            ax.set_title(label("map_ratio", lang, name=name, r=res.time / ideal), fontsize=10,
                         gid=f"ratio:{kind}")
            blank_axes(ax)
            ax.set_xlim(-0.75, dims[1] - 0.55)
            ax.set_ylim(-dims[0] + 0.55, 0.75)
        bar = dict(ax=list(axes), orientation="horizontal", fraction=0.08, aspect=25)
        if len(axes) > len(runs):  # the free cell of the grid holds the colour bar
            for ax in axes[len(runs):]:
                ax.set_axis_off()
            bar = dict(cax=axes[-1].inset_axes((0.05, 0.45, 0.9, 0.08)), orientation="horizontal")
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), label=label("map_bytes", lang), **bar)
        fig.suptitle(label("map_title", lang, n=fmt_bytes(n), link=link.name, dims="×".join(map(str, dims))), fontsize=11)
    return fig


# ============================================================================ 8 hierarchical
def fig_hierarchical_speedup(lang: str = "en", gpus: int = 8, max_nodes: int = 64,
                             sizes: Sequence[float] = (64 * KB, 1 * MB, 256 * MB),
                             intra: Link = NVLINK4, inter: Link = IB_NDR, nccl: bool = True,
                             nics_per_node: int | None = None) -> Figure:
    """Speedup of the hierarchical all-reduce (ring reduce-scatter in the node, ring
    across nodes on each rail, ring all-gather in the node) over one flat ring of all
    GPUs (solid lines) and, with ``nccl``, over the ring NCCL runs (dashed: one channel
    per NIC, PXN), on ``TwoLevel(N, gpus, intra, inter, nics_per_node=..., pxn=True)`` for
    N = 1, 2, 4, ..., ``max_nodes``.

    All times come from size-only simulator runs of
    :func:`commbook.collectives.all_reduce` (``channels=1``, the default channels, and
    ``algorithm="hierarchical"``); lines have gid ``"speedup:<bytes>"`` (single ring) and
    ``"nccl:<bytes>"`` (NCCL's ring).  Below the dotted line at 1 the ring is faster.
    """
    nodes = 2 ** np.arange(0, int(np.log2(max_nodes)) + 1)
    speedup = {n: [] for n in sizes}
    vs_nccl = {n: [] for n in sizes}
    for N in nodes:
        c = VirtualCluster(TwoLevel(int(N), gpus, intra, inter, nics_per_node=nics_per_node, pxn=True))
        for n in sizes:
            hier = coll.all_reduce(c, nbytes=n, algorithm="hierarchical").time
            speedup[n].append(coll.all_reduce(c, nbytes=n, channels=1).time / hier)
            if nccl:
                vs_nccl[n].append(coll.all_reduce(c, nbytes=n).time / hier)
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 4.3))
        ax = fig.add_subplot()
        for i, n in enumerate(sizes):
            ax.plot(nodes, speedup[n], marker="o", ms=4, color=PALETTE[i], label=label("size_n", lang, n=fmt_bytes(n)),
                    gid=f"speedup:{n:g}")
            if nccl:
                ax.plot(nodes, vs_nccl[n], marker="s", ms=3.5, color=PALETTE[i], ls="--", mfc="white",
                        gid=f"nccl:{n:g}")
        ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
        log_axis(ax, "x", "plain", base=2)
        ax.set_xlim(nodes[0], nodes[-1])
        ax.set_ylim(bottom=0)
        ax.set_xlabel(label("hier_nodes", lang))
        ax.set_ylabel(label("hier_speedup", lang))
        ax.set_title(label("hier_title", lang, gpus=gpus, links=f"{intra.name} + {inter.name}"), fontsize=10)
        handles, labels = ax.get_legend_handles_labels()
        if nccl:
            for style, key in (("-", "hier_vs_single"), ("--", "hier_vs_nccl")):
                handles.append(Line2D([], [], color="0.25", ls=style))
                labels.append(label(key, lang))
        ax.legend(handles, labels, loc="center right", bbox_to_anchor=(1.0, 0.47), fontsize=SMALL_PT)
    return fig


# ============================================================================ §7 LLM inference
def fig_tp_decode_share(lang: str = "en", model: llm.DenseModel = llm.LLAMA31_70B, tp: int = 8,
                        batches: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
                        alphas: Sequence[float] = (2e-6, 20e-6), link: Link = NVLINK4) -> Figure:
    """Share of a tensor-parallel decode step spent in its all-reduces, against batch size:
    :func:`commbook.llm.tp_comm_time` (ring and recursive doubling, for each α) over
    :func:`commbook.llm.decode_step` (lines have gid ``"share:<algo>:<alpha>"``)."""
    xs = np.asarray(batches)
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 5.0))
        ax = fig.add_subplot()
        for i, (algo, alpha) in enumerate((a, al) for al in alphas for a in ("ring", "rd")):
            lk = Link(link.name, alpha, link.beta, link.source)
            share = []
            for b in batches:
                comm = llm.tp_comm_time(model, b, tp, algo, intra=lk)
                share.append(comm / (comm + llm.decode_step(model, b, tp=tp).time))
            ax.plot(xs, share, marker="o", ms=3.5, color=PALETTE[i], gid=f"share:{algo}:{alpha:g}",
                    ls="-" if alpha == alphas[0] else "--",
                    label=label("tp_line", lang, algo=label(f"algo_{algo}", lang), alpha=fmt_time(alpha)))
        log_axis(ax, "x", "plain", base=2)
        ax.set_ylim(0, 1)
        ax.set_xlabel(label("tp_batch", lang))
        ax.set_ylabel(label("tp_share", lang))
        ax.set_title(label("tp_title", lang, model=model.name, tp=tp), fontsize=10)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=SMALL_PT)
    return fig


def fig_kv_transfer(lang: str = "en", model: llm.DenseModel = llm.LLAMA31_70B,
                    tokens: Sequence[int] = (512, 1024, 2048, 4096, 8192, 16384, 32768),
                    tp: int = 8, link: Link = IB_NDR) -> Figure:
    """Disaggregated inference: time to move a prompt's KV cache over 1 and 8 NICs
    (:func:`commbook.llm.kv_transfer_time`), what stays exposed when layers are sent as
    they finish, and the prefill compute (:func:`commbook.llm.prefill_compute`)."""
    xs = np.asarray(tokens)
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 4.3))
        ax = fig.add_subplot()
        ax.plot(xs, [llm.prefill_compute(model, n, tp=tp) for n in tokens], color="0.3", lw=2,
                gid="prefill", label=label("kv_prefill", lang, tp=tp))
        for i, k in enumerate((1, 8)):
            ax.plot(xs, [llm.kv_transfer_time(model, n, k, link) for n in tokens], marker="o", ms=3.5,
                    color=PALETTE[i], gid=f"kv:{k}", label=label("kv_nics", lang, k=k))
        ax.plot(xs, [llm.kv_transfer_time(model, n, 8, link, layerwise=True) for n in tokens], ls=":",
                color=PALETTE[1], gid="kv:layerwise", label=label("kv_layer", lang))
        log_axis(ax, "x", "plain", base=2)
        log_axis(ax, "y", "time")
        ax.set_xlabel(label("kv_tokens", lang))
        ax.set_ylabel(label("kv_time", lang))
        ax.set_title(label("kv_title", lang, model=model.name, link=link.name), fontsize=10)
        ax.legend(loc="upper left", fontsize=SMALL_PT)
    return fig
