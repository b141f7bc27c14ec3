"""The P5 §7 tables (script 05): communication in LLM inference, from :mod:`commbook.llm`.

Like :mod:`commbook.book.p5`, each function returns a :class:`~commbook.book.tables.Table`
whose rows hold raw numbers (seconds, bytes); the script
``code/scripts/p5/05_communication_in_llm_inference.py`` prints them and the §7 pages
show them.  Anchors: seed inventory C.3.1 §7 and C.3.3-05.
"""
from __future__ import annotations

from typing import Sequence

from ... import llm
from ...hardware import H100, IB_NDR, NVLINK4, NVLINK_H800, Chip, Link
from ...llm import DEEPSEEK_V3, LLAMA31_70B, DenseModel, MoEModel
from ..tables import Table, bilingual, bilingual_notes
from ...units import fmt_bytes, fmt_number, fmt_pct, fmt_ratio, fmt_time
from .common import original_note, span

__all__ = ["demo_05_1", "demo_05_2", "demo_05_3", "demo_05_4", "demo_05_5"]


def _ms(v: float) -> str:
    return f"{v * 1e3:.3f} ms"


def _share(comm: float, compute: float) -> float:
    return comm / (comm + compute)


def demo_05_1(model: DenseModel = LLAMA31_70B, batches: Sequence[int] = (1, 8, 16, 32, 64, 128, 256),
              tp: int = 8, chip: Chip = H100, link: Link = NVLINK4, slow_alpha: float = 20e-6) -> Table:
    """§7.1 tensor-parallel decode: 2 all-reduces per layer of B x d x 2 bytes, ring and
    recursive doubling on NVLink, against the decode roofline (no overlap).

    Anchors: ring 4.490 ms at B = 1 (α alone 160 x 14 x 2 µs = 4.48 ms), RD/ring ≈ 22 %,
    RD share 16 % at α = 2 µs and 65 % at α = 20 µs, compute 8.39 ms at B = 64.
    """
    slow = Link(f"{link.name}, α = {slow_alpha * 1e6:g} µs", slow_alpha, link.beta,
                f"{link.name} with an assumed effective α of {slow_alpha * 1e6:g} µs (software stack included)")
    rows = []
    for b in batches:
        x = llm.decode_step(model, b, chip=chip, tp=tp).time
        ring = llm.tp_comm_time(model, b, tp, "ring", intra=link)
        rd = llm.tp_comm_time(model, b, tp, "rd", intra=link)
        rd_slow = llm.tp_comm_time(model, b, tp, "rd", intra=slow)
        rows.append({"batch": b, "msg": llm.tp_message_bytes(model, b), "compute": x,
                     "ring": ring, "ring_share": _share(ring, x), "rd": rd, "rd_share": _share(rd, x),
                     "rd_slow": rd_slow, "rd_slow_share": _share(rd_slow, x)})
    a = f"{slow_alpha * 1e6:g}"
    return Table(
        key="05-1",
        title=bilingual(f"{model.name}, TP = {tp} decode: {llm.tp_allreduces_per_step(model)} all-reduces "
                     f"per step on {link.name} (share = comm / (compute + comm), no overlap)",
                     f"{model.name}，TP = {tp} 的 decode：每步 {llm.tp_allreduces_per_step(model)} 次 "
                     f"all-reduce，走 {link.name}（占比 = 通信 /（计算 + 通信），不重叠）"),
        columns=["batch", "msg", "compute", "ring", "ring_share", "rd", "rd_share", "rd_slow", "rd_slow_share"],
        headers={"en": ["B", "message", "compute/memory", "ring", "share", "RD", "share",
                        f"RD, α = {a} µs", "share"],
                 "zh": ["B", "消息", "计算 / 访存", "ring", "占比", "递归倍增", "占比",
                        f"递归倍增，α = {a} µs", "占比"]},
        rows=rows,
        formats={"msg": fmt_bytes, "compute": _ms, "ring": _ms, "rd": _ms, "rd_slow": _ms,
                 "ring_share": fmt_pct, "rd_share": fmt_pct, "rd_slow_share": fmt_pct},
        notes={"en": [f"Compute/memory: decode roofline per GPU, all weights but the input embedding "
                      f"plus a {llm.DEFAULT_CONTEXT}-token KV cache per sequence, read at "
                      f"{chip.hbm_bandwidth / 1e12:g} TB/s ({chip.name})."],
               "zh": [f"计算 / 访存：每块 GPU 的 decode roofline，读除输入 embedding 外的全部权重，"
                      f"加每条序列 {llm.DEFAULT_CONTEXT} 个 token 的 KV cache，"
                      f"HBM {chip.hbm_bandwidth / 1e12:g} TB/s（{chip.name}）。"]},
    )


def demo_05_2(model: DenseModel = LLAMA31_70B, prompts: Sequence[int] = (512, 1024, 2048, 4096, 8192, 16384),
              tp: int = 8, chip: Chip = H100, link: Link = NVLINK4) -> Table:
    """§7.2 tensor-parallel prefill: messages of n x d x 2 bytes, ring on NVLink.

    Anchors: ≈10.2 µs of communication and ≈17.6 µs of linear compute per token (58 %),
    4.48 ms of α per prefill, comm/compute 107 % at 512 tokens falling to ≈45 % at 16K.
    """
    rows = []
    for n in prompts:
        c = llm.prefill_compute(model, n, chip, tp)
        k = llm.tp_comm_time(model, n, tp, "ring", intra=link)
        rows.append({"tokens": n, "msg": llm.tp_message_bytes(model, n), "compute": c, "comm": k,
                     "ratio": k / c})
    return Table(
        key="05-2",
        title=bilingual(f"{model.name}, TP = {tp} prefill of one prompt: ring all-reduces on {link.name}",
                     f"{model.name}，TP = {tp}，prefill 一条提示：ring all-reduce 走 {link.name}"),
        columns=["tokens", "msg", "compute", "comm", "ratio"],
        headers={"en": ["prompt tokens", "message", "compute", "communication", "comm / compute"],
                 "zh": ["提示 token 数", "消息", "计算", "通信", "通信 / 计算"]},
        rows=rows,
        formats={"msg": fmt_bytes, "compute": _ms, "comm": _ms, "ratio": fmt_pct},
        notes={"en": ["Compute: 2 FLOPs per weight and token, plus attention 4·n²·d per layer "
                      "(no causal saving)."],
               "zh": ["计算：每个权重每个 token 2 次浮点运算，另加每层注意力 4·n²·d（不计因果掩码的节省）。"]},
    )


def demo_05_3(model: DenseModel = LLAMA31_70B, batch: int = 64, chip: Chip = H100,
              intra: Link = NVLINK4, inter: Link = IB_NDR, tps: Sequence[int] = (8, 16),
              gpus_per_node: int = 8) -> Table:
    """§7.3 TP 8 (one node, ring) vs TP 16 (two nodes, hierarchical) at B = 64.

    Anchors: compute 8.39 → 4.20 ms, communication 5.13 → 7.15 ms, total 13.52 → 11.35 ms.
    """
    g = gpus_per_node
    rows = []
    for tp in tps:
        x = llm.decode_step(model, batch, chip=chip, tp=tp).time
        k = llm.tp_comm_time(model, batch, tp, "ring", intra=intra, inter=inter, gpus_per_node=g)
        rows.append({"tp": tp, "nodes": max(1, tp // g), "compute": x, "comm": k, "total": x + k})
    where = {"en": lambda r: f"TP {r['tp']} on {r['nodes']} node" + ("s" if r["nodes"] > 1 else ""),
             "zh": lambda r: f"TP {r['tp']} 占 {r['nodes']} 个节点"}
    wide = [r for r in rows if r["tp"] > g]
    notes = [(f"TP {r['tp']} spans {r['nodes']} nodes and runs the hierarchical all-reduce: "
              f"{intra.name} reduce-scatter, a ring over the {r['nodes']} nodes on each rail "
              f"({inter.name}), {intra.name} all-gather.",
              f"TP {r['tp']} 跨 {r['nodes']} 个节点，用层次化 all-reduce：先在 {intra.name} 内 "
              f"reduce-scatter，再在每条轨道上跨 {r['nodes']} 个节点做 ring（{inter.name}），"
              f"最后在 {intra.name} 内 all-gather。") for r in wide]
    if len(wide) < len(rows):
        notes.insert(0, (f"Up to {g} GPUs the TP group is one {intra.name} switch and runs a ring.",
                         f"不超过 {g} 块 GPU 时，TP 组就在一台 {intra.name} 交换机上，用 ring。"))
    return Table(
        key="05-3",
        title=bilingual(f"{model.name} decode at B = {batch}: " + " vs ".join(map(where["en"], rows)),
                        f"{model.name} decode，B = {batch}：" + " 对比 ".join(map(where["zh"], rows))),
        columns=["tp", "nodes", "compute", "comm", "total"],
        headers={"en": ["TP", "nodes", "compute/memory", "communication", "total"],
                 "zh": ["TP", "节点数", "计算 / 访存", "通信", "合计"]},
        rows=rows,
        formats={"compute": _ms, "comm": _ms, "total": _ms},
        notes=bilingual_notes(*notes),
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
        title=bilingual(f"{model.name} all-to-all per MoE layer, {tokens_per_gpu} tokens per GPU, top-{model.top_k}",
                     f"{model.name} 每个 MoE 层的 all-to-all，每块 GPU {tokens_per_gpu} 个 token，top-{model.top_k}"),
        columns=["ep", "where", "dtype", "bytes", "time", "vs_intra", "step"],
        headers={"en": ["EP", "network", "dispatch", "bytes sent per GPU", "dispatch time", f"vs EP {eps[0]} BF16",
                        f"per step ({model.n_moe_layers} layers, dispatch + BF16 combine)"],
                 "zh": ["EP", "网络", "分发精度", "每块 GPU 发出", "分发耗时", f"相对 EP {eps[0]} BF16",
                        f"每步（{model.n_moe_layers} 层，分发 + BF16 合并）"]},
        rows=rows,
        formats={"bytes": fmt_bytes, "time": fmt_time, "vs_intra": fmt_ratio, "step": _ms},
        notes=bilingual_notes(
            (f"Uniform routing assumed. H800 NVLink ({NVLINK_H800.beta / 1e9:g} GB/s) is "
             f"{fmt_ratio(NVLINK_H800.beta / inter.beta, 2)} {inter.name} ({inter.beta / 1e9:g} GB/s).",
             f"假设专家选择均匀。H800 的 NVLink（{NVLINK_H800.beta / 1e9:g} GB/s）是 {inter.name}"
             f"（{inter.beta / 1e9:g} GB/s）的 {fmt_number(NVLINK_H800.beta / inter.beta, 2)} 倍。")),
    )


ORIGINAL_05_5 = {"nics": 8, "ratio": 9}
"""The original notes' KV transfer over ``nics`` NICs vs one, and how many times slower they
say one NIC is (demo 05-5 reconciles it)."""


def demo_05_5(model: DenseModel = LLAMA31_70B, prompts: Sequence[int] = (1024, 2048, 4096, 8192, 16384, 32768),
              chip: Chip = H100, tp: int = 8, link: Link = IB_NDR, nics: int = 8) -> Table:
    """§7.5 KV transfer of disaggregated inference (BF16 KV): ``nics`` NICs vs 1 NIC, against
    the prefill compute time.  Columns ``t8``/``share8`` hold the ``nics``-NIC time and share.
    Anchors: 327.68 KB per token; 8 NICs ≈ 4-5 % of prefill; one NIC 7.96-8.00x slower (the
    original says 9x, flag F.31, :data:`ORIGINAL_05_5`)."""
    rows = []
    for n in prompts:
        pre = llm.prefill_compute(model, n, chip, tp)
        t8 = llm.kv_transfer_time(model, n, nics, link)
        t1 = llm.kv_transfer_time(model, n, 1, link)
        rows.append({"tokens": n, "kv": llm.kv_bytes(model, n), "prefill": pre, "t8": t8,
                     "share8": t8 / pre, "t1": t1, "share1": t1 / pre, "ratio": t1 / t8})
    ratio = span([r["ratio"] for r in rows], lambda v: fmt_ratio(v, 3))
    ratio_zh = span([r["ratio"] for r in rows], lambda v: fmt_number(v, 3)) + " 倍"
    notes = [(f"Time = α + KV bytes / (NICs · β): one NIC is {ratio} slower than {nics}, tending to "
              f"{fmt_ratio(nics)} as the KV grows and α matters less.",
              f"时间 = α + KV 字节 /（网卡数 · β）：一块网卡比 {nics} 块慢 {ratio_zh}，KV 越大 α 越不"
              f"要紧，比值越接近 {nics} 倍。")]
    o = ORIGINAL_05_5
    if nics == o["nics"]:
        notes.append(original_note(
            (f"one NIC {fmt_ratio(o['ratio'])} slower than {nics}", ratio,
             f"the bytes split evenly over the {nics} NICs and α is paid once either way, so the "
             f"ratio stays below {nics}"),
            (f"一块网卡比 {nics} 块慢 {o['ratio']} 倍", ratio_zh,
             f"字节平均分到 {nics} 块网卡上，α 两边都只付一次，所以比值不会超过 {nics}")))
    cards = {"en": f"{nics} NIC" + ("s" if nics > 1 else ""), "zh": f"{nics} 块网卡"}
    return Table(
        key="05-5",
        title=bilingual(f"{model.name}: moving a prompt's KV cache ({fmt_bytes(model.kv_bytes_per_token())} "
                     f"per token, BF16) over {link.name}",
                     f"{model.name}：搬运一条提示的 KV cache（每 token {fmt_bytes(model.kv_bytes_per_token())}，"
                     f"BF16），走 {link.name}"),
        columns=["tokens", "kv", "prefill", "t8", "share8", "t1", "share1", "ratio"],
        headers={"en": ["prompt tokens", "KV size", "prefill", cards["en"], "of prefill", "1 NIC",
                        "of prefill", f"1 NIC / {cards['en']}"],
                 "zh": ["提示 token 数", "KV 大小", "prefill", cards["zh"], "占 prefill", "1 块网卡",
                        "占 prefill", f"1 块 / {nics} 块"]},
        rows=rows,
        formats={"kv": fmt_bytes, "prefill": _ms, "t8": _ms, "t1": _ms, "share8": fmt_pct,
                 "share1": fmt_pct, "ratio": fmt_ratio},
        notes=bilingual_notes(*notes),
    )
