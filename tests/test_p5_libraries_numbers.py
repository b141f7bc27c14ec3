"""P5 §8 (libraries): the numbers its prose quotes (the executed page's glued values) and the
simulated custom all-reduces of its table (book/p5/libraries_numbers.py), against the closed
forms written out here."""
from __future__ import annotations

import math

import pytest

from commbook import llm
from commbook.book.p5 import libraries_numbers as N
from commbook.collectives import all_reduce
from commbook.hardware import NVLINK4
from commbook.topology import Switch
from commbook.units import fmt_bytes, fmt_number, fmt_pct, fmt_ratio, fmt_time

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


TOKENS = (1, 8, 64, 4096)                                           # the table's batches


def test_the_simulated_table_is_the_closed_forms():
    assert N.ONE_NODE == tuple(CLOSED)
    runs = {k: {a: all_reduce(Switch(P, NVLINK4), nbytes=k * llm.LLAMA31_70B.d_model * 2, algorithm=a)
                for a in CLOSED} for k in TOKENS}                             # BF16 activations
    for k, r in runs.items():
        n = k * llm.LLAMA31_70B.d_model * 2
        for algo, t in CLOSED.items():
            assert r[algo].time == pytest.approx(t(n), rel=1e-12)
        assert {a: run.rounds for a, run in r.items()} == {"ring": 2 * (P - 1), "rd": 3, "one_shot": 1, "two_shot": 2}
    t = N.one_node_table(runs, P, NVLINK4)
    assert [row["tokens"] for row in t.rows] == list(TOKENS)
    assert [row["best"] for row in t.rows] == [min(CLOSED, key=lambda a: CLOSED[a](k * llm.LLAMA31_70B.d_model * 2))
                                               for k in TOKENS]
    assert t.source == "commbook.book.p5.libraries_numbers.one_node_table"    # the table links its builder
    assert t.cells("zh")[0][-1] == "one-shot" and t.cells("en")[-1][3].endswith("(3)")


def test_the_prose_numbers_are_the_closed_forms(page08):
    """§8.2's cell: the decode batch (1 token) and the largest (4,096) of the table, their
    ring, one-shot and two-shot times, and 160 ring all-reduces a step against its roofline."""
    d = llm.LLAMA31_70B.d_model * 2                                     # one token, BF16
    n1, n_big = d, TOKENS[-1] * d
    assert (page08["cu_tokens_dec"], page08["cu_tokens_big"]) == ("1", "4,096")
    assert (page08["cu_n_dec_bytes"], page08["cu_n_big_bytes"]) == (fmt_bytes(n1), fmt_bytes(n_big))
    ring, one = CLOSED["ring"](n1), CLOSED["one_shot"](n1)
    assert (page08["cu_ring_dec_s"], page08["cu_os_dec_s"]) == (fmt_time(ring, 4), fmt_time(one, 4))
    assert page08["cu_dec_x"] == fmt_ratio(ring / one)
    assert (page08["cu_step_ring_s"], page08["cu_step_os_s"]) == (fmt_time(160 * ring, 3), fmt_time(160 * one, 3))
    mem = llm.decode_step(llm.LLAMA31_70B, 1, tp=P).time
    assert page08["cu_step_share_frac"] == fmt_pct(160 * ring / mem)
    big = {a: CLOSED[a](n_big) for a in CLOSED}
    assert page08["cu_os_big_x"] == fmt_ratio(big["one_shot"] / big["two_shot"])
    assert page08["cu_ts_gain_s"] == fmt_time(big["ring"] - big["two_shot"], 3)
    assert page08["cu_ts_gain_frac"] == fmt_pct(1 - big["two_shot"] / big["ring"])


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
