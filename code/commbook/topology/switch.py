"""Switched fabrics: one non-blocking switch (:class:`Switch`) and a two-level tree of
switches with the switch-to-switch links as resources (:class:`SwitchTree`).

On both, α is paid once per message (cut-through), not per switch hop.
"""
from __future__ import annotations

import numpy as np

from ..checks import check_p
from ..hardware import Link
from .base import Topology, check_link

__all__ = ["Switch", "SwitchTree"]


class Switch(Topology):
    """``p`` devices on one non-blocking switch (NVSwitch, a fat tree seen as one hop).

    Each device has one port of bandwidth ``link.beta`` in each direction; α is paid
    once per message, not per switch hop.

    >>> from commbook.hardware import NVLINK4
    >>> s = Switch(8, NVLINK4)
    >>> s.route(0, 5), s.ports_per_device, s.bisection_bandwidth / 1e9    # GB/s: 4 x 450
    ([0, 'switch', 5], 1, 1800.0)
    """

    def __init__(self, p: int, link: Link):
        self.p = check_p(p)
        self.link = check_link(link)
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


class SwitchTree(Topology):
    """``leaves`` leaf switches of ``gpus_per_leaf`` devices each, under one root switch
    (the chapter's Figure 9).  Device d sits under leaf ``d // gpus_per_leaf``.

    Resources: every device's link to its leaf in each direction (``gpu{d}.up``,
    ``gpu{d}.down``, bandwidth ``link.beta``) and every leaf's link to the root
    (``leaf{l}.up``, ``leaf{l}.down``, bandwidth ``uplink.beta``; default ``uplink = link``:
    one cable per leaf, as drawn, so a leaf of k devices is k:1 oversubscribed towards the
    root).  A message under one leaf uses its two device links and pays ``link.alpha``;
    one between leaves also uses both leaves' uplinks and pays ``uplink.alpha``.

    In-network reduction (SHARP-like): every switch reduces what its subtree streams in
    and forwards one aggregate; the result comes back down the same links.  Per-link bytes
    (:meth:`innet_link_bytes`): each participant's link carries its slice up and the
    result down; when the participants span several leaves, each of their leaves' uplinks
    carries one aggregate up and one result down (the size of the largest slice).  Its
    time is α + n/β with β the slowest link class on the way.

    Two leaves of four GPUs under one root, one uplink cable per leaf: the cut between the
    leaves is that one cable.

    >>> from commbook.hardware import NVLINK4
    >>> t = SwitchTree(2, 4, NVLINK4)
    >>> t.route(0, 5), t.diameter, t.bisection_bandwidth / 1e9
    ([0, 'leaf0', 'root', 'leaf1', 5], 4, 450.0)
    """

    def __init__(self, leaves: int, gpus_per_leaf: int, link: Link, uplink: Link | None = None):
        self.leaves = check_p(leaves, "leaves")
        self.gpus_per_leaf = check_p(gpus_per_leaf, "gpus_per_leaf")
        self.link = check_link(link)
        self.uplink = link if uplink is None else check_link(uplink, "uplink")
        L, k = self.leaves, self.gpus_per_leaf
        self.p = P = L * k
        self.name = f"SwitchTree({L} leaves x {k} GPUs, {link.name}" + (
            ")" if uplink is None else f", uplinks {self.uplink.name})")
        self._res_names = ([f"gpu{d}.up" for d in range(P)] + [f"gpu{d}.down" for d in range(P)]
                           + [f"leaf{a}.up" for a in range(L)] + [f"leaf{a}.down" for a in range(L)])
        self._res_bw = np.concatenate([np.full(2 * P, self.link.beta), np.full(2 * L, self.uplink.beta), [np.inf]])
        devs = np.concatenate([np.tile(np.arange(P), 2), np.full(2 * L, -1)])
        self._owners = np.stack([devs, np.full_like(devs, -1)], axis=1)

    def leaf_of(self, dev):
        """Leaf switch of device(s)."""
        return np.asarray(dev) // self.gpus_per_leaf

    ports_per_device = property(lambda self: 1)

    @property
    def diameter(self) -> int:
        return 4 if self.leaves > 1 else (2 if self.p > 1 else 0)

    @property
    def bisection_bandwidth(self) -> float:
        """Bytes/s across the cut between two halves of the leaves (even ``leaves``), or
        the devices' own links where those are slower; one leaf: half its devices."""
        own = (self.p // 2) * self.link.beta
        return own if self.leaves == 1 else min(own, (self.leaves // 2) * self.uplink.beta)

    def route(self, src: int, dst: int) -> list:
        src, dst = self.check_device(src), self.check_device(dst)
        ls, ld = int(self.leaf_of(src)), int(self.leaf_of(dst))
        if src == dst:
            return [src]
        return [src, f"leaf{ls}", dst] if ls == ld else [src, f"leaf{ls}", "root", f"leaf{ld}", dst]

    def message_costs(self, src, dst):
        P, L = self.p, self.leaves
        ls, ld = self.leaf_of(src), self.leaf_of(dst)
        cross = ls != ld
        idle = self.n_resources
        lat = np.where(cross, self.uplink.alpha, self.link.alpha)
        res = np.stack([src, P + dst, np.where(cross, 2 * P + ls, idle),
                        np.where(cross, 2 * P + L + ld, idle)], axis=1)
        return lat, res

    def _spans(self, devices) -> bool:
        return np.unique(self.leaf_of(devices)).size > 1

    def innet_latency_bandwidth(self, devices):
        if self._spans(devices):
            return self.uplink.alpha, min(self.link.beta, self.uplink.beta)
        return self.link.alpha, self.link.beta

    def innet_link_bytes(self, src, dst, nbytes):
        P, L = self.p, self.leaves
        load = np.zeros(self.n_resources)
        np.add.at(load, src, nbytes)
        np.add.at(load, P + dst, nbytes)
        if nbytes.size and self._spans(np.concatenate([src, dst])):
            load[2 * P + np.unique(self.leaf_of(src))] += nbytes.max()
            load[2 * P + L + np.unique(self.leaf_of(dst))] += nbytes.max()
        return load
