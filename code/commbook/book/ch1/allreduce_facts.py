r"""Chapter §1.4: the numbers each section of ``chapters/{zh,en}/ch1/04-allreduce-algorithms.md``
puts into its prose, one typed result per section, built from :mod:`.allreduce_numbers` and
:mod:`.allreduce_choice` (the page glues them with :func:`commbook.book.glue.glue_fields`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...collectives import predict
from ...collectives.butterfly import butterfly_pairs
from ...comm_sim import RunResult
from ...hardware import Link
from ..tables import Table
from .allreduce_choice import CHAPTER_STATED as CHOICE_STATED
from .allreduce_choice import alpha_steps_fold, order_topologies
from .allreduce_figures import butterfly_rounds
from .allreduce_numbers import CHAPTER_STATED, EXAMPLE_1_1, alpha_steps, run, trace_facts, tree_activity
from .boxes import BOX_LINKS

__all__ = ["RingExample", "ring_example", "TreeFacts", "tree_facts", "ButterflyFacts", "butterfly_facts",
           "BucketFacts", "bucket_facts", "Table2Facts", "table2_facts", "Stated", "FALLACY"]


@dataclass(frozen=True)
class RingExample:
    """Example 1.1 and the ring's step count: the GPUs, reduce-scatter steps and all rounds
    of the trace, the inputs and their sum as text, what one GPU sends in buffers (2(p−1)/p),
    and, for ``big_nodes`` ranks, the α steps and their latency on ``big_alpha_s``."""

    p: int
    rs: int
    rounds: int
    inputs: str
    sum: str
    sent_buffers: float
    big_nodes: int
    big_steps: int
    big_alpha_s: float
    big_latency_s: float


def ring_example(res: RunResult | None = None, data=EXAMPLE_1_1, big: int = CHAPTER_STATED["ring_nodes"],
                 link: Link = BOX_LINKS["s1.4"]) -> RingExample:
    """Example 1.1's trace (:func:`trace_facts`) and the ring's α steps on ``big`` ranks."""
    f = trace_facts(res, data)
    steps = alpha_steps("ring", big)
    return RingExample(f["p"], f["rs"], f["rounds"], ", ".join(str(list(x)) for x in data), str(f["sum"]),
                       f["sent"][0] / (len(data[0]) * 8), big, steps, link.alpha, steps * link.alpha)




@dataclass(frozen=True)
class TreeFacts:
    """The binomial tree's section: the senders per round on ``p`` ranks (as text) and the
    mean share of ports busy; α steps of ring and tree on ``nodes`` ranks and their ratio;
    ring and tree of ``big_n_bytes`` on ``big_p`` GPUs, bandwidth terms only."""

    p: int
    senders: str
    share_frac: float
    nodes: int
    ring_steps: int
    tree_steps: int
    steps_x: float
    big_n_bytes: float
    big_p: int
    big_beta_Bps: float
    big_ring_s: float
    big_tree_s: float


def tree_facts(p: int = 8, nodes: int = CHAPTER_STATED["tree_nodes"], big_n: float = CHAPTER_STATED["tree_big_bytes"],
               big_p: int = CHAPTER_STATED["tree_big_gpus"], big_link: Link = BOX_LINKS["lb1.4"]) -> TreeFacts:
    """:func:`tree_activity` on ``p`` ranks, the step counts on ``nodes`` (simulated rounds),
    and the bandwidth terms of ring and tree at ``big_n`` on ``big_p`` GPUs (closed forms)."""
    act = tree_activity(p)
    ring_k, tree_k = (run(a, nodes, 1.0, BOX_LINKS["tree1.4"]).rounds for a in ("ring", "tree"))
    big = {a: predict("all_reduce", a, big_p, big_n, 0.0, big_link.beta) for a in ("ring", "tree")}
    return TreeFacts(act["p"], ", ".join(map(str, act["senders"])), act["mean_share"], nodes, ring_k, tree_k,
                     ring_k / tree_k, big_n, big_p, big_link.beta, big["ring"], big["tree"])


@dataclass(frozen=True)
class ButterflyFacts:
    """The butterfly's section: the pairs of the three reduce-scatter rounds on ``p`` GPUs (as
    text), the two nodes' ranks, log₂p, the share of M in the last round, the far/near ratio on
    the big cluster, and for ``big`` ranks (not a power of two) and ``big_pow2``: the partner
    distance of the last round and the fold's extra α steps."""

    p: int
    k0: str
    k1: str
    k2: str
    gpn: int
    node0: str
    node1: str
    big_nodes: int
    log: int
    last_share: str
    big_x: float
    big: int
    big_pow2: int
    big_pow2_xor: int
    fold: int


def butterfly_facts(order_table: Table, p: int = 8) -> ButterflyFacts:
    """The butterfly's numbers; ``order_table`` is :func:`.allreduce_choice.order_table` (its
    far / near ratio on the 1,024-GPU cluster)."""
    log_p = int(math.log2(p))
    text = [", ".join(f"({a}, {b})" for a, b in rnd) for rnd in butterfly_pairs(p, "near_first")[:log_p]]
    topos = order_topologies()
    gpn = topos["twolevel"].gpus_per_node               # the figure's nodes are the two-node cluster's
    last = butterfly_rounds(p, "near_first")[log_p - 1]
    big, pow2 = CHOICE_STATED["butterfly_big"], CHOICE_STATED["butterfly_big_pow2"]
    (xor,) = {b - a for a, b in butterfly_pairs(pow2, "near_first")[int(math.log2(pow2)) - 1]}
    ratio = {r["topo"]: r["ratio"] for r in order_table.rows}["twolevel_big"]
    return ButterflyFacts(p, *text, gpn, f"0–{gpn - 1}", f"{gpn}–{2 * gpn - 1}", topos["twolevel_big"].nodes, log_p,
                          f"M/{round(1 / last['share'])}", ratio, big, pow2, xor, alpha_steps_fold(big))


@dataclass(frozen=True)
class BucketFacts:
    """Where the DDP buckets fall: the bucket range, the largest N where the ring wins both
    buckets, the smallest where the double tree does, and the ring = tree crossover at the
    largest N of the table."""

    lo_bytes: float
    hi_bytes: float
    ring_max: int
    dt_min: int
    big: int
    xtree_big_bytes: float


def bucket_facts(bucket_table: Table) -> BucketFacts:
    """Read :func:`.allreduce_choice.bucket_table`: which N each algorithm wins both buckets at."""
    rows = {r["p"]: r for r in bucket_table.rows}
    ring = [p for p, r in rows.items() if r["b0"] == r["b1"] == "ring"]
    dt = [p for p, r in rows.items() if r["b0"] == r["b1"] == "double_tree"]
    lo, hi = CHOICE_STATED["buckets"]
    return BucketFacts(lo, hi, max(ring), min(dt), max(rows), rows[max(rows)]["x_tree"])


@dataclass(frozen=True)
class Table2Facts:
    """Table 2 at ``p`` ranks: the double tree's bandwidth term over the lower bound."""

    p: int
    dt_ratio: float


def table2_facts(table2: Table) -> Table2Facts:
    """Read :func:`.allreduce_choice.table2`."""
    return Table2Facts(table2.meta["p"], {r["algo"]: r for r in table2.rows}["double_tree"]["ratio"])


@dataclass(frozen=True)
class Stated:
    """The pitfall of §1.9 that repeats Napkin Math 1.5: the times the chapter states."""

    tree_bw_s: float
    ring_lat_s: float


FALLACY = Stated(CHOICE_STATED["fallacy"]["tree_bw_us"] * 1e-6, CHOICE_STATED["fallacy"]["ring_lat_us"] * 1e-6)
