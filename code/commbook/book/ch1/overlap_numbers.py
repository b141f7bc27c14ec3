r"""Chapter §1.8, overlapping communication with computation: the numbers and tables of
``chapters/{zh,en}/ch1/08-overlap.md``.  The figures are in :mod:`.overlap_figures`.

* the residual that overlap hides (:func:`residual_example`), ring against binomial tree
  with and without overlap (:func:`ring_vs_tree`);
* PyTorch's buckets, their timelines and the bucket-cap sweep: :mod:`.overlap_buckets`;
* the limits: 2o per collective (:func:`overhead_example`), L equal layers
  (:func:`hidden_fractions`), gradients still in flight (:func:`in_flight`);
* Napkin math 1.8: :mod:`.overlap_napkin`.

Each builder returns one typed result whose fields carry their units (``_s``, ``_bytes``,
``_Bps``, ``_frac``, ``_mib`` (a binary size as text), ``_times`` (a plain multiple, written
without ×); counts are ints): the page glues it with :func:`commbook.book.glue.glue_fields`
and the tables of :mod:`.overlap_tables` read it.

Every number is computed from the parameters below; the chapter's printed values are kept
apart (``CHAPTER_*``) so that the page and the tests can set the two side by side.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...collectives import crossover, t_formula
from ...cost import LogP
from ...hardware import IB_NDR
from ...overlap import (Timeline, hidden_fraction_equal_layers, layerwise_timeline, step_time_no_overlap,
                        transfer_beside_compute)
from ...units import MB, ms, us
from .perf_numbers import NM13

__all__ = ["EXAMPLE_LINK", "RESIDUAL", "Residual", "residual_example", "RING_TREE", "RingTree", "ring_vs_tree",
           "OVERHEAD", "Overhead",
           "overhead_example", "HIDDEN_LAYERS", "CHAPTER_HIDDEN", "hidden_fractions", "in_flight"]


EXAMPLE_LINK = IB_NDR
"""The link of the page's own examples (the residual, ring against tree, the bucket sweep):
InfiniBand NDR with α = 5 µs, β = 50 GB/s, on 64 GPUs."""

# ============================================================================ the residual
RESIDUAL = {"bytes": 500 * MB, "gpus": 64, "compute": 30 * ms}
"""A 500 MB slice of gradients all-reduced by a ring on 64 GPUs while 30 ms of backward
remain; o is Napkin math 1.3's 50 µs."""


@dataclass(frozen=True)
class Residual:
    """A ring all-reduce beside the backward that remains, and sent after it."""
    gpus: int
    n_bytes: float
    alpha_s: float
    beta_Bps: float
    wire_s: float
    compute_s: float
    o_s: float
    block_s: float            # compute + 2o + wire
    over_s: float             # 2o + max(compute, wire)
    hidden_s: float


def residual_example() -> Residual:
    """The ring's wire time for :data:`RESIDUAL` on :data:`EXAMPLE_LINK`, and the step with
    the transfer beside the compute (2o + max(compute, wire)) and blocking (2o + both).

    >>> residual_example().gpus
    64
    """
    c, link = RESIDUAL, EXAMPLE_LINK
    wire = t_formula("ring", c["gpus"], c["bytes"], link.alpha, link.beta)
    lp = LogP(L=wire, o=NM13["o"])
    over = transfer_beside_compute(c["compute"], lp).step_time
    block = c["compute"] + 2 * lp.o + wire
    return Residual(gpus=c["gpus"], n_bytes=c["bytes"], alpha_s=link.alpha, beta_Bps=link.beta, wire_s=wire,
                    compute_s=c["compute"], o_s=lp.o, block_s=block, over_s=over, hidden_s=block - over)


# ============================================================================ ring against tree
RING_TREE = {"layers": 32, "bytes": 1 * MB, "backward": 1 * ms, "gpus": 64}
"""32 layers of 1 MB of gradients each, 1 ms of backward per layer, 64 GPUs."""


@dataclass(frozen=True)
class RingTree:
    """Ring against binomial tree per layer (``ring_s``, ``tree_s``), the step blocking and
    with layer-wise overlap, the ring's penalty in both, and the check-yourself case with
    half the backward per layer (``q_``)."""
    layers: int
    n_bytes: float
    backward_s: float
    gpus: int
    cross_bytes: float
    ring_s: float
    tree_s: float
    ring_block_s: float
    tree_block_s: float
    ring_over_s: float
    tree_over_s: float
    pen_block_s: float
    pen_over_s: float
    shrink_times: float
    q_b_s: float
    q_ring_s: float
    q_tree_s: float
    q_pen_s: float


def ring_vs_tree() -> RingTree:
    """Ring and binomial tree all-reduce per layer (:data:`RING_TREE`, :data:`EXAMPLE_LINK`),
    the step without and with layer-wise overlap, and the ring's penalty in both.

    >>> ring_vs_tree().layers
    32
    """
    c, link = RING_TREE, EXAMPLE_LINK
    L, b, qb = c["layers"], c["backward"], c["backward"] / 2
    a = {x: t_formula(x, c["gpus"], c["bytes"], link.alpha, link.beta) for x in ("ring", "tree")}
    block = {x: step_time_no_overlap([b] * L, [a[x]] * L) for x in a}
    over = {x: layerwise_timeline([b] * L, [a[x]] * L).step_time for x in a}
    q = {x: layerwise_timeline([qb] * L, [a[x]] * L).step_time for x in a}
    pb, po = block["ring"] - block["tree"], over["ring"] - over["tree"]
    return RingTree(layers=L, n_bytes=c["bytes"], backward_s=b, gpus=c["gpus"],
                    cross_bytes=crossover("ring", "tree", c["gpus"], link.alpha, link.beta), ring_s=a["ring"],
                    tree_s=a["tree"], ring_block_s=block["ring"], tree_block_s=block["tree"], ring_over_s=over["ring"],
                    tree_over_s=over["tree"], pen_block_s=pb, pen_over_s=po, shrink_times=pb / po, q_b_s=qb,
                    q_ring_s=q["ring"], q_tree_s=q["tree"], q_pen_s=q["ring"] - q["tree"])


# ============================================================================ limits
OVERHEAD = {"layers": 100, "backward": 30 * us, "wire": 20 * us}
"""100 short layers, 30 µs of backward and a 20 µs all-reduce each; o is Napkin math 1.3's 50 µs."""


@dataclass(frozen=True)
class Overhead:
    """Each layer's all-reduce costs the compute stream 2o: the step with and without overlap."""
    layers: int
    b_s: float                # backward per layer
    wire_s: float             # all-reduce per layer
    o_s: float
    compute_s: float
    overhead_s: float         # 2o per layer, in all
    wire_total_s: float
    over_s: float
    block_s: float
    saved_s: float
    share_frac: float         # the overheads' share of the overlapped step


def overhead_example() -> Overhead:
    """:data:`OVERHEAD` with and without overlap, next to the compute alone.

    >>> overhead_example().layers
    100
    """
    c, o = OVERHEAD, NM13["o"]
    b, a = [c["backward"]] * c["layers"], [c["wire"]] * c["layers"]
    over, block = layerwise_timeline(b, a, overhead=o).step_time, step_time_no_overlap(b, a, overhead=o)
    return Overhead(layers=c["layers"], b_s=c["backward"], wire_s=c["wire"], o_s=o, compute_s=sum(b),
                    overhead_s=2 * o * c["layers"], wire_total_s=sum(a), over_s=over, block_s=block,
                    saved_s=block - over, share_frac=2 * o * c["layers"] / over)


HIDDEN_LAYERS = (2, 3, 10, 20, 32)
CHAPTER_HIDDEN = {"shallow": ((2, 3), (0.50, 0.60)), "deep": ((10, 20), (0.90, 0.95))}
"""The chapter's shares: 50–60 % for 2–3 layers, 90–95 % for "dozens of layers" (taken as 10–20)."""


def hidden_fractions(layers=HIDDEN_LAYERS) -> dict[int, float]:
    """Hidden share of the communication for L equal layers (all-reduce = backward)."""
    return {L: hidden_fraction_equal_layers(L) for L in layers}


def in_flight(tl: Timeline, backward_end: float) -> int:
    """All-reduces not yet finished when the backward pass ends."""
    return sum(1 for b in tl.blocks if b.kind == "allreduce" and b.end > backward_end + 1e-12)
