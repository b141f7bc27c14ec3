r"""Chapter §1.6: the small tables that carry the worked numbers of
``chapters/{zh,en}/ch1/06-compression.md``, so that the prose keeps only the numbers its
argument needs.

* :func:`decision_table`: the same training run on a slow and a fast network, without and
  with INT8 + error feedback (:data:`~.compression_numbers.DECISION`).
"""
from __future__ import annotations

from ... import compression as cz
from ...units import fmt_pct, fmt_time
from ..tables import Table, bilingual, bilingual_notes
from ..text import texts
from . import compression_numbers as cn

__all__ = ["decision_table"]

T = texts("ch1")
K = "compression_tables."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


def decision_table() -> Table:
    """One training run on two networks: steps, step time and time to train."""
    D = cn.DECISION
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
