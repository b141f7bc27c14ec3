"""P5 §2–§3 tables (script 01): links, topologies, point-to-point costs.

Each function rebuilds one demo table as a :class:`commbook.book.tables.Table`; the
script prints it with ``to_text`` and the pages show it with ``to_html``."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...collectives import send_recv
from ...comm_sim import VirtualCluster
from ...hardware import (IB_HDR, IB_NDR, ICI_V5E, NVLINK4, NVLINK5, PCIE_GEN5, ROCE_100G,
                         Link)
from ..tables import DEFAULT_SIZES, Table, bilingual, bilingual_notes, link_table
from ...topology import Ring, Switch, Torus, TwoLevel
from ...units import KB, MB, fmt_bytes, fmt_pct, fmt_rate, fmt_time
from .common import balanced_dims


def demo_01_1(links: Sequence[Link] = (NVLINK4, IB_NDR, ICI_V5E, NVLINK5, IB_HDR, PCIE_GEN5,
                                       ROCE_100G),
              sizes: Sequence[float] = DEFAULT_SIZES) -> Table:
    """Demo 01-1 (lecture §2.2 "常见链路"): α, β, n½ = αβ of common links, and the
    effective bandwidth n/T(n) with its share of β at each message size.

    Rows come from :func:`commbook.book.tables.link_table` (the pilot page's table).  Cells of
    the size columns ``"at_<bytes>"`` are ``(bytes/s, fraction of β)`` pairs.
    Anchors: n½ NVLink 900 KB, IB 250 KB, ICI 45 KB; at 4 KB NVLink 1.99 GB/s (0.44 %),
    IB 0.79 GB/s (1.57 %), ICI 3.67 GB/s (8.2 %); at n½ every link gets exactly β/2.
    """
    rows = link_table(links, sizes)
    size_cols = [f"at_{int(n)}" for n in sizes]
    data = []
    for r in rows:
        d = {"link": r.name, "alpha": r.alpha, "beta": r.beta, "n_half": r.n_half}
        d.update({c: (b, f) for c, b, f in zip(size_cols, r.eff_bw, r.fraction)})
        data.append(d)
    at = [fmt_bytes(n) for n in sizes]
    return Table(
        key="01-1",
        title=bilingual("common links: α, β, half-bandwidth point, effective bandwidth n/T(n) (share of β)",
                     "常见链路：α、β、半带宽点，以及有效带宽 n/T(n)（括号内为占 β 的比例）"),
        columns=["link", "alpha", "beta", "n_half"] + size_cols,
        headers={"en": ["link", "α", "β (one way)", "n½ = αβ"] + [f"n = {s}" for s in at],
                 "zh": ["链路", "α", "β（单向）", "n½ = αβ"] + [f"n = {s}" for s in at]},
        rows=data,
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda v: fmt_rate(v, 3), "n_half": fmt_bytes,
                 **{c: (lambda cell: f"{fmt_rate(cell[0], 3)} ({fmt_pct(cell[1])})") for c in size_cols}},
        notes=bilingual_notes(
            ("At n = n½ every link delivers exactly β/2 (50 %). β is the one-way figure of "
             "each link's datasheet; α is an assumed order of magnitude (each preset names its "
             "source). Decimal units (1 KB = 1000 B).",
             "消息恰为 n½ 时，每条链路都正好得到 β/2（50%）。β 取各链路资料中的单向数值，"
             "α 只是假定的量级（每个预设都注明了出处）。单位按十进制（1 KB = 1000 B）。"),
        ),
        meta={"sizes": tuple(float(n) for n in sizes)},
    )


def demo_01_2(p: int = 64, link: Link = ICI_V5E, intra: Link = NVLINK4, inter: Link = IB_NDR,
              gpus_per_node: int = 8) -> Table:
    """Demo 01-2 (lecture §3.1 "几种基本拓扑"): ports per device, diameter and
    bisection bandwidth of a switch, a ring, a 2D and a 3D torus (all links ``link``,
    45 GB/s) and a two-level NVLink + IB network, for ``p`` devices.

    p is not stated in the lecture; p = 64 is the natural choice (8×8 and 4×4×4 exist).
    Anchors (p = 64): switch 1 port / 2 hops / 1,440 GB/s; ring 2 / 32 / 90 GB/s;
    8×8 torus 4 / 8 / 720 GB/s; 4×4×4 torus 6 / 6 / 1,440 GB/s; two-level 8×8 2 / 4 /
    1,600 GB/s, i.e. 50 GB/s per GPU across nodes, 1/9 of NVLink's 450.
    "bisection per device" is the bisection bandwidth divided by the p/2 devices of
    one half: what each can send across the cut at the same time.
    """
    d2, d3 = balanced_dims(p, 2), balanced_dims(p, 3)
    if p % gpus_per_node:
        raise ValueError(f"p={p} must be a multiple of gpus_per_node={gpus_per_node}")
    nodes = p // gpus_per_node
    topos = [
        ("switch", Switch(p, link)),
        ("ring", Ring(p, link)),
        (f"2D torus {d2[0]}×{d2[1]}", Torus(d2, link)),
        (f"3D torus {'×'.join(map(str, d3))}", Torus(d3, link)),
        (f"two-level {nodes}×{gpus_per_node}", TwoLevel(nodes, gpus_per_node, intra, inter)),
    ]
    rows = []
    ratio = f"1/{intra.beta / inter.beta:.3g}"
    for name, t in topos:
        links = f"{intra.name} + {inter.name}" if isinstance(t, TwoLevel) else link.name
        rows.append({"topology": name, "links": links, "ports": t.ports_per_device,
                     "diameter": t.diameter, "bisection": t.bisection_bandwidth,
                     "per_device": t.bisection_bandwidth / (p // 2)})
    zh = {"switch": "交换机", "ring": "环"}
    zh.update({r["topology"]: r["topology"].replace("2D torus", "二维 torus")
               .replace("3D torus", "三维 torus").replace("two-level", "两级网络")
               for r in rows[2:]})
    return Table(
        key="01-2",
        title=bilingual(f"topologies with p = {p} devices: ports, diameter, bisection bandwidth",
                     f"p = {p} 个设备的拓扑：端口数、直径、对分带宽"),
        columns=["topology", "links", "ports", "diameter", "bisection", "per_device"],
        headers={"en": ["topology", "links", "ports / device", "diameter (hops)",
                        "bisection", "bisection per device"],
                 "zh": ["拓扑", "链路", "每设备端口", "直径（跳）", "对分带宽", "每设备对分带宽"]},
        rows=rows,
        formats={"bisection": lambda v: fmt_rate(v, 3), "per_device": lambda v: fmt_rate(v, 3)},
        labels={"zh": zh},
        notes=bilingual_notes(
            ("Bisection per device = bisection / (p/2). Two-level: across nodes each GPU has "
             f"its {inter.name} NIC ({fmt_rate(inter.beta, 3)}), {ratio} of its {intra.name} "
             f"({fmt_rate(intra.beta, 3)}); its diameter counts leaf–spine–leaf hops.",
             "每设备对分带宽 = 对分带宽 / (p/2)。两级网络跨节点时，每块 GPU 只能用自己的 "
             f"{inter.name} 网卡（{fmt_rate(inter.beta, 3)}），是它的 {intra.name}"
             f"（{fmt_rate(intra.beta, 3)}）的 {ratio}；直径按叶–脊–叶交换机计。"),
        ),
    )


def demo_01_3(sizes: Sequence[float] = (4 * KB, 1 * MB, 64 * MB),
              hops: Sequence[int] = (1, 2, 4, 8), link: Link = ICI_V5E,
              intra: Link = NVLINK4, inter: Link = IB_NDR, hop_alpha: float = 1.0) -> Table:
    """Demo 01-3 (§3.2 "点对点：距离和带宽"): the time of one message, by size and path.

    Torus paths: ``send_recv`` from device 0 to device h on a 1-D torus (ring) of
    2·max(hops) ``link`` chips (``hop_alpha`` as in :class:`commbook.topology.Torus`), so
    the shortest path is h hops.  Two-level paths: GPU 0 to GPU 1 (same node, NVLink) and
    GPU 0 to GPU 8 (other node, over the IB NIC).  Column "alpha": the start-up latency
    the message pays, from the topology's :meth:`~commbook.topology.Topology.message_costs`:
    α(1 + hop_alpha·(h − 1)) on the torus, one α through a switch whatever the hops.
    Anchors (ICI): 4 KB 1.09 / 2.09 / 4.09 / 8.09 µs for 1/2/4/8 hops; 64 MB 1,423–1,430 µs.
    """
    ring = Torus((2 * max(hops),), link, hop_alpha=hop_alpha)
    c_ring = VirtualCluster(ring)
    c_two = VirtualCluster(TwoLevel(2, 8, intra, inter))

    def alpha_paid(topo, dst: int) -> float:
        return float(topo.message_costs(np.array([0]), np.array([dst]))[0][0])

    cols = [f"t_{int(n)}" for n in sizes]
    rows = []
    for h in hops:
        row = {"path": f"{link.name}, {h} hop{'s' if h > 1 else ''}", "hops": ring.hops(0, h),
               "alpha": alpha_paid(ring, h), "beta": link.beta}
        row.update({c: send_recv(c_ring, nbytes=n, src=0, dst=h).time for c, n in zip(cols, sizes)})
        rows.append(row)
    for name, dst, beta in ((f"{intra.name} (same node)", 1, intra.beta),
                            (f"{intra.name} + {inter.name} (other node)", 8, inter.beta)):
        row = {"path": name, "hops": c_two.topology.hops(0, dst),
               "alpha": alpha_paid(c_two.topology, dst), "beta": beta}
        row.update({c: send_recv(c_two, nbytes=n, src=0, dst=dst).time for c, n in zip(cols, sizes)})
        rows.append(row)
    zh = {r["path"]: r["path"].replace(" hops", " 跳").replace(" hop", " 跳")
          .replace("(same node)", "（同一节点）").replace("(other node)", "（另一节点）") for r in rows}
    near, far = rows[0], rows[len(hops) - 1]
    sw_hops = sorted({r["hops"] for r in rows[len(hops):]})
    sw_hops_s = "/".join(map(str, sw_hops))
    big = cols[-1]
    extra = far[big] / near[big] - 1
    a = lambda v: fmt_time(v, 3)
    hop_s = lambda h: f"{h} hop" + ("s" if h != 1 else "")
    return Table(
        key="01-3",
        title=bilingual("one message: time by size and path", "发一条消息：不同大小、不同路径的时间"),
        columns=["path", "hops", "alpha", "beta"] + cols,
        headers={"en": ["path", "hops", "α paid", "slowest β"] + [f"n = {fmt_bytes(n)}" for n in sizes],
                 "zh": ["路径", "跳数", "实付 α", "最慢链路 β"] + [f"n = {fmt_bytes(n)}" for n in sizes]},
        rows=rows,
        formats={"alpha": a, "beta": lambda v: fmt_rate(v, 3), **{c: lambda t: fmt_time(t, 4) for c in cols}},
        labels={"zh": zh},
        notes=bilingual_notes(
            (f"α paid: on the {link.name} torus a message over h hops pays α·(1 + {hop_alpha:g}·(h − 1)), "
             f"{a(near['alpha'])} for {hop_s(near['hops'])} and {a(far['alpha'])} for {hop_s(far['hops'])}; "
             f"through a switch it pays one α whatever the hops, so the {intra.name} and "
             f"{inter.name} paths list {sw_hops_s} hops (GPU, switch, GPU) and pay "
             f"{a(rows[len(hops)]['alpha'])} and {a(rows[-1]['alpha'])}.",
             f"实付 α：在 {link.name} torus 上，走 h 跳的消息付 α·(1 + {hop_alpha:g}·(h − 1))，"
             f"{near['hops']} 跳是 {a(near['alpha'])}，{far['hops']} 跳是 {a(far['alpha'])}；"
             f"经过交换机的消息不论几跳都只付一次 α，所以 {intra.name} 和 {inter.name} 两条路径"
             f"虽记作 {sw_hops_s} 跳（GPU、交换机、GPU），实付只是 {a(rows[len(hops)]['alpha'])} 和 "
             f"{a(rows[-1]['alpha'])}。"),
            (f"The bytes cut through at the slowest link's β: at {fmt_bytes(sizes[-1])} the "
             f"{far['hops']}-hop path takes only {extra:.2%} longer than {hop_s(near['hops'])}. A "
             "cross-node message pays the NIC's α and β.",
             f"字节按路径上最慢链路的 β 直通转发：{fmt_bytes(sizes[-1])} 时，{far['hops']} 跳只比 "
             f"{near['hops']} 跳多花 {extra:.2%}。跨节点的消息付的是网卡的 α 和 β。"),
        ),
    )
