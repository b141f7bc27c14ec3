"""GPU clusters with rails: :class:`TwoLevel` (nodes of GPUs, NICs on rail leaf switches
under a spine) and :class:`ThreeTier` (racks of such nodes, the spine between racks).

What a message between two GPUs occupies (its *resources*, see :mod:`.base`):

* **same node**: the sender's NVLink port out and the receiver's NVLink port in (``intra``);
* **another node**: the sender's NIC out, its node's uplink, the leaf (rail) switch of the
  sender's NIC, the receiver's node downlink and NIC in (``inter``); and, when the two NICs
  sit on different leaves (different rails, or different racks), the sender's leaf uplink
  to the spine, the spine's downlink to the receiver's leaf and that leaf (``spine``).

NIC ``k`` of every node of a rack sits on that rack's leaf switch ``k`` (rail ``k``).  GPU
``g`` uses NIC ``nic_of_gpu[g]``; by default every GPU has its own NIC (``nics_per_node =
gpus_per_node``), and with fewer NICs consecutive GPUs share one (``gpus_per_nic = G/nics``).
A NIC carries ``inter.beta`` per direction; a node's uplink ``nics · inter.beta /
oversubscription``; a leaf's link to the spine ``nodes_per_rack · spine.beta /
spine_oversubscription`` (so a 2:1 spine halves what rail-misaligned traffic gets when
every GPU sends); leaf switches themselves are non-blocking (bandwidth ∞: their resource
only counts the bytes a rail forwards, e.g. for the rail table).  A message pays α of the
highest tier it reaches: ``intra``, ``inter`` or ``spine``.  With the defaults the spine
never binds and a flat ring's time does not depend on rank placement; shared NICs or an
oversubscribed spine make it depend on where the ring's cross-node hops land.

**PXN** (``pxn=True``): a message to another node leaves through the sending node's NIC on
the *receiver's* rail; when the sender sits on another rail it first crosses NVLink to a
GPU of that NIC (the sender's NVLink port out, that GPU's port in), so traffic between
nodes never crosses the spine inside a rack.  NCCL does this from 2.12 on for
point-to-point traffic (``NCCL_P2P_PXN_LEVEL``, default 2: src/graph/search.cc:1314-1376
of NCCL v2.29.2-1), and its rings enter and leave every node through one NIC
("NET n -> GPU a -> … -> GPU x -> NET n", search.cc:762; the NIC check, search.cc:559-575).

**Ring channels.**  NCCL runs several rings at once, each over a part of the buffer
(:meth:`TwoLevel.channel_orders`): channel ``c`` enters every node at a GPU of NIC
``c mod nics_per_node`` and visits the node's GPUs from there, so with ``pxn=True`` its
hop between nodes stays on that NIC's rail, and ``nics_per_node`` channels (or a
multiple) use every NIC once.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..checks import check_p
from ..hardware import Link
from .base import Topology, check_link, check_ratio

__all__ = ["TwoLevel", "ThreeTier"]


def _nic_map(G: int, nics: int | None, nic_of_gpu: Sequence[int] | None) -> tuple[int, np.ndarray]:
    """Validated (NICs per node, NIC of each local GPU)."""
    if nics is not None:
        nics = check_p(nics, "nics_per_node")
    if nic_of_gpu is None:
        K = G if nics is None else nics
        if G % K:
            raise ValueError(f"nics_per_node={K} does not divide gpus_per_node={G}; "
                             "give nic_of_gpu (the NIC of each GPU) for an uneven split")
        return K, np.arange(G) // (G // K)
    m = np.asarray(nic_of_gpu)
    if m.ndim != 1 or m.size != G or not np.issubdtype(m.dtype, np.integer):
        raise ValueError(f"nic_of_gpu must list one integer NIC index per GPU of a node ({G}), "
                         f"got {nic_of_gpu!r}")
    K = int(m.max()) + 1 if nics is None else nics
    if m.min() < 0 or m.max() >= K:
        raise ValueError(f"nic_of_gpu entries must be NIC indices 0..{K - 1} (nics_per_node={K}), "
                         f"got {m.tolist()}")
    return K, m.astype(np.int64)


class TwoLevel(Topology):
    """GPU cluster: ``nodes`` x ``gpus_per_node``.  Inside a node an NVSwitch (``intra``
    link per GPU); across nodes NICs (``inter``) on rail-optimized leaf switches, leaves
    joined by a spine (see the module docstring for what each message occupies).

    Parameters
    ----------
    oversubscription : divides each node's total uplink (nics x inter.beta).
    nics_per_node : NICs per node (default: one per GPU); NIC k of every node on rail k.
    nic_of_gpu : the NIC of each local GPU (default: GPUs ``g`` with ``g // gpus_per_nic == k``
        share NIC k).
    spine_oversubscription : divides each leaf's link to the spine (nodes x spine.beta):
        what rail-misaligned traffic crosses.
    spine : link class of the leaf-spine links (default ``inter``).
    pxn : route messages between nodes over the receiver's rail (see the module docstring).

    Device id = node * gpus_per_node + local index.

    Examples
    --------
    Two DGX-style nodes of 8 GPUs, one NDR NIC per GPU on rail-optimized leaves: GPU 0 reaches
    GPU 8 (same rail) through its leaf, GPU 9 (another rail) through the spine.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> c = TwoLevel(2, 8, NVLINK4, IB_NDR)
    >>> c.route(0, 8), c.route(0, 9)
    ([0, 'leaf0', 8], [0, 'leaf0', 'spine', 'leaf1', 9])
    >>> c.bisection_bandwidth / 1e9, c.ring_channels(np.arange(16))     # GB/s: 8 NICs x 50
    (400.0, 8)
    """

    def __init__(self, nodes: int, gpus_per_node: int, intra: Link, inter: Link,
                 oversubscription: float = 1.0, *, nics_per_node: int | None = None,
                 nic_of_gpu: Sequence[int] | None = None, spine_oversubscription: float = 1.0,
                 spine: Link | None = None, pxn: bool = False):
        self._build(1, check_p(nodes, "nodes"), gpus_per_node, intra, inter, oversubscription,
                    nics_per_node, nic_of_gpu, check_ratio(spine_oversubscription, "spine_oversubscription"),
                    spine, pxn)
        extra = [f"{self.nics_per_node} NICs/node"] if self.nics_per_node != self.gpus_per_node else []
        if not np.array_equal(self.nic_of_gpu, np.arange(self.gpus_per_node) // (self.gpus_per_node // self.nics_per_node or 1)):
            extra.append(f"NIC of GPU {self.nic_of_gpu.tolist()}")
        extra += [f"spine {self.spine_oversubscription:g}:1"] if self.spine_oversubscription != 1 else []
        extra += ["PXN"] if self.pxn else []
        self.name = (f"TwoLevel({self.nodes} nodes x {self.gpus_per_node} GPUs, {intra.name} + {inter.name}"
                     + "".join(f", {e}" for e in extra) + ")")

    # ------------------------------------------------------------------ tables
    def _build(self, racks, nodes_per_rack, gpus_per_node, intra, inter, oversubscription, nics,
               nic_of_gpu, spine_oversubscription, spine, pxn) -> None:
        if not isinstance(pxn, (bool, np.bool_)):
            raise TypeError(f"pxn must be True or False, got {pxn!r}")
        self.pxn = bool(pxn)
        self.racks, self.nodes_per_rack = racks, nodes_per_rack
        self.nodes = N = racks * nodes_per_rack
        self.gpus_per_node = G = check_p(gpus_per_node, "gpus_per_node")
        self.oversubscription = check_ratio(oversubscription, "oversubscription")
        self.spine_oversubscription = spine_oversubscription
        self.intra, self.inter = check_link(intra, "intra"), check_link(inter, "inter")
        self.spine = self.inter if spine is None else check_link(spine, "spine")
        self.nics_per_node, self.nic_of_gpu = K, nic = _nic_map(G, nics, nic_of_gpu)
        # the first GPU of each NIC (-1 for a NIC no GPU uses): where PXN relays
        self._nic_gpu = np.full(K, -1, dtype=np.int64)
        for g in range(G - 1, -1, -1):
            self._nic_gpu[nic[g]] = g
        self.p = P = N * G
        L = racks * K
        users = np.bincount(nic, minlength=K)
        own_nic = K == G and np.array_equal(nic, np.arange(G))
        nic_names = ([f"gpu{a * G + k}.nic" for a in range(N) for k in range(K)] if own_nic
                     else [f"node{a}.nic{k}" for a in range(N) for k in range(K)])
        self._leaf_names = ([f"leaf{k}" for k in range(K)] if racks == 1
                            else [f"rack{r}.leaf{k}" for r in range(racks) for k in range(K)])
        self._res_names = (
            [f"gpu{d}.nvlink.out" for d in range(P)] + [f"gpu{d}.nvlink.in" for d in range(P)]
            + [f"{x}.out" for x in nic_names] + [f"{x}.in" for x in nic_names]
            + [f"node{a}.up" for a in range(N)] + [f"node{a}.down" for a in range(N)]
            + self._leaf_names + [f"{x}.up" for x in self._leaf_names] + [f"{x}.down" for x in self._leaf_names])
        self._base = dict(nic_out=2 * P, nic_in=2 * P + N * K, up=2 * P + 2 * N * K,
                          down=2 * P + 2 * N * K + N, leaf=2 * P + 2 * N * K + 2 * N)
        self._base.update(leaf_up=self._base["leaf"] + L, leaf_down=self._base["leaf"] + 2 * L)
        self._res_bw = np.concatenate([
            np.full(2 * P, intra.beta), np.full(2 * N * K, inter.beta),
            np.full(2 * N, K * inter.beta / self.oversubscription), np.full(L, np.inf),
            np.full(2 * L, nodes_per_rack * self.spine.beta / spine_oversubscription), [np.inf]])
        # a NIC used by exactly one GPU belongs to it (its speed factor scales it)
        sole = np.where(users[nic] == 1, np.arange(G), -1)
        nic_owner = np.full(K, -1)
        nic_owner[nic[sole >= 0]] = sole[sole >= 0]
        nic_dev = np.where(nic_owner[None, :] >= 0, np.arange(N)[:, None] * G + nic_owner[None, :], -1).ravel()
        devs = np.concatenate([np.tile(np.arange(P), 2), np.tile(nic_dev, 2), np.full(2 * N + 3 * L, -1)])
        self._owners = np.stack([devs, np.full_like(devs, -1)], axis=1)

    # ------------------------------------------------------------------ structure
    @property
    def gpus_per_nic(self) -> int:
        """The most GPUs of a node that share one NIC (G / nics for the default map)."""
        return int(np.bincount(self.nic_of_gpu).max())

    @property
    def node_uplink_bandwidth(self) -> float:
        """Bytes/s one node can send to other nodes: its NICs, divided by ``oversubscription``."""
        return self.nics_per_node * self.inter.beta / self.oversubscription

    def node_of(self, dev):
        return np.asarray(dev) // self.gpus_per_node

    def rail_of(self, dev):
        """Rail (NIC index, leaf switch within the rack) of device(s)."""
        return self.nic_of_gpu[np.asarray(dev) % self.gpus_per_node]

    def leaf_of(self, dev):
        """Leaf switch index (rack * nics_per_node + rail) of device(s)."""
        return self.node_of(dev) // self.nodes_per_rack * self.nics_per_node + self.rail_of(dev)

    ports_per_device = property(lambda self: 2 if self.nodes > 1 else 1)

    @property
    def diameter(self) -> int:
        if self.nodes == 1:
            return 2 if self.gpus_per_node > 1 else 0
        several_leaves = self.racks > 1 or np.unique(self.nic_of_gpu).size > 1
        return 4 if several_leaves else 2

    @property
    def bisection_bandwidth(self) -> float:
        """Bytes/s across the worst cut between two halves of the nodes (and, with several
        racks, of the racks: their leaves' spine links).  Cuts that split nodes are not
        the worst: NVLink crosses them."""
        if self.nodes == 1:
            return (self.gpus_per_node // 2) * self.intra.beta
        used = np.unique(self.nic_of_gpu).size
        per_node = min(used * self.inter.beta, self.node_uplink_bandwidth)
        cut = (self.p // 2) * per_node / self.gpus_per_node
        if self.racks > 1:
            cut = min(cut, (self.racks // 2) * self.nics_per_node * float(self._res_bw[self._base["leaf_up"]]))
        return cut

    def route(self, src: int, dst: int) -> list:
        src, dst = self.check_device(src), self.check_device(dst)
        G = self.gpus_per_node
        if src == dst:
            return [src]
        if src // G == dst // G:
            return [src, f"nvswitch{src // G}", dst]
        ld = self._leaf_names[int(self.leaf_of(dst))]
        if self.pxn:
            ks, kd = (int(self.rail_of(d)) for d in (src, dst))
            relay = src // G * G + int(self._nic_gpu[kd])
            ls = self._leaf_names[int(self.node_of(src)) // self.nodes_per_rack * self.nics_per_node + kd]
            head = [src] if ks == kd else [src, f"nvswitch{src // G}", relay]
        else:
            ls, head = self._leaf_names[int(self.leaf_of(src))], [src]
        return head + ([ls, dst] if ls == ld else [ls, "spine", ld, dst])

    # ------------------------------------------------------------------ simulator
    def message_costs(self, src, dst):
        P, G, K, b = self.p, self.gpus_per_node, self.nics_per_node, self._base
        ns, nd = src // G, dst // G
        ks, kd = self.nic_of_gpu[src % G], self.nic_of_gpu[dst % G]
        cross = ns != nd
        relay = cross & (ks != kd) if self.pxn else np.zeros_like(cross)
        if self.pxn:              # leave through the NIC on the receiver's rail
            ks = kd
        ls, ld = ns // self.nodes_per_rack * K + ks, self.leaf_of(dst)
        spine = cross & (ls != ld)
        lat = np.where(spine, self.spine.alpha, np.where(cross, self.inter.alpha, self.intra.alpha))
        idle = self.n_resources
        cols = [np.where(cross, b["nic_out"] + ns * K + ks, src),
                np.where(cross, b["nic_in"] + nd * K + kd, P + dst)]
        if cross.any():           # columns every message would leave idle are not built
            cols += [np.where(cross, b["up"] + ns, idle), np.where(cross, b["down"] + nd, idle),
                     np.where(cross, b["leaf"] + ls, idle)]
        if relay.any():           # PXN: over NVLink to the GPU of that NIC first
            cols += [np.where(relay, src, idle), np.where(relay, P + ns * G + self._nic_gpu[kd], idle)]
        if spine.any():
            cols += [np.where(spine, b["leaf"] + ld, idle), np.where(spine, b["leaf_up"] + ls, idle),
                     np.where(spine, b["leaf_down"] + ld, idle)]
        return lat, np.stack(cols, axis=1)

    def ring_channels(self, devices) -> int:
        """One channel per NIC a GPU uses, when ``devices`` are all GPUs in their natural
        order across several nodes (NCCL: at least one ring channel per NIC); else 1."""
        if self.nodes == 1 or not np.array_equal(np.asarray(devices), np.arange(self.p)):
            return 1
        return int(np.unique(self.nic_of_gpu).size)

    def channel_orders(self, devices, channels: int) -> np.ndarray:
        """Ring order of each channel: over all GPUs in their natural order on several
        nodes, channel ``c`` visits the nodes in turn and, inside each, starts at a GPU of
        NIC ``c mod K`` (K the NICs in use; the channels of one NIC take its GPUs in turn)
        and goes round the node from there; otherwise every channel follows ``devices``."""
        devices = np.asarray(devices, dtype=np.int64)
        if self.nodes == 1 or not np.array_equal(devices, np.arange(self.p)):
            return super().channel_orders(devices, channels)
        G, used = self.gpus_per_node, np.unique(self.nic_of_gpu)
        nodes = np.arange(self.nodes)[:, None] * G
        rows = []
        for c in range(channels):
            gpus = np.flatnonzero(self.nic_of_gpu == used[c % used.size])
            first = gpus[(c // used.size) % gpus.size]
            rows.append((nodes + (first + np.arange(G)) % G).ravel())
        return np.stack(rows)

    def innet_latency_bandwidth(self, devices):
        """NVLink SHARP inside one node; across nodes SHARP in the IB switches, at the NIC
        rate divided among the participants that share a NIC (or a node's uplink), and no
        faster than a leaf's spine link when the participants span several leaves."""
        devices = np.asarray(devices)
        nodes = self.node_of(devices)
        if np.unique(nodes).size == 1:
            return self.intra.alpha, self.intra.beta
        nic = nodes * self.nics_per_node + self.rail_of(devices)
        share = np.unique(nic, return_counts=True)[1].max()
        per_node = np.unique(nodes, return_counts=True)[1].max()
        beta = min(self.inter.beta / share, self.node_uplink_bandwidth / per_node)
        if np.unique(self.leaf_of(devices)).size > 1:
            return self.spine.alpha, min(beta, float(self._res_bw[self._base["leaf_up"]]))
        return self.inter.alpha, beta

    def tier_links(self) -> tuple[Link, ...]:
        """The link each tier of a multi-level schedule sees, innermost first: NVLink in
        the node; then across nodes on one rail (and, on a :class:`ThreeTier`, across
        racks on one rail) the α of that tier and the bandwidth one GPU gets when every
        GPU of the cluster sends one equal message at once at that tier — its NIC's share,
        its node's uplink share and, across racks, its leaf's spine-link share."""
        G, K = self.gpus_per_node, self.nics_per_node
        share = self.gpus_per_nic
        rail = 1 / max(share / self.inter.beta, G * self.oversubscription / (K * self.inter.beta))
        links = [self.intra, Link(f"{self.inter.name}, rail share", self.inter.alpha, rail,
                                  f"{self.name}: tier_links()")]
        if self.racks > 1:
            spine = 1 / max(1 / rail, share * self.spine_oversubscription / self.spine.beta)
            links.append(Link(f"{self.spine.name}, spine share", self.spine.alpha, spine,
                              f"{self.name}: tier_links()"))
        return tuple(links)


class ThreeTier(TwoLevel):
    """Racks of nodes of GPUs (rack → node → GPU): ``racks`` x ``nodes_per_rack`` x
    ``gpus_per_node``.  NVLink (``intra``) in the node; NICs (``inter``) on the rack's rail
    leaf switches; the racks' leaves joined by a spine over ``spine`` links, each leaf's
    spine link ``nodes_per_rack · spine.beta / rack_oversubscription`` (2 for the
    chapter's 2:1).  Traffic between racks, or between rails, crosses the spine.

    Device id = (rack * nodes_per_rack + node) * gpus_per_node + local index.  Other
    parameters as :class:`TwoLevel`.

    Two racks of two 8-GPU nodes, 2:1 between racks: 32 NICs x 50 GB/s, halved across the cut
    between the racks.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> c = ThreeTier(2, 2, 8, NVLINK4, IB_NDR, rack_oversubscription=2.0)
    >>> c.p, c.route(0, 31), c.bisection_bandwidth / 1e9
    (32, [0, 'rack0.leaf0', 'spine', 'rack1.leaf7', 31], 400.0)
    """

    def __init__(self, racks: int, nodes_per_rack: int, gpus_per_node: int, intra: Link, inter: Link,
                 spine: Link | None = None, rack_oversubscription: float = 1.0, *,
                 nics_per_node: int | None = None, nic_of_gpu: Sequence[int] | None = None,
                 oversubscription: float = 1.0, pxn: bool = False):
        self._build(check_p(racks, "racks"), check_p(nodes_per_rack, "nodes_per_rack"), gpus_per_node,
                    intra, inter, oversubscription, nics_per_node, nic_of_gpu,
                    check_ratio(rack_oversubscription, "rack_oversubscription"), spine, pxn)
        self.rack_oversubscription = self.spine_oversubscription
        self.name = (f"ThreeTier({self.racks} racks x {self.nodes_per_rack} nodes x {self.gpus_per_node} GPUs, "
                     f"{intra.name} + {inter.name} + {self.spine.name}, "
                     f"{self.rack_oversubscription:g}:1 between racks" + (", PXN)" if self.pxn else ")"))

    def rack_of(self, dev):
        return self.node_of(dev) // self.nodes_per_rack
