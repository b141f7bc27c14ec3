r"""Mixture-of-experts dispatch: expert capacity, the binomial expert load, seeded routing
with skew (:mod:`commbook.moe.routing`), the lower bounds of a skewed all-to-all and the
flows of its schedules (:mod:`commbook.moe.a2a`); everything is re-exported here.

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
* **Flows** of the direct and the hierarchical exchange on a two-level cluster, and the
  lower bounds of a skewed all-to-all: :mod:`commbook.moe.a2a`.

Napkin Math 1.4's configuration (4,096 tokens on 8 GPUs, 64 experts, top-1, 2,048-dim
BF16 hidden states: 4,096 B per token) is a chapter value: :data:`commbook.book.ch1.inputs.NM_1_4`.
"""
from .a2a import MAX_CUTS, A2ABounds, FlowCount, a2a_bounds, a2a_bounds_on, count_flows
from .routing import (MAX_EXPERTS, ExpertLoad, MoEConfig, Routing, expert_capacity, expert_load, route,
                      uniform_counts, zipf_popularity)

__all__ = ["MoEConfig", "expert_capacity", "ExpertLoad", "expert_load", "zipf_popularity",
           "Routing", "route", "uniform_counts", "A2ABounds", "a2a_bounds", "a2a_bounds_on",
           "FlowCount", "count_flows"]
