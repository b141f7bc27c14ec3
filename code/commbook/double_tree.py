"""NCCL's double binary tree: its shape, the closed-form time of its pipelined all-reduce
and the best chunk count.

Shape (recent NCCL releases, ``src/graph/trees.cc``: ``ncclGetBtree``/``ncclGetDtree``).
The first tree is a binary tree on ranks 0..p-1 rooted at 0 in which rank r > 0, with
lowest set bit b, hangs under ``(r xor b) | 2b`` (or ``r xor b`` when that is out of
range): odd ranks are leaves, even ranks inner nodes.  The second tree is the first one
mirrored (r -> p-1-r) when p is even and shifted by one rank (r -> r+1) when p is odd.
For even p every rank is an inner node of at most one tree; for odd p exactly one rank is
inner in both (two binary trees cannot both have ⌈p/2⌉ inner nodes among p ranks).

Algorithm (:func:`commbook.collectives.trees.allreduce_double_tree`).  Each tree carries
half of the buffer, cut into k chunks.  Reduce phase: a rank at depth d of a tree of
depth D sends its partial chunk c to its parent in round c + D - d (pipelined up the
tree); broadcast phase: a rank at depth d receives chunk c from its parent in round
c + d - 1.  Both trees run in the same rounds.  Each phase takes k + D - 1 rounds.

Closed form.  Under the timing model of :mod:`commbook.comm_sim` on a switch, a round
costs α + L·s/β, where s = n/(2k) is a chunk and L the most chunks any port sends or
receives in that round (1 or 2 for even p; up to 4 at the rank that is inner in both
trees for odd p).  :func:`allreduce_double_tree` counts L round by round from the tree
shape alone.  For p >= 3 and large k it tends to 2(k + D - 1)(α + n/(kβ)) with
D = ⌈log2 p⌉: the bandwidth term tends to 2n/β and the latency term grows with the depth,
which is the lower envelope 2·log2(p)·α + 2n/β quoted in textbooks (no chunk count
reaches it, see :func:`allreduce_double_tree_envelope`).  At p = 2 both trees are one
edge, each port moves one chunk per round, and the time is exactly 2kα + n/β.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .checks import check_count, check_link_params, check_p, check_size, finite_time
from .coefficients import Coefficients, closed_form_coefficients

__all__ = ["double_tree_parents", "tree_depths", "round_loads", "allreduce_double_tree",
           "double_tree_optimum", "allreduce_double_tree_envelope"]


def _btree_parents(p: int) -> np.ndarray:
    r = np.arange(p)
    low = r & -r                                   # lowest set bit (0 for rank 0)
    up = (r ^ low) | (low << 1)
    up = np.where(up >= p, r ^ low, up)
    up[0] = -1
    return up


def double_tree_parents(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Parent of every rank in each of the two trees (-1 at a root).

    Eight ranks: odd ranks are leaves of the first tree (root 0), the second is its mirror
    (root 7).

    >>> first, second = double_tree_parents(8)
    >>> first.tolist(), second.tolist()
    ([-1, 2, 4, 2, 0, 6, 4, 6], [1, 3, 1, 7, 5, 3, 5, -1])
    """
    return _double_tree_parents(check_p(p))


@functools.lru_cache(maxsize=256)
def _double_tree_parents(p: int) -> tuple[np.ndarray, np.ndarray]:
    first = _btree_parents(p)
    r = np.arange(p)
    if p % 2 == 0:                                 # mirror
        m = first[p - 1 - r]
        second = np.where(m < 0, -1, p - 1 - m)
    else:                                          # shift by one
        s = first[(r - 1) % p]
        second = np.where(s < 0, -1, (s + 1) % p)
    for t in (first, second):
        t.setflags(write=False)
    return first, second


def tree_depths(parents: np.ndarray) -> np.ndarray:
    """Depth of every rank (the root has depth 0).

    >>> tree_depths(double_tree_parents(8)[0]).tolist()
    [0, 3, 2, 3, 1, 3, 2, 3]
    >>> tree_depths(np.array([1, 0]))
    Traceback (most recent call last):
    ValueError: parents must name a rank 0..p-1 or -1 (a root) for every rank, with at least one root
    """
    parents = np.asarray(parents)
    if parents.ndim != 1 or parents.dtype.kind not in "iu" or parents.size == 0:
        raise TypeError(f"parents must be a non-empty 1-D integer array (a parent per rank), got {parents!r}"[:200])
    if ((parents < -1) | (parents >= parents.size)).any() or not (parents < 0).any():
        raise ValueError("parents must name a rank 0..p-1 or -1 (a root) for every rank, with at least one root")
    depth = np.full(parents.size, -1)
    depth[parents < 0] = 0
    while (depth < 0).any():
        known = depth[parents] >= 0
        todo = (depth < 0) & known
        if not todo.any():
            raise ValueError("parents has a cycle: some ranks never reach a root")
        depth[todo] = depth[parents[todo]] + 1
    return depth


@functools.lru_cache(maxsize=256)
def _port_profile(p: int):
    """Per tree: depth of the tree, depth of each rank, its number of children, whether it
    has a parent."""
    out = []
    for par in _double_tree_parents(p):
        depth = tree_depths(par)
        kids = np.bincount(par[par >= 0], minlength=p)
        out.append((int(depth.max()), depth, kids, par >= 0))
    return out


def round_loads(p: int, chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """Most chunks any port moves, round by round, in the reduce and broadcast phases.

    >>> [loads.tolist() for loads in round_loads(8, chunks=2)]     # reduce, broadcast
    [[2, 2, 2, 1], [1, 2, 2, 2]]
    """
    prof = _port_profile(check_p(p))
    D = max(d for d, *_ in prof)
    k = check_count(chunks, "chunks")
    rounds = np.arange(k + D - 1)[:, None]
    up_in = np.zeros((rounds.size, p), dtype=np.int64)
    up_out, down_in, down_out = (np.zeros_like(up_in) for _ in range(3))
    for Dt, depth, kids, child in prof:
        # reduce: a rank at depth d sends chunk r - (Dt - d) to its parent
        c = rounds - (Dt - depth)
        send = child & (c >= 0) & (c < k)
        up_out += send
        c_kids = rounds - (Dt - depth - 1)        # its children sit one level deeper
        up_in += kids * ((c_kids >= 0) & (c_kids < k))
        # broadcast: a rank at depth d receives chunk r - (d - 1) from its parent
        c = rounds - (depth - 1)
        down_in += child & (c >= 0) & (c < k)
        c_kids = rounds - depth
        down_out += kids * ((c_kids >= 0) & (c_kids < k))
    return np.maximum(up_in, up_out).max(axis=1), np.maximum(down_in, down_out).max(axis=1)


def allreduce_double_tree(p: int, n: float, alpha: float, beta: float, chunks: int | None = None) -> float:
    """Time of the pipelined double-binary-tree all-reduce with ``chunks`` chunks per tree
    (``None``: the best chunk count, :func:`double_tree_optimum`).

    At p = 2 both trees are one edge: 2kα + n/β.

    >>> round(allreduce_double_tree(2, 8e6, 1e-6, 1e9, chunks=4) * 1e3, 9)    # ms: 8 µs + 8 ms
    8.008
    """
    p, n = check_p(p), check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    k = None if chunks is None else check_count(chunks, "chunks")
    if p == 1:
        return 0.0
    if k is None:
        return double_tree_optimum(p, n, alpha, beta)[1]
    s = n / (2 * k)
    total = 0.0
    for loads in round_loads(p, k):
        busy = loads[loads > 0]
        total += busy.size * alpha + busy.sum() * s / beta
    return finite_time(total)


@functools.lru_cache(maxsize=256)
def _affine_coefficients(p: int) -> tuple[float, float, float, float] | None:
    """(a0, a1, b0, b1) such that the time is (a0 + a1·k)·α + (b0 + b1/k)·n/β, read off the
    exact count at k = 2 and 3 and checked at k = 1, 4, 16 and 64; ``None`` where the
    form does not hold (then the optimum is searched on the exact count alone)."""
    @functools.lru_cache(maxsize=None)
    def coef(k: int) -> Coefficients:
        return closed_form_coefficients(allreduce_double_tree, p, what="the double tree", chunks=k)

    steps = lambda k: coef(k).alpha_steps           # noqa: E731  (α count)
    load = lambda k: coef(k).beta_bytes_per_byte    # noqa: E731  (n/β factor)
    a1 = steps(3) - steps(2)
    a0 = steps(2) - 2 * a1
    b1 = (load(2) - load(3)) * 6
    b0 = load(2) - b1 / 2
    for k in (1, 4, 16, 64):
        if not (math.isclose(steps(k), a0 + a1 * k, rel_tol=1e-12)
                and math.isclose(load(k), b0 + b1 / k, rel_tol=1e-12)):
            return None
    return a0, a1, b0, b1


def double_tree_optimum(p: int, n: float, alpha: float, beta: float, k_max: int = 4096) -> tuple[int, float]:
    """The chunk count in 1..``k_max`` that minimizes :func:`allreduce_double_tree`, and
    that time.

    Where the time is affine in k and 1/k (every p tried except p = 2 and some odd p, see
    :func:`_affine_coefficients`) the optimum of (a0 + a1·k)α + (b0 + b1/k)n/β is
    k* = sqrt(b1·n/β / (a1·α)) and the best integer is next to it; otherwise the integers
    around sqrt((D − 1)·n/(αβ)) are searched on the exact count.

    >>> k, t = double_tree_optimum(8, 8e6, 1e-6, 1e9)
    >>> k, round(t * 1e3, 3), t == allreduce_double_tree(8, 8e6, 1e-6, 1e9, chunks=k)
    (110, 16.442, True)
    """
    p, n = check_p(p), check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    k_max = check_count(k_max, "k_max")
    if p == 1:
        return 1, 0.0
    cost = functools.lru_cache(maxsize=None)(lambda k: allreduce_double_tree(p, n, alpha, beta, k))
    coef = _affine_coefficients(p)
    if coef is not None:
        a0, a1, b0, b1 = coef
        k0 = min(_ratio(b1 * n / beta, a1 * alpha), k_max)
        candidates = {min(k_max, max(1, math.floor(k0) + d)) for d in (-1, 0, 1, 2)}
        best = min(candidates, key=lambda k: (cost(k), k))
        return best, cost(best)
    D = max(d for d, *_ in _port_profile(p))
    k0 = min(_ratio(max(D - 1, 1) * n / beta, alpha), k_max)
    lo, hi = 1, min(k_max, max(2, int(2 * k0) + 2))
    while hi - lo > 4:                              # ternary search on a near-convex curve
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if cost(m1) <= cost(m2):
            hi = m2
        else:
            lo = m1
    best = min(range(max(1, lo - 3), min(k_max, hi + 3) + 1), key=lambda k: (cost(k), k))
    return best, cost(best)


def _ratio(num: float, den: float) -> float:
    """sqrt(num / den), +inf where den is 0 or the quotient overflows (beta = 1e-300)."""
    if den <= 0 or math.isinf(num):
        return math.inf
    q = num / den
    return math.sqrt(q) if math.isfinite(q) else math.inf


def allreduce_double_tree_envelope(p: int, n: float, alpha: float, beta: float) -> float:
    """2·log2(p)·α + 2n/β: the textbook estimate of the double binary tree.  For p >= 3
    it is a lower envelope that no chunk count reaches (latency of the shallowest pipeline
    and bandwidth of the deepest at once); at p = 2 the tree is faster (2kα + n/β).

    >>> t = allreduce_double_tree_envelope(8, 8e6, 1e-6, 1e9)     # 2·3·α + 2·8 ms
    >>> round(t * 1e3, 9), t < double_tree_optimum(8, 8e6, 1e-6, 1e9)[1]
    (16.006, True)
    """
    p, n = check_p(p), check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    return 0.0 if p == 1 else finite_time(2 * math.log2(p) * alpha + 2 * n / beta)
