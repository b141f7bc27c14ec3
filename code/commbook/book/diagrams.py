"""Drawing helpers the chapters' figures share: devices, switches, links as curves, a
torus laid out on a grid.

Public so that any chapter's figures can use them (``tests/test_layers.py`` forbids
taking a private helper from another chapter's package); they draw on a matplotlib
``Axes`` and know nothing of a chapter.

>>> x, y = curve((0, 0), (1, 0), bulge=(0, 0.5), n=3)
>>> [round(float(v), 3) for v in y]
[0.0, 0.5, 0.0]
>>> wrap_bulge((0, 0), (3, 0)), wrap_bulge((0, 0), (1, 0))
((0.0, 0.25), (0.0, 0.0))
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..topology import Torus
from .plots import SMALL_PT

__all__ = ["DEVICE_EDGE", "SWITCH_COLOR", "curve", "draw_nodes", "blank_axes", "grid_positions",
           "wrap_bulge", "torus_links"]

DEVICE_EDGE = "0.25"
"""Edge colour of a device's circle."""
SWITCH_COLOR = "0.55"
"""Fill of a switch's square."""


def curve(p0, p1, bulge=(0.0, 0.0), shift: float = 0.0, n: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Points of a quadratic Bézier from ``p0`` to ``p1`` whose middle moves by ``bulge``
    (0 = straight), moved sideways by ``shift`` (to the left of the direction of travel)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    t = np.linspace(0.0, 1.0, n)[:, None]
    ctrl = (p0 + p1) / 2 + 2 * np.asarray(bulge, float)
    pts = (1 - t) ** 2 * p0 + 2 * t * (1 - t) * ctrl + t ** 2 * p1
    d = p1 - p0
    pts += shift * np.array([-d[1], d[0]]) / np.hypot(*d)
    return pts[:, 0], pts[:, 1]


def draw_nodes(ax, pos: dict, names: Sequence, switch: bool = False, fontsize: float = SMALL_PT,
                size: float = 150) -> None:
    """Devices as white circles labelled with their id (or switches as grey squares).

    ``size`` (points squared) grows to hold a two-digit label at ``fontsize``."""
    size = max(size, (1.9 * fontsize) ** 2)
    xy = np.array([pos[k] for k in names], dtype=float).reshape(-1, 2)
    if switch:
        ax.scatter(xy[:, 0], xy[:, 1], s=0.75 * size, marker="s", color=SWITCH_COLOR, zorder=3)
        return
    ax.scatter(xy[:, 0], xy[:, 1], s=size, color="white", edgecolor=DEVICE_EDGE, lw=1.0, zorder=3)
    for k, (x, y) in zip(names, xy):
        ax.text(x, y, str(k), ha="center", va="center", fontsize=fontsize, zorder=4)


def blank_axes(ax, pad: float = 0.45) -> None:
    """An axes for a drawing: no frame, no ticks, equal aspect, a margin of ``pad``."""
    ax.set_axis_off()
    ax.set_aspect("equal")
    ax.margins(pad / 4)


def grid_positions(topo: Torus) -> dict:
    c = topo.coords(np.arange(topo.p))
    return {d: (float(c[d, -1]), -float(c[d, 0]) if topo.nd > 1 else 0.0) for d in range(topo.p)}


def wrap_bulge(p0, p1, size: float = 0.25) -> tuple[float, float]:
    """Bulge of a torus link: none between neighbours on the grid, ``size`` up for a
    row's wraparound link and to the left for a column's."""
    dx, dy = abs(p1[0] - p0[0]), abs(p1[1] - p0[1])
    if dx + dy <= 1:
        return (0.0, 0.0)
    return (0.0, size) if dx > dy else (-size, 0.0)


def torus_links(topo: Torus) -> list[tuple[int, int, int]]:
    """(resource index, from device, to device) of every directed link, from
    :attr:`Topology.resource_owners` (a torus link belongs to the devices at its two ends)."""
    return [(i, int(a), int(b)) for i, (a, b) in enumerate(topo.resource_owners)]
