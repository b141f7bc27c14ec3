"""All-to-all schedules: the direct shift exchange and the rail-aligned hierarchical
exchange of a two-level cluster, for equal blocks and (hierarchical) variable counts.

Rank i's input (IN) is cut into blocks by ``bounds`` (or by a count matrix in the
all-to-all-v); block j goes to rank j, which stores the blocks in source order in OUT.
Offsets and sizes are element counts (bytes in a size-only run)."""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round
from ..topology import TwoLevel
from .direct import shift_rounds
from .schedule import IN, OUT, TMP


def alltoall_direct(bounds: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """q - 1 shift rounds (plus the free local copy): rank i sends block d to rank d.
    Returns the rounds and the staging length per rank (none).

    Four ranks, blocks of 2: the free local copy, then three shifts.

    >>> rounds, staging = alltoall_direct(np.array([0, 2, 4, 6, 8]))
    >>> len(rounds), rounds[1].dst.tolist(), rounds[1].soff.tolist(), staging.tolist()
    (4, [1, 2, 3, 0], [2, 4, 6, 0], [0, 0, 0, 0])
    """
    q = bounds.size - 1
    size = np.diff(bounds)
    rounds = shift_rounds(q, lambda i, d: (bounds[d], size[d], i * size[d]), "all-to-all")
    return rounds, np.zeros(q, dtype=size.dtype)


def alltoall_hierarchical(topology: TwoLevel, bounds: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """Inside each node, regroup the blocks by destination rail (G rounds); then each rail
    exchanges across nodes (N rounds), landing every block on its final GPU.

    Returns the rounds and the staging (TMP) length each rank needs.

    Two nodes of two GPUs: regroup inside the node, then one exchange per rail.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> rounds, staging = alltoall_hierarchical(TwoLevel(2, 2, NVLINK4, IB_NDR), np.array([0, 1, 2, 3, 4]))
    >>> [r.label for r in rounds], staging.tolist()
    (['intra regroup 0', 'intra regroup 1', 'rail exchange 0', 'rail exchange 1'], [4, 4, 4, 4])
    """
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


def alltoall_v_direct(counts: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """Variable counts, direct: q - 1 shift rounds in which rank i sends its segment for
    rank d, ``counts[i, d]`` items; rank d stores the segments in source order.
    Returns the rounds and the staging length per rank (none).

    >>> counts = np.array([[0, 1, 2], [3, 0, 1], [2, 2, 0]])          # counts[i, j]: from rank i to rank j
    >>> rounds, _ = alltoall_v_direct(counts)
    >>> rounds[1].src.tolist(), rounds[1].dst.tolist(), rounds[1].count.tolist()
    ([0, 1, 2], [1, 2, 0], [1, 1, 2])
    """
    q = counts.shape[0]
    sdisp = np.cumsum(counts, axis=1) - counts
    rdisp = np.cumsum(counts, axis=0) - counts
    rounds = shift_rounds(q, lambda i, d: (sdisp[i, d], counts[i, d], rdisp[i, d]), "all-to-all-v")
    return rounds, np.zeros(q, dtype=counts.dtype)


def alltoall_v_hierarchical(topology: TwoLevel, counts: np.ndarray) -> tuple[list[Round], np.ndarray]:
    """The rail-aligned hierarchical exchange with variable counts (all-to-all-v).

    ``counts[i, j]`` items go from rank i to rank j; rank i's input holds its outgoing
    segments in destination order and rank j's output receives them in source order
    (the layout of the direct all-to-all-v).  With ranks (a, g) = node a, GPU g:

    1. **Regroup inside the node** (G rounds, round 0 a free local copy): rank (a, g)
       sends to (a, g') everything it has for GPU g' of every node b.  Rank (a, g')
       stages it in TMP by destination node b, and inside that by source GPU g.
    2. **Exchange across nodes on each rail** (N rounds, round 0 local): rank (a, g')
       sends the segment for node b, one message, to (b, g').  The segment's blocks come
       from (a, 0), …, (a, G-1) in that order, which is exactly where they belong in the
       receiver's source-ordered output.

    Returns the rounds and the staging (TMP) length each rank needs.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> counts = np.arange(16).reshape(4, 4)
    >>> rounds, staging = alltoall_v_hierarchical(TwoLevel(2, 2, NVLINK4, IB_NDR), counts)
    >>> [r.label for r in rounds], staging.tolist()      # TMP: all node a has for GPU g' anywhere
    (['intra regroup (v) 0', 'intra regroup (v) 1', 'rail exchange (v) 0', 'rail exchange (v) 1'], [12, 16, 44, 48])
    """
    if not isinstance(topology, TwoLevel):
        raise ValueError(f"the hierarchical all-to-all-v needs a TwoLevel topology, got {topology.name}")
    N, G = topology.nodes, topology.gpus_per_node
    q = N * G
    C = np.asarray(counts)
    if C.shape != (q, q):
        raise ValueError(f"counts must have shape ({q}, {q}) for {topology.name}, got {C.shape}")
    sdisp = np.cumsum(C, axis=1) - C                    # where rank i's segment for j starts
    rdisp = np.cumsum(C, axis=0) - C                    # where rank j stores i's segment
    C4 = C.reshape(N, G, N, G)                          # [a, g, b, g']
    seg = C4.sum(axis=1)                                # [a, b, g']: staged at (a, g') for node b
    seg_off = np.cumsum(seg, axis=1) - seg              # offset of node b's segment at (a, g')
    inner = np.cumsum(C4, axis=1) - C4                  # offset of source g inside that segment
    tmp_len = seg.sum(axis=1).reshape(q)                # rank (a, g') = a*G + g'
    v = np.arange(q)
    node, local = v // G, v % G
    b = np.arange(N)
    rounds = []
    for j in range(G):  # intra-node regroup by destination rail (j = 0 is local)
        gd = (local + j) % G                            # destination GPU g' of rank v
        a_, g_, b_ = np.repeat(node, N), np.repeat(local, N), np.tile(b, q)
        g2 = np.repeat(gd, N)
        w = b_ * G + g2                                 # final destination rank
        src = np.repeat(v, N)
        rounds.append(Round.make(src, a_ * G + g2, C4[a_, g_, b_, g2], sdisp[src, w],
                                 seg_off[a_, b_, g2] + inner[a_, g_, b_, g2],
                                 sbuf=IN, dbuf=TMP, label=f"intra regroup (v) {j}"))
    for j in range(N):  # across nodes on each rail (j = 0 is local)
        bd = (node + j) % N
        dst = bd * G + local
        rounds.append(Round.make(v, dst, seg[node, bd, local], seg_off[node, bd, local],
                                 rdisp[node * G, dst], sbuf=TMP, dbuf=OUT,
                                 label=f"rail exchange (v) {j}"))
    return rounds, tmp_len
