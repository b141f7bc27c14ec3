r"""Cost models: α–β point to point, LogP, closed forms, bounds, crossovers, bus bandwidth.

Conventions (the lecture's): ``p`` devices, ``n`` bytes, ``alpha`` seconds per message,
``beta`` bytes per second in one direction.  For all-reduce, broadcast, reduce and
reduce-scatter ``n`` is the buffer each device holds; for all-gather it is the gathered
output (each device contributes ``n/p``); for all-to-all it is what each device holds
before the exchange.

Every closed form here is the exact time of the matching schedule in
:mod:`commbook.collectives` under the timing model of :mod:`commbook.comm_sim`
(synchronous rounds, α once per round, ports serialize their bytes).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable

from .units import check_size

__all__ = [
    "check_link_params", "check_p", "p2p_time", "effective_bandwidth", "half_bandwidth_point",
    "LogP", "ALLREDUCE_ALGORITHMS", "BROADCAST_ALGORITHMS", "REDUCE_ALGORITHMS",
    "REDUCE_SCATTER_ALGORITHMS", "ALL_GATHER_ALGORITHMS", "ALIASES", "canonical_algorithm", "t_formula",
    "t_allreduce_hierarchical", "t_allreduce_torus", "t_broadcast", "t_reduce",
    "t_reduce_scatter", "t_all_gather", "t_all_to_all", "t_scatter", "t_gather",
    "lower_bound_bytes", "all_to_all_bounds", "crossover_rd_ring", "crossover_tree_ring",
    "chain_broadcast_optimum", "BUSBW_FACTORS", "algbw", "busbw",
]


# ----------------------------------------------------------------------------- checks
def _real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_link_params(alpha: float, beta: float) -> None:
    """Raise ``ValueError`` unless ``alpha >= 0`` and ``beta > 0`` (both finite numbers)."""
    if not _real(alpha) or math.isnan(alpha) or alpha < 0 or math.isinf(alpha):
        raise ValueError(f"alpha (latency, seconds) must be finite and >= 0, got {alpha!r}")
    if not _real(beta) or math.isnan(beta) or beta <= 0 or math.isinf(beta):
        raise ValueError(f"beta (bandwidth, bytes/s) must be finite and > 0, got {beta!r}")


def check_p(p: int, name: str = "p") -> int:
    """Return ``p`` if it is an integer >= 1, else raise ``ValueError``/``TypeError``."""
    if isinstance(p, bool) or not isinstance(p, int) and not (hasattr(p, "__index__")):
        raise TypeError(f"{name} (number of devices) must be an integer, got {type(p).__name__}")
    p = int(p)
    if p < 1:
        raise ValueError(f"{name} (number of devices) must be >= 1, got {p}")
    return p


def _log2_floor(p: int) -> int:
    return p.bit_length() - 1


def _log2_ceil(p: int) -> int:
    return (p - 1).bit_length()


# ----------------------------------------------------------------------------- α–β
def p2p_time(n: float, alpha: float, beta: float) -> float:
    """Point-to-point time of the α–β (Hockney) model, :math:`T(n) = \\alpha + n/\\beta`."""
    n = check_size(n)
    check_link_params(alpha, beta)
    return alpha + n / beta


def effective_bandwidth(n: float, alpha: float, beta: float) -> float:
    """Bandwidth actually obtained, :math:`n / T(n)` in bytes/s (0 for an empty message)."""
    t = p2p_time(n, alpha, beta)
    return n / t if t > 0 else (beta if n > 0 else 0.0)


def half_bandwidth_point(alpha: float, beta: float) -> float:
    """:math:`n_{1/2} = \\alpha\\beta`: the size at which a link delivers exactly β/2."""
    check_link_params(alpha, beta)
    return alpha * beta


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
            v = getattr(self, name)
            if math.isnan(v) or v < 0 or math.isinf(v):
                raise ValueError(f"LogP parameter {name} must be finite and >= 0, got {v!r}")

    def p2p(self, messages: int = 1) -> float:
        """Time until the last of ``messages`` back-to-back small messages is received."""
        m = check_p(messages, "messages")
        return self.L + 2 * self.o + (m - 1) * max(self.g, self.o)

    def overlapped(self, t_compute: float) -> float:
        """Step time when a transfer runs beside ``t_compute`` of work: 2o + max(compute, L).

        The wire latency hides behind compute; the two overheads cannot.
        """
        if math.isnan(t_compute) or t_compute < 0:
            raise ValueError(f"t_compute must be >= 0 seconds, got {t_compute!r}")
        return 2 * self.o + max(t_compute, self.L)


# ----------------------------------------------------------------------------- all-reduce
def _ar_ring(p, n, a, b):
    return 2 * (p - 1) * (a + n / (p * b))


def _ar_rd(p, n, a, b):
    q = 1 << _log2_floor(p)
    fold = 2 * (a + n / b) if q != p else 0.0
    return _log2_floor(p) * (a + n / b) + fold


def _ar_rabenseifner(p, n, a, b):
    q = 1 << _log2_floor(p)
    fold = 2 * (a + n / b) if q != p else 0.0
    return 2 * _log2_floor(p) * a + 2 * (q - 1) / q * n / b + fold


def _ar_tree(p, n, a, b):
    return 2 * _log2_ceil(p) * (a + n / b)


def _ar_double_tree(p, n, a, b):
    return 2 * _log2_ceil(p) * (a + n / (2 * b))


def _ar_naive(p, n, a, b):
    return 2 * (a + (p - 1) * n / b)


def _ar_innet(p, n, a, b):
    return a + n / b


def _ar_one_shot(p, n, a, b):
    return a + (p - 1) * n / b


def _ar_two_shot(p, n, a, b):
    return 2 * a + 2 * (p - 1) / p * n / b


ALLREDUCE_ALGORITHMS: dict[str, Callable[[int, float, float, float], float]] = {
    "ring": _ar_ring,
    "rd": _ar_rd,
    "rabenseifner": _ar_rabenseifner,
    "tree": _ar_tree,
    "double_tree": _ar_double_tree,
    "naive": _ar_naive,
    "innet": _ar_innet,
    "one_shot": _ar_one_shot,
    "two_shot": _ar_two_shot,
}
"""The one canonical table of all-reduce algorithms and their closed forms.

* ``ring``: reduce-scatter + all-gather around a ring, 2(p-1) rounds of n/p.
* ``rd``: recursive doubling, log2 p rounds exchanging the whole buffer.
* ``rabenseifner``: recursive-halving reduce-scatter + recursive-doubling all-gather
  (the chapter's "butterfly", 递归减半加倍).
* ``tree``: binomial-tree reduce to rank 0, then binomial broadcast.
* ``double_tree``: two complementary (mirrored) binomial trees, each carrying half of
  the buffer at once; without chunk pipelining.
* ``naive``: everyone sends to rank 0, which reduces and sends the result back.
* ``innet``: in-network reduction in the switch (SHARP-like), α + n/β.
* ``one_shot``: every rank sends its whole buffer to every other rank in one round and
  reduces locally (the custom kernels of inference engines), α + (p-1)n/β.
* ``two_shot``: a one-round direct reduce-scatter, then a one-round direct all-gather,
  2α + 2(p-1)/p·n/β.

For p that is not a power of two, ``rd`` and ``rabenseifner`` fold the extra ranks
into partners first and unfold at the end (as MPICH does): two extra rounds of α + n/β.
"""

ALIASES: dict[str, str] = {
    "butterfly": "rabenseifner",
    "recursive_doubling": "rd",
    "recursive_halving_doubling": "rabenseifner",
    "binomial": "tree",
    "binary_tree": "tree",
    "dbtree": "double_tree",
    "star": "naive",
    "parameter_server": "naive",
    "sharp": "innet",
    "in_network": "innet",
}
"""Other names in the sources, mapped to the canonical ones."""


def canonical_algorithm(name: str, valid: dict | tuple | None = None) -> str:
    """Resolve an algorithm name (or alias) to its canonical name.

    ``valid`` restricts the accepted names (defaults to the all-reduce table).  An
    unknown name raises ``ValueError`` listing the valid ones.
    """
    valid = ALLREDUCE_ALGORITHMS if valid is None else valid
    key = str(name).strip().lower()
    if key not in valid:
        key = ALIASES.get(key, key)
    if key not in valid:
        names = sorted(valid)
        aliases = sorted(k for k, v in ALIASES.items() if v in valid)
        raise ValueError(
            f"unknown algorithm {name!r}; valid names: {', '.join(names)}"
            + (f" (aliases: {', '.join(aliases)})" if aliases else "")
        )
    return key


def t_formula(algo: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Closed-form all-reduce time, as the lecture's exercises call it.

    >>> round(t_formula("ring", 8, 4e6, 2e-6, 450e9) * 1e6, 2)
    43.56

    ``n`` is the bytes each device holds; ``p == 1`` costs nothing.
    """
    key = canonical_algorithm(algo)
    p = check_p(p)
    n = check_size(n)
    check_link_params(alpha, beta)
    if p == 1:
        return 0.0
    return ALLREDUCE_ALGORITHMS[key](p, n, alpha, beta)


def t_allreduce_hierarchical(
    nodes: int, gpus_per_node: int, n: float, intra: "object", inter: "object",
    inter_algorithm: str = "ring",
) -> float:
    """Hierarchical all-reduce: ring reduce-scatter in the node, all-reduce across nodes
    on each rail over n/G, ring all-gather in the node.  ``intra``/``inter`` are
    :class:`~commbook.hardware.Link` objects.
    """
    N, G = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node")
    n = check_size(n)
    inner = 2 * (G - 1) * (intra.alpha + n / (G * intra.beta))
    return inner + t_formula(inter_algorithm, N, n / G, inter.alpha, inter.beta)


def t_allreduce_torus(dims: tuple[int, ...], n: float, alpha: float, beta: float) -> float:
    """All-reduce by dimension on a torus: ring reduce-scatter along each dimension in
    turn (on a shrinking share), then ring all-gathers in reverse order."""
    n = check_size(n)
    check_link_params(alpha, beta)
    total, share = 0.0, n
    for a in dims:
        a = check_p(a, "torus dimension")
        total += 2 * (a - 1) * (alpha + share / (a * beta))
        share /= a
    return total


# ----------------------------------------------------------------------------- other ops
BROADCAST_ALGORITHMS = ("binomial", "flat", "chain", "scatter_allgather")
REDUCE_ALGORITHMS = ("binomial", "flat")
REDUCE_SCATTER_ALGORITHMS = ("ring", "rh")
ALL_GATHER_ALGORITHMS = ("ring", "rd")


def t_broadcast(algo: str, p: int, n: float, alpha: float, beta: float, chunks: int = 1) -> float:
    """Broadcast of n bytes from one root.

    ``binomial``: ceil(log2 p)(α + n/β); ``flat``: α + (p-1)n/β (the root's port
    serializes); ``chain``: (p-2+k)(α + n/(kβ)) with k = ``chunks``;
    ``scatter_allgather`` (Van de Geijn): one-round flat scatter + ring all-gather,
    pα + 2(p-1)/p·n/β.
    """
    key = canonical_algorithm(algo, BROADCAST_ALGORITHMS)
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    k = check_p(chunks, "chunks")
    if p == 1:
        return 0.0
    if key == "binomial":
        return _log2_ceil(p) * (alpha + n / beta)
    if key == "flat":
        return alpha + (p - 1) * n / beta
    if key == "chain":
        return (p - 2 + k) * (alpha + n / (k * beta))
    return p * alpha + 2 * (p - 1) / p * n / beta


def t_reduce(algo: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Reduce to one root: ``binomial`` ceil(log2 p)(α + n/β); ``flat`` α + (p-1)n/β."""
    key = canonical_algorithm(algo, REDUCE_ALGORITHMS)
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    if p == 1:
        return 0.0
    if key == "binomial":
        return _log2_ceil(p) * (alpha + n / beta)
    return alpha + (p - 1) * n / beta


def _t_ring_or_butterfly(valid: tuple[str, str], what: str, algo, p, n, alpha, beta) -> float:
    key = canonical_algorithm(algo, valid)
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    if key == "ring":
        return (p - 1) * (alpha + n / (p * beta))
    _require_pow2(p, what)
    return _log2_floor(p) * alpha + (p - 1) / p * n / beta


def t_reduce_scatter(algo: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Reduce-scatter of an n-byte buffer: ``ring`` (p-1)(α + n/(pβ)); ``rh`` (recursive
    halving, p a power of two) log2 p·α + (p-1)/p·n/β."""
    return _t_ring_or_butterfly(REDUCE_SCATTER_ALGORITHMS, "recursive halving", algo, p, n, alpha, beta)


def t_all_gather(algo: str, p: int, n: float, alpha: float, beta: float) -> float:
    """All-gather to an n-byte output: ``ring`` (p-1)(α + n/(pβ)); ``rd`` (recursive
    doubling, p a power of two) log2 p·α + (p-1)/p·n/β."""
    return _t_ring_or_butterfly(ALL_GATHER_ALGORITHMS, "recursive doubling", algo, p, n, alpha, beta)


def t_all_to_all(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct all-to-all on a non-blocking switch: p-1 shift rounds of α + n/(pβ)."""
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    return (p - 1) * (alpha + n / (p * beta))


def t_scatter(p: int, n: float, alpha: float, beta: float) -> float:
    """Flat scatter of the root's n bytes in one round: α + (p-1)/p·n/β."""
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    return 0.0 if p == 1 else alpha + (p - 1) / p * n / beta


t_gather = t_scatter
"""Flat gather into the root is the mirror image of the flat scatter (same time)."""


def _require_pow2(p: int, what: str) -> None:
    if p & (p - 1):
        raise ValueError(f"p must be a power of two for {what}, got p={p}")


# ----------------------------------------------------------------------------- bounds
_LB_FACTORS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0, "all_to_all": 1.0}


def lower_bound_bytes(op: str, p: int, n: float) -> float:
    """Bytes each device must send at least: all-reduce 2(p-1)/p·n (Patarasuk & Yuan);
    all-gather, reduce-scatter and all-to-all (p-1)/p·n."""
    if op not in _LB_FACTORS:
        raise ValueError(f"unknown op {op!r}; valid: {', '.join(sorted(_LB_FACTORS))}")
    p, n = check_p(p), check_size(n)
    return _LB_FACTORS[op] * (p - 1) / p * n


def all_to_all_bounds(p: int, n: float, beta_port: float, bisection_bw: float) -> tuple[float, float]:
    """The two all-to-all lower bounds in seconds: (egress, bisection).

    Egress: each device sends (p-1)/p·n through its port of ``beta_port``.
    Bisection: p·n/4 bytes cross the worst cut in each direction, at ``bisection_bw``.
    The binding bound is the larger one.
    """
    p, n = check_p(p), check_size(n)
    check_link_params(0.0, beta_port)
    check_link_params(0.0, bisection_bw)
    return (p - 1) / p * n / beta_port, p * n / 4 / bisection_bw


# ----------------------------------------------------------------------------- crossovers
def crossover_rd_ring(p: int, alpha: float, beta: float) -> float:
    """Size where recursive doubling and ring all-reduce take equal time (p a power of two):
    n× = [2(p-1) - log2 p]·αβ / [log2 p - 2(p-1)/p]."""
    p = check_p(p)
    check_link_params(alpha, beta)
    _require_pow2(p, "the recursive-doubling crossover")
    if p < 4:
        raise ValueError(f"ring and recursive doubling coincide for p < 4, got p={p}")
    L = _log2_floor(p)
    return (2 * (p - 1) - L) * alpha * beta / (L - 2 * (p - 1) / p)


def crossover_tree_ring(p: int, alpha: float, beta: float, exact: bool = True) -> float:
    """Size where binomial-tree and ring all-reduce take equal time.

    ``exact=True`` solves 2⌈log2 p⌉(α + n/β) = 2(p-1)α + 2(p-1)/p·n/β; ``exact=False``
    is the chapter's large-p estimate p·α·β / log2 p.
    """
    p = check_p(p)
    check_link_params(alpha, beta)
    if p < 3:
        raise ValueError(f"ring and tree coincide for p < 3, got p={p}")
    if not exact:
        return p * alpha * beta / math.log2(p)
    L = _log2_ceil(p)
    return (2 * (p - 1) - 2 * L) * alpha * beta / (2 * L - 2 * (p - 1) / p)


def chain_broadcast_optimum(p: int, n: float, alpha: float, beta: float) -> tuple[float, float]:
    """Optimal chunk count and time of the pipelined chain broadcast.

    Minimizing (p-2+k)(α + n/(kβ)) over real k gives k* = sqrt((p-2)n/(αβ)) and
    T* = (sqrt((p-2)α) + sqrt(n/β))**2.  Returns ``(k_star, t_star)``.
    """
    p, n = check_p(p), check_size(n)
    check_link_params(alpha, beta)
    if p < 3 or alpha == 0:
        raise ValueError("the chain optimum needs p >= 3 and alpha > 0")
    k = math.sqrt((p - 2) * n / (alpha * beta))
    t = (math.sqrt((p - 2) * alpha) + math.sqrt(n / beta)) ** 2
    return k, t


# ----------------------------------------------------------------------------- algbw/busbw
BUSBW_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda r: 2 * (r - 1) / r,
    "all_gather": lambda r: (r - 1) / r,
    "reduce_scatter": lambda r: (r - 1) / r,
    "all_to_all": lambda r: (r - 1) / r,
    "broadcast": lambda r: 1.0,
    "reduce": lambda r: 1.0,
    "send_recv": lambda r: 1.0,
}
"""nccl-tests' bus-bandwidth factors (PERFORMANCE.md), as functions of the rank count."""


def algbw(size: float, time: float) -> float:
    """Algorithm bandwidth: size / time (bytes/s), as nccl-tests prints it."""
    size = check_size(size, "size")
    if not time > 0:
        raise ValueError(f"time must be > 0 seconds, got {time!r}")
    return size / time


def busbw(op: str, size: float, time: float, nranks: int) -> float:
    """Bus bandwidth = algbw x the op's factor.  For all-gather, reduce-scatter and
    all-to-all ``size`` is the total size (count x nranks), as in nccl-tests."""
    if op not in BUSBW_FACTORS:
        raise ValueError(f"unknown op {op!r}; valid: {', '.join(BUSBW_FACTORS)}")
    return algbw(size, time) * BUSBW_FACTORS[op](check_p(nranks, "nranks"))
