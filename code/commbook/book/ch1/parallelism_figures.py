r"""Chapter "Collective communication", purpose page and §1.1 (from parallelism to
communication patterns): the worked numbers, Figures 1 and 2, and the transport manifest.

Everything the pages ``chapters/{zh,en}/ch1/00-purpose.md`` and ``01-parallelism.md`` glue
in is computed here from :mod:`commbook.cost`, :mod:`commbook.collectives` and
:mod:`commbook.physics`:

* :func:`definition_1_1`: 70B parameters in BF16 on 1,000 GPUs, ring all-reduce at 50 GB/s
  per link: 140 GB per worker, the approximation 2·M/β = 5.6 s and the exact ring
  bandwidth term 2(N−1)/N·M/β = 5.594 s.  The box gives no α, so its link
  (:data:`LINK_DEF_1_1`) has α = 0: both numbers are bandwidth terms only.
* :func:`napkin_1_1`: the same model on 64 GPUs over InfiniBand NDR with α = 1.5 µs
  (:data:`LINK_NM_1_1`): factor 1.96875, 5,512.5 ms + 189 µs = 5,512.689 ms, from the
  closed form and from the virtual cluster (a size-only ring on a switch).
* Figure 1 (:func:`fig_energy`): energy per bit of SRAM, HBM, NVLink and InfiniBand on a
  true log axis, the values the chapter draws next to the ranges of the sources in
  :data:`commbook.physics.ENERGY` (NVLink's 100 and InfiniBand's 1,000 pJ/bit lie far above
  them).  :func:`energy_estimate`: the 10,000-GPU all-reduce at 30 pJ/bit (4.8 kJ) and at
  the figure's InfiniBand value (160 kJ).
* Figure 2 (:func:`fig_step_shares`): the shares of a training step that go to compute,
  to exposed communication and to the stall on the last layer's all-reduce, from the
  model :class:`StepModel` (stated below), drawn beside the chapter's illustrative shares
  :data:`ILLUSTRATIVE_SHARES`.
* :func:`transport_manifest`: the table "parallelism → where the gradient goes →
  primitive → constraint".

The Figure 2 model
------------------
A 70B dense model (80 layers, BF16 gradients: 140 GB), pure data parallelism, a **flat
ring** all-reduce per layer (the chapter's setting), and layer-wise overlap: layer ℓ's
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
  ``NVLINK4_CHAPTER``); beyond, every round of the flat ring waits for its inter-node hop,
  so it costs the ring closed form with InfiniBand NDR (50 GB/s, α = 2 µs:
  ``IB_NDR_CHAPTER``).  The virtual cluster's ``TwoLevel`` topology gives the same time.
* With L layers, each all-reduce taking t = T_ar/L, and backward T_bwd producing one layer
  every T_bwd/L, the communication stream finishes max(T_bwd + t, T_bwd/L + T_ar) after
  backward starts.  What sticks out past backward splits into the **stall** t (the last
  layer's all-reduce: nothing is left to hide it) and **exposed communication**
  max(0, T_ar − T_bwd)·(L−1)/L.  Step = compute + exposed communication + stall.
* ``algorithm="hierarchical"`` (:meth:`StepModel.hierarchical`) prices each layer with the
  hierarchical all-reduce of §1.5 instead, for comparison.
* Memory is ignored: a 70B model does not fit on one GPU, and real runs combine data
  parallelism with tensor, pipeline or sharded data parallelism, which changes the
  traffic.  The model answers one question only: how the ring's time compares with the
  compute it has to hide behind.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

from ... import physics
from ...checks import check_p
from ...collectives import all_reduce, t_allreduce_hierarchical, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import H100, IB_NDR_CHAPTER, NVLINK4_CHAPTER, Chip, Link
from ...topology import Switch
from ...units import GB
from ..plots import PALETTE, book_style, log_axis
from ..tables import Table, bilingual, bilingual_notes

__all__ = [
    "PARAMS_70B", "BF16_BYTES", "LAYERS_70B", "DEF_1_1_GPUS", "NM_1_1_GPUS", "INTRO_GPUS",
    "LINK_DEF_1_1", "LINK_NM_1_1", "FIG_LABELS", "fig_label",
    "gradient_bytes", "logical_connections", "definition_1_1", "napkin_1_1",
    "SYNC_SHARE_RANGE", "EFFICIENCY_60", "at_efficiency", "HALVING_STEPS", "gpu_hours_saved",
    "zero_copy_host_bytes", "ENERGY_ORDER", "fig_energy", "energy_estimate", "H100_TDP_W",
    "StepModel", "FIG2_MODEL", "FIG2_SEQUENCES", "FIG2_SEQ_LEN", "step_breakdown", "first_exposed", "FIG2_SIZES",
    "ILLUSTRATIVE_SHARES", "ILLUSTRATIVE_TEXT_COMM_PLUS_STALL", "ILLUSTRATIVE_NVLINK_BIDIR",
    "fig_step_shares", "transport_manifest", "PURPOSE_SIZES", "connections_table",
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

LINK_DEF_1_1 = Link(
    "Ring link (Definition 1.1)", 0.0, 50 * GB,
    "chapter Definition 1.1 (gradient synchronization): 50 GB/s per link; the box gives no "
    "α, so only the bandwidth term is computed (α = 0)",
)
"""The link of Definition 1.1: 50 GB/s, no α given."""

LINK_NM_1_1 = Link(
    "InfiniBand NDR (napkin math 1.1)", 1.5e-6, 50 * GB,
    "chapter napkin math 1.1: InfiniBand NDR, 50 GB/s per port, α = 1.5 µs",
)
"""The link of Napkin Math 1.1: InfiniBand NDR, α = 1.5 µs, β = 50 GB/s."""


def gradient_bytes(params: float = PARAMS_70B, bytes_per_value: float = BF16_BYTES) -> float:
    """Bytes of one full gradient: params × bytes per value (70B in BF16: 140 GB)."""
    return params * bytes_per_value


def logical_connections(n: int) -> int:
    """Ordered pairs of workers that may exchange data in the most general pattern:
    N(N−1) (each worker may send to each of the others)."""
    n = check_p(n, "n")
    return n * (n - 1)


def definition_1_1(params: float = PARAMS_70B, gpus: int = DEF_1_1_GPUS,
                   link: Link = LINK_DEF_1_1, bytes_per_value: float = BF16_BYTES) -> dict:
    """The numbers of Definition 1.1.

    Returns ``m`` (bytes per worker), ``factor`` 2(N−1)/N, ``approx`` = 2·M/β (the box's
    "2 × 140/50"), ``exact`` = the ring closed form with the link's α (0: bandwidth term
    only), ``per_worker_bytes`` = 2(N−1)/N·M (what each worker sends in a ring) and
    ``server_bytes`` = N·M (what one parameter server receives from N workers).
    """
    gpus = check_p(gpus, "gpus")
    m = gradient_bytes(params, bytes_per_value)
    factor = 2 * (gpus - 1) / gpus
    return {
        "m": m, "gpus": gpus, "beta": link.beta, "factor": factor,
        "approx": 2 * m / link.beta,
        "exact": t_formula("ring", gpus, m, link.alpha, link.beta),
        "per_worker_bytes": factor * m,
        "server_bytes": gpus * m,
    }


def napkin_1_1(params: float = PARAMS_70B, gpus: int = NM_1_1_GPUS, link: Link = LINK_NM_1_1,
               bytes_per_value: float = BF16_BYTES, simulate: bool = True) -> dict:
    """Napkin Math 1.1: a ring all-reduce of a 70B model's BF16 gradients on ``gpus`` GPUs.

    Returns ``m``, ``factor`` 2(N−1)/N, ``t_bw`` = factor·M/β, ``steps`` 2(N−1), ``t_lat``
    = 2(N−1)·α, ``total`` (closed form), and with ``simulate`` the virtual cluster's
    ``sim_time`` and ``sim_rounds`` (a size-only ring on a :class:`~commbook.topology.Switch`
    built from ``link``).
    """
    gpus = check_p(gpus, "gpus")
    m = gradient_bytes(params, bytes_per_value)
    factor = 2 * (gpus - 1) / gpus
    out = {
        "m": m, "gpus": gpus, "alpha": link.alpha, "beta": link.beta, "factor": factor,
        "t_bw": factor * m / link.beta, "steps": 2 * (gpus - 1),
        "t_lat": 2 * (gpus - 1) * link.alpha,
        "total": t_formula("ring", gpus, m, link.alpha, link.beta),
    }
    if simulate:
        run = all_reduce(VirtualCluster(Switch(gpus, link)), nbytes=m, algorithm="ring")
        out["sim_time"], out["sim_rounds"] = run.time, run.rounds
    return out


SYNC_SHARE_RANGE = (0.30, 0.70)
"""The share of each step that gradient synchronization takes at scale, as the chapter
quotes it (no derivation given)."""
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


# ============================================================================ labels
FIG_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "energy_title": "Energy to move one bit grows with distance",
        "energy_x": "energy per bit (pJ/bit, log scale)",
        "tier_SRAM": "SRAM\non-chip, ~0–1 mm",
        "tier_HBM": "HBM / DRAM\nnext to the die, ~1–10 mm",
        "tier_NVLink": "NVLink 4.0\nin the node, ~0.5–1 m",
        "tier_IB": "InfiniBand NDR\nbetween nodes, ~10–100 m",
        "energy_value": "high-end estimate (links, switches, transceivers)",
        "energy_range": "range in the cited sources",
        "energy_ratio": "{ratio:,.0f}× SRAM",
        "energy_outside": "{times:.0f}× above the range",
        "energy_estimate": "{pj:g} pJ/bit: the all-reduce estimate",
        "shares_title": "Where a training step goes: 70B, data parallel, flat ring",
        "shares_y": "share of step time (%)",
        "shares_x": "cluster size",
        "compute": "compute",
        "comm": "exposed communication",
        "stall": "stall on the last layer's all-reduce",
        "bar_model": "model",
        "bar_illustrative": "illustrative",
        "gpus_node": "{n:,} GPUs\n1 node",
        "gpus_nodes": "{n:,} GPUs\n{nodes:,} nodes",
    },
    "zh": {
        "energy_title": "搬动一个比特的能量随距离上升",
        "energy_x": "每比特能量（pJ/bit，对数坐标）",
        "tier_SRAM": "SRAM\n片上，约 0–1 mm",
        "tier_HBM": "HBM / DRAM\n紧挨芯片，约 1–10 mm",
        "tier_NVLink": "NVLink 4.0\n节点内，约 0.5–1 m",
        "tier_IB": "InfiniBand NDR\n节点之间，约 10–100 m",
        "energy_value": "偏高的估计（含链路、交换机、收发器）",
        "energy_range": "所引资料给出的范围",
        "energy_ratio": "SRAM 的 {ratio:,.0f} 倍",
        "energy_outside": "高出范围 {times:.0f} 倍",
        "energy_estimate": "{pj:g} pJ/bit：全归约能耗估算所用",
        "shares_title": "一个训练步的时间花在哪里：70B、数据并行、扁平环",
        "shares_y": "占单步时间的比例（%）",
        "shares_x": "集群规模",
        "compute": "计算",
        "comm": "暴露在外的通信",
        "stall": "等待最后一层 all-reduce 的停顿",
        "bar_model": "模型",
        "bar_illustrative": "示意",
        "gpus_node": "{n:,} 块 GPU\n1 个节点",
        "gpus_nodes": "{n:,} 块 GPU\n{nodes:,} 个节点",
    },
}
"""Figure text of this module in each language (kept here, not in book/labels.py)."""


def fig_label(key: str, lang: str, **fields: object) -> str:
    """Label ``key`` of :data:`FIG_LABELS` in ``lang``, with ``{field}`` placeholders filled."""
    text = FIG_LABELS[lang][key]
    return text.format(**fields) if fields else text


# ============================================================================ Figure 1
ENERGY_ORDER = ("SRAM", "HBM", "NVLink", "IB")
"""The tiers of Figure 1, nearest first (keys of :data:`commbook.physics.ENERGY`)."""
H100_TDP_W = 700.0
"""H100 SXM maximum thermal design power, W (NVIDIA H100 Tensor Core GPU datasheet: "up to
700W (configurable)")."""


def energy_estimate(gpus: int | None = None, nbytes: float | None = None,
                    pj_per_bit: float | None = None, factor: float | None = None) -> dict:
    """The all-reduce energy estimate after Figure 1, with its inputs defaulting to the
    chapter's (:data:`commbook.physics.CHAPTER_ENERGY_ESTIMATE`: 10,000 GPUs, 1 GB each,
    30 pJ/bit, factor 2).

    Returns ``joules`` at ``pj_per_bit``; ``joules_figure_ib`` at Figure 1's InfiniBand
    value (1,000 pJ/bit); ``joules_ib_low``/``joules_ib_high`` at the ends of InfiniBand's
    published range; ``joules_ring`` with the exact ring factor 2(p−1)/p; and
    ``gpu_joules_per_s`` = GPUs × H100 TDP, for scale.
    """
    ch = physics.CHAPTER_ENERGY_ESTIMATE
    gpus = ch["gpus"] if gpus is None else gpus
    nbytes = ch["nbytes"] if nbytes is None else nbytes
    pj = ch["pj_per_bit"] if pj_per_bit is None else pj_per_bit
    factor = ch["factor"] if factor is None else factor
    ib = physics.ENERGY["IB"]
    e = lambda p_: physics.allreduce_energy(gpus, nbytes, p_, factor)  # noqa: E731
    return {
        "gpus": gpus, "nbytes": nbytes, "pj_per_bit": pj, "factor": factor,
        "joules": e(pj), "joules_figure_ib": e(ib.figure_pj),
        "joules_ib_low": e(ib.low_pj), "joules_ib_high": e(ib.high_pj),
        "joules_ring": physics.allreduce_energy(gpus, nbytes, pj, physics.ring_traffic_factor(gpus)),
        "gpu_joules_per_s": gpus * H100_TDP_W,
    }


def fig_energy(lang: str = "en", estimate_pj: float | None = None) -> Figure:
    """Figure 1: energy per bit of the four tiers on a true log axis.

    Each tier (nearest at the top) shows the published range of
    :data:`commbook.physics.ENERGY` as a thick bar (gid ``"range:<tier>"``, x data =
    ``(low_pj, high_pj)``) and the value the chapter draws as a diamond (gid
    ``"value:<tier>"``, x data = ``(figure_pj,)``), annotated with its ratio to SRAM; a
    tier whose value lies outside its range says by how much.  A dashed vertical line
    (gid ``"estimate"``) marks the pJ/bit of the all-reduce energy estimate.
    """
    pj_est = physics.CHAPTER_ENERGY_ESTIMATE["pj_per_bit"] if estimate_pj is None else estimate_pj
    tiers = [physics.ENERGY[k] for k in ENERGY_ORDER]
    with book_style(lang) as lang:
        fig = Figure(figsize=(7.4, 4.0))
        ax = fig.add_subplot()
        ys = np.arange(len(tiers))[::-1]
        for k, t, y in zip(ENERGY_ORDER, tiers, ys):
            ax.plot([t.low_pj, t.high_pj], [y, y], lw=11, solid_capstyle="butt", color=PALETTE[5],
                    alpha=0.55, gid=f"range:{k}",
                    label=fig_label("energy_range", lang) if k == ENERGY_ORDER[0] else None)
            ax.plot([t.figure_pj], [y], marker="D", ms=8, ls="none", color=PALETTE[3],
                    markeredgecolor="white", gid=f"value:{k}",
                    label=fig_label("energy_value", lang) if k == ENERGY_ORDER[0] else None)
            ratio = physics.energy_ratio(k)
            text = fig_label("energy_ratio", lang, ratio=ratio) if k != "SRAM" else ""
            if t.figure_pj > t.high_pj:
                extra = fig_label("energy_outside", lang, times=t.figure_pj / t.high_pj)
                text = f"{text}\n{extra}" if text else extra
            if text:
                ax.annotate(text, (max(t.figure_pj, t.high_pj), y), xytext=(9, 0), textcoords="offset points",
                            va="center", fontsize=8.5, gid=f"note:{k}",
                            color=PALETTE[3] if t.figure_pj > t.high_pj else "0.2")
        ax.axvline(pj_est, color="0.35", lw=1, ls="--", gid="estimate",
                   label=fig_label("energy_estimate", lang, pj=pj_est))
        ax.set_yticks(ys, [fig_label(f"tier_{k}", lang) for k in ENERGY_ORDER])
        log_axis(ax, "x", "plain")
        ax.set_xlim(0.1, 2e4)
        ax.set_ylim(-0.7, len(tiers) - 0.3)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(fig_label("energy_x", lang))
        ax.set_title(fig_label("energy_title", lang))
        ax.legend(loc="upper right", fontsize=8)
    return fig


# ============================================================================ Figure 2
FIG2_SEQUENCES = 1024
"""Sequences in the global batch of Figure 2's model (Llama 2: 4M tokens per step)."""
FIG2_SEQ_LEN = 4096
"""Tokens per sequence in Figure 2's model (Llama 2's context length)."""


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
    algorithm: str = "flat"

    def __post_init__(self) -> None:
        if self.algorithm not in ("flat", "hierarchical"):
            raise ValueError(f"algorithm must be 'flat' or 'hierarchical', got {self.algorithm!r}")
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


FIG2_MODEL = StepModel()
"""The model of Figure 2: 70B, BF16, 80 layers, 4M-token global batch, 40 % MFU on H100,
NVLink 4 in the node, InfiniBand NDR across nodes, flat ring."""
FIG2_SIZES = (8, 64, 512, 1024, 2048, 4096)
"""Cluster sizes of Figure 2's model bars (the chapter's 8, 64 and 4,096, and three between)."""


def step_breakdown(gpus: int, model: StepModel = FIG2_MODEL) -> dict:
    """One training step of ``model`` on ``gpus`` GPUs (a whole number of nodes beyond one).

    Returns the times ``t_compute``, ``t_backward``, ``t_layer`` (one layer's all-reduce),
    ``t_allreduce`` (all layers), ``t_comm`` (exposed communication), ``t_stall``,
    ``t_step``, the ``link`` a flat ring is priced on, and the ``shares`` (compute, comm,
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
    else:
        t_layer = t_formula("ring", gpus, layer_bytes, link.alpha, link.beta)
    L = model.layers
    t_ar = L * t_layer
    t_stall = t_layer if gpus > 1 else 0.0
    t_comm = max(0.0, t_ar - t_backward) * (L - 1) / L
    t_step = t_compute + t_comm + t_stall
    return {
        "gpus": gpus, "tokens_per_gpu": tokens, "link": link, "layer_bytes": layer_bytes,
        "t_compute": t_compute, "t_backward": t_backward, "t_layer": t_layer,
        "t_allreduce": t_ar, "t_comm": t_comm, "t_stall": t_stall, "t_step": t_step,
        "shares": {"compute": t_compute / t_step, "comm": t_comm / t_step, "stall": t_stall / t_step},
    }


def first_exposed(model: StepModel = FIG2_MODEL, limit: int = 1 << 16) -> int:
    """The smallest cluster (a whole number of nodes) where the all-reduces no longer fit
    under backward, so that communication is exposed beyond the last layer's stall."""
    g = model.gpus_per_node
    for gpus in range(g, limit + 1, g):
        b = step_breakdown(gpus, model)
        if b["t_comm"] > 0:
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

_PARTS = ("compute", "comm", "stall")
_PART_COLORS = {"compute": PALETTE[0], "comm": PALETTE[1], "stall": PALETTE[3]}


def fig_step_shares(lang: str = "en", model: StepModel = FIG2_MODEL,
                    sizes: Sequence[int] = FIG2_SIZES) -> Figure:
    """Figure 2: stacked shares of one step (compute, exposed communication, stall) per
    cluster size, from :func:`step_breakdown`, with the illustrative shares of
    :data:`ILLUSTRATIVE_SHARES` beside them (hatched) where they exist.

    Bar segments have gid ``"model:<gpus>:<part>"`` and ``"illustrative:<gpus>:<part>"``
    (part: compute, comm, stall); heights are percentages.
    """
    sizes = [check_p(n, "gpus") for n in sizes]
    with book_style(lang) as lang:
        fig = Figure(figsize=(8.0, 4.4))
        ax = fig.add_subplot()
        w = 0.36
        for i, n in enumerate(sizes):
            shares = step_breakdown(n, model)["shares"]
            has_ill = n in ILLUSTRATIVE_SHARES
            x = i - w / 2 - 0.02 if has_ill else i
            bottom = 0.0
            for part in _PARTS:
                h = 100 * shares[part]
                ax.bar(x, h, w, bottom=bottom, color=_PART_COLORS[part], gid=f"model:{n}:{part}",
                       label=fig_label(part, lang) if i == 0 else None)
                bottom += h
            ax.text(x, 101.5, fig_label("bar_model", lang), ha="center", va="bottom", fontsize=6.8)
            if has_ill:
                bottom = 0.0
                for part in _PARTS:
                    h = 100 * ILLUSTRATIVE_SHARES[n][part]
                    ax.bar(i + w / 2 + 0.02, h, w, bottom=bottom, color=_PART_COLORS[part], alpha=0.45,
                           hatch="//", edgecolor="white", gid=f"illustrative:{n}:{part}")
                    bottom += h
                ax.text(i + w / 2 + 0.02, 101.5, fig_label("bar_illustrative", lang), ha="center",
                        va="bottom", fontsize=6.8)
        g = model.gpus_per_node
        ticks = [fig_label("gpus_node", lang, n=n) if n <= g else
                 fig_label("gpus_nodes", lang, n=n, nodes=n // g) for n in sizes]
        ax.set_xticks(range(len(sizes)), ticks, fontsize=8.5)
        ax.set_ylim(0, 112)
        ax.set_yticks(range(0, 101, 20))
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(fig_label("shares_y", lang))
        ax.set_xlabel(fig_label("shares_x", lang))
        ax.set_title(fig_label("shares_title", lang))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize=8.5)
    return fig


# ============================================================================ purpose page
PURPOSE_SIZES = (8, 64, 1_000, 10_000)
"""Cluster sizes of the purpose page's table (one node, the 64-GPU box, Definition 1.1's
1,000 and the opening 10,000)."""


def connections_table(sizes: Sequence[int] = PURPOSE_SIZES) -> Table:
    """For each number of workers N: the N(N−1) ordered pairs of the most general
    exchange, the N links a ring uses, and the bytes each worker sends in a ring
    all-reduce, as a multiple of its buffer (2(N−1)/N).  The note compares the largest
    and smallest N."""
    sizes = [check_p(n, "N") for n in sizes]
    rows = [{"n": n, "pairs": logical_connections(n), "ring_links": n,
             "ring_factor": physics.ring_traffic_factor(n)} for n in sizes]
    lo, hi = rows[0], rows[-1]
    grow_n = hi["n"] / lo["n"]
    grow_pairs = hi["pairs"] / lo["pairs"]
    grow_ring = hi["ring_factor"] / lo["ring_factor"]
    return Table(
        key="ch1-connections",
        title=bilingual("Logical connections against what a ring all-reduce moves",
                        "逻辑连接数与环形 all-reduce 的搬运量"),
        columns=["n", "pairs", "ring_links", "ring_factor"],
        headers={"en": ["Workers N", "Ordered pairs N(N−1)", "Links a ring uses", "Sent per worker (× buffer)"],
                 "zh": ["工作进程数 N", "有序对数 N(N−1)", "环用到的链路数", "每个进程发出量（缓冲区的倍数）"]},
        rows=rows,
        formats={"n": lambda v: f"{v:,}", "pairs": lambda v: f"{v:,}", "ring_links": lambda v: f"{v:,}",
                 "ring_factor": lambda v: f"{v:.4f}"},
        notes=bilingual_notes(
            (f"From N = {lo['n']:,} to N = {hi['n']:,} ({grow_n:,.0f}× the workers) the pairs grow "
             f"{grow_pairs:,.0f}×, while what a ring asks of each worker grows only {grow_ring:.3f}×.",
             f"从 N = {lo['n']:,} 到 N = {hi['n']:,}（工作进程多了 {grow_n:,.0f} 倍），有序对多了 "
             f"{grow_pairs:,.0f} 倍，而环形算法要求每个进程发出的量只多了 {grow_ring:.3f} 倍。"),
        ),
        meta={"grow_n": grow_n, "grow_pairs": grow_pairs, "grow_ring": grow_ring},
    )


# ============================================================================ the manifest
_MANIFEST_ROWS = [
    # (strategy, destination, primitive, constraint) in English; Chinese via labels
    ("Data parallel", "meet every replica to form the global mean", "all-reduce",
     "bandwidth (large payload)"),
    ("FSDP / ZeRO", "find the shards and rebuild the whole", "all-gather + reduce-scatter",
     "bandwidth (many collectives per step)"),
    ("Tensor parallel", "a quick exchange inside the node", "all-reduce",
     "latency (small, frequent messages)"),
    ("Pipeline parallel", "hand over to the next stage", "point-to-point (send/recv)",
     "latency (each stage waits for the previous one)"),
    ("Expert parallel (MoE)", "routed to the GPU that holds its expert", "all-to-all",
     "start-up cost, injection or bisection bandwidth, or load skew"),
]
_MANIFEST_ZH = {
    "Data parallel": "数据并行",
    "meet every replica to form the global mean": "与所有副本汇合，求出全局平均",
    "bandwidth (large payload)": "带宽（数据量大）",
    "FSDP / ZeRO": "FSDP / ZeRO",
    "find the shards and rebuild the whole": "找齐分片，拼回完整张量",
    "all-gather + reduce-scatter": "all-gather + reduce-scatter",
    "bandwidth (many collectives per step)": "带宽（每步集合操作多、频率高）",
    "Tensor parallel": "张量并行",
    "a quick exchange inside the node": "在节点内快速交换",
    "latency (small, frequent messages)": "延迟（消息小而频繁）",
    "Pipeline parallel": "流水线并行",
    "hand over to the next stage": "交给下一个流水级",
    "point-to-point (send/recv)": "点对点（send/recv）",
    "latency (each stage waits for the previous one)": "延迟（每一级都要等上一级）",
    "Expert parallel (MoE)": "专家并行（MoE）",
    "routed to the GPU that holds its expert": "按路由发往持有对应专家的 GPU",
    "all-to-all": "all-to-all",
    "all-reduce": "all-reduce",
    "start-up cost, injection or bisection bandwidth, or load skew": "启动开销、注入带宽或对分带宽，或负载倾斜",
}


def transport_manifest() -> Table:
    """The transport manifest: for each parallelism strategy, where its gradients (or
    activations, or tokens) must go, the primitive that takes them there, and the limit
    that usually binds.  The note counts the strategies that use a collective."""
    rows = [dict(zip(("strategy", "destination", "primitive", "constraint"), r)) for r in _MANIFEST_ROWS]
    p2p = [r["strategy"] for r in rows if r["primitive"].startswith("point-to-point")]
    coll = len(rows) - len(p2p)
    zh_p2p = "、".join(_MANIFEST_ZH[s] for s in p2p)
    return Table(
        key="ch1-manifest",
        title=bilingual("The transport manifest: from parallelism to primitive",
                        "传输清单：从并行方式到通信原语"),
        columns=["strategy", "destination", "primitive", "constraint"],
        headers={"en": ["Parallelism", "Where the data must go", "Main primitive", "Main constraint"],
                 "zh": ["并行方式", "数据要去哪里", "主要原语", "主要约束"]},
        rows=rows,
        notes=bilingual_notes(
            (f"{coll} of the {len(rows)} strategies synchronize through a collective; "
             f"{', '.join(p2p)} only passes messages between neighbouring stages.",
             f"{len(rows)} 种方式中有 {coll} 种靠集合操作同步；{zh_p2p}只在相邻的流水级之间传递消息。"),
        ),
        labels={"en": {}, "zh": dict(_MANIFEST_ZH)},
        meta={"point_to_point": p2p, "collective_rows": coll},
    )
