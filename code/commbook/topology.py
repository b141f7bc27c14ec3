"""Topologies: how links connect devices, and what a message costs on them.

Every topology answers the textbook questions (ports per device, diameter, bisection
bandwidth, :meth:`~Topology.route`) and, for the simulator, the cost of a batch of
messages sent in one round (:meth:`Topology.message_costs`): each message's latency
and the *resources* it occupies (send ports, receive ports, directed links).  A
resource serializes all bytes that cross it in a round; a message is as slow as the
most loaded resource on its path (cut-through).

Latency on direct networks (ring, torus): a message of h hops pays
``alpha * (1 + hop_alpha * (h - 1))``.  The default ``hop_alpha = 1`` is h·α; the
lecture's "row-major is 2 % slower" (§6.1) needs ``hop_alpha = 2`` (a store-and-forward
style re-send at every intermediate chip).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .checks import check_p
from .hardware import Link

__all__ = ["Topology", "Switch", "Ring", "Torus", "TwoLevel", "ring_order", "MAPPINGS"]


def _check_link(link: object, name: str = "link") -> Link:
    if not isinstance(link, Link):
        raise TypeError(f"{name} must be a commbook.hardware.Link, got {type(link).__name__}")
    return link


class Topology:
    """Base class.  Subclasses set ``p`` and the resource tables."""

    p: int
    name: str = "topology"

    # resource tables filled by subclasses: bandwidth (bytes/s) and names
    _res_bw: np.ndarray
    _res_names: list[str]

    # ------------------------------------------------------------------ metrics
    @property
    def ports_per_device(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def diameter(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def bisection_bandwidth(self) -> float:  # pragma: no cover - overridden
        """Bytes/s that can cross the worst half/half cut in one direction."""
        raise NotImplementedError

    def route(self, src: int, dst: int) -> list:  # pragma: no cover - overridden
        """Path from ``src`` to ``dst``: device ids (int) and switches (str)."""
        raise NotImplementedError

    def hops(self, src: int, dst: int) -> int:
        """Number of hops on :meth:`route`."""
        return len(self.route(src, dst)) - 1

    # ------------------------------------------------------------------ simulator
    @property
    def n_resources(self) -> int:
        return len(self._res_names)

    @property
    def resource_names(self) -> list[str]:
        """Names of the serializing resources (ports, directed links), by index."""
        return self._res_names

    @property
    def resource_owners(self) -> np.ndarray:
        """For every resource, the devices it belongs to, shape (n_resources, 2), -1 for
        none: a port belongs to its device, a directed link to the devices at both ends,
        a node's uplink to no single device.  A device's port speed factor
        (:class:`~commbook.comm_sim.VirtualCluster`) scales the resources it owns."""
        return self._owners

    @property
    def resource_bandwidth(self) -> np.ndarray:
        """Bandwidth (bytes/s) of every resource, plus a trailing idle slot (inf)."""
        return self._res_bw

    def message_costs(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Latency (s) of each message and the resources it uses.

        Returns ``(latency, resources)`` where ``resources`` has shape (m, w) and is
        padded with the idle index ``n_resources``.  ``src != dst`` for every message.
        """
        raise NotImplementedError  # pragma: no cover

    def innet_latency_bandwidth(self, devices: np.ndarray) -> tuple[float, float]:
        """(α, β) for an in-network reduction over ``devices`` (switches only)."""
        raise ValueError(f"in-network reduction needs a switch; {self.name} has none")

    def check_device(self, d: int) -> int:
        """Return ``d`` if it names a device of this topology, else raise ValueError."""
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"device id must be an integer, got {type(d).__name__}")
        if not 0 <= d < self.p:
            raise ValueError(f"device {d} is outside the topology ({self.name}: devices 0..{self.p - 1})")
        return int(d)

    def check_devices(self, devs: np.ndarray) -> None:
        """Vectorized :meth:`check_device` for arrays of device ids."""
        if devs.size and (devs.min() < 0 or devs.max() >= self.p):
            bad = devs[(devs < 0) | (devs >= self.p)][0]
            raise ValueError(f"device {bad} is outside the topology ({self.name}: devices 0..{self.p - 1})")


# ============================================================================== switch
class Switch(Topology):
    """``p`` devices on one non-blocking switch (NVSwitch, a fat tree seen as one hop).

    Each device has one port of bandwidth ``link.beta`` in each direction; α is paid
    once per message, not per switch hop.
    """

    def __init__(self, p: int, link: Link):
        self.p = check_p(p)
        self.link = _check_link(link)
        self.name = f"Switch(p={self.p}, {link.name})"
        self._res_names = [f"port{d}.out" for d in range(self.p)] + [f"port{d}.in" for d in range(self.p)]
        self._res_bw = np.append(np.full(2 * self.p, link.beta), np.inf)
        devs = np.tile(np.arange(self.p), 2)
        self._owners = np.stack([devs, np.full_like(devs, -1)], axis=1)

    ports_per_device = property(lambda self: 1)
    diameter = property(lambda self: 2 if self.p > 1 else 0)
    bisection_bandwidth = property(lambda self: (self.p // 2) * self.link.beta)

    def route(self, src: int, dst: int) -> list:
        src, dst = self.check_device(src), self.check_device(dst)
        return [src] if src == dst else [src, "switch", dst]

    def message_costs(self, src, dst):
        lat = np.full(src.shape, self.link.alpha)
        return lat, np.stack([src, dst + self.p], axis=1)

    def innet_latency_bandwidth(self, devices):
        return self.link.alpha, self.link.beta


# ============================================================================== torus / ring
class Torus(Topology):
    """A k-dimensional torus (or mesh, ``wraparound=False``) of ``prod(dims)`` devices.

    Device index is row-major over coordinates (last dimension fastest).  Links are
    full duplex: one directed link each way between neighbours, each of bandwidth
    ``link.beta``.  Routing is dimension-ordered along the shortest way (ties go the
    positive way).  ``unidirectional=True`` keeps only the positive-direction links
    (a one-way ring).
    """

    def __init__(self, dims: Sequence[int], link: Link, wraparound: bool = True,
                 hop_alpha: float = 1.0, unidirectional: bool = False):
        if isinstance(dims, int):
            dims = (dims,)
        self.dims = tuple(check_p(a, "torus dimension") for a in dims)
        if not self.dims:
            raise ValueError("a torus needs at least one dimension")
        if hop_alpha < 0 or math.isnan(hop_alpha):
            raise ValueError(f"hop_alpha must be >= 0, got {hop_alpha!r}")
        if unidirectional and not wraparound:
            raise ValueError("a unidirectional ring needs wraparound=True")
        self.p = int(np.prod(self.dims))
        self.link = _check_link(link)
        self.wraparound = bool(wraparound)
        self.hop_alpha = float(hop_alpha)
        self.unidirectional = bool(unidirectional)
        self.nd = len(self.dims)
        self.strides = np.array([int(np.prod(self.dims[d + 1:])) for d in range(self.nd)], dtype=np.int64)
        kind = "Mesh" if not wraparound else "Torus"
        self.name = f"{kind}({'x'.join(map(str, self.dims))}, {link.name})"
        names = []
        for dev in range(self.p):
            for d in range(self.nd):
                names += [f"{dev}.d{d}+", f"{dev}.d{d}-"]
        self._res_names = names
        bw = np.full(2 * self.nd * self.p, link.beta)
        if self.unidirectional:
            bw[1::2] = np.inf  # no such links: never used, never a bottleneck
        self._res_bw = np.append(bw, np.inf)
        dev = np.repeat(np.arange(self.p), 2 * self.nd)
        d = np.tile(np.repeat(np.arange(self.nd), 2), self.p)
        step = np.where(np.arange(2 * self.nd * self.p) % 2 == 0, 1, -1)
        c = self.coords(dev)
        c[np.arange(dev.size), d] = (c[np.arange(dev.size), d] + step) % np.array(self.dims)[d]
        self._owners = np.stack([dev, c @ self.strides], axis=1)

    # ---- metrics
    @property
    def ports_per_device(self) -> int:
        """Outgoing links of an interior device: two per dimension (one if the dimension
        has size 2 or the ring is one-way)."""
        return sum(1 if (self.unidirectional or a == 2) else 2 for a in self.dims if a > 1)

    @property
    def diameter(self) -> int:
        if self.unidirectional:
            return sum(a - 1 for a in self.dims)
        return sum(a // 2 if self.wraparound else a - 1 for a in self.dims)

    @property
    def bisection_bandwidth(self) -> float:
        a = max(self.dims)
        if a == 1:
            return 0.0
        crossing = 2 if (self.wraparound and a > 2 and not self.unidirectional) else 1
        return (self.p // a) * crossing * self.link.beta

    def coords(self, dev: np.ndarray | int) -> np.ndarray:
        """Coordinates of device(s), shape (..., nd)."""
        dev = np.asarray(dev, dtype=np.int64)
        return (dev[..., None] // self.strides) % np.array(self.dims)

    def _deltas(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        cs, cd = self.coords(src), self.coords(dst)
        dims = np.array(self.dims)
        delta = cd - cs
        if self.unidirectional:
            return delta % dims
        if self.wraparound:
            fwd = delta % dims
            return np.where(fwd <= dims // 2, fwd, fwd - dims)
        return delta

    def route(self, src: int, dst: int) -> list:
        src, dst = self.check_device(src), self.check_device(dst)
        delta = self._deltas(np.array([src]), np.array([dst]))[0]
        path, cur = [src], self.coords(src).copy()
        for d in range(self.nd):
            step = 1 if delta[d] > 0 else -1
            for _ in range(abs(int(delta[d]))):
                cur[d] = (cur[d] + step) % self.dims[d]
                path.append(int(cur @ self.strides))
        return path

    def message_costs(self, src, dst):
        m = src.size
        delta = self._deltas(src, dst)  # (m, nd)
        nhops = np.abs(delta)
        h = nhops.sum(axis=1)
        lat = self.link.alpha * (1 + self.hop_alpha * (h - 1))
        width = max(int(h.max()) if m else 0, 1)
        res = np.full((m, width), self.n_resources, dtype=np.int64)
        if m == 0:
            return lat, res
        cur = self.coords(src)  # (m, nd), updated dimension by dimension
        col = np.zeros(m, dtype=np.int64)
        dims = np.array(self.dims)
        for d in range(self.nd):
            k = nhops[:, d]
            if not k.any():
                continue
            msg = np.repeat(np.arange(m), k)
            t = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)  # 0..k-1 per message
            sign = np.sign(delta[msg, d])
            pos = cur[msg].copy()
            pos[:, d] = (pos[:, d] + sign * t) % dims[d]
            node = pos @ self.strides
            link = node * (2 * self.nd) + 2 * d + (sign < 0)
            res[msg, col[msg] + t] = link
            col += k
            cur[:, d] = (cur[:, d] + delta[:, d]) % dims[d]
        return lat, res


class Ring(Torus):
    """``p`` devices in a ring: bidirectional (two directed links per neighbour pair)
    or unidirectional (``bidirectional=False``: messages only travel +1)."""

    def __init__(self, p: int, link: Link, bidirectional: bool = True, hop_alpha: float = 1.0):
        super().__init__((check_p(p),), link, wraparound=True, hop_alpha=hop_alpha,
                         unidirectional=not bidirectional)
        self.name = f"Ring(p={self.p}, {'bi' if bidirectional else 'uni'}directional, {link.name})"


# ============================================================================== two-level
class TwoLevel(Topology):
    """GPU cluster: ``nodes`` x ``gpus_per_node``.  Inside a node an NVSwitch (``intra``
    link per GPU); across nodes one NIC per GPU (``inter``), rail-optimized: GPU g of
    every node sits on leaf switch (rail) g, leaves joined by a spine.

    ``oversubscription`` divides each node's total uplink (gpus_per_node x inter.beta).
    Device id = node * gpus_per_node + local index.
    """

    def __init__(self, nodes: int, gpus_per_node: int, intra: Link, inter: Link,
                 oversubscription: float = 1.0):
        self.nodes = check_p(nodes, "nodes")
        self.gpus_per_node = check_p(gpus_per_node, "gpus_per_node")
        if not oversubscription >= 1:
            raise ValueError(f"oversubscription must be >= 1, got {oversubscription!r}")
        self.intra, self.inter = _check_link(intra, "intra"), _check_link(inter, "inter")
        self.oversubscription = float(oversubscription)
        N, G = self.nodes, self.gpus_per_node
        self.p = N * G
        self.name = f"TwoLevel({N} nodes x {G} GPUs, {intra.name} + {inter.name})"
        P = self.p
        self._res_names = (
            [f"gpu{d}.nvlink.out" for d in range(P)] + [f"gpu{d}.nvlink.in" for d in range(P)]
            + [f"gpu{d}.nic.out" for d in range(P)] + [f"gpu{d}.nic.in" for d in range(P)]
            + [f"node{a}.up" for a in range(N)] + [f"node{a}.down" for a in range(N)]
        )
        up = G * inter.beta / self.oversubscription
        self._res_bw = np.concatenate([
            np.full(2 * P, intra.beta), np.full(2 * P, inter.beta), np.full(2 * N, up), [np.inf]])
        devs = np.concatenate([np.tile(np.arange(P), 4), np.full(2 * N, -1)])
        self._owners = np.stack([devs, np.full_like(devs, -1)], axis=1)

    ports_per_device = property(lambda self: 2 if self.nodes > 1 else 1)

    @property
    def diameter(self) -> int:
        if self.nodes == 1:
            return 2 if self.gpus_per_node > 1 else 0
        return 4 if self.gpus_per_node > 1 else 2

    @property
    def bisection_bandwidth(self) -> float:
        if self.nodes == 1:
            return (self.gpus_per_node // 2) * self.intra.beta
        return (self.p // 2) * self.inter.beta / self.oversubscription

    def node_of(self, dev):
        return np.asarray(dev) // self.gpus_per_node

    def route(self, src: int, dst: int) -> list:
        src, dst = self.check_device(src), self.check_device(dst)
        G = self.gpus_per_node
        if src == dst:
            return [src]
        if src // G == dst // G:
            return [src, f"nvswitch{src // G}", dst]
        if src % G == dst % G:
            return [src, f"leaf{src % G}", dst]
        return [src, f"leaf{src % G}", "spine", f"leaf{dst % G}", dst]

    def message_costs(self, src, dst):
        P, G = self.p, self.gpus_per_node
        ns, nd = src // G, dst // G
        cross = ns != nd
        lat = np.where(cross, self.inter.alpha, self.intra.alpha)
        idle = self.n_resources
        res = np.empty((src.size, 4), dtype=np.int64)
        res[:, 0] = np.where(cross, 2 * P + src, src)
        res[:, 1] = np.where(cross, 3 * P + dst, P + dst)
        res[:, 2] = np.where(cross, 4 * P + ns, idle)
        res[:, 3] = np.where(cross, 4 * P + self.nodes + nd, idle)
        return lat, res

    def innet_latency_bandwidth(self, devices):
        nodes = np.unique(self.node_of(devices))
        if nodes.size == 1:
            return self.intra.alpha, self.intra.beta  # NVLink SHARP inside the node
        return self.inter.alpha, self.inter.beta      # SHARP in the IB switches


# ============================================================================== mappings
MAPPINGS = ("identity", "row_major", "snake", "random")


def ring_order(dims: Sequence[int] | int, kind: str = "identity", seed: int | None = None) -> np.ndarray:
    """Device ids in the order a logical ring visits them.

    ``identity`` and ``row_major``: 0, 1, 2, ... (row-major over the torus coordinates);
    ``snake``: boustrophedon (every other row reversed, recursively), so consecutive
    ranks — and the last and first on an even torus — are neighbours;
    ``random``: a permutation drawn with ``numpy.random.default_rng(seed)``.
    """
    if isinstance(dims, int):
        dims = (dims,)
    dims = tuple(check_p(a, "dimension") for a in dims)
    p = int(np.prod(dims))
    if kind in ("identity", "row_major"):
        return np.arange(p)
    if kind == "random":
        if seed is None:
            raise ValueError("the random mapping needs a seed, so that results repeat")
        return np.random.default_rng(seed).permutation(p)
    if kind != "snake":
        raise ValueError(f"unknown mapping {kind!r}; valid: {', '.join(MAPPINGS)}")
    strides = np.array([int(np.prod(dims[d + 1:])) for d in range(len(dims))])
    digits = (np.arange(p)[:, None] // strides) % np.array(dims)
    out = digits.copy()
    for d in range(1, len(dims)):
        flip = out[:, :d].sum(axis=1) % 2 == 1
        out[flip, d] = dims[d] - 1 - digits[flip, d]
    return out @ strides
