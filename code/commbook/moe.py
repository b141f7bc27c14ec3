r"""Mixture-of-experts dispatch: expert capacity, the binomial expert load, seeded routing
with skew, the lower bounds of a skewed all-to-all, and the flows of its schedules.

The model (chapter §1.3, on dynamic routing and expert load imbalance in the MoE
all-to-all; GShard, Switch Transformer):

* ``ranks`` = P processes hold ``experts`` = E experts, E/P each (expert e lives on rank
  ``e // (E/P)``); every rank routes ``tokens_per_rank`` = T tokens, each to ``top_k`` = k
  **distinct** experts.
* **Capacity** of an expert: :math:`\lceil P T k / E \cdot C\rceil` for capacity factor C.
* **Load** of one expert under uniform routing: each of the n = P·T tokens picks it with
  probability k/E, independently of the other tokens, so
  :math:`N_e \sim \mathrm{Binomial}(P T, k/E)` (the chapter's Binomial(P·T, p_e)); for
  k = 1 this is also Binomial(T·k·P, 1/E).  Mean P·T·k/E, variance P·T·(k/E)(1 − k/E).
  The loads of different experts are *not* independent (they sum to P·T·k: they are
  negatively associated, Joag-Dev & Proschan 1983); :meth:`ExpertLoad.expected_max`
  treats them as independent and is therefore an approximation — a lower bound,
  because for such loads P(all ≤ m) ≤ ∏ P(N_e ≤ m) (Mallows 1968 for the
  multinomial).  At Napkin Math 1.4's configuration it is 83.33 tokens against ≈83.5
  by simulation.
* Every probability here is an exact sum over the binomial pmf, computed in log space
  with :func:`math.lgamma`; tails are summed directly (never 1 − CDF) so that small
  probabilities keep their digits.

* **Flows** (:func:`count_flows`, read off a schedule's rounds).  On 8 nodes × 8 GPUs the
  direct exchange has P(P−1) = 4,032 GPU pairs (the chapter's count; 3,584 of them
  cross nodes).  The hierarchical one has N(N−1) = 56 node pairs — which is also 56
  flows per rail — but with one NIC per GPU its GPU-level cross-node flows are
  G·N(N−1) = 448: like for like the reduction is G = 8×, not 4,032/56 = 72×.

Napkin Math 1.4's configuration (4,096 tokens on 8 GPUs, 64 experts, top-1, 2,048-dim
BF16 hidden states: 4,096 B per token) is a chapter value: :data:`commbook.book.ch1.inputs.NM_1_4`.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from .checks import check_int, check_link_params, check_nonneg, check_positive, check_real, finite_time
from .comm_sim import RunResult
from .topology import Switch, Topology, TwoLevel

__all__ = ["MoEConfig", "expert_capacity", "ExpertLoad", "expert_load", "zipf_popularity",
           "Routing", "route", "uniform_counts", "A2ABounds", "a2a_bounds", "a2a_bounds_on",
           "FlowCount", "count_flows"]

MAX_EXPERTS = 1 << 24  # most experts zipf_popularity spreads over (16.7 M; DeepSeek-V3 has 256)
MAX_CUTS = 200_000
"""Most balanced cuts :func:`a2a_bounds` enumerates exactly (else pass ``groups``)."""


def _count(x, name: str, minimum: int = 1) -> int:
    return check_int(x, name, lo=minimum)


def expert_capacity(tokens_per_rank: int, ranks: int, top_k: int, experts: int,
                    capacity_factor: float = 1.0) -> int:
    """Tokens one expert's buffer holds: ⌈P·T·k/E · C⌉ (exact rational arithmetic; C is
    read as the decimal it prints as, so C = 1.1 means 11/10)."""
    T, P = _count(tokens_per_rank, "tokens_per_rank"), _count(ranks, "ranks")
    k, E = _count(top_k, "top_k"), _count(experts, "experts")
    if k > E:
        raise ValueError(f"top_k ({k}) cannot exceed experts ({E})")
    c = check_positive(capacity_factor, "capacity_factor", "a finite number")
    return math.ceil(Fraction(P * T * k, E) * Fraction(repr(c)))


@dataclass(frozen=True)
class MoEConfig:
    """One MoE layer's dispatch: P ranks × T tokens, E experts (E/P per rank), top-k,
    hidden size ``d_model`` of ``bytes_per_value`` bytes."""

    tokens_per_rank: int
    ranks: int
    experts: int
    top_k: int = 1
    d_model: int = 1
    bytes_per_value: int = 2

    def __post_init__(self) -> None:
        for name in ("tokens_per_rank", "ranks", "experts", "top_k", "d_model", "bytes_per_value"):
            _count(getattr(self, name), name)
        if self.experts % self.ranks:
            raise ValueError(f"experts ({self.experts}) must be a multiple of ranks ({self.ranks})")
        if self.top_k > self.experts:
            raise ValueError(f"top_k ({self.top_k}) cannot exceed experts ({self.experts})")

    tokens = property(lambda self: self.tokens_per_rank * self.ranks, doc="P·T tokens in the batch")
    experts_per_rank = property(lambda self: self.experts // self.ranks, doc="E/P")
    bytes_per_token = property(lambda self: self.d_model * self.bytes_per_value,
                               doc="one hidden state: d_model × bytes per value")

    def capacity(self, capacity_factor: float = 1.0) -> int:
        """:func:`expert_capacity` of this layer."""
        return expert_capacity(self.tokens_per_rank, self.ranks, self.top_k, self.experts, capacity_factor)

    def load(self) -> "ExpertLoad":
        """The load of one expert under uniform routing."""
        return expert_load(self.tokens, self.top_k, self.experts)


class ExpertLoad:
    """Binomial(n, q): the number of the n tokens that pick one given expert."""

    def __init__(self, n: int, q: float):
        self.n = _count(n, "n", 0)
        q = check_real(q, "q", "a probability")
        if not 0 < q <= 1:
            raise ValueError(f"q (probability a token picks the expert) must be in (0, 1], got {q!r}")
        self.q = q

    def __repr__(self) -> str:
        return f"ExpertLoad(Binomial(n={self.n}, q={self.q:.6g}))"

    mean = property(lambda self: self.n * self.q, doc="n·q")
    var = property(lambda self: self.n * self.q * (1 - self.q), doc="n·q·(1 − q)")
    sd = property(lambda self: math.sqrt(self.var), doc="√var")

    @cached_property
    def pmf(self) -> np.ndarray:
        """P(N = k) for k = 0 … n, from log-gamma (no overflow, no cancellation)."""
        n, q = self.n, self.q
        if q == 1.0:
            out = np.zeros(n + 1)
            out[n] = 1.0
            return out
        k = np.arange(n + 1)
        lg = np.array([math.lgamma(i + 1) for i in range(n + 1)])
        logp = lg[n] - lg - lg[::-1] + k * math.log(q) + (n - k) * math.log1p(-q)
        pmf = np.exp(logp - logp.max())
        return pmf / pmf.sum()      # removes the rounding of lgamma(n + 1), shared by all k

    @cached_property
    def _sf(self) -> np.ndarray:
        """P(N > k) for k = 0 … n, summed from the top (keeps tiny tails exact)."""
        tail = np.cumsum(self.pmf[::-1])[::-1]          # P(N >= k)
        return np.append(tail[1:], 0.0)

    def _k(self, capacity) -> int:
        c = _count(capacity, "capacity", 0)
        return min(c, self.n)

    def cdf(self, k: int) -> float:
        """P(N ≤ k)."""
        return float(self.pmf[: self._k(k) + 1].sum())

    def overflow_probability(self, capacity: int) -> float:
        """P(N > capacity): the chance this expert drops tokens."""
        return float(self._sf[self._k(capacity)])

    def expected_dropped(self, capacity: int) -> float:
        """E[max(N − capacity, 0)]: tokens this expert drops, on average."""
        c = self._k(capacity)
        k = np.arange(c + 1, self.n + 1)
        return float(np.sum((k - c) * self.pmf[c + 1:]))

    def dropped_share(self, capacity: int) -> float:
        """Expected dropped tokens over expected routed tokens (the share of the batch's
        expert assignments dropped when every expert has this capacity)."""
        return self.expected_dropped(capacity) / self.mean if self.mean > 0 else 0.0

    def expected_max(self, count: int) -> float:
        """E[max of ``count`` independent copies] = Σ_k (1 − F(k)^count).

        Applied to the E experts of a layer this is an approximation (a lower bound):
        their loads are negatively associated, not independent (see the module docs)."""
        m = _count(count, "count")
        with np.errstate(divide="ignore"):
            log_f = np.log1p(-np.minimum(self._sf[:-1], 1.0))   # log F(k), k = 0 … n-1
        return float(np.sum(-np.expm1(m * log_f)))


def expert_load(tokens: int, top_k: int, experts: int) -> ExpertLoad:
    """Load of one expert when ``tokens`` tokens each pick ``top_k`` distinct experts
    uniformly among ``experts``: Binomial(tokens, top_k/experts)."""
    n, k, E = _count(tokens, "tokens"), _count(top_k, "top_k"), _count(experts, "experts")
    if k > E:
        raise ValueError(f"top_k ({k}) cannot exceed experts ({E})")
    return ExpertLoad(n, k / E)


def zipf_popularity(experts: int, s: float = 1.0, seed: int | None = None) -> np.ndarray:
    """Routing probabilities ∝ 1/rank^s over the experts (s = 0: uniform).  Expert 0 is the
    most popular unless ``seed`` is given, which shuffles the ranks (spreading the hot
    experts over the GPUs)."""
    E = check_int(experts, "experts", "an integer", lo=1, hi=MAX_EXPERTS)
    s = check_nonneg(s, "s", "a Zipf exponent")
    seed = None if seed is None else check_int(seed, "seed", "an integer seed", lo=0)
    w = 1.0 / np.arange(1, E + 1) ** float(s)
    if seed is not None:
        w = w[np.random.default_rng(seed).permutation(E)]
    return w / w.sum()


@dataclass
class Routing:
    """The experts every token was sent to: ``choices[r, t]`` holds the k distinct experts
    of token t of rank r."""

    config: MoEConfig
    choices: np.ndarray

    def expert_counts(self) -> np.ndarray:
        """Tokens routed to each expert, shape (E,)."""
        return np.bincount(self.choices.ravel(), minlength=self.config.experts)

    def rank_loads(self) -> np.ndarray:
        """Token copies each rank receives (its experts' loads summed), shape (P,)."""
        return self.expert_counts().reshape(self.config.ranks, -1).sum(axis=1)

    def counts(self) -> np.ndarray:
        """Token copies from rank i to rank j, shape (P, P): the all_to_all_v count matrix
        in tokens (one copy per (token, expert) pair, including the local diagonal)."""
        cfg = self.config
        dest = self.choices // cfg.experts_per_rank                      # (P, T, k)
        src = np.broadcast_to(np.arange(cfg.ranks)[:, None, None], dest.shape)
        out = np.zeros((cfg.ranks, cfg.ranks), dtype=np.int64)
        np.add.at(out, (src.ravel(), dest.ravel()), 1)
        return out

    def counts_bytes(self) -> np.ndarray:
        """:meth:`counts` times the bytes of one hidden state."""
        return self.counts() * self.config.bytes_per_token

    def dropped(self, capacity: int) -> int:
        """Token copies dropped when every expert keeps at most ``capacity``."""
        c = _count(capacity, "capacity", 0)
        return int(np.maximum(self.expert_counts() - c, 0).sum())


def route(config: MoEConfig, popularity: np.ndarray | None = None,
          rng: np.random.Generator | int | None = 0) -> Routing:
    """Route every token of ``config`` to top-k distinct experts.

    ``popularity`` (length E, sums to 1; default uniform) are the routing probabilities;
    with k > 1 the experts are drawn without replacement in proportion to them (Gumbel
    top-k).  ``rng`` is a numpy Generator or a seed (reproducible by default)."""
    if not isinstance(config, MoEConfig):
        raise TypeError(f"config must be a MoEConfig, got {type(config).__name__}")
    if not isinstance(rng, np.random.Generator):
        if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
            raise TypeError(f"rng must be a numpy Generator or an integer seed, got {type(rng).__name__}")
        rng = np.random.default_rng(rng)
    E, k, n = config.experts, config.top_k, config.tokens
    if popularity is None:
        logp = np.zeros(E)
        p = None
    else:
        p = np.asarray(popularity, dtype=float)
        if p.shape != (E,) or not np.all(np.isfinite(p)) or (p < 0).any() or abs(p.sum() - 1) > 1e-9:
            raise ValueError(f"popularity must be {E} finite probabilities >= 0 that sum to 1")
        if np.count_nonzero(p) < k:
            raise ValueError(f"popularity must give at least top_k = {k} experts a non-zero probability")
        with np.errstate(divide="ignore"):
            logp = np.log(p)
    if k == 1:
        pick = rng.integers(0, E, size=n) if p is None else rng.choice(E, size=n, p=p)
        choices = pick[:, None]
    else:
        keys = logp + rng.gumbel(size=(n, E))
        choices = np.argpartition(-keys, k - 1, axis=1)[:, :k]
    return Routing(config, choices.reshape(config.ranks, config.tokens_per_rank, k))


def uniform_counts(config: MoEConfig) -> np.ndarray:
    """Bytes rank i sends rank j when every expert gets exactly its share (the napkin
    math's uniform routing): T·k/P tokens per pair, diagonal included (kept local)."""
    per_pair = Fraction(config.tokens_per_rank * config.top_k, config.ranks)
    if per_pair.denominator != 1:
        raise ValueError(f"T·k = {config.tokens_per_rank * config.top_k} tokens do not split evenly over "
                         f"{config.ranks} ranks")
    return np.full((config.ranks, config.ranks), int(per_pair) * config.bytes_per_token, dtype=np.int64)


# ----------------------------------------------------------------------------- lower bounds
@dataclass(frozen=True)
class A2ABounds:
    """The four lower bounds of one all-to-all (seconds), chapter Systems Perspective 1.1:
    ``injection`` (busiest sender), ``reception`` (busiest receiver), ``bisection`` (worst
    balanced cut) — each one start-up α plus its bytes over its bandwidth — and
    ``startup``: α per remote peer of the rank with the most peers, the cost of posting
    one message per peer one after another (a bound for the direct exchange; the
    hierarchical one exists to beat it).  ``cut`` is the worst cut's side (units)."""

    injection: float
    reception: float
    bisection: float
    startup: float
    cut: tuple[int, ...]

    bound = property(lambda self: max(self.injection, self.reception, self.bisection, self.startup),
                     doc="the largest of the four")
    binding = property(lambda self: max(("injection", "reception", "bisection", "startup"),
                                        key=lambda n: getattr(self, n)), doc="name of the largest")


def a2a_bounds(counts: np.ndarray, *, alpha: float, inject_bw: float, bisection_bw: float,
               receive_bw: float | None = None, groups: np.ndarray | None = None) -> A2ABounds:
    """Lower bounds of an all-to-all whose rank i sends ``counts[i, j]`` bytes to rank j
    (the diagonal stays local and is ignored).

    Without ``groups`` the units are ranks: ``inject_bw``/``receive_bw`` are one rank's
    port bandwidths, and the worst cut is searched over all balanced halves of the
    ranks.  With ``groups`` (a group id per rank, e.g. its node) the bytes are summed per
    group, only traffic between groups counts, ``inject_bw``/``receive_bw`` are a group's
    uplink, and cuts are balanced halves of the groups.  The bisection bound is
    α + max(bytes A→B, B→A)/``bisection_bw`` (one direction, like the chapter's
    V_cut/BW_bisect)."""
    C = np.asarray(counts, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 1:
        raise ValueError(f"counts must be a square (p, p) matrix, got shape {C.shape}")
    if not np.all(np.isfinite(C)) or (C < 0).any():
        raise ValueError("counts must be finite and >= 0")
    alpha, inject_bw = check_link_params(alpha, inject_bw, beta_name="inject_bw")
    bisection_bw = check_link_params(alpha, bisection_bw, beta_name="bisection_bw")[1]
    receive_bw = inject_bw if receive_bw is None else check_link_params(alpha, receive_bw, beta_name="receive_bw")[1]
    p = C.shape[0]
    off = C * (1 - np.eye(p))
    startup = alpha * int(np.count_nonzero(off, axis=1).max())
    if groups is None:
        U = off
    else:
        g = np.asarray(groups)
        if g.shape != (p,) or not np.issubdtype(g.dtype, np.integer):
            raise ValueError(f"groups must hold one integer group id per rank ({p})")
        ids, gi = np.unique(g, return_inverse=True)
        U = np.zeros((ids.size, ids.size))
        np.add.at(U, (gi[:, None].repeat(p, 1), gi[None, :].repeat(p, 0)), C)
        U *= 1 - np.eye(ids.size)
    m = U.shape[0]
    half = m // 2
    n_cuts = math.comb(m - 1, half - 1) if half else 0
    if n_cuts > MAX_CUTS:
        raise ValueError(f"{n_cuts} balanced cuts of {m} units is too many to enumerate; pass groups=")
    worst, cut = 0.0, ()
    if half:
        for side in itertools.combinations(range(1, m), half - 1):
            a = np.zeros(m, dtype=bool)
            a[[0, *side]] = True
            v = max(U[a][:, ~a].sum(), U[~a][:, a].sum())
            if v > worst:
                worst, cut = v, tuple(np.flatnonzero(a).tolist())
    return A2ABounds(finite_time(alpha + U.sum(axis=1).max() / inject_bw, "the bound of (counts, inject_bw)"),
                     finite_time(alpha + U.sum(axis=0).max() / receive_bw, "the bound of (counts, receive_bw)"),
                     finite_time(alpha + worst / bisection_bw, "the bound of (counts, bisection_bw)"),
                     float(startup), cut)


def a2a_bounds_on(topology: Topology, counts: np.ndarray) -> A2ABounds:
    """:func:`a2a_bounds` with the bandwidths of a topology: on a :class:`Switch` per rank
    (port β, α of the link); on a :class:`TwoLevel` per node (uplink: ``node_uplink_bandwidth``,
    InfiniBand α, cuts along nodes)."""
    if isinstance(topology, Switch):
        link = topology.link
        return a2a_bounds(counts, alpha=link.alpha, inject_bw=link.beta,
                          bisection_bw=topology.bisection_bandwidth)
    if isinstance(topology, TwoLevel):
        if topology.nodes < 2:
            raise ValueError("a TwoLevel topology with one node has no inter-node bound; use a Switch")
        up = topology.node_uplink_bandwidth
        return a2a_bounds(counts, alpha=topology.inter.alpha, inject_bw=up,
                          bisection_bw=topology.bisection_bandwidth,
                          groups=np.arange(topology.p) // topology.gpus_per_node)
    raise TypeError(f"a2a_bounds_on takes a Switch or TwoLevel topology, got {type(topology).__name__}")


# ----------------------------------------------------------------------------- flows
@dataclass(frozen=True)
class FlowCount:
    """Distinct flows (ordered source → destination pairs that exchange a message) of a
    schedule on a two-level cluster: all GPU pairs, the GPU pairs that cross nodes, the
    node pairs, and the most GPU-level cross-node flows leaving one rail (NIC index)."""

    gpu_pairs: int
    cross_node_gpu_pairs: int
    node_pairs: int
    max_per_rail: int


def count_flows(result: RunResult, topology: TwoLevel) -> FlowCount:
    """Count the flows of a run (its rounds, from ``result.trace``) on ``topology``;
    ranks are device ids (a run with ``ranks=None``)."""
    if not isinstance(result, RunResult):
        raise TypeError(f"result must be a RunResult, got {type(result).__name__}")
    if not isinstance(topology, TwoLevel):
        raise TypeError(f"topology must be a TwoLevel, got {type(topology).__name__}")
    if not result.trace:
        raise ValueError("the run kept no rounds (result.trace is empty)")
    pairs = np.concatenate([np.stack([s.round.src, s.round.dst], 1) for s in result.trace])
    pairs = np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0)
    if pairs.size and pairs.max() >= topology.p:
        raise ValueError(f"the run has ranks beyond the topology's {topology.p} devices")
    G = topology.gpus_per_node
    cross = pairs[pairs[:, 0] // G != pairs[:, 1] // G]
    nodes = np.unique(cross // G, axis=0)
    per_rail = np.bincount(cross[:, 0] % G, minlength=G) if cross.size else np.zeros(1, int)
    return FlowCount(len(pairs), len(cross), len(nodes), int(per_rail.max()))
