r"""Chapter §1.3, the last two parts of ``chapters/{zh,en}/ch1/03-primitives.md``: which
primitive and which schedule where.  The all-to-all schedule choice and the collective
selection guide (tables in both languages), and FSDP's collectives per step next to
DDP's (:mod:`commbook.parallelism`): 3·N_L with PyTorch's default resharding, 2·N_L
without (the chapter's count), ZeRO-3's 1.5× DDP's bytes, DDP's 25 MiB buckets, and the
start-up term of each.  Units are decimal except the bucket cap (MiB, as PyTorch reads
``bucket_cap_mb``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ... import parallelism
from ...collectives import predict
from ...hardware import IB_NDR_CHAPTER, Link
from ...units import MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time
from ..glue import not_glued
from ..tables import Table
from ..text import texts
from .boxes import split_pairs
from .primitives import CHAPTER_STATED, link_name

T = texts("ch1")
__all__ = ["schedule_table", "selection_table", "FSDP_MODEL", "Fsdp", "fsdp_numbers", "fsdp_table",
           "fsdp_layer_table", "decomposition_table"]


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
        headers=split_pairs(T("primitives_use.schedule_table.headers")),
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
        headers=split_pairs(T("primitives_use.selection_table.headers")),
        rows=rows, labels=labels)


# ============================================================================ FSDP
FSDP_MODEL = {"params": 7e9, "n_layers": 32, "world": 64, "bytes_per_value": 2}
"""The model of the FSDP example: 7B parameters in 32 layers, BF16, on 64 GPUs."""


@dataclass(frozen=True)
class Fsdp:
    """:func:`fsdp_numbers`: FSDP's collectives per step next to DDP's, for one stated model.

    The model (``params`` as text, ``layers``, ``world``, ``model_bytes``, ``layer_bytes``);
    collectives per step: FULL_SHARD ``n_full`` (``k_full`` per layer), without resharding
    ``n_grad`` (``k_grad``), DDP ``n_ddp``, and the chapter's counts ``k_chapter`` per layer
    and ``ddp_logical``; bytes each GPU sends over DDP's: ZeRO-3 ``ratio_full``, without
    resharding ``ratio_grad``; the start-up of one all-gather, ring ``a_ring_s`` and
    recursive doubling ``a_rd_s``; FULL_SHARD's start-up per step with each (``s_full_s``,
    ``s_rd_s``) and DDP's (``s_ddp_s``, ring: 2(N−1)α per bucket); DDP's bucket cap and
    bucket count in MiB and in decimal MB; one layer's all-gather at ``l10_bytes`` and
    ``l100_bytes``, with what recursive doubling saves.  ``steps`` holds the strategies'
    :class:`commbook.parallelism.StepComm` (``ddp``, ``grad_op``, ``full``, ``zero3``),
    ``layer_times`` (bytes, ring, recursive doubling) per layer size; ``link`` is an
    attribute, not a field.
    """

    params: str
    layers: int
    world: int
    model_bytes: float
    layer_bytes: float
    n_full: int
    n_grad: int
    n_ddp: int
    k_full: int
    k_grad: int
    k_chapter: int
    ddp_logical: int
    ratio_full: float
    ratio_grad: float
    a_ring_s: float
    a_rd_s: float
    s_full_s: float
    s_rd_s: float
    s_ddp_s: float
    bucket_mib: str
    bucket_cap: int
    bucket_mb: str
    buckets: int
    buckets_mb: int
    l10_bytes: float
    l100_bytes: float
    l10_save_frac: float
    l100_save_frac: float
    steps: dict = field(repr=False)
    layer_times: tuple = field(repr=False)
    link: Link = not_glued()


def fsdp_numbers(params: float = FSDP_MODEL["params"], n_layers: int = FSDP_MODEL["n_layers"],
                 world: int = FSDP_MODEL["world"], bytes_per_value: float = FSDP_MODEL["bytes_per_value"],
                 link: Link = IB_NDR_CHAPTER, layer_sizes: tuple[float, float] = (10 * MB, 100 * MB)) -> Fsdp:
    """FSDP's collectives per step next to DDP's (see :class:`Fsdp`): FULL_SHARD (reshard
    after forward, PyTorch's default) 3·N_L, without resharding 2·N_L, DDP one all-reduce
    per 25 MiB bucket; ZeRO-3 sends 1.5× DDP's bytes; every FSDP call is an all-gather or a
    reduce-scatter, so its start-up per step is calls × one all-gather's start-up on
    ``world`` ranks of ``link``.

    >>> f = fsdp_numbers()
    >>> f.n_full, f.n_grad, f.buckets, f.ratio_full
    (96, 64, 535, 1.5)
    """
    full = parallelism.fsdp(params, n_layers, world, bytes_per_value, reshard_after_forward=True)
    grad_op = parallelism.fsdp(params, n_layers, world, bytes_per_value, reshard_after_forward=False)
    z3 = parallelism.zero(3, params, world, bytes_per_value, n_layers=n_layers)
    ddp = parallelism.ddp(params, world, bytes_per_value)
    model_bytes = params * bytes_per_value
    ag = lambda n, algo: predict("all_gather", algo, world, n, link.alpha, link.beta)  # noqa: E731
    a_ring, a_rd = ag(0.0, "ring"), ag(0.0, "rd")
    lt = tuple((n, ag(n, "ring"), ag(n, "rd")) for n in layer_sizes)
    (l10, *_), (l100, *_) = lt
    cap = parallelism.DDP_BUCKET_CAP_BYTES
    mib = f"{cap / 2**20:g}"
    return Fsdp(
        f"{params / 1e9:g}B", n_layers, world, model_bytes, model_bytes / n_layers, full.n_collectives,
        grad_op.n_collectives, ddp.n_collectives, full.n_collectives // n_layers, grad_op.n_collectives // n_layers,
        CHAPTER_STATED["fsdp_collectives_per_layer"], CHAPTER_STATED["ddp_collectives"],
        z3.bytes_per_gpu / ddp.bytes_per_gpu, grad_op.bytes_per_gpu / ddp.bytes_per_gpu, a_ring, a_rd,
        full.startup_cost(a_ring), full.startup_cost(a_rd), _ring_startup(ddp, link), f"{mib} MiB", int(cap),
        f"{mib} MB", parallelism.ddp_bucket_count(model_bytes),
        parallelism.ddp_bucket_count(model_bytes, parallelism.DDP_BUCKET_CAP_MB * MB), l10, l100,
        *(1 - rd / ring for _, ring, rd in lt), {"ddp": ddp, "grad_op": grad_op, "full": full, "zero3": z3}, lt, link)


def _ring_startup(step: parallelism.StepComm, link: Link) -> float:
    """Σ over the calls of the latency term of the ring algorithm (bytes = 0)."""
    return sum(c.count * predict(c.op, "ring", step.world, 0.0, link.alpha, link.beta)
               for c in step.collectives)


def fsdp_table(numbers: Fsdp | None = None) -> Table:
    """Collectives per step, bytes per GPU relative to DDP and start-up per step (ring
    all-gather α_eff) for DDP and the two FSDP modes of :func:`fsdp_numbers`.

    >>> fsdp_table().column("calls")
    [535, 64, 96]
    """
    f = fsdp_numbers() if numbers is None else numbers
    ddp_bytes = f.steps["ddp"].bytes_per_gpu
    rows = []
    for key in ("ddp", "grad_op", "full"):
        s = f.steps[key]
        rows.append({"strategy": key, "calls": s.n_collectives, "ag": s.count("all_gather"),
                     "rs": s.count("reduce_scatter"), "ar": s.count("all_reduce"),
                     "bytes": s.bytes_per_gpu, "rel": s.bytes_per_gpu / ddp_bytes,
                     "startup": _ring_startup(s, f.link)})
    labels = T.labels("primitives_use.fsdp_table.labels.")
    p, L = f.world, f.layers
    return Table(
        key="ch1-fsdp",
        title=T("primitives_use.fsdp_title", params=f.params[:-1], layers=L, p=p),
        columns=["strategy", "calls", "ag", "rs", "ar", "bytes", "rel", "startup"],
        headers=split_pairs(T("primitives_use.fsdp_table.headers")),
        rows=rows, labels=labels,
        formats={"bytes": fmt_bytes, "rel": fmt_ratio, "startup": lambda t: fmt_time(t, 3)},
        notes={lang: [T.get("primitives_use.fsdp_note", lang, alpha=fmt_time(f.link.alpha),
                            link=f.link.name if lang == "en" else link_name(f.link, lang),
                            a_ring=fmt_time(f.a_ring_s, 3))] for lang in ("en", "zh")})


def fsdp_layer_table(numbers: Fsdp | None = None) -> Table:
    """One layer's all-gather at the sizes of :func:`fsdp_numbers`, ring against recursive
    doubling, and what recursive doubling saves.

    >>> fsdp_layer_table().column("n")
    [10000000.0, 100000000.0]
    """
    fs = fsdp_numbers() if numbers is None else numbers
    rows = [{"n": n, "ring": ring, "rd": rd, "save": 1 - rd / ring} for n, ring, rd in fs.layer_times]
    return Table(
        key="ch1-fsdp-layer",
        title={lang: T.get("primitives_use.layer_title", lang, p=fs.world, link=link_name(fs.link, lang))
               for lang in ("en", "zh")},
        columns=["n", "ring", "rd", "save"],
        headers=split_pairs(T("primitives_use.fsdp_layer_table.headers")),
        rows=rows, formats={"n": fmt_bytes, "ring": lambda t: fmt_time(t, 3), "rd": lambda t: fmt_time(t, 3),
                            "save": fmt_pct},
    )


def decomposition_table(inputs: list, rs: list, ag: list, ar: list) -> Table:
    """The page's run of reduce-scatter, then all-gather, against all-reduce, rank by rank: the
    input, the reduce-scatter output, the all-gather of those blocks, the direct all-reduce
    (one array per rank each)."""
    text = lambda a: ", ".join(str(int(v)) for v in a)
    rows = [{"rank": d, "input": text(x), "rs": text(r), "ag": text(g), "ar": text(a)}
            for d, (x, r, g, a) in enumerate(zip(inputs, rs, ag, ar))]
    return Table(
        key="ch1-rs-ag-ar",
        title=T("primitives_use.decomposition_table.title"),
        columns=["rank", "input", "rs", "ag", "ar"],
        headers=split_pairs(T("primitives_use.decomposition_table.headers")),
        rows=rows, formats={"rank": str},
    )
