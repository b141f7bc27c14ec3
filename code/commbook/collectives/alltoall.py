"""All-to-all schedules: the direct shift exchange and the rail-aligned hierarchical
exchange of a two-level cluster.

Rank i's input (IN) is cut into blocks by ``bounds``; block j goes to rank j, which stores
the blocks in source order in OUT.  Offsets and sizes are element counts (bytes in a
size-only run)."""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round
from ..topology import TwoLevel
from .direct import shift_rounds
from .schedule import IN, OUT, TMP


def alltoall_direct(bounds: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """q - 1 shift rounds (plus the free local copy): rank i sends block d to rank d.
    Returns the rounds and the staging length per rank (none)."""
    q = bounds.size - 1
    size = np.diff(bounds)
    rounds = shift_rounds(q, lambda i, d: (bounds[d], size[d], i * size[d]), "all-to-all")
    return rounds, np.zeros(q, dtype=size.dtype)


def alltoall_hierarchical(topology: TwoLevel, bounds: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """Inside each node, regroup the blocks by destination rail (G rounds); then each rail
    exchanges across nodes (N rounds), landing every block on its final GPU.

    Returns the rounds and the staging (TMP) length each rank needs."""
    if not isinstance(topology, TwoLevel):
        raise ValueError(f"the hierarchical all-to-all needs a TwoLevel topology, got {topology.name}")
    N, G = topology.nodes, topology.gpus_per_node
    size = np.diff(bounds)
    q = N * G
    v = np.arange(q)
    node, local = v // G, v % G
    # staging at rank (a, g'): for every destination node b, the blocks [g] for (b, g')
    dest = np.arange(N)[:, None] * G + np.arange(G)[None, :]   # (N, G): rank of (b, g')
    seg = G * size[dest]                                        # segment per (b, g')
    seg_off = np.cumsum(seg, axis=0) - seg                      # offset of segment b on rail g'
    tmp_len = seg.sum(axis=0)[local]
    rounds = []
    nodes_b = np.arange(N)
    for j in range(G):  # intra-node regroup by destination rail (j = 0 is local)
        gd = (local + j) % G
        b_ = np.tile(nodes_b, q)
        w = b_ * G + np.repeat(gd, N)                            # final destination
        cnt = size[w]
        do = seg_off[b_, np.repeat(gd, N)] + np.repeat(local, N) * cnt
        rounds.append(Round.make(np.repeat(v, N), np.repeat(node * G + gd, N), cnt, bounds[w], do,
                                 sbuf=IN, dbuf=TMP, label=f"intra regroup {j}"))
    for j in range(N):  # across nodes on each rail (j = 0 is local)
        b_ = (node + j) % N
        dst = b_ * G + local
        rounds.append(Round.make(v, dst, G * size[dst], seg_off[b_, local], node * G * size[dst],
                                 sbuf=TMP, dbuf=OUT, label=f"rail exchange {j}"))
    return rounds, tmp_len
