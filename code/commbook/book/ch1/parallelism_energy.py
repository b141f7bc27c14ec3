r"""Chapter "Collective communication", §1.1: light in fibre (:func:`physics_facts`) and Figure 1's
tiers of energy per bit (:func:`energy_facts`), each a typed result the page glues as it is (the
all-reduce energy estimate after Figure 1 is computed on the page).
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import physics
from ...hardware import IB_NDR_CHAPTER, Link
from ...units import fmt_number

__all__ = ["Physics", "physics_facts", "Energy", "energy_facts"]


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
