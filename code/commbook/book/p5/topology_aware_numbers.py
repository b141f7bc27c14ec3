"""P5 §6 (page 06-topology-aware), topology-aware collectives: the numbers its prose quotes, one typed result per
section, each field named with its unit (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``;
counts are ints), glued whole by :func:`commbook.book.glue.glue_fields`.

Each builder reads the section's table of :mod:`.topology` (which script 04 prints), the
closed forms of :mod:`commbook.cost` and the simulator, and derives here what the page used
to work out by hand: the rows it quotes, ratios, rounds, which network cards carry bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...collectives import all_reduce, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ...topology import Torus, TwoLevel, ring_order
from ...units import KB, MB

__all__ = ["ORIGINAL", "Mapping", "mapping_numbers", "Hier", "hier_numbers", "HierNccl", "hier_nccl_numbers",
           "nic_use"]

ORIGINAL = {"row_major": 0.02, "hier": (4, 6)}
"""The original notes' figures the page sets against the computed ones: row-major "2 %"
slower, the hierarchy "4–6×" faster (the ring "about 16×" slower than the switch:
:data:`.topology.ORIGINAL_04_2`)."""


# ============================================================================ §6.1 ring mapping
@dataclass(frozen=True)
class Mapping:
    """§6.1: Table 04-1's mappings of one ring onto a 2D torus."""
    p: int
    dims: str
    n_bytes: float
    chunk_bytes: float
    steps: int
    ideal_s: float
    long_edges: int                # ring edges of the row-major order longer than one hop
    extra_step_s: float            # per step, row-major over snake
    extra_step2_s: float           # ... at 2α per extra hop
    row_s: float
    row2_s: float
    row_frac: float                # row-major above the ideal
    row2_frac: float
    original_frac: float
    hop1: float                    # extra_step in units of α
    hop2: float
    link_ratio: float              # the busiest link of the worst random order over the snake's
    link_snake_bytes: float
    link_rand_bytes: float
    rand_hops: int
    rand_lo_x: float
    rand_hi_x: float
    rand_med_x: float
    seeds: int
    seed_last: int


def mapping_numbers(t41, dims=(4, 4), n: float = 64 * MB, link: Link = ICI_V5E, seeds: int = 20) -> Mapping:
    """From Table 04-1 (:func:`.topology.demo_04_1` with the same ``dims``, ``n``, ``link``)."""
    topo = Torus(dims, link)
    p = topo.p
    snake, rowm = t41.find(mapping="snake"), t41.find(mapping="row-major")
    rowm2 = t41.find(mapping="row-major, 2α per extra hop")
    rand = [r for r in t41.rows if r["mapping"] == "random"]
    order = ring_order(dims, "row_major")
    steps = 2 * (p - 1)
    extra, extra2 = (rowm["time"] - snake["time"]) / steps, (rowm2["time"] - snake["time"]) / steps
    worst_link = max(r["max_link"] for r in rand)
    return Mapping(
        p=p, dims="×".join(map(str, dims)), n_bytes=n, chunk_bytes=n / p, steps=steps, ideal_s=t41.meta["ideal"],
        long_edges=sum(topo.hops(int(order[i]), int(order[(i + 1) % p])) > 1 for i in range(p)),
        extra_step_s=extra, extra_step2_s=extra2, row_s=rowm["time"], row2_s=rowm2["time"],
        row_frac=rowm["vs_ideal"] - 1, row2_frac=rowm2["vs_ideal"] - 1, original_frac=ORIGINAL["row_major"],
        hop1=extra / link.alpha, hop2=extra2 / link.alpha, link_ratio=worst_link / snake["max_link"],
        link_snake_bytes=snake["max_link"], link_rand_bytes=worst_link,
        rand_hops=max(r["max_hops"] for r in rand), rand_lo_x=min(r["vs_ideal"] for r in rand),
        rand_hi_x=max(r["vs_ideal"] for r in rand), rand_med_x=t41.meta["random_median"], seeds=seeds,
        seed_last=seeds - 1)


# ============================================================================ §6.3 hierarchical all-reduce
def nic_use(nodes: int, g: int, n: float, intra: Link = NVLINK4, inter: Link = IB_NDR, pxn: bool = False,
            **options) -> tuple[int, float, float]:
    """The network cards an all-reduce of ``n`` bytes sends through, simulated: how many carry
    bytes, the most one carries, and the run's time."""
    res = all_reduce(VirtualCluster(TwoLevel(nodes, g, intra, inter, pxn=pxn)), nbytes=n, **options)
    used = [b for name, b in zip(res.link_names, res.link_bytes) if name.endswith("nic.out") and b > 0]
    return len(used), max(used), res.time


@dataclass(frozen=True)
class Hier:
    """§6.3: Table 04-3, the single ring across nodes against the hierarchical all-reduce."""
    g: int
    g1: int
    n_lo: int
    n_hi: int
    small_bytes: float
    large_bytes: float
    small_lo_x: float
    small_hi_x: float
    large_lo_x: float
    large_hi_x: float
    original_range: str
    ex_n: int                      # the worked example's node count
    ex_flat_s: float
    ex_hier_s: float
    ex_speedup_x: float
    ex_flat_rounds: int
    ex_hier_rounds: int
    ex_small_speedup_x: float
    big_flat_rounds: int           # the most nodes, small message
    big_hier_rounds: int
    big_speedup_x: float
    nic_flat_n: int
    nic_flat_bytes: float
    nic_hier_n: int
    nic_hier_bytes: float
    n2: int
    cross2: float                  # 2(N-1)/N at the fewest nodes
    bw2_x: float                   # flat over hierarchical, bandwidth terms only, fewest nodes
    bw_limit_x: float              # ... as N grows
    nv_share_frac: float           # NVLink phases over the cross-node phase, large N


def hier_numbers(t43, nodes=(2, 4, 8, 16, 32), g: int = 8, small: float = 64 * KB,
                 large: float = 256 * MB, intra: Link = NVLINK4, inter: Link = IB_NDR, ex_n: int = 4) -> Hier:
    """From Table 04-3 (:func:`.topology.demo_04_3` with the same arguments)."""
    sp = {n: [r["speedup"] for r in t43.rows if r["n"] == n] for n in (small, large)}
    ex, ex_small = t43.find(n=float(large), nodes=ex_n), t43.find(n=float(small), nodes=ex_n)
    big = t43.find(n=float(small), nodes=nodes[-1])
    ring_n, ring_b, _ = nic_use(ex_n, g, large, intra, inter, channels=1)
    hier_n, hier_b, _ = nic_use(ex_n, g, large, intra, inter, algorithm="hierarchical")
    n2 = nodes[0]
    bw_only = (t_formula("ring", g * n2, large, 0.0, inter.beta)
               / (t_formula("ring", g, large, 0.0, intra.beta) + t_formula("ring", n2, large / g, 0.0, inter.beta)))
    return Hier(
        g=g, g1=g - 1, n_lo=nodes[0], n_hi=nodes[-1], small_bytes=small, large_bytes=large,
        small_lo_x=min(sp[small]), small_hi_x=max(sp[small]), large_lo_x=min(sp[large]), large_hi_x=max(sp[large]),
        original_range="–".join(map(str, ORIGINAL["hier"])) + "×", ex_n=ex_n, ex_flat_s=ex["flat"],
        ex_hier_s=ex["hier"], ex_speedup_x=ex["speedup"], ex_flat_rounds=ex["flat_rounds"],
        ex_hier_rounds=ex["hier_rounds"], ex_small_speedup_x=ex_small["speedup"],
        big_flat_rounds=big["flat_rounds"], big_hier_rounds=big["hier_rounds"], big_speedup_x=big["speedup"],
        nic_flat_n=ring_n, nic_flat_bytes=ring_b, nic_hier_n=hier_n, nic_hier_bytes=hier_b, n2=n2,
        cross2=2 * (n2 - 1) / n2, bw2_x=bw_only,
        bw_limit_x=(2 / inter.beta) / (2 * (g - 1) / (g * intra.beta) + 2 / (g * inter.beta)),
        nv_share_frac=(g - 1) * inter.beta / intra.beta)


@dataclass(frozen=True)
class HierNccl:
    """§6.3: NCCL's ring (one channel per card, PXN) against the hierarchy, and the crossover
    sizes of Table 04-3b."""
    nic_nccl_n: int
    nic_nccl_bytes: float
    nccl_ex_s: float
    nccl_win_hi: int               # the most nodes at which NCCL's ring still wins (large message)
    nccl_win_x: float
    nccl_bw_x: float               # hierarchy over NCCL's ring, bandwidth terms only, many nodes
    nccl_small_lo_x: float
    nccl_small_hi_x: float
    nccl_lose_n: int
    nccl_lose_x: float
    x_lo_bytes: float              # crossover per GPU, fewest and most nodes
    x_hi_bytes: float
    one_nic_x: float               # one card per node: the ring over the hierarchy
    never_hi: int
    first_n: int
    first_bytes: float


def hier_nccl_numbers(t43, nodes=(2, 4, 8, 16, 32), g: int = 8, small: float = 64 * KB,
                      large: float = 256 * MB, intra: Link = NVLINK4, inter: Link = IB_NDR,
                      ex_n: int = 4) -> HierNccl:
    used_n, used_b, t = nic_use(ex_n, g, large, intra, inter, pxn=True)
    big = {N: t43.find(n=float(large), nodes=N)["nccl_vs_hier"] for N in nodes}
    small_x = [t43.find(n=float(small), nodes=N)["nccl_vs_hier"] for N in nodes]
    ring_wins = [N for N, v in big.items() if v < 1]
    hier_wins = [N for N, v in big.items() if v > 1]
    t43b = t43.part("04-3b")
    per_gpu = t43b.column("per_gpu")
    per_node = {r["nodes"]: r["per_node"] for r in t43b.rows}
    never = [N for N, v in per_node.items() if v == "never"]
    first = nodes[len(never)]
    one = VirtualCluster(TwoLevel(nodes[0], g, intra, inter, nics_per_node=1, pxn=True))
    one_x = all_reduce(one, nbytes=large).time / all_reduce(one, nbytes=large, algorithm="hierarchical").time
    return HierNccl(
        nic_nccl_n=used_n, nic_nccl_bytes=used_b, nccl_ex_s=t, nccl_win_hi=ring_wins[-1],
        nccl_win_x=1 / min(big.values()),
        nccl_bw_x=(2 * (g - 1) / (g * intra.beta) + 2 / (g * inter.beta)) / (2 * max(1 / intra.beta, 1 / (g * inter.beta))),
        nccl_small_lo_x=min(small_x), nccl_small_hi_x=max(small_x), nccl_lose_n=hier_wins[0],
        nccl_lose_x=big[hier_wins[0]], x_lo_bytes=per_gpu[0], x_hi_bytes=per_gpu[-1], one_nic_x=one_x,
        never_hi=never[-1], first_n=first, first_bytes=per_node[first])
