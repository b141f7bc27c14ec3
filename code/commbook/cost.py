r"""Closed-form times of the α–β model: point to point, LogP, every collective algorithm,
lower bounds, crossovers and optimal chunk counts.

Conventions: ``p`` devices, ``n`` bytes, ``alpha`` seconds per message, ``beta`` bytes per
second in one direction.  For all-reduce, broadcast, reduce and reduce-scatter ``n`` is
the buffer each device holds; for all-gather it is the gathered output (each device
contributes ``n/p``); for all-to-all it is what each device holds before the exchange.

Every ``allreduce_*``, ``broadcast_*``, … function here is the exact time of the schedule
of the same name in :mod:`commbook.collectives` under the timing model of
:mod:`commbook.comm_sim` (synchronous rounds, α once per round, ports serialize their
bytes); :mod:`commbook.collectives.registry` pairs each schedule with its closed form.
Each takes ``(p, n, alpha, beta)``, checks them, and costs nothing for ``p == 1``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

from .checks import (BUTTERFLY_ORDERS, check_choice, check_count, check_dims, check_flag, check_link,  # noqa: F401
                     check_link_params, check_nonneg, check_order, check_p, check_servers, check_size, finite_time,
                     require_pow2)


def _log2_floor(p: int) -> int:
    return p.bit_length() - 1


def _log2_ceil(p: int) -> int:
    return (p - 1).bit_length()


def closed_form(f: Callable) -> Callable:
    """Decorate a closed form ``f(p, n, alpha, beta, ...)``: validate the arguments (also
    the extra ones, which ``f`` checks, at p = 1) and return 0 for a single device."""
    @functools.wraps(f)
    def checked(p: int, n: float, alpha: float, beta: float, *args, **kwargs) -> float:
        p, n = check_p(p), check_size(n)
        alpha, beta = check_link_params(alpha, beta)
        t = f(p, n, alpha, beta, *args, **kwargs)
        return 0.0 if p == 1 else finite_time(t)
    return checked


# ----------------------------------------------------------------------------- α–β
def p2p_time(n: float, alpha: float, beta: float) -> float:
    """Point-to-point time of the α–β (Hockney) model, :math:`T(n) = \\alpha + n/\\beta`."""
    n = check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(alpha + n / beta)


def effective_bandwidth(n: float, alpha: float, beta: float) -> float:
    """Bandwidth actually obtained, :math:`n / T(n)` in bytes/s (0 for an empty message)."""
    t, n, beta = p2p_time(n, alpha, beta), check_size(n), check_link_params(alpha, beta)[1]
    return n / t if t > 0 else (beta if n > 0 else 0.0)


def half_bandwidth_point(alpha: float, beta: float) -> float:
    """:math:`n_{1/2} = \\alpha\\beta`: the size at which a link delivers exactly β/2."""
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(alpha * beta, "alpha * beta")


@dataclass(frozen=True)
class LogP:
    """LogP parameters (Culler et al. 1993): latency L, overhead o, gap g (seconds).

    ``L`` is time on the wire (can overlap with compute); ``o`` is processor time to
    start or finish a transfer (cannot); ``g`` is the minimum time between injections.
    """

    L: float
    o: float
    g: float = 0.0

    def __post_init__(self) -> None:
        for name in ("L", "o", "g"):
            object.__setattr__(self, name, check_nonneg(getattr(self, name), name, "a LogP time (seconds)"))

    def p2p(self, messages: int = 1) -> float:
        """Time until the last of ``messages`` back-to-back small messages is received."""
        m = check_p(messages, "messages")
        return self.L + 2 * self.o + (m - 1) * max(self.g, self.o)

    def overlapped(self, t_compute: float) -> float:
        """Step time when a transfer runs beside ``t_compute`` of work: 2o + max(compute, L).

        The wire latency hides behind compute; the two overheads cannot.
        """
        t_compute = check_nonneg(t_compute, "t_compute", "a time (seconds)")
        return 2 * self.o + max(t_compute, self.L)


# ----------------------------------------------------------------------------- all-reduce
@closed_form
def allreduce_ring(p, n, alpha, beta):
    """Ring: reduce-scatter + all-gather, 2(p-1)(α + n/(pβ))."""
    return 2 * (p - 1) * (alpha + n / (p * beta))


def _fold(p, n, alpha, beta):
    """Two extra rounds of α + n/β when p is not a power of two (MPICH's fold)."""
    return 0.0 if p & (p - 1) == 0 else 2 * (alpha + n / beta)


@closed_form
def allreduce_rd(p, n, alpha, beta):
    """Recursive doubling: ⌊log2 p⌋(α + n/β), plus the fold for other p."""
    return _log2_floor(p) * (alpha + n / beta) + _fold(p, n, alpha, beta)


@closed_form
def _rabenseifner(p, n, alpha, beta):
    q = 1 << _log2_floor(p)
    return 2 * _log2_floor(p) * alpha + 2 * (q - 1) / q * n / beta + _fold(p, n, alpha, beta)


def allreduce_rabenseifner(p: int, n: float, alpha: float, beta: float, order: str = "far_first") -> float:
    """Recursive halving + doubling: 2⌊log2 p⌋α + 2(q-1)/q·n/β with q = 2^⌊log2 p⌋, plus the
    fold; on a switch for both ``order`` s (on a ring see :func:`allreduce_rabenseifner_on_ring`)."""
    check_order(order)
    return _rabenseifner(p, n, alpha, beta)


def allreduce_rabenseifner_on_ring(p: int, n: float, alpha: float, beta: float,
                                   order: str = "far_first", hop_alpha: float = 1.0) -> float:
    """Rabenseifner on a bidirectional ring of p = 2^L devices in rank order: the exchange
    at distance d takes d hops, α(1 + hop_alpha(d-1)), and puts d messages on the busiest
    directed link (at d = p/2 all go the same way round), so s bytes cost d·s/β.  Per
    phase ``near_first`` costs L·n/(2β), ``far_first`` (p²-1)/(3p)·n/β; both pay
    2(L + hop_alpha(p-1-L))α."""
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
    """Binomial reduce + binomial broadcast: 2⌈log2 p⌉(α + n/β)."""
    return 2 * _log2_ceil(p) * (alpha + n / beta)


@closed_form
def allreduce_double_binomial(p, n, alpha, beta):
    """Two binomial trees at once, half the buffer each, unpipelined: 2⌈log2 p⌉(α + n/(2β))."""
    return 2 * _log2_ceil(p) * (alpha + n / (2 * beta))


@closed_form
def allreduce_naive(p, n, alpha, beta):
    """Star: everyone to rank 0 and back, 2(α + (p-1)n/β)."""
    return 2 * (alpha + (p - 1) * n / beta)


@closed_form
def _parameter_server(p, n, alpha, beta, k):
    return 2 * (alpha + (p - 1) * n / (k * beta))


def allreduce_parameter_server(p: int, n: float, alpha: float, beta: float, servers: int = 1) -> float:
    """Parameter server on K = ``servers`` of the p ranks: each rank pushes shard k (n/K)
    to server k and pulls it back reduced: 2(α + (p-1)n/(Kβ)), a server's port being the
    busiest.  K = 1 is the naive star, K = p the two-shot all-reduce."""
    k = check_servers(servers, check_p(p))
    return _parameter_server(p, n, alpha, beta, k)


@closed_form
def allreduce_innet(p, n, alpha, beta):
    """In-network reduction in the switch: α + n/β."""
    return alpha + n / beta


@closed_form
def allreduce_one_shot(p, n, alpha, beta):
    """One-shot: every rank reads every buffer in one round, α + (p-1)n/β."""
    return alpha + (p - 1) * n / beta


@closed_form
def allreduce_two_shot(p, n, alpha, beta):
    """Two-shot: direct reduce-scatter + direct all-gather, 2α + 2(p-1)/p·n/β."""
    return 2 * alpha + 2 * (p - 1) / p * n / beta


_HIER = "the time of (nodes, gpus_per_node, n, intra, inter)"


def allreduce_hierarchical(nodes: int, gpus_per_node: int, n: float, intra, inter,
                           inter_form: Callable = allreduce_ring) -> float:
    """Hierarchical all-reduce on a two-level cluster: ring reduce-scatter in the node,
    ``inter_form`` across nodes on each rail over n/G, ring all-gather in the node.
    ``intra``/``inter`` are :class:`~commbook.hardware.Link` objects."""
    N, G = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node")
    n, intra, inter = check_size(n), check_link(intra, "intra"), check_link(inter, "inter")
    inner = 2 * (G - 1) * (intra.alpha + n / (G * intra.beta))
    return finite_time(inner + inter_form(N, n / G, inter.alpha, inter.beta), _HIER)


def allreduce_leader(nodes: int, gpus_per_node: int, n: float, intra, inter,
                     inter_form: Callable = allreduce_ring) -> float:
    """Leader-based hierarchical all-reduce (only GPU 0 of a node crosses nodes): ring
    reduce-scatter + one-round gather to the leader, ``inter_form`` among the N leaders
    on the full n, one-round scatter + ring all-gather: 2(G-1)(α + n/(Gβ)) +
    2(α + (G-1)n/(Gβ)) on NVLink plus inter_form(N, n) (one node: a ring all-reduce)."""
    N, G = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node")
    n, intra, inter = check_size(n), check_link(intra, "intra"), check_link(inter, "inter")
    a, b = intra.alpha, intra.beta
    leader = 2 * (a + (G - 1) * n / (G * b)) if N > 1 and G > 1 else 0.0
    return finite_time(2 * (G - 1) * (a + n / (G * b)) + leader + inter_form(N, n, inter.alpha, inter.beta), _HIER)


def allreduce_torus_rings(dims: Sequence[int], n: float, alpha: float, beta: float) -> float:
    """A ring all-reduce of the full buffer along each dimension in turn (Fig. 10's card):
    Σ over dimensions of 2(a-1)(α + n/(aβ)); each device sends 2·Σ(a-1)/a·n bytes."""
    n, dims = check_size(n), check_dims(dims)
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(sum(2 * (a - 1) * (alpha + n / (a * beta)) for a in dims), "the time of (dims, n, alpha, beta)")


def allreduce_torus(dims: Sequence[int], n: float, alpha: float, beta: float) -> float:
    """All-reduce by dimension on a torus: ring reduce-scatter along each dimension in
    turn (on a shrinking share), then ring all-gathers in reverse order."""
    n, dims = check_size(n), check_dims(dims)
    alpha, beta = check_link_params(alpha, beta)
    total, share = 0.0, n
    for a in dims:
        total += 2 * (a - 1) * (alpha + share / (a * beta))
        share /= a
    return finite_time(total, "the time of (dims, n, alpha, beta)")


# ----------------------------------------------------------------------------- rooted
@closed_form
def broadcast_binomial(p, n, alpha, beta):
    """Binomial broadcast: ⌈log2 p⌉(α + n/β)."""
    return _log2_ceil(p) * (alpha + n / beta)


@closed_form
def broadcast_flat(p, n, alpha, beta):
    """Flat broadcast: the root's port serializes, α + (p-1)n/β."""
    return alpha + (p - 1) * n / beta


@closed_form
def broadcast_chain(p, n, alpha, beta, chunks: int = 1):
    """Pipelined chain in k = ``chunks`` pieces: (p-2+k)(α + n/(kβ))."""
    k = check_count(chunks, "chunks")
    return (p - 2 + k) * (alpha + n / (k * beta))


@closed_form
def broadcast_scatter_allgather(p, n, alpha, beta):
    """Van de Geijn: one-round flat scatter + ring all-gather, pα + 2(p-1)/p·n/β."""
    return p * alpha + 2 * (p - 1) / p * n / beta


reduce_binomial = broadcast_binomial
"""Binomial reduce: the mirror image of the binomial broadcast, ⌈log2 p⌉(α + n/β)."""
reduce_flat = broadcast_flat
"""Flat reduce: the root's receive port serializes, α + (p-1)n/β."""


# ----------------------------------------------------------------------------- RS / AG / A2A
@closed_form
def reduce_scatter_ring(p, n, alpha, beta):
    """Ring reduce-scatter of an n-byte buffer: (p-1)(α + n/(pβ))."""
    return (p - 1) * (alpha + n / (p * beta))


@closed_form
def reduce_scatter_rh(p, n, alpha, beta):
    """Recursive halving (p a power of two): log2 p·α + (p-1)/p·n/β."""
    require_pow2(p, "recursive halving")
    return _log2_floor(p) * alpha + (p - 1) / p * n / beta


all_gather_ring = reduce_scatter_ring
"""Ring all-gather to an n-byte output: (p-1)(α + n/(pβ)) (mirror of the ring reduce-scatter)."""


@closed_form
def all_gather_rd(p, n, alpha, beta):
    """Recursive doubling (p a power of two): log2 p·α + (p-1)/p·n/β."""
    require_pow2(p, "recursive doubling")
    return _log2_floor(p) * alpha + (p - 1) / p * n / beta


all_to_all_direct = reduce_scatter_ring
"""Direct all-to-all on a non-blocking switch: p-1 shift rounds of α + n/(pβ)."""


@closed_form
def scatter_flat(p, n, alpha, beta):
    """Flat scatter of the root's n bytes in one round: α + (p-1)/p·n/β."""
    return alpha + (p - 1) / p * n / beta


gather_flat = scatter_flat
"""Flat gather of n bytes in total into the root (the mirror of the flat scatter)."""


# ----------------------------------------------------------------------------- bounds
LOWER_BOUND_FACTORS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0, "all_to_all": 1.0}


def lower_bound_bytes(op: str, p: int, n: float) -> float:
    """Bytes each device must send at least: all-reduce 2(p-1)/p·n (Patarasuk & Yuan);
    all-gather, reduce-scatter and all-to-all (p-1)/p·n."""
    check_choice(op, "op", sorted(LOWER_BOUND_FACTORS))
    p, n = check_p(p), check_size(n)
    return LOWER_BOUND_FACTORS[op] * (p - 1) / p * n


def all_to_all_bounds(p: int, n: float, beta_port: float, bisection_bw: float) -> tuple[float, float]:
    """The two all-to-all lower bounds in seconds: (egress, bisection).

    Egress: each device sends (p-1)/p·n through its port of ``beta_port``.
    Bisection: p·n/4 bytes cross the worst cut in each direction, at ``bisection_bw``.
    The binding bound is the larger one.
    """
    p, n = check_p(p), check_size(n)
    beta_port = check_link_params(0.0, beta_port, beta_name="beta_port")[1]
    bisection_bw = check_link_params(0.0, bisection_bw, beta_name="bisection_bw")[1]
    return (finite_time((p - 1) / p * n / beta_port, "the egress bound of (p, n, beta_port)"),
            finite_time(p * n / 4 / bisection_bw, "the bisection bound of (p, n, bisection_bw)"))


# ----------------------------------------------------------------------------- crossovers
_XO = "the crossover of (p, alpha, beta)"


def crossover_rd_ring(p: int, alpha: float, beta: float) -> float:
    """Size where recursive doubling and ring all-reduce take equal time (p a power of two):
    n× = [2(p-1) - log2 p]·αβ / [log2 p - 2(p-1)/p]."""
    p = check_p(p)
    alpha, beta = check_link_params(alpha, beta)
    require_pow2(p, "the recursive-doubling crossover")
    if p < 4:
        raise ValueError(f"ring and recursive doubling coincide for p < 4, got p={p}")
    L = _log2_floor(p)
    return finite_time((2 * (p - 1) - L) * alpha * beta / (L - 2 * (p - 1) / p), _XO)


def crossover_tree_ring(p: int, alpha: float, beta: float, exact: bool = True) -> float:
    """Size where binomial-tree and ring all-reduce take equal time.

    ``exact=True`` solves 2⌈log2 p⌉(α + n/β) = 2(p-1)α + 2(p-1)/p·n/β; ``exact=False``
    is the chapter's large-p estimate p·α·β / log2 p.
    """
    p = check_p(p)
    alpha, beta = check_link_params(alpha, beta)
    check_flag(exact, "exact")
    if p < 3:
        raise ValueError(f"ring and tree coincide for p < 3, got p={p}")
    if not exact:
        return finite_time(p * alpha * beta / math.log2(p), _XO)
    L = _log2_ceil(p)
    return finite_time((2 * (p - 1) - 2 * L) * alpha * beta / (2 * L - 2 * (p - 1) / p), _XO)


def chain_broadcast_optimum(p: int, n: float, alpha: float, beta: float) -> tuple[float, float]:
    """Optimal chunk count and time of the pipelined chain broadcast.

    Minimizing (p-2+k)(α + n/(kβ)) over real k gives k* = sqrt((p-2)n/(αβ)) and
    T* = (sqrt((p-2)α) + sqrt(n/β))**2.  Returns ``(k_star, t_star)``.
    """
    p, n = check_p(p), check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    if p < 3 or alpha == 0:
        raise ValueError("the chain optimum needs p >= 3 and alpha > 0")
    k = math.sqrt((p - 2) * n / (alpha * beta))
    t = (math.sqrt((p - 2) * alpha) + math.sqrt(n / beta)) ** 2
    return finite_time(k, "the optimal chunk count of (p, n, alpha, beta)"), finite_time(t)


