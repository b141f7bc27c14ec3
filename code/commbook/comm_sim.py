"""The virtual cluster: devices with real numpy buffers, and one engine that runs schedules.

An algorithm is a *schedule*: a list of :class:`Round` objects.  A round is a set of
messages, each ``(src, dst, source buffer and offset, destination buffer and offset,
count, copy-or-reduce)``.  One engine, :meth:`VirtualCluster.run`, executes every
schedule; no algorithm computes its own time.

Timing model
------------
1. **Synchronous rounds.**  The time of a schedule is the sum of its round times;
   nothing overlaps across rounds (pipelines are written as many short rounds).
2. **Ports and links serialize.**  In a round every resource (a device's send port, its
   receive port, a directed link of a ring or torus, a node's uplink) carries the sum
   of the bytes of the messages that use it, at its bandwidth β (times the port speed
   factor of the devices it belongs to, see :class:`VirtualCluster`).
3. **Cut-through.**  A message takes ``latency + max over its resources (load/β)``:
   large messages see only the most loaded resource of their path.
4. **α once per round.**  Latency is α of the link class the message uses (NVLink or
   InfiniBand on a two-level network); on a switch it is paid once per message, not per
   switch hop; on a ring or torus an h-hop message pays ``α(1 + hop_alpha·(h-1))``
   (``hop_alpha`` is a topology parameter, 1 by default).  The round takes as long as its
   slowest message, so a device sending several messages in one round pays α once.
   A message of 0 bytes still pays α: a size-0 collective costs α per round.
5. **Local copies are free** (``src == dst``): packing and unpacking cost nothing.
6. **In-network reduction** (a round with ``innet=True``): the switch reduces the slices
   all participants stream into it and streams the result back: α + n/β.  Such a round
   records bytes sent and received per rank; its link bytes are what the topology's
   ``innet_link_bytes`` says: none on a switch or a cluster (the switch's internal links
   are not modelled), one slice up and one result down per device link and one aggregate
   each way per leaf-root link on a :class:`~commbook.topology.SwitchTree`.

Only :class:`~commbook.topology.Switch` and :class:`~commbook.topology.TwoLevel` devices
have injection ports (``port*.out``/``gpu*.nic.out`` …); on a ring or torus the
resources are the directed links themselves.

Semantics of a round
--------------------
* Every payload is read from the state at the **start** of the round (a message never
  sees what another message of the same round wrote).
* Writes are applied **in message order**.  Where two messages of a round write
  overlapping regions, the later one wins if it copies and accumulates onto the earlier
  one if it reduces: copy-then-reduce gives ``a ⊕ b``, reduce-then-copy gives ``b``.
  The one-shot all-reduce relies on this (its first message per destination copies,
  the others reduce).

What ``rounds`` counts: the rounds in which at least one message crossed between two
devices (rounds of local copies only are free and not counted).

Vectorization: each round's timing is a handful of numpy operations over all its
messages, so size-only runs (no payloads) of thousands of ranks stay interactive.
Real-data runs apply each message as one numpy operation on a buffer slice; inputs lent
read-only are copied on write, region by region (:mod:`commbook.buffers`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .bandwidth import BUSBW_FACTORS, algbw, busbw
from .buffers import Buffers
from .rounds import LazyRounds, Round, chunk_bounds
from .topology import Topology
from .units import fmt_bytes, fmt_pct, fmt_rate, fmt_time

__all__ = ["Round", "LazyRounds", "VirtualCluster", "RunResult", "TraceStep", "chunk_bounds", "OPS",
           "SUPPORTED_DTYPES"]

OPS: dict[str, Callable] = {
    "sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum, "avg": np.add,
}
"""Reduction operators by name (``avg`` reduces with + and divides by p at the end)."""

SUPPORTED_DTYPES = tuple(np.dtype(t) for t in ("float16", "float32", "float64", "int32", "int64"))


@dataclass
class TraceStep:
    """What one round did: the round itself, its time (all its repetitions, for a round
    with ``repeat > 1``), and (with ``trace=True`` on a real-data run) a copy of every
    rank's buffers afterwards.

    Four ranks holding 0, 1, 2, 3: after the ring's reduce-scatter rank 0 has the full sum in
    its chunk 0 (and partial sums elsewhere).

    >>> from commbook.collectives import all_reduce
    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> r = all_reduce(Switch(4, NVLINK4), [np.full(4, float(i)) for i in range(4)], trace=True)
    >>> [s.round.label for s in r.trace][2:4], r.trace[2].state[0][0]
    (['reduce-scatter 3', 'all-gather 1'], array([6., 5., 3., 0.]))
    """

    round: Round
    time: float
    state: list[list[np.ndarray]] | None = None


@dataclass(repr=False)
class RunResult:
    """Everything a run measured.

    ``time`` (s) is the sum of ``round_times``; ``bytes_sent``/``bytes_received`` are per
    logical rank; ``link_bytes`` are per topology resource (see ``link_names``), and
    ``link_busy`` the seconds each resource spent moving them (bytes over its bandwidth;
    0 for an infinitely fast one).  The
    collectives fill in what ran: ``collective``, ``algorithm``, ``p`` (ranks) and
    ``nbytes`` (the size nccl-tests would report: the buffer per rank, the gathered output
    for all-gather), from which ``algbw`` and ``busbw`` follow.

    A ring all-reduce of 1 GB on 8 GPUs of one NVLink 4 switch: 14 rounds, and a bus bandwidth
    near the link's 450 GB/s.

    >>> from commbook.collectives import all_reduce
    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> r = all_reduce(Switch(8, NVLINK4), nbytes=1e9)
    >>> r, fmt_rate(r.busbw)
    (RunResult(all_reduce[ring], p=8, nbytes=1 GB, time=3.917 ms, rounds=14), '446.8 GB/s')
    """

    time: float
    round_times: np.ndarray
    bytes_sent: np.ndarray
    bytes_received: np.ndarray
    link_bytes: np.ndarray
    link_names: list[str]
    remote: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    trace: list[TraceStep] = field(default_factory=list)
    outputs: list | None = None
    collective: str = ""
    algorithm: str = ""
    p: int = 0
    nbytes: float = 0.0
    link_busy: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def rounds(self) -> int:
        """Number of rounds in which at least one message crossed between devices."""
        return int(np.count_nonzero(self.remote))

    @property
    def algbw(self) -> float:
        """``nbytes / time`` (bytes/s), as nccl-tests prints it."""
        return algbw(self.nbytes, self.time)

    @property
    def busbw(self) -> float:
        """Bus bandwidth: algbw times nccl-tests' factor for the collective and ``p``."""
        if self.collective not in BUSBW_FACTORS:
            raise ValueError(f"no bus-bandwidth factor for collective {self.collective!r}")
        return busbw(self.collective, self.nbytes, self.time, self.p)

    def __repr__(self) -> str:
        what = f"{self.collective}[{self.algorithm}]" if self.collective else "schedule"
        return (f"RunResult({what}, p={self.p}, nbytes={fmt_bytes(self.nbytes)}, "
                f"time={fmt_time(self.time)}, rounds={self.rounds})")

    def summary(self) -> str:
        """A few lines a reader can print: what ran, time, rounds, bandwidths, busiest link."""
        lines = [repr(self)]
        if self.time > 0 and self.nbytes > 0 and self.collective in BUSBW_FACTORS:
            lines.append(f"  algbw {fmt_rate(self.algbw)}, busbw {fmt_rate(self.busbw)}")
        if self.bytes_sent.size:
            lines.append(f"  bytes sent per rank: max {fmt_bytes(float(self.bytes_sent.max()))}, "
                         f"total {fmt_bytes(float(self.bytes_sent.sum()))}")
        if self.link_busy.size and self.link_busy.max() > 0:
            i = int(np.argmax(self.link_busy))         # by busy time: bytes alone would pick a
            busy = float(self.link_busy[i])            # fast (or infinitely fast) switch
            lines.append(f"  busiest resource: {self.link_names[i]}, busy {fmt_time(busy)} "
                         f"({fmt_pct(busy / self.time, 2)} of the run), {fmt_bytes(float(self.link_bytes[i]))}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Draw the run's timeline: one bar per round (its label and duration)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(7, 0.3 * max(len(self.round_times), 3) + 1))
        starts = np.concatenate([[0.0], np.cumsum(self.round_times)[:-1]])
        y = np.arange(len(self.round_times))
        ax.barh(y, self.round_times, left=starts, color="tab:blue")
        labels = [s.round.label for s in self.trace for _ in range(s.round.repeat)]
        ax.set_yticks(y, labels if len(labels) == y.size else [str(i) for i in y])
        ax.invert_yaxis()
        ax.set_xlabel("time (s)")
        ax.set_title(repr(self), fontsize=8)
        return ax


class VirtualCluster:
    """A set of devices on a :class:`~commbook.topology.Topology`.

    >>> from commbook.topology import Switch
    >>> from commbook.hardware import NVLINK4
    >>> cluster = VirtualCluster(Switch(8, NVLINK4))
    >>> cluster.p
    8
    """

    def __init__(self, topology: Topology, speed: Sequence[float] | dict[int, float] | None = None):
        if not isinstance(topology, Topology):
            raise TypeError(f"VirtualCluster needs a Topology, got {type(topology).__name__}")
        self.topology = topology
        self.speed = self._check_speed(speed)
        owners = topology.resource_owners              # (R, 2), -1 where no device
        factor = np.where(owners >= 0, self.speed[np.maximum(owners, 0)], np.inf).min(axis=1)
        factor[np.isinf(factor)] = 1.0                  # shared resources (uplinks) keep their β
        self._bandwidth = topology.resource_bandwidth * np.append(factor, 1.0)

    def _check_speed(self, speed) -> np.ndarray:
        """Per-device port speed factors: 1 = nominal, 2/3 = a straggler at two thirds."""
        out = np.ones(self.topology.p)
        if speed is None:
            return out
        items = speed.items() if isinstance(speed, dict) else enumerate(speed)
        if not isinstance(speed, dict) and len(speed) != self.topology.p:
            raise ValueError(f"speed needs one factor per device ({self.topology.p}), got {len(speed)}")
        for d, f in items:
            d = self.topology.check_device(d)
            if isinstance(f, bool) or not isinstance(f, (int, float, np.number)) or not 0 < f < np.inf:
                raise ValueError(f"the speed factor of device {d} must be a finite number > 0, got {f!r}")
            out[d] = float(f)
        return out

    @property
    def p(self) -> int:
        """Number of devices."""
        return self.topology.p

    def __repr__(self) -> str:
        slow = {int(d): float(self.speed[d]) for d in np.flatnonzero(self.speed != 1)}
        return f"VirtualCluster({self.topology.name}" + (f", speed={slow})" if slow else ")")

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
            ``None`` for a size-only run (counts are then bytes).  Writable buffers are
            changed in place; a read-only one is copied on write and replaced in its list
            by the result (:mod:`commbook.buffers`).
        itemsize : bytes per element (real-data runs).
        op : reduction operator name (see :data:`OPS`).
        trace : keep a copy of all buffers after every round.
        """
        topo = self.topology
        ranks = self.check_ranks(ranks)
        q = ranks.size
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; valid: {', '.join(OPS)}")
        ufunc = OPS[op]
        R = topo.n_resources
        bw = self._bandwidth
        link_bytes = np.zeros(R + 1)
        sent, recv = np.zeros(q), np.zeros(q)
        times = np.zeros(len(schedule))
        repeats = np.ones(len(schedule), dtype=np.int64)
        remote_round = np.zeros(len(schedule), dtype=bool)
        store = Buffers(buffers) if buffers is not None else None
        routes: dict[bytes, tuple] = {}
        steps: list[TraceStep] = []
        keep = trace or not isinstance(schedule, LazyRounds)
        for i, rnd in enumerate(schedule):
            if not isinstance(rnd, Round):
                raise TypeError(f"a schedule holds Round objects, got {type(rnd).__name__}")
            if rnd.repeat > 1 and store is not None:
                raise ValueError(f"round {rnd.label!r} repeats {rnd.repeat} times: repeated rounds carry no "
                                 "payload offsets, so they run in size-only runs only")
            k = repeats[i] = rnd.repeat
            nbytes = rnd.count * itemsize
            if rnd.innet:
                self._check_ranks(rnd, q)
                times[i] = self._innet_time(ranks[rnd.src], nbytes)
                link_bytes[:R] += k * topo.innet_link_bytes(ranks[rnd.src], ranks[rnd.dst], nbytes)
                remote_round[i] = len(rnd) > 0
                np.add.at(sent, rnd.src, k * nbytes)
                np.add.at(recv, rnd.dst, k * nbytes)
            else:
                key = rnd.src.tobytes() + rnd.dst.tobytes()    # rounds repeat their pairs
                route = routes.get(key)
                if route is None:                              # checked and routed once
                    if len(routes) >= 16:                      # a few patterns repeat; the rest
                        routes.clear()                         # (shift rounds) would pile up
                    self._check_ranks(rnd, q)
                    remote = rnd.src != rnd.dst
                    s, d = rnd.src[remote], rnd.dst[remote]
                    lat, res = topo.message_costs(ranks[s], ranks[d])
                    cols = np.ascontiguousarray(res.T)         # (resources per message, messages)
                    route = routes[key] = (remote, s, d, lat, cols) if s.size else ()
                if route:
                    remote, s, d, lat, cols = route
                    remote_round[i] = True
                    nb = nbytes[remote]
                    load = np.bincount(cols.ravel(), weights=np.tile(nb, cols.shape[0]), minlength=R + 1)
                    load[R] = 0.0
                    busy = (load / bw)[cols].max(axis=0)
                    times[i] = float(np.max(lat + busy))
                    link_bytes += k * load
                    sent += k * np.bincount(s, weights=nb, minlength=q)
                    recv += k * np.bincount(d, weights=nb, minlength=q)
            if store is not None:
                self._check_buffers(rnd, store)
            if store is not None:
                self._apply(rnd, store, ufunc)
            if keep:
                steps.append(TraceStep(rnd, float(times[i]) * k, store.snapshot() if trace and store else None))
        if store is not None:
            store.finish()
        times = np.repeat(times, repeats)
        busy = np.divide(link_bytes[:R], bw[:R], out=np.zeros(R), where=np.isfinite(bw[:R]))
        return RunResult(float(times.sum()), times, sent, recv, link_bytes[:R], topo.resource_names,
                         np.repeat(remote_round, repeats), steps, link_busy=busy)

    @staticmethod
    def _check_ranks(rnd: Round, q: int) -> None:
        """Raise ValueError naming the round when it addresses a rank that does not exist."""
        if not len(rnd):
            return
        for name, a in (("source", rnd.src), ("destination", rnd.dst)):
            if a.min() < 0 or a.max() >= q:
                bad = a[(a < 0) | (a >= q)][0]
                raise ValueError(f"round {rnd.label!r}: {name} rank {bad} is outside the ranks 0..{q - 1}")

    @staticmethod
    def _check_buffers(rnd: Round, store: Buffers) -> None:
        """Raise ValueError naming the round when a count is fractional or a region is not
        inside an existing buffer (real-data runs)."""
        if not len(rnd):
            return
        if not np.issubdtype(rnd.count.dtype, np.integer):
            raise ValueError(f"round {rnd.label!r}: counts must be whole elements in a real-data run")
        store.check(rnd.label, rnd.src, rnd.sbuf, rnd.soff, rnd.count, "source")
        store.check(rnd.label, rnd.dst, rnd.dbuf, rnd.doff, rnd.count, "destination")

    def _innet_time(self, devices: np.ndarray, nbytes: np.ndarray) -> float:
        alpha, beta = self.topology.innet_latency_bandwidth(devices)
        return alpha + float(np.max(nbytes)) / beta if nbytes.size else 0.0

    @staticmethod
    def _apply(rnd: Round, store: Buffers, ufunc) -> None:
        """Move (or reduce) the payloads of one round.  All reads see the state at the
        start of the round: payloads are copied first where the round also writes them."""
        src, dst, cnt = rnd.src.tolist(), rnd.dst.tolist(), rnd.count.tolist()
        so, do, sb, db = rnd.soff.tolist(), rnd.doff.tolist(), rnd.sbuf.tolist(), rnd.dbuf.tolist()
        red = rnd.reduce.tolist()
        m = len(src)
        if rnd.innet:
            total = store.read(src[0], sb[0], so[0], so[0] + cnt[0]).copy()
            for j in range(1, m):
                ufunc(total, store.read(src[j], sb[j], so[j], so[j] + cnt[j]), out=total)
            for j in range(m):
                store.write(dst[j], db[j], do[j], do[j] + cnt[j], total, None)
            return
        writes: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for j in range(m):
            if cnt[j]:
                writes.setdefault((dst[j], db[j]), []).append((do[j], do[j] + cnt[j]))
        payloads = []
        for j in range(m):
            lo, hi = so[j], so[j] + cnt[j]
            view = store.read(src[j], sb[j], lo, hi)
            clash = any(a < hi and lo < b for a, b in writes.get((src[j], sb[j]), ()))
            payloads.append(view.copy() if clash else view)
        for j in range(m):
            if cnt[j]:
                store.write(dst[j], db[j], do[j], do[j] + cnt[j], payloads[j], ufunc if red[j] else None)
