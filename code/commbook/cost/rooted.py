r"""Closed forms of the rooted collectives (broadcast, reduce, scatter, gather) and of
reduce-scatter, all-gather and the direct all-to-all.
"""
from __future__ import annotations

from ..checks import check_count, require_pow2
from .base import _log2_ceil, _log2_floor, closed_form


@closed_form
def broadcast_binomial(p, n, alpha, beta):
    """Binomial broadcast: ⌈log2 p⌉(α + n/β).

    Eight ranks, 8 MB, α = 1 µs, β = 1 GB/s: 3(α + 8 ms).

    >>> round(broadcast_binomial(8, 8e6, 1e-6, 1e9) * 1e3, 9)     # ms
    24.003
    """
    return _log2_ceil(p) * (alpha + n / beta)


@closed_form
def broadcast_flat(p, n, alpha, beta):
    """Flat broadcast: the root's port serializes, α + (p-1)n/β.

    >>> round(broadcast_flat(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: α + 7·8 ms
    56.001
    """
    return alpha + (p - 1) * n / beta


@closed_form
def broadcast_chain(p, n, alpha, beta, chunks: int = 1):
    """Pipelined chain in k = ``chunks`` pieces: (p-2+k)(α + n/(kβ)).

    >>> round(broadcast_chain(8, 8e6, 1e-6, 1e9, chunks=8) * 1e3, 9)    # ms: (6 + 8)(α + 1 ms)
    14.014
    """
    k = check_count(chunks, "chunks")
    return (p - 2 + k) * (alpha + n / (k * beta))


@closed_form
def broadcast_scatter_allgather(p, n, alpha, beta):
    """Van de Geijn: one-round flat scatter + ring all-gather, pα + 2(p-1)/p·n/β.

    >>> round(broadcast_scatter_allgather(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 8α + 2·7/8·8 ms
    14.008
    """
    return p * alpha + 2 * (p - 1) / p * n / beta


reduce_binomial = broadcast_binomial
"""Binomial reduce: the mirror image of the binomial broadcast, ⌈log2 p⌉(α + n/β)."""
reduce_flat = broadcast_flat
"""Flat reduce: the root's receive port serializes, α + (p-1)n/β."""


# ----------------------------------------------------------------------------- RS / AG / A2A
@closed_form
def reduce_scatter_ring(p, n, alpha, beta):
    """Ring reduce-scatter of an n-byte buffer: (p-1)(α + n/(pβ)).

    >>> round(reduce_scatter_ring(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 7(α + 1 ms)
    7.007
    """
    return (p - 1) * (alpha + n / (p * beta))


@closed_form
def reduce_scatter_rh(p, n, alpha, beta):
    """Recursive halving (p a power of two): log2 p·α + (p-1)/p·n/β.

    >>> round(reduce_scatter_rh(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 3α + 7/8·8 ms
    7.003
    """
    require_pow2(p, "recursive halving")
    return _log2_floor(p) * alpha + (p - 1) / p * n / beta


all_gather_ring = reduce_scatter_ring
"""Ring all-gather to an n-byte output: (p-1)(α + n/(pβ)) (mirror of the ring reduce-scatter)."""


@closed_form
def all_gather_rd(p, n, alpha, beta):
    """Recursive doubling (p a power of two): log2 p·α + (p-1)/p·n/β.

    >>> round(all_gather_rd(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 3α + 7/8·8 ms
    7.003
    """
    require_pow2(p, "recursive doubling")
    return _log2_floor(p) * alpha + (p - 1) / p * n / beta


all_to_all_direct = reduce_scatter_ring
"""Direct all-to-all on a non-blocking switch: p-1 shift rounds of α + n/(pβ)."""


@closed_form
def scatter_flat(p, n, alpha, beta):
    """Flat scatter of the root's n bytes in one round: α + (p-1)/p·n/β.

    >>> round(scatter_flat(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: α + 7/8·8 ms
    7.001
    """
    return alpha + (p - 1) / p * n / beta


gather_flat = scatter_flat
"""Flat gather of n bytes in total into the root (the mirror of the flat scatter)."""
