r"""Chapter §1.6, gradient compression: the numbers and tables of the page
``chapters/{zh,en}/ch1/06-compression.md`` and of the exercises of Checkpoint 1.4.

* quantization: the payloads of FP32, FP16, INT8 and 1-bit on one gradient
  (:func:`quant_table`), the block-wise ratios 4b/(b + 4) (:func:`block_table`) and the
  error of per-tensor against per-block scales on heavy-tailed gradients
  (:func:`heavy_tail_table`);
* sparsification: top-k sizes with 32- and 16-bit indices (:func:`sparse_table`);
* error feedback: Tables 3 and 4 cell for cell from the exact trace (:func:`table3`,
  :func:`table4`);
* the chapter's table of methods with the ratio each encoding really reaches:
  :func:`.compression_effects.methods_table`.

Napkin math 1.7, the time-to-train decisions and 1-bit Adam's ratio come straight from
:mod:`commbook.compression`; the chapter's givens are here (:data:`CHECKPOINT_1_4`,
:data:`DECISION`).  The page's cells read the numbers they quote (INT8's codes, Example
1.2's traces, ...) from these tables and from :mod:`commbook.compression` themselves.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...compression import FP16, Identity, Int8, Sign, TopK, decimal_text, ef_trace, sparse_ratio
from ...units import fmt_bytes, fmt_pct, fmt_ratio
from ..tables import Table
from ..text import texts

__all__ = ["SETTING", "QUANT_D", "BLOCK_D", "quant_table", "block_table", "heavy_tail_table", "SPARSE_CASES",
           "sparse_table", "EF_INPUT", "table3", "table4",
           "CHECKPOINT_1_4", "DECISION", "CHAPTER_DECISION", "CHAPTER_ONEBIT"]

T = texts("ch1")
K = "compression_numbers."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


SETTING = {"wan_gap": (10, 100), "reduction": (4, 1000)}
"""The chapter's opening ranges: WAN links 10–100× slower than InfiniBand, and compression
that cuts the traffic 4–1000× (INT8's 4× to top-0.1 %'s nominal 1000×)."""

QUANT_D = 10**6
"""Gradient size of the quantization and method tables."""

BLOCK_D = 2**20
"""Gradient size of the block table: a multiple of every block size in it, so that d/b is exact."""


def _g(d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(d)


# ============================================================================ quantization
def quant_table(d: int = QUANT_D) -> Table:
    """One gradient of ``d`` elements through FP32, FP16, INT8 (one scale), INT8 with blocks
    of 128 and 1-bit sign (one scale): bytes of values, of scales, total and the ratio to
    FP32, all read from the payloads; ``stated`` is the chapter's ratio (None: not given)."""
    g = _g(d)
    rows = []
    for key, op, stated in (("fp32", Identity(), 1), ("fp16", FP16(), 2), ("int8", Int8(), 4),
                            ("int8b", Int8(128), None), ("sign", Sign(), 32)):
        p = op.encode(g)
        br = p.breakdown
        values = br.get("values", br.get("bits", 0))
        rows.append({"op": key, "values": values, "scales": br.get("scales", 0), "total": p.nbytes,
                     "ratio": p.ratio, "stated": stated})
    sign = rows[-1]
    return Table(
        key="ch1-quant",
        title=_tx("one_gradient_of_fp32", d=d),
        columns=["op", "values", "scales", "total", "ratio", "stated"],
        headers=_txs("format", "values", "scales", "on_the_wire", "ratio_to_fp32", "nominal"),
        rows=rows,
        formats={"values": fmt_bytes, "scales": lambda b: f"{b:,} B", "total": fmt_bytes,
                 "ratio": lambda r: fmt_ratio(r, 6), "stated": fmt_ratio},
        labels=T.labels(K + "labels."),
        notes=_txs("sizes_are_the_bytes", ratio=fmt_ratio(sign['ratio'], 6)),
        meta={"d": d})


def block_table(blocks=(32, 64, 128, 256, 512), d: int = BLOCK_D) -> Table:
    """INT8 with one FP32 scale per block of b: bytes per element and the ratio read from a
    payload, beside the closed form 4b/(b + 4)."""
    g = _g(d)
    rows = []
    for b in blocks:
        p = Int8(b).encode(g)
        rows.append({"b": b, "per_elem": p.nbytes / d, "ratio": p.ratio, "closed": 4 * b / (b + 4)})
    return Table(
        key="ch1-blocks",
        title=_tx("int8_with_a_scale"),
        columns=["b", "per_elem", "ratio", "closed"],
        headers=_txs("block_b", "bytes_per_element", "ratio_payload", "4b_b_4"),
        rows=rows,
        formats={"per_elem": lambda x: f"{x:.5g}", "ratio": (lambda v: fmt_ratio(v, 4)), "closed": (lambda v: fmt_ratio(v, 4))},
        notes=_txs("payload_of_a_element", d=d),
        meta={"d": d})


def heavy_tail_table(block: int = 128, d: int = 2**16, nus=(None, 8, 5, 4, 3), seed: int = 0) -> Table:
    """RMS quantization error of INT8 with one scale against one scale per ``block``, on
    gradients drawn from a normal law (``None``) and from Student's t with ν degrees of
    freedom (the smaller ν, the heavier the tails); also max|g|/σ and the worst error."""
    rows = []
    for nu in nus:
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(d) if nu is None else rng.standard_t(nu, d)
        e_t, e_b = Int8()(g) - g, Int8(block)(g) - g
        rms_t, rms_b = float(np.sqrt(np.mean(e_t**2))), float(np.sqrt(np.mean(e_b**2)))
        rows.append({"dist": "normal" if nu is None else f"t{nu}", "nu": nu,
                     "peak": float(np.abs(g).max() / g.std()), "rms_tensor": rms_t, "rms_block": rms_b,
                     "gain": rms_t / rms_b, "max_tensor": float(np.abs(e_t).max()),
                     "max_block": float(np.abs(e_b).max())})
    sci = lambda x: f"{x:.3g}"
    return Table(
        key="ch1-heavy",
        title=_tx("int8_error_one_scale", block=block),
        columns=["dist", "peak", "rms_tensor", "rms_block", "gain", "max_tensor", "max_block"],
        headers=_txs("ht_values", "ht_peak", "ht_rms_one", "ht_rms_block", "ht_cut", "ht_worst_one", "ht_worst_block",
                     block=block),
        rows=rows,
        formats={"peak": lambda x: f"{x:.3g}", "rms_tensor": sci, "rms_block": sci,
                 "gain": fmt_ratio, "max_tensor": sci, "max_block": sci},
        labels={lang: {"normal": T.get(K + "ht_normal", lang), **{f"t{n}": T.get(K + "ht_t", lang, nu=n) for n in nus if n}}
                for lang in ("en", "zh")},
        notes=_txs("values_per_gradient_seed", d=d, seed=seed),
        meta={"block": block, "d": d})


# ============================================================================ sparsification
SPARSE_CASES = ((10**6, 0.001), (65_000, 0.001), (10**6, 0.01), (65_000, 0.01))
"""(d, kept share) of the sparse table: a large gradient (32-bit indices) and one small enough
for 16-bit indices (d ≤ 65,536), each at 0.1 % and 1 %."""


def sparse_table(cases=SPARSE_CASES) -> Table:
    """Top-k payloads: d, K, bytes of values and of indices (read from the payload), the
    ratio, the nominal d/K (values alone) and the chapter's d/(2K) (32-bit indices)."""
    rows = []
    for d, share in cases:
        p = TopK(share).encode(_g(d))
        br, k = p.breakdown, int(p.arrays["values"].size)
        rows.append({"d": d, "share": share, "k": k, "values": br["values"], "indices": br["indices"],
                     "index_bits": 8 * p.arrays["indices"].itemsize, "ratio": p.ratio, "nominal": d / k,
                     "int32": sparse_ratio(d, k)})
    return Table(
        key="ch1-sparse",
        title=_tx("top_k_on_the"),
        columns=["d", "share", "k", "values", "indices", "index_bits", "ratio", "nominal", "int32"],
        headers=_txs("d", "kept", "k", "values_2", "indices", "index_bits", "ratio", "d_k_values_only", "d_2k_32_bit"),
        rows=rows,
        formats={"d": lambda x: f"{x:,}", "share": fmt_pct, "values": fmt_bytes,
                 "indices": fmt_bytes, "ratio": fmt_ratio, "nominal": fmt_ratio, "int32": fmt_ratio},
        notes=_txs("values_are_fp32_indices"))


# ============================================================================ error feedback
EF_INPUT = ("0.4", "0.3", "0.2", "0.4", "0.3")
"""The gradients of Tables 3 and 4 (as printed); the compressor sends 1 when its input ≥ 0.5."""

_DEC = decimal_text


def table3(grads=EF_INPUT) -> Table:
    """Table 3: the trace without error feedback — g_t, the running true sum, what is sent
    and the running sent sum (the chapter leaves the last two out: they are all 0)."""
    return Table(
        key="ch1-table3",
        title=_tx("table_3_compression_without"),
        columns=["step", "g", "sum_g", "v", "sum_v"],
        headers=_txs("step", "true_gradient_g_t", "running_true_sum", "sent_v_t", "running_sent_sum"),
        rows=ef_trace(list(grads), feedback=False), formats={k: _DEC for k in ("g", "sum_g", "v", "sum_v")},
        notes=_txs("the_compressor_sends_one"))


def table4(grads=EF_INPUT) -> Table:
    """Table 4: the same inputs with error feedback, every cell exact (Fraction)."""
    return Table(
        key="ch1-table4",
        title=_tx("table_4_the_same"),
        columns=["step", "g", "e", "acc", "v", "e_next", "sum_v", "sum_g"],
        headers=_txs("step_2", "g", "e", "g_e", "v", "e_g_e_v", "running_v", "running_g"),
        rows=ef_trace(list(grads)), formats={k: _DEC for k in ("g", "e", "acc", "v", "e_next", "sum_v", "sum_g")},
        notes=_txs("in_every_row_v"))


# ============================================================================ checkpoint and decisions
CHECKPOINT_1_4 = {"backward": 0.8, "allreduce": (0.2, 2.0), "ratio": 4, "g": Fraction(3, 10),
                  "threshold": Fraction(1, 2)}
"""Checkpoint 1.4's givens: an 800 ms backward pass, all-reduce of 200 or 2000 ms, 4×
compression; the error accumulator with constant g = 0.3 and threshold 0.5."""

DECISION = {"steps": 100_000, "t_compute": 0.3, "t_comm": (0.2, 0.03), "ratio": 4, "extra_steps": 0.10}
"""The time-to-train example: 100,000 steps of 300 ms compute and 200 ms (then 30 ms) of
communication; INT8 with error feedback (4×) needs 10 % more steps."""

CHAPTER_DECISION = {0.2: (50_000, 38_500, -0.23), 0.03: (33_000, 33_825, 0.025)}
"""The chapter's results by communication time: baseline and compressed time to train (s) and
the relative change as printed (−23 %, +2.5 %)."""

CHAPTER_ONEBIT = {"comm": 5, "bert": 3.3, "squad": 2.9, "gpus": 256}
"""What Tang et al. (2021) report for 1-bit Adam: up to 5× less communication, up to 3.3×
throughput in BERT-Large pre-training and 2.9× in SQuAD fine-tuning, on up to 256 GPUs."""
