"""P5 §7, communication in LLM inference: the numbers its prose quotes, one typed result per
section, each field named with its unit (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``;
counts are ints), glued whole by :func:`commbook.book.glue.glue_fields`.

Each builder reads the section's table of :mod:`.inference` (which the script prints) and
:mod:`commbook.llm`, and derives here what the page used to work out by hand: the rows it
quotes, ratios, the rounds of each algorithm, the batch at which latency stops ruling.
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import llm
from ...collectives import all_to_all, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import H100, IB_NDR, NVLINK4, NVLINK_H800, Link
from ...llm import DEEPSEEK_V3, DenseModel, MoEModel
from ...topology import TwoLevel
from ...units import fmt_number
from .common import Run
from .inference import ORIGINAL_05_5, decode_run, demo_05_4, kv_run, prefill_run

__all__ = ["ORIGINAL", "latency_bound_until", "Decode", "decode_numbers", "Prefill", "prefill_numbers", "Moe",
           "moe_numbers", "Kv", "kv_numbers"]

ORIGINAL = {"prefill_last": 0.45, "one_nic": ORIGINAL_05_5["ratio"]}
"""Numbers of the original notes that differ from the computed ones (shown in the notes)."""


def latency_bound_until(model: DenseModel, algorithm: str, tp: int, link: Link = NVLINK4,
                        batches=range(1, 1 << 14)) -> tuple[int, float]:
    """The first batch (and its message, bytes) at which the bandwidth term of one TP
    all-reduce reaches its latency term (:func:`commbook.collectives.t_formula`)."""
    for b in batches:
        n = llm.tp_message_bytes(model, b)
        bandwidth = t_formula(algorithm, tp, n, 0.0, link.beta)
        if bandwidth >= t_formula(algorithm, tp, n, link.alpha, link.beta) - bandwidth:
            return b, n
    raise ValueError(f"batches: {algorithm} is latency-bound over the whole range")


# ============================================================================ §7.1 decode
@dataclass(frozen=True)
class Decode:
    """§7.1: Table 05-1's rows at B = 1, 64 and its largest batch, the rounds, the start-up
    latency alone, and where each algorithm stops being latency-bound."""
    allreduces: int                # per decode step, 2 per layer
    ring_rounds: int
    rd_rounds: int
    alpha_s: float
    n_half_bytes: float
    slow_alpha_s: float
    msg_min_bytes: float
    msg_max_bytes: float
    batch_max: int
    chunk_max_bytes: float
    alpha_only_s: float            # the ring's start-ups of a step
    alpha_only_frac: float         # of the ring's time at B = 1
    alpha_vs_step_frac: float      # of the step at B = 1
    ring1_s: float
    ring1_frac: float              # share of the step
    rd1_s: float
    rd1_frac: float
    rd1_slow_s: float
    rd1_slow_frac: float
    step1_s: float
    rd_vs_ring1_frac: float
    rd_vs_ring64_frac: float
    rd_vs_ring_max_frac: float
    bstar_ring: int                # first bandwidth-bound batch of the ring
    bstar_ring_bytes: float
    bstar_rd: int
    bstar_rd_bytes: float
    ring_nstar_bytes: float        # p·α·β


def decode_numbers(run: Run | None = None, batch: int = 64) -> Decode:
    """From the runs of table 05-1 (:func:`.inference.decode_run`, by default its own
    setting), at B = 1, ``batch`` and the largest batch."""
    run = decode_run() if run is None else run
    model, tp, _, link, slow_alpha = run.setting
    r1, rb, rmax = run.at(batch=1), run.at(batch=batch), run.rows[-1]
    n_ar = llm.tp_allreduces_per_step(model)
    ring_rounds = 2 * (tp - 1)
    alpha_only = n_ar * ring_rounds * link.alpha
    (b_ring, n_ring), (b_rd, n_rd) = (latency_bound_until(model, a, tp, link) for a in ("ring", "rd"))
    return Decode(allreduces=n_ar, ring_rounds=ring_rounds, rd_rounds=tp.bit_length() - 1, alpha_s=link.alpha,
                  n_half_bytes=link.n_half, slow_alpha_s=slow_alpha, msg_min_bytes=r1.msg_bytes,
                  msg_max_bytes=rmax.msg_bytes, batch_max=rmax.batch, chunk_max_bytes=rmax.msg_bytes / tp,
                  alpha_only_s=alpha_only, alpha_only_frac=alpha_only / r1.ring_s,
                  alpha_vs_step_frac=alpha_only / r1.compute_s, ring1_s=r1.ring_s, ring1_frac=r1.ring_frac,
                  rd1_s=r1.rd_s, rd1_frac=r1.rd_frac, rd1_slow_s=r1.rd_slow_s,
                  rd1_slow_frac=r1.rd_slow_frac, step1_s=r1.compute_s,
                  rd_vs_ring1_frac=r1.rd_s / r1.ring_s, rd_vs_ring64_frac=rb.rd_s / rb.ring_s,
                  rd_vs_ring_max_frac=rmax.rd_s / rmax.ring_s, bstar_ring=b_ring, bstar_ring_bytes=n_ring,
                  bstar_rd=b_rd, bstar_rd_bytes=n_rd, ring_nstar_bytes=tp * link.n_half)


# ============================================================================ §7.2 prefill
@dataclass(frozen=True)
class Prefill:
    """§7.2: Table 05-2's ends, the per-token network roofline, and the original's figure."""
    tok_bytes: float               # sent per GPU per prompt token
    tok_flops: str
    tok_comm_s: float
    tok_lin_s: float
    tok_ratio_frac: float
    first_tokens: int
    last_tokens: int
    first_frac: float              # comm / compute
    last_frac: float
    first_msg_bytes: float
    last_msg_bytes: float
    hidden_from: int               # first prompt whose comm / compute < 1
    original_last_frac: float
    causal_tokens: int
    causal_frac: float


def prefill_numbers(run: Run | None = None) -> Prefill:
    """From the runs of table 05-2 (:func:`.inference.prefill_run`, by default its own
    setting): its first and last prompt and the per-token network roofline."""
    run = prefill_run() if run is None else run
    model, tp, _, link = run.setting
    n_ar = llm.tp_allreduces_per_step(model)
    tok_bytes = n_ar * 2 * (tp - 1) / tp * llm.tp_message_bytes(model, 1)
    flops = 2 * model.n_params_compute
    comm, lin = tok_bytes / link.beta, flops / (tp * H100.bf16_flops)
    first, last = run.rows[0], run.rows[-1]
    causal = 2 * last.tokens
    return Prefill(tok_bytes=tok_bytes, tok_flops=f"{fmt_number(flops / 1e9, 3)} GFLOP", tok_comm_s=comm,
                   tok_lin_s=lin, tok_ratio_frac=comm / lin, first_tokens=first.tokens,
                   last_tokens=last.tokens, first_frac=first.ratio_frac, last_frac=last.ratio_frac,
                   first_msg_bytes=first.msg_bytes, last_msg_bytes=last.msg_bytes,
                   hidden_from=next(r.tokens for r in run.rows if r.ratio_frac < 1),
                   original_last_frac=ORIGINAL["prefill_last"], causal_tokens=causal,
                   causal_frac=llm.tp_comm_time(model, causal, tp)
                   / llm.prefill_compute(model, causal, tp=tp, causal=True))


# ============================================================================ §7.4 MoE all-to-all
@dataclass(frozen=True)
class Moe:
    """§7.4: the model, Table 05-4's rows, the bandwidth floors and rounds of both schedules,
    and DeepSeek-V3's node cap."""
    d_model: int
    experts: int
    top_k: int
    layers: int                    # MoE layers
    all_layers: int
    tokens: int                    # per GPU
    ep_small: int
    ep_big: int
    nodes: int
    b8_bytes: float
    b64_bytes: float
    t8_s: float
    direct_s: float
    hier_s: float
    hier_fp8_s: float
    direct_x: float                # over EP = 8
    hier_x: float
    floor_nv_s: float
    floor_ib_s: float
    floor_x: float
    rounds_direct: int
    rounds_hier: int
    step8_s: float
    step_direct_s: float
    step_hier_s: float
    step_hier_fp8_s: float
    max_nodes: int
    cross_capped_bytes: float
    cross_uncapped_bytes: float
    cross_frac: float
    h800_Bps: float
    h800_x: float
    ib_Bps: float


def moe_numbers(t4=None, model: MoEModel = DEEPSEEK_V3, tokens: int = 256, g: int = 8,
                intra: Link = NVLINK4, inter: Link = IB_NDR) -> Moe:
    """From Table 05-4 (:func:`.inference.demo_05_4`) and the simulator's rounds."""
    t4 = demo_05_4(model, tokens_per_gpu=tokens) if t4 is None else t4
    e8 = t4.find(ep=g, dtype="BF16")
    ep = max(t4.column("ep"))
    row = lambda algo, dtype="BF16": t4.find(where=f"{inter.name}, {algo}", dtype=dtype)
    direct, hier, hier_f = row("direct"), row("hierarchical"), row("hierarchical", "FP8")
    held = tokens * model.top_k * model.d_model * 2
    floor_nv = held * (g - 1) / g / intra.beta                 # EP = g: everything over NVLink
    floor_ib = held * (ep - g) / ep / inter.beta               # off-node bytes over one NIC
    two_level = VirtualCluster(TwoLevel(ep // g, g, intra, inter))
    rounds = {a: all_to_all(two_level, nbytes=held, algorithm=a).rounds for a in ("direct", "hierarchical")}
    capped = llm.moe_cross_node_bytes(model, 1, 2, max_nodes=model.max_nodes_per_token)
    uncapped = llm.moe_cross_node_bytes(model, 1, 2)
    return Moe(d_model=model.d_model, experts=model.n_experts, top_k=model.top_k, layers=model.n_moe_layers,
               all_layers=model.n_layers, tokens=tokens, ep_small=g, ep_big=ep, nodes=ep // g,
               b8_bytes=e8["bytes"], b64_bytes=direct["bytes"], t8_s=e8["time"], direct_s=direct["time"],
               hier_s=hier["time"], hier_fp8_s=hier_f["time"], direct_x=direct["vs_intra"],
               hier_x=hier["vs_intra"], floor_nv_s=floor_nv, floor_ib_s=floor_ib, floor_x=floor_ib / floor_nv,
               rounds_direct=rounds["direct"], rounds_hier=rounds["hierarchical"], step8_s=e8["step"],
               step_direct_s=direct["step"], step_hier_s=hier["step"], step_hier_fp8_s=hier_f["step"],
               max_nodes=model.max_nodes_per_token, cross_capped_bytes=capped, cross_uncapped_bytes=uncapped,
               cross_frac=capped / uncapped, h800_Bps=NVLINK_H800.beta, h800_x=NVLINK_H800.beta / inter.beta,
               ib_Bps=inter.beta)


# ============================================================================ §7.5 KV transfer
@dataclass(frozen=True)
class Kv:
    """§7.5: Table 05-5's shares and its 8K-token row, one NIC against all, layer-by-layer
    sending, and the KV per token of other choices."""
    tok_bytes: float
    nics: int
    nics_Bps: float
    short_min: int                 # prompts up to 8K tokens
    short_max: int
    share8_min_frac: float
    share8_max_frac: float
    longest: int
    share8_longest_frac: float
    share1_min_frac: float
    share1_max_frac: float
    kv_8k_bytes: float
    t8_8k_s: float
    t1_8k_s: float
    pre_8k_s: float
    one_nic_x: float               # the table's largest 1-NIC / all-NIC ratio
    original_x: float
    nics_x: float
    layerwise_8k_s: float
    mha_heads: int
    mha_x: float
    mha_tok_bytes: float
    fp8_tok_bytes: float


def kv_numbers(run: Run | None = None, prompt: int = 8192) -> Kv:
    """From the runs of table 05-5 (:func:`.inference.kv_run`, by default its own setting):
    the prompts up to ``prompt``, that prompt and the longest."""
    run = kv_run() if run is None else run
    model, _, link, nics = run.setting
    short = [r for r in run.rows if r.tokens <= prompt]
    r8k, longest = run.at(tokens=prompt), run.rows[-1]
    mha = llm.LLAMA31_70B_MHA
    return Kv(tok_bytes=model.kv_bytes_per_token(), nics=nics, nics_Bps=nics * link.beta,
              short_min=short[0].tokens, short_max=short[-1].tokens,
              share8_min_frac=min(r.share8_frac for r in short), share8_max_frac=max(r.share8_frac for r in short),
              longest=longest.tokens, share8_longest_frac=longest.share8_frac,
              share1_min_frac=min(r.share1_frac for r in run.rows), share1_max_frac=max(r.share1_frac for r in run.rows),
              kv_8k_bytes=r8k.kv_bytes, t8_8k_s=r8k.t8_s, t1_8k_s=r8k.t1_s, pre_8k_s=r8k.prefill_s,
              one_nic_x=max(r.ratio_x for r in run.rows), original_x=ORIGINAL["one_nic"], nics_x=nics,
              layerwise_8k_s=llm.kv_transfer_time(model, prompt, nics, link, layerwise=True),
              mha_heads=mha.n_kv_heads, mha_x=mha.kv_bytes_per_token() / model.kv_bytes_per_token(),
              mha_tok_bytes=mha.kv_bytes_per_token(), fp8_tok_bytes=model.kv_bytes_per_token(1))
