"""commbook.compression against the chapter's §1.6 (inventory C.1 T-j, T-k, T-l; C.2
"Quantization", "Sparsification", Example 1.2, Napkin Math 1.7, Checkpoint 1.4, "When
to use compression"; flag F19), numpy references and closed forms.

Sizes are read from the payloads' own arrays; the chapter's numbers are compared after
its rounding.  Where the chapter is wrong (the top-1 % row of its table) both numbers
are pinned.
"""
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from commbook.book.ch1.inputs import CHAPTER_COMPRESSION_TABLE, NM17, compression_table
from commbook.compression import (FP16, ErrorFeedback, Identity, Int8, RandomK, Sign, Threshold, TopK,
                                  break_even_comm_time, compressed_allreduce_time, compression_decision,
                                  compression_payoff, decimal_text, ef_trace, exact,
                                  index_dtype_for, int8_block_ratio, least_squares,
                                  onebit_adam_ratio, sparse_ratio, steady_state, step_time, time_to_train,
                                  train_adam, train_onebit_adam, train_sgd, update_at_optimum)
from commbook.compression.training import ONEBIT_WARMUP

F = Fraction


def grad(d, seed=0):
    return np.random.default_rng(seed).standard_normal(d)


# --------------------------------------------------------------------------- sizes
def test_block_int8_ratios():
    """§1.6.1: d + 4d/b bytes, ratio 4b/(b + 4) = 3.88× at b = 128 (3.879), 3.938× at 256."""
    d = 128 * 256 * 64                                  # a multiple of both block sizes
    for b, stated in ((128, 3.879), (256, 3.938)):
        p = Int8(b).encode(grad(d))
        assert p.breakdown == {"values": d, "scales": 4 * d // b}
        assert p.ratio == pytest.approx(4 * b / (b + 4)) == pytest.approx(int8_block_ratio(b))
        assert round(p.ratio, 3) == stated
    assert round(Int8(128).encode(grad(d)).ratio, 2) == 3.88          # the chapter's figure
    assert Int8().encode(grad(1000)).nbytes == 1000 + 4               # one scale per tensor


def test_topk_ratios_with_index_overhead():
    """§1.6.2: K = 0.1 % of d: 1000× nominal, 500× with FP32 values + INT32 indices (d/(2K));
    16-bit indices (d ≤ 65,536) give 4d/(6K) = 666.7×."""
    p = TopK(0.001).encode(grad(10**6))
    assert p.breakdown == {"values": 4000, "indices": 4000} and p.ratio == 500.0
    assert sparse_ratio(10**6, 1000) == 500 == 10**6 / (2 * 1000)
    small = TopK(0.001).encode(grad(65_000))
    assert small.arrays["indices"].dtype == np.uint16 and small.arrays["values"].size == 65
    assert round(small.ratio, 1) == 666.7 and small.ratio == pytest.approx(4 * 65_000 / (65 * 6))
    assert index_dtype_for(65_536) == np.uint16 and index_dtype_for(65_537) == np.int32
    assert TopK(0.001, index_dtype="int32").encode(grad(65_000)).ratio == pytest.approx(500)


def test_one_bit_ratio_with_a_scale_per_million():
    """1 bit per element plus one FP32 scale per 10⁶ elements: 4·10⁶/(125,000 + 4) = 31.999×."""
    p = Sign(chunk=10**6).encode(grad(10**6))
    assert p.breakdown == {"bits": 125_000, "scales": 4}
    assert round(p.ratio, 3) == 31.999 and p.ratio < 32
    assert Sign(chunk=10**6).encode(grad(3 * 10**6)).arrays["scales"].size == 3


def test_chapter_table_topk_row_is_100_but_encodes_to_50():
    """Flag F19: the table's "Top-k (1%) 100×" ignores the chapter's own index formula d/(2K)."""
    rows = {name: (stated, got) for name, stated, got, _ in compression_table(10**6)}
    assert dict((n, r) for n, r, _ in CHAPTER_COMPRESSION_TABLE)["Top-k (1%) + EF"] == 100
    assert rows["Top-k (1%) + EF"] == (100.0, 50.0)
    assert TopK(0.01).encode(grad(10**6)).ratio == 50.0
    # the 100× is the values alone (Definition 1.4: 140 GB -> 1.4 GB "before index overhead")
    assert round(140e9 / (140e9 * 0.01)) == 100
    assert rows["FP16"] == (2.0, 2.0)
    assert rows["INT8 + EF"][1] == pytest.approx(4, rel=1e-5)
    assert rows["1-bit + EF"][1] == pytest.approx(32, rel=1e-4) and rows["1-bit + EF"][1] < 32


@pytest.mark.parametrize("seed", range(8))
def test_closed_form_size_equals_payload(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 90_000))
    ops = [Identity(), FP16(), Int8(), Int8(int(rng.integers(1, 300))), Sign(), Sign(int(rng.integers(1, 5000))),
           TopK(float(rng.uniform(0.0005, 1))), RandomK(k=int(rng.integers(1, d + 1))), Threshold()]
    g = rng.standard_normal(d)
    for op in ops:
        p = op.encode(g, rng)
        assert p.nbytes == op.encoded_bytes(d), op.name
        assert p.ratio == pytest.approx(op.ratio(d))


# ----------------------------------------------------------------------- round trips
@pytest.mark.parametrize("block", [None, 7, 64, 128])
def test_int8_error_at_most_half_a_step(block):
    g = grad(5000, seed=3) * np.geomspace(1e-3, 10, 5000)
    op = Int8(block)
    p = op.encode(g)
    s = op.scales(p)
    assert np.all(np.abs(op.decode(p) - g) <= s / 2 * (1 + 1e-12))
    # the scale is max|g|/127 of the block (stored in FP32)
    b = g.size if block is None else block
    ref = np.array([np.abs(g[i:i + b]).max() / 127 for i in range(0, g.size, b)], dtype=np.float32)
    assert np.array_equal(p.arrays["scales"], ref)
    assert np.abs(p.arrays["values"].astype(int)).max() == 127


def test_block_quantization_cuts_the_error_on_heavy_tails():
    """§1.6.1: per-block scales cut the error 2–5× on heavy-tailed gradients."""
    g = np.random.default_rng(0).standard_t(3, 2**16)
    rms = lambda op: np.sqrt(np.mean((op(g) - g) ** 2))
    assert rms(Int8()) / rms(Int8(128)) >= 2


def test_fp16_and_sign_against_numpy():
    g = grad(1001)
    assert np.array_equal(FP16()(g), g.astype(np.float16).astype(np.float64))
    s = np.float32(np.mean(np.abs(g)))
    assert np.allclose(Sign()(g), np.where(g >= 0, s, -s))
    with pytest.raises(ValueError, match="FP16 range"):
        FP16().encode(np.array([1e5]))


@pytest.mark.parametrize("seed", range(5))
def test_topk_keeps_exactly_the_k_largest(seed):
    g = grad(4096, seed)
    for frac in (0.001, 0.01, 0.1):
        out = TopK(frac)(g)
        k = round(frac * 4096)
        assert np.count_nonzero(out) == k
        keep = np.argsort(-np.abs(g), kind="stable")[:k]
        assert set(np.flatnonzero(out)) == set(keep)
        assert np.allclose(out[keep], g[keep].astype(np.float32))


def test_random_k_is_unbiased():
    """Mean of 10,000 seeded draws within 3 standard errors of g for every element, with the
    closed-form variance g²(d/k − 1) per draw; and the exact mean over all C(d, k) subsets."""
    d, k, trials = 10, 3, 10_000
    g = grad(d, seed=4)
    op, rng = RandomK(k=k), np.random.default_rng(2024)
    draws = np.array([op(g, rng) for _ in range(trials)])
    assert all(np.count_nonzero(x) == k for x in draws[:100])
    se = np.sqrt(g**2 * (d / k - 1) / trials)
    assert np.all(np.abs(draws.mean(axis=0) - g) <= 3 * se)
    assert np.allclose(draws.var(axis=0), g**2 * (d / k - 1), rtol=0.05)
    subsets = list(combinations(range(d), k))                 # every choice equally likely
    exact_mean = sum(np.bincount(s, minlength=d) for s in subsets) / len(subsets) * (d / k)
    assert np.allclose(exact_mean, 1.0)


# --------------------------------------------------------------------- error feedback
G5 = ["0.4", "0.3", "0.2", "0.4", "0.3"]
TABLE_4 = [  # g, e, g+e, v, e_next, cumulative v
    ("0.4", "0", "0.4", "0", "0.4", "0"), ("0.3", "0.4", "0.7", "1", "-0.3", "1"),
    ("0.2", "-0.3", "-0.1", "0", "-0.1", "1"), ("0.4", "-0.1", "0.3", "0", "0.3", "1"),
    ("0.3", "0.3", "0.6", "1", "-0.4", "2")]


def test_table_3_naive_trace_sends_nothing():
    rows = ef_trace([0.4, 0.3, 0.2, 0.4, 0.3], feedback=False)
    assert [r.sum_g for r in rows] == [F(s) for s in ("0.4", "0.7", "0.9", "1.3", "1.6")]
    assert all(r.v == 0 for r in rows) and rows[-1].sum_v == 0
    assert sum(r.lost for r in rows) == F("1.6")                        # "100% loss"


def test_table_4_and_example_1_2_exactly():
    rows = ef_trace([0.4, 0.3, 0.2, 0.4, 0.3])
    got = [(r.g, r.e, r.acc, r.v, r.e_next, r.sum_v) for r in rows]
    assert got == [tuple(F(x) for x in row) for row in TABLE_4]
    assert rows[-1].sum_v == 2 and rows[-1].e_next == F("-0.4") and rows[-1].sum_g == F("1.6")
    assert [decimal_text(r.e_next) for r in rows] == ["0.4", "\u22120.3", "\u22120.1", "0.3", "\u22120.4"]
    assert ef_trace(G5) == rows == ef_trace([F(2, 5), F(3, 10), F(1, 5), F(2, 5), F(3, 10)])


def test_telescoping_identity_at_every_step():
    """Σ_{t≤T} v_t = Σ_{t≤T} g_t + e₁ − e_{T+1}, exactly, for the chapter's input and others."""
    rng = np.random.default_rng(7)
    for gs, e1 in ((G5, 0), ([str(round(x, 2)) for x in rng.uniform(-1, 1.5, 40)], "0.25")):
        for r in ef_trace(gs, e1=e1):
            assert r.sum_v == r.sum_g + exact(e1) - r.e_next


def test_binary_floats_drift_where_fractions_do_not():
    """The reason the trace uses Fraction: with float64 the residual of Checkpoint 1.4's input
    reaches 0.49999999999999994 at step 5 and the quantum is not sent."""
    ef = ErrorFeedback(Threshold())
    sent = [int(ef.step(np.array([0.3]))[1][0]) for _ in range(5)]
    assert sent == [0, 1, 0, 0, 0]
    assert ef.error[0] == pytest.approx(0.5) and ef.error[0] < 0.5
    assert [int(r.v) for r in ef_trace([0.3] * 5)] == [0, 1, 0, 0, 1]


def test_checkpoint_1_4_steady_state():
    """Constant g = 0.3, threshold 0.5: sends 0,1,0,0,1,0,0,0,1,0, mean 0.3, e in [−0.5, 0.4]."""
    s = steady_state(0.3)
    assert (s.transient, s.period) == (0, 10)
    assert [int(v) for v in s.pattern] == [0, 1, 0, 0, 1, 0, 0, 0, 1, 0]
    assert s.mean_v == F(3, 10)
    assert (s.e_min, s.e_max) == (F(-1, 2), F(2, 5))
    assert (s.acc_min, s.acc_max) == (F(-1, 5), F(7, 10))


@pytest.mark.parametrize("g", ["0.1", "0.25", "1/3", "0.7", "0.95", "1"])
def test_steady_state_mean_equals_g_and_residual_stays_in_bounds(g):
    """Over a cycle the residual returns, so telescoping gives mean v = g exactly; for
    0 ≤ g ≤ 1 the residual stays in [threshold − quantum, threshold)."""
    s = steady_state(F(g))
    assert s.mean_v == F(g)
    assert F(-1, 2) <= s.e_min and s.e_max < F(1, 2)
    assert all(r.sum_v == r.sum_g - r.e_next for r in s.rows)


def test_error_feedback_wraps_any_operator():
    rng = np.random.default_rng(0)
    for op in (TopK(0.05), Sign(), Int8(16)):
        ef, sum_v, sum_g = ErrorFeedback(op), 0, 0
        for _ in range(200):
            g = rng.standard_normal(200) + 0.3
            _, v = ef.step(g)
            sum_v, sum_g = sum_v + v, sum_g + g
        assert np.allclose(sum_v, sum_g - ef.error)                    # telescoping
        assert np.linalg.norm(ef.error) < 0.1 * np.linalg.norm(sum_g)  # bounded residual


def test_error_feedback_refuses_rescaled_random_k():
    with pytest.raises(ValueError, match="not contractive"):
        ErrorFeedback(RandomK(0.1))
    ef, rng, norms = ErrorFeedback(RandomK(0.1), allow_noncontractive=True), np.random.default_rng(0), []
    for _ in range(30):
        ef.step(np.ones(100), rng)
        norms.append(np.linalg.norm(ef.error))
    assert norms[-1] > 10 * norms[0]                                      # the residual grows


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def runs():
    p = least_squares()
    out = {"problem": p, "fp32": train_sgd(p)}
    for name, op in (("top1", TopK(0.01)), ("top10", TopK(0.1)), ("sign", Sign()), ("int8", Int8())):
        out[name + "+ef"] = train_sgd(p, op)
        out[name] = train_sgd(p, op, feedback=False)
    out["adam"], out["1bit"] = train_adam(p), train_onebit_adam(p)
    return out


def test_problem_is_least_squares(runs):
    p = runs["problem"]
    A, b = p.A.reshape(-1, p.dim), p.b.ravel()
    assert np.allclose(A.T @ (A @ p.x_opt - b), 0, atol=1e-9)           # normal equations
    x, h = np.random.default_rng(1).standard_normal(p.dim), 1e-5
    num = [(p.loss(x + h * e) - p.loss(x - h * e)) / (2 * h) for e in np.eye(p.dim)]
    assert np.allclose(p.gradients(x).mean(axis=0), num, atol=1e-6)


def test_error_feedback_converges_and_its_absence_does_not(runs):
    for name in ("top1", "top10", "sign"):
        assert runs[name + "+ef"].final <= 1e-5, name
    for name in ("top1", "sign"):
        assert runs[name].final >= 100 * runs[name + "+ef"].final, name
    assert runs["fp32"].final <= 1e-7


def test_the_optimum_is_not_a_fixed_point_without_feedback(runs):
    p = runs["problem"]
    assert update_at_optimum(p) < 1e-12
    for op in (TopK(0.01), TopK(0.1), Sign()):
        assert update_at_optimum(p, op) > 1e-3


def test_int8_tracks_uncompressed(runs):
    """Final loss within 1 % of the uncompressed run, with and without error feedback; with
    it even the excess loss is within 1 %."""
    base = runs["fp32"]
    for name in ("int8+ef", "int8"):
        assert runs[name].final_loss == pytest.approx(base.final_loss, rel=0.01)
    assert runs["int8+ef"].final == pytest.approx(base.final, rel=0.01)


def test_bytes_on_the_wire(runs):
    steps = runs["fp32"].steps
    assert runs["fp32"].bytes_up == 4 * 100 * steps
    assert runs["top1+ef"].bytes_up == (4 + 2) * steps                  # 1 FP32 value + 1 uint16 index
    assert runs["sign+ef"].bytes_up == (13 + 4) * steps                 # ceil(100/8) + one scale


def test_onebit_adam_converges_and_sends_less(runs):
    adam, one = runs["adam"], runs["1bit"]
    assert adam.final <= 1e-12 and one.final <= 1e-5
    f, r = ONEBIT_WARMUP, Sign().ratio(100)
    assert adam.bytes_up / one.bytes_up == pytest.approx(onebit_adam_ratio(f, bits=r))
    assert onebit_adam_ratio(f) == pytest.approx(1 / (0.2 + 0.8 / 32)) == pytest.approx(4.444, abs=1e-3)
    assert onebit_adam_ratio(f, Sign().ratio(10**6)) == pytest.approx(onebit_adam_ratio(f), rel=1e-4)
    # the paper's "up to 5x less communication" is a warm-up of 17.4 % of the steps
    assert onebit_adam_ratio((1 / 5 - 1 / 32) / (1 - 1 / 32)) == pytest.approx(5)


def test_runs_are_reproducible():
    p = least_squares(seed=3)
    a = train_sgd(p, RandomK(0.2), feedback=False, steps=50, seed=9)
    b = train_sgd(p, RandomK(0.2), feedback=False, steps=50, seed=9)
    assert np.array_equal(a.excess, b.excess)


# ----------------------------------------------------------------------------- payoff
def test_napkin_math_1_7():
    """The chapter's case, 40 ms at 8× effective with 2 ms of overhead, and the same compressor on NVLink."""
    r, o = NM17["effective_ratio"], NM17["overhead"]
    net, nv = compression_payoff(NM17["t_comm"], r, o), compression_payoff(NM17["t_comm_nvlink"], r, o)
    assert NM17["t_comm"] / NM17["effective_ratio"] == net.t_comm_new == pytest.approx(5e-3)
    assert net.t_total_new == pytest.approx(7e-3)
    assert round(net.speedup, 1) == 5.7 and round(net.speedup, 3) == 5.714
    assert net.saving == pytest.approx(35e-3) and net.worthwhile            # "2 ms buys 35 ms"
    assert nv.t_total_new == pytest.approx(2.125e-3) and nv.speedup < 1 and not nv.worthwhile
    assert net.break_even_comm == pytest.approx(2e-3 / (7 / 8))             # 2.286 ms


def test_when_to_use_compression_cases():
    a = compression_decision(100_000, 0.3, 0.2, 4, 0.10)
    assert a.baseline == pytest.approx(50_000) and a.compressed == pytest.approx(38_500)
    assert round(-a.change * 100) == 23 and a.worthwhile
    b = compression_decision(100_000, 0.3, 0.03, 4, 0.10)
    assert b.baseline == pytest.approx(33_000) and b.compressed == pytest.approx(33_825)
    assert round(b.change * 100, 1) == 2.5 and not b.worthwhile
    t = break_even_comm_time(0.3, 4, 0.10)
    assert t == pytest.approx(0.03 / 0.725) == pytest.approx(41.38e-3, abs=1e-5)
    assert time_to_train(1, 0.3, t) == pytest.approx(time_to_train(1, 0.3, t, 4, extra_steps=0.1))
    assert break_even_comm_time(0.3, 1.05, 0.10) == float("inf")


def test_checkpoint_1_4_step_times():
    """Backward 800 ms, all-reduce 200 or 2000 ms, 4× compression."""
    ms = lambda x: round(x * 1e3, 6)
    assert [ms(step_time(0.8, t)) for t in (0.2, 2.0)] == [1000, 2800]
    assert [ms(step_time(0.8, t, 4)) for t in (0.2, 2.0)] == [850, 1300]
    assert [ms(step_time(0.8, t, 1, overlap=True)) for t in (0.2, 2.0)] == [800, 2000]
    assert [ms(step_time(0.8, t, 4, overlap=True)) for t in (0.2, 2.0)] == [800, 800]


def test_compression_helps_only_the_bandwidth_term():
    p, a, b = 64, 10e-6, 50e9
    assert compressed_allreduce_time(p, 1e9, 0.0, b, 4) * 4 == pytest.approx(compressed_allreduce_time(p, 1e9, 0.0, b, 1))
    small = compressed_allreduce_time(p, 1e3, a, b, 1) / compressed_allreduce_time(p, 1e3, a, b, 32)
    assert 1 <= small < 1.01                                               # latency-bound: no gain
    big = compressed_allreduce_time(p, 1e10, a, b, 32)
    assert compressed_allreduce_time(p, 1e10, a, b, 1) / big > 25


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        TopK()
    with pytest.raises(ValueError, match="fraction"):
        TopK(0)
    with pytest.raises(ValueError, match="exceeds"):
        TopK(k=5).encode(np.ones(3))
    with pytest.raises(TypeError, match="rng"):
        RandomK(0.5).encode(np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        Int8().encode(np.array([1.0, np.nan]))
    with pytest.raises(TypeError, match="real numbers"):
        Sign().encode(np.array(["a"]))
    with pytest.raises(ValueError, match="cannot decode"):
        Sign().decode(Int8().encode(np.ones(3)))
    with pytest.raises(ValueError, match="16-bit"):
        TopK(0.5, index_dtype="uint16").encode(np.ones(70_000))
    with pytest.raises(TypeError, match="Fraction"):
        ef_trace([0.3], Sign())
    with pytest.raises(ValueError, match="at least one"):
        ef_trace([])
    with pytest.raises(ValueError, match="ratio"):
        compression_payoff(1.0, 0.5)
    with pytest.raises(ValueError, match="lr"):
        train_sgd(least_squares(), lr=-1)
    with pytest.raises(ValueError, match="warmup"):
        train_onebit_adam(least_squares(), warmup=0)
