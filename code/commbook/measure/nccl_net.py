r"""NCCL 2.29.2's tuning model across nodes: constants, graphs of a rail-optimized cluster,
and the ``nNodes > 1`` branches of ncclTopoTuneModel.

Every constant is transcribed from github.com/NVIDIA/nccl at tag ``v2.29.2-1`` and cited by
file and line there (:func:`.nccl_tuning.cite`); the one-node constants are in
:mod:`.nccl_tuning`.  Units are NCCL's: µs and GB/s.  :mod:`.nccl_cluster` builds on this.

**The graphs are closed forms, not NCCL's search.**  NCCL finds its channels by a search over
the real PCI/NVLink/NIC topology (src/graph/search.cc:1014-1213).  For a *rail-optimized*
cluster — every GPU reaches its own NIC (or a NIC shared by GPUs) through one PCIe switch or
the C2C link, NICs ``nics`` per node of ``nic_bw`` GB/s, crossNic off — this module uses
(:func:`net_graphs`):

* ``maxBw`` (search.cc:19-28, 49) = the GPU→NET path bandwidth = min(NIC, PCIe) where the NIC's
  bandwidth is its speed as NCCL reads it, Mb/s ÷ 8000 (src/graph/topo.cc:382-384: NDR
  400 Gb/s → 50 GB/s) and the PCIe link ``width × rate / 80`` (topo.cc:435-436, 502-503:
  Gen4 x16 → 24, Gen5 x16 → 48 GB/s); ``totalBw`` = the GPU's NVLink bandwidth (search.cc:29-37).
* ring: at a per-channel speed ``s`` of the inter-node array (search.cc:977, 982, 987), a
  channel takes ``s`` on one NIC (each direction) and on 7 of 8 GPUs' NVLink, so
  ``n(s) = min(32, nics·⌊nic_bw/s⌋, ⌊totalBw/(s·(G−1)/G)⌋)`` channels fit; the search starts
  at the fastest ``s ≤ maxBw`` (search.cc:1101), keeps the most ``n·s`` (ties: faster),
  stops once ``n·s ≥ totalBw`` (search.cc:1125) and otherwise lowers ``s`` while the next
  speed is above 0.49 of the best (search.cc:1171); ncclTopoDupChannels (search.cc:961-974)
  as on one node.  So one channel per NIC at least, ``bwIntra = bwInter = s``.
* tree (balanced, init.cc:1065-1070): the ring's channel count at the fastest speed that
  carries it; then pass 2 raises ``bwIntra`` while it is below ``2·bwInter`` and NVLink
  carries it (search.cc:1205-1208) — it matters for ≤ 2 nodes, where NCCL uses bwIntra
  (src/graph/tuning.cc:284).
* NVLS (SM90+, NVSwitch): ``n = min(32, G)`` heads (search.cc:1064), every head required
  (NCCL lets the search take fewer across nodes, search.cc:1069-1072: a simplification),
  ``(n+1)·s ≤ NVLink`` and a NIC per head; pass 2 raises ``bwInter`` while below
  ``2·bwIntra`` and the NICs carry it (search.cc:1201-1204).
* CollNet chain: the ring's channels and speed, bwIntra raised as a tree's (init.cc:1073-1078,
  search.cc:1205-1208); CollNet direct: ``min(8, G)`` heads (search.cc:1065) at the ring's speed.

``latency_inter`` (graph->latencyInter, search.cc:685) is the NIC's reported latency: 0 for
NCCL's IB and socket transports (src/transport/net_ib/init.cc:401, net_socket.cc:121).
:class:`Cluster` describes the system (GPU, nodes, GPUs and NICs per node, network, SHARP).

>>> nic_bw(400), pcie_bw(5)                       # NDR as NCCL reads it; PCIe Gen5 x16
(50.0, 48.0)
>>> net_graphs(90, 18 * 20.6, 8, 8, 50.0, 48.0, nvls=True)["ring"]
Graph(n_channels=8, bw_intra=48.0, bw_inter=48.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_int, check_positive, check_real
from . import nccl_tuning as T

__all__ = ["GPU_SPECS", "NETWORKS", "NIC_SPEEDS", "Cluster", "SPEED_ARRAY_INTER", "PER_CH_MAX_NVLSTREE_BW", "NET_OVERHEAD", "NCCL_MAX_DIRECT_ARITY",
           "COLLNET_NODE_THRESHOLD", "COLLNET_THREAD_THRESHOLD", "PCIE_LANE_RATE", "nic_bw", "pcie_bw",
           "Graph", "net_graphs", "bandwidth", "latency"]

SPEED_ARRAY_INTER = {
    80: (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, .24, .12),
    90: (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, .24, .12),
    100: (96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, .24, .12),
}
"""Per-channel speeds (GB/s) the search tries when the system has a network, fastest first:
speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter (search.cc:977, 982, 987; chosen
at search.cc:1092-1094)."""
PER_CH_MAX_NVLSTREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 43.8))
"""``perChMaxNVLSTreeBws`` (GB/s per channel; Volta … Blackwell × N1/N2/N4), tuning.cc:193-198."""
NET_OVERHEAD = {"intel": 1.0, "amd": 2.0, "arm": 1.0}
"""getNetOverhead (µs): x86 Intel 1.0, x86 AMD 2.0, otherwise 1.0 (tuning.cc:214-219); ×3 for
Simple (tuning.cc:375)."""
NCCL_MAX_DIRECT_ARITY = 7      # src/include/device.h:194; CollNet needs <= 8 local ranks, enqueue.cc:1905-1908
COLLNET_NODE_THRESHOLD = 2     # NCCL_COLLNET_NODE_THRESHOLD default, src/init.cc:774, 1251-1255
COLLNET_THREAD_THRESHOLD = 512  # tuning.cc:548-549
PCIE_LANE_RATE = {3: 60, 4: 120, 5: 240, 6: 480}
"""kvDictPciGen: 100 Mb/s per lane of PCIe Gen3 … Gen6 (topo.cc:435-436); a link carries
``width × rate / 80`` GB/s (topo.cc:502-503)."""


def nic_bw(gbps: float) -> float:
    """GB/s of a NIC whose reported speed is ``gbps`` Gb/s: Mb/s ÷ 8000 (topo.cc:382-384).

    >>> nic_bw(400), nic_bw(NIC_SPEEDS["HDR"])   # NDR, HDR
    (50.0, 25.0)
    """
    return check_positive(gbps, "gbps", "a NIC speed in Gb/s") * 1000 / 8000


def pcie_bw(gen: int, width: int = 16) -> float:
    """GB/s NCCL gives a PCIe link of generation ``gen`` and ``width`` lanes (topo.cc:435-436, 502-503).

    >>> pcie_bw(4), pcie_bw(5), pcie_bw(5, width=8)
    (24.0, 48.0, 24.0)
    >>> pcie_bw(7)
    Traceback (most recent call last):
    ...
    ValueError: gen must be a PCIe generation, one of 3, 4, 5, 6; got 7
    """
    gen = check_int(gen, "gen", "a PCIe generation")
    if gen not in PCIE_LANE_RATE:
        raise ValueError(f"gen must be a PCIe generation, one of {', '.join(map(str, PCIE_LANE_RATE))}; got {gen}")
    return check_int(width, "width", lo=1, hi=32) * PCIE_LANE_RATE[gen] / 80


@dataclass(frozen=True)
class Graph:
    """One algorithm's graph: channels, GB/s per channel inside the node and across nodes.

    >>> g = Graph(n_channels=8, bw_intra=48.0, bw_inter=48.0)
    >>> g.n_channels * g.bw_inter   # GB/s the graph moves out of a node: 8 channels of 48
    384.0
    """

    n_channels: int
    bw_intra: float
    bw_inter: float


def _dup(n: int, s: float, cc: int, max_channels: int) -> tuple[int, float]:
    """ncclTopoDupChannels (search.cc:961-974) on a ring or tree graph."""
    if s < 25.0 or (cc > 80 and s < 50.0 and n > 4):
        return n, s
    dup = min(2 * n, max_channels)
    return dup, s / math.ceil(dup / n)


def net_graphs(cc: int, link_bw: float, ngpus: int, nics: int, nic: float, pcie: float,
               nvls: bool) -> dict[str, Graph]:
    """The graphs of a rail-optimized multi-node system (closed form, module docstring):
    ``link_bw`` GB/s of NVLink per GPU, ``ngpus`` GPUs and ``nics`` NICs of ``nic`` GB/s per
    node, ``pcie`` GB/s from a GPU to its NIC.

    8 x H100 per node, eight NDR NICs behind PCIe Gen5: one ring channel per NIC at the
    PCIe link's 48 GB/s; NVLS takes 8 heads at 40 GB/s inside the node:

    >>> g = net_graphs(90, 18 * 20.6, ngpus=8, nics=8, nic=50.0, pcie=48.0, nvls=True)
    >>> g["ring"], g["nvls"]
    (Graph(n_channels=8, bw_intra=48.0, bw_inter=48.0), Graph(n_channels=8, bw_intra=40.0, bw_inter=48.0))
    """
    speeds = SPEED_ARRAY_INTER[T.speed_key(cc)]
    max_bw, total = min(nic, pcie), link_bw if ngpus > 1 else pcie
    share = (ngpus - 1) / ngpus

    def fit(s: float) -> int:
        nvl = int(link_bw / (s * share) + 1e-9) if ngpus > 1 else T.RING_MAX_CHANNELS
        return min(T.RING_MAX_CHANNELS, nics * int(nic / s + 1e-9), nvl)

    start = next((k for k, s in enumerate(speeds) if s <= max_bw), len(speeds) - 1)
    best = (0, 0.0)
    for s in speeds[start:]:
        if best[0] and s / best[1] <= 0.49:
            break
        n = fit(s)
        if n and n * s > best[0] * best[1] + 1e-9:
            best = (n, s)
        if best[0] * best[1] >= total - 1e-9 or best[0] == T.RING_MAX_CHANNELS:
            break
    if best[0] == 0:
        raise ValueError(f"no ring fits {nics} NICs of {nic:g} GB/s")
    n, s = _dup(*best, cc, T.RING_MAX_CHANNELS)
    for faster in reversed([x for x in speeds if s < x <= max_bw]):    # pass 2, search.cc:1194-1200
        if fit(faster) >= n:
            s = faster
    ring = Graph(n, s, s)
    ts = next((x for x in speeds if x <= max_bw and fit(x) >= n), s)

    def raise_intra(n_ch: int, inter: float) -> float:                  # search.cc:1205-1208
        if inter not in speeds:
            return inter
        k, intra = speeds.index(inter), inter
        while k > 0 and intra < 2 * inter and (ngpus == 1 or n_ch * speeds[k - 1] * share <= link_bw + 1e-9):
            k -= 1
            intra = speeds[k]
        return intra

    out = {"ring": ring, "tree": Graph(n, raise_intra(n, ts), ts),
           "collnet_chain": Graph(n, raise_intra(n, ts), ts),
           "collnet_direct": Graph(min(NCCL_MAX_DIRECT_ARITY + 1, ngpus, nics * int(nic / ts + 1e-9)), ts, ts)}
    if nvls:
        heads = min(T.NVLS_MAX_ARITY, ngpus)
        ok = [k for k, x in enumerate(speeds) if x <= max_bw and (heads + 1) * x <= link_bw + 1e-9
              and nics * int(nic / x + 1e-9) >= heads]
        if ok:
            k = ok[0]
            intra, inter = speeds[k], speeds[k]
            while k > 0 and inter < 2 * intra and speeds[k - 1] <= max_bw and nics * int(nic / speeds[k - 1] + 1e-9) >= heads:
                k -= 1
                inter = speeds[k]
            out["nvls"] = Graph(heads, intra, inter)
    return out


def _index2(nnodes: int) -> int:
    return nnodes - 1 if nnodes <= 2 else 2          # tuning.cc:250


def bandwidth(coll: str, algo: str, proto: str, cc: int, nranks: int, nnodes: int, g: Graph,
              cpu: str, n_channels: float | None = None) -> float:
    """NCCL's bandwidth (GB/s, the algorithm bandwidth it divides nBytes by), tuning.cc:249-351
    for any node count.  ``n_channels`` overrides the graph's channels (runtime fraction).

    Ring Simple all-reduce on 2 x 8 H100: 8 channels x 48 GB/s x nRanks/nsteps = 16/30:

    >>> bandwidth("all_reduce", "ring", "Simple", 90, nranks=16, nnodes=2, g=Graph(8, 48.0, 48.0), cpu="intel")
    204.8
    """
    ci, i2 = T.compcap_index(cc), _index2(nnodes)
    i1 = ci if nnodes == 1 else (1 if cpu == "amd" else 0)           # tuning.cc:251-253
    ll_max = T.LL_MAX_BW[i1][i2]
    ppn = nranks / nnodes
    nch = g.n_channels if n_channels is None else n_channels
    nsteps = 2 * (nranks - 1) if coll == "all_reduce" else nranks - 1
    collnet = algo in ("collnet_direct", "collnet_chain")
    bw = g.bw_intra if nnodes <= 2 or collnet else g.bw_inter          # tuning.cc:284
    if algo in ("nvls", "nvls_tree"):                                  # tuning.cc:285-300
        intra = g.bw_intra * T.NVLS_EFFICIENCY[ci] * (g.n_channels - 1) / g.n_channels
        intra *= 2.0 if coll == "all_reduce" else (ppn - 1) / ppn
        inter = g.bw_inter * (2 if nnodes <= 2 and algo == "nvls_tree" else 1)
        bw = min(intra, inter, PER_CH_MAX_NVLSTREE_BW[ci][i2] if algo == "nvls_tree" else math.inf)
    bus = nch * bw
    if algo == "ring" and proto == "LL":                               # tuning.cc:304-310
        bus = min(ll_max, bus * T.RING_LL_FACTOR)
    if algo == "ring" and proto == "LL128":
        bus = min(bus * T.RING_LL128_FACTOR, nch * T.PER_CH_MAX_RING_LL128_BW[ci][i2])
    if algo == "tree" and coll == "all_reduce":
        bus = min(bus * T.TREE_AR_FACTOR, nch * T.PER_CH_MAX_TREE_BW[ci][i2])
    if algo == "tree" and proto == "LL":
        bus = min(bus * T.TREE_LL_FACTOR, ll_max)
    if algo == "tree" and proto == "LL128":
        f = T.TREE_LL128_FACTOR_1NODE if nnodes == 1 else 120.0 / 128.0
        bus = min(bus * f, nch * T.PER_CH_MAX_TREE_LL128_BW[ci][i2])
    if algo == "pat":
        bus *= 0.75
    if algo == "collnet_direct" and coll == "all_reduce":             # tuning.cc:313-323
        factor = ppn / g.n_channels
        factor -= (factor - 1) / 2
        bus /= factor
        bus *= 0.85 if cc >= 90 else 1.0
    if not (algo != "ring" and coll in ("all_gather", "reduce_scatter")):   # tuning.cc:345-351
        bus *= nranks / nsteps if algo in ("ring", "nvls", "nvls_tree") else 0.5
    return bus


def latency(coll: str, algo: str, proto: str, nranks: int, nnodes: int, cpu: str,
            latency_inter: float = 0.0) -> float:
    """NCCL's latency (µs) for any node count, NVLink inside the node: tuning.cc:353-401.

    A 16-rank ring on 2 nodes: 8.4 µs base, 28 NVLink steps of 3.4 µs, 2 network steps of 14 µs:

    >>> round(latency("all_reduce", "ring", "Simple", nranks=16, nnodes=2, cpu="intel"), 6)
    131.6
    """
    p = T.PROTOCOLS.index(proto)
    ppn = nranks // nnodes
    base = T.BASE_LAT[algo][p]
    intra = T.HW_LAT["nvlink"][algo][p]
    inter = T.HW_LAT["net"]["tree" if ppn == 1 else algo][p] + latency_inter     # tuning.cc:356-357
    if proto == "Simple":
        inter += latency_inter                                         # tuning.cc:359
    log_nodes = nnodes.bit_length() - 1                                 # log2i
    if algo == "ring":                                                 # tuning.cc:361-380
        nsteps = 2 * (nranks - 1) if coll == "all_reduce" else nranks - 1
        if nnodes > 1:
            intra = max(intra, NET_OVERHEAD[cpu] * (3 if proto == "Simple" else 1))
        inter_steps = 0 if nnodes == 1 else 2 * (nnodes - 1) if coll == "all_reduce" else nnodes - 1
        return base + (nsteps - inter_steps) * intra + inter_steps * inter
    if algo == "tree":
        return base + (2 * ((ppn - 1) * intra + log_nodes * inter) if coll == "all_reduce" else 0.0)
    if algo == "collnet_direct":
        return base + 2 * (min(1, ppn - 1) * intra + (ppn - 1) * 0.4) + inter
    if algo == "collnet_chain":
        return base + 2 * (ppn - 1) * intra + inter
    if algo == "nvls":
        return intra + (inter if nnodes > 1 else 0.0)
    if algo == "nvls_tree":
        return base + intra + 2 * log_nodes * inter
    if coll in ("all_gather", "reduce_scatter"):                       # pat, tuning.cc:396-400
        return base + log_nodes * (inter / 3.5) + nranks * 2.8
    return base


GPU_SPECS = {"A100": (80, 3, 12, 4), "H100": (90, 4, 18, 5), "H200": (90, 4, 18, 5),
             "B200": (100, 5, 18, 5), "GB200": (100, 5, 18, 5)}
"""(compute capability, NVLink generation, NVLinks, default PCIe generation to the NIC) per GPU:
NVIDIA's datasheets (A100: 12 NVLink 3 = 600 GB/s; H100/H200: 18 NVLink 4 = 900 GB/s;
B200/GB200: 18 NVLink 5 = 1.8 TB/s).  NCCL counts a link as NVLINK_BW (topo.h:19-22)."""
NETWORKS = ("ib", "roce", "tcpxo")
"""InfiniBand (SHARP possible), RoCE and GPUDirect-TCPXO (a net plugin; no SHARP)."""
NIC_SPEEDS = {"HDR": 200, "NDR": 400, "XDR": 800, "RoCE-400G": 400, "TCPXO": 200}
"""Gb/s per NIC: InfiniBand HDR/NDR/XDR, 400G RoCE, Google A3 Mega's 8 × 200 Gb/s TCPXO NICs."""
_CPUS = tuple(NET_OVERHEAD)


@dataclass(frozen=True)
class Cluster:
    """``nodes`` NVLink domains of ``gpus_per_node`` GPUs of type ``gpu`` (a key of
    :data:`GPU_SPECS`), each node with ``nics`` NICs of ``nic_gbps`` Gb/s on ``network``;
    ``sharp``: SHARP in the switches and NCCL_COLLNET_ENABLE=1 (InfiniBand only).

    >>> c = Cluster("H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps=400)
    >>> c.nranks, round(c.link_bw, 6), c.nic_bw, c.pcie_bw, c.has_nvls
    (16, 370.8, 50.0, 48.0, True)
    >>> Cluster("H100", 2, 8, 8, 400, network="roce", sharp=True)
    Traceback (most recent call last):
    ...
    ValueError: sharp: SHARP (CollNet) is modelled on InfiniBand only, not 'roce'
    """

    gpu: str
    nodes: int
    gpus_per_node: int
    nics: int
    nic_gbps: float
    network: str = "ib"
    sharp: bool = False
    cpu: str = "intel"
    pcie_gen: int | None = None
    nvls: bool = True

    def __post_init__(self) -> None:
        if self.gpu not in GPU_SPECS:
            raise ValueError(f"gpu: unknown GPU {self.gpu!r}; known: {', '.join(GPU_SPECS)}")
        object.__setattr__(self, "nodes", check_int(self.nodes, "nodes", lo=1, hi=100_000))
        object.__setattr__(self, "gpus_per_node", check_int(self.gpus_per_node, "gpus_per_node", lo=1, hi=72))
        object.__setattr__(self, "nics", check_int(self.nics, "nics", lo=0 if self.nodes == 1 else 1, hi=72))
        if type(self.nic_gbps) not in (int, float):
            object.__setattr__(self, "nic_gbps", check_real(self.nic_gbps, "nic_gbps", "a number of Gb/s"))
        if not 1 <= self.nic_gbps <= 10_000:
            raise ValueError(f"nic_gbps must be in [1, 10000] Gb/s, got {self.nic_gbps}")
        if self.network not in NETWORKS:
            raise ValueError(f"network: unknown {self.network!r}; known: {', '.join(NETWORKS)}")
        if self.cpu not in _CPUS:
            raise ValueError(f"cpu must be one of {', '.join(_CPUS)}, got {self.cpu!r}")
        if not isinstance(self.sharp, bool) or not isinstance(self.nvls, bool):
            raise TypeError("sharp and nvls must be True or False")
        if self.sharp and self.network != "ib":
            raise ValueError(f"sharp: SHARP (CollNet) is modelled on InfiniBand only, not {self.network!r}")
        if self.pcie_gen is not None and self.pcie_gen not in PCIE_LANE_RATE:
            raise ValueError(f"pcie_gen must be one of {', '.join(map(str, PCIE_LANE_RATE))}, got {self.pcie_gen!r}")
        if self.nodes * self.gpus_per_node < 2:
            raise ValueError("a communicator needs at least 2 GPUs (nodes x gpus_per_node)")

    @property
    def cc(self) -> int:
        """Compute capability × 10."""
        return GPU_SPECS[self.gpu][0]

    @property
    def nranks(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def link_bw(self) -> float:
        """GB/s of NVLink per GPU as NCCL counts it (nvlinks × NVLINK_BW, topo.h:19-22)."""
        return GPU_SPECS[self.gpu][2] * T.NVLINK_BW[T.speed_key(self.cc)]

    @property
    def nic_bw(self) -> float:
        """GB/s per NIC as NCCL reads it (:func:`nic_bw`)."""
        return nic_bw(self.nic_gbps)

    @property
    def pcie_bw(self) -> float:
        return pcie_bw(self.pcie_gen or GPU_SPECS[self.gpu][3])

    @property
    def has_nvls(self) -> bool:
        """NVLS: SM90+ with NVSwitch and more than one GPU per node (search.cc:1062)."""
        return self.nvls and self.cc >= 90 and self.gpus_per_node > 1
