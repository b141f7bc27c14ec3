"""The chapter's stated inputs: the numbers its boxes, tables and figures start from.

These are chapter values, not library values, so they live in the book layer; the core and
the workloads take them as arguments (``tests/test_layers.py`` keeps names such as
``NM_1_4``, ``CHAPTER_*``, ``FIGURE3_*`` and ``SINGLE_NODE`` out of them).  The function
here applies the compression operators to the chapter's table.

>>> NM_1_4.tokens, NM_1_4.bytes_per_token
(4096, 4096)
"""
from __future__ import annotations

from ...checks import as_value_error, check_int
from ...compression.operators import FP16, Compressor, Int8, Sign, TopK
from ...moe import MoEConfig
from ...units import GB

__all__ = ["NM_1_4", "NM17", "CHAPTER_COMPRESSION_TABLE", "compression_table",
           "CHAPTER_ENERGY_ESTIMATE", "FIGURE3_CLAIMED_RATIO", "SINGLE_NODE"]

# ---------------------------------------------------------------- §1.3, Napkin Math 1.4
NM_1_4 = MoEConfig(tokens_per_rank=512, ranks=8, experts=64, top_k=1, d_model=2048, bytes_per_value=2)
"""Napkin Math 1.4: 4,096 tokens over 8 GPUs, 64 experts (8 per GPU), top-1, BF16 × 2,048."""

# ---------------------------------------------------------------- §1.6, Napkin Math 1.7
NM17 = {"t_comm": 40e-3, "nominal_ratio": 32, "effective_ratio": 8, "overhead": 2e-3,
        "t_comm_nvlink": 1e-3}
"""Napkin Math 1.7's inputs: a 40 ms gradient sync, 1-bit Adam (32× nominal, 8×
effective after scales, optimizer-state coordination and protocol), 2 ms of
compression overhead; on NVLink the sync takes 1 ms."""


CHAPTER_COMPRESSION_TABLE = (
    ("FP16", 2, "negligible"), ("INT8 + EF", 4, "~5-10% slower"),
    ("Top-k (1%) + EF", 100, "~10-20% slower"), ("1-bit + EF", 32, "~20-30% slower"))
"""The chapter's table of gradient-compression methods: method, stated ratio, convergence impact."""


def compression_table(d: int = 10**6) -> list[tuple[str, float, float, Compressor]]:
    """Each row of the chapter's table with the ratio its operator actually reaches on a
    d-element gradient (values, indices and scales counted): (method, chapter's ratio,
    encoded ratio, operator).  Top-1 % gives 50× with FP32 values and INT32 indices, not
    the table's 100× (inventory T-l, flag F19)."""
    d, ops = as_value_error(check_int, d, "d", lo=1), (FP16(), Int8(), TopK(0.01), Sign())
    return [(name, float(r), op.ratio(d), op) for (name, r, _), op in zip(CHAPTER_COMPRESSION_TABLE, ops)]


# ---------------------------------------------------------------- §1.1, Figures 1 and 3
CHAPTER_ENERGY_ESTIMATE = {"gpus": 10_000, "nbytes": 1 * GB, "pj_per_bit": 30.0, "factor": 2.0,
                           "stated_joules": 4.8e3}
"""The chapter's estimate after Figure 1: 10,000 GPUs, 1 GB each, 30 pJ/bit, factor 2,
"≈ 4.8 kJ per all-reduce" (inventory C.2, flag F2)."""

FIGURE3_CLAIMED_RATIO = 10.0
"""Chapter Figure 3's claim: intra-node bandwidth is "roughly an order of magnitude" above
inter-node throughout 2012–2024."""

# ---------------------------------------------------------------- §1.8, the single-node check
SINGLE_NODE = {"params": 70e9, "bytes_per_value": 2, "gpus": 8, "step_budget": 2.1, "gpu_memory": 80e9}
"""The chapter's inputs to :func:`commbook.overlap.limits.single_node_check`: 70B
parameters, BF16 gradients (140 GB), 8 GPUs, a 2.1 s step (unexplained in the chapter),
and 80 GB GPUs (H100) for the memory check."""
