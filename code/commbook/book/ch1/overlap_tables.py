r"""Chapter §1.8: the small tables that carry the worked numbers of
``chapters/{zh,en}/ch1/08-overlap.md``, so that the prose keeps only the ones its argument
needs.  Every value comes from what the page's cell computed or from :mod:`.overlap_numbers`
and :mod:`.overlap_buckets`; a row holds the raw number (``raw``, SI units) next to the text
it is shown as.

* :func:`residual_table`: the opening example (a residual all-reduce beside compute);
* :func:`ring_tree_table`: ring against binomial tree, with and without overlap;
* :func:`plans_table`: the three bucket caps of the timeline figure;
* :func:`shapes_table`: the two model shapes of the bucket-cap sweep and its results;
* :func:`overhead_table`: 2o per collective on a model of many short layers;
* :func:`hidden_table`: the hidden share (L − 1)/L of L equal layers.
"""
from __future__ import annotations

from ...parallelism import DDP_BUCKET_CAP_BYTES
from ...units import GB, MB, MiB, fmt_bytes, fmt_pct, fmt_time
from ..tables import Table, bilingual, bilingual_notes
from ..text import texts
from . import overlap_buckets as ob
from . import overlap_numbers as ov

__all__ = ["quantity_table", "residual_table", "ring_tree_table", "plans_table", "shapes_table",
           "overhead_table", "hidden_table"]

T = texts("ch1")
K = "overlap_tables."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two



def _t(x: float) -> str:
    return fmt_time(x, 3)


def quantity_table(key: str, title: tuple[str, str], rows: list[tuple[str, str, object, str]],
                   notes: tuple[tuple[str, str], ...] = ()) -> Table:
    """A two-column table: quantity (English, Chinese) and its value, shown as given.

    ``rows``: (English label, Chinese label, raw value, shown text)."""
    return Table(
        key=key, title=bilingual(*title), columns=["what", "value"],
        headers=_txs("quantity", "value"),
        rows=[{"what": en, "value": shown, "raw": raw} for en, _, raw, shown in rows],
        formats={"what": str, "value": str},
        labels={"zh": {en: zh for en, zh, _, _ in rows}},
        notes=bilingual_notes(*notes) if notes else {})


def residual_table(r: dict) -> Table:
    """The opening example, as the page computes it (``n_bytes``, ``gpus``, ``alpha_s``,
    ``beta_Bps``, ``wire_s``, ``compute_s``, ``o_s``, ``block_s``, ``over_s``, ``hidden_s``)."""
    return quantity_table("ch1-ovl-residual", _two("the_residual_all_reduce"), [
        (*_two("gradients"), r["n_bytes"], fmt_bytes(r["n_bytes"])),
        (*_two("gpus_ring"), r["gpus"], f"{r['gpus']}"),
        (*_two("infiniband_ndr"), r["alpha_s"], fmt_time(r["alpha_s"], 3)),
        (*_two("infiniband_ndr_2"), r["beta_Bps"], f"{r['beta_Bps'] / GB:g} GB/s"),
        (*_two("transfer_on_the_wire"), r["wire_s"], _t(r["wire_s"])),
        (*_two("backward_still_to_run"), r["compute_s"], _t(r["compute_s"])),
        (*_two("logp_overheads_2o"), 2 * r["o_s"], _t(2 * r["o_s"])),
        (*_two("step_sent_after_the"), r["block_s"], _t(r["block_s"])),
        (*_two("step_sent_as_gradients"), r["over_s"], _t(r["over_s"])),
        (*_two("network_time_hidden"), r["hidden_s"], _t(r["hidden_s"])),
    ])


def ring_tree_table(rt: dict) -> Table:
    """Ring against binomial tree below their crossover, as the page computes it: per
    algorithm one all-reduce (``ring_s``), the step blocking (``ring_block_s``) and with
    layer-wise overlap (``ring_over_s``), the penalties, and the setting."""
    rows = [{"algo": k, "allreduce": rt[f"{k}_s"], "blocking": rt[f"{k}_block_s"],
             "overlapped": rt[f"{k}_over_s"]} for k in ("ring", "tree")]
    rows.append({"algo": "penalty", "allreduce": rt["ring_s"] - rt["tree_s"], "blocking": rt["pen_block_s"],
                 "overlapped": rt["pen_over_s"]})
    setup = _two("layers_of_gradients_and", layers=rt["layers"], bytes=fmt_bytes(rt["n_bytes"]),
                 backward=_t(rt["backward_s"]), gpus=rt["gpus"], crossover=fmt_bytes(rt["cross_bytes"]))
    return Table(
        key="ch1-ovl-ring-tree", title=_tx("ring_and_binomial_tree"),
        columns=["algo", "allreduce", "blocking", "overlapped"],
        headers=_txs("blank", "one_all_reduce", "step_blocking", "step_layer_wise_overlap"),
        rows=rows, formats={c: _t for c in ("allreduce", "blocking", "overlapped")},
        labels=T.labels(K + "labels."),
        notes=bilingual_notes(setup))


def plans_table() -> Table:
    """The three caps of the bucket-timeline figure: :func:`~.overlap_numbers.bucket_plans`."""
    rows = []
    for cap, plan in ob.bucket_plans():
        rows.append({"cap": cap, "buckets": len(plan.buckets), "startups": len(plan.buckets) * ob.ring_startup(),
                     "wait": plan.timeline.stall, "step": plan.step_time})
    shape = ob.TIMELINE_SHAPE
    name = ob.SHAPE_NAMES[shape.name]
    return Table(
        key="ch1-ovl-plans", title=_tx("three_bucket_caps_on", en=name['en'], zh=name['zh']),
        columns=["cap", "buckets", "startups", "wait", "step"],
        headers=_txs("cap", "buckets", "start_ups_in_all", "gpu_waits_after_its", "step"),
        rows=rows, formats={"cap": lambda c: f"{c / MiB:,g} MiB", "buckets": str, "startups": _t,
                            "wait": _t, "step": _t},
        notes=_txs("backward_alone_default_cap", backward=_t(sum(shape.backward)), ddp_bucket_cap_bytes=DDP_BUCKET_CAP_BYTES / MiB))


def shapes_table() -> Table:
    """The two model shapes of the sweep and what the sweep finds: :func:`~.overlap_numbers.sweep_summary`."""
    s, g = (ob.sweep_summary(x) for x in ob.SHAPES)
    lo, hi = ob.SWEEP_GRID[0], ob.SWEEP_GRID[-1]
    ns = lambda v: f"{v * 1e9:.2g} ns"
    rows = [
        (*_two("blocks"), lambda d: max(ob.layers_of(d.shape)) + 1, str),
        (*_two("fp32_gradients"), lambda d: d.total_bytes, fmt_bytes),
        (*_two("backward_per_step"), lambda d: d.compute_s, _t),
        (*_two("backward_per_gradient_byte"), lambda d: d.compute_per_byte_s, ns),
        (*_two("over_the_ring_s"), lambda d: d.compute_per_byte_s / d.net_per_byte_s,
         lambda v: f"{v:.3g}"),
        (*_two("best_cap"), lambda d: d.cap_bytes, lambda v: f"{fmt_bytes(v)} ({v / MiB:g} MiB)"),
        (*_two("step_at_the_best"), lambda d: d.step_s, _t),
        (*_two("caps_within_of_the", near_optimum=fmt_pct(ob.NEAR_OPTIMUM)),
         lambda d: d.near_bytes, lambda v: f"{fmt_bytes(v[0])}–{fmt_bytes(v[1])}"),
        (*_two("often_recommended_range"), lambda d: d.range_bytes,
         lambda v: f"{v[0] / MB:g}–{v[1] / MB:g} MB"),
        (*_two("step_at_mib", lo=lo / MiB), lambda d: d.first_s, _t),
        (*_two("step_at_mib_2", hi=hi / MiB), lambda d: d.last_s, _t),
        (*_two("step_at_pytorch_s", ddp_bucket_cap_bytes=DDP_BUCKET_CAP_BYTES / MiB),
         lambda d: d.default_s, _t),
    ]
    names = {k: ob.SHAPE_NAMES[x.name] for k, x in (("small", ob.SHAPES[0]), ("large", ob.SHAPES[1]))}
    sm_t, fb = ob.layer_tensors(ob.SHAPES[0]), ob.FEW_LARGE_BASIS
    return Table(
        key="ch1-ovl-shapes", title=_tx("the_two_model_shapes"),
        columns=["what", "small", "large"],
        headers={"en": ["", names["small"]["en"], names["large"]["en"]],
                 "zh": ["", names["small"]["zh"], names["large"]["zh"]]},
        rows=[{"what": en, "small": f(fn(s)), "large": f(fn(g)), "raw": (fn(s), fn(g))} for en, _, fn, f in rows],
        formats={"what": str, "small": str, "large": str},
        labels={"zh": {en: zh for en, zh, _, _ in rows}},
        notes=_txs("ring_all_reduce_on", "each_layer_one_weight", sweep_gpus=ob.SWEEP_GPUS, net_per_byte=ns(s.net_per_byte_s), start_up=_t(s.start_up_s), v=names['small']['en'].capitalize(), sm_t=fmt_bytes(max(sm_t), binary=True), sm_t2=len(sm_t) - 1, sm_t3=fmt_bytes(min(sm_t), binary=True), v2=names['large']['en'].capitalize(), d_model=fb['d_model'], flops=fb['flops'] / 1e12, tokens=fb['tokens'], zh=names['small']['zh'], zh2=names['large']['zh']),
        meta={"small": s, "large": g})


def overhead_table(oe: dict) -> Table:
    """Many short layers against 2o per collective, as the page computes it (``layers``,
    ``b_s``, ``wire_s``, ``o_s``, ``compute_s``, ``overhead_s``, ``wire_total_s``, ``over_s``,
    ``block_s``)."""
    return quantity_table("ch1-ovl-overhead", _two("many_short_layers_the"), [
        (*_two("layers"), oe["layers"], f"{oe['layers']}"),
        (*_two("backward_per_layer"), oe["b_s"], _t(oe["b_s"])),
        (*_two("all_reduce_per_layer"), oe["wire_s"], _t(oe["wire_s"])),
        (*_two("logp_overhead_o"), oe["o_s"], _t(oe["o_s"])),
        (*_two("compute_in_all"), oe["compute_s"], _t(oe["compute_s"])),
        (*_two("overheads_in_all"), oe["overhead_s"], _t(oe["overhead_s"])),
        (*_two("wire_time_in_all"), oe["wire_total_s"], _t(oe["wire_total_s"])),
        (*_two("step_overlapped"), oe["over_s"], fmt_time(oe["over_s"], 4)),
        (*_two("step_not_overlapped"), oe["block_s"], fmt_time(oe["block_s"], 4)),
    ])


def hidden_table() -> Table:
    """(L − 1)/L for the layer counts of :data:`~.overlap_numbers.HIDDEN_LAYERS`."""
    hf = ov.hidden_fractions()
    return Table(
        key="ch1-ovl-hidden", title=_tx("hidden_share_of_the"),
        columns=["layers", "hidden"],
        headers=_txs("layers_l", "hidden_l_1_l"),
        rows=[{"layers": L, "hidden": h} for L, h in hf.items()],
        formats={"layers": str, "hidden": fmt_pct})
