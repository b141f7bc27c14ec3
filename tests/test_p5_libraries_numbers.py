"""P5 §8 (libraries): the numbers its prose quotes (book/p5/libraries_numbers.py) and the
simulated custom all-reduces of its table, against the closed forms written out here."""
from __future__ import annotations

import math

import pytest

from commbook import llm
from commbook.book.p5 import libraries_numbers as N
from commbook.collectives import all_reduce
from commbook.comm_sim import VirtualCluster
from commbook.hardware import NVLINK4
from commbook.topology import Switch

P, A, B = 8, NVLINK4.alpha, NVLINK4.beta
CLOSED = {"ring": lambda n, p=P: 2 * (p - 1) * A + 2 * (p - 1) / p * n / B,
          "rd": lambda n, p=P: math.log2(p) * (A + n / B),
          "one_shot": lambda n, p=P: A + (p - 1) * n / B,
          "two_shot": lambda n, p=P: 2 * A + 2 * (p - 1) / p * n / B}


@pytest.fixture(scope="module")
def rows():
    cluster = VirtualCluster(Switch(P, NVLINK4))
    out = []
    for tokens in (1, 8, 64, 4096):
        n = llm.tp_message_bytes(llm.LLAMA31_70B, tokens=tokens)
        runs = {a: all_reduce(cluster, nbytes=n, algorithm=a) for a in CLOSED}
        out.append({"tokens": tokens, "n": n, **{a: r.time for a, r in runs.items()},
                    "rounds": {a: r.rounds for a, r in runs.items()}})
    return out


def test_the_simulated_table_is_the_closed_forms(rows):
    for r in rows:
        for algo, t in CLOSED.items():
            assert r[algo] == pytest.approx(t(r["n"]), rel=1e-12)


def test_one_shot_meets_two_shot_at_the_crossover(rows):
    c = N.custom_numbers(rows, P, NVLINK4)
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
