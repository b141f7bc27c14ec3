"""NCCL's pipelined double binary tree: commbook.double_tree (shape, closed form, best chunk
count) and its schedule (commbook.collectives.trees.allreduce_double_tree).

The simulator is checked against the closed form, the real-data runs against numpy, the
tree shape against NCCL's own diagrams (src/graph/trees.cc) and against properties
derived here, and the closed form against a brute-force optimum and its large-k limit.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from commbook import cost
from commbook.collectives import all_reduce, predict
from commbook.comm_sim import VirtualCluster
from commbook.double_tree import (allreduce_double_tree, allreduce_double_tree_envelope,
                                  double_tree_optimum, double_tree_parents, tree_depths)
from commbook.hardware import IB_NDR, NVLINK4, Link
from commbook.topology import Switch, TwoLevel
from commbook.units import MB

NV, IB = NVLINK4, IB_NDR
A, B = NV.alpha, NV.beta


def sim(p, n, chunks=None, link=NV):
    return all_reduce(VirtualCluster(Switch(p, link)), nbytes=n, algorithm="double_tree", chunks=chunks)


# ============================================================================ simulator = closed form
@pytest.mark.parametrize("p", [2, 3, 4, 7, 8, 16, 256])
@pytest.mark.parametrize("chunks", [1, 2, 5, 16])
def test_simulated_time_equals_closed_form(p, chunks):
    for n in (0.0, 1e3, 123_457.0, 256e6):
        got = sim(p, n, chunks).time
        want = allreduce_double_tree(p, n, A, B, chunks)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-18), n
        assert predict("all_reduce", "double_tree", p, n, A, B, chunks=chunks) == want
    assert sim(p, 4e6, chunks, IB).time == pytest.approx(allreduce_double_tree(p, 4e6, IB.alpha, IB.beta, chunks),
                                                         rel=1e-12)


@pytest.mark.parametrize("p", [2, 3, 4, 7, 8, 16, 256])
def test_default_chunk_count_is_the_optimum_on_the_switch_link(p):
    for n in (1e3, 4e6, 256e6):
        k, t = double_tree_optimum(p, n, A, B)
        res = sim(p, n)                                        # chunks=None
        assert res.time == pytest.approx(t, rel=1e-12)
        assert res.time == pytest.approx(sim(p, n, k).time, rel=1e-12)
        assert res.time == pytest.approx(allreduce_double_tree(p, n, A, B), rel=1e-12)


def test_bad_chunk_counts_and_topologies_without_one_link():
    with pytest.raises(ValueError, match=r"chunks must be an integer >= 1, got 0"):
        sim(4, 1e6, 0)
    with pytest.raises(ValueError, match=r"chunks must be an integer >= 1"):
        allreduce_double_tree(4, 1e6, A, B, chunks=2.5)
    with pytest.raises(ValueError, match=r"give chunks= for the double tree"):
        all_reduce(VirtualCluster(TwoLevel(2, 2, NV, IB)), nbytes=1e6, algorithm="double_tree")


# ============================================================================ real data
@pytest.mark.parametrize("p", [2, 3, 4, 7, 8, 16])
def test_real_data_equals_numpy(p):
    c = VirtualCluster(Switch(p, NV))
    rng = np.random.default_rng(p)
    for n in (0, 1, 5, 37, 100):
        x = [rng.integers(-10**9, 10**9, n) for _ in range(p)]
        want = np.sum(np.stack(x), axis=0) if n else np.zeros(0, np.int64)
        f = [rng.standard_normal(n) for _ in range(p)]
        fwant = np.sum(np.stack(f), axis=0) if n else np.zeros(0)
        tol = 4 * p * np.finfo(np.float64).eps * np.sum(np.abs(np.stack(f)), axis=0) if n else 0
        for k in (1, 2, 3, 5, 16, 64):                        # 64 > every n here: empty chunks
            for r, out in enumerate(all_reduce(c, x, algorithm="double_tree", chunks=k, check=False).outputs):
                np.testing.assert_array_equal(out, want, err_msg=f"p={p} n={n} k={k} rank {r}")
            for out in all_reduce(c, f, algorithm="double_tree", chunks=k, check=False).outputs:
                assert np.all(np.abs(out - fwant) <= tol), (p, n, k)
        m = [rng.integers(-9, 10, n).astype(np.int64) for _ in range(p)]
        got = all_reduce(c, m, algorithm="double_tree", chunks=3, op="max", check=False).outputs[-1]
        np.testing.assert_array_equal(got, np.max(np.stack(m), axis=0) if n else m[0])


@pytest.mark.parametrize("p,k", [(3, 4), (8, 5), (16, 2)])
def test_real_data_time_equals_closed_form_when_chunks_divide(p, k):
    n_elems = 2 * k * 7
    x = [np.ones(n_elems, np.float32) for _ in range(p)]
    res = all_reduce(VirtualCluster(Switch(p, NV)), x, algorithm="double_tree", chunks=k)
    assert res.time == pytest.approx(allreduce_double_tree(p, n_elems * 4, A, B, k), rel=1e-12)


# ============================================================================ tree shape
def _depths(parents: np.ndarray) -> list[int]:
    """Depth of every rank by walking up to the root (independent of tree_depths);
    fails on a cycle or a dangling parent."""
    p = parents.size
    out = []
    for r in range(p):
        d, v = 0, r
        while parents[v] >= 0:
            assert 0 <= parents[v] < p and parents[v] != v, f"rank {v}: bad parent {parents[v]}"
            v, d = int(parents[v]), d + 1
            assert d <= p, f"cycle through rank {r}"
        out.append(d)
    return out


def _inner(parents: np.ndarray) -> set[int]:
    return set(int(v) for v in parents[parents >= 0])


SHAPE_PS = list(range(2, 70)) + [127, 128, 129, 255, 256, 257]


@pytest.mark.parametrize("p", SHAPE_PS)
def test_two_spanning_binary_trees(p):
    trees = double_tree_parents(p)
    assert len(trees) == 2
    for t in trees:
        assert t.shape == (p,)
        roots = np.flatnonzero(t < 0)
        assert roots.size == 1                                  # one root
        depth = _depths(t)                                      # every rank reaches it
        np.testing.assert_array_equal(tree_depths(t), depth)
        kids = np.bincount(t[t >= 0], minlength=p)
        assert kids.max() <= 2                                  # binary
        assert kids[roots[0]] == 1                              # NCCL's root hangs one subtree
        # depth: both trees are exactly ceil(log2 p) deep (found for every p tested here;
        # a root with one child above a complete-as-possible binary tree)
        assert max(depth) == math.ceil(math.log2(p)), (p, max(depth))
    # the two trees use different roots (NCCL: 0 and p-1, or 1 when p is odd)
    assert [int(np.flatnonzero(t < 0)[0]) for t in trees] == [0, 1 if p % 2 else p - 1]


@pytest.mark.parametrize("p", SHAPE_PS)
def test_inner_ranks_of_the_two_trees(p):
    """Even p: no rank is inner (has a child) in both trees, so each rank forwards at
    most one tree's traffic.  Odd p: exactly one rank is inner in both.

    Why odd p must share one: each tree's root has a single child and every other inner
    rank at most two, so a tree with i inner ranks has at most 1 + 2(i - 1) edges; it needs
    p - 1, hence i >= p/2, i.e. i >= (p + 1)/2 for odd p.  Two disjoint sets of (p + 1)/2
    ranks do not fit in p ranks, so at least one rank is inner in both; NCCL's shifted
    tree makes it exactly one (rank 0).  For even p, i >= p/2 allows two disjoint halves,
    and the mirrored tree achieves it."""
    first, second = (_inner(t) for t in double_tree_parents(p))
    both = first & second
    if p % 2 == 0:
        assert both == set()
    else:
        assert both == {0}
    assert len(first) >= p / 2 and len(second) >= p / 2


# The parent arrays drawn in NCCL's src/graph/trees.cc (NVIDIA/nccl, commit
# 18a07eeebe485ae00755615ced44739d20970560), comment above ncclGetDtree: a 12-rank double
# tree (second tree mirrored) and a 13-rank one (second tree shifted by one rank),
# transcribed edge by edge from the ASCII diagrams.
NCCL_DIAGRAM = {
    12: ([-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 8, 10],      # 0-8; 8: 4, 10; 4: 2, 6; 10: 9, 11 ...
         [1, 3, 1, 11, 5, 7, 5, 3, 9, 7, 9, -1]),      # 11-3; 3: 1, 7; 1: 0, 2; 7: 5, 9 ...
    13: ([-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8],  # 0-8; 8: 4, 12; 12: 10; 10: 9, 11 ...
         [9, -1, 3, 5, 3, 9, 7, 5, 7, 1, 11, 0, 11]),  # 1-9; 9: 5, 0; 0: 11; 11: 10, 12 ...
}


@pytest.mark.parametrize("p", sorted(NCCL_DIAGRAM))
def test_parents_match_nccl_diagrams(p):
    for tree, want in zip(double_tree_parents(p), NCCL_DIAGRAM[p]):
        assert tree.tolist() == want


# ============================================================================ best chunk count
@pytest.mark.parametrize("p,n,link", [(8, 256 * MB, NV), (7, 1 * MB, NV), (16, 4 * MB, IB),
                                      (3, 64e3, NV), (2, 8 * MB, IB), (64, 100 * MB, IB)])
def test_optimum_is_the_brute_force_minimum(p, n, link):
    k_max = 300
    times = [allreduce_double_tree(p, n, link.alpha, link.beta, k) for k in range(1, k_max + 1)]
    k, t = double_tree_optimum(p, n, link.alpha, link.beta, k_max=k_max)
    assert t == min(times)
    assert k == 1 + int(np.argmin(times))                      # the smallest minimizing k
    assert t == allreduce_double_tree(p, n, link.alpha, link.beta, k)


def test_optimum_without_latency_is_the_largest_chunk_count():
    free = Link("no latency", 0.0, B, "test")
    k, t = double_tree_optimum(8, 1e6, free.alpha, free.beta, k_max=50)
    assert k == 50 and t == min(allreduce_double_tree(8, 1e6, 0.0, B, j) for j in range(1, 51))


# ============================================================================ limits
def _large_k_form(p, n, alpha, beta, k):
    """2(k + D - 1)(α + n/(kβ)): 2(k + D - 1) rounds (each phase fills a pipeline of depth D
    with k chunks) in which a port moves two chunks of n/(2k) (one per tree)."""
    D = max(_depths(double_tree_parents(p)[0]))
    return 2 * (k + D - 1) * (alpha + n / (k * beta))


@pytest.mark.parametrize("p", [3, 4, 7, 8, 16, 256])
def test_large_chunk_counts_approach_the_pipeline_form(p):
    for n in (1 * MB, 256 * MB):
        gaps = []
        for k in (1, 4, 16, 64, 256, 1024, 4096):
            t, big = allreduce_double_tree(p, n, A, B, k), _large_k_form(p, n, A, B, k)
            # only the rounds that fill and drain the pipelines move one chunk, not two
            assert -1e-12 * big <= big - t <= 2 * n / (k * B) + 1e-12 * big, (p, n, k)
            gaps.append((big - t) / big)
        assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 1e-3


@pytest.mark.parametrize("p", [3, 4, 7, 8, 16, 256])
def test_bandwidth_term_tends_to_two_n_over_beta(p):
    n = 256 * MB
    bw = [allreduce_double_tree(p, n, 0.0, B, k) * B / (2 * n) for k in (1, 16, 256, 4096)]
    assert bw == sorted(bw, reverse=True)
    assert 1 - 1e-12 <= bw[-1] < 1.002


@pytest.mark.parametrize("p", [3, 4, 5, 7, 8, 13, 16, 64, 256])
def test_textbook_envelope_lies_below_every_chunk_count(p):
    """The chapter's T ≈ 2·log2(N)·α + 2M/β is a lower envelope: no k reaches it."""
    for link in (NV, IB):
        for n in (4e3, 1 * MB, 256 * MB):
            env = allreduce_double_tree_envelope(p, n, link.alpha, link.beta)
            assert env == pytest.approx(2 * math.log2(p) * link.alpha + 2 * n / link.beta, rel=1e-12)
            best = min(allreduce_double_tree(p, n, link.alpha, link.beta, k) for k in range(1, 400))
            assert env < best, (p, n, link.name)


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_two_ranks_follow_the_documented_limits(k):
    """At p = 2 both trees are one edge: each port moves one chunk of n/(2k) per round, k
    rounds up and k down, so 2kα + n/β exactly — below the textbook envelope at k = 1,
    which the docstrings therefore restrict to p >= 3."""
    n = 256 * MB
    assert allreduce_double_tree(2, n, A, B, k) == pytest.approx(2 * k * A + n / B, rel=1e-12)
    assert allreduce_double_tree(2, n, A, B, 1) < allreduce_double_tree_envelope(2, n, A, B)


# ============================================================================ against ring
def test_pipelined_double_tree_against_ring_at_p8_256mb_nvlink():
    """With one chunk per tree the schedule is the old unpipelined one (two binomial
    trees): 1.68x slower than ring.  Pipelined at its best k it is 1.28x slower."""
    c = VirtualCluster(Switch(8, NV))
    n = 256 * MB
    ring = all_reduce(c, nbytes=n).time
    binomial = all_reduce(c, nbytes=n, algorithm="double_binomial").time
    dtree = all_reduce(c, nbytes=n, algorithm="double_tree")
    assert binomial == pytest.approx(cost.allreduce_double_binomial(8, n, A, B), rel=1e-12)
    assert binomial / ring == pytest.approx(1.68, abs=0.005)
    assert double_tree_optimum(8, n, A, B)[0] == 21
    assert dtree.time / ring == pytest.approx(1.281, abs=0.0005)
    assert dtree.time < binomial
    # each tree moves its half up once and down once over p - 1 edges: 2(p-1)·n in all,
    # on average the all-reduce lower bound 2(p-1)/p·n per rank (Patarasuk & Yuan)
    assert dtree.bytes_sent.sum() == pytest.approx(8 * cost.lower_bound_bytes("all_reduce", 8, n), rel=1e-12)
    assert dtree.bytes_received.sum() == pytest.approx(dtree.bytes_sent.sum(), rel=1e-12)
