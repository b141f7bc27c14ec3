"""The virtual cluster: devices with real numpy buffers, and one engine that runs schedules.

An algorithm is a *schedule*: a list of :class:`Round` objects.  A round is a set of
messages, each ``(src, dst, source buffer and offset, destination buffer and offset,
count, copy-or-reduce)``.  One engine, :meth:`VirtualCluster.run`, executes every
schedule; no algorithm computes its own time.

Timing model (the one the lecture's numbers imply; seed inventory E.1)
---------------------------------------------------------------------
1. **Synchronous rounds.**  The time of a schedule is the sum of its round times;
   nothing overlaps across rounds (pipelines are written as many short rounds).
2. **Ports and links serialize.**  In a round every resource (a device's send port, its
   receive port, a directed link of a ring or torus, a node's uplink) carries the sum
   of the bytes of the messages that use it, at its bandwidth β.
3. **Cut-through.**  A message takes ``latency + max over its resources (load/β)``:
   large messages see only the most loaded resource of their path.
4. **α once per round.**  Latency is α of the link class the message uses (NVLink or
   InfiniBand on a two-level network); on a switch it is paid once per message, not per
   switch hop; on a ring or torus an h-hop message pays ``α(1 + hop_alpha·(h-1))``
   (``hop_alpha`` is a topology parameter, 1 by default).  The round takes as long as its
   slowest message, so a device sending several messages in one round pays α once.
5. **Local copies are free** (``src == dst``): packing and unpacking cost nothing.
6. **In-network reduction** (a round with ``innet=True``): the switch reduces the slices
   all participants stream into it and streams the result back: α + n/β.

Vectorization: each round's timing is a handful of numpy operations over all its
messages, so size-only runs (no payloads) of thousands of ranks stay interactive.
Real-data runs apply each message as one numpy operation on a buffer slice.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .topology import Topology

__all__ = ["Round", "VirtualCluster", "RunResult", "TraceStep", "chunk_bounds", "OPS",
           "SUPPORTED_DTYPES"]

OPS: dict[str, Callable] = {
    "sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum, "avg": np.add,
}
"""Reduction operators by name (``avg`` reduces with + and divides by p at the end)."""

SUPPORTED_DTYPES = tuple(np.dtype(t) for t in ("float16", "float32", "float64", "int32", "int64"))


def chunk_bounds(n, parts: int, exact: bool) -> np.ndarray:
    """Offsets that split ``n`` items into ``parts`` near-equal chunks.

    ``n`` may be a scalar or an array (one split per entry; result shape (..., parts+1)).
    ``exact=True`` (size-only runs) splits a byte count into equal real-valued shares;
    otherwise element counts are split into integers, the larger chunks last.
    """
    n = np.asarray(n)
    k = np.arange(parts + 1)
    if exact:
        return n[..., None] * k / parts
    return (n[..., None].astype(np.int64) * k) // parts


@dataclass
class Round:
    """One synchronous round of messages (arrays of equal length m).

    ``count`` is in elements for real-data runs and in bytes for size-only runs.
    ``reduce[i]`` combines the payload into the destination with the run's operator;
    otherwise it overwrites.  ``innet=True`` marks an in-network reduction: message i
    means "participant src[i] streams its slice into the switch and receives the
    reduction of all slices at dst[i]'s destination region".
    """

    src: np.ndarray
    dst: np.ndarray
    count: np.ndarray
    soff: np.ndarray
    doff: np.ndarray
    sbuf: np.ndarray
    dbuf: np.ndarray
    reduce: np.ndarray
    label: str = ""
    innet: bool = False

    @classmethod
    def make(cls, src, dst, count, soff=0, doff=None, sbuf=0, dbuf=None, reduce=False,
             label: str = "", innet: bool = False) -> "Round":
        """Build a round, broadcasting scalars; ``doff``/``dbuf`` default to ``soff``/``sbuf``."""
        doff = soff if doff is None else doff
        dbuf = sbuf if dbuf is None else dbuf
        src, dst, count, soff, doff, sbuf, dbuf, reduce = np.broadcast_arrays(
            *(np.asarray(a).ravel() for a in (src, dst, count, soff, doff, sbuf, dbuf, reduce)))
        return cls(src.astype(np.int64), dst.astype(np.int64), count, soff, doff,
                   sbuf.astype(np.int64), dbuf.astype(np.int64), reduce.astype(bool), label, innet)

    @classmethod
    def concat(cls, rounds: Sequence["Round"], label: str | None = None) -> "Round":
        """Merge rounds that run at the same time (e.g. one per group) into one."""
        rounds = [r for r in rounds if r is not None]
        if len(rounds) == 1:
            return rounds[0]
        cat = lambda name: np.concatenate([getattr(r, name) for r in rounds])
        return cls(cat("src"), cat("dst"), cat("count"), cat("soff"), cat("doff"), cat("sbuf"),
                   cat("dbuf"), cat("reduce"), rounds[0].label if label is None else label,
                   rounds[0].innet)

    def __len__(self) -> int:
        return int(self.src.size)


@dataclass
class TraceStep:
    """What one round did: the round itself, its time, and (with ``trace=True`` on a
    real-data run) a copy of every rank's buffers afterwards."""

    round: Round
    time: float
    state: list[list[np.ndarray]] | None = None


@dataclass
class RunResult:
    """Everything a run measured.

    ``time`` (s) is the sum of ``round_times``; ``bytes_sent``/``bytes_received`` are per
    logical rank; ``link_bytes`` are per topology resource (see ``link_names``).
    """

    time: float
    round_times: np.ndarray
    bytes_sent: np.ndarray
    bytes_received: np.ndarray
    link_bytes: np.ndarray
    link_names: list[str]
    trace: list[TraceStep] = field(default_factory=list)
    outputs: list | None = None

    @property
    def rounds(self) -> int:
        """Number of rounds that moved data."""
        return int(np.count_nonzero(self.round_times > 0)) if self.round_times.size else 0


class VirtualCluster:
    """A set of devices on a :class:`~commbook.topology.Topology`.

    >>> from commbook.topology import Switch
    >>> from commbook.hardware import NVLINK4
    >>> cluster = VirtualCluster(Switch(8, NVLINK4))
    >>> cluster.p
    8
    """

    def __init__(self, topology: Topology):
        if not isinstance(topology, Topology):
            raise TypeError(f"VirtualCluster needs a Topology, got {type(topology).__name__}")
        self.topology = topology

    @property
    def p(self) -> int:
        """Number of devices."""
        return self.topology.p

    def __repr__(self) -> str:
        return f"VirtualCluster({self.topology.name})"

    def check_ranks(self, ranks: Sequence[int] | np.ndarray | None) -> np.ndarray:
        """Validate a mapping logical rank -> device id (default: all devices in order)."""
        if ranks is None:
            return np.arange(self.p)
        arr = np.asarray(ranks)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError("ranks must be a non-empty 1-D sequence of device ids")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"ranks must be integer device ids, got dtype {arr.dtype}")
        self.topology.check_devices(arr)
        if np.unique(arr).size != arr.size:
            raise ValueError("ranks must not name a device twice")
        return arr.astype(np.int64)

    # ------------------------------------------------------------------ engine
    def run(self, schedule: Sequence[Round], ranks: np.ndarray | None = None,
            buffers: list[list[np.ndarray]] | None = None, itemsize: int = 1,
            op: str = "sum", trace: bool = False) -> RunResult:
        """Execute a schedule and account for its time and bytes.

        Parameters
        ----------
        schedule : rounds over logical ranks ``0..len(ranks)-1``.
        ranks : device id of each logical rank (default: identity).
        buffers : per logical rank, a list of 1-D numpy buffers the messages address;
            ``None`` for a size-only run (counts are then bytes).
        itemsize : bytes per element (real-data runs).
        op : reduction operator name (see :data:`OPS`).
        trace : keep a copy of all buffers after every round.
        """
        topo = self.topology
        ranks = self.check_ranks(ranks)
        q = ranks.size
        ufunc = OPS[op]
        R = topo.n_resources
        bw = topo.resource_bandwidth
        link_bytes = np.zeros(R + 1)
        sent, recv = np.zeros(q), np.zeros(q)
        times = np.zeros(len(schedule))
        steps: list[TraceStep] = []
        for i, rnd in enumerate(schedule):
            nbytes = rnd.count * itemsize
            if rnd.innet:
                times[i] = self._innet_time(ranks[rnd.src], nbytes)
                np.add.at(sent, rnd.src, nbytes)
                np.add.at(recv, rnd.dst, nbytes)
            else:
                remote = rnd.src != rnd.dst
                if remote.any():
                    s, d, nb = rnd.src[remote], rnd.dst[remote], nbytes[remote]
                    lat, res = topo.message_costs(ranks[s], ranks[d])
                    load = np.bincount(res.ravel(), weights=np.repeat(nb, res.shape[1]), minlength=R + 1)
                    load[R] = 0.0
                    busy = (load / bw)[res].max(axis=1)
                    times[i] = float(np.max(lat + busy))
                    link_bytes += load
                    sent += np.bincount(s, weights=nb, minlength=q)
                    recv += np.bincount(d, weights=nb, minlength=q)
            if buffers is not None:
                self._apply(rnd, buffers, ufunc)
            steps.append(TraceStep(rnd, float(times[i]),
                                   [[b.copy() for b in bufs] for bufs in buffers] if trace and buffers else None))
        return RunResult(float(times.sum()), times, sent, recv, link_bytes[:R], topo.resource_names, steps)

    def _innet_time(self, devices: np.ndarray, nbytes: np.ndarray) -> float:
        alpha, beta = self.topology.innet_latency_bandwidth(devices)
        return alpha + float(np.max(nbytes)) / beta if nbytes.size else 0.0

    @staticmethod
    def _apply(rnd: Round, buffers: list[list[np.ndarray]], ufunc) -> None:
        """Move (or reduce) the payloads of one round.  All reads see the state at the
        start of the round: payloads are copied first where the round also writes them."""
        src, dst, cnt = rnd.src.tolist(), rnd.dst.tolist(), rnd.count.tolist()
        so, do, sb, db = rnd.soff.tolist(), rnd.doff.tolist(), rnd.sbuf.tolist(), rnd.dbuf.tolist()
        red = rnd.reduce.tolist()
        m = len(src)
        if rnd.innet:
            total = buffers[src[0]][sb[0]][so[0]:so[0] + cnt[0]].copy()
            for j in range(1, m):
                ufunc(total, buffers[src[j]][sb[j]][so[j]:so[j] + cnt[j]], out=total)
            for j in range(m):
                buffers[dst[j]][db[j]][do[j]:do[j] + cnt[j]] = total
            return
        writes: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for j in range(m):
            if cnt[j]:
                writes.setdefault((dst[j], db[j]), []).append((do[j], do[j] + cnt[j]))
        payloads = []
        for j in range(m):
            view = buffers[src[j]][sb[j]][so[j]:so[j] + cnt[j]]
            lo, hi = so[j], so[j] + cnt[j]
            clash = any(a < hi and lo < b for a, b in writes.get((src[j], sb[j]), ()))
            payloads.append(view.copy() if clash else view)
        for j in range(m):
            if not cnt[j]:
                continue
            target = buffers[dst[j]][db[j]][do[j]:do[j] + cnt[j]]
            if red[j]:
                ufunc(target, payloads[j], out=target)
            else:
                target[...] = payloads[j]
