"""The one reading of a closed form's coefficients (commbook.coefficients,
commbook.collectives.coefficients), held to the textbook forms derived by hand:

* ring all-reduce: reduce-scatter then all-gather, p − 1 steps each of n/p bytes:
  2(p − 1) α and 2(p − 1)/p · n/β;
* recursive doubling all-reduce: log₂p exchanges of the whole buffer: log₂p and log₂p;
* Rabenseifner: recursive halving then doubling: 2·log₂p and 2(p − 1)/p;
* binomial-tree all-reduce (reduce then broadcast): 2·log₂p and 2·log₂p;
* ring reduce-scatter / all-gather: p − 1 and (p − 1)/p; recursive halving / doubling:
  log₂p and (p − 1)/p;
* binomial broadcast: ⌈log₂p⌉ rounds of the whole buffer;
* pipelined chain broadcast with k chunks: p + k − 2 steps of n/k bytes;
* direct (pairwise) all-to-all: p − 1 steps of n/p bytes.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from commbook.coefficients import Coefficients, closed_form_coefficients
from commbook.collectives import coefficients, predict
from commbook.measure import model_coefficients

LOG2 = lambda p: math.log2(p)  # noqa: E731


HAND = [
    ("all_reduce", "ring", {}, lambda p: (2 * (p - 1), 2 * (p - 1) / p), (2, 3, 8, 12, 64)),
    ("all_reduce", "rd", {}, lambda p: (LOG2(p), LOG2(p)), (2, 8, 64)),
    ("all_reduce", "rabenseifner", {}, lambda p: (2 * LOG2(p), 2 * (p - 1) / p), (2, 8, 64)),
    ("all_reduce", "tree", {}, lambda p: (2 * LOG2(p), 2 * LOG2(p)), (2, 8, 64)),
    ("reduce_scatter", "ring", {}, lambda p: (p - 1, (p - 1) / p), (2, 5, 8)),
    ("all_gather", "ring", {}, lambda p: (p - 1, (p - 1) / p), (2, 5, 8)),
    ("reduce_scatter", "rh", {}, lambda p: (LOG2(p), (p - 1) / p), (2, 8, 64)),
    ("all_gather", "rd", {}, lambda p: (LOG2(p), (p - 1) / p), (2, 8, 64)),
    ("broadcast", "binomial", {}, lambda p: (math.ceil(LOG2(p)),) * 2, (2, 5, 8, 9)),
    ("broadcast", "chain", {"chunks": 4}, lambda p: (p + 2, (p + 2) / 4), (2, 8, 16)),
    ("all_to_all", "direct", {}, lambda p: (p - 1, (p - 1) / p), (2, 5, 8)),
]


@pytest.mark.parametrize("collective,name,params,form,ps", HAND, ids=[f"{c}-{n}" for c, n, *_ in HAND])
def test_coefficients_are_the_hand_derived_forms(collective, name, params, form, ps):
    for p in ps:
        c = coefficients(collective, name, p, **params)
        steps, factor = form(p)
        assert c.alpha_steps == pytest.approx(steps, rel=1e-12), (p, c)
        assert c.beta_bytes_per_byte == pytest.approx(factor, rel=1e-12), (p, c)


def test_the_coefficients_give_back_the_closed_form():
    for collective, name, params, _, ps in HAND:
        for p in ps:
            c = coefficients(collective, name, p, **params)
            for n, a, b in ((0.0, 2e-6, 50e9), (3e5, 5e-6, 25e9), (4e9, 1e-6, 450e9)):
                assert c.time(n, a, b) == pytest.approx(predict(collective, name, p, n, a, b, **params), rel=1e-9)


def test_any_callable_and_the_refusal_of_a_form_that_is_not_affine():
    assert closed_form_coefficients(lambda p, n, a, b: 3 * a + n / b, 4) == Coefficients(3.0, 1.0)
    with pytest.raises(ValueError, match="not linear"):
        closed_form_coefficients(lambda p, n, a, b: a + (n / b) ** 2, 4)
    with pytest.raises(ValueError, match="all_reduce/double_tree"):    # picks its chunks from alpha and beta
        coefficients("all_reduce", "double_tree", 8)
    fixed = coefficients("all_reduce", "dbtree", 8, chunks=4)         # an alias, fixed chunks: affine
    assert fixed.time(1e6, 2e-6, 50e9) == pytest.approx(predict("all_reduce", "double_tree", 8, 1e6, 2e-6, 50e9,
                                                                chunks=4), rel=1e-9)


def test_the_fit_reads_the_same_coefficients():
    sizes = [0.0, 1e3, 1e6, 1e9]
    a, b = model_coefficients("all_reduce", "ring", 16, sizes)
    assert a.tolist() == [30.0] * 4 and np.allclose(b, [30 / 16 * n for n in sizes], rtol=1e-12)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="p"):
        coefficients("all_reduce", "ring", 0)
    with pytest.raises(ValueError, match="all_reduce algorithm"):
        coefficients("all_reduce", "fastest", 8)
    with pytest.raises(ValueError, match="takes no parameter"):
        coefficients("all_reduce", "ring", 8, chunks=2)
