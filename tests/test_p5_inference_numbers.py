"""P5 §7 (LLM inference): the numbers its prose quotes (book/p5/inference_numbers.py), against
closed forms written out here from the model's shape and the links' α and β, and the claims
the page used to assert in its cells."""
from __future__ import annotations

import pytest

from commbook import llm
from commbook.book.p5 import inference_numbers as N
from commbook.book.p5.inference import decode_run, kv_run, prefill_run, tp_nodes
from commbook.hardware import H100, IB_NDR, NVLINK4
from commbook.units import fmt_bytes, fmt_time

M, TP = llm.LLAMA31_70B, 8
L = M.n_layers


def _ring(p, n, link):
    """The ring all-reduce, written out: 2(p-1)α + 2(p-1)/p · n/β."""
    return 2 * (p - 1) * link.alpha + 2 * (p - 1) / p * n / link.beta


@pytest.fixture(scope="module")
def page07():
    """Page §7 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/07-llm-inference.md")


def test_budget_is_weights_and_kv_over_hbm(page07):
    """The budget box's cell: the batch's KV caches and the memory-bound step at B = 64."""
    kv = 64 * llm.DEFAULT_CONTEXT * 2 * L * M.n_kv_heads * M.head_dim * 2     # 2·L·n_kv·d_head·2 bytes per token
    assert page07["bud_kv_bytes"] == fmt_bytes(kv)
    step = (2 * M.n_params_compute + kv) / (TP * H100.hbm_bandwidth)          # memory-bound
    assert page07["bud_step_s"] == fmt_time(step) and fmt_time(step, 3) == "8.39 ms"   # the lecture's 8.39 ms
    assert page07["bud_tables"] == "5" and page07["bud_layers"] == str(L)


def test_half_the_gpus_halve_the_start_ups(page07):
    """§7.1's question, TP = 4: 2(4 − 1) = 6 ring start-ups and log2 4 = 2 of recursive
    doubling per all-reduce, 2L all-reduces a step."""
    assert (page07["q71_tp"], page07["q71_ring_rounds"], page07["q71_rd_rounds"]) == ("4", "6", "2")
    assert page07["q71_ring_alpha_s"] == fmt_time(2 * L * 6 * NVLINK4.alpha)
    assert page07["q71_rd_alpha_s"] == fmt_time(2 * L * 2 * NVLINK4.alpha)


def test_decode_at_batch_one_is_the_ring_start_ups():
    d = N.decode_numbers(decode_run(M, tp=TP, link=NVLINK4), batch=64)
    assert d.allreduces == 2 * L and d.ring_rounds == 14 and d.rd_rounds == 3
    assert d.alpha_only_s == pytest.approx(2 * L * 14 * NVLINK4.alpha) == pytest.approx(4.48e-3)
    assert d.ring1_s == pytest.approx(2 * L * _ring(TP, M.d_model * 2, NVLINK4))
    assert abs(d.ring1_s / d.alpha_only_s - 1) < 0.01                       # "pure latency"
    # the crossovers: the ring's n = p·α·β, recursive doubling's n = α·β
    assert d.bstar_ring_bytes >= TP * NVLINK4.alpha * NVLINK4.beta > d.bstar_ring_bytes - M.d_model * 2
    assert d.bstar_rd_bytes >= NVLINK4.alpha * NVLINK4.beta > d.bstar_rd_bytes - M.d_model * 2


def test_prefill_comm_is_start_ups_plus_bytes_per_token():
    run = prefill_run(M, tp=TP, link=NVLINK4)
    p = N.prefill_numbers(run)
    per_token = 2 * L * 2 * (TP - 1) / TP * M.d_model * 2 / NVLINK4.beta
    assert p.tok_comm_s == pytest.approx(per_token)
    for r in run.rows:
        assert r.comm_s == pytest.approx(2 * L * 14 * NVLINK4.alpha + r.tokens * per_token, rel=1e-12)


def test_tp16_is_the_one_node_ring_plus_a_ring_across_nodes(page07):
    t = tp_nodes(M, batch=64, intra=NVLINK4, inter=IB_NDR, tps=(TP, 2 * TP))
    n = 64 * M.d_model * 2
    assert t.per_ar8_s == pytest.approx(_ring(TP, n, NVLINK4))
    ib = _ring(2, n / TP, IB_NDR)
    assert t.ib_phase_s == pytest.approx(ib)
    assert t.comm16_s == pytest.approx(2 * L * (_ring(TP, n, NVLINK4) + ib), rel=1e-12)
    assert page07["q73_ib_s"] == fmt_time(2 * L * ib)
    assert page07["q73_nvl_s"] == fmt_time(2 * L * _ring(TP, n, NVLINK4))   # a free network leaves the one-node ring


def test_kv_per_token_and_one_nic():
    k = N.kv_numbers(kv_run(M, tp=TP, link=IB_NDR, nics=8))
    assert k.tok_bytes == 2 * L * M.n_kv_heads * M.head_dim * 2 == 327_680    # 327.68 KB
    assert 7.9 < k.one_nic_x < 8 and k.mha_x == M.n_heads / M.n_kv_heads
