"""Topologies: how links connect devices, and what a message costs on them.

Every topology answers the textbook questions (ports per device, diameter, bisection
bandwidth, :meth:`~Topology.route`) and, for the simulator, the cost of a batch of
messages sent in one round (:meth:`Topology.message_costs`): each message's latency
and the *resources* it occupies (send ports, receive ports, directed links, NICs, switch
uplinks).  A resource serializes all bytes that cross it in a round; a message is as slow
as the most loaded resource on its path (cut-through).

Modules: :mod:`.base` (the :class:`Topology` base class), :mod:`.switch` (:class:`Switch`,
:class:`SwitchTree`), :mod:`.torus` (:class:`Torus`, :class:`Ring`, :func:`ring_order`),
:mod:`.clusters` (:class:`TwoLevel`, :class:`ThreeTier`: GPUs, NICs on rails, a spine).

Latency on direct networks (ring, torus): a message of h hops pays
``alpha * (1 + hop_alpha * (h - 1))``.  The default ``hop_alpha = 1`` is h·α; the
lecture's "row-major is 2 % slower" (§6.1) needs ``hop_alpha = 2`` (a store-and-forward
style re-send at every intermediate chip).
"""
from .base import Topology
from .clusters import ThreeTier, TwoLevel
from .switch import Switch, SwitchTree
from .torus import MAPPINGS, Ring, Torus, ring_order

__all__ = ["Topology", "Switch", "SwitchTree", "Ring", "Torus", "TwoLevel", "ThreeTier", "ring_order",
           "MAPPINGS"]
