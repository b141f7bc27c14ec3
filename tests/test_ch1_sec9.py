"""Chapter §1.9 (fallacies and pitfalls) and §1.10 (summary): pages
``chapters/{zh,en}/ch1/09-fallacies.md`` and ``10-summary.md``, book code
``commbook.book.ch1.fallacies`` and ``commbook.book.ch1.summary``.

Every computed example is checked against a closed form written out here, an exact rational,
an independent numpy computation or the raw data file; where the chapter states a number it
is pinned beside the page's value (the chapter's within its rounding where it is right, both
where it is wrong)."""
from __future__ import annotations

import json
import math
import re
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from conftest import executed_glue

from commbook.book.ch1 import fallacies as fa
from commbook.book.ch1 import fallacies_topology as fo
from commbook.book.ch1 import fallacies_training as ft
from commbook.book.ch1 import summary as su
from commbook.compression import least_squares
from commbook.compression.payoff import Decision
from commbook.hardware import IB_NDR_CHAPTER as IB
from commbook.hardware import NVLINK4_CHAPTER as NV
from commbook.measure import load_log
from commbook.units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_rate, fmt_ratio, fmt_time, us

ROOT = Path(__file__).resolve().parents[1]
PAGE = {(k, lang): ROOT / "chapters" / lang / "ch1" / f"{k}.md"
        for k in ("09-fallacies", "10-summary") for lang in ("en", "zh")}
REL = 1e-9


def ring(p, n, a, b):
    """Ring all-reduce: 2(p − 1)(α + n/(pβ))."""
    return 2 * (p - 1) * (a + n / (p * b))


# ============================================================================ 1 bandwidth
def test_bandwidth_table_is_alpha_plus_n_over_beta():
    t = fa.bandwidth_table()
    a = 5e-6                                                  # the item's "5 µs"
    betas = [100e9 / 8, 400e9 / 8, 800e9 / 8]                 # 100G, 400G, 800G
    assert [r["n"] for r in t.rows] == [4 * KB, 64 * KB, 1 * MB, 100 * MB, 1 * GB]
    for r in t.rows:
        for i, b in enumerate(betas):
            assert r[f"t{i}"] == pytest.approx(a + r["n"] / b, rel=REL)
        assert r["gain"] == pytest.approx((a + r["n"] / betas[0]) / (a + r["n"] / betas[1]), rel=REL)
    assert t.rows[0]["gain"] < 1.05 < 3.99 < t.rows[-1]["gain"] < 4     # 400G does not help small messages
    assert t.meta["n_star"] == pytest.approx([62.5 * KB, 250 * KB, 500 * KB], rel=REL)


@pytest.fixture(scope="module")
def glued():
    return executed_glue(PAGE["09-fallacies", "en"])


def test_bandwidth_numbers_on_the_page(glued):
    """The prose's n* = αβ of each rate and the 400G-over-100G gain at 4 KB and 1 GB."""
    a, b0, b1 = 5e-6, 100e9 / 8, 400e9 / 8
    gain = lambda n: (a + n / b0) / (a + n / b1)
    assert (glued["bw_alpha_s"], glued["bw_r0"], glued["bw_r1"]) == ("5 µs", "100 Gb/s", "400 Gb/s")
    assert glued["bw_small_bytes"] == fmt_bytes(4 * KB)
    assert [glued[f"bw_nstar{i}_bytes"] for i in range(3)] == [fmt_bytes(x) for x in (62.5 * KB, 250 * KB, 500 * KB)]
    assert glued["bw_small_gain_x"] == f"{gain(4 * KB):.2f}×" == "1.05×"
    assert glued["bw_big_gain_x"] == "4×" and 3.99 < gain(1 * GB) < 4


# ============================================================================ 2 all-reduce as routing
def test_routing_by_all_reduce_costs_2p_the_bytes():
    r = fa.alltoall_by_allreduce()
    p, n, a, b = r.p, r.n_bytes, IB.alpha, IB.beta
    assert r.same
    assert r.a2a_bytes == pytest.approx((p - 1) / p * n, rel=REL)             # all-to-all lower bound
    assert r.ar_bytes == pytest.approx(2 * (p - 1) * n, rel=REL)              # ring of p·n bytes
    assert r.bytes_times == pytest.approx(2 * p, rel=REL)
    assert r.a2a_s == pytest.approx((p - 1) * (a + n / p / b), rel=REL)       # p − 1 shift rounds
    assert r.ar_s == pytest.approx(ring(p, p * n, a, b), rel=REL)


def test_padded_all_reduce_is_a_transpose_in_numpy():
    """The emulation, done in numpy alone: summing the padded rows and reading column block j
    gives what all-to-all delivers to rank j (block j of every rank, in rank order)."""
    p, blk = 5, 3
    x = [np.arange(p * blk) + 100 * r for r in range(p)]
    rows = sum(np.eye(p, dtype=int)[r][:, None] * x[r][None, :] for r in range(p))
    for j in range(p):
        want = np.concatenate([x[s][j * blk:(j + 1) * blk] for s in range(p)])
        assert np.array_equal(rows[:, j * blk:(j + 1) * blk].ravel(), want)


# ============================================================================ 3 pipeline bubble
def test_bubble_against_the_chapter_and_exact_fractions(glued):
    f = lambda p, m: Fraction(p - 1, p - 1 + m)                               # (p−1)/(p−1+m), exact
    assert (glued["pp_p"], glued["pp_m"], glued["pp_frac"]) == ("8", "32", "7/39")
    assert glued["pp_bubble_frac"] == "17.9%" == f"{100 * float(f(8, 32)):.1f}%"     # the chapter's 17.9 %
    assert glued["pp_target_frac"] == "20%" and glued["pp_factor"] == "4"          # (1 − t)/t
    assert glued["pp_m_min"] == str(4 * (8 - 1) + 1) == "29"                       # m > (p−1)(1−t)/t = 28
    assert f(8, 28) == Fraction(1, 5) and f(8, 29) == Fraction(7, 36) < Fraction(1, 5)
    assert fa.CHAPTER["bubble_m"] == 32 == int(glued["pp_chapter_m"]) and f(8, 32) < Fraction(1, 5)   # suffices at p = 8
    assert (glued["pp_q16"], glued["pp_m16"]) == ("16", str(4 * (16 - 1) + 1))    # ... but not deeper
    for q in (16, 32):
        m_min = 4 * (q - 1) + 1
        assert f(q, m_min) < Fraction(1, 5) <= f(q, m_min - 1) and f(q, 32) > Fraction(1, 5)
        assert glued[f"pp_q{q}"] == str(q) and glued[f"pp_at{q}_frac"] == f"{100 * float(f(q, 32)):.1f}%"
    q_m = 100                                                                  # 11/(m+11) < 1/10 ⇔ m > 99
    assert (glued["pp_q_p"], glued["pp_q_t_frac"], glued["pp_q_m"]) == ("12", "10%", str(q_m))
    assert f(12, q_m) < Fraction(1, 10) == f(12, q_m - 1)
    assert glued["pp_q_b_frac"] == f"{100 * float(f(12, q_m)):.1f}%" and glued["pp_q_b_before_frac"] == "10%"


def test_bubble_table_rows():
    t = fa.bubble_table()
    for r in t.rows:
        assert r["bubble"] == pytest.approx(7 / (r["m"] + 7), rel=REL)
        assert r["below"] == (7 * 5 < r["m"] + 7)                              # exact: 7/(m+7) < 1/5


# ============================================================================ 4 ring against tree
def test_ring_against_tree_napkin_math_1_5():
    r = fa.ring_tree()
    p, n, a, b = 64, 1 * MB, 10e-6, 10e9
    L = 6
    assert r.ring_lat_us * us == pytest.approx(2 * 63 * a) and round(r.ring_lat_us) == 1260
    assert r.ring_bw_us * us == pytest.approx(2 * 63 / 64 * n / b) and round(r.ring_bw_us, 1) == 196.9
    assert r.tree_lat_us * us == pytest.approx(2 * L * a) and round(r.tree_lat_us) == 120
    assert r.tree_bw_us * us == pytest.approx(2 * L * n / b) and round(r.tree_bw_us) == 1200   # napkin math 1.5
    assert round(fa.CHAPTER["tree_bw"] / us) == 1000 != round(r.tree_bw_us)                      # the item's figure
    assert round(r.ring_us, 1) == 1456.9 and round(r.tree_us) == 1320
    assert r.tree_us < r.ring_us and r.ring_lat_us > r.tree_bw_us
    assert r.steps == 2 * L
    # crossover: 2L(α + n/β) = 2(p−1)α + 2(p−1)/p·n/β solved for n
    exact = (2 * (p - 1) - 2 * L) * a * b / (2 * L - 2 * (p - 1) / p)
    assert r.cross_bytes == pytest.approx(exact, rel=1e-6)
    assert r.cross_log_bytes == pytest.approx(p * a * b / L) and r.cross_crude_bytes == pytest.approx(p * a * b)
    assert r.cross_log_bytes < r.cross_bytes < r.cross_crude_bytes
    # twice the GPUs: L = 7
    q, L2 = 2 * p, 7
    assert r.q_ring_s == pytest.approx(ring(q, n, a, b)) and r.q_lat_s == pytest.approx(2 * (q - 1) * a)
    assert r.q_tree_s == pytest.approx(2 * L2 * (a + n / b))
    assert r.q_cross_bytes == pytest.approx((2 * (q - 1) - 2 * L2) * a * b / (2 * L2 - 2 * (q - 1) / q), rel=1e-6)


def test_ring_tree_table_winners():
    t = fa.ring_tree_table()
    cross = fa.ring_tree().cross_bytes
    for row in t.rows:
        assert row["ring"] == pytest.approx(ring(64, row["n"], 10e-6, 10e9), rel=REL)
        assert row["best"] == ("tree" if row["n"] < cross else "ring")


# ============================================================================ 5 error feedback
@pytest.fixture(scope="module")
def ef():
    return ft.ef_runs()


def test_top_k_without_feedback_stalls(ef):
    assert ef.kept == 1 and ef.keep_frac == 0.01
    assert ef.gap < 1e-5 < 1e-3 < ef.end_frac                 # with EF near the optimum, without it not
    assert ef.without_frac > 0.1                              # after the same 500 steps
    assert ef.change_frac < 0.01                              # stalled: < 1 % over the last 1,000 steps
    assert ef.ratio_x == pytest.approx(10**6 * 4 / (10**4 * 8))               # FP32 values + INT32 indices: 50×


def test_the_optimum_is_not_a_fixed_point_without_feedback(ef):
    """numpy alone: each worker's gradient at the least-squares optimum, top-1 (largest |g|)
    kept, averaged; the average is not zero, while the plain average is."""
    prob = least_squares()
    A, bvec, x = prob.A, prob.b, prob.x_opt
    G = np.stack([A[w].T @ (A[w] @ x - bvec[w]) / A.shape[1] for w in range(A.shape[0])])
    kept = np.zeros_like(G)
    for w, g in enumerate(G):
        i = int(np.argmax(np.abs(g)))
        kept[w, i] = np.float32(g[i])
    assert np.linalg.norm(G.mean(axis=0)) < 1e-10
    assert ef.drift == pytest.approx(np.linalg.norm(kept.mean(axis=0)), rel=1e-6) and ef.drift > 1e-3


# ============================================================================ 6 time to train
TT_FORMS = Decision(baseline=1e5 * (0.3 + 0.2), compressed=2e5 * (0.3 + 0.2 / 100),
                    break_even_comm=0.3 / (1 - 2 / 100))                       # x·c/(1 − (1+x)/r), x = 1
"""Time to train without and with the compressor of ``ft.TIME_TO_TRAIN``, written out."""


def test_time_to_train(glued):
    base, comp, brk = TT_FORMS.baseline, TT_FORMS.compressed, TT_FORMS.break_even_comm
    assert (glued["tt_base_s"], glued["tt_comp_s"]) == (f"{base:,.0f} s", f"{comp:,.0f} s") == ("50,000 s", "60,400 s")
    assert comp > base                                                         # 100× faster comm, slower run
    assert glued["tt_break_s"] == fmt_time(brk, 3)
    assert (glued["tt_ratio_x"], glued["tt_more_x"]) == ("100×", "2×")


# ============================================================================ 7 async
def test_async_logp_condition(glued):
    L, o, T = 100e-6, 50e-6, 80e-6
    assert (glued["as_t_s"], glued["as_L_s"], glued["as_o_s"]) == tuple(fmt_time(x, 3) for x in (T, L, o))
    assert glued["as_step_s"] == fmt_time(2 * o + max(T, L), 3) and glued["as_stall_s"] == fmt_time(L - T, 3)
    assert glued["as_hidden_frac"] == f"{100 * T / L:g}%"
    assert T > o and L - T > 0                             # the chapter's T > o holds, the GPU still waits


# ============================================================================ 8 silent corruption
def test_bit_flips_against_struct():
    r = ft.bit_flips()
    rng = np.random.default_rng(0)
    g = (0.01 * rng.standard_normal(100_000)).astype(np.float32)
    v = float(g[int(rng.integers(100_000))])
    assert v == r.value
    norm2 = float(np.sum(g.astype(np.float64) ** 2))
    (bits,) = struct.unpack("<I", struct.pack("<f", v))
    caught, worst = 0, 0.0
    for k in range(32):
        (w,) = struct.unpack("<f", struct.pack("<I", bits ^ (1 << k)))
        change = abs(math.sqrt(norm2 - v * v + w * w) - math.sqrt(norm2)) / math.sqrt(norm2)
        caught += change > 0.01
        worst = max(worst, abs(w / v)) if change <= 0.01 else worst
    assert r.norm == caught == 1 and r.worst == pytest.approx(worst) == 16
    assert r.crc == 32                               # CRC-32 detects every single-bit error


def test_fleet_bits_per_day():
    assert ft.fleet_bits_per_day() == pytest.approx(10_000 * 8 * 400e9 * 86_400)


# ============================================================================ 9 flat against hierarchical
def hier(N, G, n):
    return 2 * (G - 1) * (NV.alpha + n / (G * NV.beta)) + 2 * (N - 1) * (IB.alpha + n / G / (N * IB.beta))


def test_flat_against_hierarchical_closed_forms():
    t = fo.flat_hier_table()
    for r in t.rows:
        N = r["nodes"]
        for k, n in enumerate(fo.FLAT["sizes"]):
            assert r[f"flat{k}"] == pytest.approx(ring(8 * N, n, IB.alpha, IB.beta), rel=REL)
            assert r[f"hier{k}"] == pytest.approx(hier(N, 8, n), rel=REL)
    assert round(t.rows[0]["x1"], 1) == fa.CHAPTER["flat_speedup"] == 4.8       # the chapter's ≈ 4.8×


def test_nic_load_simulated():
    r = fo.nic_load()
    N, G, n = 8, 8, 1 * GB
    p = N * G
    assert r.ring_s == pytest.approx(ring(p, n, IB.alpha, IB.beta), rel=1e-9)
    assert r.hier_s == pytest.approx(hier(N, G, n), rel=1e-9)
    assert r.nic_flat_bytes == pytest.approx(2 * (p - 1) / p * n, rel=REL)
    assert r.hier_nic_bytes == pytest.approx(2 * (N - 1) / N * n / G, rel=REL)
    assert r.ring_total_bytes == pytest.approx(N * 2 * (p - 1) / p * n, rel=REL)
    assert r.hier_total_bytes == pytest.approx(p * 2 * (N - 1) / N * n / G, rel=REL)
    assert r.nic_times == pytest.approx(9) and fa.CHAPTER["flat_traffic_cut"] == 8   # page 9×, chapter "8×"
    assert r.ring_total_bytes / r.hier_total_bytes == pytest.approx(1.125)
    one_nic = 2 * (G - 1) * (NV.alpha + n / (G * NV.beta)) + 2 * (N - 1) * (IB.alpha + n / (N * IB.beta))
    assert r.hier_one_s == pytest.approx(one_nic, rel=1e-9)
    assert r.ring_one_s == pytest.approx(r.ring_s, rel=1e-9)


# ============================================================================ 10 inside one node
def test_intra_node_models():
    t = fo.intra_node_table()
    a, b, p = NV.alpha, NV.beta, 8
    forms = {"innet": lambda n: a + n / b, "ring": lambda n: ring(p, n, a, b),
             "two_shot": lambda n: 2 * a + 2 * (p - 1) / p * n / b, "tree": lambda n: 6 * (a + n / b)}
    for r in t.rows:
        for k, n in enumerate(fo.INTRA["sizes"]):
            assert r[f"t{k}"] == pytest.approx(forms[r["algo"]](n), rel=REL)
            assert r[f"x{k}"] == pytest.approx(forms[r["algo"]](n) / (a + n / b), rel=REL)
    ring_row = next(r for r in t.rows if r["algo"] == "ring")
    assert 1.7 < ring_row["x1"] < 1.8 and ring_row["x0"] > 6                  # 2(p−1)/p at large n



def test_intra_node_numbers_on_the_page(glued):
    """The prose's ring over one crossbar hop, 2(p−1)(α + n/(pβ)) / (α + n/β), at 1 MB and 1 GB."""
    a, b, p = NV.alpha, NV.beta, 8
    x = lambda n: ring(p, n, a, b) / (a + n / b)
    assert (glued["ix_p"], glued["ix_steps"]) == ("8", str(2 * (p - 1)))
    assert (glued["ix_small_bytes"], glued["ix_big_bytes"]) == (fmt_bytes(1 * MB), fmt_bytes(1 * GB))
    assert glued["ix_ring_small_x"] == f"{x(1 * MB):.2f}×" and glued["ix_ring_big_x"] == f"{x(1 * GB):.2f}×"


# ============================================================================ 11 rank placement
def test_placement_simulated_against_bottleneck_closed_forms():
    t = fo.placement_table()
    p, n = 32, 1 * GB
    fast, half, quarter = (ring(p, n, IB.alpha, IB.beta / k) for k in (1, 2, 4))
    want = {"rails": (fast, fast, fast), "nic2": (fast, half, fast), "nic4": (fast, quarter, fast),
            "spine2": (half, fast, fast)}
    for r in t.rows:
        got = (r["block"], r["round_robin"], r["snake"])
        assert got == pytest.approx(want[r["cluster"]], rel=1e-9), r["cluster"]
    spread = {r["cluster"]: r["spread"] for r in t.rows}
    lo, hi = fa.CHAPTER["mapping_share"]                                       # "50–60 %" of nccl-tests
    assert lo <= 1 / spread["nic2"] <= hi
    assert 2 * 0.99 < spread["nic2"] <= 2 and 4 * 0.99 < spread["nic4"] <= 4   # the summary's "2–4×"
    pl = fo.placement()
    assert (pl.x2_x, pl.x4_x, pl.k2, pl.k4) == (spread["nic2"], spread["nic4"], 2, 4)


# ============================================================================ 12 benchmark context
def test_benchmark_context_from_the_raw_files(glued):
    text = (ROOT / "code" / "commbook" / "data" / "measured" / "nccl-tests" / fo.CONTEXT_LOG).read_text()
    block = text.split("all_reduce_perf")[1].split("Collective test concluded")[0]
    rows = [ln.split() for ln in block.splitlines() if re.match(r"\s+\d+\s+\d+\s+double", ln)]
    busbw = [float(c[7]) * 1e9 for c in rows]                                  # out-of-place busbw column
    assert glued["bc_busbw_Bps"] == fmt_rate(max(busbw), 3) and max(busbw) > NV.beta
    assert glued["bc_wire_Bps"] == fmt_rate(NV.beta, 3) and glued["bc_over_frac"] == fmt_pct(max(busbw) / NV.beta - 1)
    off = json.loads((ROOT / "code" / "commbook" / "data" / "measured" / f"{fo.SHARP_OFF}.json").read_text())
    off_bus = off["points"][-1]["busbw_bytes_per_s"]
    assert glued["bc_off_Bps"] == fmt_rate(off_bus, 3) and off["conditions"]["sharp"] is False
    assert glued["bc_gap_frac"] == fmt_pct(max(busbw) / off_bus - 1) and glued["bc_ranks"] == "8"
    run = next(r for r in load_log(fo.CONTEXT_LOG) if r.collective == "all_reduce")
    assert "NCCL_ALGO" not in block and not (run.parameters.get("NCCL_ALGO") or run.parameters.get("algo"))
    assert all(d.rank == d.device for d in run.devices)                   # what the log records


# ============================================================================ §1.10
def test_lighthouse_table_renders_every_cell_in_both_languages():
    t = su.lighthouse_table()
    assert [a["key"] for a in su.ARCHETYPES] == ["A", "B", "C"] and len(t) == 3
    for lang in ("en", "zh"):
        cells = [c for row in t.cells(lang) for c in row]
        assert not any(re.fullmatch(r"(name|coll|limit|tech|fig)_[ABC]", c) for c in cells)
        assert "all-reduce" in t.cells(lang)[0][1] and "all-to-all" in t.cells(lang)[1][1]
    figs = t.meta["figures"]
    nl = fo.nic_load()
    assert f"{nl.ring_s / nl.hier_s:.2f}×" in figs["A"]["en"]
    assert "3,584 → 448" in figs["B"]["en"] and "3,584 → 448" in figs["B"]["zh"]   # p(p−G) and N(N−1)G
    assert 8 * 8 * (8 * 8 - 8) == 3584 and 8 * 7 * 8 == 448
    assert "4× (INT8) to 32× (1-bit)" in figs["C"]["en"] and "1/4（INT8）到 1/32" in figs["C"]["zh"]   # 4d/(d+4), 32d/(d+32)


def test_recap_numbers():
    g, d = executed_glue(PAGE["10-summary", "en"]), 10**6
    assert (g["rc_nstar_ib_bytes"], g["rc_nstar_nvl_bytes"]) == (fmt_bytes(100 * KB), fmt_bytes(675 * KB))
    assert g["rc_int8_x"] == fmt_ratio(4 * d / (d + 4))                      # one FP32 scale per tensor
    assert g["rc_topk_x"] == fmt_ratio(d / (2 * 1000)) and g["rc_topk_values_x"] == fmt_ratio(1000)
    assert (g["rc_l0"], g["rc_l1"], g["rc_topk_keep_frac"]) == ("6", "20", fmt_pct(0.001))
    assert (g["rc_e0_frac"], g["rc_e1_frac"]) == (fmt_pct(1 / 7), fmt_pct(1 / 21))   # 1/(L + 1)
    assert 0.05 - 0.01 < 1 / 21 < 1 / 7 < 0.15 and g["rc_stated"] == "5%–15%"      # the chapter's 5–15 %


def test_takeaway_numbers():
    t = su.takeaway_numbers()
    assert t.nstar_bytes == pytest.approx(2e-6 * 50e9)                        # Table 1's ~100 KB
    assert t.cross_log_bytes == pytest.approx(64 * 10e-6 * 10e9 / 6)
    assert t.nic_times == pytest.approx(9) and round(t.hier_x, 1) == 4.8
    assert t.hier_one_x < 1.05 and t.hier_one_x < 1.1 < t.hier_x
    assert (t.flows_d, t.flows_h) == (3584, 448)
    assert (t.h10_frac, t.h20_frac) == pytest.approx((0.9, 0.95))            # (L−1)/L: the chapter's 90–95 %
    assert 2 * 0.99 < t.map2_x <= 2 and 4 * 0.99 < t.map4_x <= 4            # the chapter's 2–4×
    assert t.ef_gap < 1e-5 < t.ef_plain_frac


# ============================================================================ pages
def _text(key, lang):
    return PAGE[(key, lang)].read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pages_structure(lang):
    note, check = {"en": ("{ref}`note ", "Check yourself"), "zh": ("{ref}`注 ", "自测")}[lang]
    f, s = _text("09-fallacies", lang), _text("10-summary", lang)
    assert f.count(note) == 4 and f.count(f"admonition}} {check}") == 3     # notes: notes/ch1-sources.md
    assert len(re.findall(rf"^\({lang}-ch1-fall-[a-z]+\)=$", f, re.M)) == 12        # twelve items
    assert len(re.findall(r"^## ", f, re.M)) == 12
    assert len(re.findall(r"^- \*\*", s, re.M)) == 7                                   # seven takeaways
    assert s.count(f"admonition}} {check}") == 1
    outside = {"en": "outside this book", "zh": "不在本书范围内"}[lang]
    assert outside in s and outside in f                                      # fault tolerance
    for page in (f, s):                                                      # one visible code cell each
        cells = re.findall(r"```\{code-cell\} python\n(:tags: \[[^\]]*\])?", page)
        assert sum(1 for c in cells if not c) == 1


@pytest.fixture(scope="module")
def page_glue():
    return {k: v for key in ("09-fallacies", "10-summary") for k, v in executed_glue(PAGE[(key, "en")]).items()}


def test_pages_glue_the_independent_values(page_glue):
    g = page_glue
    assert g["pp_bubble_frac"] == "17.9%" and g["pp_m_min"] == "29" and g["pp_chapter_m"] == "32"
    assert g["pp_m16"] == str(4 * 15 + 1) and g["pp_q_m"] == "100"               # 11·9 = 99 < m
    assert g["rt_ring_lat_us"] == "1,260" and g["rt_tree_bw_us"] == "1,200" and g["rt_chapter_bw_us"] == "1,000"
    assert g["rt_tree_us"] == "1,320" and g["rt_ring_us"] == "1,456.9"
    assert g["as_stall_s"] == fmt_time(100e-6 - 80e-6, 3) and g["as_step_s"] == fmt_time(200e-6, 3)
    assert g["fl_speedup_x"] == f"{ring(64, GB, IB.alpha, IB.beta) / hier(8, 8, GB):.3g}×" == "4.77×"
    assert g["fl_nic_times"] == "9" and g["fl_ch_cut"] == "8"
    assert g["bc_busbw_Bps"] == "482 GB/s" and g["bc_off_Bps"] == "370 GB/s"
    assert g["tt_base_s"] == "50,000 s" and g["tt_comp_s"] == "60,400 s"
    assert g["sd_norm"] == "1" and g["sd_crc"] == "32"
    assert g["tk_nstar_bytes"] == fmt_bytes(100 * KB) and g["tk_flows_d"] == "3,584" and g["tk_flows_h"] == "448"
    assert g["tk_h10_frac"] == "90%" and g["tk_h20_frac"] == "95%" and g["tk_map2_x"] == "2×" and g["tk_map4_x"] == "4×"
    assert g["rc_topk_x"] == "500×" and g["rc_topk_values_x"] == "1,000×"                 # 1/0.001, values only
    assert g["rt_q_cross_bytes"] == fmt_bytes((2 * 127 - 14) * 10e-6 * 10e9 / (14 - 2 * 127 / 128))  # p = 128


def test_summary_does_not_pass_off_the_toy_model_as_a_system():
    """§1.10: the equal-layer model's exposed shares are the model's, not 'what a
    well-configured system reaches'; the original's unsourced 5-15 % sits in its note."""
    from pathlib import Path
    from commbook.book.ch1 import summary as su
    root = Path(__file__).resolve().parents[1]
    en = (root / "chapters/en/ch1/10-summary.md").read_text()
    zh = (root / "chapters/zh/ch1/10-summary.md").read_text()
    assert "well-configured system reaches" not in en and "配置得当的系统能达到的范围" not in zh
    notes = [(root / f"chapters/{lang}/notes/ch1-sources.md").read_text() for lang in ("en", "zh")]
    assert all("10-summary.md::rc_stated" in n for n in notes) and su.STATED_RESIDUAL == (0.05, 0.15)


# ============================================================================ the small tables (issue 16 §2)

_FA_TABLES = [fa.alltoall_table, fa.ring_tree_parts_table, ft.ef_table, ft.train_table, fo.nic_table]
_ARGS = {ft.train_table: (TT_FORMS,)}
_ALIAS = {fa.__name__: "fa", ft.__name__: "ft", fo.__name__: "fo"}


@pytest.mark.parametrize("make", _FA_TABLES, ids=[f.__name__ for f in _FA_TABLES])
def test_fallacy_tables_render_and_are_on_both_pages(make):
    t = make(*_ARGS.get(make, ()))
    for lang in ("en", "zh"):
        assert "<table" in t.to_html(lang)
        assert f"HTML({_ALIAS[make.__module__]}.{make.__name__}(" in _text("09-fallacies", lang)
    if "what" in t.columns:
        assert all(r["what"] in t.labels["zh"] for r in t.rows)


def test_fallacy_tables_carry_the_worked_numbers():
    """All-reduce as routing sends 2p times the bytes; the ring/tree terms add up to the
    totals the item glues (1,260 + 196.9 µs, 120 + 1,200 µs); time to train 50,000 s against
    60,400 s; the busiest NIC carries 9× less in the hierarchy while the bytes per node
    barely change."""
    a2a, ar = fa.alltoall_table().rows
    p = fa.alltoall_table().meta.p
    assert ar["sent"] / a2a["sent"] == pytest.approx(2 * p) and ar["buffer"] == p * a2a["buffer"]
    ring, tree = fa.ring_tree_parts_table().rows
    assert ring["lat"] == pytest.approx(1260 * us) and ring["total"] == pytest.approx(ring["lat"] + ring["bw"])
    assert tree["bw"] == pytest.approx(1200 * us) and tree["total"] == pytest.approx(1320 * us)
    tt = {r["what"]: r["raw"] for r in ft.train_table(TT_FORMS).rows}
    assert (tt["Time to train, uncompressed"], tt["Time to train, compressed"]) == (50_000, 60_400)
    nics = {r["algo"]: r for r in fo.nic_table().rows}
    assert nics["ring"]["nic_max"] / nics["hierarchical"]["nic_max"] == pytest.approx(9, rel=0.01)
    assert nics["hierarchical"]["per_node"] > 0.85 * nics["ring"]["per_node"]
    ef = {r["what"]: r["raw"] for r in ft.ef_table().rows}
    assert ef["Workers"] == least_squares().workers and ef["Values sent per worker and step"] == 1
