"""The P5 §7 tables (script 05): communication in LLM inference, from :mod:`commbook.llm`.

Like :mod:`commbook.book.p5`, each function returns a :class:`~commbook.book.tables.Table`
whose rows hold raw numbers (seconds, bytes); the script
``code/scripts/p5/05_communication_in_llm_inference.py`` prints them and the §7 pages
show them.  Anchors: seed inventory C.3.1 §7 and C.3.3-05.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ... import llm
from ...collectives import t_formula
from ...hardware import H100, IB_NDR, NVLINK4, NVLINK_H800, Chip, Link
from ...llm import DEEPSEEK_V3, LLAMA31_70B, DenseModel, MoEModel
from ..tables import Table
from ..text import texts
from ...units import fmt_bytes, fmt_number, fmt_ratio, fmt_time
from .common import Run, original_note, span

__all__ = ["DecodeRow", "decode_run", "demo_05_1", "PrefillRow", "prefill_run", "demo_05_2", "TpRow", "TpNodes",
           "tp_nodes", "demo_05_3", "demo_05_4", "KvRow", "kv_run", "demo_05_5"]

T = texts("p5")


def _ms(v: float) -> str:
    return f"{v * 1e3:.3f} ms"


def _share(comm: float, compute: float) -> float:
    return comm / (comm + compute)


@dataclass(frozen=True)
class DecodeRow:
    """One batch of table 05-1: the all-reduce's message, the decode step's computation and
    its TP all-reduces with the ring, recursive doubling and recursive doubling at the slow
    α, each with its share of step + communication."""

    batch: int
    msg_bytes: float
    compute_s: float
    ring_s: float
    ring_frac: float
    rd_s: float
    rd_frac: float
    rd_slow_s: float
    rd_slow_frac: float


def decode_run(model: DenseModel = LLAMA31_70B, batches: Sequence[int] = (1, 8, 16, 32, 64, 128, 256),
               tp: int = 8, chip: Chip = H100, link: Link = NVLINK4, slow_alpha: float = 20e-6) -> Run:
    """§7.1 tensor-parallel decode: 2 all-reduces per layer of B x d x 2 bytes, ring and
    recursive doubling on NVLink (and on it at an effective α of ``slow_alpha``), against
    the decode roofline (no overlap): a :class:`DecodeRow` per batch, the setting (model,
    tp, chip, link, slow α); its anchors: :func:`demo_05_1`.

    >>> round(decode_run(batches=(1,)).at(batch=1).ring_s * 1e3, 2)
    4.49
    """
    slow = Link(f"{link.name}, α = {slow_alpha * 1e6:g} µs", slow_alpha, link.beta,
                f"{link.name} with an assumed effective α of {slow_alpha * 1e6:g} µs (software stack included)")
    rows = []
    for b in batches:
        x = llm.decode_step(model, b, chip=chip, tp=tp).time
        ring, rd, rd_slow = (llm.tp_comm_time(model, b, tp, a, intra=lk) for a, lk in
                             (("ring", link), ("rd", link), ("rd", slow)))
        rows.append(DecodeRow(b, llm.tp_message_bytes(model, b), x, ring, _share(ring, x), rd, _share(rd, x),
                              rd_slow, _share(rd_slow, x)))
    return Run(tuple(rows), (model, tp, chip, link, slow_alpha))


def demo_05_1(run: Run | None = None, **params) -> Table:
    """§7.1 tensor-parallel decode, the table of :func:`decode_run` (``run``, else
    ``decode_run(**params)``).

    Anchors: ring 4.490 ms at B = 1 (α alone 160 x 14 x 2 µs = 4.48 ms), RD/ring ≈ 22 %,
    RD share 16 % at α = 2 µs and 65 % at α = 20 µs, compute 8.39 ms at B = 64.
    """
    run = run or decode_run(**params)
    model, tp, chip, link, slow_alpha = run.setting
    a = f"{slow_alpha * 1e6:g}"
    return Table(
        key="05-1",
        title=T("inference.1.title", model=model.name, tp=tp, n_ar=llm.tp_allreduces_per_step(model), link=link.name),
        columns=["batch", "msg_bytes", "compute_s", "ring_s", "ring_frac", "rd_s", "rd_frac", "rd_slow_s", "rd_slow_frac"],
        headers=T.pairs(*(f"inference.1.{c}" for c in ("batch", "msg", "compute", "ring", "share", "rd", "share",
                                                       "rd_slow", "share")), a=a),
        rows=run.rows,
        formats=dict.fromkeys(("compute_s", "ring_s", "rd_s", "rd_slow_s"), _ms),
        notes=T.pairs("inference.1.note", ctx=llm.DEFAULT_CONTEXT, hbm=f"{chip.hbm_bandwidth / 1e12:g}", chip=chip.name),
    )


@dataclass(frozen=True)
class PrefillRow:
    """One prompt of table 05-2: its ``tokens``, the all-reduce's message, the linear
    compute, the TP all-reduces (ring) and their ratio."""

    tokens: int
    msg_bytes: float
    compute_s: float
    comm_s: float
    ratio_frac: float


def prefill_run(model: DenseModel = LLAMA31_70B, prompts: Sequence[int] = (512, 1024, 2048, 4096, 8192, 16384),
                tp: int = 8, chip: Chip = H100, link: Link = NVLINK4) -> Run:
    """§7.2 tensor-parallel prefill: messages of n x d x 2 bytes, ring on ``link``: a
    :class:`PrefillRow` per prompt, the setting (model, tp, chip, link); its anchors:
    :func:`demo_05_2`.

    >>> round(prefill_run(prompts=(512,)).at(tokens=512).ratio_frac, 2)
    1.07
    """
    rows = []
    for n in prompts:
        c = llm.prefill_compute(model, n, chip, tp)
        k = llm.tp_comm_time(model, n, tp, "ring", intra=link)
        rows.append(PrefillRow(n, llm.tp_message_bytes(model, n), c, k, k / c))
    return Run(tuple(rows), (model, tp, chip, link))


def demo_05_2(run: Run | None = None, **params) -> Table:
    """§7.2 tensor-parallel prefill, the table of :func:`prefill_run` (``run``, else
    ``prefill_run(**params)``).

    Anchors: ≈10.2 µs of communication and ≈17.6 µs of linear compute per token (58 %),
    4.48 ms of α per prefill, comm/compute 107 % at 512 tokens falling to ≈45 % at 16K.
    """
    run = run or prefill_run(**params)
    model, tp, _, link = run.setting
    return Table(
        key="05-2",
        title=T("inference.2.title", model=model.name, tp=tp, link=link.name),
        columns=["tokens", "msg_bytes", "compute_s", "comm_s", "ratio_frac"],
        headers=T.pairs(*(f"inference.2.{c}" for c in ("tokens", "msg", "compute", "comm", "ratio"))),
        rows=run.rows,
        formats={"compute_s": _ms, "comm_s": _ms},
        notes=T.pairs("inference.2.note"),
    )


@dataclass(frozen=True)
class TpRow:
    """One tensor-parallel width of table 05-3: ``tp`` GPUs on ``nodes`` nodes, the decode
    step's computation, its TP all-reduces and their sum."""

    tp: int
    nodes: int
    compute_s: float
    comm_s: float
    total_s: float


@dataclass(frozen=True)
class TpNodes:
    """§7.3: TP on one node (the first of ``rows``, :class:`TpRow`) against ``tp`` GPUs on
    ``nodes`` nodes (the last), ``factor`` times as many, and the hierarchical all-reduce's
    phases."""

    tp: int                        # the wider group
    factor: int                    # its GPUs over one node's
    nodes: int
    msg_bytes: float
    compute8_s: float
    compute16_s: float
    comm8_s: float
    comm16_s: float
    total8_s: float
    total16_s: float
    speedup_x: float
    per_ar8_s: float               # one ring all-reduce in one node
    ib_phase_s: float              # the ring across nodes on one rail
    per_ar16_s: float
    ib_alpha_s: float
    g_rounds: int
    ib_rounds: int
    rows: tuple
    setting: tuple                 # the model's name, the batch, GPUs per node, the two links' names


def tp_nodes(model: DenseModel = LLAMA31_70B, batch: int = 64, chip: Chip = H100, intra: Link = NVLINK4,
             inter: Link = IB_NDR, tps: Sequence[int] = (8, 16), gpus_per_node: int = 8) -> TpNodes:
    """The decode step at each TP width of ``tps`` (:func:`commbook.llm.decode_step`,
    :func:`commbook.llm.tp_comm_time` with NCCL's ring), the first against the last; its
    anchors: :func:`demo_05_3`.

    >>> round(tp_nodes().total16_s * 1e3, 2)
    11.35
    """
    g, n = gpus_per_node, llm.tp_message_bytes(model, batch)
    rows = []
    for tp in tps:
        x = llm.decode_step(model, batch, chip=chip, tp=tp).time
        k = llm.tp_comm_time(model, batch, tp, "ring", intra=intra, inter=inter, gpus_per_node=g)
        rows.append(TpRow(tp, max(1, tp // g), x, k, x + k))
    one, wide = rows[0], rows[-1]
    nvl = 2 * (one.tp - 1) * (intra.alpha + n / (one.tp * intra.beta))      # RS + AG inside each node
    ib = t_formula("ring", wide.nodes, n / one.tp, inter.alpha, inter.beta)
    return TpNodes(wide.tp, wide.tp // one.tp, wide.nodes, n, one.compute_s, wide.compute_s, one.comm_s, wide.comm_s,
                   one.total_s, wide.total_s, one.total_s / wide.total_s,
                   t_formula("ring", one.tp, n, intra.alpha, intra.beta), ib, nvl + ib, inter.alpha,
                   2 * (one.tp - 1), 2 * (wide.nodes - 1), tuple(rows), (model.name, batch, g, intra.name, inter.name))


def demo_05_3(run: TpNodes | None = None, **params) -> Table:
    """§7.3 TP 8 (one node, ring) vs TP 16 (two nodes, hierarchical) at B = 64: the table of
    :func:`tp_nodes` (``run``, else ``tp_nodes(**params)``).

    Anchors: compute 8.39 → 4.20 ms, communication 5.13 → 7.15 ms, total 13.52 → 11.35 ms.
    """
    run = run or tp_nodes(**params)
    model, batch, g, intra, inter = run.setting
    where = {lang: T.get("inference.3.vs", lang).join(
        T.get("inference.3.where", lang, tp=r.tp, nodes=r.nodes, s="s" * (r.nodes > 1)) for r in run.rows)
        for lang in ("en", "zh")}
    wide = [r for r in run.rows if r.tp > g]
    notes = [T("inference.3.note_wide", tp=r.tp, nodes=r.nodes, intra=intra, inter=inter) for r in wide]
    if len(wide) < len(run.rows):
        notes.insert(0, T("inference.3.note_node", g=g, intra=intra))
    return Table(
        key="05-3",
        title={lang: T.get("inference.3.title", lang, model=model, batch=batch, where=where[lang])
               for lang in ("en", "zh")},
        columns=["tp", "nodes", "compute_s", "comm_s", "total_s"],
        headers=T.pairs(*(f"inference.3.{c}" for c in ("tp", "nodes", "compute", "comm", "total"))),
        rows=run.rows,
        formats=dict.fromkeys(("compute_s", "comm_s", "total_s"), _ms),
        notes={lang: [n[lang] for n in notes] for lang in ("en", "zh")},
    )


def demo_05_4(model: MoEModel = DEEPSEEK_V3, tokens_per_gpu: int = 256,
              intra: Link = NVLINK4, inter: Link = IB_NDR, eps: Sequence[int] = (8, 64),
              gpus_per_node: int = 8) -> Table:
    """§7.4 MoE all-to-all per layer (dispatch), simulated: EP 8 on one NVLink switch vs
    EP 64 over 8 nodes (direct and hierarchical), BF16 and FP8; per step = MoE layers x
    (dispatch + BF16 combine).  Anchor: crossing nodes costs ≈10x.
    """
    g = gpus_per_node
    configs = [(ep, algo, intra.name if ep <= g else f"{inter.name}, {algo}")
               for ep in eps for algo in (("direct",) if ep <= g else ("direct", "hierarchical"))]
    rows = []
    base = None
    for ep, algo, where in configs:
        combine = llm.moe_a2a_time(model, tokens_per_gpu, ep, 2, intra, inter, g, algorithm=algo)
        for nbytes, dtype in ((2, "BF16"), (1, "FP8")):
            t = llm.moe_a2a_time(model, tokens_per_gpu, ep, nbytes, intra, inter, g, algorithm=algo)
            base = t if base is None else base
            rows.append({"ep": ep, "where": where, "dtype": dtype,
                         "bytes": llm.moe_a2a_bytes(model, tokens_per_gpu, ep, nbytes), "time": t,
                         "vs_intra": t / base, "step": model.n_moe_layers * (t + combine)})
    return Table(
        key="05-4",
        title=T("inference.4.title", model=model.name, tokens=tokens_per_gpu, k=model.top_k),
        columns=["ep", "where", "dtype", "bytes", "time", "vs_intra", "step"],
        headers=T.pairs(*(f"inference.4.{c}" for c in ("ep", "where", "dtype", "bytes", "time", "vs_intra", "step")),
                        ep=eps[0], layers=model.n_moe_layers),
        rows=rows,
        formats={"bytes": fmt_bytes, "time": fmt_time, "vs_intra": fmt_ratio, "step": _ms},
        notes=T.pairs("inference.4.note", h800=f"{NVLINK_H800.beta / 1e9:g}", inter=inter.name,
                      ib=f"{inter.beta / 1e9:g}", ratio_x=fmt_ratio(NVLINK_H800.beta / inter.beta, 2),
                      ratio=fmt_number(NVLINK_H800.beta / inter.beta, 2)),
    )


ORIGINAL_05_5 = {"nics": 8, "ratio": 9}
"""The original notes' KV transfer over ``nics`` NICs vs one, and how many times slower they
say one NIC is (demo 05-5 reconciles it)."""


@dataclass(frozen=True)
class KvRow:
    """One prompt of table 05-5: its ``tokens``, their BF16 KV cache, the prefill compute,
    the transfer over ``nics`` NICs (``t8``) and over one (``t1``), each as a share of the
    prefill, and their ratio."""

    tokens: int
    kv_bytes: float
    prefill_s: float
    t8_s: float
    share8_frac: float
    t1_s: float
    share1_frac: float
    ratio_x: float


def kv_run(model: DenseModel = LLAMA31_70B, prompts: Sequence[int] = (1024, 2048, 4096, 8192, 16384, 32768),
           chip: Chip = H100, tp: int = 8, link: Link = IB_NDR, nics: int = 8) -> Run:
    """§7.5 KV transfer of disaggregated inference (BF16 KV), ``nics`` NICs vs 1 NIC, against
    the prefill compute time: a :class:`KvRow` per prompt, the setting (model, tp, link, nics).

    >>> round(kv_run(prompts=(8192,)).at(tokens=8192).ratio_x, 2)
    7.99
    """
    rows = []
    for n in prompts:
        pre = llm.prefill_compute(model, n, chip, tp)
        t8, t1 = llm.kv_transfer_time(model, n, nics, link), llm.kv_transfer_time(model, n, 1, link)
        rows.append(KvRow(n, llm.kv_bytes(model, n), pre, t8, t8 / pre, t1, t1 / pre, t1 / t8))
    return Run(tuple(rows), (model, tp, link, nics))


def demo_05_5(run: Run | None = None, **params) -> Table:
    """§7.5 KV transfer of disaggregated inference, the table of :func:`kv_run` (``run``, else
    ``kv_run(**params)``).  Columns ``t8``/``share8`` hold the ``nics``-NIC time and share.
    Anchors: 327.68 KB per token; 8 NICs ≈ 4-5 % of prefill; one NIC 7.96-8.00x slower (the
    original says 9x, flag F.31, :data:`ORIGINAL_05_5`)."""
    run = run or kv_run(**params)
    model, _, link, nics = run.setting
    ratio = span([r.ratio_x for r in run.rows], fmt_ratio)
    ratio_zh = T.get("inference.5.times", "zh", n=span([r.ratio_x for r in run.rows], lambda v: fmt_number(v, 3)))
    ratios = {"en": ratio, "zh": ratio_zh}
    notes = [{lang: T.get("inference.5.ratio_note", lang, ratio=ratios[lang], nics=nics, nics_x=fmt_ratio(nics))
              for lang in ("en", "zh")}]
    o = ORIGINAL_05_5
    if nics == o["nics"]:
        en, zh = (tuple(T.get(k, lang, orig=fmt_ratio(o["ratio"]) if lang == "en" else o["ratio"], nics=nics)
                        if k else ratios[lang] for k in ("inference.5.orig_what", None, "inference.5.orig_why"))
                  for lang in ("en", "zh"))
        notes.append(dict(zip(("en", "zh"), original_note(en, zh))))
    cards = T("inference.5.cards", nics=nics, s="s" * (nics > 1))
    return Table(
        key="05-5",
        title=T("inference.5.title", model=model.name, per_token=fmt_bytes(model.kv_bytes_per_token()), link=link.name),
        columns=["tokens", "kv_bytes", "prefill_s", "t8_s", "share8_frac", "t1_s", "share1_frac", "ratio_x"],
        headers={lang: [T.get(f"inference.5.{c}", lang, nics=nics, cards=cards[lang]) if c != "cards" else cards[lang]
                        for c in ("tokens", "kv", "prefill", "cards", "of_prefill", "one_nic", "of_prefill", "ratio")]
                 for lang in ("en", "zh")},
        rows=run.rows,
        formats=dict.fromkeys(("prefill_s", "t8_s", "t1_s"), _ms),
        notes={lang: [n[lang] for n in notes] for lang in ("en", "zh")},
    )
