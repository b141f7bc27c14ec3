"""Direct networks: the k-dimensional :class:`Torus` (or mesh), the :class:`Ring`, and
:func:`ring_order`, the orders in which a logical ring can visit a torus.

Latency on direct networks: a message of h hops pays ``alpha * (1 + hop_alpha * (h - 1))``.
The default ``hop_alpha = 1`` is h·α; the lecture's "row-major is 2 % slower" (§6.1) needs
``hop_alpha = 2`` (a store-and-forward style re-send at every intermediate chip).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..checks import check_choice, check_dims, check_nonneg, check_p
from ..hardware import Link
from .base import Topology, check_link

__all__ = ["Torus", "Ring", "ring_order", "MAPPINGS"]


def _dims(dims: object) -> list[int]:
    """Torus dimensions: one integer (a ring) or a non-empty sequence of integers >= 1."""
    if hasattr(dims, "__index__") and not isinstance(dims, (bool, np.ndarray)) \
            or isinstance(dims, np.ndarray) and dims.ndim == 0:
        dims = (dims,)
    if isinstance(dims, (list, tuple, np.ndarray)) and len(dims) == 0:
        raise ValueError("dims: a torus needs at least one dimension, got an empty sequence")
    return check_dims(dims, "dims")


class Torus(Topology):
    """A k-dimensional torus (or mesh, ``wraparound=False``) of ``prod(dims)`` devices.

    Device index is row-major over coordinates (last dimension fastest).  Links are
    full duplex: one directed link each way between neighbours, each of bandwidth
    ``link.beta``.  Routing is dimension-ordered along the shortest way (ties go the
    positive way).  ``unidirectional=True`` keeps only the positive-direction links
    (a one-way ring).

    A 4 x 4 TPU v5e torus: routes go row first, the worst cut is 8 links each way.

    >>> from commbook.hardware import ICI_V5E
    >>> t = Torus((4, 4), ICI_V5E)
    >>> t.route(0, 5), t.diameter, t.ports_per_device, t.bisection_bandwidth / 1e9    # GB/s: 8 x 45
    ([0, 4, 5], 4, 4, 360.0)
    """

    def __init__(self, dims: Sequence[int], link: Link, wraparound: bool = True,
                 hop_alpha: float = 1.0, unidirectional: bool = False):
        self.dims = tuple(_dims(dims))
        hop_alpha = check_nonneg(hop_alpha, "hop_alpha", "a latency factor")
        if unidirectional and not wraparound:
            raise ValueError("a unidirectional ring needs wraparound=True")
        self.p = int(np.prod(self.dims))
        self.link = check_link(link)
        self.wraparound = bool(wraparound)
        self.hop_alpha = float(hop_alpha)
        self.unidirectional = bool(unidirectional)
        self.nd = len(self.dims)
        self.strides = np.array([int(np.prod(self.dims[d + 1:])) for d in range(self.nd)], dtype=np.int64)
        kind = "Mesh" if not wraparound else "Torus"
        self.name = f"{kind}({'x'.join(map(str, self.dims))}, {link.name})"
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
        # "gpu5->gpu6 (dim 0, +)": the directed link from device 5 to its + neighbour in dimension 0
        self._res_names = [f"gpu{a}->gpu{b} (dim {k}, {'+' if w > 0 else '-'})"
                           for a, b, k, w in zip(dev, self._owners[:, 1], d, step)]

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
    or unidirectional (``bidirectional=False``: messages only travel +1).

    >>> from commbook.hardware import NVLINK4
    >>> r = Ring(8, NVLINK4)
    >>> r.route(0, 6), r.diameter, r.bisection_bandwidth / 1e9     # the short way round; 2 x 450 GB/s
    ([0, 7, 6], 4, 900.0)
    """

    def __init__(self, p: int, link: Link, bidirectional: bool = True, hop_alpha: float = 1.0):
        super().__init__((check_p(p),), link, wraparound=True, hop_alpha=hop_alpha,
                         unidirectional=not bidirectional)
        self.name = f"Ring(p={self.p}, {'bi' if bidirectional else 'uni'}directional, {link.name})"


# ============================================================================== mappings
MAPPINGS = ("identity", "row_major", "snake", "random")


def ring_order(dims: Sequence[int] | int, kind: str = "identity", seed: int | None = None) -> np.ndarray:
    """Device ids in the order a logical ring visits them.

    ``identity`` and ``row_major``: 0, 1, 2, ... (row-major over the torus coordinates);
    ``snake``: boustrophedon (every other row reversed, recursively), so consecutive
    ranks — and the last and first on an even torus — are neighbours;
    ``random``: a permutation drawn with ``numpy.random.default_rng(seed)``.

    >>> ring_order((4, 4), "snake").tolist()
    [0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11, 15, 14, 13, 12]
    """
    dims = tuple(_dims(dims))
    check_choice(kind, "kind", MAPPINGS, "mapping")
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
