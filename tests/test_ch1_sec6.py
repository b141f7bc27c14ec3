"""Chapter §1.6 (gradient compression): the page's numbers, tables and figures
(``commbook.book.ch1.compression_numbers``, ``compression_figures`` and
``chapters/{zh,en}/ch1/06-compression.md``).

Every check compares the book's value with the chapter's stated result at the chapter's own
rounding, with a closed form written out here, or with an independent numpy computation; where
the chapter is wrong (the top-1 % row of its table, the 1-bit row's 32×, INT8's 256 levels),
both numbers are pinned.
"""
from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from commbook import compression as cz
from commbook.book.ch1 import compression_effects as ce
from commbook.book.ch1 import compression_figures as cf
from commbook.book.ch1 import compression_numbers as cn
from commbook.hardware import IB_NDR_CHAPTER
from commbook.units import fmt_bytes, fmt_pct, fmt_ratio, fmt_time

ROOT = Path(__file__).resolve().parents[1]
PAGE = {lang: ROOT / "chapters" / lang / "ch1" / "06-compression.md" for lang in ("en", "zh")}
F = Fraction

# The chapter's Tables 3 and 4, cell for cell as printed (step, g, cumulative true value) and
# (step, g, e, g + e, v, e_next, cumulative v).
CHAPTER_TABLE3 = [(1, "0.4", "0.4"), (2, "0.3", "0.7"), (3, "0.2", "0.9"), (4, "0.4", "1.3"), (5, "0.3", "1.6")]
CHAPTER_TABLE4 = [
    (1, "0.4", "0", "0.4", "0", "0.4", "0"), (2, "0.3", "0.4", "0.7", "1", "−0.3", "1"),
    (3, "0.2", "−0.3", "−0.1", "0", "−0.1", "1"), (4, "0.4", "−0.1", "0.3", "0", "0.3", "1"),
    (5, "0.3", "0.3", "0.6", "1", "−0.4", "2")]


def _frac(text: str) -> Fraction:
    return Fraction(text.replace("−", "-"))


# ============================================================================ quantization
def test_quant_table_ratios_from_the_payloads():
    t = cn.quant_table()
    d = t.meta["d"]
    r = {row["op"]: row for row in t.rows}
    assert r["fp32"]["total"] == 4 * d and r["fp16"]["total"] == 2 * d
    assert r["int8"]["total"] == d + 4 and r["int8"]["ratio"] == pytest.approx(4 * d / (d + 4))
    assert r["int8b"]["scales"] == 4 * math.ceil(d / 128)
    assert r["sign"]["total"] == math.ceil(d / 8) + 4
    # the chapter's nominal ratios (2x, 4x, 32x) are the bit widths; the payloads fall short by the scales
    for op, stated in (("fp16", 2), ("int8", 4), ("sign", 32)):
        assert r[op]["stated"] == stated
        assert r[op]["ratio"] == pytest.approx(stated, rel=1e-4) and r[op]["ratio"] <= stated
    assert round(r["sign"]["ratio"], 3) == 31.999
    assert "31.999×" in t.notes["en"][0] and "31.999×" in t.notes["zh"][0]


@pytest.fixture(scope="module")
def page06():
    """Page §1.6 (English) as the book runs it: its glued texts."""
    from conftest import executed_glue
    return executed_glue(PAGE["en"])


def test_opening_and_quantization_numbers_of_the_page(page06):
    """The opening ranges (10–100×, 4–1,000×) and what §1.6.1 quotes of the quantization
    table: the nominal ratios are the bit widths, the payloads fall short by the scales."""
    assert (page06["co_wan_gap"], page06["co_red_range"]) == ("10–100×", "4–1,000×")
    d = 10**6
    assert page06["q_d"] == f"{d:,}"
    assert (page06["q_fp16_x"], page06["q_int8_nom_x"], page06["q_sign_nom_x"]) == ("2×", "4×", "32×")
    assert page06["q_int8_x"] == fmt_ratio(4 * d / (d + 4), 6)
    assert page06["q_sign_x"] == fmt_ratio(4 * d / (math.ceil(d / 8) + 4), 6) == "31.999×"


def test_int8_levels_are_255_not_the_chapters_256(page06):
    assert (page06["q_lo"], page06["q_hi"], page06["q_levels"]) == ("−127", "127", "255")
    assert page06["q_type"] == "256"            # what the chapter gives as the number of levels
    assert page06["q_missing"] == "−128"
    # independent: round(g / (max|g|/127)) over [-1, 1]
    g = np.linspace(-1, 1, 100_001)
    assert np.unique(np.rint(g / (np.abs(g).max() / 127))).size == 255


@pytest.mark.parametrize("b,printed", [(128, "3.88"), (256, None), (64, None)])
def test_block_ratios(b, printed):
    t = cn.block_table()
    row = next(r for r in t.rows if r["b"] == b)
    assert row["ratio"] == pytest.approx(4 * b / (b + 4), rel=1e-12) == pytest.approx(row["closed"])
    assert row["per_elem"] == pytest.approx(1 + 4 / b)
    if printed:
        assert f"{row['ratio']:.2f}" == printed          # the chapter's 3.88× at b = 128
    assert {128: "3.879", 256: "3.938", 64: "3.765"}[b] == f"{row['ratio']:.3f}"


def _rms_block_error_numpy(g: np.ndarray, b: int | None) -> float:
    """INT8 quantization written out in numpy: scale max|g|/127 per block (FP32), round, rebuild."""
    blocks = g.reshape(-1, g.size if b is None else b)
    s = (np.abs(blocks).max(axis=1) / 127).astype(np.float32).astype(np.float64)
    q = np.clip(np.rint(blocks / s[:, None]), -127, 127)
    return float(np.sqrt(np.mean((q * s[:, None] - blocks) ** 2)))


def test_block_quantization_cuts_the_error_2_to_5x_on_heavy_tails():
    """§1.6.1: "2–5× lower error" for heavy-tailed gradients; not for normal ones."""
    t = cn.heavy_tail_table()
    b, d = t.meta["block"], t.meta["d"]
    for row in t.rows:
        rng = np.random.default_rng(0)
        g = rng.standard_normal(d) if row["nu"] is None else rng.standard_t(row["nu"], d)
        assert row["rms_tensor"] == pytest.approx(_rms_block_error_numpy(g, None), rel=1e-9)
        assert row["rms_block"] == pytest.approx(_rms_block_error_numpy(g, b), rel=1e-9)
        # uniform rounding error: RMS ≈ sqrt(mean(s²)/12), the closed form of the step
        s = np.repeat(np.abs(g.reshape(-1, b)).max(axis=1) / 127, b)
        assert row["rms_block"] == pytest.approx(np.sqrt(np.mean(s**2) / 12), rel=0.05)
        if row["nu"] is None:
            assert 1 < row["gain"] < 2
        else:
            assert 2 <= row["gain"] <= 5
        # the worst error stays: it lies in the block holding max|g|, whose scale is the tensor's
        assert row["max_block"] <= row["max_tensor"] <= 1.06 * row["max_block"]


# ============================================================================ sparsification
def test_sparse_table_against_the_chapter():
    """K = 0.1 % of d: nominal 1000×, 500× with INT32 indices (d/(2K)), 666.7× with INT16."""
    rows = {(r["d"], r["share"]): r for r in cn.sparse_table().rows}
    big, small = rows[(10**6, 0.001)], rows[(65_000, 0.001)]
    assert big["nominal"] == 1000 and big["ratio"] == 500 == 10**6 / (2 * 1000) and big["index_bits"] == 32
    assert small["index_bits"] == 16 and f"{small['ratio']:.1f}" == "666.7"
    assert small["ratio"] == pytest.approx(4 * 65_000 / (65 * (4 + 2)))
    assert rows[(10**6, 0.01)]["ratio"] == 50 and rows[(10**6, 0.01)]["nominal"] == 100


def test_sparse_numbers_of_the_page(page06):
    """§1.6.2 quotes the table's top-0.1 % rows, and random-k's variance (1/q − 1)·g² at q = 10 %."""
    assert (page06["sp_share_frac"], page06["sp_nominal_x"]) == (fmt_pct(0.001), "1,000×")
    assert (page06["sp_d"], page06["sp_k"], page06["sp_int32_x"]) == ("1,000,000", "1,000", "500×")
    assert (page06["sp_small_d"], page06["sp_int16_x"], page06["sp_int16_max"]) == ("65,000", "666.7×", "65,536")
    assert (page06["sp_rk_share_frac"], page06["sp_rk_var"], page06["sp_rk_scale"]) == (fmt_pct(0.1), "9", "10")


def test_a_persistently_small_gradient(page06):
    """Top-1 of (1, 0.01) for 1,000 steps: without feedback the small entry is never sent;
    with it, it goes out once per 1/0.01 steps and all of its 10 arrives."""
    ps = {k[3:]: v for k, v in page06.items() if k.startswith("ps_") and not k.startswith("ps_opt_")}
    assert (ps["small"], ps["big"], ps["steps"]) == ("0.01", "1", "1,000")
    assert ps["naive"] == "0" and float(ps["true"]) == pytest.approx(1000 * 0.01)
    assert float(ps["ef"]) == pytest.approx(float(ps["true"]), abs=1e-9)
    assert int(ps["times"]) == 1000 * 0.01 / 1 and ps["every"] == "100"      # once per 1/0.01 steps
    assert float(ps["max"]) <= 1 + 1e-12


def test_random_k_variance_closed_form():
    """Var = (d/k − 1) g² per entry: check by enumerating every subset of a small case."""
    from itertools import combinations
    d, k, g = 6, 2, np.arange(1.0, 7.0)
    outs = []
    for sub in combinations(range(d), k):
        v = np.zeros(d)
        v[list(sub)] = g[list(sub)] * d / k
        outs.append(v)
    outs = np.array(outs)
    assert np.allclose(outs.mean(axis=0), g)
    assert np.allclose(outs.var(axis=0), (d / k - 1) * g**2)


# ============================================================================ error feedback
def test_table3_cell_for_cell():
    t = cn.table3()
    assert len(t) == len(CHAPTER_TABLE3)
    for i, (step, g, cum) in enumerate(CHAPTER_TABLE3):
        row = t.rows[i]
        assert row["step"] == step and row["g"] == _frac(g) and row["sum_g"] == _frac(cum)
        assert row["v"] == 0 and row["sum_v"] == 0                      # nothing is ever sent
        assert t.cell(i, "g") == g and t.cell(i, "sum_g") == cum


def test_table4_cell_for_cell():
    t = cn.table4()
    cols = ("step", "g", "e", "acc", "v", "e_next", "sum_v")
    assert len(t) == len(CHAPTER_TABLE4)
    for i, printed in enumerate(CHAPTER_TABLE4):
        for col, text in zip(cols, printed):
            if col == "step":
                assert t.rows[i]["step"] == text
            else:
                assert t.rows[i][col] == _frac(text), (i, col)
                assert t.cell(i, col, "en") == t.cell(i, col, "zh") == text      # as printed, − sign


def test_table4_by_an_independent_recurrence():
    """The same trace written out: e ← e + g; send 1 when e ≥ 1/2 (then e ← e − 1)."""
    e, sent, rows = F(0), F(0), []
    for g in map(F, cn.EF_INPUT):
        acc = g + e
        v = F(1) if acc >= F(1, 2) else F(0)
        e = acc - v
        sent += v
        rows.append((acc, v, e, sent))
    assert rows == [(r["acc"], r["v"], r["e_next"], r["sum_v"]) for r in cn.table4().rows]


def test_example_1_2(page06):
    ex = {k[3:]: v for k, v in page06.items() if k.startswith("ex_")}
    assert (ex["inputs"], ex["thr"], ex["steps"]) == (", ".join(cn.EF_INPUT), "0.5", "5")
    assert _frac(ex["true"]) == F("1.6") and _frac(ex["naive"]) == 0 and ex["lost_frac"] == fmt_pct(1)  # "100 %"
    assert _frac(ex["sent"]) == 2 and _frac(ex["res"]) == F("-0.4")
    assert _frac(ex["sent"]) == _frac(ex["true"]) - _frac(ex["res"])    # telescoping, e₁ = 0
    assert ex["sends"] == "2 and 5" and (ex["true"], ex["sent"], ex["res"]) == ("1.6", "2", "−0.4")


@pytest.mark.parametrize("seed", range(3))
def test_telescoping_identity(seed):
    """Σv = Σg + e₁ − e_{K+1} after every step: exactly (Fraction) for the chapter's
    compressor, to rounding for top-k and sign on float vectors."""
    rng = np.random.default_rng(seed)
    gs = [str(round(x, 3)) for x in rng.uniform(-0.5, 1.0, 30)]
    for r in cz.ef_trace(gs, e1="0.1"):
        assert r.sum_v == r.sum_g + F("0.1") - r.e_next
    for op in (cz.TopK(0.1), cz.Sign()):
        ef, sv, sg = cz.ErrorFeedback(op), np.zeros(50), np.zeros(50)
        for _ in range(40):
            g = rng.standard_normal(50)
            _, v = ef.step(g)
            sv, sg = sv + v, sg + g
            assert np.allclose(sv, sg - ef.error, atol=1e-12)


def test_definition_1_4_numbers(page06):
    """70B BF16 gradients, top-1 %: 140 GB -> 1.4 GB of values (100×), 4.2 GB with 32-bit indices."""
    d14 = {k[4:]: v for k, v in page06.items() if k.startswith("d14_")}
    assert (d14["full_bytes"], d14["values_bytes"], d14["nominal_x"]) == ("140 GB", "1.4 GB", "100×")
    assert d14["share_frac"] == fmt_pct(0.01) and d14["params"] == "70B"
    assert d14["index_bytes"] == fmt_bytes(0.01 * 70e9 * (2 + 4), digits=3)
    assert d14["ratio_x"] == fmt_ratio(2 / 6 * 100)
    bits = int(d14["bits"])
    assert 2 ** (bits - 1) < 70e9 <= 2 ** bits


# ============================================================================ the runs
@pytest.fixture(scope="module")
def runs():
    return cf.runs()


def test_convergence_thresholds(runs):
    fin = {k: runs[k].final for k in cf.RUN_KEYS}
    for k in ("top1+ef", "top10+ef", "sign+ef"):
        assert fin[k] <= 1e-5, k
    for k in ("top1", "sign"):
        assert fin[k] >= 100 * fin[k + "+ef"], k
    assert runs["int8+ef"].final_loss == pytest.approx(runs["fp32"].final_loss, rel=0.01)
    assert fin["top10+ef"] < fin["randk10"] < 1e-5                # unbiased converges, slower
    assert fin["1bit"] <= 1e-5 and fin["adam"] <= 1e-12


def test_uncompressed_run_against_plain_numpy(runs):
    """Gradient descent on ½·mean((Ax − b)²) written out with the stacked matrix."""
    p, s = runs["problem"], cf.RUN_SETTINGS
    A, b = p.A.reshape(-1, p.dim), p.b.ravel()
    x = np.zeros(p.dim)
    x_opt = np.linalg.lstsq(A, b, rcond=None)[0]
    loss = lambda x: 0.5 * np.mean((A @ x - b) ** 2)
    ex = [1.0]
    for _ in range(s["steps"]):
        x = x - s["lr"] * A.T @ (A @ x - b) / A.shape[0]
        ex.append((loss(x) - loss(x_opt)) / (loss(np.zeros(p.dim)) - loss(x_opt)))
    assert np.allclose(runs["fp32"].excess, ex, rtol=1e-6, atol=1e-12)


def test_runs_table_and_onebit_ratio(runs):
    t = cf.runs_table()
    row = {r["run"]: r for r in t.rows}
    f = cf.RUN_SETTINGS["warmup"]
    assert row["fp32"]["bytes"] == 4 * cf.RUN_SETTINGS["dim"]
    assert row["1bit"]["ratio"] == pytest.approx(1 / (f + (1 - f) / cz.Sign().ratio(100)))
    assert cz.onebit_adam_ratio(f) == pytest.approx(1 / (0.2 + 0.8 / 32))
    assert f"{cz.onebit_adam_ratio(f):.3g}" == "4.44"
    f5 = (1 / 5 - 1 / 32) / (1 - 1 / 32)
    assert cz.onebit_adam_ratio(f5) == pytest.approx(cn.CHAPTER_ONEBIT["comm"]) and f"{f5:.3f}" == "0.174"


def test_convergence_figure_draws_the_runs(runs):
    fig = cf.fig_convergence("en")
    lines = {l.get_gid(): l for ax in fig.axes for l in ax.get_lines() if l.get_gid()}
    for key in cf.RUN_KEYS:
        assert np.allclose(lines[f"run:{key}"].get_ydata(), np.maximum(runs[key].excess, cf.FLOOR))
    warm = lines["warmup"].get_xdata()[0]
    assert warm == round(cf.RUN_SETTINGS["warmup"] * cf.RUN_SETTINGS["adam_steps"])
    # without feedback the curves end far above the ones with it
    assert lines["run:top1"].get_ydata()[-1] >= 100 * lines["run:top1+ef"].get_ydata()[-1]


# ============================================================================ payoff
@pytest.mark.parametrize("t_comm", cn.DECISION["t_comm"])
def test_decision_cases(t_comm):
    D = cn.DECISION
    base, comp, change = cn.CHAPTER_DECISION[t_comm]
    dd = cz.compression_decision(D["steps"], D["t_compute"], t_comm, D["ratio"], D["extra_steps"])
    # closed forms: steps·(c + T) and steps·(1 + x)·(c + T/r)
    assert dd.baseline == pytest.approx(D["steps"] * (D["t_compute"] + t_comm)) == pytest.approx(base)
    assert dd.compressed == pytest.approx(D["steps"] * 1.1 * (D["t_compute"] + t_comm / 4)) == pytest.approx(comp)
    assert round(dd.change, 3) == change                              # −23 %, +2.5 %


def test_break_even_communication_time():
    D = cn.DECISION
    t = cz.break_even_comm_time(D["t_compute"], D["ratio"], D["extra_steps"])
    c, r, x = D["t_compute"], D["ratio"], D["extra_steps"]
    assert (1 + x) * (c + t / r) == pytest.approx(c + t)               # both runs take as long
    assert t == pytest.approx(x * c / (1 - (1 + x) / r)) and f"{t * 1e3:.1f}" == "41.4"
    assert D["t_comm"][1] < t < D["t_comm"][0]


def test_page_numbers_of_the_when_section(page06):
    """The break-even extra steps of case a, (c + T)/(c + T/r) − 1 = 42.9 %, is where the
    library's break-even time is case a's T; case b's change is the extra steps' time less
    the communication saved, written out; the break-even time x·c/(1 − (1 + x)/r)."""
    D = cn.DECISION
    c, r, x, steps = D["t_compute"], D["ratio"], D["extra_steps"], D["steps"]
    ta, tb = D["t_comm"]
    x_even = (c + ta) / (c + ta / r) - 1
    assert page06["w_x_even_frac"] == fmt_pct(x_even, 3) == "42.9%" and round(x_even, 3) == 0.429
    assert cz.break_even_comm_time(c, r, x_even) == pytest.approx(ta)
    db = cz.compression_decision(steps, c, tb, r, x)
    saved, extra = steps * tb * 3 / 4, steps * x * (c + tb / 4)
    assert extra - saved == pytest.approx(db.compressed - db.baseline)
    assert (page06["w_b_saved_total_s"], page06["w_b_extra_total_s"]) == (f"{saved:,.0f} s", f"{extra:,.0f} s")
    assert page06["w_b_change_frac"] == fmt_pct((extra - saved) / (steps * (c + tb)))
    assert page06["w_a_change_frac"] == fmt_pct(1 - 1.1 * (c + ta / r) / (c + ta))
    assert page06["w_even_s"] == fmt_time(x * c / (1 - (1 + x) / r), 3)
    assert (page06["w_steps"], page06["w_p"], page06["w_ratio_x"], page06["w_r32_x"]) == ("100,000", "64", "4×", "32×")
    # n* = αβ on InfiniBand NDR; a ring over p GPUs moves chunks of n/p, so 32× gains little there
    link, p = IB_NDR_CHAPTER, 64
    n = link.alpha * link.beta
    assert page06["w_nstar_bytes"] == fmt_bytes(n, digits=3) and page06["w_pnstar_bytes"] == fmt_bytes(p * n, digits=3)
    ring = lambda m: 2 * (p - 1) * link.alpha + 2 * (p - 1) / p * m / link.beta
    assert page06["w_small_gain_frac"] == fmt_pct(ring(n) / ring(n / 32) - 1, 2)


def test_page_numbers_of_the_runs_and_1_bit_adam(page06, runs):
    """What the prose quotes of the seeded runs, and 1-bit Adam's 1/(f + (1 − f)/32)."""
    S = cf.RUN_SETTINGS
    assert (page06["run_workers"], page06["run_dim"], page06["run_steps"]) == (
        f"{S['workers']:,}", f"{S['dim']:,}", f"{S['steps']:,}")
    assert page06["run_workers"] == "8"
    assert page06["run_top1"] == f"{runs['top1'].final:.2g}" and page06["run_sign"] == f"{runs['sign'].final:.2g}"
    assert float(page06["run_top1_x"].replace(",", "")) >= 100                  # orders of magnitude above
    f = S["warmup"]
    assert page06["ob_f_frac"] == fmt_pct(f) and page06["ob_ratio_x"] == fmt_ratio(1 / (f + (1 - f) / 32))
    assert page06["ob_f5_frac"] == fmt_pct((1 / 5 - 1 / 32) / (1 - 1 / 32), 3) and page06["ob_comm_x"] == "5×"
    assert page06["ob_gpus"] == "256"


def test_page_numbers_of_napkin_math_1_7_and_checkpoint_1_4(page06):
    """40 ms / 8 = 5 ms, + 2 ms = 7 ms, 5.714×; pays above 2/(1 − 1/8) ms; on NVLink 2.125 ms > 1 ms."""
    assert (page06["n17_t_s"], page06["n17_nom_x"], page06["n17_eff_x"], page06["n17_o_s"]) == ("40 ms", "32×", "8×", "2 ms")
    assert (page06["n17_new_s"], page06["n17_total_s"], page06["n17_saving_s"]) == ("5 ms", "7 ms", "35 ms")
    assert page06["n17_speedup_x"] == fmt_ratio(40 / 7, 4) == "5.714×" and page06["n17_speedup2_x"] == "5.7×"
    assert page06["n17_even_s"] == fmt_time(2e-3 / (1 - 1 / 8))
    assert page06["n17_nv_total_s"] == fmt_time(1e-3 / 8 + 2e-3) and page06["n17_nv_x"] == fmt_ratio(1 / 2.125, 2)
    cp = cn.CHECKPOINT_1_4
    assert (page06["cp_bwd_s"], page06["cp_ar_lo_s"], page06["cp_ar_hi_s"]) == ("800 ms", "200 ms", "2 s")
    assert (page06["cp_ratio_x"], page06["cp_g"], page06["cp_thr"]) == ("4×", "0.3", "0.5")
    assert _frac(page06["cp_g"]) == cp["g"] and _frac(page06["cp_thr"]) == cp["threshold"]


def test_page_numbers_of_blocks_and_the_optimum(runs, page06):
    """INT8 in blocks of 64 with FP16 scales costs what blocks of 128 with FP32 scales
    cost, 4·64/66 = 4·128/132; at the optimum FP32 leaves no update, top-1 % and sign do."""
    assert page06["b_fp16_scales_x"] == fmt_ratio(4 * 64 / 66, 4) == fmt_ratio(4 * 128 / 132, 4) == page06["b_r128_x"]
    assert page06["b_fp32_scales_x"] == fmt_ratio(4 * 64 / 68, 4) == page06["b_r64_x"]
    assert page06["b_r256_x"] == fmt_ratio(4 * 256 / 260, 4)
    # the heavy-tail table's range: blocks of 128, ν from 8 to 3, the worst error barely moves
    assert (page06["b_ht_b"], page06["b_ht_nu_hi"], page06["b_ht_nu_lo"]) == ("128", "8", "3")
    heavy = [r for r in cn.heavy_tail_table().rows if r["nu"] is not None]
    assert page06["b_ht_lo_x"] == fmt_ratio(min(r["gain"] for r in heavy))
    assert 2 <= float(page06["b_ht_lo_x"].rstrip("×")) <= float(page06["b_ht_hi_x"].rstrip("×")) <= 5
    assert 0 <= float(page06["b_ht_worst_frac"].rstrip("%")) <= 6
    pr = runs["problem"]
    assert cz.update_at_optimum(pr, None) < 1e-12
    assert min(cz.update_at_optimum(pr, cz.TopK(0.01)), cz.update_at_optimum(pr, cz.Sign())) > 1e-3


def test_when_figure(runs):
    fig = cf.fig_when("en")
    lines = {l.get_gid(): l for ax in fig.axes for l in ax.get_lines() if l.get_gid()}
    D = cn.DECISION
    x, y = lines["ttt:base"].get_xdata(), lines["ttt:base"].get_ydata()
    assert np.allclose(y, D["steps"] * (D["t_compute"] + x / 1e3))
    x, y = lines["ttt:comp"].get_xdata(), lines["ttt:comp"].get_ydata()
    assert np.allclose(y, D["steps"] * 1.1 * (D["t_compute"] + x / 1e3 / 4))
    assert lines["break_even"].get_xdata()[0] == pytest.approx(
        cz.break_even_comm_time(D["t_compute"], D["ratio"], D["extra_steps"]) * 1e3)
    link, p = IB_NDR_CHAPTER, cf.WHEN_P
    ring = lambda n: 2 * (p - 1) * link.alpha + 2 * (p - 1) / p * n / link.beta
    for r in cf.WHEN_RATIOS:
        n, s = lines[f"speedup:{r}"].get_xdata(), lines[f"speedup:{r}"].get_ydata()
        assert np.allclose(s, ring(n) / ring(n / r))
        assert s[0] < 1.01 and s[-1] > 0.95 * r                        # latency-bound: nothing; large: ~r


def test_checkpoint_1_4_givens():
    cp = cn.CHECKPOINT_1_4
    ms = lambda t: round(t * 1e3, 6)
    c = cp["backward"]
    assert [ms(cz.step_time(c, t)) for t in cp["allreduce"]] == [1000, 2800]
    assert [ms(cz.step_time(c, t, cp["ratio"])) for t in cp["allreduce"]] == [850, 1300]
    assert [ms(cz.step_time(c, t, overlap=True)) for t in cp["allreduce"]] == [800, 2000]
    assert [ms(cz.step_time(c, t, cp["ratio"], overlap=True)) for t in cp["allreduce"]] == [800, 800]
    s = cz.steady_state(cp["g"], cz.Threshold(cp["threshold"]))
    assert [int(v) for v in s.pattern] == [0, 1, 0, 0, 1, 0, 0, 0, 1, 0] and s.mean_v == cp["g"]
    assert (s.e_min, s.e_max) == (F(-1, 2), F(2, 5))


# ============================================================================ the methods table (flag)
def test_methods_table_flags_the_topk_row():
    t = ce.methods_table()
    row = {r["method"]: r for r in t.rows}
    topk, sign = row["Top-k (1%) + EF"], row["1-bit + EF"]
    assert topk["stated"] == 100 and topk["encoded"] == 50 == t.meta["d"] / (2 * 0.01 * t.meta["d"])
    assert sign["stated"] == 32 and round(sign["encoded"], 3) == 31.999
    assert row["FP16"]["encoded"] == 2 and row["INT8 + EF"]["encoded"] == pytest.approx(4, rel=1e-5)
    for lang in ("en", "zh"):
        assert "50×" in t.notes[lang][0] and "31.999×" in t.notes[lang][0]


def test_page_quotes_the_methods_table(page06):
    assert (page06["mt_d"], page06["mt_topk_stated_x"], page06["mt_topk_x"], page06["mt_sign_stated_x"]) == (
        "1,000,000", "100×", "50×", "32×")


def test_page_quotes_the_update_at_the_optimum(page06, runs):
    """§1.6.2: at the optimum the uncompressed update vanishes; top-1 % and sign leave one."""
    pr = runs["problem"]
    assert float(page06["ps_opt_fp32"]) < 1e-12
    assert page06["ps_opt_top1"] == f"{cz.update_at_optimum(pr, cz.TopK(0.01)):.2g}" == "0.0055"
    assert float(page06["ps_opt_sign"]) > 1e-3


def test_pages_carry_the_notes_and_the_checkpoint_link():
    for lang, path in PAGE.items():
        text = path.read_text(encoding="utf-8")
        notes = (path.parents[1] / "notes" / "ch1-sources.md").read_text(encoding="utf-8")
        for key in ("mt_topk_stated_x", "mt_topk_x", "mt_sign_stated_x", "q_type", "q_levels"):   # the page or its note
            assert f"{{glue:text}}`{key}`" in text or f"06-compression.md::{key}:" in notes, (lang, key)
        assert f"exercises/{lang}/ch1-4" in text
        assert f"({lang}-ch1-comp-fig-conv)" not in text and f":name: {lang}-ch1-comp-fig-conv" in text


# ============================================================================ the small tables (issue 16 §2)


def test_compression_tables_render_and_are_on_both_pages():
    t = ce.decision_table()
    for lang, path in PAGE.items():
        text = path.read_text(encoding="utf-8")
        assert "<table" in t.to_html(lang) and "HTML(ce.decision_table().to_html(LANG))" in text
        assert "HTML(cf.runs_table().to_html(LANG))" in text           # the runs' final losses and settings
    assert all(r["what"] in t.labels["zh"] for r in t.rows)
    S = cf.RUN_SETTINGS
    for lang in ("en", "zh"):                                        # the caption's settings moved here
        note = cf.runs_table().notes[lang][-1]
        assert f"{S['adam_steps']:,}" in note and f"{S['lr']:g}" in note and f"{S['seed']}" in note


def test_compression_tables_carry_the_worked_numbers():
    """The decision table: −23 % on the slower network, +2.5 % on the faster (the chapter's
    rounded results)."""
    d = ce.decision_table()
    rows = {r["what"]: r["raw"] for r in d.rows}
    ta, tb = cn.DECISION["t_comm"]
    for i, t in enumerate((ta, tb)):
        base, comp, change = cn.CHAPTER_DECISION[t]
        assert round(rows[f"Time to train, {cn.DECISION['steps']:,} steps"][i]) == base
        assert round(rows["Change"][i], 3) == change
