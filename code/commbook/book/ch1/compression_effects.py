"""Chapter §1.6, when compression pays, for ``chapters/{zh,en}/ch1/06-compression.md``: the
time-to-train decisions (:func:`decision_table`) and the chapter's table of methods
(:func:`methods_table`).  The page's cells compute the numbers their prose quotes (a
coordinate top-k never sends, Definition 1.4's 70B case, the runs, 1-bit Adam, napkin math
1.7, Checkpoint 1.4, the break-even points) with :mod:`commbook.compression` themselves.
"""
from __future__ import annotations

from ... import compression as cz
from ...units import fmt_count, fmt_pct, fmt_ratio, fmt_time
from ..tables import Table
from ..text import texts
from .compression_numbers import DECISION, QUANT_D
from .inputs import CHAPTER_COMPRESSION_TABLE, compression_table

__all__ = ["decision_table", "methods_table"]

T = texts("ch1")
K = "compression_tables."
_tx = T.under(K)       # the decision table's entries (ch1.toml, under compression_tables.)
_txs, _two = _tx.pairs, _tx.two
_cn = T.under("compression_numbers.")     # the methods table's entries


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
