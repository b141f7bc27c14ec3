r"""Chapter §1.3, the last two parts of ``chapters/{zh,en}/ch1/03-primitives.md``: which
primitive and which schedule where.  The all-to-all schedule choice and the collective
selection guide (tables in both languages), and FSDP's collectives per step next to
DDP's (:mod:`commbook.parallelism`): 3·N_L with PyTorch's default resharding, 2·N_L
without (the chapter's count), ZeRO-3's 1.5× DDP's bytes, DDP's 25 MiB buckets, and the
start-up term of each.  Units are decimal except the bucket cap (MiB, as PyTorch reads
``bucket_cap_mb``).
"""
from __future__ import annotations

from typing import Sequence

from ... import parallelism
from ...collectives import predict
from ...hardware import IB_NDR_CHAPTER, Link
from ...units import MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time
from ..tables import Table
from ..text import texts
from .primitives import link_name

T = texts("ch1")
__all__ = ["schedule_table", "selection_table", "FSDP_MODEL", "fsdp_numbers", "fsdp_table",
           "fsdp_layer_table", "decomposition_table"]


def _split(entry: dict[str, str]) -> dict[str, list[str]]:
    """A table's headers, kept in one text entry separated by '|'."""
    return {lang: text.split("|") for lang, text in entry.items()}


# ============================================================================ schedule / guide
def schedule_table() -> Table:
    """Choosing an all-to-all schedule: where each shape fits and what it costs."""
    rows = [{"s": "direct", "when": "direct_when", "cost": "direct_cost"},
            {"s": "hier", "when": "hier_when", "cost": "hier_cost"},
            {"s": "v", "when": "v_when", "cost": "v_cost"}]
    labels = T.labels("primitives_use.schedule_table.labels.")
    return Table(
        key="ch1-a2a-schedules",
        title=T("primitives_use.schedule_table.title"),
        columns=["s", "when", "cost"],
        headers=_split(T("primitives_use.schedule_table.headers")),
        rows=rows, labels=labels)


def selection_table() -> Table:
    """The collective selection guide: parallelism → main collectives → what bounds them."""
    keys = ("dp", "fsdp", "tp", "pp", "sp", "moe", "dlrm")
    prim = {"dp": "all-reduce", "fsdp": "all-gather, reduce-scatter", "tp": "all-reduce, all-gather",
            "pp": "send / recv", "sp": "all-gather, reduce-scatter", "moe": "all-to-all",
            "dlrm": "all-to-all"}
    labels = T.labels("primitives_use.selection_table.labels.")
    rows = [{"par": k, "prim": prim[k], "bound": f"b_{k}"} for k in keys]
    return Table(
        key="ch1-selection",
        title=T("primitives_use.selection_table.title"),
        columns=["par", "prim", "bound"],
        headers=_split(T("primitives_use.selection_table.headers")),
        rows=rows, labels=labels)


# ============================================================================ FSDP
FSDP_MODEL = {"params": 7e9, "n_layers": 32, "world": 64, "bytes_per_value": 2}
"""The model of the FSDP example: 7B parameters in 32 layers, BF16, on 64 GPUs."""


def fsdp_numbers(params: float = FSDP_MODEL["params"], n_layers: int = FSDP_MODEL["n_layers"],
                 world: int = FSDP_MODEL["world"], bytes_per_value: float = FSDP_MODEL["bytes_per_value"],
                 link: Link = IB_NDR_CHAPTER, layer_sizes: Sequence[float] = (10 * MB, 100 * MB)) -> dict:
    """FSDP's collectives per step next to DDP's, for one stated model.

    * counts: FULL_SHARD (reshard after forward, PyTorch's default) 3·N_L; without
      resharding 2·N_L; DDP one all-reduce per 25 MiB bucket (and 1 logically);
    * bytes each GPU sends relative to DDP (ring algorithms): ZeRO-3 / FULL_SHARD 1.5,
      without resharding 1.0;
    * α_eff per call: the start-up term of one all-gather of ``world`` ranks on ``link``,
      ring ((N−1)α) and recursive doubling (log₂N·α); FSDP's start-up per step is
      calls × α_eff (every call is an all-gather or a reduce-scatter, same start-up);
      ``startup`` sums the ring latency term of every call of each strategy (an
      all-reduce pays 2(N−1)α);
    * one layer's all-gather at ``layer_sizes`` by ring and by recursive doubling;
    * DDP's bucket count at 25 MiB and, for comparison, at a decimal 25 MB.
    """
    full = parallelism.fsdp(params, n_layers, world, bytes_per_value, reshard_after_forward=True)
    grad_op = parallelism.fsdp(params, n_layers, world, bytes_per_value, reshard_after_forward=False)
    z3 = parallelism.zero(3, params, world, bytes_per_value, n_layers=n_layers)
    ddp = parallelism.ddp(params, world, bytes_per_value)
    model_bytes = params * bytes_per_value
    a_ring = predict("all_gather", "ring", world, 0.0, link.alpha, link.beta)
    a_rd = predict("all_gather", "rd", world, 0.0, link.alpha, link.beta)
    layers = [{"n": n, "ring": predict("all_gather", "ring", world, n, link.alpha, link.beta),
               "rd": predict("all_gather", "rd", world, n, link.alpha, link.beta)} for n in layer_sizes]
    return {
        "params": params, "n_layers": n_layers, "world": world, "bytes_per_value": bytes_per_value,
        "link": link, "model_bytes": model_bytes, "layer_bytes": model_bytes / n_layers,
        "full": full, "grad_op": grad_op, "zero3": z3, "ddp": ddp,
        "n_full": full.n_collectives, "n_grad_op": grad_op.n_collectives, "n_ddp": ddp.n_collectives,
        "chapter_count": 2 * n_layers,
        "ratio_full": z3.bytes_per_gpu / ddp.bytes_per_gpu,
        "ratio_grad_op": grad_op.bytes_per_gpu / ddp.bytes_per_gpu,
        "alpha_ring": a_ring, "alpha_rd": a_rd,
        "startup_full_ring": full.startup_cost(a_ring), "startup_grad_op_ring": grad_op.startup_cost(a_ring),
        "startup_full_rd": full.startup_cost(a_rd),
        "startup": {key: _ring_startup(st, link) for key, st in (("ddp", ddp), ("grad_op", grad_op),
                                                                  ("full", full))},
        "layers": layers,
        "buckets_mib": parallelism.ddp_bucket_count(model_bytes),
        "buckets_mb": parallelism.ddp_bucket_count(model_bytes, parallelism.DDP_BUCKET_CAP_MB * MB),
        "bucket_cap": parallelism.DDP_BUCKET_CAP_BYTES,
    }


def _ring_startup(step: parallelism.StepComm, link: Link) -> float:
    """Σ over the calls of the latency term of the ring algorithm (bytes = 0)."""
    return sum(c.count * predict(c.op, "ring", step.world, 0.0, link.alpha, link.beta)
               for c in step.collectives)


def fsdp_table(numbers: dict | None = None) -> Table:
    """Collectives per step, bytes per GPU relative to DDP and start-up per step (ring
    all-gather α_eff) for DDP and the two FSDP modes of :func:`fsdp_numbers`."""
    f = fsdp_numbers() if numbers is None else numbers
    ddp_bytes = f["ddp"].bytes_per_gpu
    rows = []
    for key, s in (("ddp", f["ddp"]), ("grad_op", f["grad_op"]), ("full", f["full"])):
        rows.append({"strategy": key, "calls": s.n_collectives, "ag": s.count("all_gather"),
                     "rs": s.count("reduce_scatter"), "ar": s.count("all_reduce"),
                     "bytes": s.bytes_per_gpu, "rel": s.bytes_per_gpu / ddp_bytes,
                     "startup": f["startup"][key]})
    labels = T.labels("primitives_use.fsdp_table.labels.")
    p, L = f["world"], f["n_layers"]
    return Table(
        key="ch1-fsdp",
        title=T("primitives_use.fsdp_title", params=f"{f['params'] / 1e9:g}", layers=L, p=p),
        columns=["strategy", "calls", "ag", "rs", "ar", "bytes", "rel", "startup"],
        headers=_split(T("primitives_use.fsdp_table.headers")),
        rows=rows, labels=labels,
        formats={"bytes": fmt_bytes, "rel": fmt_ratio, "startup": lambda t: fmt_time(t, 3)},
        notes={lang: [T.get("primitives_use.fsdp_note", lang, alpha=fmt_time(f["link"].alpha),
                            link=f["link"].name if lang == "en" else link_name(f["link"], lang),
                            a_ring=fmt_time(f["alpha_ring"], 3))] for lang in ("en", "zh")},
        meta=f)


def fsdp_layer_table(numbers: dict | None = None) -> Table:
    """One layer's all-gather at the sizes of :func:`fsdp_numbers`, ring against recursive
    doubling, and what recursive doubling saves."""
    fs = fsdp_numbers() if numbers is None else numbers
    rows = [{"n": r["n"], "ring": r["ring"], "rd": r["rd"], "save": 1 - r["rd"] / r["ring"]} for r in fs["layers"]]
    return Table(
        key="ch1-fsdp-layer",
        title={lang: T.get("primitives_use.layer_title", lang, p=fs["world"], link=link_name(fs["link"], lang))
               for lang in ("en", "zh")},
        columns=["n", "ring", "rd", "save"],
        headers=_split(T("primitives_use.fsdp_layer_table.headers")),
        rows=rows, formats={"n": fmt_bytes, "ring": lambda t: fmt_time(t, 3), "rd": lambda t: fmt_time(t, 3),
                            "save": fmt_pct},
    )


def decomposition_table(dec: dict) -> Table:
    """The run of :func:`commbook.book.ch1.primitives.rs_ag_equals_ar`, rank by rank: input,
    reduce-scatter output, all-gather of those blocks, direct all-reduce."""
    text = lambda a: ", ".join(str(int(v)) for v in a)
    rows = [{"rank": d, "input": text(x), "rs": text(rs), "ag": text(ag), "ar": text(ar)}
            for d, (x, rs, ag, ar) in enumerate(zip(dec.inputs, dec.reduce_scatter, dec.all_gather, dec.all_reduce))]
    return Table(
        key="ch1-rs-ag-ar",
        title=T("primitives_use.decomposition_table.title"),
        columns=["rank", "input", "rs", "ag", "ar"],
        headers=_split(T("primitives_use.decomposition_table.headers")),
        rows=rows, formats={"rank": str},
    )
