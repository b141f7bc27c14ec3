r"""Communication–computation overlap, layer by layer: a two-stream timeline.

Backward runs layer by layer on the **compute** stream, from the last layer to the
first.  When a layer's gradients are ready its all-reduce is handed to the **network**
stream (one stream: collectives run one after another, in order).  LogP's overhead o
(Culler et al. 1993; chapter §1.2) is processor time, so it sits on the compute
stream: o to launch each collective and o to complete it.  The rules:

1. After each backward block the compute stream first completes (o each, in order)
   the collectives that have finished, then launches (o) this layer's all-reduce, if
   the layer has one.  Nothing preempts a block.
2. An all-reduce starts on the network when its launch is done and the previous one
   has finished, and takes its wire time.
3. After the last backward block the compute stream waits (a *stall*) for each
   outstanding all-reduce and completes it; then the optimizer runs.

Closed forms (what the timeline must equal; ``b`` backward times, ``a`` all-reduce times,
m all-reduces, L the layer of the last one):

* no overlap (every all-reduce blocks): Σb + Σ(2o + a) + optimizer;
* perfect overlap — every all-reduce but the last hidden, which holds when each one
  fits in the next layer's backward (a_i ≤ b_{i+1}, :func:`all_hidden`):
  Σ_{l≤L} b_l + 2m·o + max(a_L, Σ_{l>L} b_l) + optimizer.

With one transfer beside t of compute this is LogP's 2o + max(t, L_lat) (Napkin
Math 1.3, :func:`transfer_beside_compute`); with four layers of 2.4 units, all-reduces of
2.4 and an optimizer of 2.2 it is the chapter's Figure 4 (14.2 units).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..checks import check_real, show
from ..cost import LogP

__all__ = ["Block", "Timeline", "layerwise_timeline", "step_time_no_overlap",
           "step_time_perfect_overlap", "all_hidden", "transfer_beside_compute"]

COMPUTE, NETWORK = "compute", "network"


@dataclass(frozen=True)
class Block:
    """One bar of the timeline: ``stream`` ("compute" or "network"), ``kind`` (compute:
    "backward", "launch", "complete", "stall", "optimizer"; network: "allreduce", "idle"),
    a label, and its start and end.

    >>> Block("compute", "backward", "backward L4", start=1.0, end=3.5).duration
    2.5
    """

    stream: str
    kind: str
    label: str
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Timeline:
    """The blocks of one step, and the step time (end of the optimizer).

    Figure 4: of four all-reduces of 2.4 units, three run beside backward and the last
    is exposed (a stall of 2.4):

    >>> tl = layerwise_timeline([2.4] * 4, [2.4] * 4, optimizer=2.2)
    >>> round(tl.step_time, 6), round(tl.stall, 6), round(tl.hidden_fraction, 6)
    (14.2, 2.4, 0.75)
    >>> [b.kind for b in tl.stream("compute")]
    ['backward', 'backward', 'backward', 'backward', 'stall', 'optimizer']
    """

    blocks: tuple[Block, ...]
    step_time: float
    comm_time: float

    def stream(self, name: str) -> list[Block]:
        """The blocks of one stream, in time order."""
        if name not in (COMPUTE, NETWORK):
            raise ValueError(f"stream must be 'compute' or 'network', got {name!r}")
        return sorted((b for b in self.blocks if b.stream == name), key=lambda b: b.start)

    @property
    def stall(self) -> float:
        """Time the compute stream waits for the network: the exposed communication."""
        return sum(b.duration for b in self.blocks if b.kind == "stall")

    @property
    def hidden_fraction(self) -> float:
        """Share of the all-reduce wire time that ran beside compute (1 if there is none)."""
        return 1.0 - self.stall / self.comm_time if self.comm_time > 0 else 1.0


def _times(x, name: str, allow_none: bool = False) -> list:
    if isinstance(x, np.ndarray) and x.ndim != 1:
        raise TypeError(f"{name} must be a 1-D sequence of times in seconds, got an array of shape {x.shape}")
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence) and not hasattr(x, "__len__"):
        raise TypeError(f"{name} must be a sequence of times in seconds, got {type(x).__name__}")
    out = []
    for i, v in enumerate(x):
        if v is None and allow_none:
            out.append(None)
            continue
        try:
            v = check_real(v, f"{name}[{i}]", "a number of seconds")
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"{name}[{i}] must be finite and >= 0, got {show(x[i])}")
        out.append(v)
    return out


def _time(x, name: str) -> float:
    """One time in seconds, finite and >= 0 (messages name ``name``, not ``name[0]``)."""
    try:
        v = check_real(x, name, "a number of seconds")
    except ValueError:
        v = math.nan
    if not v >= 0:
        raise ValueError(f"{name} must be finite and >= 0 seconds, got {show(x)}")
    return v


def _check(backward, allreduce, overhead, optimizer):
    b = _times(backward, "backward")
    a = _times(allreduce, "allreduce", allow_none=True)
    if not b:
        raise ValueError("backward must hold at least one layer")
    if len(a) != len(b):
        raise ValueError(f"allreduce has {len(a)} entries but backward has {len(b)} layers")
    o = overhead.o if isinstance(overhead, LogP) else _time(overhead, "overhead")
    opt = _time(optimizer, "optimizer")
    return b, a, o, opt


def step_time_no_overlap(backward: Sequence[float], allreduce: Sequence[float | None], *,
                         overhead: float | LogP = 0.0, optimizer: float = 0.0) -> float:
    """Σb + Σ(2o + a) + optimizer: every all-reduce blocks the compute stream.

    >>> round(step_time_no_overlap([2.4] * 4, [2.4] * 4, optimizer=2.2), 6)  # Figure 4, serial
    21.4
    >>> step_time_no_overlap([1.0], [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: allreduce has 2 entries but backward has 1 layers
    """
    b, a, o, opt = _check(backward, allreduce, overhead, optimizer)
    return sum(b) + sum(2 * o + x for x in a if x is not None) + opt


def step_time_perfect_overlap(backward: Sequence[float], allreduce: Sequence[float | None], *,
                              overhead: float | LogP = 0.0, optimizer: float = 0.0) -> float:
    """Σ_{l≤L} b + 2m·o + max(a_L, Σ_{l>L} b) + optimizer: all but the last all-reduce
    hidden (L its layer, m the number of all-reduces).

    >>> round(step_time_perfect_overlap([2.4] * 4, [2.4] * 4, optimizer=2.2), 6)  # Figure 4
    14.2
    >>> round(step_time_perfect_overlap([3, 1], [1, None], overhead=0.5), 6)  # 3 + 2·0.5 + max(1, 1)
    5.0
    """
    b, a, o, opt = _check(backward, allreduce, overhead, optimizer)
    ops = [i for i, x in enumerate(a) if x is not None]
    if not ops:
        return sum(b) + opt
    last = ops[-1]
    return sum(b[:last + 1]) + 2 * len(ops) * o + max(a[last], sum(b[last + 1:])) + opt


def all_hidden(backward: Sequence[float], allreduce: Sequence[float | None]) -> bool:
    """True when every all-reduce but the last fits in the next layer's backward
    (a_i ≤ b_{i+1}): then the timeline equals :func:`step_time_perfect_overlap`.

    >>> all_hidden([2.4] * 4, [2.4] * 4), all_hidden([2.4] * 4, [3.0] * 4)
    (True, False)
    """
    b, a, _, _ = _check(backward, allreduce, 0.0, 0.0)
    ops = [i for i, x in enumerate(a) if x is not None]
    return all(a[i] <= b[i + 1] for i in ops[:-1])


def layerwise_timeline(backward: Sequence[float], allreduce: Sequence[float | None], *,
                       overhead: float | LogP = 0.0, optimizer: float = 0.0, overlap: bool = True,
                       labels: Sequence[str] | None = None) -> Timeline:
    """Run the two streams (rules in the module docs) for one backward pass.

    ``backward[i]`` is the i-th backward block (the last layer first); ``allreduce[i]`` the
    wire time of its gradients' all-reduce (``None``: the layer has none); ``overhead``
    is o (seconds, or a :class:`~commbook.cost.LogP`, whose ``o`` is used).  With
    ``overlap=False`` each all-reduce blocks the compute stream.  ``labels`` name the
    layers (default "L{n}" … "L1", the backward order).  Blocks of zero length are left
    out.

    The timeline reaches both closed forms on Figure 4's layers:

    >>> b, a = [2.4] * 4, [2.4] * 4
    >>> layerwise_timeline(b, a).step_time == step_time_perfect_overlap(b, a)
    True
    >>> layerwise_timeline(b, a, overlap=False).step_time == step_time_no_overlap(b, a)
    True
    """
    b, a, o, opt = _check(backward, allreduce, overhead, optimizer)
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be a bool, got {type(overlap).__name__}")
    n = len(b)
    names = [f"L{n - i}" for i in range(n)] if labels is None else [str(x) for x in labels]
    if len(names) != n:
        raise ValueError(f"labels has {len(names)} names but there are {n} layers")
    blocks: list[Block] = []

    def put(stream, kind, label, start, dur):
        if dur > 0:
            blocks.append(Block(stream, kind, label, start, start + dur))
        return start + dur

    t, net_free, pending = 0.0, 0.0, []          # pending: (layer, wire end)

    def complete_finished(t):
        while pending and pending[0][1] <= t:
            t = put(COMPUTE, "complete", f"complete all-reduce {names[pending.pop(0)[0]]}", t, o)
        return t

    for i in range(n):
        t = put(COMPUTE, "backward", f"backward {names[i]}", t, b[i])
        t = complete_finished(t)
        if a[i] is None:
            continue
        t = put(COMPUTE, "launch", f"launch all-reduce {names[i]}", t, o)
        start = max(t, net_free)
        net_free = put(NETWORK, "allreduce", f"all-reduce {names[i]}", start, a[i])
        pending.append((i, net_free))
        if not overlap:
            t = put(COMPUTE, "stall", f"wait for all-reduce {names[i]}", t, net_free - t)
            t = complete_finished(t)
    while pending:
        i, end = pending[0]
        if end > t:
            t = put(COMPUTE, "stall", f"wait for all-reduce {names[i]}", t, end - t)
        t = complete_finished(t)
    t = put(COMPUTE, "optimizer", "optimizer", t, opt)
    edge = 0.0                                  # idle gaps of the network stream
    for blk in sorted((x for x in blocks if x.stream == NETWORK), key=lambda x: x.start):
        put(NETWORK, "idle", "idle", edge, blk.start - edge)
        edge = blk.end
    put(NETWORK, "idle", "idle", edge, t - edge)
    comm = sum(x for x in a if x is not None)
    return Timeline(tuple(sorted(blocks, key=lambda x: (x.stream, x.start))), t, comm)


def transfer_beside_compute(t_compute: float, logp: LogP) -> Timeline:
    """One transfer of wire time ``logp.L`` launched just before ``t_compute`` of work
    (Napkin Math 1.3): its step time is ``logp.overlapped(t_compute)`` = 2o + max(t, L).

    Napkin Math 1.3: 500 µs of backward beside L = 100 µs, o = 50 µs: 600 µs, of which
    only the two overheads are not hidden:

    >>> from commbook.cost import LogP
    >>> round(transfer_beside_compute(500e-6, LogP(L=100e-6, o=50e-6)).step_time * 1e6, 6)
    600.0
    """
    if not isinstance(logp, LogP):
        raise TypeError(f"logp must be a commbook.cost.LogP, got {type(logp).__name__}")
    return layerwise_timeline([0.0, t_compute], [logp.L, None], overhead=logp,
                              labels=["gradients ready", "next layer"])

