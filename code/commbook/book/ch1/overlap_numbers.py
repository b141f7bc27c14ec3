r"""Chapter §1.8, overlapping communication with computation: the givens of
``chapters/{zh,en}/ch1/08-overlap.md``.  The figures are in :mod:`.overlap_figures`.

* the residual that overlap hides (:data:`RESIDUAL`), ring against binomial tree with and
  without overlap (:data:`RING_TREE`), 2o per collective (:data:`OVERHEAD`): the page's
  cells compute them with :mod:`commbook.overlap` and :mod:`commbook.collectives`, and the
  tables of :mod:`.overlap_tables` take what they computed;
* PyTorch's buckets, their timelines and the bucket-cap sweep: :mod:`.overlap_buckets`;
* the limits: L equal layers (:func:`hidden_fractions`), gradients still in flight
  (:func:`in_flight`);
* Napkin math 1.8: :mod:`.overlap_napkin`.

Every number is computed from the parameters below; the chapter's printed values are kept
apart (``CHAPTER_*``) so that the page and the tests can set the two side by side.
"""
from __future__ import annotations

from ...hardware import IB_NDR
from ...overlap import Timeline, hidden_fraction_equal_layers
from ...units import MB, ms, us

__all__ = ["EXAMPLE_LINK", "RESIDUAL", "RING_TREE", "OVERHEAD", "HIDDEN_LAYERS", "CHAPTER_HIDDEN", "hidden_fractions",
           "in_flight"]


EXAMPLE_LINK = IB_NDR
"""The link of the page's own examples (the residual, ring against tree, the bucket sweep):
InfiniBand NDR with α = 5 µs, β = 50 GB/s, on 64 GPUs."""

# ============================================================================ the residual
RESIDUAL = {"bytes": 500 * MB, "gpus": 64, "compute": 30 * ms}
"""A 500 MB slice of gradients all-reduced by a ring on 64 GPUs while 30 ms of backward
remain; o is Napkin math 1.3's 50 µs."""


# ============================================================================ ring against tree
RING_TREE = {"layers": 32, "bytes": 1 * MB, "backward": 1 * ms, "gpus": 64}
"""32 layers of 1 MB of gradients each, 1 ms of backward per layer, 64 GPUs."""


# ============================================================================ limits
OVERHEAD = {"layers": 100, "backward": 30 * us, "wire": 20 * us}
"""100 short layers, 30 µs of backward and a 20 µs all-reduce each; o is Napkin math 1.3's 50 µs."""


HIDDEN_LAYERS = (2, 3, 10, 20, 32)
CHAPTER_HIDDEN = {"shallow": ((2, 3), (0.50, 0.60)), "deep": ((10, 20), (0.90, 0.95))}
"""The chapter's shares: 50–60 % for 2–3 layers, 90–95 % for "dozens of layers" (taken as 10–20)."""


def hidden_fractions(layers=HIDDEN_LAYERS) -> dict[int, float]:
    """Hidden share of the communication for L equal layers (all-reduce = backward)."""
    return {L: hidden_fraction_equal_layers(L) for L in layers}


def in_flight(tl: Timeline, backward_end: float) -> int:
    """All-reduces not yet finished when the backward pass ends."""
    return sum(1 for b in tl.blocks if b.kind == "allreduce" and b.end > backward_end + 1e-12)
