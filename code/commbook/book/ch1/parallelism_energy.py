r"""Chapter "Collective communication", §1.1: light in fibre (:func:`physics_facts`), Figure 1's
tiers of energy per bit (:func:`energy_facts`) and the all-reduce energy estimate after it
(:func:`energy_estimate`: the 10,000-GPU all-reduce at 30 pJ/bit, 4.8 kJ, and at Figure 1's
InfiniBand value, 160 kJ), each a typed result the page glues as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import physics
from ...hardware import IB_NDR_CHAPTER, Link
from ...units import fmt_number
from .inputs import CHAPTER_ENERGY_ESTIMATE

__all__ = ["Physics", "physics_facts", "Energy", "energy_facts", "H100_TDP_W", "EnergyEstimate", "energy_estimate"]


@dataclass(frozen=True)
class Physics:
    """Light in fibre: the chapter's speed, the delay over a kilometre and a rack row, over a
    kilometre of SMF-28, and the bytes in flight on InfiniBand NDR."""

    speed: str
    km_s: float
    rack_m: str
    rack_s: float
    smf_km_s: float
    smf_index: str
    bdp_beta_Bps: float
    bdp_rack_bytes: float
    bdp_km_bytes: float


def physics_facts(km: float = 1000.0, rack: float = 100.0, link: Link = IB_NDR_CHAPTER) -> Physics:
    """Propagation over ``km`` and ``rack`` metres (:mod:`commbook.physics`).

    >>> physics_facts().km_s
    5e-06
    """
    return Physics(f"{fmt_number(physics.FIBER_SPEED_CHAPTER / 1e3)} km/s", physics.propagation_delay(km),
                   f"{fmt_number(rack)} m", physics.propagation_delay(rack),
                   physics.propagation_delay(km, physics.fiber_speed()), f"{physics.FIBER_GROUP_INDEX_SMF28}",
                   link.beta, physics.bandwidth_delay_product(link.beta, rack),
                   physics.bandwidth_delay_product(link.beta, km))


@dataclass(frozen=True)
class Energy:
    """Figure 1's tiers (pJ/bit, as the figure draws them) and their ratios to SRAM, with
    the other energy figures the section quotes."""

    SRAM: str
    HBM: str
    NVLink: str
    IB: str
    HBM_x: str
    NVLink_x: str
    IB_x: str
    fabric: str
    nvl_nvidia: float
    nvl_pcie: float
    optic_w: str
    ndr: str


def energy_facts(fabric_m: int = 50) -> Energy:
    """Figure 1's values (:data:`commbook.physics.ENERGY`) as the prose quotes them.

    >>> energy_facts().IB
    '1,000'
    """
    E = physics.ENERGY
    pj = {k: fmt_number(E[k].figure_pj) for k in ("SRAM", "HBM", "NVLink", "IB")}
    x = {k: fmt_number(physics.energy_ratio(k), 4) for k in ("HBM", "NVLink", "IB")}
    lo, hi = physics.OPTICAL_400G_MODULE_W
    return Energy(pj["SRAM"], pj["HBM"], pj["NVLink"], pj["IB"], x["HBM"], x["NVLink"], x["IB"], f"{fabric_m} m",
                  physics.NVIDIA_NVLINK_PJ_PER_BIT, physics.NVLINK_VS_PCIE5_EFFICIENCY,
                  f"{fmt_number(lo)}–{fmt_number(hi)} W", f"{fmt_number(physics.NDR_LINE_RATE_BPS / 1e9)} Gb/s")


H100_TDP_W = 700.0
"""H100 SXM maximum thermal design power, W (NVIDIA H100 Tensor Core GPU datasheet: "up to
700W (configurable)")."""


def _kj(joules: float, digits: int = 3) -> str:
    return f"{fmt_number(joules / 1e3, digits)} kJ"


@dataclass(frozen=True)
class EnergyEstimate:
    """:func:`energy_estimate`: its inputs, the energies (J, and as the page prints them, in
    kJ), the GPUs' power for scale and the estimate's share of it."""

    gpus: int
    n_bytes: float
    pj: float
    factor: float
    joules: float
    joules_figure_ib: float
    joules_ib_low: float
    joules_ib_high: float
    joules_ring: float
    gpu_joules_per_s: float
    j: str
    fig_ib: str
    ib_range: str
    ring: str
    tdp: str
    gpu_mj: str
    share_frac: float
    share_ib_frac: float


def energy_estimate(gpus: int | None = None, nbytes: float | None = None,
                    pj_per_bit: float | None = None, factor: float | None = None) -> EnergyEstimate:
    """The all-reduce energy estimate after Figure 1, with its inputs defaulting to the
    chapter's (:data:`commbook.book.ch1.inputs.CHAPTER_ENERGY_ESTIMATE`: 10,000 GPUs, 1 GB each,
    30 pJ/bit, factor 2).

    Returns ``joules`` at ``pj_per_bit``; ``joules_figure_ib`` at Figure 1's InfiniBand
    value (1,000 pJ/bit); ``joules_ib_low``/``joules_ib_high`` at the ends of InfiniBand's
    published range; ``joules_ring`` with the exact ring factor 2(p−1)/p;
    ``gpu_joules_per_s`` = GPUs × H100 TDP, for scale; the same as text; and the shares of
    one second of the GPUs' power.

    >>> energy_estimate().j
    '4.8 kJ'
    """
    ch = CHAPTER_ENERGY_ESTIMATE
    gpus = ch["gpus"] if gpus is None else gpus
    nbytes = ch["nbytes"] if nbytes is None else nbytes
    pj = ch["pj_per_bit"] if pj_per_bit is None else pj_per_bit
    factor = ch["factor"] if factor is None else factor
    ib = physics.ENERGY["IB"]
    e = lambda p_: physics.allreduce_energy(gpus, nbytes, p_, factor)  # noqa: E731
    j, j_ib, lo, hi = e(pj), e(ib.figure_pj), e(ib.low_pj), e(ib.high_pj)
    ring = physics.allreduce_energy(gpus, nbytes, pj, physics.ring_traffic_factor(gpus))
    power = gpus * H100_TDP_W
    return EnergyEstimate(gpus, nbytes, pj, factor, j, j_ib, lo, hi, ring, power, _kj(j), _kj(j_ib),
                          f"{_kj(lo)} – {_kj(hi)}", _kj(ring, 5), f"{fmt_number(H100_TDP_W)} W",
                          f"{fmt_number(power / 1e6)} MJ", j / power, j_ib / power)
