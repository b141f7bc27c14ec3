"""commbook.collectives.check_reduction: the collectives' float tolerance, for a reader's outputs.

Against numpy: the ring's float32 output on data whose sums cancel is not what
``np.allclose`` accepts (its absolute tolerance 1e-8 ignores the summands' size), yet it is
within the stated bound 4·p·eps·Σ|x|; an output off by more than that bound is refused;
integers must match exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

from commbook.collectives import CheckError, all_reduce, check_reduction
from commbook.hardware import NVLINK4
from commbook.topology import Switch


def _cancelling(p=8, n=4096, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(p)]


def test_ring_float32_passes_where_allclose_fails():
    data = _cancelling()
    outs = all_reduce(Switch(8, NVLINK4), data, check=False).outputs
    assert not np.allclose(outs[0], np.sum(data, axis=0))     # numpy's own check refuses it
    check_reduction(outs, data)                                 # the stated tolerance accepts it


def test_beyond_the_bound_is_refused():
    data = _cancelling()
    eps, bound = np.finfo(np.float32).eps, np.abs(np.stack(data)).sum(axis=0)
    bad = np.sum(data, axis=0, dtype=np.float64)
    bad[7] += 8 * (4 * 8 * eps * bound[7])                      # eight times the bound
    with pytest.raises(CheckError, match="element 7"):
        check_reduction(bad.astype(np.float32), data)


def test_integers_exact_and_bad_input():
    data = [np.arange(5), np.arange(5)]
    check_reduction(np.arange(0, 10, 2), data)
    with pytest.raises(CheckError, match="element 4"):
        check_reduction(np.array([0, 2, 4, 6, 9]), data)
    with pytest.raises(CheckError, match="shape"):
        check_reduction(np.arange(4), data)
    with pytest.raises(ValueError, match="unknown op 'mean'"):
        check_reduction(np.arange(5), data, op="mean")
    with pytest.raises(TypeError, match="data must be"):
        check_reduction(np.arange(5), np.arange(5))
