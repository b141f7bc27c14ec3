r"""PyTorch DDP's gradient buckets and their timeline on the two-stream model, and a sweep
of the bucket cap (chapter §1.8.2, "Bucket fusion").

DDP does not all-reduce each gradient: it groups them into buckets of about
``bucket_cap_mb`` (25 MiB) and launches one all-reduce per bucket when its last gradient
is ready.  :func:`ddp_bucket_assignment` is PyTorch's grouping rule, read from its
source; :func:`bucket_timeline` runs the buckets on
:func:`~commbook.overlap.timeline.layerwise_timeline` with any all-reduce cost;
:func:`bucket_cap_sweep` varies the cap.

Small buckets start communicating early but each pays the all-reduce's start-up
(2(p − 1)α for a ring); large ones pay it rarely but the last one starts late.  In the
two-stream model the optimum is set by compute per gradient byte against the network's
time per byte, and by how finely the tensors can be grouped: the two presets
(:data:`MANY_SMALL_LAYERS`, :data:`FEW_LARGE_LAYERS`, on 64 GPUs over InfiniBand NDR)
put it near the chapter's "5–10 MB" and "50–100 MB".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..checks import MAX_INT, check_p, check_size, show
from ..collectives.registry import t_formula
from ..hardware import IB_NDR, Link
from ..cost import LogP
from ..parallelism import DDP_BUCKET_CAP_BYTES
from ..units import KiB, MiB
from .timeline import Timeline, _times, layerwise_timeline

__all__ = ["DDP_FIRST_BUCKET_BYTES", "ddp_bucket_assignment", "BucketPlan", "bucket_timeline", "ModelShape",
           "MANY_SMALL_LAYERS", "FEW_LARGE_LAYERS", "ring_allreduce_cost", "SWEEP_CAPS", "bucket_cap_sweep",
           "best_bucket_cap"]

DDP_FIRST_BUCKET_BYTES = MiB
r"""PyTorch DDP's first-bucket limit, ``kDefaultFirstBucketBytes = 1024 * 1024``
(torch/csrc/distributed/c10d/reducer.hpp; Python: ``dist._DEFAULT_FIRST_BUCKET_BYTES``,
passed with ``bucket_bytes_cap`` as ``[first, cap]`` to
``_compute_bucket_assignment_by_size`` in torch/nn/parallel/distributed.py)."""


def _sizes(param_bytes) -> list[int]:
    if isinstance(param_bytes, np.ndarray) and param_bytes.ndim != 1:
        raise TypeError(f"param_bytes must be a 1-D sequence of tensor sizes, got an array of shape {param_bytes.shape}")
    if isinstance(param_bytes, (str, bytes)) or not hasattr(param_bytes, "__len__"):
        raise TypeError(f"param_bytes must be a sequence of tensor sizes in bytes, got {type(param_bytes).__name__}")
    out = []
    for i, v in enumerate(param_bytes):
        if isinstance(v, bool) or not hasattr(v, "__index__") and not (isinstance(v, float) and v.is_integer()):
            raise TypeError(f"param_bytes[{i}] must be a whole number of bytes, got {v!r}")
        if not 0 < int(v) <= MAX_INT:
            raise ValueError(f"param_bytes[{i}] must be > 0 bytes (at most 2**53), got {show(v)}")
        out.append(int(v))
    if not out:
        raise ValueError("param_bytes must hold at least one tensor")
    return out


def ddp_bucket_assignment(param_bytes: Sequence[int], bucket_cap: int = DDP_BUCKET_CAP_BYTES,
                          first_bucket: int = DDP_FIRST_BUCKET_BYTES, *, rebuilt: bool = True,
                          find_unused_parameters: bool = False) -> list[list[int]]:
    r"""PyTorch DDP's gradient buckets, in the order DDP all-reduces them; each bucket
    lists parameter indices (definition order, as ``model.parameters()``).

    The rule of ``compute_bucket_assignment_by_size`` (torch/csrc/distributed/c10d/
    reducer.cpp), one dtype and device: walk the tensors, **add** each to the open
    bucket, and close the bucket as soon as its size is **≥** its limit — so a bucket
    can exceed the cap by most of one tensor, and a tensor larger than the cap shares a
    bucket with the ones before it.  The first bucket's limit is ``first_bucket``
    (1 MiB), every later one ``bucket_cap`` (``int(bucket_cap_mb·1024·1024)``, 25 MiB).

    Which walk runs depends on the mode (torch 2.13, torch/nn/parallel/distributed.py
    ``BucketCapacityConfig.compute_bucket_size_limits``, lines 150-162, and
    ``_ddp_init_helper``, lines 1410-1441):

    * ``find_unused_parameters=False`` (the default; also ``static_graph=True``): the
      constructor puts **every parameter in one bucket** (limit ``sys.maxsize``, line 154)
      for the first iteration (``rebuilt=False``), because the definition order need not
      be the order gradients appear; from the second iteration on (``rebuilt=True``)
      ``Reducer::rebuild_buckets`` walks the parameters in the order their gradients
      became ready — here the reverse of definition order — with the limits above and
      keeps that order, so the small bucket is the *first* reduced (unless
      ``DDP_SET_LAST_BUCKET_CAP=1``).
    * ``find_unused_parameters=True``: the constructor walks in definition order with the
      limits, then reverses the bucket list (line 1437: "reverse list of buckets because
      we want to approximate the order in which their gradients are produced"), so the
      small first bucket holds the *first-defined* parameters and is reduced last; the
      buckets are never rebuilt (the reducer rebuilds only with ``static_graph`` or
      without ``find_unused_parameters``), so ``rebuilt`` changes nothing.

    Four 10-byte tensors, a first limit of 10 and a cap of 20:

    >>> ddp_bucket_assignment([10] * 4, bucket_cap=20, first_bucket=10)
    [[3], [2, 1], [0]]
    >>> ddp_bucket_assignment([10] * 4, bucket_cap=20, first_bucket=10, rebuilt=False)
    [[0, 1, 2, 3]]
    >>> ddp_bucket_assignment([10] * 4, bucket_cap=20, first_bucket=10, find_unused_parameters=True)
    [[3], [1, 2], [0]]
    """
    sizes = _sizes(param_bytes)
    cap, first = check_size(bucket_cap, "bucket_cap"), check_size(first_bucket, "first_bucket")
    if cap <= 0 or first <= 0:
        raise ValueError("bucket_cap and first_bucket must be > 0 bytes")
    for name, flag in (("rebuilt", rebuilt), ("find_unused_parameters", find_unused_parameters)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    if not find_unused_parameters and not rebuilt:
        return [list(range(len(sizes)))]                 # the first iteration: one bucket
    rebuilt = rebuilt and not find_unused_parameters
    order = range(len(sizes) - 1, -1, -1) if rebuilt else range(len(sizes))
    buckets, open_, size, limit = [], [], 0, first
    for i in order:
        open_.append(i)
        size += sizes[i]
        if size >= limit:
            buckets.append(open_)
            open_, size, limit = [], 0, cap
    if open_:
        buckets.append(open_)
    return buckets if rebuilt else buckets[::-1]


@dataclass(frozen=True)
class BucketPlan:
    """Buckets (parameter indices, in reduction order), their bytes, and the two-stream
    timeline of one backward pass with one all-reduce per bucket.

    >>> plan = bucket_timeline([10] * 4, [1.0] * 4, lambda n: n / 10, bucket_cap=20, first_bucket=10)
    >>> plan.buckets, plan.bucket_bytes
    (((3,), (2, 1), (0,)), (10, 20, 10))
    """

    buckets: tuple[tuple[int, ...], ...]
    bucket_bytes: tuple[int, ...]
    timeline: Timeline

    @property
    def step_time(self) -> float:
        return self.timeline.step_time


def bucket_timeline(param_bytes: Sequence[int], backward: Sequence[float], allreduce_cost: Callable[[float], float], *,
                    bucket_cap: int = DDP_BUCKET_CAP_BYTES, first_bucket: int = DDP_FIRST_BUCKET_BYTES,
                    rebuilt: bool = True, find_unused_parameters: bool = False, overhead: float | LogP = 0.0,
                    optimizer: float = 0.0) -> BucketPlan:
    """One backward pass with DDP's buckets on the two-stream model.

    ``param_bytes[i]`` and ``backward[i]`` are parameter i's gradient size and the
    backward time that produces it (definition order; backward runs from the last
    parameter to the first).  A bucket's all-reduce is launched when its last gradient
    is ready and takes ``allreduce_cost(bucket bytes)`` seconds on the network stream
    (any function: a closed form of :mod:`commbook.collectives`, a measured curve).

    Backward ends at 4; the buckets' all-reduces run 1–2, 3–5 and 5–6, so the step
    waits 2 for the network:

    >>> plan = bucket_timeline([10] * 4, [1.0] * 4, lambda n: n / 10, bucket_cap=20, first_bucket=10)
    >>> plan.step_time, plan.timeline.stall
    (6.0, 2.0)
    """
    sizes, b = _sizes(param_bytes), _times(backward, "backward")
    if len(b) != len(sizes):
        raise ValueError(f"backward has {len(b)} entries but param_bytes has {len(sizes)}")
    if not callable(allreduce_cost):
        raise TypeError("allreduce_cost must be a function of a byte count returning seconds")
    buckets = ddp_bucket_assignment(sizes, bucket_cap, first_bucket, rebuilt=rebuilt,
                                    find_unused_parameters=find_unused_parameters)
    ready = list(range(len(sizes) - 1, -1, -1))            # backward order
    pos = {p: k for k, p in enumerate(ready)}
    wire: list[float | None] = [None] * len(sizes)
    nbytes = []
    for j, bucket in enumerate(buckets):
        n = sum(sizes[i] for i in bucket)
        nbytes.append(n)
        t = allreduce_cost(n)
        (t,) = _times([t], f"allreduce_cost({n})")
        last = max(pos[i] for i in bucket)
        if j and last < max(pos[i] for i in buckets[j - 1]):
            raise ValueError("bucket order does not follow the backward order")
        wire[last] = t
    tl = layerwise_timeline([b[i] for i in ready], wire, overhead=overhead, optimizer=optimizer,
                            labels=[f"p{i}" for i in ready])
    return BucketPlan(tuple(tuple(x) for x in buckets), tuple(nbytes), tl)


@dataclass(frozen=True)
class ModelShape:
    """A model as DDP sees it: gradient sizes in bytes (definition order) and the
    backward time producing each, with a description of the assumptions.

    >>> shape = ModelShape.uniform("toy", [100, 10], n_layers=2, seconds_per_byte=0.5, description="")
    >>> shape.param_bytes, shape.backward
    ((100, 10, 100, 10), (50.0, 5.0, 50.0, 5.0))
    >>> len(MANY_SMALL_LAYERS.param_bytes), round(sum(MANY_SMALL_LAYERS.backward) * 1e3, 1)
    (300, 21.1)
    """

    name: str
    param_bytes: tuple[int, ...]
    backward: tuple[float, ...]
    description: str

    @classmethod
    def uniform(cls, name: str, layer: Sequence[int], n_layers: int, seconds_per_byte: float,
                description: str) -> "ModelShape":
        """``n_layers`` copies of ``layer`` (its tensors' bytes), each tensor's backward
        taking ``seconds_per_byte`` × its bytes."""
        sizes = _sizes(list(layer)) * check_p(n_layers, "n_layers")
        (spb,) = _times([seconds_per_byte], "seconds_per_byte")
        return cls(name, tuple(sizes), tuple(s * spb for s in sizes), description)


MANY_SMALL_LAYERS = ModelShape.uniform(
    "many small layers", [MiB, 4 * KiB, 4 * KiB], 100, 0.2e-9,
    "100 layers of a 1 MiB weight and two 4 KiB norm tensors (≈ ResNet-50's 102 MB of FP32 "
    "gradients); compute-heavy: 0.2 ns of backward per gradient byte (21 ms per step, assumed)")
FEW_LARGE_LAYERS = ModelShape.uniform(
    "few large layers", [16 * MiB] * 4 + [64 * MiB] * 2, 8, 0.04e-9,
    "8 transformer blocks of d_model 2048 (4 attention matrices 2048² and 2 MLP matrices "
    "2048×8192, FP32 gradients: 1.6 GB); 0.04 ns of backward per gradient byte, i.e. backward "
    "FLOPs 4·N·tokens at 8,192 tokens per GPU and 200 TFLOP/s sustained (assumed)")


def ring_allreduce_cost(p: int = 64, link: Link = IB_NDR) -> Callable[[float], float]:
    """n ↦ the ring all-reduce closed form on ``p`` GPUs over ``link`` (default 64 GPUs,
    InfiniBand NDR: α = 5 µs, β = 50 GB/s), 2(p − 1)(α + n/(pβ)).

    >>> cost = ring_allreduce_cost(p=64)
    >>> round(cost(0) * 1e6, 6), round(cost(64 * 50e9) - cost(0), 6)  # 126 α; 2·63 s of bytes
    (630.0, 126.0)
    """
    p = check_p(p)
    if not isinstance(link, Link):
        raise TypeError(f"link must be a commbook.hardware.Link, got {type(link).__name__}")
    return lambda n: t_formula("ring", p, n, link.alpha, link.beta)


SWEEP_CAPS = tuple(int(x * MiB) for x in (1, 2, 5, 10, 25, 50, 100, 200, 500, 1000))
"""Bucket caps swept by default: 1 MiB to 1,000 MiB."""


def bucket_cap_sweep(shape: ModelShape, caps: Sequence[int] = SWEEP_CAPS, allreduce_cost: Callable[[float], float] | None = None,
                     **kwargs) -> list[tuple[int, BucketPlan]]:
    """(cap, :class:`BucketPlan`) for each bucket cap in bytes (other arguments as for
    :func:`bucket_timeline`; the cost defaults to :func:`ring_allreduce_cost`).

    Each cap's step time on the many-small-layers preset: 1 MiB buckets pay α too often:

    >>> sweep = bucket_cap_sweep(MANY_SMALL_LAYERS, caps=[MiB, 5 * MiB, 100 * MiB])
    >>> [(cap // MiB, round(plan.step_time * 1e3, 1)) for cap, plan in sweep]
    [(1, 67.4), (5, 21.9), (100, 25.9)]
    """
    if not isinstance(shape, ModelShape):
        raise TypeError(f"shape must be a ModelShape, got {type(shape).__name__}")
    cost = ring_allreduce_cost() if allreduce_cost is None else allreduce_cost
    if isinstance(caps, (str, bytes)) or not len(caps):
        raise ValueError("caps must be a non-empty sequence of bucket caps in bytes")
    return [(int(c), bucket_timeline(shape.param_bytes, shape.backward, cost, bucket_cap=int(c), **kwargs))
            for c in caps]


def best_bucket_cap(sweep: Sequence[tuple[int, BucketPlan]]) -> tuple[int, BucketPlan]:
    """The sweep's fastest cap (the smallest of equal times) and its plan.

    The presets put the optimum in the chapter's "5–10 MB" and "50–100 MB":

    >>> [best_bucket_cap(bucket_cap_sweep(s))[0] // MiB for s in (MANY_SMALL_LAYERS, FEW_LARGE_LAYERS)]
    [5, 100]
    """
    if not sweep:
        raise ValueError("the sweep is empty")
    return min(sweep, key=lambda cp: (cp[1].step_time, cp[0]))
