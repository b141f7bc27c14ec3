r"""Channels: several rings (or trees) at once, each over its own part of the buffer.

NCCL splits a collective over *channels*: each channel runs the whole algorithm (a ring,
a tree) on a part of the buffer, and on a cluster each channel crosses nodes through its
own NIC, so the channels together use every NIC.  Here a channel is one more group of
the schedule builders (:mod:`commbook.collectives.schedule`): channel ``c`` runs the
builder over the ranks in the order :meth:`~commbook.topology.Topology.channel_orders`
gives and over part ``c`` of the buffer (``chunk_bounds(n, channels)``: contiguous
parts, sizes differing by at most one element), and all channels share the rounds.
NCCL also gives each channel one contiguous part (``cbd.countLo``/``countMid``/``countHi``
of the channels ``channelLo..channelHi``, src/enqueue.cc:645-696 of NCCL v2.29.2-1), cut
in cells of a multiple of 16 bytes rather than in equal element counts.

What channels change in the α–β model:

* on one link class (a switch, one node) nothing: every channel's messages go through the
  same ports, so k channels of n/k cost what one ring of n costs;
* on a :class:`~commbook.topology.TwoLevel` cluster the NICs: one ring sends the whole
  per-step chunk through one NIC per node, while ``nics_per_node`` channels send a
  ``1/nics`` share through each.  :func:`ring_time_two_level` is that closed form, and
  :func:`tree_time_two_level` the binomial tree's.

>>> from commbook.topology import TwoLevel
>>> from commbook.hardware import Link
>>> nv, ib = Link("NVLink", 0.0, 450e9, "example"), Link("IB", 0.0, 50e9, "example")
>>> cluster = TwoLevel(8, 8, nv, ib, pxn=True)
>>> round(ring_time_two_level(cluster, 1e9, channels=1) * 1e3, 2)     # one ring: one NIC per node
39.38
>>> round(ring_time_two_level(cluster, 1e9, channels=8) * 1e3, 2)     # one channel per NIC
4.92
"""
from __future__ import annotations

import numpy as np

from .. import cost
from ..checks import check_count, check_size
from ..comm_sim import chunk_bounds
from ..topology import Topology, TwoLevel

__all__ = ["split", "ring_time_two_level", "tree_time_two_level"]


def split(topology: Topology, devices: np.ndarray, n, size_only: bool, channels: int):
    """Groups, bases and sizes of ``channels`` channels over the logical ranks whose devices
    are ``devices``: shape (channels, q) logical ranks in each channel's ring order, and
    channel c's part ``[base[c], base[c] + n[c])`` of the buffer.

    Two channels over 4 ranks of a switch: same order, each half of the 8 elements.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> groups, base, n = split(Switch(4, NVLINK4), np.arange(4), 8, size_only=False, channels=2)
    >>> groups.tolist(), base.tolist(), n.tolist()
    ([[0, 1, 2, 3], [0, 1, 2, 3]], [0, 4], [4, 4])
    """
    channels = check_count(channels, "channels")
    devices = np.asarray(devices, dtype=np.int64)
    orders = topology.channel_orders(devices, channels)
    logical = np.empty(topology.p, dtype=np.int64)
    logical[devices] = np.arange(devices.size)
    bounds = chunk_bounds(n, channels, size_only)
    return logical[orders], bounds[:-1], np.diff(bounds)


def ring_time_two_level(topology: TwoLevel, n: float, channels: int | None = None) -> float:
    r"""Closed form of the ring all-reduce with ``channels`` channels (default: one per NIC,
    :meth:`~commbook.topology.TwoLevel.ring_channels`) over all GPUs of a two-level cluster
    in their natural order, counted from the channels' layout.

    Each of the :math:`2(p-1)` rounds moves :math:`s = n/(kp)` per channel from every GPU
    to the next one of its channel's ring: inside a node over NVLink, and once per node
    and channel between nodes, from the channel's last GPU of the node through the NIC of
    its rail (the channel's own NIC with PXN, else the last GPU's) to the channel's first
    GPU of the next node.  A resource carrying :math:`j` such messages is busy
    :math:`js/\beta` (a node's uplink: the node's total over ``nics·β/oversubscription``);
    a message takes its tier's α plus its busiest resource, a round its slowest message.

    >>> from commbook.topology import TwoLevel
    >>> from commbook.hardware import Link
    >>> nv, ib = Link("NVLink", 1e-6, 450e9, "example"), Link("IB", 5e-6, 50e9, "example")
    >>> t1 = ring_time_two_level(TwoLevel(2, 8, nv, ib), 0.0, channels=1)
    >>> round(t1 * 1e6, 1)            # 2(p-1) = 30 rounds of α_IB
    150.0
    """
    if not isinstance(topology, TwoLevel):
        raise TypeError(f"topology must be a TwoLevel or ThreeTier cluster, got {type(topology).__name__}")
    n = check_size(n)
    t = topology
    k = t.ring_channels(np.arange(t.p)) if channels is None else check_count(channels, "channels")
    N, G, p = t.nodes, t.gpus_per_node, t.p
    if p == 1:
        return 0.0
    if N == 1:
        return cost.allreduce_ring(p, n, t.intra.alpha, t.intra.beta)
    s = n / (k * p)
    orders = t.channel_orders(np.arange(p), k)[:, :G]                 # each channel's order in node 0
    first, last = orders[:, 0], orders[:, -1]                         # where it enters and leaves
    rail = t.nic_of_gpu[first]                                        # the NIC it enters by
    out_nic = rail if t.pxn else t.nic_of_gpu[last]
    relay = t.nic_of_gpu[last] != rail if t.pxn else np.zeros(k, dtype=bool)
    relay_gpu = t._nic_gpu[rail]
    K, count = t.nics_per_node, lambda x: np.bincount(x, minlength=max(G, K))
    # messages per resource in one round (the same on every node and rack)
    nvl_out = k - count(last) + count(last[relay])
    nvl_in = k - count(first) + count(relay_gpu[relay])
    nic_out, nic_in = count(out_nic), count(rail)
    spine_hops = np.where(out_nic != rail, t.nodes_per_rack, 1 if t.racks > 1 else 0)  # per rack
    up, down = np.bincount(out_nic, spine_hops, K), np.bincount(rail, spine_hops, K)
    spine_bw = t.nodes_per_rack * t.spine.beta / t.spine_oversubscription
    node_link = k * s * t.oversubscription / (K * t.inter.beta)
    worst = 0.0
    for c in range(k):
        if G > 1:                                                     # inside the node
            busy = np.maximum(nvl_out[orders[c, :-1]], nvl_in[orders[c, 1:]]).max()
            worst = max(worst, t.intra.alpha + busy * s / t.intra.beta)
        busy = [nic_out[out_nic[c]] * s / t.inter.beta, nic_in[rail[c]] * s / t.inter.beta, node_link]
        if relay[c]:
            busy += [nvl_out[last[c]] * s / t.intra.beta, nvl_in[relay_gpu[c]] * s / t.intra.beta]
        hops = ([False] if t.racks == 1 or t.nodes_per_rack > 1 else []) + ([True] if t.racks > 1 else [])
        for cross_rack in hops:                                       # a hop inside a rack, between racks
            if cross_rack or out_nic[c] != rail[c]:                   # changes leaf: through the spine
                spine = [up[out_nic[c]] * s / spine_bw, down[rail[c]] * s / spine_bw]
                worst = max(worst, t.spine.alpha + max(busy + spine))
            else:
                worst = max(worst, t.inter.alpha + max(busy))
    return float(2 * (p - 1) * worst)


def tree_time_two_level(topology: TwoLevel, n: float, channels: int | None = None) -> float:
    r"""Closed form of the binomial-tree all-reduce with ``channels`` channels (default: one
    per NIC) over all GPUs of a one-rack two-level cluster in their natural order, with
    ``gpus_per_node`` a power of two, counted from the channels' layout.

    Channel ``c`` numbers the GPUs of every node from its first GPU on (see
    :meth:`~commbook.topology.TwoLevel.channel_orders`), so with ``G`` a power of two a
    step :math:`s < G` of the tree stays inside the nodes and a step :math:`s \ge G` joins
    the channel's first GPUs of two nodes, through the NIC of that GPU.  In a step the
    senders of channel ``c`` are the GPUs at position :math:`\equiv s \pmod{2s}`, each
    sending its channel's :math:`n/k`; a port carrying ``j`` of them is busy
    :math:`jn/(k\beta)`.  Reduce and broadcast take the same steps in opposite directions.

    >>> from commbook.topology import TwoLevel
    >>> from commbook.hardware import Link
    >>> nv, ib = Link("NVLink", 0.0, 450e9, "example"), Link("IB", 0.0, 50e9, "example")
    >>> one = tree_time_two_level(TwoLevel(2, 8, nv, ib), 1e9, channels=1)
    >>> round(one * 1e3, 2)           # 2 x (3 NVLink steps of 1 GB + 1 NIC step of 1 GB)
    53.33
    """
    if not isinstance(topology, TwoLevel) or topology.racks > 1:
        raise TypeError(f"topology must be a one-rack TwoLevel cluster, got {getattr(topology, 'name', topology)!r}")
    t, n = topology, check_size(n)
    k = t.ring_channels(np.arange(t.p)) if channels is None else check_count(channels, "channels")
    G, N, K = t.gpus_per_node, t.nodes, t.nics_per_node
    if G & (G - 1):
        raise ValueError(f"the tree's closed form needs gpus_per_node a power of two, got {G}")
    first = t.channel_orders(np.arange(t.p), k)[:, 0] % G         # each channel's first GPU
    share = n / k
    total, step = 0.0, 1
    while step < t.p:
        if step < G:                                              # inside every node
            pos = (np.arange(G)[None, :] - first[:, None]) % G     # (channel, GPU) -> position
            out = np.count_nonzero(pos % (2 * step) == step, axis=0)
            inn = np.count_nonzero(pos % (2 * step) == 0, axis=0)
            total += 2 * (t.intra.alpha + share * max(out.max(), inn.max()) / t.intra.beta)
        else:                                                     # first GPUs of two nodes
            nic = np.bincount(t.nic_of_gpu[first], minlength=K).max()
            link = k * share * t.oversubscription / (K * t.inter.beta)
            total += 2 * (t.inter.alpha + max(nic * share / t.inter.beta, link))
        step *= 2
    return float(total)
