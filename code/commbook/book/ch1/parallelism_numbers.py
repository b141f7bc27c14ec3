r"""Chapter "Collective communication", purpose page and §1.1: the worked numbers.

* :func:`definition_1_1`: 70B parameters in BF16 on 1,000 GPUs, ring all-reduce at 50 GB/s
  per link: 140 GB per worker, the approximation 2·M/β = 5.6 s and the exact ring
  bandwidth term 2(N−1)/N·M/β = 5.594 s.  The box gives no α, so its link
  (:data:`LINK_DEF_1_1`) has α = 0: both numbers are bandwidth terms only.
* :func:`napkin_1_1`: the same model on 64 GPUs over InfiniBand NDR with α = 1.5 µs
  (:data:`LINK_NM_1_1`): factor 1.96875, 5,512.5 ms + 189 µs = 5,512.689 ms, from the
  closed form and from the virtual cluster (a size-only ring on a switch).
* :func:`energy_estimate`: the 10,000-GPU all-reduce at 30 pJ/bit (4.8 kJ) and at Figure 1's
  InfiniBand value (160 kJ).
* :class:`StepModel` / :func:`step_breakdown`: the model behind Figure 2 (below), and the
  chapter's illustrative shares :data:`ILLUSTRATIVE_SHARES`.

The figures are in :mod:`.parallelism_figures`, the tables in :mod:`.parallelism_tables`.

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

from ... import physics
from ...checks import check_p
from ...collectives import all_reduce, t_allreduce_hierarchical, t_formula
from ...collectives.channels import ring_time_two_level
from ...comm_sim import VirtualCluster
from ...hardware import H100, IB_NDR_CHAPTER, NVLINK4_CHAPTER, Chip, Link
from ...topology import Switch, TwoLevel
from ...units import GB
from .boxes import BOX_LINKS
from .inputs import CHAPTER_ENERGY_ESTIMATE

__all__ = [
    "PARAMS_70B", "BF16_BYTES", "LAYERS_70B", "DEF_1_1_GPUS", "NM_1_1_GPUS", "INTRO_GPUS",
    "LINK_DEF_1_1", "LINK_NM_1_1", "gradient_bytes", "logical_connections", "Definition11", "definition_1_1",
    "Napkin11", "napkin_1_1", "EnergyEstimate", "SYNC_SHARE_RANGE", "LLAMA3_MFU", "EFFICIENCY_60", "at_efficiency", "HALVING_STEPS",
    "gpu_hours_saved", "zero_copy_host_bytes", "energy_estimate", "H100_TDP_W",
    "ALGORITHMS", "StepModel", "FIG2_MODEL", "FIG2_SEQUENCES", "FIG2_SEQ_LEN", "StepBreakdown", "step_breakdown", "first_exposed",
    "FIG2_SIZES", "ILLUSTRATIVE_SHARES", "ILLUSTRATIVE_TEXT_COMM_PLUS_STALL", "ILLUSTRATIVE_NVLINK_BIDIR",
]


# ============================================================================ the boxes
PARAMS_70B = 70e9
"""Parameters of the 70B model of Definition 1.1 and Napkin Math 1.1."""
BF16_BYTES = 2
"""Bytes per BF16 value."""
LAYERS_70B = 80
"""Transformer layers of a 70B dense model (Llama 2 70B: Touvron et al. 2023, Table 1 /
model card: 80 layers)."""
INTRO_GPUS = 10_000
"""The cluster of the section's opening sentence (10,000 GPUs applying one update)."""
DEF_1_1_GPUS = 1_000
"""GPUs of Definition 1.1."""
NM_1_1_GPUS = 64
"""GPUs of Napkin Math 1.1."""

LINK_DEF_1_1 = BOX_LINKS["def1.1"]
"""The link of Definition 1.1: 50 GB/s, no α given."""

LINK_NM_1_1 = BOX_LINKS["nm1.1"]
"""The link of Napkin Math 1.1: InfiniBand NDR, α = 1.5 µs, β = 50 GB/s."""


def gradient_bytes(params: float = PARAMS_70B, bytes_per_value: float = BF16_BYTES) -> float:
    """Bytes of one full gradient: params × bytes per value (70B in BF16: 140 GB)."""
    return params * bytes_per_value


def logical_connections(n: int) -> int:
    """Ordered pairs of workers that may exchange data in the most general pattern:
    N(N−1) (each worker may send to each of the others)."""
    n = check_p(n, "n")
    return n * (n - 1)


@dataclass(frozen=True)
class Definition11:
    """:func:`definition_1_1`."""

    m_bytes: float
    gpus: int
    beta_Bps: float
    factor: float
    approx_s: float
    exact_s: float
    per_worker_bytes: float
    server_bytes: float


def definition_1_1(params: float = PARAMS_70B, gpus: int = DEF_1_1_GPUS,
                   link: Link = LINK_DEF_1_1, bytes_per_value: float = BF16_BYTES) -> Definition11:
    """The numbers of Definition 1.1.

    ``m_bytes`` per worker, ``factor`` 2(N−1)/N, ``approx_s`` = 2·M/β (the box's
    "2 × 140/50"), ``exact_s`` = the ring closed form with the link's α (0: bandwidth term
    only), ``per_worker_bytes`` = 2(N−1)/N·M (what each worker sends in a ring) and
    ``server_bytes`` = N·M (what one parameter server receives from N workers).
    """
    gpus = check_p(gpus, "gpus")
    m = gradient_bytes(params, bytes_per_value)
    factor = 2 * (gpus - 1) / gpus
    return Definition11(m, gpus, link.beta, factor, 2 * m / link.beta,
                        t_formula("ring", gpus, m, link.alpha, link.beta), factor * m, gpus * m)


@dataclass(frozen=True)
class Napkin11:
    """:func:`napkin_1_1` (``sim_s`` and ``sim_rounds`` are None without ``simulate``)."""

    m_bytes: float
    gpus: int
    alpha_s: float
    beta_Bps: float
    factor: float
    t_bw_s: float
    steps: int
    t_lat_s: float
    total_s: float
    sim_s: float | None = None
    sim_rounds: int | None = None


def napkin_1_1(params: float = PARAMS_70B, gpus: int = NM_1_1_GPUS, link: Link = LINK_NM_1_1,
               bytes_per_value: float = BF16_BYTES, simulate: bool = True) -> Napkin11:
    """Napkin Math 1.1: a ring all-reduce of a 70B model's BF16 gradients on ``gpus`` GPUs.

    ``m_bytes``, ``factor`` 2(N−1)/N, ``t_bw_s`` = factor·M/β, ``steps`` 2(N−1), ``t_lat_s``
    = 2(N−1)·α, ``total_s`` (closed form), and with ``simulate`` the virtual cluster's
    ``sim_s`` and ``sim_rounds`` (a size-only ring on a :class:`~commbook.topology.Switch`
    built from ``link``).
    """
    gpus = check_p(gpus, "gpus")
    m = gradient_bytes(params, bytes_per_value)
    factor = 2 * (gpus - 1) / gpus
    sim = all_reduce(VirtualCluster(Switch(gpus, link)), nbytes=m, algorithm="ring") if simulate else None
    return Napkin11(m, gpus, link.alpha, link.beta, factor, factor * m / link.beta, 2 * (gpus - 1),
                    2 * (gpus - 1) * link.alpha, t_formula("ring", gpus, m, link.alpha, link.beta),
                    sim.time if sim else None, sim.rounds if sim else None)


SYNC_SHARE_RANGE = (0.30, 0.70)
"""The share of each step that gradient synchronization takes at scale, as the chapter
quotes it (no derivation and no source given)."""
LLAMA3_MFU = {"range": (0.38, 0.43), "gpus": 16384}
"""BF16 MFU that Llama 3 reports for its pre-training, on up to 16K H100s (Dubey et al.
2024, "The Llama 3 Herd of Models", Table 4): the basis of Figure 2's 40 %."""
EFFICIENCY_60 = 0.60
"""A sub-optimal algorithm reaching 60 % of the theoretical bandwidth."""
HALVING_STEPS = 100_000
"""Training steps assumed when pricing a halved all-reduce in GPU-hours (an assumption
of this book, not a number of the chapter)."""


def at_efficiency(t_bandwidth: float, efficiency: float = EFFICIENCY_60) -> float:
    """A transfer time when only ``efficiency`` of the bandwidth is reached: t / efficiency."""
    if not 0 < efficiency <= 1:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency!r}")
    return t_bandwidth / efficiency


def gpu_hours_saved(t_allreduce: float, gpus: int, steps: int = HALVING_STEPS,
                    fraction: float = 0.5) -> float:
    """GPU-hours saved over ``steps`` steps when ``fraction`` of an exposed all-reduce of
    ``t_allreduce`` seconds disappears on ``gpus`` GPUs."""
    return gpus * fraction * t_allreduce * steps / 3600


def zero_copy_host_bytes(m: float) -> float:
    """Host-memory traffic a zero-copy (RDMA) path avoids for an ``m``-byte exchange:
    one copy out of and one into host memory, 2·m."""
    return 2 * m


# ============================================================================ energy
H100_TDP_W = 700.0
"""H100 SXM maximum thermal design power, W (NVIDIA H100 Tensor Core GPU datasheet: "up to
700W (configurable)")."""


@dataclass(frozen=True)
class EnergyEstimate:
    """:func:`energy_estimate`."""

    gpus: int
    n_bytes: float
    pj_per_bit: float
    factor: float
    joules: float
    joules_figure_ib: float
    joules_ib_low: float
    joules_ib_high: float
    joules_ring: float
    gpu_joules_per_s: float


def energy_estimate(gpus: int | None = None, nbytes: float | None = None,
                    pj_per_bit: float | None = None, factor: float | None = None) -> EnergyEstimate:
    """The all-reduce energy estimate after Figure 1, with its inputs defaulting to the
    chapter's (:data:`commbook.book.ch1.inputs.CHAPTER_ENERGY_ESTIMATE`: 10,000 GPUs, 1 GB each,
    30 pJ/bit, factor 2).

    Returns ``joules`` at ``pj_per_bit``; ``joules_figure_ib`` at Figure 1's InfiniBand
    value (1,000 pJ/bit); ``joules_ib_low``/``joules_ib_high`` at the ends of InfiniBand's
    published range; ``joules_ring`` with the exact ring factor 2(p−1)/p; and
    ``gpu_joules_per_s`` = GPUs × H100 TDP, for scale.
    """
    ch = CHAPTER_ENERGY_ESTIMATE
    gpus = ch["gpus"] if gpus is None else gpus
    nbytes = ch["nbytes"] if nbytes is None else nbytes
    pj = ch["pj_per_bit"] if pj_per_bit is None else pj_per_bit
    factor = ch["factor"] if factor is None else factor
    ib = physics.ENERGY["IB"]
    e = lambda p_: physics.allreduce_energy(gpus, nbytes, p_, factor)  # noqa: E731
    return EnergyEstimate(gpus, nbytes, pj, factor, e(pj), e(ib.figure_pj), e(ib.low_pj), e(ib.high_pj),
                          physics.allreduce_energy(gpus, nbytes, pj, physics.ring_traffic_factor(gpus)),
                          gpus * H100_TDP_W)


# ============================================================================ Figure 2
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
