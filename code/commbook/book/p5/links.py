"""P5 §2–§3 (script 01): links, topologies, point-to-point costs.

Each ``demo_*`` function rebuilds one demo table as a :class:`commbook.book.tables.Table`
(the script prints it with ``to_text``, the pages show it with ``to_html``); §3's typed
results sit beside them: the shape of a topology (:class:`Shape`, demo 01-2 drawn from
:func:`topologies`), a DGX SuperPOD's wiring as the chapter states it, the point-to-point
times of demo 01-3 and one message on a ring with a given hop cost."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...checks import check_size
from ...collectives import send_recv
from ...comm_sim import VirtualCluster
from ...cost import effective_bandwidth
from ...hardware import (IB_HDR, IB_NDR, ICI_V5E, LINKS, NVLINK4, NVLINK5, PCIE_GEN5, ROCE_100G,
                         Link)
from ..tables import Table
from ..text import texts
from ...topology import Ring, Switch, Topology, Torus, TwoLevel
from ...units import KB, MB, fmt_bytes, fmt_pct, fmt_rate, fmt_time
from .common import balanced_dims

T = texts("p5")
LANGS = ("en", "zh")


SIZES: tuple[float, ...] = (4 * KB, 64 * KB, 256 * KB, 1 * MB, 16 * MB, 256 * MB)
"""Message sizes of demo 01-1 (decimal units): from 4 KB, through the half-bandwidth points
of IB (250 KB) and NVLink (900 KB), to 256 MB."""


def demo_01_1(links: Sequence[Link] = (NVLINK4, IB_NDR, ICI_V5E, NVLINK5, IB_HDR, PCIE_GEN5,
                                       ROCE_100G),
              sizes: Sequence[float] = SIZES) -> Table:
    """Demo 01-1 (lecture §2.2, common links): α, β, n½ = αβ of common links, and the
    effective bandwidth n/T(n) with its share of β at each message size.

    Cells of the size columns ``"at_<bytes>"`` are ``(bytes/s, fraction of β)`` pairs.
    Anchors: n½ NVLink 900 KB, IB 250 KB, ICI 45 KB; at 4 KB NVLink 1.99 GB/s (0.44 %),
    IB 0.79 GB/s (1.57 %), ICI 3.67 GB/s (8.2 %); at n½ every link gets exactly β/2.

    >>> demo_01_1([NVLINK4], [4e3]).cell(0, "at_4000")
    '1.99 GB/s (0.44%)'
    """
    sizes = tuple(float(check_size(n, "size")) for n in sizes)
    cols = [f"at_{int(n)}" for n in sizes]
    bw = lambda L, n: effective_bandwidth(n, L.alpha, L.beta)
    return Table(
        key="01-1",
        title=T("links.01_1_title"),
        columns=["link", "alpha", "beta", "n_half"] + cols,
        headers={lang: [T.get(k, lang) for k in ("links.h_link", "links.h_alpha", "links.h_beta", "links.h_nhalf")]
                 + [T.get("links.h_at", lang, size=fmt_bytes(n)) for n in sizes] for lang in LANGS},
        rows=[{"link": L.name, "alpha": L.alpha, "beta": L.beta, "n_half": L.n_half,
               **{c: (bw(L, n), bw(L, n) / L.beta) for c, n in zip(cols, sizes)}} for L in links],
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda v: fmt_rate(v, 3), "n_half": fmt_bytes,
                 **{c: (lambda cell: f"{fmt_rate(cell[0], 3)} ({fmt_pct(cell[1])})") for c in cols}},
        notes=T.pairs("links.01_1_note"),
        meta={"sizes": sizes},
    )


def demo_01_2(run: Topologies | None = None, **params) -> Table:
    """Demo 01-2 (lecture §3.1, the basic topologies): ports per device, diameter and
    bisection bandwidth of the five :func:`topologies` (``run``, else ``topologies(**params)``).

    Anchors (p = 64): switch 1 port / 2 hops / 1,440 GB/s; ring 2 / 32 / 90 GB/s;
    8×8 torus 4 / 8 / 720 GB/s; 4×4×4 torus 6 / 6 / 1,440 GB/s; two-level 8×8 2 / 4 /
    1,600 GB/s, i.e. 50 GB/s per GPU across nodes, 1/9 of NVLink's 450.
    "bisection per device" is the bisection bandwidth divided by the p/2 devices of
    one half: what each can send across the cut at the same time.
    """
    run = run or topologies(**params)
    shapes = (run.sw, run.ring, run.t2, run.t3, run.two)
    return Table(
        key="01-2",
        title=T("links.01_2_title", p=run.p),
        columns=["topology", "links", "ports", "diameter", "bisection", "per_device"],
        headers=T.pairs("links.h_topology", "links.h_links", "links.h_ports", "links.h_diameter",
                        "links.h_bisection", "links.h_per_device"),
        rows=[{"topology": en, "links": links, "ports": s.ports, "diameter": s.diameter, "bisection": s.bisection_Bps,
               "per_device": s.per_device_Bps} for ((en, _), links), s in zip(run.labels, shapes)],
        formats={"bisection": lambda v: fmt_rate(v, 3), "per_device": lambda v: fmt_rate(v, 3)},
        labels={"zh": {en: zh for (en, zh), _ in run.labels}},
        notes=dict(run.note),
    )


def demo_01_3(run: "P2P | None" = None, **params) -> Table:
    """Demo 01-3 (§3.2, point to point: distance and bandwidth): the time of one message, by
    size and path, of :func:`point_to_point` (``run``, else ``point_to_point(**params)``).

    Column "alpha": the start-up latency the message pays, α(1 + hop_alpha·(h − 1)) on the
    torus, one α through a switch whatever the hops.
    Anchors (ICI): 4 KB 1.09 / 2.09 / 4.09 / 8.09 µs for 1/2/4/8 hops; 64 MB 1,423–1,430 µs.
    """
    run = run or point_to_point(**params)
    sizes, paths = run.sizes, run.paths
    cols = [f"t_{int(n)}" for n in sizes]
    rows = [{"path": q.label[0], "hops": q.hops, "alpha": q.alpha_s, "beta": q.beta_Bps, **dict(zip(cols, q.times_s))}
            for q in paths]
    torus = len(paths) - 2
    near, far, (link, intra, inter) = paths[0], paths[torus - 1], run.names
    sw_hops = "/".join(map(str, sorted({q.hops for q in paths[torus:]})))
    a = lambda v: fmt_time(v, 3)
    hop_s = lambda h: f"{h} hop" + ("s" if h != 1 else "")
    alpha_note = dict(link=link, hop_alpha=f"{run.hop_alpha:g}", a_near=a(near.alpha_s), near=hop_s(near.hops),
                      near_h=near.hops, a_far=a(far.alpha_s), far=hop_s(far.hops), far_h=far.hops,
                      intra=intra, inter=inter, sw_hops=sw_hops, a_same=a(paths[torus].alpha_s),
                      a_other=a(paths[-1].alpha_s))
    bytes_note = dict(n=fmt_bytes(sizes[-1]), far_h=far.hops, near_h=near.hops, near=hop_s(near.hops),
                      extra=fmt_pct(far.times_s[-1] / near.times_s[-1] - 1))
    return Table(
        key="01-3",
        title=T("links.01_3_title"),
        columns=["path", "hops", "alpha", "beta"] + cols,
        headers={lang: [T.get(k, lang) for k in ("links.h_path", "links.h_hops", "links.h_alpha_paid", "links.h_slowest")]
                 + [T.get("links.h_at", lang, size=fmt_bytes(n)) for n in sizes] for lang in LANGS},
        rows=rows,
        formats={"alpha": a, "beta": lambda v: fmt_rate(v, 3), **dict.fromkeys(cols, fmt_time)},
        labels={"zh": {q.label[0]: q.label[1] for q in paths}},
        notes={lang: [T.get("links.01_3_alpha", lang, **alpha_note), T.get("links.01_3_bytes", lang, **bytes_note)]
               for lang in LANGS},
    )


def presets_table(links: dict[str, Link] = LINKS) -> Table:
    """P5 §0: every link preset of :mod:`commbook.hardware` (``hw.<name>``) with its α, β
    (one direction), n½ = αβ and the source it is taken from (in the source's words).

    >>> presets_table().find(const="hw.NVLINK4")["name"]
    'NVLink 4 (H100)'
    """
    return Table(
        key="hardware",
        title=T("links.presets_title"),
        columns=["const", "name", "alpha", "beta", "n_half", "source"],
        headers=T.pairs(*(f"links.presets_h_{c}" for c in ("const", "name", "alpha", "beta", "n_half", "source"))),
        rows=[{"const": f"hw.{key}", "name": link.name, "alpha": link.alpha, "beta": link.beta,
               "n_half": link.n_half, "source": link.source} for key, link in links.items()],
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda b: f"{b / 1e9:g} GB/s", "n_half": fmt_bytes},
    )


@dataclass(frozen=True)
class Shape:
    """A topology of ``p`` devices (``name``: its dimensions, e.g. "8×8"): ports per device,
    diameter in hops, bisection bandwidth, that bandwidth per device of one half (bisection
    / (p/2), over ``pairs`` = p/2 devices) and in links of β."""

    name: str
    p: int
    pairs: int
    ports: int
    diameter: int
    bisection_Bps: float
    per_device_Bps: float
    links: int


def shape_of(topo: Topology, beta: float, name: str | None = None) -> Shape:
    """:class:`Shape` of a topology object (``beta``: the link that counts bisection links;
    ``name``: by default a torus's dimensions, else the class's name).

    >>> shape_of(Torus((8, 8), ICI_V5E), ICI_V5E.beta).diameter
    8
    """
    name = name or ("×".join(map(str, topo.dims)) if isinstance(topo, Torus) else type(topo).__name__)
    p, cut = topo.p, topo.bisection_bandwidth
    return Shape(name, p, p // 2, topo.ports_per_device, topo.diameter, cut, cut / (p // 2), round(cut / beta))


@dataclass(frozen=True)
class Topologies:
    """Demo 01-2's five topologies of ``p`` devices: a switch, a ring, a 2D and a 3D torus on
    one link and a two-level network (``sw``, ``ring``, ``t2``, ``t3``, ``two``); ``labels``
    holds each one's (English, Chinese) name and the links it is built of, for the table."""

    p: int
    sw: Shape
    ring: Shape
    t2: Shape
    t3: Shape
    two: Shape
    labels: tuple
    note: tuple


def topologies(p: int = 64, link: Link = ICI_V5E, intra: Link = NVLINK4, inter: Link = IB_NDR,
               gpus_per_node: int = 8) -> Topologies:
    """:class:`Topologies` for ``p`` devices (all links ``link``, 45 GB/s, but the two-level
    network's ``intra`` and ``inter``, ``gpus_per_node`` GPUs a node).

    p is not stated in the lecture; p = 64 is the natural choice (8×8 and 4×4×4 exist).

    >>> topologies().t3.name
    '4×4×4'
    """
    d2, d3 = balanced_dims(p, 2), balanced_dims(p, 3)
    if p % gpus_per_node:
        raise ValueError(f"p={p} must be a multiple of gpus_per_node={gpus_per_node}")
    nodes = p // gpus_per_node
    x2, x3, xn = "×".join(map(str, d2)), "×".join(map(str, d3)), f"{nodes}×{gpus_per_node}"
    made = [(("links.topo_switch", {}), "switch", Switch(p, link)), (("links.topo_ring", {}), "ring", Ring(p, link)),
            (("links.topo_2d", {"dims": x2}), x2, Torus(d2, link)), (("links.topo_3d", {"dims": x3}), x3, Torus(d3, link)),
            (("links.topo_two", {"nodes": nodes, "gpn": gpus_per_node}), xn, TwoLevel(nodes, gpus_per_node, intra, inter))]
    labels = tuple((tuple(T.get(k, lang, **f) for lang in LANGS),
                    f"{intra.name} + {inter.name}" if isinstance(t, TwoLevel) else link.name) for (k, f), _, t in made)
    note = T.pairs("links.01_2_note", inter=inter.name, inter_beta=fmt_rate(inter.beta, 3),
                   ratio=f"1/{intra.beta / inter.beta:.3g}", intra=intra.name, intra_beta=fmt_rate(intra.beta, 3))
    return Topologies(p, *(shape_of(t, link.beta, name) for _, name, t in made), labels, tuple(note.items()))


@dataclass(frozen=True)
class SuperPod:
    """A DGX SuperPOD of ``gpus`` H100 (How to Scale Your Model ch. 12): ``nodes`` of ``gpn``
    GPUs in ``sus`` scalable units of ``su_nodes`` nodes (``su_gpus`` GPUs), one leaf per
    rail (``leaves_per_su`` per unit, ``leaves`` in all, ``per_leaf`` NICs under each) and
    ``spines`` spines taking the ``uplinks`` (``spine_ports`` each) of a full bisection;
    the bisection bandwidth across the ``half`` of the GPUs, the NIC's and NVLink's β and
    their ratio."""

    gpus: int
    gpn: int
    nodes: int
    sus: int
    su_nodes: int
    su_gpus: int
    leaves_per_su: int
    leaves: int
    per_leaf: int
    spines: int
    uplinks: int
    spine_ports: int
    bisection_Bps: float
    half: int
    nic_Bps: float
    nvl_Bps: float
    ratio: str


def superpod(gpus: int = 1024, gpn: int = 8, su_nodes: int = 32, leaves_per_su: int = 8, spines: int = 16,
             intra: Link = NVLINK4, inter: Link = IB_NDR) -> SuperPod:
    """:class:`SuperPod`; the units must tile the pod and give one leaf per rail.

    >>> superpod().spine_ports
    64
    """
    nodes = gpus // gpn
    if nodes * gpn != gpus or nodes % su_nodes:
        raise ValueError(f"gpus={gpus} must fill whole nodes of gpn={gpn} and units of su_nodes={su_nodes}")
    if leaves_per_su != gpn:
        raise ValueError(f"leaves_per_su={leaves_per_su} must equal gpn={gpn} (one leaf per rail)")
    sus, su_gpus = nodes // su_nodes, su_nodes * gpn
    leaves, per_leaf = sus * leaves_per_su, su_gpus // leaves_per_su
    uplinks = leaves * per_leaf
    pod = TwoLevel(nodes, gpn, intra, inter)
    return SuperPod(gpus, gpn, nodes, sus, su_nodes, su_gpus, leaves_per_su, leaves, per_leaf, spines, uplinks,
                    uplinks // spines, pod.bisection_bandwidth, pod.p // 2, inter.beta, intra.beta,
                    f"1/{intra.beta / inter.beta:.0f}")


@dataclass(frozen=True)
class P2P:
    """Demo 01-3's point-to-point times: at the ``small``, ``mid`` and ``big`` sizes, over the
    fewest (``h_lo``) and most (``h_hi``) torus hops, with the ratio at the small size and the
    growth at the big one; the big size's bytes alone over β; through a switch within a node
    (``same``, ``sw_hops`` hops) and to another node (``other``), with their ratio; and the
    torus's hop cost (``rule``; ``hi_alphas`` α at ``h_hi`` hops); for the table, the names
    of the torus's link and of the two-level network's (``names``), the ``sizes`` and every
    :class:`Path`, the torus's first and the two-level network's two last."""

    small_bytes: float
    mid_bytes: float
    big_bytes: float
    h_lo: int
    h_hi: int
    small_lo_s: float
    small_hi_s: float
    small_x: float
    mid_lo_s: float
    mid_hi_s: float
    big_lo_s: float
    big_hi_s: float
    big_growth_frac: float
    bytes_time_s: float
    same_big_s: float
    other_big_s: float
    other_x: float
    same_small_s: float
    other_small_s: float
    hop_alpha: float
    rule: str
    hi_alphas: float
    sw_hops: int
    names: tuple
    sizes: tuple
    paths: tuple


@dataclass(frozen=True)
class Path:
    """One path of demo 01-3: its (English, Chinese) name, hops, the α it pays, the slowest
    link's β and the message's time at each size."""

    label: tuple
    hops: int
    alpha_s: float
    beta_Bps: float
    times_s: tuple


def point_to_point(sizes: Sequence[float] = (4 * KB, 1 * MB, 64 * MB), hops: Sequence[int] = (1, 2, 4, 8),
                   link: Link = ICI_V5E, intra: Link = NVLINK4, inter: Link = IB_NDR,
                   hop_alpha: float = 1.0) -> P2P:
    """:class:`P2P`: one message of each of three ``sizes`` (small, mid, big), simulated.

    Torus paths: ``send_recv`` from device 0 to device h on a 1-D torus (ring) of
    2·max(hops) ``link`` chips (``hop_alpha`` as in :class:`commbook.topology.Torus`), so
    the shortest path is h hops.  Two-level paths: GPU 0 to GPU 1 (same node, NVLink) and
    GPU 0 to GPU 8 (other node, over the IB NIC).  The α paid comes from the topology's
    :meth:`~commbook.topology.Topology.message_costs`.

    >>> [round(q.times_s[0] * 1e6, 2) for q in point_to_point().paths[:4]]
    [1.09, 2.09, 4.09, 8.09]
    """
    if len(sizes) != 3:
        raise ValueError(f"sizes must be three sizes (small, mid, big), got {sizes!r}")
    ring, two = Torus((2 * max(hops),), link, hop_alpha=hop_alpha), TwoLevel(2, 8, intra, inter)
    c_ring, c_two = VirtualCluster(ring), VirtualCluster(two)

    def path(key: str, topo, c, dst: int, beta: float, **f) -> Path:
        alpha = float(topo.message_costs(np.array([0]), np.array([dst]))[0][0])
        return Path(tuple(T.get(key, lang, **f) for lang in LANGS), topo.hops(0, dst), alpha, beta,
                    tuple(send_recv(c, nbytes=n, src=0, dst=dst).time for n in sizes))

    paths = [path("links.path_hops" if h > 1 else "links.path_hop", ring, c_ring, h, link.beta, link=link.name, h=h)
             for h in hops]
    paths += [path("links.path_same", two, c_two, 1, intra.beta, intra=intra.name),
              path("links.path_other", two, c_two, 8, inter.beta, intra=intra.name, inter=inter.name)]
    lo, hi, same, other = paths[0], paths[len(hops) - 1], paths[-2], paths[-1]
    rule = "h·α" if hop_alpha == 1 else f"(1 + {hop_alpha:g}(h − 1))·α"
    (ls, lm, lb), (hs, hm, hb) = lo.times_s, hi.times_s
    return P2P(*map(float, sizes), lo.hops, hi.hops, ls, hs, hs / ls, lm, hm, lb, hb, hb / lb - 1,
               sizes[-1] / link.beta, same.times_s[2], other.times_s[2], other.times_s[2] / same.times_s[2],
               same.times_s[0], other.times_s[0], hop_alpha, rule, 1 + hop_alpha * (hi.hops - 1), same.hops,
               (link.name, intra.name, inter.name), tuple(float(n) for n in sizes), tuple(paths))
