"""P5 §8 (libraries): the numbers its prose quotes (book/p5/libraries_numbers.py) and the
simulated custom all-reduces of its table, against the closed forms written out here."""
from __future__ import annotations

import math

import pytest

from commbook import llm
from commbook.book.p5 import libraries_numbers as N
from commbook.hardware import NVLINK4
from commbook.units import fmt_bytes, fmt_number, fmt_time

P, A, B = 8, NVLINK4.alpha, NVLINK4.beta
CLOSED = {"ring": lambda n, p=P: 2 * (p - 1) * A + 2 * (p - 1) / p * n / B,
          "rd": lambda n, p=P: math.log2(p) * (A + n / B),
          "one_shot": lambda n, p=P: A + (p - 1) * n / B,
          "two_shot": lambda n, p=P: 2 * A + 2 * (p - 1) / p * n / B}


@pytest.fixture(scope="module")
def page08():
    """Page §8 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/08-libraries.md")


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


def test_one_shot_meets_two_shot_at_the_crossover(page08):
    """§8.2's cell: one-shot α + (p−1)n/β equals two-shot 2α + 2(p−1)/p·n/β at
    n = α / ((p−1)/β − 2(p−1)/(pβ)), on 8 GPUs and on 4; the ring's 14 rounds, 160 calls a step."""
    for key, p in (("cu_cross_bytes", P), ("cu_q_cross_bytes", P // 2)):
        n = A / ((p - 1) / B - 2 * (p - 1) / (p * B))
        assert CLOSED["one_shot"](n, p) == pytest.approx(CLOSED["two_shot"](n, p))
        assert page08[key] == fmt_bytes(n)
    assert page08["cu_q_p"] == "4" and page08["cu_ring_rounds"] == "14" and page08["cu_calls"] == "160"


def test_nccl_effective_alpha_costs_a_decode_step(page08):
    from commbook.book.measuring_p5 import p5_curve

    a_eff = p5_curve(NVLINK4).measured.blog_alpha_exact_s              # §5.6's effective α
    n = llm.LLAMA31_70B.d_model * 2
    assert page08["nccl_dec_s"] == fmt_time(2 * (P - 1) * a_eff + 2 * (P - 1) / P * n / B, 3)
    assert page08["nccl_step_link_s"] == fmt_time(160 * CLOSED["ring"](n), 3)


def test_mpi_rounds(page08):
    assert (page08["mpi_rab"], page08["mpi_ring"]) == ("20", "2,046")
    assert page08["mpi_lb"] == fmt_number(2 * 1023 / 1024)
