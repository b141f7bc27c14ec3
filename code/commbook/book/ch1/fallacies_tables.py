r"""Chapter §1.9: the small tables that carry the worked numbers of
``chapters/{zh,en}/ch1/09-fallacies.md``, so that each item's prose keeps only the numbers
its argument needs.  The numbers come from :mod:`.fallacies` (kept apart because that
module is at its size limit).

* :func:`alltoall_table`: all-to-all against the same routing done by an all-reduce;
* :func:`ring_tree_parts_table`: start-up and bandwidth terms of ring and binomial tree;
* :func:`ef_table`: the seeded top-k run with and without error feedback;
* :func:`train_table`: time to train with a compressor that doubles the steps;
* :func:`nic_table`: flat ring, hierarchical all-reduce and NCCL's rings, NIC by NIC.
"""
from __future__ import annotations

from ...units import fmt_bytes, fmt_pct, fmt_ratio, fmt_time
from ..tables import Table, bilingual, bilingual_notes
from ..text import texts
from . import fallacies as fa
from .overlap_tables import quantity_table

__all__ = ["alltoall_table", "ring_tree_parts_table", "ef_table", "train_table", "nic_table"]

T = texts("ch1")
K = "fallacies_tables."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two



def _t(x: float) -> str:
    return fmt_time(x, 3)


def _sci(x: float, digits: int = 2) -> str:
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    return f"{mant} × 10{str(int(exp)).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"


def alltoall_table() -> Table:
    """The exchange of :func:`~.fallacies.alltoall_by_allreduce`, per rank."""
    ar = fa.alltoall_by_allreduce()
    rows = [{"how": "a2a", "buffer": ar["n"], "sent": ar["bytes_a2a"], "time": ar["t_a2a"]},
            {"how": "ar", "buffer": ar["buffer_ar"], "sent": ar["bytes_ar"], "time": ar["t_ar"]}]
    return Table(
        key="ch1-fall-a2a", title=_tx("routing_per_rank_on", n=fmt_bytes(ar['n']), p=ar['p']),
        columns=["how", "buffer", "sent", "time"],
        headers=_txs("blank", "buffer_per_rank", "sent_per_rank", "time"),
        rows=rows, formats={"buffer": fmt_bytes, "sent": fmt_bytes, "time": _t},
        labels={lang: {k: T.get(K + "labels." + k, lang) for k in ('a2a', 'ar',)} for lang in ("en", "zh")},
        notes=_txs("simulated_on_one_switch"),
        meta=ar)


def ring_tree_parts_table() -> Table:
    """Start-up and bandwidth parts of :func:`~.fallacies.ring_tree`."""
    rt = fa.ring_tree()
    us = lambda v: f"{v * 1e6:,.1f} µs"
    rows = [{"algo": "ring", "lat": rt["ring_lat"], "bw": rt["ring_bw"], "total": rt["ring"]},
            {"algo": "tree", "lat": rt["tree_lat"], "bw": rt["tree_bw"], "total": rt["tree"]}]
    lk = rt["link"]
    return Table(
        key="ch1-fall-ring-parts",
        title=_tx("one_all_reduce_of", n=fmt_bytes(rt['n']), p=rt['p']),
        columns=["algo", "lat", "bw", "total"],
        headers=_txs("blank_2", "start_ups", "bandwidth_0", "total"),
        rows=rows, formats={"lat": us, "bw": us, "total": us},
        labels={lang: {k: T.get(K + "rt_" + k, lang, steps=rt["tree_steps"]) for k in ("ring", "tree")}
                for lang in ("en", "zh")},
        notes=_txs("gb_s", alpha=_t(lk.alpha), beta=lk.beta / 1e9),
        meta=rt)


def ef_table() -> Table:
    """The run of :func:`~.fallacies.ef_runs`."""
    ef = fa.ef_runs()
    return quantity_table("ch1-fall-ef", _two("top_k_on_a"), [
        (*_two("workers"), ef["workers"], f"{ef['workers']}"),
        (*_two("parameters"), ef["dim"], f"{ef['dim']}"),
        (*_two("values_sent_per_worker"), ef["kept"], f"{ef['kept']}"),
        (*_two("relative_excess_loss_after", steps=ef['steps']), ef["ef"], _sci(ef["ef"])),
        (*_two("without_error_feedback"), ef["plain"], fmt_pct(ef["plain"])),
        (*_two("without_after_steps", steps_long=ef['steps_long']),
         ef["plain_end"], fmt_pct(ef["plain_end"])),
        (*_two("its_change_over_the", window=ef['window']),
         ef["plain_change"], fmt_pct(ef["plain_change"])),
        (*_two("mean_decoded_update_at"),
         ef["drift_topk"], f"{ef['drift_topk']:.2g}"),
        (*_two("uncompressed"), ef["drift_none"], _sci(ef["drift_none"], 1)),
    ])


def train_table() -> Table:
    """The run of :func:`~.fallacies.time_to_train_example`."""
    tt = fa.time_to_train_example()
    s = lambda v: f"{v:,.0f} s"
    return quantity_table("ch1-fall-train", _two("time_to_train_with"), [
        (*_two("steps_without_compression"), tt["steps"], f"{tt['steps']:,}"),
        (*_two("compute_per_step"), tt["t_compute"], _t(tt["t_compute"])),
        (*_two("communication_per_step"), tt["t_comm"], _t(tt["t_comm"])),
        (*_two("compressed"), tt["comm_after"], _t(tt["comm_after"])),
        (*_two("steps_with_compression"), tt["steps"] * (1 + tt["extra_steps"]),
         f"{tt['steps'] * (1 + tt['extra_steps']):,.0f}"),
        (*_two("time_to_train_uncompressed"), tt["baseline"], s(tt["baseline"])),
        (*_two("time_to_train_compressed"), tt["compressed"], s(tt["compressed"])),
        (*_two("change"), tt["change"], fmt_pct(tt["change"])),
        (*_two("communication_per_step_at"), tt["break_even"], _t(tt["break_even"])),
    ])


def nic_table() -> Table:
    """The simulated runs of :func:`~.fallacies.nic_load`."""
    nl = fa.nic_load()
    rows = [{"algo": a, "time": nl[a], "nic_max": nl[f"{a}_nic_max"], "nic_total": nl[f"{a}_nic_total"],
             "per_node": nl[f"{a}_nic_total"] / nl["nodes"]} for a in ("ring", "hierarchical", "nccl")]
    one = nl["ring_one_nic"] / nl["hierarchical_one_nic"]
    return Table(
        key="ch1-fall-nics",
        title=_tx("all_reduce_of_on", n=fmt_bytes(nl['n']), nodes=nl['nodes'], gpn=nl['gpn']),
        columns=["algo", "time", "nic_max", "nic_total", "per_node"],
        headers=_txs("blank_3", "time_2", "busiest_nic_sends", "all_nics_send", "per_node"),
        rows=rows, formats={"time": _t, "nic_max": fmt_bytes, "nic_total": fmt_bytes, "per_node": fmt_bytes},
        labels={lang: {k: T.get(K + "labels." + k, lang) for k in ('ring', 'hierarchical', 'nccl',)} for lang in ("en", "zh")},
        notes=_txs("simulated_twolevel_one_nic", one=fmt_ratio(one)),
        meta=nl)
