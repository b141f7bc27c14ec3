r"""Lower bounds (bytes a device must send, the two all-to-all bounds), the sizes where two
all-reduce algorithms cross, and the pipelined chain broadcast's optimal chunk count.
"""
from __future__ import annotations

import math

from ..checks import check_choice, check_flag, check_link_params, check_p, check_size, finite_time, require_pow2
from .base import _log2_floor, _log2_ceil


LOWER_BOUND_FACTORS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0, "all_to_all": 1.0}


def lower_bound_bytes(op: str, p: int, n: float) -> float:
    """Bytes each device must send at least: all-reduce 2(p-1)/p·n (Patarasuk & Yuan);
    all-gather, reduce-scatter and all-to-all (p-1)/p·n.

    >>> lower_bound_bytes("all_reduce", 8, 8e6), lower_bound_bytes("all_gather", 8, 8e6)
    (14000000.0, 7000000.0)
    """
    check_choice(op, "op", sorted(LOWER_BOUND_FACTORS))
    p, n = check_p(p), check_size(n)
    return LOWER_BOUND_FACTORS[op] * (p - 1) / p * n


def all_to_all_bounds(p: int, n: float, beta_port: float, bisection_bw: float) -> tuple[float, float]:
    """The two all-to-all lower bounds in seconds: (egress, bisection).

    Egress: each device sends (p-1)/p·n through its port of ``beta_port``.
    Bisection: p·n/4 bytes cross the worst cut in each direction, at ``bisection_bw``.
    The binding bound is the larger one.

    >>> [round(t * 1e3, 9) for t in all_to_all_bounds(8, 8e6, beta_port=1e9, bisection_bw=4e9)]   # ms
    [7.0, 4.0]
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
    n× = [2(p-1) - log2 p]·αβ / [log2 p - 2(p-1)/p].

    >>> from commbook.cost import allreduce_rd, allreduce_ring
    >>> n = crossover_rd_ring(8, 1e-6, 1e9)          # (14 - 3)·αβ / (3 - 14/8)
    >>> round(n, 6), math.isclose(allreduce_rd(8, n, 1e-6, 1e9), allreduce_ring(8, n, 1e-6, 1e9))
    (8800.0, True)
    """
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

    >>> round(crossover_tree_ring(8, 1e-6, 1e9), 3), round(crossover_tree_ring(8, 1e-6, 1e9, exact=False), 3)
    (1882.353, 2666.667)
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

    >>> k, t = chain_broadcast_optimum(8, 8e6, 1e-6, 1e9)
    >>> round(k ** 2), round(t * 1e3, 3)             # k*² = 6n/(αβ); T* in ms
    (48000, 8.444)
    """
    p, n = check_p(p), check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    if p < 3 or alpha == 0:
        raise ValueError("the chain optimum needs p >= 3 and alpha > 0")
    k = math.sqrt((p - 2) * n / (alpha * beta))
    t = (math.sqrt((p - 2) * alpha) + math.sqrt(n / beta)) ** 2
    return finite_time(k, "the optimal chunk count of (p, n, alpha, beta)"), finite_time(t)
