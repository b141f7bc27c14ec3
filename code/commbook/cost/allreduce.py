r"""Closed forms of every all-reduce schedule: ring, butterflies, trees, direct, in-network,
hierarchical and torus.
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..checks import (check_dims, check_link, check_link_params, check_nonneg, check_order, check_p, check_servers,
                      check_size, finite_time, require_pow2)
from .base import _log2_ceil, _log2_floor, closed_form


@closed_form
def allreduce_ring(p, n, alpha, beta):
    """Ring: reduce-scatter + all-gather, 2(p-1)(α + n/(pβ)).

    Eight ranks, 8 MB, α = 1 µs, β = 1 GB/s: 2·7·α + 2·7/8·8 ms.

    >>> round(allreduce_ring(8, 8e6, 1e-6, 1e9) * 1e3, 9)     # ms
    14.014
    """
    return 2 * (p - 1) * (alpha + n / (p * beta))


def _fold(p, n, alpha, beta):
    """Two extra rounds of α + n/β when p is not a power of two (MPICH's fold)."""
    return 0.0 if p & (p - 1) == 0 else 2 * (alpha + n / beta)


@closed_form
def allreduce_rd(p, n, alpha, beta):
    """Recursive doubling: ⌊log2 p⌋(α + n/β), plus the fold for other p.

    >>> round(allreduce_rd(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 3(α + 8 ms)
    24.003
    """
    return _log2_floor(p) * (alpha + n / beta) + _fold(p, n, alpha, beta)


@closed_form
def _rabenseifner(p, n, alpha, beta):
    q = 1 << _log2_floor(p)
    return 2 * _log2_floor(p) * alpha + 2 * (q - 1) / q * n / beta + _fold(p, n, alpha, beta)


def allreduce_rabenseifner(p: int, n: float, alpha: float, beta: float, order: str = "far_first") -> float:
    """Recursive halving + doubling: 2⌊log2 p⌋α + 2(q-1)/q·n/β with q = 2^⌊log2 p⌋, plus the
    fold; on a switch for both ``order`` s (on a ring see :func:`allreduce_rabenseifner_on_ring`).

    >>> round(allreduce_rabenseifner(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 6α + 2·7/8·8 ms
    14.006
    """
    check_order(order)
    return _rabenseifner(p, n, alpha, beta)


def allreduce_rabenseifner_on_ring(p: int, n: float, alpha: float, beta: float,
                                   order: str = "far_first", hop_alpha: float = 1.0) -> float:
    """Rabenseifner on a bidirectional ring of p = 2^L devices in rank order: the exchange
    at distance d takes d hops, α(1 + hop_alpha(d-1)), and puts d messages on the busiest
    directed link (at d = p/2 all go the same way round), so s bytes cost d·s/β.  Per
    phase ``near_first`` costs L·n/(2β), ``far_first`` (p²-1)/(3p)·n/β; both pay
    2(L + hop_alpha(p-1-L))α.

    >>> [round(allreduce_rabenseifner_on_ring(8, 8e6, 1e-6, 1e9, order=o) * 1e3, 9) for o in ("near_first", "far_first")]
    [24.014, 42.014]
    """
    p, n, _ = check_p(p), check_size(n), check_order(order)
    alpha, beta = check_link_params(alpha, beta)
    require_pow2(p, "Rabenseifner on a ring")
    hop_alpha = check_nonneg(hop_alpha, "hop_alpha")
    L = _log2_floor(p)
    latency = 2 * (L * alpha + hop_alpha * alpha * (p - 1 - L))
    per_phase = L * n / 2 if order == "near_first" else (p * p - 1) / (3 * p) * n
    return finite_time(latency + 2 * per_phase / beta, "the time of (p, n, alpha, beta, hop_alpha)") if p > 1 else 0.0


@closed_form
def allreduce_tree(p, n, alpha, beta):
    """Binomial reduce + binomial broadcast: 2⌈log2 p⌉(α + n/β).

    >>> round(allreduce_tree(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 6(α + 8 ms)
    48.006
    """
    return 2 * _log2_ceil(p) * (alpha + n / beta)


@closed_form
def allreduce_double_binomial(p, n, alpha, beta):
    """Two binomial trees at once, half the buffer each, unpipelined: 2⌈log2 p⌉(α + n/(2β)).

    >>> round(allreduce_double_binomial(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 6(α + 4 ms)
    24.006
    """
    return 2 * _log2_ceil(p) * (alpha + n / (2 * beta))


@closed_form
def allreduce_naive(p, n, alpha, beta):
    """Star: everyone to rank 0 and back, 2(α + (p-1)n/β).

    >>> round(allreduce_naive(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 2(α + 7·8 ms)
    112.002
    """
    return 2 * (alpha + (p - 1) * n / beta)


@closed_form
def _parameter_server(p, n, alpha, beta, k):
    return 2 * (alpha + (p - 1) * n / (k * beta))


def allreduce_parameter_server(p: int, n: float, alpha: float, beta: float, servers: int = 1) -> float:
    """Parameter server on K = ``servers`` of the p ranks: each rank pushes shard k (n/K)
    to server k and pulls it back reduced: 2(α + (p-1)n/(Kβ)), a server's port being the
    busiest.  K = 1 is the naive star, K = p the two-shot all-reduce.

    >>> round(allreduce_parameter_server(8, 8e6, 1e-6, 1e9, servers=2) * 1e3, 9)   # ms: 2(α + 7·8/2 ms)
    56.002
    >>> allreduce_parameter_server(8, 8e6, 1e-6, 1e9, servers=8) == allreduce_two_shot(8, 8e6, 1e-6, 1e9)
    True
    """
    k = check_servers(servers, check_p(p))
    return _parameter_server(p, n, alpha, beta, k)


@closed_form
def allreduce_innet(p, n, alpha, beta):
    """In-network reduction in the switch: α + n/β.

    >>> round(allreduce_innet(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: α + 8 ms
    8.001
    """
    return alpha + n / beta


@closed_form
def allreduce_one_shot(p, n, alpha, beta):
    """One-shot: every rank reads every buffer in one round, α + (p-1)n/β.

    >>> round(allreduce_one_shot(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: α + 7·8 ms
    56.001
    """
    return alpha + (p - 1) * n / beta


@closed_form
def allreduce_two_shot(p, n, alpha, beta):
    """Two-shot: direct reduce-scatter + direct all-gather, 2α + 2(p-1)/p·n/β.

    >>> round(allreduce_two_shot(8, 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 2α + 2·7/8·8 ms
    14.002
    """
    return 2 * alpha + 2 * (p - 1) / p * n / beta


_HIER = "the time of (nodes, gpus_per_node, n, intra, inter)"


def allreduce_hierarchical(nodes: int, gpus_per_node: int, n: float, intra, inter,
                           inter_form: Callable = allreduce_ring) -> float:
    """Hierarchical all-reduce on a two-level cluster: ring reduce-scatter in the node,
    ``inter_form`` across nodes on each rail over n/G, ring all-gather in the node.
    ``intra``/``inter`` are :class:`~commbook.hardware.Link` objects.

    On one node it is the ring all-reduce on NVLink:

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> allreduce_hierarchical(1, 8, 8e6, NVLINK4, IB_NDR) == allreduce_ring(8, 8e6, NVLINK4.alpha, NVLINK4.beta)
    True
    """
    N, G = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node")
    n, intra, inter = check_size(n), check_link(intra, "intra"), check_link(inter, "inter")
    inner = 2 * (G - 1) * (intra.alpha + n / (G * intra.beta))
    return finite_time(inner + inter_form(N, n / G, inter.alpha, inter.beta), _HIER)


def allreduce_leader(nodes: int, gpus_per_node: int, n: float, intra, inter,
                     inter_form: Callable = allreduce_ring) -> float:
    """Leader-based hierarchical all-reduce (only GPU 0 of a node crosses nodes): ring
    reduce-scatter + one-round gather to the leader, ``inter_form`` among the N leaders
    on the full n, one-round scatter + ring all-gather: 2(G-1)(α + n/(Gβ)) +
    2(α + (G-1)n/(Gβ)) on NVLink plus inter_form(N, n) (one node: a ring all-reduce).

    Two nodes of 8 GPUs: the leaders cross with the full 8 MB, the hierarchy with 1 MB per rail.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> [round(f(2, 8, 8e6, NVLINK4, IB_NDR) * 1e6, 3) for f in (allreduce_leader, allreduce_hierarchical)]   # µs
    [264.222, 89.111]
    """
    N, G = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node")
    n, intra, inter = check_size(n), check_link(intra, "intra"), check_link(inter, "inter")
    a, b = intra.alpha, intra.beta
    leader = 2 * (a + (G - 1) * n / (G * b)) if N > 1 and G > 1 else 0.0
    return finite_time(2 * (G - 1) * (a + n / (G * b)) + leader + inter_form(N, n, inter.alpha, inter.beta), _HIER)


def allreduce_torus_rings(dims: Sequence[int], n: float, alpha: float, beta: float) -> float:
    """A ring all-reduce of the full buffer along each dimension in turn (Fig. 10's card):
    Σ over dimensions of 2(a-1)(α + n/(aβ)); each device sends 2·Σ(a-1)/a·n bytes.

    >>> round(allreduce_torus_rings((4, 4), 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 2 dims x 6(α + 2 ms)
    24.012
    """
    n, dims = check_size(n), check_dims(dims)
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(sum(2 * (a - 1) * (alpha + n / (a * beta)) for a in dims), "the time of (dims, n, alpha, beta)")


def allreduce_torus(dims: Sequence[int], n: float, alpha: float, beta: float) -> float:
    """All-reduce by dimension on a torus: ring reduce-scatter along each dimension in
    turn (on a shrinking share), then ring all-gathers in reverse order.

    >>> round(allreduce_torus((4, 4), 8e6, 1e-6, 1e9) * 1e3, 9)  # ms: 6(α + 2 ms) + 6(α + 0.5 ms)
    15.012
    """
    n, dims = check_size(n), check_dims(dims)
    alpha, beta = check_link_params(alpha, beta)
    total, share = 0.0, n
    for a in dims:
        total += 2 * (a - 1) * (alpha + share / (a * beta))
        share /= a
    return finite_time(total, "the time of (dims, n, alpha, beta)")
