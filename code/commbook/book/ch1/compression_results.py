"""Chapter §1.6, the numbers its prose quotes, one typed result per section: every field
carries its unit in its name (``_s``, ``_bytes``, ``_x``, ``_frac``; counts are ints;
exact rationals and numbers too small for a plain decimal are text), so the page glues a
result whole with :func:`commbook.book.glue.glue_fields`.

Each function reads the tables and runs of :mod:`.compression_numbers` and
:mod:`.compression_figures` (which the tables and figures share) or calls
:mod:`commbook.compression` itself, and derives here what the page used to work out by
hand.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ... import compression as cz
from ...collectives import t_formula
from ...hardware import IB_NDR_CHAPTER
from ...units import fmt_ratio
from . import compression_figures as cf
from . import compression_numbers as cn
from .perf_numbers import LLAMA

__all__ = ["Opening", "opening", "Levels", "int8_levels", "Quant", "quant_numbers", "Blocks", "block_numbers", "Sparse",
           "sparse_numbers", "Persistent", "persistent_small", "AtOptimum", "at_optimum", "Def14", "def14", "Example12",
           "example_numbers", "Runs", "run_numbers", "OneBit", "onebit_numbers", "Nm17", "nm17_numbers",
           "Checkpoint", "checkpoint_numbers", "Methods", "method_numbers", "When", "when_numbers"]

dec = cz.decimal_text
"""An exact rational as the tables print it."""


def _sci(x: float) -> str:
    """A residual far below 1, to 2 significant digits in exponent form (``3.9e-08``)."""
    return f"{x:.2g}"


def _minus(n: int) -> str:
    return f"{n}".replace("-", "−")


# ============================================================================ the opening
@dataclass(frozen=True)
class Opening:
    wan_gap: str              # WAN links "10–100×" slower than InfiniBand
    red_range: str            # compression cuts the traffic "4–1000×"


def opening() -> Opening:
    (w0, w1), (r0, r1) = cn.SETTING["wan_gap"], cn.SETTING["reduction"]
    return Opening(wan_gap=f"{w0}–{fmt_ratio(w1)}", red_range=f"{r0}–{fmt_ratio(r1)}")


# ============================================================================ quantization
@dataclass(frozen=True)
class Quant:
    """The quantization table's ratios and the INT8 codes actually used."""
    d: int
    fp16_x: float
    int8_nom_x: float
    int8_x: float
    sign_nom_x: float
    sign_x: float
    levels: int               # distinct INT8 codes produced
    lo: str
    hi: int
    type: int                 # codes the type has
    missing: str              # the code never produced


@dataclass(frozen=True)
class Levels:
    """The INT8 codes per-tensor quantization (s = max|g|/127) produces on values spread
    evenly over [−1, 1]: how many, their range, and the 2⁸ codes the type has."""
    used: int
    lo: int
    hi: int
    type: int


def int8_levels(d: int = 100_001) -> Levels:
    q = cz.Int8().encode(np.linspace(-1.0, 1.0, d)).arrays["values"]
    used = np.unique(q)
    return Levels(used=int(used.size), lo=int(used.min()), hi=int(used.max()), type=2**8)


def quant_numbers(qt) -> Quant:
    """From :func:`.compression_numbers.quant_table` and :func:`int8_levels`."""
    q = {r["op"]: r for r in qt.rows}
    lev = int8_levels()
    return Quant(d=qt.meta["d"], fp16_x=q["fp16"]["ratio"], int8_nom_x=q["int8"]["stated"],
                 int8_x=q["int8"]["ratio"], sign_nom_x=q["sign"]["stated"], sign_x=q["sign"]["ratio"],
                 levels=lev.used, lo=_minus(lev.lo), hi=lev.hi, type=lev.type, missing=_minus(lev.lo - 1))


@dataclass(frozen=True)
class Blocks:
    """Block-wise INT8 ratios, the error gain of per-block scales on heavy tails, and the
    ratio of blocks of 64 with FP16 scales (= blocks of 128 with FP32 ones)."""
    r64_x: float
    r128_x: float
    r256_x: float
    ht_b: int
    ht_lo_x: float
    ht_hi_x: float
    ht_nu_hi: int
    ht_nu_lo: int
    ht_worst_frac: float      # the worst per-tensor max over the per-block max, minus one
    fp16_scales_x: float      # blocks of 64 with FP16 scales
    fp32_scales_x: float      # blocks of 64 with FP32 scales (the library's Int8(64))


def block_numbers(bt, ht, d: int = 10**6) -> Blocks:
    """From :func:`.compression_numbers.block_table` and :func:`~.compression_numbers.heavy_tail_table`."""
    b = {r["b"]: r for r in bt.rows}
    heavy = [r for r in ht.rows if r["nu"] is not None]
    worst = max(r["max_tensor"] / r["max_block"] for r in ht.rows)
    return Blocks(r64_x=b[64]["ratio"], r128_x=b[128]["ratio"], r256_x=b[256]["ratio"], ht_b=ht.meta["block"],
                  ht_lo_x=min(r["gain"] for r in heavy), ht_hi_x=max(r["gain"] for r in heavy),
                  ht_nu_hi=max(r["nu"] for r in heavy), ht_nu_lo=min(r["nu"] for r in heavy), ht_worst_frac=worst - 1,
                  fp16_scales_x=4 * d / (d + 2 * d // 64), fp32_scales_x=4 * d / cz.Int8(64).encoded_bytes(d))


# ============================================================================ sparsification
@dataclass(frozen=True)
class Sparse:
    """Top-0.1 % with 32-bit and 16-bit indices, and random-k's variance factor."""
    share_frac: float
    nominal_x: float
    d: int
    k: int
    int32_x: float
    small_d: int
    int16_x: float
    int16_max: int
    rk_share_frac: float
    rk_var: float             # 1/q − 1
    rk_scale: float           # 1/q


def sparse_numbers(st, rk_share: float = 0.1) -> Sparse:
    """From :func:`.compression_numbers.sparse_table`."""
    big, small = st.rows[0], st.rows[1]
    return Sparse(share_frac=big["share"], nominal_x=big["nominal"], d=big["d"], k=big["k"], int32_x=big["ratio"],
                  small_d=small["d"], int16_x=small["ratio"], int16_max=2**16, rk_share_frac=rk_share,
                  rk_var=1 / rk_share - 1, rk_scale=1 / rk_share)


@dataclass(frozen=True)
class Persistent:
    """Two coordinates, gradient (big, small) every step, top-1: without error feedback the
    small one is never sent; with it, what is sent of it, how often, and its residual."""
    small: float
    big: float
    steps: int
    true: float
    naive: float              # what top-1 sends of it without feedback
    ef: float                 # ... with feedback
    times: int
    every: int
    residual: float
    max: float                # the largest residual on the way


def persistent_small(steps: int = 1000, big: float = 1.0, small: float = 0.01) -> Persistent:
    g = np.array([big, small])
    op, ef = cz.TopK(k=1), cz.ErrorFeedback(cz.TopK(k=1))
    naive = sum(op(g)[1] for _ in range(steps))
    sent, times, worst = 0.0, 0, 0.0
    for _ in range(steps):
        _, v = ef.step(g)
        sent += v[1]
        times += v[1] != 0
        worst = max(worst, float(np.abs(ef.error).max()))
    return Persistent(small=small, big=big, steps=steps, true=steps * small, naive=float(naive), ef=float(sent),
                      times=int(times), every=steps // int(times), residual=float(ef.error[1]), max=worst)


@dataclass(frozen=True)
class AtOptimum:
    """The update each compressor leaves at the optimum of the runs' problem (text: far below 1)."""
    fp32: str
    top1: str
    sign: str


def at_optimum() -> AtOptimum:
    pr = cf.runs()["problem"]
    return AtOptimum(fp32=f"{cz.update_at_optimum(pr, None):.0e}", top1=_sci(cz.update_at_optimum(pr, cz.TopK(0.01))),
                     sign=_sci(cz.update_at_optimum(pr, cz.Sign())))


# ============================================================================ error feedback
@dataclass(frozen=True)
class Def14:
    """Definition 1.4's 70B case (:func:`.compression_numbers.def14`)."""
    full_bytes: float
    values_bytes: float
    share_frac: float
    nominal_x: float
    index_bytes: float
    ratio_x: float
    bits: int
    n_params: float


def def14(share: float = 0.01) -> Def14:
    """Definition 1.4's case: the BF16 gradients of the 70B model, top-1 %: the kept values,
    and the message once indices are counted (32-bit indices into buckets of at most 2³²
    elements: a flat index into 70 billion elements would need more than 32 bits)."""
    d, bpv = int(LLAMA["params"]), LLAMA["bytes_per_value"]
    k = round(share * d)
    full, values = d * bpv, k * bpv
    return Def14(full_bytes=full, values_bytes=values, share_frac=share, nominal_x=full / values,
                 index_bytes=k * (bpv + 4), ratio_x=full / (k * (bpv + 4)), bits=int(np.ceil(np.log2(d))), n_params=d)


@dataclass(frozen=True)
class Example12:
    """Example 1.2 (:func:`.compression_numbers.example_1_2`), exact values as text."""
    inputs: str
    thr: str
    steps: int
    true: str
    naive: str
    lost_frac: float
    sent: str
    res: str
    sends: tuple[int, ...]    # the steps that send (the page joins them in its language)


def example_numbers() -> Example12:
    ex = cn.example_1_2()
    return Example12(inputs=", ".join(dec(Fraction(x)) for x in cn.EF_INPUT), thr=dec(ex["threshold"]),
                     steps=ex["steps"], true=dec(ex["true"]), naive=dec(ex["naive_sent"]),
                     lost_frac=float(ex["lost_share"]), sent=dec(ex["ef_sent"]), res=dec(ex["residual"]),
                     sends=tuple(ex["sends"]))


# ============================================================================ the runs
@dataclass(frozen=True)
class Runs:
    """The seeded least-squares runs of :func:`.compression_figures.runs`: the setting and
    the final gaps (text: far below 1)."""
    workers: int
    dim: int
    rows: int
    steps: int
    het: float
    floor: str
    top1: str
    top10_ef: str
    randk10: str
    sign: str
    top1_x: float             # top-1 without feedback over top-1 with it


def run_numbers() -> Runs:
    R, S = cf.runs(), cf.RUN_SETTINGS
    return Runs(workers=S["workers"], dim=S["dim"], rows=S["rows"], steps=S["steps"], het=S["heterogeneity"],
                floor=f"{cf.FLOOR:.0e}", top1=_sci(R["top1"].final), top10_ef=_sci(R["top10+ef"].final),
                randk10=_sci(R["randk10"].final), sign=_sci(R["sign"].final),
                top1_x=R["top1"].final / R["top1+ef"].final)


@dataclass(frozen=True)
class OneBit:
    """1-bit Adam: the ratio with the runs' warm-up, in the run, and the warm-up share that
    gives the chapter's 5×; the chapter's claims."""
    f_frac: float
    ratio_x: float
    run_x: float
    sign_ratio_x: float
    f5_frac: float
    comm_x: float
    bert_x: float
    squad_x: float
    gpus: int
    final: str


def onebit_numbers() -> OneBit:
    R, S, ob = cf.runs(), cf.RUN_SETTINGS, cn.CHAPTER_ONEBIT
    f = S["warmup"]
    return OneBit(f_frac=f, ratio_x=cz.onebit_adam_ratio(f), run_x=R["adam"].bytes_up / R["1bit"].bytes_up,
                  sign_ratio_x=cz.Sign().ratio(S["dim"]), f5_frac=(1 / ob["comm"] - 1 / 32) / (1 - 1 / 32),
                  comm_x=ob["comm"], bert_x=ob["bert"], squad_x=ob["squad"], gpus=ob["gpus"],
                  final=_sci(R["1bit"].final))


# ============================================================================ when it pays
@dataclass(frozen=True)
class Nm17:
    """Napkin math 1.7 on the network and on NVLink."""
    t_s: float
    nom_x: float
    eff_x: float
    o_s: float
    new_s: float
    total_s: float
    speedup_x: float
    saving_s: float
    even_s: float
    nv_t_s: float
    nv_new_s: float
    nv_total_s: float
    nv_x: float


def nm17_numbers() -> Nm17:
    nm, n17 = cn.napkin_math_1_7(), cn.NM17
    net, nv = nm["network"], nm["nvlink"]
    return Nm17(t_s=n17["t_comm"], nom_x=n17["nominal_ratio"], eff_x=n17["effective_ratio"], o_s=n17["overhead"],
                new_s=net.t_comm_new, total_s=net.t_total_new, speedup_x=net.speedup, saving_s=net.saving,
                even_s=net.break_even_comm, nv_t_s=n17["t_comm_nvlink"], nv_new_s=nv.t_comm_new,
                nv_total_s=nv.t_total_new, nv_x=nv.speedup)


@dataclass(frozen=True)
class Checkpoint:
    """Checkpoint 1.4's givens."""
    bwd_s: float
    ar_lo_s: float
    ar_hi_s: float
    ratio_x: float
    g: str
    thr: str


def checkpoint_numbers() -> Checkpoint:
    cp = cn.CHECKPOINT_1_4
    return Checkpoint(bwd_s=cp["backward"], ar_lo_s=min(cp["allreduce"]), ar_hi_s=max(cp["allreduce"]),
                      ratio_x=cp["ratio"], g=dec(cp["g"]), thr=dec(cp["threshold"]))


@dataclass(frozen=True)
class Methods:
    """The methods table's top-k row (nominal and as encoded) and the 1-bit row."""
    d: int
    topk_x: float
    topk_stated_x: float
    sign_stated_x: float


def method_numbers(mt) -> Methods:
    """From :func:`.compression_numbers.methods_table`."""
    m = {r["method"]: r for r in mt.rows}
    tk, sg = m["Top-k (1%) + EF"], m["1-bit + EF"]
    return Methods(d=mt.meta["d"], topk_x=tk["encoded"], topk_stated_x=tk["stated"], sign_stated_x=sg["stated"])


@dataclass(frozen=True)
class When:
    """The time-to-train decisions of :data:`.compression_numbers.DECISION`, the break-even
    communication time and extra-step share, and the small-message gain of a 32× ratio."""
    steps: int
    extra_frac: float
    c_s: float
    ratio_x: float
    a_t_s: float
    a_step_s: float           # one step, compute + communication
    a_step_c_s: float         # ... compressed
    b_t_s: float
    a_change_frac: float      # the time saved in case a
    b_change_frac: float      # the time lost in case b
    b_saved_total_s: float
    b_extra_total_s: float
    even_s: float
    x_even_frac: float        # the extra steps at which case a breaks even
    nstar_bytes: float
    p: int
    pnstar_bytes: float
    small_gain_frac: float
    r32_x: float


def when_numbers(r32: float = 32) -> When:
    D = cn.DECISION
    c, r, x, steps = D["t_compute"], D["ratio"], D["extra_steps"], D["steps"]
    ta, tb = D["t_comm"]
    da, db = (cz.compression_decision(steps, c, t, r, x) for t in (ta, tb))
    steps_c = round(steps * (1 + x))
    link, p = IB_NDR_CHAPTER, cf.WHEN_P
    n = link.n_half
    gain = t_formula("ring", p, n, link.alpha, link.beta) / cz.compressed_allreduce_time(p, n, link.alpha, link.beta, r32)
    return When(steps=steps, extra_frac=x, c_s=c, ratio_x=r, a_t_s=ta, a_step_s=c + ta, a_step_c_s=c + ta / r,
                b_t_s=tb, a_change_frac=-da.change, b_change_frac=db.change, b_saved_total_s=steps * (tb - tb / r),
                b_extra_total_s=(steps_c - steps) * (c + tb / r), even_s=cz.break_even_comm_time(c, r, x),
                x_even_frac=(c + ta) / (c + ta / r) - 1, nstar_bytes=n, p=p, pnstar_bytes=p * n,
                small_gain_frac=gain - 1, r32_x=r32)
