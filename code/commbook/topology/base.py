"""The :class:`Topology` base class: metrics, routes and the resource tables the simulator
reads (what a topology answers, and what a resource is: :mod:`commbook.topology`).
"""
from __future__ import annotations

import math

import numpy as np

from ..checks import check_real, show
from ..hardware import Link

__all__ = ["Topology", "check_link", "check_ratio"]


def check_link(link: object, name: str = "link") -> Link:
    """Return ``link`` if it is a :class:`~commbook.hardware.Link`, else raise TypeError naming ``name``.

    >>> from commbook.hardware import NVLINK4
    >>> check_link(NVLINK4).name
    'NVLink 4 (H100)'
    >>> check_link((2e-6, 450e9), "intra")
    Traceback (most recent call last):
    TypeError: intra must be a commbook.hardware.Link, got tuple
    """
    if not isinstance(link, Link):
        raise TypeError(f"{name} must be a commbook.hardware.Link, got {type(link).__name__}")
    return link


def check_ratio(x: object, name: str) -> float:
    """Return an oversubscription ratio (a real number >= 1) as a float, else raise naming ``name``.

    >>> check_ratio(2, "oversubscription")
    2.0
    >>> check_ratio(0.5, "oversubscription")
    Traceback (most recent call last):
    ValueError: oversubscription must be >= 1 and finite (a ratio: 2 for 2:1), got 0.5
    """
    try:
        v = check_real(x, name, "a number >= 1 (a ratio: 2 for 2:1)")
    except ValueError:
        v = math.nan
    if not v >= 1:
        raise ValueError(f"{name} must be >= 1 and finite (a ratio: 2 for 2:1), got {show(x)}")
    return v


class Topology:
    """Base class.  Subclasses set ``p`` and the resource tables.

    Every topology answers the same questions; here eight GPUs on one switch:

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> t = Switch(8, NVLINK4)
    >>> t.route(0, 5), t.hops(0, 5), t.diameter, t.bisection_bandwidth / 1e9   # GB/s: 4 ports x 450
    ([0, 'switch', 5], 2, 2, 1800.0)
    """

    p: int
    name: str = "topology"

    # resource tables filled by subclasses: bandwidth (bytes/s) and names
    _res_bw: np.ndarray
    _res_names: list[str]

    def __repr__(self) -> str:
        """The topology's ``name`` and its device count, e.g.
        ``Switch(p=8, NVLink 4 (H100)) — 8 devices``.

        >>> from commbook.hardware import NVLINK4
        >>> from commbook.topology import Ring
        >>> repr(Ring(4, NVLINK4)).endswith("4 devices")
        True
        """
        return f"{self.name} \N{EM DASH} {self.p} device{'s' if self.p != 1 else ''}"

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

    def innet_link_bytes(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
        """Bytes per resource of an in-network reduction in which device ``src[i]``
        streams ``nbytes[i]`` into the switches and device ``dst[i]`` receives the result.
        The base class models no links for it (all zeros: the switch's links are not
        modelled); :class:`~commbook.topology.SwitchTree` records them."""
        return np.zeros(self.n_resources)

    def ring_channels(self, devices: np.ndarray) -> int:
        """How many ring channels NCCL runs over ``devices`` here at the least: one per NIC
        the ring crosses nodes through (see :class:`~commbook.topology.TwoLevel`); 1 on a
        topology without NICs."""
        return 1

    def channel_orders(self, devices: np.ndarray, channels: int) -> np.ndarray:
        """The ring order of each channel over ``devices``, shape (channels, len(devices)).
        Here every channel follows the given order: channels share the same ports and
        links, and each carries its own part of the buffer."""
        return np.tile(np.asarray(devices, dtype=np.int64), (channels, 1))

    def check_device(self, d: int, name: str | None = None) -> int:
        """Return ``d`` if it names a device of this topology, else raise ValueError
        (``name``: the parameter, named first in the message)."""
        if isinstance(d, np.ndarray) and d.ndim == 0:
            d = d[()]
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{name or 'device id'} must be an integer device id, got {type(d).__name__}"
                            if name else f"device id must be an integer, got {type(d).__name__}")
        if not 0 <= d < self.p:
            raise ValueError(f"{name + ': ' if name else ''}device {show(d)} is outside the topology "
                             f"({self.name}: devices 0..{self.p - 1})")
        return int(d)

    def check_devices(self, devs: np.ndarray) -> None:
        """Vectorized :meth:`check_device` for arrays of device ids."""
        if devs.size and (devs.min() < 0 or devs.max() >= self.p):
            bad = devs[(devs < 0) | (devs >= self.p)][0]
            raise ValueError(f"device {bad} is outside the topology ({self.name}: devices 0..{self.p - 1})")


