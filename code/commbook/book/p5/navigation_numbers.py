"""The numbers of P5 §0 (navigation) as typed results for
:func:`commbook.book.glue.glue_fields`: the scripts and their demo tables, and the decode
arithmetic that motivates the lecture (weights against HBM, one decode step at batch 1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...hardware import H100, Chip
from ...llm import LLAMA31_70B, DenseModel
from .inference import demo_05_1
from .scripts import SCRIPTS

__all__ = ["ScriptNumbers", "script_numbers", "DecodeNumbers", "decode_numbers"]


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
    b1 = demo_05_1(model, batches=(1,), tp=tp, chip=chip).find(batch=1)
    return DecodeNumbers(w, chip.hbm_bytes, chip.hbm_bandwidth, reads, tp, reads * tp, math.ceil(w / chip.hbm_bytes),
                         b1["batch"], b1["compute"], b1["ring"], b1["ring_share"])
