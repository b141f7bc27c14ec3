r"""MoE routing: expert capacity, the binomial load of one expert, Zipf-skewed popularity
and seeded routing of every token to its top-k experts (the model: :mod:`commbook.moe`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..checks import check_int, check_nonneg, check_positive, check_real

__all__ = ["MoEConfig", "expert_capacity", "ExpertLoad", "expert_load", "zipf_popularity",
           "Routing", "route", "uniform_counts"]

MAX_EXPERTS = 1 << 24  # most experts zipf_popularity spreads over (16.7 M; DeepSeek-V3 has 256)


def _count(x, name: str, minimum: int = 1) -> int:
    return check_int(x, name, lo=minimum)


def expert_capacity(tokens_per_rank: int, ranks: int, top_k: int, experts: int,
                    capacity_factor: float = 1.0) -> int:
    """Tokens one expert's buffer holds: ⌈P·T·k/E · C⌉ (exact rational arithmetic; C is
    read as the decimal it prints as, so C = 1.1 means 11/10).

    Napkin Math 1.4 (512 tokens on each of 8 GPUs, 64 experts, top-1): 64 tokens per
    expert; 4096 x 1.1 / 64 = 70.4 rounds up to 71:

    >>> expert_capacity(512, 8, 1, 64), expert_capacity(512, 8, 1, 64, 1.25), expert_capacity(512, 8, 1, 64, 1.1)
    (64, 80, 71)
    """
    T, P = _count(tokens_per_rank, "tokens_per_rank"), _count(ranks, "ranks")
    k, E = _count(top_k, "top_k"), _count(experts, "experts")
    if k > E:
        raise ValueError(f"top_k ({k}) cannot exceed experts ({E})")
    c = check_positive(capacity_factor, "capacity_factor", "a finite number")
    return math.ceil(Fraction(P * T * k, E) * Fraction(repr(c)))


@dataclass(frozen=True)
class MoEConfig:
    """One MoE layer's dispatch: P ranks × T tokens, E experts (E/P per rank), top-k,
    hidden size ``d_model`` of ``bytes_per_value`` bytes.

    >>> cfg = MoEConfig(tokens_per_rank=512, ranks=8, experts=64, top_k=1, d_model=2048)
    >>> cfg.tokens, cfg.experts_per_rank, cfg.bytes_per_token, cfg.capacity(1.25)
    (4096, 8, 4096, 80)
    """

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
    """Binomial(n, q): the number of the n tokens that pick one given expert.

    At Napkin Math 1.4's 64 tokens per expert: variance 4096 · (1/64) · (63/64) = 63,
    2.2 % chance of overflowing a capacity factor of 1.25, and the expected busiest of
    64 experts (independent copies: a lower bound) at 83.33 tokens:

    >>> load = ExpertLoad(4096, 1 / 64)
    >>> load.mean, load.var, round(load.overflow_probability(80), 4), round(load.expected_max(64), 2)
    (64.0, 63.0, 0.0218, 83.33)
    """

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
    uniformly among ``experts``: Binomial(tokens, top_k/experts).

    >>> expert_load(4096, top_k=2, experts=64)
    ExpertLoad(Binomial(n=4096, q=0.03125))
    """
    n, k, E = _count(tokens, "tokens"), _count(top_k, "top_k"), _count(experts, "experts")
    if k > E:
        raise ValueError(f"top_k ({k}) cannot exceed experts ({E})")
    return ExpertLoad(n, k / E)


def zipf_popularity(experts: int, s: float = 1.0, seed: int | None = None) -> np.ndarray:
    """Routing probabilities ∝ 1/rank^s over the experts (s = 0: uniform).  Expert 0 is the
    most popular unless ``seed`` is given, which shuffles the ranks (spreading the hot
    experts over the GPUs).

    s = 1 over 4 experts: 1, 1/2, 1/3, 1/4 normalised by their sum 25/12:

    >>> zipf_popularity(4).round(4).tolist(), zipf_popularity(2, s=0).tolist()
    ([0.48, 0.24, 0.16, 0.12], [0.5, 0.5])
    """
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
    of token t of rank r.

    Seeded uniform routing of Napkin Math 1.4's batch: every token lands once, the
    busiest expert gets 83 (capacity factor 1.25 drops 3):

    >>> r = route(MoEConfig(512, 8, 64, d_model=2048))
    >>> int(r.expert_counts().sum()), int(r.expert_counts().max()), r.dropped(80), r.counts().sum(axis=1).tolist()
    (4096, 83, 3, [512, 512, 512, 512, 512, 512, 512, 512])
    """

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
    top-k).  ``rng`` is a numpy Generator or a seed (reproducible by default).

    Top-2 picks two distinct experts for every token:

    >>> r = route(MoEConfig(tokens_per_rank=256, ranks=4, experts=16, top_k=2), rng=1)
    >>> r.choices.shape, bool((r.choices[..., 0] != r.choices[..., 1]).all())
    ((4, 256, 2), True)
    """
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
    math's uniform routing): T·k/P tokens per pair, diagonal included (kept local).

    Napkin Math 1.4: 64 tokens x 4,096 B per pair; each GPU sends 7 of them, 1.84 MB:

    >>> u = uniform_counts(MoEConfig(512, 8, 64, d_model=2048))
    >>> int(u[0, 1]), int(u[0].sum() - u[0, 0])
    (262144, 1835008)
    """
    per_pair = Fraction(config.tokens_per_rank * config.top_k, config.ranks)
    if per_pair.denominator != 1:
        raise ValueError(f"T·k = {config.tokens_per_rank * config.top_k} tokens do not split evenly over "
                         f"{config.ranks} ranks")
    return np.full((config.ranks, config.ranks), int(per_pair) * config.bytes_per_token, dtype=np.int64)
