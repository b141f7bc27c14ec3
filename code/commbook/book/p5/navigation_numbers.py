"""The numbers of P5 §0 (navigation) as typed results for
:func:`commbook.book.glue.glue_fields`: the scripts and their demo tables, and the decode
arithmetic that motivates the lecture (weights against HBM, one decode step at batch 1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...hardware import H100, Chip
from ...llm import LLAMA31_70B, DenseModel
from .inference import decode_run
from .scripts import SCRIPTS

__all__ = ["ScriptNumbers", "script_numbers", "DecodeNumbers", "decode_numbers", "WhyNumbers", "why_numbers",
           "WhyQuestion", "why_question"]


@dataclass(frozen=True)
class ScriptNumbers:
    """The P5 scripts: how many, how many demo tables in all, each script's demo keys, and
    the number of demos of script 03 (the all-reduce algorithms)."""

    scripts: int
    demos: int
    demos_01: str
    demos_02: str
    demos_03: str
    demos_04: str
    demos_05: str
    n03: int


def script_numbers() -> ScriptNumbers:
    """:class:`ScriptNumbers` of :data:`.scripts.SCRIPTS`."""
    of = {s: ", ".join(keys) for s, keys in SCRIPTS.items()}
    return ScriptNumbers(len(SCRIPTS), sum(len(k) for k in SCRIPTS.values()), of["01"], of["02"], of["03"],
                         of["04"], of["05"], len(SCRIPTS["03"]))


@dataclass(frozen=True)
class DecodeNumbers:
    """Decoding ``model`` on ``chip``: its weights against one chip's HBM (at least
    ``min_gpus`` chips hold them), full passes over the weights per second on one chip and
    on ``tp`` chips, and demo 05-1's step at batch ``b1_batch``: compute, the two ring
    all-reduces per layer, and the ring's share of the step."""

    weights_bytes: float
    hbm_bytes: float
    hbm_Bps: float
    reads: float
    tp: int
    reads_tp: float
    min_gpus: int
    b1_batch: int
    b1_compute_s: float
    b1_ring_s: float
    b1_ring_share_frac: float


def decode_numbers(model: DenseModel = LLAMA31_70B, chip: Chip = H100, tp: int = 8) -> DecodeNumbers:
    """:class:`DecodeNumbers` (BF16 weights)."""
    w = model.weight_bytes()
    reads = chip.hbm_bandwidth / w
    b1 = decode_run(model, batches=(1,), tp=tp, chip=chip).at(batch=1)
    return DecodeNumbers(w, chip.hbm_bytes, chip.hbm_bandwidth, reads, tp, reads * tp, math.ceil(w / chip.hbm_bytes),
                         b1.batch, b1.compute_s, b1.ring_s, b1.ring_frac)


@dataclass(frozen=True)
class WhyNumbers:
    """§1's case for communication, on ``tp`` chips: capacity (the weights, one chip's HBM,
    one chip's share and what is left); bandwidth (one decode step at ``batch`` on 1 and on
    ``tp`` chips, at the ``context`` length, and the speed-up); compute (the chip's
    FLOP-per-byte ridge, decode's FLOPs per weight byte, a prefill of ``prompt`` tokens on
    1 and ``tp`` chips); and the three kinds of traffic: the tensor-parallel all-reduces
    (per step, per layer, message size), the MoE all-to-alls of ``moe`` (top-k of experts,
    a token's bytes, its MoE layers, two all-to-alls per layer) and the KV cache (per token,
    for ``kv_prompt`` tokens)."""

    weights_bytes: float
    hbm_bytes: float
    tp: int
    per_gpu_bytes: float
    left_bytes: float
    batch: int
    context: int
    dec_1_s: float
    dec_tp_s: float
    dec_speedup: float
    ridge: float
    flop_per_byte: float
    prompt: int
    pf_1_s: float
    pf_tp_s: float
    ar_per_step: int
    layers: int
    ar_per_layer: int
    ar_msg_bytes: float
    d_model: int
    moe_k: int
    moe_e: int
    moe_token_bytes: float
    moe_layers: int
    a2a_per_layer: int
    kv_token_bytes: float
    kv_prompt: int
    kv_total_bytes: float


def why_numbers(model: DenseModel = LLAMA31_70B, moe=None, chip: Chip = H100, tp: int = 8, batch: int = 1,
                prompt: int = 4096, kv_prompt: int = 8192) -> WhyNumbers:
    """:class:`WhyNumbers` (``moe``: DeepSeek-V3 unless given; BF16 everywhere)."""
    from ... import llm

    moe = llm.DEEPSEEK_V3 if moe is None else moe
    w = model.weight_bytes()
    one, many = llm.decode_step(model, batch, tp=1), llm.decode_step(model, batch, tp=tp)
    ar = llm.tp_allreduces_per_step(model)
    return WhyNumbers(w, chip.hbm_bytes, tp, w / tp, chip.hbm_bytes - w / tp, batch, llm.DEFAULT_CONTEXT, one.time,
                      many.time, one.time / many.time, chip.bf16_flops / chip.hbm_bandwidth,
                      2 * model.n_params_compute / w, prompt, llm.prefill_compute(model, prompt, tp=1),
                      llm.prefill_compute(model, prompt, tp=tp), ar, model.n_layers, ar // model.n_layers,
                      llm.tp_message_bytes(model, batch), model.d_model, moe.top_k, moe.n_experts, moe.d_model * 2,
                      moe.n_moe_layers, 2, model.kv_bytes_per_token(), kv_prompt, llm.kv_bytes(model, kv_prompt))


@dataclass(frozen=True)
class WhyQuestion:
    """§1's question: a decode step on ``wide`` chips, and the first batch whose
    tensor-parallel message reaches the link's half-bandwidth point."""

    wide: int
    dec_wide_s: float
    nhalf_bytes: float
    b_half: int
    msg_half_bytes: float


def why_question(model: DenseModel, link, wide: int, batch: int = 1) -> WhyQuestion:
    """:class:`WhyQuestion` for ``model`` over ``link``."""
    from ... import llm

    b = math.ceil(link.n_half / llm.tp_message_bytes(model, 1))
    return WhyQuestion(wide, llm.decode_step(model, batch, tp=wide).time, link.n_half, b, llm.tp_message_bytes(model, b))
