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
from ...units import MB, fmt_bytes, fmt_pct, fmt_time
from ..tables import Table
from .primitives import link_name

__all__ = ["schedule_table", "selection_table", "FSDP_MODEL", "fsdp_numbers", "fsdp_table",
           "fsdp_layer_table", "decomposition_table"]


# ============================================================================ schedule / guide
def schedule_table() -> Table:
    """Choosing an all-to-all schedule: where each shape fits and what it costs."""
    rows = [{"s": "direct", "when": "direct_when", "cost": "direct_cost"},
            {"s": "hier", "when": "hier_when", "cost": "hier_cost"},
            {"s": "v", "when": "v_when", "cost": "v_cost"}]
    labels = {
        "en": {"direct": "direct (point to point)", "hier": "hierarchical / coalesced",
               "v": "variable size (all-to-all-v)",
               "direct_when": "few ranks, or a full-bisection group; balanced, coarse blocks per peer",
               "direct_cost": "every rank injects straight to its peers; fine blocks repeat start-up and "
                              "scheduling, and an overloaded fabric can cap the bisection",
               "hier_when": "multi-GPU nodes with many small remote blocks: pack per remote node, "
                            "exchange the aggregates, scatter locally",
               "hier_cost": "fewer inter-node start-ups and the fast local links do the fan-out, at the "
                            "price of packing, local copies, synchronisation and staging buffers",
               "v_when": "per-destination counts differ, and padding every block to the largest "
                         "would waste much bandwidth",
               "v_cost": "explicit counts and offsets remove the padding; exchanging the counts and the "
                         "irregular transfers add control work, and the hottest receiver still sets "
                         "the finish"},
        "zh": {"direct": "直接交换（点对点）", "hier": "分层 / 合并交换", "v": "变长交换（all-to-all-v）",
               "direct_when": "rank 不多，或组内对分带宽充足；发往每个对端的块大小均衡、颗粒较粗",
               "direct_cost": "每个 rank 自己把数据直接打给各个对端；块一碎，启动和调度开销就一再重复，"
                              "网络过载时对分带宽也会成为上限",
               "hier_when": "节点内有多块 GPU、发往远端的小块很多：先按目标节点打包，节点间交换聚合后的大块，"
                            "再在本地分发",
               "hier_cost": "节点间的启动次数变少，分发交给快速的本地链路；代价是打包、本地拷贝、同步"
                            "和暂存缓冲区",
               "v_when": "发往各目标的数量各不相同，全部补齐到最大值会白白耗掉大量带宽",
               "v_cost": "显式给出数量与偏移，省掉了填充；但先要交换数量，传输也不规则，控制开销随之增加；"
                         "最后何时结束仍由收得最多的那个 rank 决定"},
    }
    return Table(
        key="ch1-a2a-schedules",
        title={"en": "Choosing an all-to-all schedule: shrink the constraint that binds, not the "
                     "number of logical peers",
               "zh": "选择 all-to-all 调度：要削减的是正在起作用的约束，而不是逻辑对端的数目"},
        columns=["s", "when", "cost"],
        headers={"en": ["schedule", "fits when", "overheads it exposes"],
                 "zh": ["调度", "适用场合", "暴露出的开销"]},
        rows=rows, labels=labels)


def selection_table() -> Table:
    """The collective selection guide: parallelism → main collectives → what bounds them."""
    keys = ("dp", "fsdp", "tp", "pp", "sp", "moe", "dlrm")
    prim = {"dp": "all-reduce", "fsdp": "all-gather, reduce-scatter", "tp": "all-reduce, all-gather",
            "pp": "send / recv", "sp": "all-gather, reduce-scatter", "moe": "all-to-all",
            "dlrm": "all-to-all"}
    labels = {
        "en": {"dp": "data parallel", "fsdp": "FSDP / ZeRO-3", "tp": "tensor parallel",
               "pp": "pipeline parallel", "sp": "sequence parallel", "moe": "MoE (expert parallel)",
               "dlrm": "DLRM (recommendation)", "send / recv": "point to point (send / recv)",
               "b_dp": "bandwidth (large gradients)", "b_fsdp": "bandwidth, and many calls",
               "b_tp": "latency (needs NVLink)", "b_pp": "latency (micro-batch hand-off)",
               "b_sp": "bandwidth (activation exchange)",
               "b_moe": "start-up, injection / bisection, or skew",
               "b_dlrm": "granularity, fabric capacity, or skew"},
        "zh": {"dp": "数据并行", "fsdp": "FSDP / ZeRO-3", "tp": "张量并行", "pp": "流水线并行",
               "sp": "序列并行", "moe": "MoE（专家并行）", "dlrm": "DLRM（推荐系统）",
               "send / recv": "点对点（send / recv）",
               "b_dp": "带宽（梯度大）", "b_fsdp": "带宽，且调用频繁", "b_tp": "延迟（离不开 NVLink）",
               "b_pp": "延迟（微批次交接）", "b_sp": "带宽（交换激活）",
               "b_moe": "启动开销、注入 / 对分带宽，或负载倾斜", "b_dlrm": "颗粒度、网络容量，或负载倾斜"},
    }
    rows = [{"par": k, "prim": prim[k], "bound": f"b_{k}"} for k in keys]
    return Table(
        key="ch1-selection",
        title={"en": "Which collective each parallelism uses, and what limits it; pipeline parallelism "
                     "is the only one built on point-to-point messages",
               "zh": "各种并行方式用哪种集合操作、受什么限制；只有流水线并行靠点对点消息而非集合操作"},
        columns=["par", "prim", "bound"],
        headers={"en": ["parallelism", "main collectives", "what bounds it"],
                 "zh": ["并行方式", "主要集合操作", "瓶颈所在"]},
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
    labels = {"en": {"ddp": "DDP, 25 MiB buckets", "grad_op": "FSDP without reshard (SHARD_GRAD_OP)",
                     "full": "FSDP / ZeRO-3, reshard after forward (FULL_SHARD, default)"},
              "zh": {"ddp": "DDP，25 MiB 一桶", "grad_op": "FSDP，前向后不释放（SHARD_GRAD_OP）",
                     "full": "FSDP / ZeRO-3，前向后释放（FULL_SHARD，默认）"}}
    p, L = f["world"], f["n_layers"]
    return Table(
        key="ch1-fsdp",
        title={"en": f"Collectives of one step: {f['params'] / 1e9:g}B parameters, {L} layers, BF16, {p} GPUs",
               "zh": f"一步之内的集合操作：{f['params'] / 1e9:g}B 参数、{L} 层、BF16、{p} 块 GPU"},
        columns=["strategy", "calls", "ag", "rs", "ar", "bytes", "rel", "startup"],
        headers={"en": ["strategy", "collectives", "all-gather", "reduce-scatter", "all-reduce",
                        "sent per GPU", "vs DDP", "start-up per step (ring)"],
                 "zh": ["策略", "集合操作次数", "all-gather", "reduce-scatter", "all-reduce",
                        "每块 GPU 发送", "相对 DDP", "每步启动开销（ring）"]},
        rows=rows, labels=labels,
        formats={"bytes": fmt_bytes, "rel": lambda x: f"{x:g}×", "startup": lambda t: fmt_time(t, 3)},
        notes={"en": [f"Start-up: the latency terms of the ring algorithms with α = {fmt_time(f['link'].alpha)} "
                      f"({f['link'].name}): (N − 1)α = {fmt_time(f['alpha_ring'], 3)} per all-gather or "
                      f"reduce-scatter, 2(N − 1)α per all-reduce; bytes by the same algorithms."],
               "zh": [f"启动开销按 ring 算法的延迟项计，α = {fmt_time(f['link'].alpha)}，链路为 {link_name(f['link'], 'zh')}："
                      f"每次 all-gather 或 reduce-scatter 为 (N − 1)α = {fmt_time(f['alpha_ring'], 3)}，"
                      f"每次 all-reduce 为 2(N − 1)α；字节数也按这些算法计。"]},
        meta=f)


def fsdp_layer_table(numbers: dict | None = None) -> Table:
    """One layer's all-gather at the sizes of :func:`fsdp_numbers`, ring against recursive
    doubling, and what recursive doubling saves."""
    fs = fsdp_numbers() if numbers is None else numbers
    rows = [{"n": r["n"], "ring": r["ring"], "rd": r["rd"], "save": 1 - r["rd"] / r["ring"]} for r in fs["layers"]]
    return Table(
        key="ch1-fsdp-layer",
        title={"en": f"One layer's all-gather on {fs['world']} GPUs ({link_name(fs['link'], 'en')})",
               "zh": f"{fs['world']} 块 GPU 上一层参数的 all-gather（{link_name(fs['link'], 'zh')}）"},
        columns=["n", "ring", "rd", "save"],
        headers={"en": ["Layer", "Ring", "Recursive doubling", "Saved"],
                 "zh": ["一层", "ring", "递归倍增", "省下"]},
        rows=rows, formats={"n": fmt_bytes, "ring": lambda t: fmt_time(t, 3), "rd": lambda t: fmt_time(t, 3),
                            "save": fmt_pct},
    )


def decomposition_table(dec: dict) -> Table:
    """The run of :func:`commbook.book.ch1.primitives.rs_ag_equals_ar`, rank by rank: input,
    reduce-scatter output, all-gather of those blocks, direct all-reduce."""
    text = lambda a: ", ".join(str(int(v)) for v in a)
    rows = [{"rank": d, "input": text(x), "rs": text(rs), "ag": text(ag), "ar": text(ar)}
            for d, (x, rs, ag, ar) in enumerate(zip(dec["inputs"], dec["reduce_scatter"], dec["all_gather"],
                                                    dec["all_reduce"]))]
    return Table(
        key="ch1-rs-ag-ar",
        title={"en": "All-reduce as reduce-scatter then all-gather (simulator, integers)",
               "zh": "all-reduce 拆成 reduce-scatter 加 all-gather（模拟器，整数）"},
        columns=["rank", "input", "rs", "ag", "ar"],
        headers={"en": ["Rank", "Input", "After reduce-scatter", "After all-gather", "Direct all-reduce"],
                 "zh": ["rank", "输入", "reduce-scatter 之后", "再 all-gather 之后", "直接 all-reduce"]},
        rows=rows, formats={"rank": str},
    )
