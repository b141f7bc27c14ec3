"""Copy-on-write of lent inputs (commbook.buffers): a run on read-only inputs ends exactly
as the same run on writable copies (the engine's in-place semantics, checked elsewhere
against numpy), never changes the inputs, and never returns an output that aliases one."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from commbook.buffers import Buffers
from commbook.collectives import all_reduce, broadcast, reduce_scatter
from commbook.comm_sim import Round, VirtualCluster
from commbook.hardware import NVLINK4
from commbook.topology import Switch

Q, NBUF, LEN = 3, 2, 12


@st.composite
def rounds(draw):
    out = []
    for _ in range(draw(st.integers(1, 4))):
        msgs = []
        for _ in range(draw(st.integers(1, 4))):
            c = draw(st.integers(0, LEN))
            msgs.append((draw(st.integers(0, Q - 1)), draw(st.integers(0, Q - 1)), c,
                         draw(st.integers(0, LEN - c)), draw(st.integers(0, LEN - c)),
                         draw(st.integers(0, NBUF - 1)), draw(st.integers(0, NBUF - 1)), draw(st.booleans())))
        src, dst, cnt, so, do, sb, db, red = map(list, zip(*msgs))
        out.append(Round.make(src, dst, cnt, so, do, sb, db, red, innet=False))
    return out


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    return [[rng.integers(-50, 50, LEN).astype(np.int64) for _ in range(NBUF)] for _ in range(Q)]


@settings(max_examples=150, deadline=None)
@given(rounds(), st.integers(0, 2**31), st.sampled_from(["sum", "max", "prod"]))
def test_lent_inputs_end_as_writable_copies_do(schedule, seed, op):
    cluster = VirtualCluster(Switch(Q, NVLINK4))
    data = _inputs(seed)
    eager = [[b.copy() for b in bufs] for bufs in data]
    lent = []
    for bufs in data:
        row = []
        for b in bufs:
            v = b.view()
            v.flags.writeable = False
            row.append(v)
        lent.append(row)
    r1 = cluster.run(schedule, buffers=eager, op=op, itemsize=8, trace=True)
    r2 = cluster.run(schedule, buffers=lent, op=op, itemsize=8, trace=True)
    for r in range(Q):
        for j in range(NBUF):
            assert np.array_equal(lent[r][j], eager[r][j])
            assert lent[r][j].flags.writeable and not np.shares_memory(lent[r][j], data[r][j])
    for s1, s2 in zip(r1.trace, r2.trace):
        assert all(np.array_equal(a, b) for x, y in zip(s1.state, s2.state) for a, b in zip(x, y))
    assert all(np.array_equal(b, c) for bufs, ref in zip(data, _inputs(seed)) for b, c in zip(bufs, ref))


def test_reduce_into_an_unwritten_region_reads_the_input():
    x = np.arange(6.0)
    v = x.view()
    v.flags.writeable = False
    store = Buffers([[v]])
    store.write(0, 0, 2, 4, np.array([10.0, 20.0]), np.add)   # reads the input as left operand
    assert np.array_equal(store.read(0, 0, 0, 6), [0, 1, 12, 23, 4, 5])
    store.write(0, 0, 3, 6, np.ones(3), None)                   # overlaps the written part
    store.finish()
    assert np.array_equal(store.lists[0][0], [0, 1, 12, 1, 1, 1])
    assert np.array_equal(x, np.arange(6.0))


def test_collectives_leave_the_callers_arrays_alone_and_do_not_alias_them():
    cluster = VirtualCluster(Switch(4, NVLINK4))
    data = [np.arange(10.0) * (r + 1) for r in range(4)]
    before = [d.copy() for d in data]
    for res in (all_reduce(cluster, data, algorithm="ring"), all_reduce(cluster, data, algorithm="one_shot"),
                broadcast(cluster, data, algorithm="binomial", root=2), reduce_scatter(cluster, data)):
        for out in res.outputs:
            assert not any(np.shares_memory(out, d) for d in data)
    assert all(np.array_equal(a, b) and a.flags.writeable for a, b in zip(data, before))
