r"""Chapter §1.8, overlapping communication with computation: the numbers and tables of
``chapters/{zh,en}/ch1/08-overlap.md``.  The figures are in :mod:`.overlap_figures`.

* the residual that overlap hides (:func:`residual_example`), ring against binomial tree
  with and without overlap (:func:`ring_vs_tree`);
* PyTorch's bucketing rule on a synthetic parameter list (:data:`SYNTHETIC_PARAMS`,
  :func:`bucket_table`), bucket timelines (:func:`bucket_plans`) and the bucket-cap sweep
  for the two model shapes of :mod:`commbook.overlap` (:func:`sweep`, :func:`sweep_summary`);
* the limits: 2o per collective (:func:`overhead_example`), L equal layers
  (:func:`hidden_fractions`), gradients still in flight (:func:`in_flight`);
* Napkin math 1.8 (:func:`nm18`, :func:`nm18_check`, :func:`nm18_table`) and the single-node
  70B check (:func:`.overlap_results.single_node`).

Every number is computed from the parameters below; the chapter's printed values are kept
apart (``CHAPTER_*``) so that the page and the tests can set the two side by side.
"""
from __future__ import annotations

import functools
import math

from ...collectives import crossover, t_allreduce_hierarchical, t_formula
from ...cost import LogP
from ...hardware import IB_NDR
from ...overlap import (DDP_FIRST_BUCKET_BYTES, FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, ModelShape, Timeline,
                        best_bucket_cap, bucket_cap_sweep, bucket_timeline, ddp_bucket_assignment,
                        hidden_fraction_equal_layers, layerwise_timeline, ring_allreduce_cost,
                        step_time_no_overlap, transfer_beside_compute)
from ...parallelism import DDP_BUCKET_CAP_BYTES
from ...units import MB, KiB, MiB, fmt_bytes, fmt_pct, fmt_time, ms, us
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS
from .perf_numbers import NM13

__all__ = ["EXAMPLE_LINK", "RESIDUAL", "residual_example", "RING_TREE", "ring_vs_tree",
           "SYNTHETIC_PARAMS", "WALKS", "bucket_table", "SHAPES", "SHAPE_NAMES", "CR_SHAPE", "construction_vs_rebuilt",
           "SWEEP_GPUS", "NEAR_OPTIMUM", "FEW_LARGE_BASIS", "layers_of", "layer_tensors", "ring_startup", "TIMELINE_SHAPE", "SWEEP_GRID", "CHAPTER_CAP_RANGES",
           "sweep", "sweep_summary", "bucket_plans", "OVERHEAD", "overhead_example", "HIDDEN_LAYERS",
           "CHAPTER_HIDDEN", "hidden_fractions", "in_flight", "NM18", "CHAPTER_NM18", "nm18", "nm18_check",
           "nm18_table", "CHAPTER_SINGLE_NODE"]

T = texts("ch1")
K = "overlap_numbers."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys)
_txs = _tx.pairs


EXAMPLE_LINK = IB_NDR
"""The link of the page's own examples (the residual, ring against tree, the bucket sweep):
InfiniBand NDR with α = 5 µs, β = 50 GB/s, on 64 GPUs."""

# ============================================================================ the residual
RESIDUAL = {"bytes": 500 * MB, "gpus": 64, "compute": 30 * ms}
"""A 500 MB slice of gradients all-reduced by a ring on 64 GPUs while 30 ms of backward
remain; o is Napkin math 1.3's 50 µs."""


def residual_example() -> dict:
    """The ring's wire time for :data:`RESIDUAL` on :data:`EXAMPLE_LINK`, and the step with
    the transfer beside the compute (2o + max(compute, wire)) and blocking (2o + both)."""
    c, link = RESIDUAL, EXAMPLE_LINK
    wire = t_formula("ring", c["gpus"], c["bytes"], link.alpha, link.beta)
    lp = LogP(L=wire, o=NM13["o"])
    tl = transfer_beside_compute(c["compute"], lp)
    blocking = c["compute"] + 2 * lp.o + wire
    return {**c, "link": link, "wire": wire, "o": lp.o, "overlapped": tl.step_time, "blocking": blocking,
            "hidden": blocking - tl.step_time, "timeline": tl}


# ============================================================================ ring against tree
RING_TREE = {"layers": 32, "bytes": 1 * MB, "backward": 1 * ms, "gpus": 64}
"""32 layers of 1 MB of gradients each, 1 ms of backward per layer, 64 GPUs."""


def ring_vs_tree() -> dict:
    """Ring and binomial tree all-reduce per layer (:data:`RING_TREE`, :data:`EXAMPLE_LINK`),
    the step without and with layer-wise overlap, and the ring's penalty in both."""
    c, link = RING_TREE, EXAMPLE_LINK
    b = [c["backward"]] * c["layers"]
    out = {**c, "link": link, "crossover": crossover("ring", "tree", c["gpus"], link.alpha, link.beta)}
    for algo in ("ring", "tree"):
        a = t_formula(algo, c["gpus"], c["bytes"], link.alpha, link.beta)
        tl = layerwise_timeline(b, [a] * c["layers"])
        out[algo] = {"allreduce": a, "blocking": step_time_no_overlap(b, [a] * c["layers"]),
                     "overlapped": tl.step_time, "hidden": tl.hidden_fraction}
    out["penalty_blocking"] = out["ring"]["blocking"] - out["tree"]["blocking"]
    out["penalty_overlapped"] = out["ring"]["overlapped"] - out["tree"]["overlapped"]
    return out


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
        labels={lang: {k: T.get(K + "labels." + k, lang) for k in ('first', 'construction', 'rebuilt',)} for lang in ("en", "zh")},
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


def sweep_summary(shape: ModelShape, link=EXAMPLE_LINK, within: float = NEAR_OPTIMUM) -> dict:
    """The sweep's best cap and step, the two ends, the caps within ``within`` of the best,
    the compute per gradient byte and the network's time per byte and per start-up."""
    sw = sweep(shape, link)
    cap, plan = best_bucket_cap(sw)
    near = [c for c, p in sw if p.step_time <= plan.step_time * (1 + within)]
    total = sum(shape.param_bytes)
    ring = ring_allreduce_cost(SWEEP_GPUS, link)
    start_up = ring_startup(link)
    per_byte = (ring(total) - start_up) / total
    return {"shape": shape, "sweep": sw, "cap": cap, "plan": plan, "step": plan.step_time,
            "first": sw[0][1].step_time, "last": sw[-1][1].step_time, "near": (min(near), max(near)),
            "compute": sum(shape.backward), "bytes": total, "compute_per_byte": sum(shape.backward) / total,
            "net_per_byte": per_byte, "start_up": start_up, "range": CHAPTER_CAP_RANGES[shape.name],
            "default": dict(sw)[DDP_BUCKET_CAP_BYTES].step_time}


def bucket_plans(shape: ModelShape = TIMELINE_SHAPE, link=EXAMPLE_LINK) -> list[tuple[int, object]]:
    """Timelines for three caps: PyTorch's 25 MiB, the sweep's best, and the largest swept."""
    best = sweep_summary(shape, link)["cap"]
    cost = ring_allreduce_cost(SWEEP_GPUS, link)
    return [(c, bucket_timeline(shape.param_bytes, shape.backward, cost, bucket_cap=c))
            for c in (DDP_BUCKET_CAP_BYTES, best, SWEEP_GRID[-1])]


CR_SHAPE = MANY_SMALL_LAYERS
"""The model on which the constructor's and the rebuilt buckets are compared."""


def construction_vs_rebuilt(shape: ModelShape = CR_SHAPE, link=EXAMPLE_LINK) -> dict:
    """Plans at 25 MiB with the constructor's buckets of ``find_unused_parameters=True``
    (``"construction"``, kept in that mode) and with the default mode's rebuilt ones."""
    cost = ring_allreduce_cost(SWEEP_GPUS, link)
    return {k: bucket_timeline(shape.param_bytes, shape.backward, cost, rebuilt=r, find_unused_parameters=u)
            for k, (r, u) in (("construction", WALKS["construction"]), ("rebuilt", WALKS["rebuilt"]))}


# ============================================================================ limits
OVERHEAD = {"layers": 100, "backward": 30 * us, "wire": 20 * us}
"""100 short layers, 30 µs of backward and a 20 µs all-reduce each; o is Napkin math 1.3's 50 µs."""


def overhead_example() -> dict:
    """Each layer's all-reduce costs the compute stream 2o: the step with and without
    overlap, next to the compute alone."""
    c, o = OVERHEAD, NM13["o"]
    b, a = [c["backward"]] * c["layers"], [c["wire"]] * c["layers"]
    tl = layerwise_timeline(b, a, overhead=o)
    return {**c, "o": o, "compute": sum(b), "overhead": 2 * o * c["layers"], "wire_total": sum(a),
            "overlapped": tl.step_time, "blocking": step_time_no_overlap(b, a, overhead=o), "timeline": tl}


HIDDEN_LAYERS = (2, 3, 10, 20, 32)
CHAPTER_HIDDEN = {"shallow": ((2, 3), (0.50, 0.60)), "deep": ((10, 20), (0.90, 0.95))}
"""The chapter's shares: 50–60 % for 2–3 layers, 90–95 % for "dozens of layers" (taken as 10–20)."""


def hidden_fractions(layers=HIDDEN_LAYERS) -> dict[int, float]:
    """Hidden share of the communication for L equal layers (all-reduce = backward)."""
    return {L: hidden_fraction_equal_layers(L) for L in layers}


def in_flight(tl: Timeline, backward_end: float) -> int:
    """All-reduces not yet finished when the backward pass ends."""
    return sum(1 for b in tl.blocks if b.kind == "allreduce" and b.end > backward_end + 1e-12)


# ============================================================================ Napkin math 1.8
NM18 = {"layers": 32, "params": 7e9, "bytes_per_value": 4, "nodes": 8, "gpus_per_node": 8,
        "backward": 15 * ms, "allreduce": 26.4 * ms, "bucket": 100 * MB}
"""Napkin math 1.8: 32 layers, 7B parameters, FP32 gradients, 64 GPUs (8 × 8), 15 ms of
backward per layer, 26.4 ms per layer's hierarchical all-reduce (given), 100 MB buckets."""
CHAPTER_NM18 = {"sequential": (1324.8 * ms, 1), "pipelined": (859.8 * ms, 1), "saving": (35.1, 1),
                "layer_bytes": (880 * MB, -1)}
"""The box's printed results: value and decimals (ms, %; −1: rounded to tens of MB)."""


def nm18(allreduce: float | None = None) -> dict:
    """Napkin math 1.8 as two timelines, with the closed forms the timeline must equal."""
    c = NM18
    L, b = c["layers"], c["backward"]
    a = c["allreduce"] if allreduce is None else allreduce
    bs, ars = [b] * L, [a] * L
    seq = layerwise_timeline(bs, ars, overlap=False)
    pipe = layerwise_timeline(bs, ars)
    exposed = max(a - b, 0.0)
    closed = L * b + a + (L - 1) * exposed          # the box's T_bwd + T_first + (N_L − 1) T_exposed
    n_out = in_flight(pipe, L * b)
    return {"allreduce": a, "layer_bytes": c["params"] / L * c["bytes_per_value"], "backward_total": L * b,
            "sequential": seq.step_time, "pipelined": pipe.step_time, "closed_sequential": L * (b + a),
            "closed_pipelined": closed, "exposed_per_layer": exposed, "stall": pipe.stall,
            "saving": 1 - pipe.step_time / seq.step_time, "hidden": pipe.hidden_fraction,
            "in_flight": n_out, "timeline": pipe}


def nm18_check() -> dict:
    """The per-layer all-reduce of Napkin math 1.8 from the hierarchical model (8 × 8, NVLink
    4.0 inside the nodes, InfiniBand NDR between them): one all-reduce of the layer's bytes,
    the same in 100 MB buckets, the bandwidth terms alone, and a flat ring over InfiniBand."""
    c = NM18
    n = c["params"] / c["layers"] * c["bytes_per_value"]
    nvl, ib = BOX_LINKS["nm1.8-nvl"], BOX_LINKS["nm1.8"]
    hier = lambda x, i=nvl, e=ib: t_allreduce_hierarchical(c["nodes"], c["gpus_per_node"], x, i, e)
    k = math.ceil(n / c["bucket"])
    pieces = [c["bucket"]] * (k - 1) + [n - (k - 1) * c["bucket"]]
    g, m = c["gpus_per_node"], c["nodes"]
    bw_only = 2 * (g - 1) / g * n / nvl.beta + 2 * (m - 1) / m * (n / g) / ib.beta
    flat = t_formula("ring", m * g, n, ib.alpha, ib.beta)
    return {"bytes": n, "one": hier(n), "buckets": k, "pieces": pieces, "bucketed": sum(hier(x) for x in pieces),
            "bandwidth_only": bw_only, "flat": flat, "intra": nvl, "inter": ib,
            "ratio": c["allreduce"] / hier(n)}


def nm18_table() -> Table:
    """Napkin math 1.8 for three per-layer all-reduces: the given one, the hierarchical
    model's (100 MB buckets) and a flat ring's."""
    chk = nm18_check()
    variants = [("given", NM18["allreduce"]), ("hierarchical", chk["bucketed"]), ("flat", chk["flat"])]
    rows = []
    for key, a in variants:
        r = nm18(a)
        rows.append({"variant": key, "allreduce": a, "sequential": r["sequential"], "pipelined": r["pipelined"],
                     "saving": r["saving"], "hidden": r["hidden"], "in_flight": r["in_flight"]})
    t_ms = lambda v: f"{v / ms:,.1f} ms"
    gb = fmt_bytes(chk["bytes"], digits=3)
    return Table(
        key="ch1-nm18",
        title=_tx("napkin_math_1_8"),
        columns=["variant", "allreduce", "sequential", "pipelined", "saving", "hidden", "in_flight"],
        headers=_txs("per_layer_all_reduce", "time", "sequential", "pipelined", "saved", "comm_hidden", "still_in_flight_when"),
        rows=rows,
        formats={"allreduce": t_ms, "sequential": t_ms, "pipelined": t_ms, "saving": fmt_pct,
                 "hidden": fmt_pct, "in_flight": lambda v: f"{v}"},
        labels={lang: {k: T.get(K + "nm18_" + k, lang, buckets=chk["buckets"]) for k in ("given", "hierarchical", "flat")}
                for lang in ("en", "zh")},
        notes=_txs("layers_of_backward_and", layers=NM18['layers'], backward=fmt_time(NM18['backward'], 3), gb=gb, nodes=NM18['nodes'], gpus_per_node=NM18['gpus_per_node'], alpha=fmt_time(chk['intra'].alpha, 3), beta=chk['intra'].beta / 1e9, alpha2=fmt_time(chk['inter'].alpha, 3), beta2=chk['inter'].beta / 1e9, bucket=fmt_bytes(NM18['bucket'])),
        meta={"check": chk},
    )


# ============================================================================ single node
CHAPTER_SINGLE_NODE = {"time": (0.54, 2), "share": (26, 0)}
"""The printed results: ≈ 0.54 s, ≈ 26 % of a 2.1 s step."""
