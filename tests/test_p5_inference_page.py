"""P5 §7 (LLM inference): the numbers its prose quotes, read from the executed page, against
closed forms written out here from the model's shape and the links' α and β, and the claims
the page used to assert in its cells."""
from __future__ import annotations

import pytest

from commbook import llm
from commbook.book.p5.inference import prefill_run, tp_nodes
from commbook.hardware import H100, IB_NDR, NVLINK4
from commbook.units import fmt_bytes, fmt_pct, fmt_ratio, fmt_time

M, TP = llm.LLAMA31_70B, 8
L = M.n_layers
TOKEN = M.d_model * 2                      # one token's hidden state in BF16, bytes


def _ring(p, n, link):
    """The ring all-reduce, written out: 2(p-1)α + 2(p-1)/p · n/β."""
    return 2 * (p - 1) * link.alpha + 2 * (p - 1) / p * n / link.beta


def _count(text):
    """A glued count ('1,024') as an int."""
    return int(text.replace(",", ""))


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
    doubling per all-reduce, 2L all-reduces a step; the ring's threshold p·α·β halves with p,
    recursive doubling's α·β stays."""
    assert (page07["q71_tp"], page07["q71_ring_rounds"], page07["q71_rd_rounds"]) == ("4", "6", "2")
    assert page07["q71_ring_alpha_s"] == fmt_time(2 * L * 6 * NVLINK4.alpha)
    assert page07["q71_rd_alpha_s"] == fmt_time(2 * L * 2 * NVLINK4.alpha)
    b = _count(page07["q71_bstar_ring"])
    assert b * TOKEN >= 4 * NVLINK4.alpha * NVLINK4.beta > (b - 1) * TOKEN
    assert page07["q71_bstar_rd"] == page07["dec_bstar_rd"]


def test_decode_at_batch_one_is_the_ring_start_ups(page07):
    """§7.1: 2L all-reduces, 2(p − 1) ring rounds against log2 p, the ring's time at B = 1
    almost all start-ups, and where each algorithm becomes bandwidth-bound."""
    assert page07["dec_allreduces"] == str(2 * L)
    assert (page07["dec_ring_rounds"], page07["dec_rd_rounds"]) == ("14", "3")
    alpha_only = 2 * L * 14 * NVLINK4.alpha
    assert page07["dec_alpha_only_s"] == fmt_time(alpha_only) == fmt_time(4.48e-3)
    ring1 = 2 * L * _ring(TP, TOKEN, NVLINK4)
    assert page07["dec_ring1_s"] == fmt_time(ring1)
    assert page07["dec_alpha_only_frac"] == fmt_pct(alpha_only / ring1) and abs(ring1 / alpha_only - 1) < 0.01
    assert page07["dec_rd1_s"] == fmt_time(2 * L * 3 * (NVLINK4.alpha + TOKEN / NVLINK4.beta))
    # the crossovers: the ring's n = p·α·β, recursive doubling's n = α·β
    assert page07["dec_ring_nstar_bytes"] == fmt_bytes(TP * NVLINK4.alpha * NVLINK4.beta)
    assert page07["dec_n_half_bytes"] == fmt_bytes(NVLINK4.alpha * NVLINK4.beta)
    b_ring, b_rd = _count(page07["dec_bstar_ring"]), _count(page07["dec_bstar_rd"])
    assert b_ring * TOKEN >= TP * NVLINK4.alpha * NVLINK4.beta > (b_ring - 1) * TOKEN
    assert b_rd * TOKEN >= NVLINK4.alpha * NVLINK4.beta > (b_rd - 1) * TOKEN
    assert page07["dec_bstar_rd_bytes"] == fmt_bytes(b_rd * TOKEN)


def test_prefill_comm_is_start_ups_plus_bytes_per_token(page07):
    """§7.2: the per-token network roofline, and every prompt of table 05-2 paying the ring's
    start-ups plus its bytes."""
    per_token_bytes = 2 * L * 2 * (TP - 1) / TP * TOKEN
    per_token = per_token_bytes / NVLINK4.beta
    assert page07["pre_tok_bytes"] == fmt_bytes(per_token_bytes)
    assert page07["pre_tok_comm_s"] == fmt_time(per_token, 3)
    assert page07["pre_tok_lin_s"] == fmt_time(2 * M.n_params_compute / (TP * H100.bf16_flops), 3)
    run = prefill_run(M, tp=TP, link=NVLINK4)
    for r in run.rows:
        assert r.comm_s == pytest.approx(2 * L * 14 * NVLINK4.alpha + r.tokens * per_token, rel=1e-12)
    assert page07["pre_first_tokens"] == f"{run.rows[0].tokens:,}" and page07["pre_last_tokens"] == "16,384"


def test_tp16_is_the_one_node_ring_plus_a_ring_across_nodes(page07):
    t = tp_nodes(M, batch=64, intra=NVLINK4, inter=IB_NDR, tps=(TP, 2 * TP))
    n = 64 * TOKEN
    assert t.per_ar8_s == pytest.approx(_ring(TP, n, NVLINK4))
    ib = _ring(2, n / TP, IB_NDR)
    assert t.ib_phase_s == pytest.approx(ib)
    assert t.comm16_s == pytest.approx(2 * L * (_ring(TP, n, NVLINK4) + ib), rel=1e-12)
    assert page07["q73_ib_s"] == fmt_time(2 * L * ib)
    assert page07["q73_nvl_s"] == fmt_time(2 * L * _ring(TP, n, NVLINK4))   # a free network leaves the one-node ring


def test_moe_dispatch_bytes_and_rounds(page07):
    """§7.4: tokens·k·d·2·(EP − 1)/EP bytes per GPU inside one node; the direct schedule's
    EP − 1 rounds against the hierarchical one's (g − 1) + (N − 1)."""
    d = llm.DEEPSEEK_V3
    assert page07["moe_b8_bytes"] == fmt_bytes(256 * d.top_k * d.d_model * 2 * 7 / 8)
    assert (page07["moe_ep_big"], page07["moe_nodes"]) == ("64", "8")
    assert page07["moe_rounds_direct"] == "63" and page07["moe_rounds_hier"] == str(7 + 7)


def test_kv_per_token_and_one_nic(page07):
    """§7.5: 2·L·n_kv·d_head·2 bytes per token; one NIC just under 8× slower than 8 (α is
    paid once either way); full MHA carries n_heads / n_kv_heads the KV."""
    assert 2 * L * M.n_kv_heads * M.head_dim * 2 == 327_680                   # 327.68 KB
    assert page07["kv_tok_bytes"] == fmt_bytes(327_680, digits=5)
    one_nic = float(page07["kv_one_nic_x"].rstrip("×"))
    assert 7.9 < one_nic < 8
    assert page07["kv_mha_x"] == fmt_ratio(M.n_heads / M.n_kv_heads)
    assert page07["kv_fp8_tok_bytes"] == fmt_bytes(327_680 / 2, digits=5)
