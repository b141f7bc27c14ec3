"""Chapter §1.6, what compression does to training and when it pays, for
``chapters/{zh,en}/ch1/06-compression.md``: a coordinate top-k never sends
(:func:`persistent_small`), the update left at the optimum (:func:`at_optimum`), Definition
1.4's 70B case (:func:`def14`), the seeded runs and 1-bit Adam (:func:`run_numbers`,
:func:`onebit_numbers`), napkin math 1.7 (:func:`nm17_numbers`), Checkpoint 1.4
(:func:`checkpoint_numbers`), the time-to-train decisions (:func:`when_numbers`,
:func:`decision_table`) and the chapter's table of methods (:func:`methods_table`).  Fields carry their units (``_s``, ``_bytes``, ``_x``, ``_frac``;
counts are ints; exact rationals and numbers too small for a plain decimal are text).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import compression as cz
from ...collectives import t_formula
from ...hardware import IB_NDR_CHAPTER
from ...units import fmt_count, fmt_pct, fmt_ratio, fmt_time
from ..tables import Table
from ..text import texts
from .compression_figures import FLOOR, RUN_SETTINGS, WHEN_P, runs
from .compression_numbers import CHAPTER_ONEBIT, CHECKPOINT_1_4, DECISION, QUANT_D
from .inputs import CHAPTER_COMPRESSION_TABLE, NM17, compression_table, napkin_math_1_7
from .perf_numbers import LLAMA

__all__ = ["Persistent", "persistent_small", "AtOptimum", "at_optimum", "Def14", "def14", "Runs", "run_numbers",
           "OneBit", "onebit_numbers", "Nm17", "nm17_numbers", "Checkpoint", "checkpoint_numbers", "When",
           "when_numbers", "decision_table", "methods_table", "Methods", "method_numbers"]

T = texts("ch1")
K = "compression_tables."
_tx = T.under(K)       # the decision table's entries (ch1.toml, under compression_tables.)
_txs, _two = _tx.pairs, _tx.two
_cn = T.under("compression_numbers.")     # the methods table's entries
dec = cz.decimal_text


def _sci(x: float) -> str:
    """A residual far below 1, to 2 significant digits in exponent form (``3.9e-08``)."""
    return f"{x:.2g}"


# ============================================================================ sparsification, error feedback
@dataclass(frozen=True)
class Persistent:
    """Two coordinates, gradient (big, small) every step, top-1: without error feedback the
    small one is never sent; with it, what is sent of it, how often, and the largest residual
    on the way."""
    small: float
    big: float
    steps: int
    true: float
    naive: float              # what top-1 sends of it without feedback
    ef: float                 # ... with feedback
    times: int
    every: int
    max: float                # the largest residual on the way


def persistent_small(steps: int = 1000, big: float = 1.0, small: float = 0.01) -> Persistent:
    """Top-1 of (``big``, ``small``) every step for ``steps`` steps, without and with error feedback.

    >>> persistent_small().times
    10
    """
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
                      times=int(times), every=steps // int(times), max=worst)


@dataclass(frozen=True)
class AtOptimum:
    """The update each compressor leaves at the optimum of the runs' problem (text: far below 1)."""
    fp32: str
    top1: str
    sign: str


def at_optimum() -> AtOptimum:
    """:func:`~commbook.compression.update_at_optimum` on the problem of :func:`.compression_figures.runs`.

    >>> at_optimum().top1
    '0.0055'
    """
    pr = runs()["problem"]
    return AtOptimum(fp32=f"{cz.update_at_optimum(pr, None):.0e}", top1=_sci(cz.update_at_optimum(pr, cz.TopK(0.01))),
                     sign=_sci(cz.update_at_optimum(pr, cz.Sign())))


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
    elements: a flat index into 70 billion elements would need more than 32 bits).

    >>> def14().bits
    37
    """
    d, bpv = int(LLAMA["params"]), LLAMA["bytes_per_value"]
    k = round(share * d)
    full, values = d * bpv, k * bpv
    return Def14(full_bytes=full, values_bytes=values, share_frac=share, nominal_x=full / values,
                 index_bytes=k * (bpv + 4), ratio_x=full / (k * (bpv + 4)), bits=int(np.ceil(np.log2(d))), n_params=d)


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
    """What the page quotes of the runs of :func:`.compression_figures.runs`.

    >>> run_numbers().workers
    8
    """
    R, S = runs(), RUN_SETTINGS
    return Runs(workers=S["workers"], dim=S["dim"], rows=S["rows"], steps=S["steps"], het=S["heterogeneity"],
                floor=f"{FLOOR:.0e}", top1=_sci(R["top1"].final), top10_ef=_sci(R["top10+ef"].final),
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
    """1-bit Adam in the runs against Tang et al.'s claims (:data:`.compression_numbers.CHAPTER_ONEBIT`).

    >>> onebit_numbers().gpus
    256
    """
    R, S, ob = runs(), RUN_SETTINGS, CHAPTER_ONEBIT
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
    """Napkin math 1.7 (:func:`.inputs.napkin_math_1_7`) on the network and on NVLink.

    >>> nm17_numbers().nom_x
    32
    """
    nm, n17 = napkin_math_1_7(), NM17
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
    """Checkpoint 1.4's givens (:data:`.compression_numbers.CHECKPOINT_1_4`) as the page writes them.

    >>> checkpoint_numbers().thr
    '0.5'
    """
    cp = CHECKPOINT_1_4
    return Checkpoint(bwd_s=cp["backward"], ar_lo_s=min(cp["allreduce"]), ar_hi_s=max(cp["allreduce"]),
                      ratio_x=cp["ratio"], g=dec(cp["g"]), thr=dec(cp["threshold"]))


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
    """The decisions of :data:`.compression_numbers.DECISION`, the break-even points, and what a
    compressor of ratio ``r32`` gains on an n* = αβ message on :data:`.compression_figures.WHEN_P` GPUs.

    >>> when_numbers().p
    64
    """
    D = DECISION
    c, r, x, steps = D["t_compute"], D["ratio"], D["extra_steps"], D["steps"]
    ta, tb = D["t_comm"]
    da, db = (cz.compression_decision(steps, c, t, r, x) for t in (ta, tb))
    steps_c = round(steps * (1 + x))
    link, p = IB_NDR_CHAPTER, WHEN_P
    n = link.n_half
    gain = t_formula("ring", p, n, link.alpha, link.beta) / cz.compressed_allreduce_time(p, n, link.alpha, link.beta, r32)
    return When(steps=steps, extra_frac=x, c_s=c, ratio_x=r, a_t_s=ta, a_step_s=c + ta, a_step_c_s=c + ta / r,
                b_t_s=tb, a_change_frac=-da.change, b_change_frac=db.change, b_saved_total_s=steps * (tb - tb / r),
                b_extra_total_s=(steps_c - steps) * (c + tb / r), even_s=cz.break_even_comm_time(c, r, x),
                x_even_frac=(c + ta) / (c + ta / r) - 1, nstar_bytes=n, p=p, pnstar_bytes=p * n,
                small_gain_frac=gain - 1, r32_x=r32)


def decision_table() -> Table:
    """One training run on two networks (:data:`.compression_numbers.DECISION`): steps, step time and time to train."""
    D = DECISION
    steps_c = round(D["steps"] * (1 + D["extra_steps"]))
    cols = []
    for t in D["t_comm"]:
        d = cz.compression_decision(D["steps"], D["t_compute"], t, D["ratio"], D["extra_steps"])
        cols.append({"comm": t, "comm_c": t / D["ratio"], "step": D["t_compute"] + t,
                     "step_c": D["t_compute"] + t / D["ratio"], "base": d.baseline, "comp": d.compressed,
                     "change": d.change})
    s = lambda v: f"{v:,.0f} s"
    t4 = lambda v: fmt_time(v, 4)
    spec = [(*_two("communication_per_step"), "comm", lambda v: fmt_time(v, 3)),
            (*_two("with_int8_ef_less", ratio=D['ratio']), "comm_c",
             lambda v: fmt_time(v, 3)),
            (*_two("step"), "step", t4), (*_two("step_with_int8_ef"), "step_c", t4),
            (*_two("time_to_train_steps", steps=D['steps']), "base", s),
            (*_two("compressed_steps", steps_c=steps_c), "comp", s),
            (*_two("change"), "change", lambda v: f"{'+' if v > 0 else '−'}{fmt_pct(abs(v))}")]
    return Table(
        key="ch1-comp-decision",
        title=_tx("one_training_run_on"),
        columns=["what", "slow", "fast"],
        headers=_txs("blank", "slower_network", "faster_network"),
        rows=[{"what": en, "slow": f(cols[0][k]), "fast": f(cols[1][k]), "raw": (cols[0][k], cols[1][k])}
              for en, _, k, f in spec],
        formats={"what": str, "slow": str, "fast": str},
        labels={"zh": {en: zh for en, zh, _, _ in spec}},
        notes=_txs("compute_per_step_compression", t_compute=fmt_time(D['t_compute'], 3), extra_steps=fmt_pct(D['extra_steps'])),
        meta={"columns": cols})


# ============================================================================ the methods
def methods_table(d: int = QUANT_D) -> Table:
    """The chapter's table of methods: its ratio beside the ratio each encoding reaches on a
    ``d``-element gradient (values, indices and scales counted), the convergence cost and
    the setting it suits, as the chapter gives them."""
    impact = T.labels("compression_numbers.impact.")
    use = _cn.pairs("use0", "use1", "use2", "use3")
    enc = {name: (got, op) for name, _, got, op in compression_table(d)}
    rows = []
    for i, (name, stated, imp) in enumerate(CHAPTER_COMPRESSION_TABLE):
        got, op = enc[name]
        rows.append({"method": name, "stated": float(stated), "encoded": got, "impact": imp,
                     "use": f"use{i}", "op": op.name})
    labels = {lang: {**impact[lang], **{f"use{i}": u for i, u in enumerate(use[lang])},
                     **{m: T.get("compression_numbers." + k, lang) for m, k in (("INT8 + EF", "m_int8"), ("Top-k (1%) + EF", "m_topk"),
                                                           ("1-bit + EF", "m_sign"))}}
              for lang in ("en", "zh")}
    topk = next(r for r in rows if r["method"].startswith("Top-k"))
    sign = next(r for r in rows if r["method"].startswith("1-bit"))
    return Table(
        key="ch1-methods",
        title=_cn("gradient_compression_methods"),
        columns=["method", "stated", "encoded", "impact", "use"],
        headers=_cn.pairs("mh_method", "mh_nominal", "mh_encoded", "mh_convergence", "mh_suits", d=fmt_count(d)),
        rows=rows,
        formats={"stated": fmt_ratio, "encoded": lambda r: fmt_ratio(r, 6)},
        labels=labels,
        notes=_cn.pairs("top_k_keeps_1", "the_convergence_column_is", encoded=fmt_ratio(topk['encoded']),
                     stated=fmt_ratio(topk['stated']), encoded2=fmt_ratio(sign['encoded'], 6)),
        meta={"d": d})


@dataclass(frozen=True)
class Methods:
    """The methods table's top-k row (nominal and as encoded) and the 1-bit row."""
    d: int
    topk_x: float
    topk_stated_x: float
    sign_stated_x: float


def method_numbers(mt: Table | None = None) -> Methods:
    """What the page quotes of :func:`methods_table` (made when not given).

    >>> method_numbers().sign_stated_x
    32.0
    """
    mt = methods_table() if mt is None else mt
    m = {r["method"]: r for r in mt.rows}
    tk, sg = m["Top-k (1%) + EF"], m["1-bit + EF"]
    return Methods(d=mt.meta["d"], topk_x=tk["encoded"], topk_stated_x=tk["stated"], sign_stated_x=sg["stated"])
