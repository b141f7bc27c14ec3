"""Chapter §1.5, the figures, each drawn from the simulator's per-link bytes
(``RunResult.link_bytes``) and labelled in ``lang``:

* :func:`fig_hierarchical` (Figure 8): the hierarchical all-reduce on 2 nodes x 8 GPUs with
  one NIC per GPU on 8 rails — the cluster with each rail's bytes, the bytes per GPU of
  every phase on NVLink and on NICs, and the leader-based variant's NIC bytes;
* :func:`fig_in_network` (Figure 9): a software reduction to one GPU against in-switch
  reduction on a tree of 2 leaf switches x 2 GPUs, bytes per link each way, and the
  speed-up of in-switch reduction over the ring, the binomial tree and the star;
* :func:`fig_torus` (Figure 10): the all-reduce on a 4x4 torus, every directed link
  coloured by the bytes it carried, for one ring of 16, by dimension, and a full ring per
  dimension.

Artists that carry data have a ``gid`` so that tests read them back.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ... import collectives as coll
from ...collectives.ring import allreduce_ring
from ...collectives.tiers import tier_phases
from ...comm_sim import RunResult, VirtualCluster
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from ...topology import SwitchTree, Torus, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_time
from ..p5.allreduce import sharp_gain
from ..text import texts
from ..diagrams import (blank_axes as _blank, curve as _curve, draw_nodes as _draw_nodes,
                        grid_positions as _grid_pos, torus_links as _torus_links, wrap_bulge as _wrap_bulge)
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from .hierarchy_numbers import SharpCurves, sharp_curves, sharp_sim
from .hierarchy_routing import TORUS, TORUS_VARIANTS, torus_runs

__all__ = ["FIG8", "Fig8Data", "fig8_data", "fig_hierarchical", "FIG9", "fig9_runs", "fig_in_network", "fig_torus"]

T = texts("ch1")
K = "hierarchy_figures."

_LAB = T.labels(K + "lab.")


def _per(res: RunResult, suffix: str) -> dict[str, float]:
    return {name: float(b) for name, b in zip(res.link_names, res.link_bytes) if name.endswith(suffix)}


# ============================================================================ Figure 8
FIG8 = {"nodes": 2, "gpus_per_node": 8, "n": 1 * GB, "intra": NVLINK4_CHAPTER, "inter": IB_NDR_CHAPTER}
"""Figure 8's cluster: 2 nodes x 8 GPUs (as drawn in the chapter, with all 8), 1 GB, Table 1's links."""


@dataclass(frozen=True)
class Fig8Data:
    """:func:`fig8_data`: the cluster, the buffer, each phase run alone (``{"time", "nvlink",
    "nic", "leaf"}``: its seconds and the bytes per port), and per all-reduce (``hierarchical``,
    ``leader``) the bytes of each NIC and the time."""
    topology: TwoLevel
    n_bytes: float
    phases: dict
    nic: dict
    times: dict


def fig8_data(nodes: int = FIG8["nodes"], gpus_per_node: int = FIG8["gpus_per_node"], n: float = FIG8["n"],
              intra: Link = FIG8["intra"], inter: Link = FIG8["inter"]) -> Fig8Data:
    """Every phase of the rail-based hierarchical all-reduce run alone (its time and the
    bytes on every NVLink port, NIC and leaf switch), and the whole rail-based and
    leader-based all-reduces (their times and NIC bytes)."""
    topo = TwoLevel(nodes, gpus_per_node, intra, inter)
    c = VirtualCluster(topo)
    phases = {}
    for name, rounds in tier_phases(topo, n, True, allreduce_ring):
        r = c.run(rounds)
        phases[name] = {"time": r.time, "nvlink": _per(r, ".nvlink.out"),
                        "nic": {k: v for k, v in _per(r, ".out").items() if ".nic" in k}, "leaf": _per(r, "")}
    whole = {a: coll.all_reduce(c, nbytes=n, algorithm=a) for a in ("hierarchical", "leader")}
    nic = {a: {k: v for k, v in _per(r, ".out").items() if ".nic" in k} for a, r in whole.items()}
    return Fig8Data(topo, n, phases, nic, {a: r.time for a, r in whole.items()})


def fig_hierarchical(lang: str = "en", data: Fig8Data | None = None) -> Figure:
    """Figure 8 (gids: ``"rail:<g>"`` leaf labels, ``"bytes:<phase>:<nvlink|nic>"`` bars of
    panel b, ``"nic:<hierarchical|leader>:<g>"`` bars of panel c)."""
    d = fig8_data() if data is None else data
    topo, ph = d.topology, d.phases
    N, G = topo.nodes, topo.gpus_per_node
    rail_phase = ph["rail all-reduce"]
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 8.6))
        gs = fig.add_gridspec(3, 1, height_ratios=(1.0, 1.15, 1.0))  # (a), (b), (c) stacked
        ax = fig.add_subplot(gs[0])
        pitch = G + 1.5
        pos = {a * G + g: (a * pitch + g, 0.0) for a in range(N) for g in range(G)}
        mid = ((N - 1) * pitch + G - 1) / 2
        spread = min(2.2, ((N - 1) * pitch + G - 1) / max(G - 1, 1))  # room for each label
        leaf = {g: (mid + (g - (G - 1) / 2) * spread, 2.6) for g in range(G)}
        for dev, (x, y) in pos.items():
            g = dev % G
            nic_b = rail_phase["nic"][f"gpu{dev}.nic.out"]
            ax.plot([x, leaf[g][0]], [y + 0.25, leaf[g][1] - 0.2], color=PALETTE[g % len(PALETTE)],
                    lw=0.6 + 2.5 * nic_b / max(rail_phase["nic"].values()), zorder=1)
        for a in range(N):
            ax.add_patch(FancyBboxPatch((a * pitch - 0.55, -0.5), G - 1 + 1.1, 1.0, boxstyle="round,pad=0.05",
                                        fc="0.95", ec="0.6", zorder=0))
            ax.text(a * pitch - 0.5, -0.62, L["node"].format(a=a), ha="left", va="top", fontsize=SMALL_PT)
            ax.plot([a * pitch, a * pitch + G - 1], [-0.28, -0.28], color="0.55", lw=4, solid_capstyle="round")
        _draw_nodes(ax, pos, list(pos), size=190, fontsize=SMALL_PT)
        for g, (x, y) in leaf.items():
            ax.scatter([x], [y], s=120, marker="s", color=PALETTE[g % len(PALETTE)], zorder=3)
            ax.text(x, y + 0.22, L["rail"].format(g=g, b=fmt_bytes(rail_phase["leaf"][f"leaf{g}"])), ha="center",
                    va="bottom", fontsize=SMALL_PT, gid=f"rail:{g}")
        nv = max(ph["node reduce-scatter"]["nvlink"].values())
        ax.text(mid, -1.05, L["nvswitch"].format(b=fmt_bytes(nv)), ha="center", va="top", fontsize=SMALL_PT, color="0.3")
        ax.set_title(L["f8_a"].format(N=N, G=G))
        _blank(ax)
        ax.set_ylim(-1.5, 4.0)

        bx = fig.add_subplot(gs[1])
        names = list(ph)
        x = np.arange(len(names))
        for k, (cls, col) in enumerate((("nvlink", PALETTE[0]), ("nic", PALETTE[3]))):
            vals = [max(ph[nm][cls].values(), default=0.0) / MB for nm in names]
            bars = bx.bar(x + (k - 0.5) * 0.38, vals, 0.38, color=col, label=L[cls])
            for nm, bar, v in zip(names, bars, vals):
                bar.set_gid(f"bytes:{nm}:{cls}")
                if v:
                    bx.text(bar.get_x() + bar.get_width() / 2, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=SMALL_PT)
        for i, nm in enumerate(names):
            bx.text(i, -0.2, fmt_time(ph[nm]["time"], 3), ha="center", va="top", fontsize=SMALL_PT,
                    transform=bx.get_xaxis_transform(), color="0.3")
        bx.set_xticks(x, [L[f"ph_{nm}"] for nm in names], fontsize=SMALL_PT)
        bx.set_ylabel(L["mb"])
        bx.set_title(L["f8_b"])
        bx.legend(loc="upper center")

        cx = fig.add_subplot(gs[2])
        gx = np.arange(G)
        for k, (a, col) in enumerate((("hierarchical", PALETTE[3]), ("leader", PALETTE[1]))):
            vals = [d.nic[a].get(f"gpu{g}.nic.out", 0.0) / MB for g in gx]
            key = "rails" if a == "hierarchical" else "leader"
            bars = cx.bar(gx + (k - 0.5) * 0.4, vals, 0.4, color=col,
                          label=L[key].format(t=fmt_time(d.times[a], 3)))
            for g, bar in zip(gx, bars):
                bar.set_gid(f"nic:{a}:{g}")
        cx.set_xticks(gx)
        cx.set_xlabel(L["gpu"])
        cx.set_ylabel(L["mb"])
        cx.set_title(L["f8_c"])
        cx.legend(loc="upper right")
    return fig


# ============================================================================ Figure 9
FIG9 = {"leaves": 2, "gpus_per_leaf": 2, "n": 100 * MB, "link": IB_NDR_CHAPTER,
        "sizes": np.logspace(3, 10, 57), "sim_sizes": (1 * KB, 100 * KB, 10 * MB, 1 * GB)}
"""Figure 9's tree (2 leaf switches x 2 GPUs, InfiniBand NDR of Table 1, 100 MB per GPU)
and panel (c)'s sizes (1 KB to 10 GB; the simulator at four of them)."""


def fig9_runs(n: float = FIG9["n"]) -> dict[str, RunResult]:
    """The flat software reduction to GPU 0 and back (``naive``) and in-switch reduction
    (``innet``) on Figure 9's tree."""
    c = VirtualCluster(SwitchTree(FIG9["leaves"], FIG9["gpus_per_leaf"], FIG9["link"]))
    return {a: coll.all_reduce(c, nbytes=n, algorithm=a) for a in ("naive", "innet")}


def _tree_panel(ax, topo: SwitchTree, res: RunResult, n: float, key: str, L: dict) -> None:
    P, k = topo.p, topo.gpus_per_leaf
    b = dict(zip(res.link_names, (float(x) for x in res.link_bytes)))
    gpu = {d: (d + 1.2 * (d // k), 0.0) for d in range(P)}
    leaf = {l: (l * (k + 1.2) + (k - 1) / 2, 1.2) for l in range(topo.leaves)}
    root = ((P - 1 + 1.2 * (topo.leaves - 1)) / 2, 2.4)
    top = max(b.values())
    for name, p0, p1 in ([(f"gpu{d}", gpu[d], leaf[int(topo.leaf_of(d))]) for d in range(P)]
                         + [(f"leaf{l}", leaf[l], root) for l in leaf]):
        up, down = b[f"{name}.up"], b[f"{name}.down"]
        ax.plot(*_curve(p0, p1), color="0.45", lw=0.8 + 3.5 * (up + down) / (2 * top), zorder=1)
        right = p0[0] > p1[0]                      # labels on the outer side of each edge
        t = 0.4 if name.startswith("gpu") else 0.5
        xm, ym = p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1])
        ax.text(xm + (0.1 if right else -0.1), ym, f"↑{up / n:g}n ↓{down / n:g}n", fontsize=SMALL_PT,
                ha="left" if right else "right", va="center",
                gid=f"{key}:{name}", bbox=dict(fc="white", ec="none", pad=0.4, alpha=0.85), zorder=4)
    sw_col = PALETTE[2] if key == "innet" else "0.6"
    for xy in list(leaf.values()) + [root]:
        ax.scatter(*xy, s=220, marker="s", color=sw_col, zorder=3)
        ax.text(xy[0], xy[1] + 0.2, L["switch"] if key == "innet" else L["fwd"], ha="center", va="bottom",
                fontsize=SMALL_PT, color="0.3")
    _draw_nodes(ax, gpu, list(range(P)), size=260, fontsize=SMALL_PT)
    if key == "naive":
        ax.scatter(*gpu[0], s=330, facecolor="none", edgecolor=PALETTE[3], lw=2, zorder=5)
        ax.text(0, -0.3, L["reducer"], ha="center", va="top", fontsize=SMALL_PT, color=PALETTE[3])
    _blank(ax)
    ax.set_ylim(-0.6, 2.9)


def fig_in_network(lang: str = "en", runs: dict | None = None, curves: "SharpCurves | None" = None,
                   sim: dict | None = None) -> Figure:
    """Figure 9 (gids: ``"naive:<link>"`` / ``"innet:<link>"`` edge labels "↑an ↓bn" with
    ``<link>`` = ``gpu<d>`` or ``leaf<l>``; ``"ratio:<algo>"`` curves, ``"sim:<algo>"``
    simulator points, ``"measured"``)."""
    runs = fig9_runs() if runs is None else runs
    curves = sharp_curves(FIG9["sizes"]) if curves is None else curves
    sim = sharp_sim(FIG9["sim_sizes"]) if sim is None else sim
    topo = SwitchTree(FIG9["leaves"], FIG9["gpus_per_leaf"], FIG9["link"])
    gain = sharp_gain()
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 10.5))
        axes = fig.subplots(3, 1, height_ratios=(1.0, 1.0, 1.0))  # stacked for the column
        for ax, key in zip(axes, ("naive", "innet")):
            _tree_panel(ax, topo, runs[key], FIG9["n"], key, L)
            ax.set_title(L[f"f9_{'a' if key == 'naive' else 'b'}"].format(t=fmt_time(runs[key].time, 3)), fontsize=10)
        cx = axes[2]
        for i, a in enumerate(("ring", "tree", "naive")):
            col = PALETTE[(0, 2, 4)[i]]
            cx.plot(curves.sizes, curves.ratio[a], color=col, gid=f"ratio:{a}", label=L[a])
            cx.plot(FIG9["sim_sizes"], sim[a], ls="none", marker="o", mfc="white", color=col, gid=f"sim:{a}")
        cx.plot([10 * GB], [1 + gain], marker="*", ms=12, ls="none", color=PALETTE[3], gid="measured",
                label=L["measured"].format(g=fmt_pct(gain, 2)))
        log_axis(cx, "x", "bytes")
        cx.set_yscale("log")
        cx.set_yticks([1, 2, 3, 5, 10, 14], ["1", "2", "3", "5", "10", "14"])
        cx.set_xlabel(L["size"])
        cx.set_ylabel(L["x"])
        cx.set_title(L["f9_c"].format(p=curves.p), fontsize=10)
        cx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=SMALL_PT)
    return fig


# ============================================================================ Figure 10
def fig_torus(lang: str = "en", runs: dict | None = None) -> Figure:
    """Figure 10 on :data:`~.hierarchy_routing.TORUS` at its largest size: every directed
    link coloured by the bytes it carried, in multiples of M (gid ``"link:<variant>:<name>"``
    with the resource name, e.g. ``"gpu5->gpu6 (dim 0, +)"``; unused links are light grey); titles with
    gid ``"title:<variant>"``."""
    runs = torus_runs() if runs is None else runs
    topo = Torus(TORUS["dims"], TORUS["link"])
    pos = _grid_pos(topo)
    norm = Normalize(0, max(r.run.link_bytes.max() / r.n_bytes for r in runs.values()))
    cmap = matplotlib.colormaps["YlOrRd"]
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 3.6 * math.ceil(len(TORUS_VARIANTS) / 2) + 0.6))
        axes = fig.subplots(math.ceil(len(TORUS_VARIANTS) / 2), 2).ravel()  # two per row
        for ax, v in zip(axes, TORUS_VARIANTS):
            r = runs[v]
            for i, u, w in _torus_links(topo):
                val = r.run.link_bytes[i] / r.n_bytes
                xs, ys = _curve(pos[u], pos[w], _wrap_bulge(pos[u], pos[w]), shift=0.07)
                ax.plot(xs, ys, color=cmap(norm(val)) if val > 0 else "0.88", lw=2.6 if val > 0 else 1.0,
                        solid_capstyle="butt", zorder=1, gid=f"link:{v}:{topo.resource_names[i]}")
            _draw_nodes(ax, pos, list(range(topo.p)), size=170)
            title = L[f"f10_{v}"].format(p=topo.p) + "\n" + L["f10_sub"].format(s=r.steps, b=r.sent_m)
            ax.set_title(title, fontsize=10, gid=f"title:{v}")
            _blank(ax)
            ax.set_xlim(-0.75, TORUS["dims"][1] - 0.55)
            ax.set_ylim(-TORUS["dims"][0] + 0.55, 0.75)
        bar = dict(ax=list(axes), orientation="horizontal", fraction=0.08, aspect=25)
        if len(axes) > len(TORUS_VARIANTS):  # the free cell of the grid holds the colour bar
            for ax in axes[len(TORUS_VARIANTS):]:
                ax.set_axis_off()
            bar = dict(cax=axes[-1].inset_axes((0.05, 0.45, 0.9, 0.08)), orientation="horizontal")
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), label=L["f10_bar"], **bar)
    return fig
