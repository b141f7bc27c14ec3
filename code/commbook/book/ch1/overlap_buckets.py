"""Chapter §1.8: PyTorch's gradient buckets for ``chapters/{zh,en}/ch1/08-overlap.md``: DDP's
bucketing rule on a synthetic parameter list (:data:`SYNTHETIC_PARAMS`, :func:`bucket_table`,
:func:`bucket_numbers`), bucket timelines (:func:`bucket_plans`, :func:`plan_numbers`) and the
bucket-cap sweep for the two model shapes of :mod:`commbook.overlap` (:func:`sweep`,
:func:`sweep_summary`, :func:`sweep_numbers`), on the page's link
(:data:`.overlap_numbers.EXAMPLE_LINK`).  Results name their units as in :mod:`.overlap_numbers`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ...hardware import IB_NDR_CHAPTER
from ...overlap import (DDP_FIRST_BUCKET_BYTES, FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, BucketPlan, ModelShape,
                        best_bucket_cap, bucket_cap_sweep, bucket_timeline, ddp_bucket_assignment,
                        ring_allreduce_cost)
from ...parallelism import DDP_BUCKET_CAP_BYTES, DDP_BUCKET_CAP_MB
from ...units import MB, KiB, MiB, fmt_bytes, fmt_number
from ..tables import Table
from ..text import texts
from .overlap_numbers import EXAMPLE_LINK

__all__ = ["SYNTHETIC_PARAMS", "WALKS", "bucket_table", "Buckets", "bucket_numbers", "SHAPES", "SHAPE_NAMES",
           "TIMELINE_SHAPE", "SWEEP_GRID", "CHAPTER_CAP_RANGES", "SWEEP_GPUS", "FEW_LARGE_BASIS", "layers_of",
           "layer_tensors", "ring_startup", "sweep", "NEAR_OPTIMUM", "SweepSummary", "sweep_summary", "bucket_plans", "CR_SHAPE",
           "construction_vs_rebuilt", "Plans", "plan_numbers", "Sweep", "sweep_numbers"]

T = texts("ch1")
K = "overlap_numbers."
_tx = T.under(K)       # the entries of the section (ch1.toml, under overlap_numbers.)
_txs = _tx.pairs


def _mib(n: float) -> str:
    return f"{fmt_number(n / MiB, 3)} MiB"


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


@dataclass(frozen=True)
class Buckets:
    """DDP's bucket rule on the synthetic parameter list, at the default cap and at ``q_cap``."""
    start_up_s: float
    cap_mb: int
    cap_mib: str
    cap_dec_bytes: float
    first_mib: str
    syn_n: int
    syn_total_mib: str
    syn_embed: str
    syn_reb_first_mib: str
    syn_reb_first_big: str
    q_cap_mib: str
    q_cap_mb: int
    q_n: int
    q_sizes: str
    q_last_mib: str


def bucket_numbers(params=SYNTHETIC_PARAMS, q_cap: float = 50 * MiB) -> Buckets:
    """DDP's rebuilt buckets of ``params`` at the default cap and at ``q_cap``.

    >>> bucket_numbers().syn_embed
    'embed.weight'
    """
    names, sizes = [p[0] for p in params], [int(p[1]) for p in params]
    reb = ddp_bucket_assignment(sizes, DDP_BUCKET_CAP_BYTES, DDP_FIRST_BUCKET_BYTES, rebuilt=True)
    q_sizes = [sum(sizes[i] for i in b) for b in ddp_bucket_assignment(sizes, int(q_cap), DDP_FIRST_BUCKET_BYTES,
                                                                       rebuilt=True)]
    return Buckets(start_up_s=ring_startup(), cap_mb=DDP_BUCKET_CAP_MB, cap_mib=_mib(DDP_BUCKET_CAP_BYTES),
                   cap_dec_bytes=DDP_BUCKET_CAP_BYTES, first_mib=_mib(DDP_FIRST_BUCKET_BYTES), syn_n=len(sizes),
                   syn_total_mib=_mib(sum(sizes)), syn_embed=names[0], syn_reb_first_mib=_mib(sum(sizes[i] for i in reb[0])),
                   syn_reb_first_big=names[reb[0][-1]], q_cap_mib=_mib(q_cap), q_cap_mb=round(q_cap / MiB),
                   q_n=len(q_sizes), q_sizes=", ".join(_mib(x) for x in q_sizes), q_last_mib=_mib(q_sizes[-1]))


@dataclass(frozen=True)
class Plans:
    """The three bucket plans of the timeline figure, and construction against rebuilt order."""
    best_cap_mib: str
    big_wait_s: float
    def_wait_s: float
    best_wait_s: float
    cr_cons_s: float
    cr_reb_s: float


def plan_numbers() -> Plans:
    """:func:`bucket_plans` and :func:`construction_vs_rebuilt`.

    >>> plan_numbers().best_cap_mib
    '120 MiB'
    """
    (_, p_def), (c_best, p_best), (_, p_big) = bucket_plans()
    cr = construction_vs_rebuilt()
    return Plans(best_cap_mib=_mib(c_best), big_wait_s=p_big.timeline.stall, def_wait_s=p_def.timeline.stall,
                 best_wait_s=p_best.timeline.stall, cr_cons_s=cr["construction"].step_time,
                 cr_reb_s=cr["rebuilt"].step_time)


@dataclass(frozen=True)
class Sweep:
    """The bucket-cap sweep on the two shapes, and the small shape on InfiniBand's α."""
    sm_ratio: float           # compute per byte over network per byte
    sm_best_mib: str
    sm_range: str             # the chapter's range for the shape
    lg_ratio: float
    lg_best_mib: str
    lg_range: str
    lo_mib: str
    hi_mib: str
    lg_layers: int
    gpus: int
    within_frac: float
    alt_alpha_s: float
    alt_best_bytes: float


def sweep_numbers() -> Sweep:
    """:func:`sweep_summary` on both :data:`SHAPES`, and the small one on InfiniBand's α.

    >>> sweep_numbers().gpus
    64
    """
    small, large = (sweep_summary(s) for s in SHAPES)
    alt = sweep_summary(SHAPES[0], IB_NDR_CHAPTER)
    rng = lambda s: f"{fmt_number(s.range_bytes[0] / MB)}–{fmt_number(s.range_bytes[1] / MB)} MB"
    ratio = lambda s: s.compute_per_byte_s / s.net_per_byte_s
    return Sweep(sm_ratio=ratio(small), sm_best_mib=_mib(small.cap_bytes), sm_range=rng(small), lg_ratio=ratio(large),
                 lg_best_mib=_mib(large.cap_bytes), lg_range=rng(large), lo_mib=_mib(SWEEP_GRID[0]),
                 hi_mib=f"{fmt_number(SWEEP_GRID[-1] / MiB)} MiB", lg_layers=max(layers_of(SHAPES[1])) + 1,
                 gpus=SWEEP_GPUS, within_frac=NEAR_OPTIMUM, alt_alpha_s=IB_NDR_CHAPTER.alpha, alt_best_bytes=alt.cap_bytes)
