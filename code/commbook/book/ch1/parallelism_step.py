r"""Chapter "Collective communication", §1.1: the model behind Figure 2 (:class:`StepModel`,
:func:`step_breakdown`, :func:`first_exposed`), the chapter's illustrative shares
(:data:`ILLUSTRATIVE_SHARES`) and the numbers the page reads from them (:func:`fig2_facts`).

The Figure 2 model
------------------
A 70B dense model (80 layers, BF16 gradients: 140 GB), pure data parallelism, the **ring
all-reduce NCCL runs** per layer (one channel per NIC, PXN), and layer-wise overlap: layer ℓ's
all-reduce starts as soon as its gradient exists and the all-reduces run one after the
other on one communication stream (the chapter's Figure 4 in §1.8).

* Compute per step: ``6 · params · tokens`` FLOP (2 forward + 4 backward per parameter
  and token, Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1), at
  ``mfu`` = 40 % of the H100's dense BF16 peak (Llama 3 reports 38–43 % BF16 MFU on up to
  16K H100s: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 4).  Backward is 2/3
  of it.
* Batch: a **fixed global batch** of 1,024 sequences × 4,096 tokens = 4M tokens per step
  (Llama 2, Touvron et al. 2023, §2.2: "a global batch-size of 4M tokens"), divided over
  the GPUs (strong scaling).  ``tokens_per_gpu`` switches to a fixed per-GPU batch
  (weak scaling) instead.
* Links: up to one node (8 GPUs) the ring runs on NVLink 4 (450 GB/s one way, α 1.5 µs:
  ``NVLINK4_CHAPTER``); beyond, on ``TwoLevel(gpus/8, 8, pxn=True)`` with one NIC per GPU
  (InfiniBand NDR, 50 GB/s, α = 2 µs: ``IB_NDR_CHAPTER``), NCCL's ring runs one channel
  per NIC: each of its 2(p-1) rounds waits for its inter-node hop, a chunk of n/(8p) per
  NIC (:func:`commbook.collectives.channels.ring_time_two_level`; the virtual cluster gives
  the same time).  ``algorithm="flat"`` (:meth:`StepModel.single_ring`) is the single
  ring of the chapter's setting, one NIC per node carrying the whole chunk n/p.
* With L layers, each all-reduce taking t = T_ar/L, and backward T_bwd producing one layer
  every T_bwd/L, the communication stream finishes max(T_bwd + t, T_bwd/L + T_ar) after
  backward starts.  What sticks out past backward splits into the **stall** t (the last
  layer's all-reduce: nothing is left to hide it) and **exposed communication**
  max(0, T_ar − T_bwd)·(L−1)/L.  Step = compute + exposed communication + stall.
* ``algorithm="hierarchical"`` (:meth:`StepModel.hierarchical`) prices each layer with the
  hierarchical all-reduce of §1.5 instead, for comparison.
* Why NCCL's ring: NCCL's topology search gives each new ring channel the next NIC
  (src/graph/search.cc:677 of NCCL v2.29.2-1) and every ring enters and leaves a node
  through a NIC (search.cc:762).
* Memory is ignored: a 70B model does not fit on one GPU, and real runs combine data
  parallelism with tensor, pipeline or sharded data parallelism, which changes the
  traffic.  The model answers one question only: how the ring's time compares with the
  compute it has to hide behind.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from ...checks import check_p
from ...collectives import t_allreduce_hierarchical, t_formula
from ...collectives.channels import ring_time_two_level
from ...hardware import H100, IB_NDR_CHAPTER, NVLINK4_CHAPTER, Chip, Link
from ...topology import TwoLevel
from ...units import GB, fmt_bytes, fmt_time
from .parallelism_numbers import BF16_BYTES, PARAMS_70B, billions, gradient_bytes

__all__ = ["LAYERS_70B", "LLAMA3_MFU", "ALGORITHMS", "StepModel", "FIG2_MODEL", "FIG2_SEQUENCES", "FIG2_SEQ_LEN",
           "StepBreakdown", "step_breakdown", "first_exposed", "FIG2_SIZES", "ILLUSTRATIVE_SHARES",
           "ILLUSTRATIVE_TEXT_COMM_PLUS_STALL", "ILLUSTRATIVE_NVLINK_BIDIR", "Fig2", "fig2_facts"]

LAYERS_70B = 80
"""Transformer layers of a 70B dense model (Llama 2 70B: Touvron et al. 2023, Table 1 /
model card: 80 layers)."""
LLAMA3_MFU = {"range": (0.38, 0.43), "gpus": 16384}
"""BF16 MFU that Llama 3 reports for its pre-training, on up to 16K H100s (Dubey et al.
2024, "The Llama 3 Herd of Models", Table 4): the basis of Figure 2's 40 %."""

FIG2_SEQUENCES = 1024
"""Sequences in the global batch of Figure 2's model (Llama 2: 4M tokens per step)."""
FIG2_SEQ_LEN = 4096
"""Tokens per sequence in Figure 2's model (Llama 2's context length)."""


ALGORITHMS = ("ring", "flat", "hierarchical")
"""All-reduces of :class:`StepModel`: NCCL's ring (one channel per NIC, PXN), the single
ring, the hierarchical all-reduce."""


@dataclass(frozen=True)
class StepModel:
    """The model behind Figure 2 (see the module docstring for every assumption).

    ``global_tokens`` is the fixed global batch (strong scaling); set ``tokens_per_gpu``
    for a fixed per-GPU batch (weak scaling) instead.
    """

    params: float = PARAMS_70B
    bytes_per_value: float = BF16_BYTES
    layers: int = LAYERS_70B
    global_tokens: int = FIG2_SEQUENCES * FIG2_SEQ_LEN
    tokens_per_gpu: int | None = None
    flops_per_param_token: float = 6.0
    backward_fraction: float = 2 / 3
    chip: Chip = H100
    mfu: float = 0.40
    gpus_per_node: int = 8
    intra: Link = NVLINK4_CHAPTER
    inter: Link = IB_NDR_CHAPTER
    algorithm: str = "ring"

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")
        if not 0 < self.mfu <= 1:
            raise ValueError(f"mfu must be in (0, 1], got {self.mfu!r}")
        if not 0 < self.backward_fraction < 1:
            raise ValueError(f"backward_fraction must be in (0, 1), got {self.backward_fraction!r}")
        check_p(self.layers, "layers")
        check_p(self.gpus_per_node, "gpus_per_node")

    def weak(self, tokens_per_gpu: int) -> "StepModel":
        """The same model with a fixed per-GPU batch of ``tokens_per_gpu`` tokens."""
        return replace(self, tokens_per_gpu=tokens_per_gpu)

    def hierarchical(self) -> "StepModel":
        """The same model with a hierarchical all-reduce per layer (reduce-scatter over
        NVLink, a ring across nodes on each rail, all-gather over NVLink) instead of a
        flat ring."""
        return replace(self, algorithm="hierarchical")

    def single_ring(self) -> "StepModel":
        """The same model with the single ring (one channel: one NIC per node carries the
        whole chunk of every step), the chapter's setting."""
        return replace(self, algorithm="flat")


FIG2_MODEL = StepModel()
"""The model of Figure 2: 70B, BF16, 80 layers, 4M-token global batch, 40 % MFU on H100,
NVLink 4 in the node, InfiniBand NDR across nodes (one NIC per GPU), NCCL's ring."""
FIG2_SIZES = (8, 64, 1024, 2048, 4096, 8192)
"""Cluster sizes of Figure 2's model bars (the chapter's 8, 64 and 4,096, two between and one beyond)."""


@dataclass(frozen=True)
class StepBreakdown:
    """:func:`step_breakdown`: one step's times, one layer's all-reduce, the slowest hop's
    ``link`` and (``shares``) the parts of the step, which sum to 1."""

    gpus: int
    tokens_per_gpu: float
    layer_bytes: float
    compute_s: float
    backward_s: float
    layer_s: float
    allreduce_s: float
    comm_s: float
    stall_s: float
    step_s: float
    link: Link = field(repr=False)

    @property
    def shares(self) -> dict[str, float]:
        """compute, comm and stall as shares of the step."""
        return {"compute": self.compute_s / self.step_s, "comm": self.comm_s / self.step_s,
                "stall": self.stall_s / self.step_s}


def step_breakdown(gpus: int, model: StepModel = FIG2_MODEL) -> StepBreakdown:
    """One training step of ``model`` on ``gpus`` GPUs (a whole number of nodes beyond one).

    The times ``compute_s``, ``backward_s``, ``layer_s`` (one layer's all-reduce),
    ``allreduce_s`` (all layers), ``comm_s`` (exposed communication), ``stall_s``,
    ``step_s``, the ``link`` of the slowest hop, and the ``shares`` (compute, comm,
    stall), which sum to 1.
    """
    gpus = check_p(gpus, "gpus")
    g = model.gpus_per_node
    if gpus > g and gpus % g:
        raise ValueError(f"gpus must be at most {g} or a multiple of {g}, got {gpus}")
    tokens = model.tokens_per_gpu if model.tokens_per_gpu is not None else model.global_tokens / gpus
    t_compute = model.flops_per_param_token * model.params * tokens / (model.chip.bf16_flops * model.mfu)
    t_backward = model.backward_fraction * t_compute
    link = model.intra if gpus <= g else model.inter
    layer_bytes = gradient_bytes(model.params, model.bytes_per_value) / model.layers
    if model.algorithm == "hierarchical" and gpus > g:
        t_layer = t_allreduce_hierarchical(gpus // g, g, layer_bytes, model.intra, model.inter)
    elif model.algorithm == "ring" and gpus > g:
        t_layer = ring_time_two_level(TwoLevel(gpus // g, g, model.intra, model.inter, pxn=True), layer_bytes)
    else:
        t_layer = t_formula("ring", gpus, layer_bytes, link.alpha, link.beta)
    L = model.layers
    t_ar = L * t_layer
    t_stall = t_layer if gpus > 1 else 0.0
    t_comm = max(0.0, t_ar - t_backward) * (L - 1) / L
    t_step = t_compute + t_comm + t_stall
    return StepBreakdown(gpus, tokens, layer_bytes, t_compute, t_backward, t_layer, t_ar, t_comm, t_stall, t_step, link)


def first_exposed(model: StepModel = FIG2_MODEL, limit: int = 1 << 16) -> int:
    """The smallest cluster (a whole number of nodes) where the all-reduces no longer fit
    under backward, so that communication is exposed beyond the last layer's stall."""
    g = model.gpus_per_node
    for gpus in range(g, limit + 1, g):
        b = step_breakdown(gpus, model)
        if b.comm_s > 0:
            return gpus
    raise ValueError(f"communication stays hidden up to {limit} GPUs")


ILLUSTRATIVE_SHARES: dict[int, dict[str, float]] = {
    8: {"compute": 0.75, "comm": 0.25, "stall": 0.0},
    64: {"compute": 0.45, "comm": 0.50, "stall": 0.05},
    4096: {"compute": 0.20, "comm": 0.65, "stall": 0.15},
}
"""The chapter's Figure 2 shares, as its text and caption state them: ≈25 % communication
on 8 GPUs; ≈50 % plus 5 % stall on 64; at 4,096 the caption says communication "over 65 %"
and the text "communication and stalls together 80 %", which agree only with a 15 % stall.
Illustrative: the chapter names no measurement that could be reproduced."""
ILLUSTRATIVE_TEXT_COMM_PLUS_STALL = 0.80
"""At 4,096 GPUs the chapter's text puts communication plus stalls at 80 %."""
ILLUSTRATIVE_NVLINK_BIDIR = 900 * GB
"""The NVLink figure the chapter's Figure 2 text uses: 900 GB/s, both directions together
(one direction: 450 GB/s, as everywhere else in the book)."""


@dataclass(frozen=True)
class Fig2:
    """Figure 2's model bars as the prose reads them (sizes, shares, times; the single ring,
    weak scaling and the hierarchical all-reduce at 4,096 GPUs; the model's inputs) and the
    chapter's illustrative shares and NVLink figure."""

    n8: int
    n64: int
    n4096: int
    n8192: int
    comm8192_frac: float
    alpha4096_s: float
    single_first: int
    single_tar64_s: float
    single_comm4096_frac: float
    compute8_frac: float
    tc8_s: float
    tar8_s: float
    tc64_s: float
    tar64_s: float
    comm4096_frac: float
    tc4096_s: float
    tar4096_s: float
    params: str
    layers: int
    seqs: int
    seqlen: int
    tokens: int
    flops: float
    bwd: str
    mfu_frac: float
    mfu_lo_frac: float
    mfu_hi_frac: float
    mfu_gpus: int
    g: int
    nvl: str
    ib: str
    layer_bytes: float
    first: int
    tar64_over_8: float
    first_tokens: int
    weak_tokens: int
    weak_compute8_frac: float
    weak_comm64_frac: float
    weak_comm4096_frac: float
    hier_tar_s: float
    hier_comm_frac: float
    hier_first: int
    ill_comm8_frac: float
    ill_comm64_frac: float
    ill_comm4096_frac: float
    ill_compute4096_frac: float
    ill_stall4096_frac: float
    ill_text_frac: float
    ill_nvl_Bps: float
    ill_nvl_one_Bps: float
    ill_ratio_bidir: float
    ill_ratio_one: float


def fig2_facts(M: StepModel = FIG2_MODEL) -> Fig2:
    """Figure 2's numbers for ``M`` (the page's model by default).

    >>> fig2_facts().n4096, fig2_facts().layers
    (4096, 80)
    """
    n1, n64, _, _, nmax, nbig = FIG2_SIZES
    b = {n: step_breakdown(n, M) for n in (n1, n64, nmax, nbig)}
    sh = lambda n, part, model=M: step_breakdown(n, model).shares[part]
    S, H = M.single_ring(), M.hierarchical()
    weak_tokens = M.global_tokens // nmax
    W = M.weak(weak_tokens)
    first = first_exposed(M)
    ill = ILLUSTRATIVE_SHARES
    link = lambda L: f"{fmt_bytes(L.beta)}/s, α = {fmt_time(L.alpha)}"
    return Fig2(
        n1, n64, nmax, nbig, b[nbig].shares["comm"], M.layers * 2 * (nmax - 1) * M.inter.alpha,
        first_exposed(S), step_breakdown(n64, S).allreduce_s, sh(nmax, "comm", S), b[n1].shares["compute"],
        b[n1].compute_s, b[n1].allreduce_s, b[n64].compute_s, b[n64].allreduce_s, b[nmax].shares["comm"],
        b[nmax].compute_s, b[nmax].allreduce_s, billions(M.params), M.layers, FIG2_SEQUENCES, FIG2_SEQ_LEN,
        M.global_tokens, M.flops_per_param_token, str(Fraction(M.backward_fraction).limit_denominator(10)), M.mfu,
        LLAMA3_MFU["range"][0], LLAMA3_MFU["range"][1], LLAMA3_MFU["gpus"], M.gpus_per_node, link(M.intra),
        link(M.inter), b[n1].layer_bytes, first, b[n64].allreduce_s / b[n1].allreduce_s,
        round(M.global_tokens / first), weak_tokens, sh(n1, "compute", W), sh(n64, "comm", W), sh(nmax, "comm", W),
        step_breakdown(nmax, H).allreduce_s, sh(nmax, "comm", H), first_exposed(H), ill[n1]["comm"],
        ill[n64]["comm"], ill[nmax]["comm"], ill[nmax]["compute"], ill[nmax]["stall"],
        ILLUSTRATIVE_TEXT_COMM_PLUS_STALL, ILLUSTRATIVE_NVLINK_BIDIR, M.intra.beta,
        ILLUSTRATIVE_NVLINK_BIDIR / M.inter.beta, M.intra.beta / M.inter.beta)
