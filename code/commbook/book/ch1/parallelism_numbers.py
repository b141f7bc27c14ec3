r"""Chapter "Collective communication", purpose page and §1.1: the worked numbers.

* :func:`napkin_1_1`: 70B parameters in BF16 on 64 GPUs over InfiniBand NDR with α = 1.5 µs
  (:data:`LINK_NM_1_1`): factor 1.96875, 5,512.5 ms + 189 µs = 5,512.689 ms, from the
  closed form and from the virtual cluster (a size-only ring on a switch).
* the cost of synchronization (:func:`sync_facts`).

(Definition 1.1 and its quiz are computed on the page.)

Each function returns one typed result that the page glues as it is
(:func:`commbook.book.glue.glue_fields`).  Light and energy are in :mod:`.parallelism_energy`,
the model behind Figure 2 in :mod:`.parallelism_step`, the figures in :mod:`.parallelism_figures`, the tables in
:mod:`.parallelism_tables`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...checks import check_p
from ...collectives import all_reduce, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR_CHAPTER, Link
from ...topology import Switch
from ...units import fmt_number
from .boxes import BOX_LINKS

__all__ = [
    "PARAMS_70B", "BF16_BYTES", "NM_1_1_GPUS", "LINK_NM_1_1", "billions", "gradient_bytes", "logical_connections",
    "Napkin11", "napkin_1_1", "SYNC_SHARE_RANGE", "EFFICIENCY_60", "at_efficiency", "HALVING_STEPS",
    "gpu_hours_saved", "zero_copy_host_bytes", "Sync", "sync_facts",
]


# ============================================================================ the boxes
PARAMS_70B = 70e9
"""Parameters of the 70B model of Definition 1.1 and Napkin Math 1.1."""
BF16_BYTES = 2
"""Bytes per BF16 value."""
NM_1_1_GPUS = 64
"""GPUs of Napkin Math 1.1."""

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


def billions(x: float) -> str:
    """A parameter count as the chapter writes it: '70B'.

    >>> billions(70e9)
    '70B'
    """
    return f"{fmt_number(x / 1e9, 3)}B"


@dataclass(frozen=True)
class Napkin11:
    """:func:`napkin_1_1` (``sim_s`` and ``rounds`` are None without ``simulate``)."""

    params: str
    gpus: int
    beta_Bps: float
    alpha_s: float
    bpv: int
    params_sci: str
    m_bytes: float
    factor: float
    tbw_s: float
    steps: int
    tlat_s: float
    tlat_ms_s: float
    total_s: float
    sim_s: float | None
    rounds: int | None
    table_alpha_s: float
    total_table_s: float
    run_share_frac: float
    run_n: int


def napkin_1_1(params: float = PARAMS_70B, gpus: int = NM_1_1_GPUS, link: Link = LINK_NM_1_1,
               bytes_per_value: int = BF16_BYTES, simulate: bool = True, run_share: float = 0.01,
               table: Link = IB_NDR_CHAPTER) -> Napkin11:
    """Napkin Math 1.1: a ring all-reduce of a 70B model's BF16 gradients on ``gpus`` GPUs.

    ``m_bytes``, ``factor`` 2(N−1)/N, ``tbw_s`` = factor·M/β, ``steps`` 2(N−1), ``tlat_s``
    (and ``tlat_ms_s``, the same, printed in ms) = 2(N−1)·α, ``total_s`` (closed form), with
    ``simulate`` the virtual cluster's ``sim_s`` and ``rounds`` (a size-only ring on a
    :class:`~commbook.topology.Switch` built from ``link``); the total at ``table``'s α
    (Table 1's) for comparison, and ``run_n``, the size at which the latency term is
    ``run_share`` of the bandwidth term.

    >>> round(napkin_1_1(simulate=False).total_s * 1e3, 3)
    5512.689
    """
    gpus = check_p(gpus, "gpus")
    m = gradient_bytes(params, bytes_per_value)
    factor = 2 * (gpus - 1) / gpus
    sim = all_reduce(VirtualCluster(Switch(gpus, link)), nbytes=m, algorithm="ring") if simulate else None
    lat = 2 * (gpus - 1) * link.alpha
    return Napkin11(billions(params), gpus, link.beta, link.alpha, bytes_per_value,
                    f"{fmt_number(params / 1e10)} × 10¹⁰", m, factor, factor * m / link.beta, 2 * (gpus - 1), lat,
                    lat, t_formula("ring", gpus, m, link.alpha, link.beta), sim.time if sim else None,
                    sim.rounds if sim else None, table.alpha, t_formula("ring", gpus, m, table.alpha, link.beta),
                    run_share, round(run_share * m / (link.beta * link.alpha)))


SYNC_SHARE_RANGE = (0.30, 0.70)
"""The share of each step that gradient synchronization takes at scale, as the chapter
quotes it (no derivation and no source given)."""
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


@dataclass(frozen=True)
class Sync:
    """The cost of synchronization: the chapter's range, the zero-copy saving, a 60 %
    efficient algorithm, and the GPU-hours a halved all-reduce saves."""

    lo_frac: float
    hi_frac: float
    zc_bytes: float
    eff_frac: float
    eff_t_s: float
    half_steps: int
    half_gpuh: int
    half_saved_s: float


def sync_facts() -> Sync:
    """The section's numbers on Napkin Math 1.1's all-reduce.

    >>> sync_facts().half_steps
    100000
    """
    nm = napkin_1_1(simulate=False)
    lo, hi = SYNC_SHARE_RANGE
    return Sync(lo, hi, zero_copy_host_bytes(nm.m_bytes), EFFICIENCY_60, at_efficiency(nm.total_s), HALVING_STEPS,
                round(gpu_hours_saved(nm.total_s, nm.gpus)), nm.total_s / 2)
