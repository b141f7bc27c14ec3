"""Chapter §1.8: PyTorch's gradient buckets for ``chapters/{zh,en}/ch1/08-overlap.md``: DDP's
bucketing rule on a synthetic parameter list (:data:`SYNTHETIC_PARAMS`, :func:`bucket_table`),
bucket timelines (:func:`bucket_plans`, :func:`construction_vs_rebuilt`) and the bucket-cap
sweep for the two model shapes of :mod:`commbook.overlap` (:func:`sweep`,
:func:`sweep_summary`), on the page's link
(:data:`.overlap_numbers.EXAMPLE_LINK`).  Results name their units as in :mod:`.overlap_numbers`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ...overlap import (DDP_FIRST_BUCKET_BYTES, FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, BucketPlan, ModelShape,
                        best_bucket_cap, bucket_cap_sweep, bucket_timeline, ddp_bucket_assignment,
                        ring_allreduce_cost)
from ...parallelism import DDP_BUCKET_CAP_BYTES
from ...units import MB, KiB, MiB, fmt_bytes
from ..tables import Table
from ..text import texts
from .overlap_numbers import EXAMPLE_LINK

__all__ = ["SYNTHETIC_PARAMS", "WALKS", "bucket_table", "SHAPES", "SHAPE_NAMES",
           "TIMELINE_SHAPE", "SWEEP_GRID", "CHAPTER_CAP_RANGES", "SWEEP_GPUS", "FEW_LARGE_BASIS", "layers_of",
           "layer_tensors", "ring_startup", "sweep", "NEAR_OPTIMUM", "SweepSummary", "sweep_summary", "bucket_plans", "CR_SHAPE",
           "construction_vs_rebuilt"]

T = texts("ch1")
K = "overlap_numbers."
_tx = T.under(K)       # the entries of the section (ch1.toml, under overlap_numbers.)
_txs = _tx.pairs


# ============================================================================ PyTorch's buckets
SYNTHETIC_PARAMS = (
    ("embed.weight", 30 * MiB),
    ("block0.attn.qkv", 9 * MiB), ("block0.attn.bias", 12 * KiB),
    ("block0.mlp.up", 12 * MiB), ("block0.mlp.down", 12 * MiB), ("block0.norm", 8 * KiB),
    ("block1.attn.qkv", 9 * MiB), ("block1.attn.bias", 12 * KiB),
    ("block1.mlp.up", 12 * MiB), ("block1.mlp.down", 12 * MiB), ("block1.norm", 8 * KiB),
    ("out.weight", 768 * KiB),
)
"""A synthetic model as ``model.parameters()`` lists it (definition order): name, gradient bytes."""


WALKS = {"first": (False, False), "construction": (False, True), "rebuilt": (True, False)}
"""The three bucketings of DDP as (rebuilt, find_unused_parameters): the default mode's first
iteration (one bucket), the constructor's walk with ``find_unused_parameters=True`` (kept
for good), and the default mode from its second iteration (rebuilt)."""


def _walk_limits(buckets: list[list[int]], sizes: list[int], rebuilt: bool, cap: int, first: int) -> list:
    """For each bucket (reduction order) the limit it reached when it closed, or None if it
    was still open when the walk ended."""
    walked = buckets if rebuilt else buckets[::-1]
    limits = []
    for j, bucket in enumerate(walked):
        limit = first if j == 0 else cap
        limits.append(limit if sum(sizes[i] for i in bucket) >= limit else None)
    return limits if rebuilt else limits[::-1]


def bucket_table(params=SYNTHETIC_PARAMS, cap: int = DDP_BUCKET_CAP_BYTES,
                 first: int = DDP_FIRST_BUCKET_BYTES) -> Table:
    """The buckets of ``params`` in reduction order in DDP's three bucketings (:data:`WALKS`);
    ``meta`` holds the three assignments."""
    names, sizes = [p[0] for p in params], [int(p[1]) for p in params]
    rows, meta = [], {}
    for key, (rebuilt, unused) in WALKS.items():
        buckets = ddp_bucket_assignment(sizes, cap, first, rebuilt=rebuilt, find_unused_parameters=unused)
        limits = [None] if key == "first" else _walk_limits(buckets, sizes, rebuilt, cap, first)
        meta[key] = buckets
        for j, (bucket, limit) in enumerate(zip(buckets, limits)):
            rows.append({"order": key, "bucket": j + 1, "params": ", ".join(names[i] for i in bucket),
                         "size": sum(sizes[i] for i in bucket), "limit": limit, "indices": tuple(bucket)})
    over = [r for r in rows if r["size"] > cap]
    big = max(rows, key=lambda r: r["size"])
    c, f = fmt_bytes(cap, binary=True), fmt_bytes(first, binary=True)
    return Table(
        key="ch1-ddp-buckets",
        title=_tx("ddp_s_buckets_for", c=c, f=f),
        columns=["order", "bucket", "params", "size", "limit"],
        headers=_txs("walk", "bucket_reduction_order", "parameters", "size", "limit_reached"),
        rows=rows,
        formats={"bucket": lambda v: f"{v}", "size": lambda v: fmt_bytes(v, binary=True),
                 "limit": lambda v: fmt_bytes(v, binary=True)},
        labels=T.labels(K + "labels."),
        notes=_txs("a_tensor_is_added", f=f, c=c, over=len(over), rows=len(rows), size=fmt_bytes(big['size'], binary=True)),
        meta={**meta, "over_cap": len(over), "largest": big["size"], "sizes": sizes, "names": names},
    )


# ============================================================================ bucket-cap sweep
SHAPES = (MANY_SMALL_LAYERS, FEW_LARGE_LAYERS)
TIMELINE_SHAPE = FEW_LARGE_LAYERS
SWEEP_GRID = tuple(int(x * MiB) for x in (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50,
                                          60, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 800, 1000))
"""Bucket caps of the sweep, 1 MiB to 1,000 MiB (PyTorch's 25 MiB among them)."""
SHAPE_NAMES = {MANY_SMALL_LAYERS.name: _tx("many_small_layers"),
               FEW_LARGE_LAYERS.name: _tx("few_large_layers")}
CHAPTER_CAP_RANGES = {MANY_SMALL_LAYERS.name: (5 * MB, 10 * MB), FEW_LARGE_LAYERS.name: (50 * MB, 100 * MB)}
"""The bucket sizes the chapter recommends for many small layers and for few large ones."""


SWEEP_GPUS = 64
"""GPUs of the sweep and of the bucket timelines (one ring all-reduce per bucket)."""
FEW_LARGE_BASIS = {"d_model": 2048, "tokens": 8192, "flops": 200e12, "flops_per_param_token": 4,
                   "bytes_per_value": 4}
"""Where the few-large-layers model's compute per byte comes from: backward costs about 4
FLOPs per parameter and token; 8,192 tokens per GPU at 200 TFLOP/s sustained; FP32 gradients."""


def layers_of(shape: ModelShape) -> list[int]:
    """Layer index of each tensor of a shape built by ``ModelShape.uniform`` (the tensors
    of one layer are the shortest period of the size list)."""
    sizes = list(shape.param_bytes)
    for k in range(1, len(sizes) + 1):
        if len(sizes) % k == 0 and sizes == sizes[:k] * (len(sizes) // k):
            return [i // k for i in range(len(sizes))]
    return list(range(len(sizes)))


def layer_tensors(shape: ModelShape) -> list[int]:
    """The gradient bytes of one layer's tensors."""
    lay = layers_of(shape)
    return [b for b, l in zip(shape.param_bytes, lay) if l == 0]


def ring_startup(link=EXAMPLE_LINK, p: int = SWEEP_GPUS) -> float:
    """The start-up part of one ring all-reduce, 2(p − 1)α: its time for 0 bytes."""
    return ring_allreduce_cost(p, link)(0.0)


@functools.lru_cache(maxsize=8)
def sweep(shape: ModelShape, link=EXAMPLE_LINK) -> tuple:
    """(cap, plan) over :data:`SWEEP_GRID`, ring all-reduce on :data:`SWEEP_GPUS` over ``link``."""
    return tuple(bucket_cap_sweep(shape, SWEEP_GRID, ring_allreduce_cost(SWEEP_GPUS, link)))


NEAR_OPTIMUM = 0.05
"""Caps whose step is within this share of the best one count as near the optimum."""


@dataclass(frozen=True)
class SweepSummary:
    """:func:`sweep_summary`: the shape and its sweep, the best cap, its plan and step, the
    steps at both ends, the caps near the best, the compute and gradient bytes, compute per
    byte, the network's time per byte and per start-up, the chapter's range, the step at
    PyTorch's default cap."""
    shape: ModelShape
    sweep: tuple
    cap_bytes: int
    plan: BucketPlan
    step_s: float
    first_s: float
    last_s: float
    near_bytes: tuple
    compute_s: float
    total_bytes: float
    compute_per_byte_s: float
    net_per_byte_s: float
    start_up_s: float
    range_bytes: tuple
    default_s: float


def sweep_summary(shape: ModelShape, link=EXAMPLE_LINK, within: float = NEAR_OPTIMUM) -> SweepSummary:
    """The sweep of ``shape`` on ``link``; "near": within ``within`` of the best step."""
    sw = sweep(shape, link)
    cap, plan = best_bucket_cap(sw)
    near = [c for c, p in sw if p.step_time <= plan.step_time * (1 + within)]
    total, compute = sum(shape.param_bytes), sum(shape.backward)
    start_up = ring_startup(link)
    per_byte = (ring_allreduce_cost(SWEEP_GPUS, link)(total) - start_up) / total
    return SweepSummary(shape, sw, cap, plan, plan.step_time, sw[0][1].step_time, sw[-1][1].step_time,
                        (min(near), max(near)), compute, total, compute / total, per_byte, start_up,
                        CHAPTER_CAP_RANGES[shape.name], dict(sw)[DDP_BUCKET_CAP_BYTES].step_time)


def bucket_plans(shape: ModelShape = TIMELINE_SHAPE, link=EXAMPLE_LINK) -> list[tuple[int, object]]:
    """Timelines for three caps: PyTorch's 25 MiB, the sweep's best, and the largest swept."""
    best = sweep_summary(shape, link).cap_bytes
    cost = ring_allreduce_cost(SWEEP_GPUS, link)
    return [(c, bucket_timeline(shape.param_bytes, shape.backward, cost, bucket_cap=c))
            for c in (DDP_BUCKET_CAP_BYTES, best, SWEEP_GRID[-1])]


CR_SHAPE = MANY_SMALL_LAYERS
"""The model on which the constructor's and the rebuilt buckets are compared."""


def construction_vs_rebuilt(shape: ModelShape = CR_SHAPE, link=EXAMPLE_LINK) -> dict[str, BucketPlan]:
    """Plans at 25 MiB with the constructor's buckets of ``find_unused_parameters=True``
    (``"construction"``, kept in that mode) and with the default mode's rebuilt ones."""
    cost = ring_allreduce_cost(SWEEP_GPUS, link)
    return {k: bucket_timeline(shape.param_bytes, shape.backward, cost, rebuilt=r, find_unused_parameters=u)
            for k, (r, u) in (("construction", WALKS["construction"]), ("rebuilt", WALKS["rebuilt"]))}
