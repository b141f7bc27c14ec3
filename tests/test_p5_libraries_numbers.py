"""P5 §8 (libraries): the numbers its prose quotes (book/p5/libraries_numbers.py) and the
simulated custom all-reduces of its table, against the closed forms written out here."""
from __future__ import annotations

import math

import pytest

from commbook import llm
from commbook.book.p5 import libraries_numbers as N
from commbook.hardware import NVLINK4

P, A, B = 8, NVLINK4.alpha, NVLINK4.beta
CLOSED = {"ring": lambda n, p=P: 2 * (p - 1) * A + 2 * (p - 1) / p * n / B,
          "rd": lambda n, p=P: math.log2(p) * (A + n / B),
          "one_shot": lambda n, p=P: A + (p - 1) * n / B,
          "two_shot": lambda n, p=P: 2 * A + 2 * (p - 1) / p * n / B}


@pytest.fixture(scope="module")
def runs():
    return N.one_node_runs(P, NVLINK4)


def test_the_simulated_table_is_the_closed_forms(runs):
    assert [r.tokens for r in runs] == [1, 8, 64, 4096]
    for r in runs:
        assert r.n_bytes == r.tokens * llm.LLAMA31_70B.d_model * 2          # BF16 activations
        for algo, t in CLOSED.items():
            assert r.time(algo) == pytest.approx(t(r.n_bytes), rel=1e-12)
        assert r.best == min(CLOSED, key=lambda a: CLOSED[a](r.n_bytes))
        assert r.rounds == {"ring": 2 * (P - 1), "rd": 3, "one_shot": 1, "two_shot": 2}
    t = N.one_node_table(runs, P, NVLINK4)
    assert t.source == "commbook.book.p5.libraries_numbers.one_node_table"    # the table links its builder
    assert t.cells("zh")[0][-1] == "one-shot" and t.cells("en")[-1][3].endswith("(3)")


def test_one_shot_meets_two_shot_at_the_crossover(runs):
    c = N.custom_numbers(runs, P, NVLINK4)
    assert CLOSED["one_shot"](c.cross_bytes) == pytest.approx(CLOSED["two_shot"](c.cross_bytes))
    p = c.q_p
    assert CLOSED["one_shot"](c.q_cross_bytes, p) == pytest.approx(CLOSED["two_shot"](c.q_cross_bytes, p))
    assert c.ring_rounds == 14 and c.calls == 160


def test_nccl_effective_alpha_costs_a_decode_step():
    x = N.nccl_numbers(P, NVLINK4)
    n = llm.LLAMA31_70B.d_model * 2
    assert x.dec_s == pytest.approx(2 * (P - 1) * x.alpha_eff_s + 2 * (P - 1) / P * n / B)
    assert x.step_link_s == pytest.approx(160 * CLOSED["ring"](n))


def test_mpi_rounds():
    m = N.mpi_numbers(1024)
    assert (m.rab, m.ring) == (20, 2046) and m.lb == pytest.approx(2 * 1023 / 1024)
