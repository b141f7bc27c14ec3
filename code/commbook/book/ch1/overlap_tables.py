r"""Chapter §1.8: the small tables that carry the worked numbers of
``chapters/{zh,en}/ch1/08-overlap.md``, so that the prose keeps only the ones its argument
needs.  Every value comes from :mod:`.overlap_numbers`; a row holds the raw number (``raw``,
SI units) next to the text it is shown as.

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
from . import overlap_numbers as ov

__all__ = ["quantity_table", "residual_table", "ring_tree_table", "plans_table", "shapes_table",
           "overhead_table", "hidden_table"]

T = texts("ch1")
K = "overlap_tables."


def _tx(key: str, **fields) -> dict[str, str]:
    """The English/Chinese pair of ``key`` in book/texts/ch1.toml."""
    return T(K + key, **fields)


def _txs(*keys: str, **fields) -> dict[str, list[str]]:
    """Several pairs as ``{"en": [...], "zh": [...]}`` (headers, notes)."""
    return T.pairs(*(K + k for k in keys), **fields)



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


def residual_table() -> Table:
    """The opening example: :func:`~.overlap_numbers.residual_example`."""
    r = ov.residual_example()
    link = r["link"]
    return quantity_table("ch1-ovl-residual", ("The residual all-reduce, blocking and overlapped",
                                               "剩下的那次 all-reduce：阻塞与重叠"), [
        ("Gradients", "梯度", r["bytes"], fmt_bytes(r["bytes"])),
        ("GPUs (ring)", "GPU 数（环形）", r["gpus"], f"{r['gpus']}"),
        ("InfiniBand NDR α", "InfiniBand NDR 的 α", link.alpha, fmt_time(link.alpha, 3)),
        ("InfiniBand NDR β", "InfiniBand NDR 的 β", link.beta, f"{link.beta / GB:g} GB/s"),
        ("Transfer on the wire", "线上传输", r["wire"], _t(r["wire"])),
        ("Backward still to run", "尚未完成的反向计算", r["compute"], _t(r["compute"])),
        ("LogP overheads 2o", "LogP 开销 2o", 2 * r["o"], _t(2 * r["o"])),
        ("Step, sent after the backward", "一步：反向算完再发", r["blocking"], _t(r["blocking"])),
        ("Step, sent as gradients appear", "一步：梯度一出来就发", r["overlapped"], _t(r["overlapped"])),
        ("Network time hidden", "藏住的网络时间", r["hidden"], _t(r["hidden"])),
    ])


def ring_tree_table() -> Table:
    """Ring against binomial tree below their crossover: :func:`~.overlap_numbers.ring_vs_tree`."""
    rt = ov.ring_vs_tree()
    rows = [{"algo": k, **{c: rt[k][c] for c in ("allreduce", "blocking", "overlapped")}} for k in ("ring", "tree")]
    rows.append({"algo": "penalty", "allreduce": rt["ring"]["allreduce"] - rt["tree"]["allreduce"],
                 "blocking": rt["penalty_blocking"], "overlapped": rt["penalty_overlapped"]})
    setup = (f"{rt['layers']} layers, {fmt_bytes(rt['bytes'])} of gradients and {_t(rt['backward'])} of backward "
             f"each, {rt['gpus']} GPUs over InfiniBand NDR; crossover {fmt_bytes(rt['crossover'])}.",
             f"{rt['layers']} 层，每层梯度 {fmt_bytes(rt['bytes'])}、反向 {_t(rt['backward'])}，"
             f"{rt['gpus']} 块 GPU，InfiniBand NDR；交叉点 {fmt_bytes(rt['crossover'])}。")
    return Table(
        key="ch1-ovl-ring-tree", title=_tx("ring_and_binomial_tree"),
        columns=["algo", "allreduce", "blocking", "overlapped"],
        headers=_txs("blank", "one_all_reduce", "step_blocking", "step_layer_wise_overlap"),
        rows=rows, formats={c: _t for c in ("allreduce", "blocking", "overlapped")},
        labels={lang: {k: T.get(K + "labels." + k, lang) for k in ('ring', 'tree', 'penalty',)} for lang in ("en", "zh")},
        notes=bilingual_notes(setup), meta={"rt": rt})


def plans_table() -> Table:
    """The three caps of the bucket-timeline figure: :func:`~.overlap_numbers.bucket_plans`."""
    rows = []
    for cap, plan in ov.bucket_plans():
        rows.append({"cap": cap, "buckets": len(plan.buckets), "startups": len(plan.buckets) * ov.ring_startup(),
                     "wait": plan.timeline.stall, "step": plan.step_time})
    shape = ov.TIMELINE_SHAPE
    name = ov.SHAPE_NAMES[shape.name]
    return Table(
        key="ch1-ovl-plans", title=_tx("three_bucket_caps_on", en=name['en'], zh=name['zh']),
        columns=["cap", "buckets", "startups", "wait", "step"],
        headers=_txs("cap", "buckets", "start_ups_in_all", "gpu_waits_after_its", "step"),
        rows=rows, formats={"cap": lambda c: f"{c / MiB:,g} MiB", "buckets": str, "startups": _t,
                            "wait": _t, "step": _t},
        notes=_txs("backward_alone_default_cap", backward=_t(sum(shape.backward)), ddp_bucket_cap_bytes=DDP_BUCKET_CAP_BYTES / MiB))


def shapes_table() -> Table:
    """The two model shapes of the sweep and what the sweep finds: :func:`~.overlap_numbers.sweep_summary`."""
    s, g = (ov.sweep_summary(x) for x in ov.SHAPES)
    lo, hi = ov.SWEEP_GRID[0], ov.SWEEP_GRID[-1]
    ns = lambda v: f"{v * 1e9:.2g} ns"
    rows = [
        ("Blocks", "层数", lambda d: max(ov.layers_of(d["shape"])) + 1, str),
        ("FP32 gradients", "FP32 梯度", lambda d: d["bytes"], fmt_bytes),
        ("Backward per step", "每步反向计算", lambda d: d["compute"], _t),
        ("Backward per gradient byte", "每字节梯度的反向计算", lambda d: d["compute_per_byte"], ns),
        ("… over the ring's time per byte", "… 与环形每字节发送时间之比", lambda d: d["compute_per_byte"] / d["net_per_byte"],
         lambda v: f"{v:.3g}"),
        ("Best cap", "最好的上限", lambda d: d["cap"], lambda v: f"{fmt_bytes(v)} ({v / MiB:g} MiB)"),
        ("Step at the best cap", "最好上限下的一步", lambda d: d["step"], _t),
        (f"Caps within {fmt_pct(ov.NEAR_OPTIMUM)} of the best", f"与最优相差不到 {fmt_pct(ov.NEAR_OPTIMUM)} 的上限",
         lambda d: d["near"], lambda v: f"{fmt_bytes(v[0])}–{fmt_bytes(v[1])}"),
        ("Often recommended range", "常被推荐的区间", lambda d: d["range"],
         lambda v: f"{v[0] / MB:g}–{v[1] / MB:g} MB"),
        (f"Step at {lo / MiB:g} MiB", f"上限 {lo / MiB:g} MiB 时的一步", lambda d: d["first"], _t),
        (f"Step at {hi / MiB:,g} MiB", f"上限 {hi / MiB:,g} MiB 时的一步", lambda d: d["last"], _t),
        (f"Step at PyTorch's {DDP_BUCKET_CAP_BYTES / MiB:g} MiB", f"PyTorch 默认 {DDP_BUCKET_CAP_BYTES / MiB:g} MiB 时的一步",
         lambda d: d["default"], _t),
    ]
    names = {k: ov.SHAPE_NAMES[x.name] for k, x in (("small", ov.SHAPES[0]), ("large", ov.SHAPES[1]))}
    sm_t, fb = ov.layer_tensors(ov.SHAPES[0]), ov.FEW_LARGE_BASIS
    return Table(
        key="ch1-ovl-shapes", title=_tx("the_two_model_shapes"),
        columns=["what", "small", "large"],
        headers={"en": ["", names["small"]["en"], names["large"]["en"]],
                 "zh": ["", names["small"]["zh"], names["large"]["zh"]]},
        rows=[{"what": en, "small": f(fn(s)), "large": f(fn(g)), "raw": (fn(s), fn(g))} for en, _, fn, f in rows],
        formats={"what": str, "small": str, "large": str},
        labels={"zh": {en: zh for en, zh, _, _ in rows}},
        notes=_txs("ring_all_reduce_on", "each_layer_one_weight", sweep_gpus=ov.SWEEP_GPUS, net_per_byte=ns(s['net_per_byte']), start_up=_t(s['start_up']), v=names['small']['en'].capitalize(), sm_t=fmt_bytes(max(sm_t), binary=True), sm_t2=len(sm_t) - 1, sm_t3=fmt_bytes(min(sm_t), binary=True), v2=names['large']['en'].capitalize(), d_model=fb['d_model'], flops=fb['flops'] / 1e12, tokens=fb['tokens'], zh=names['small']['zh'], zh2=names['large']['zh']),
        meta={"small": s, "large": g})


def overhead_table() -> Table:
    """Many short layers against 2o per collective: :func:`~.overlap_numbers.overhead_example`."""
    oe = ov.overhead_example()
    return quantity_table("ch1-ovl-overhead", ("Many short layers: the overhead 2o per all-reduce",
                                               "许多很短的层：每次 all-reduce 的开销 2o"), [
        ("Layers", "层数", oe["layers"], f"{oe['layers']}"),
        ("Backward per layer", "每层反向", oe["backward"], _t(oe["backward"])),
        ("All-reduce per layer (wire)", "每层 all-reduce（线上）", oe["wire"], _t(oe["wire"])),
        ("LogP overhead o", "LogP 开销 o", oe["o"], _t(oe["o"])),
        ("Compute in all", "计算合计", oe["compute"], _t(oe["compute"])),
        ("Overheads in all", "开销合计", oe["overhead"], _t(oe["overhead"])),
        ("Wire time in all", "线上时间合计", oe["wire_total"], _t(oe["wire_total"])),
        ("Step, overlapped", "一步（重叠）", oe["overlapped"], fmt_time(oe["overlapped"], 4)),
        ("Step, not overlapped", "一步（不重叠）", oe["blocking"], fmt_time(oe["blocking"], 4)),
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
