"""The physics under the α–β model: energy per bit, the speed of light in fiber, and the
bandwidth of each interconnect generation.

Core level: imports only :mod:`commbook.checks` and :mod:`commbook.units`.

Energy per bit (chapter Figure 1)
---------------------------------
The chapter draws four tiers at 0.5, 20, 100 and 1,000 pJ/bit and says it plots the *high
end* of published ranges.  :data:`ENERGY` keeps, for each tier, the figure's value next to
the range the sources consulted here actually give (``low_pj``, ``high_pj``) and which
source each end comes from.  Two tiers fall outside those ranges:

* NVLink, 100 pJ/bit: NVIDIA's own figure is 1.3 pJ/bit, "5 times more energy efficient
  than PCIe Gen 5" (so a PCIe Gen5 link is ≈6.5 pJ/bit).  The figure's value is ~15× the
  highest per-link number found; an NVSwitch traversal adds a switch chip, which no source
  consulted here puts at anything like 90 pJ/bit.
* InfiniBand, 1,000 pJ/bit: one 400 Gb/s optical transceiver draws 8 W typical, 9 W
  maximum (NVIDIA datasheet), i.e. 20–22.5 pJ/bit; a link has one at each end (40–45
  pJ/bit).  The chapter's own energy estimate uses 30 pJ/bit — inside that range — while
  its figure uses 1,000 (inventory flag F2: both are pinned by the tests).

All-reduce energy
-----------------
:func:`allreduce_energy` is the chapter's estimate: bytes per GPU × 8 bits × pJ/bit × GPUs ×
a data-movement factor of 2 (a ring all-reduce makes each GPU send 2(p−1)/p of its buffer;
:func:`ring_traffic_factor` gives the exact value).  It counts one link crossing per byte
sent, nothing for switches or memory.

Interconnect generations (chapter Figure 3)
-------------------------------------------
:data:`GENERATIONS` holds PCIe (x16), NVLink (per GPU) and InfiniBand (per 4x port), each
bandwidth *computed* from lanes × lane rate × line-code efficiency (or links × per-link
rate) as the cited specification states them, in bytes/s per direction.
:func:`bandwidth_ratio` and :func:`contemporary_pairs` give the intra/inter ratio for a
stated pairing.  With the rule "each intra-node generation against the newest InfiniBand
generation of its year" PCIe x16 is only 1.3–2.3× the network port and NVLink 6–12×;
whether the gap "widens" to 18× depends on pairing B200 (NVLink 5) with the NDR NICs the
DGX B200 ships with rather than with XDR (inventory flag F4).
"""
from __future__ import annotations

from dataclasses import dataclass

from .checks import check_count, check_nonneg, check_p, check_positive, check_real, check_size, finite_time

__all__ = [
    "PJ", "EnergyPerBit", "ENERGY", "HOROWITZ_2014", "HBM2_PJ_PER_BIT", "NVIDIA_NVLINK_PJ_PER_BIT",
    "NVLINK_VS_PCIE5_EFFICIENCY", "OPTICAL_400G_MODULE_W", "NDR_LINE_RATE_BPS", "transceiver_pj_per_bit",
    "energy_joules", "allreduce_energy", "ring_traffic_factor", "energy_ratio",
    "C_VACUUM", "FIBER_GROUP_INDEX_SMF28", "FIBER_SPEED_CHAPTER", "fiber_speed",
    "propagation_delay", "bandwidth_delay_product",
    "Interconnect", "GENERATIONS", "generation", "bandwidth_ratio", "contemporary_pairs",
    "DGX_B200_NIC",
]

PJ = 1e-12
"""One picojoule in joules."""

# ============================================================================ energy per bit
_HOROWITZ = ("M. Horowitz, 'Computing's energy problem (and what we can do about it)', ISSCC 2014, "
             "doi:10.1109/ISSCC.2014.6757323, energy table (45 nm, 0.9 V): 64-bit cache read "
             "8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ; 64-bit DRAM read 1.3-2.6 nJ")
HOROWITZ_2014 = {
    "sram_8KB_64bit_pJ": 10.0,
    "sram_32KB_64bit_pJ": 20.0,
    "sram_1MB_64bit_pJ": 100.0,
    "dram_64bit_pJ": (1300.0, 2600.0),
}
"""Horowitz (ISSCC 2014) energy per 64-bit access, pJ (45 nm).  Source: see ``_HOROWITZ``."""

_OCONNOR = ("M. O'Connor et al., 'Fine-Grained DRAM: Energy-Efficient DRAM for Extreme Bandwidth "
            "Systems', MICRO-50 (2017), doi:10.1145/3123939.3124545: HBM2 access ≈3.9 pJ/bit "
            "(https://research.nvidia.com/publication/2017-10_fine-grained-dram-energy-efficient-dram-extreme-bandwidth-systems)")
HBM2_PJ_PER_BIT = 3.9
"""HBM2 access energy, ≈3.9 pJ/bit (O'Connor et al., MICRO-50 2017)."""

_NVLINK_BLOG = ("NVIDIA blog 'What Is NVLink?' (2023), https://blogs.nvidia.com/blog/what-is-nvidia-nvlink/: "
                "'NVLink is 5 times more energy efficient than PCIe Gen 5, with data transmission that "
                "consumes just 1.3 picojoules per bit' (the NVLink-C2C figure of Grace Hopper)")
NVIDIA_NVLINK_PJ_PER_BIT = 1.3
"""NVLink energy per bit as NVIDIA states it (1.3 pJ/bit)."""
NVLINK_VS_PCIE5_EFFICIENCY = 5.0
"""NVIDIA: NVLink is 5× more energy efficient than PCIe Gen5 (so PCIe Gen5 ≈ 6.5 pJ/bit)."""

_OPTICS = ("NVIDIA MMA4Z00-NS400 / MMA1Z00-NS400 400Gb/s single-port OSFP/QSFP112 multimode transceiver "
           "product specifications, https://docs.nvidia.com/networking/display/MMA4Z00NS400T: in 400Gb/s "
           "mode 'draws 9 Watts maximum or 8 Watts typical'")
OPTICAL_400G_MODULE_W = (8.0, 9.0)
"""Typical and maximum power (W) of one NVIDIA 400 Gb/s (NDR) optical transceiver."""
NDR_LINE_RATE_BPS = 400e9
"""InfiniBand NDR data rate per 4x port, bits/s (IBTA roadmap; see :data:`GENERATIONS`)."""


def transceiver_pj_per_bit(watts: float, bits_per_s: float, modules: int = 1) -> float:
    """Energy per bit (pJ) of ``modules`` optical transceivers drawing ``watts`` each at
    ``bits_per_s``: ``modules · watts / bits_per_s``.  A link has one module at each end.

    One 400 Gb/s module at 8 W typical; both ends of a link at 9 W maximum:

    >>> round(transceiver_pj_per_bit(8.0, 400e9), 9), round(transceiver_pj_per_bit(9.0, 400e9, modules=2), 9)
    (20.0, 45.0)
    """
    watts = check_positive(watts, "watts", "a power (W)")
    bits_per_s = check_positive(bits_per_s, "bits_per_s", "a line rate (bit/s)")
    return check_count(modules, "modules") * watts / bits_per_s / PJ


@dataclass(frozen=True)
class EnergyPerBit:
    """One tier of the chapter's Figure 1: its value and the published range.

    ``figure_pj`` is the chapter's number; ``low_pj``/``high_pj`` the range the cited
    sources give (pJ per bit moved); ``source`` names where each end comes from.

    >>> ib = ENERGY["IB"]
    >>> ib.figure_pj, (round(ib.low_pj, 9), round(ib.high_pj, 9)), ib.figure_in_range
    (1000.0, (20.0, 45.0), False)
    """

    name: str
    scope: str
    distance: str
    figure_pj: float
    low_pj: float
    high_pj: float
    source: str
    note: str = ""

    @property
    def figure_in_range(self) -> bool:
        """Whether the chapter's value lies inside the published range."""
        return self.low_pj <= self.figure_pj <= self.high_pj


ENERGY: dict[str, EnergyPerBit] = {
    "SRAM": EnergyPerBit(
        "SRAM", "on-chip cache read", "~0-1 mm", 0.5,
        HOROWITZ_2014["sram_8KB_64bit_pJ"] / 64, HOROWITZ_2014["sram_1MB_64bit_pJ"] / 64,
        _HOROWITZ + "; per bit = per 64-bit access / 64 (8 KB to 1 MB arrays)"),
    "HBM": EnergyPerBit(
        "DRAM / HBM", "off-die DRAM read", "~1-10 mm (HBM) to cm (DDR)", 20.0,
        HBM2_PJ_PER_BIT, HOROWITZ_2014["dram_64bit_pJ"][1] / 64,
        _OCONNOR + " (low end, HBM2); " + _HOROWITZ + " (high end, 2.6 nJ / 64 bits, DDR-class DRAM)",
        "the figure's 20 pJ/bit is the low end of Horowitz's DDR-class range and ~5x the HBM2 figure"),
    "NVLink": EnergyPerBit(
        "NVLink 4.0", "GPU-GPU link", "~0.5-1 m", 100.0,
        NVIDIA_NVLINK_PJ_PER_BIT, NVIDIA_NVLINK_PJ_PER_BIT * NVLINK_VS_PCIE5_EFFICIENCY,
        _NVLINK_BLOG + "; high end = PCIe Gen5 at 5 x 1.3 pJ/bit",
        "the figure's 100 pJ/bit is ~15x the highest per-link figure found (not in range)"),
    "IB": EnergyPerBit(
        "InfiniBand NDR", "optical link, 400 Gb/s", "~10-100 m", 1000.0,
        transceiver_pj_per_bit(OPTICAL_400G_MODULE_W[0], NDR_LINE_RATE_BPS),
        transceiver_pj_per_bit(OPTICAL_400G_MODULE_W[1], NDR_LINE_RATE_BPS, modules=2),
        _OPTICS + "; low end one module at 8 W / 400 Gb/s, high end both ends of a link at 9 W",
        "the figure's 1,000 pJ/bit is ~22x a whole optical link; the chapter's own estimate "
        "(30 pJ/bit) lies inside the range"),
}
"""Chapter Figure 1's tiers with the published ranges (pJ/bit); keys SRAM, HBM, NVLink, IB."""


def energy_ratio(tier: str, baseline: str = "SRAM", use: str = "figure") -> float:
    """Energy of ``tier`` over ``baseline`` (the figure's 40×, 200×, 2,000× badges for
    ``use="figure"``; ``"low"``/``"high"`` use the published range's ends).

    >>> energy_ratio("HBM"), energy_ratio("NVLink"), energy_ratio("IB")     # the figure's badges
    (40.0, 200.0, 2000.0)
    """
    fields = {"figure": "figure_pj", "low": "low_pj", "high": "high_pj"}
    if use not in fields:
        raise ValueError(f"use must be one of {', '.join(fields)}, got {use!r}")
    for name in (tier, baseline):
        if name not in ENERGY:
            raise ValueError(f"unknown tier {name!r}; valid: {', '.join(ENERGY)}")
    return getattr(ENERGY[tier], fields[use]) / getattr(ENERGY[baseline], fields[use])


def ring_traffic_factor(p: int) -> float:
    """Bytes each rank sends in a ring all-reduce, per byte of its buffer: 2(p−1)/p
    (→ 2 for large p, the chapter's factor).

    >>> ring_traffic_factor(8), ring_traffic_factor(1024)
    (1.75, 1.998046875)
    """
    p = check_p(p)
    return 2 * (p - 1) / p


def energy_joules(nbytes: float, pj_per_bit: float) -> float:
    """Energy (J) to move ``nbytes`` once at ``pj_per_bit``: nbytes × 8 × pJ/bit.

    >>> round(energy_joules(1e9, 30.0), 12)          # 1 GB at 30 pJ/bit: 8e9 bits x 30 pJ
    0.24
    """
    nbytes = check_size(nbytes, "nbytes")
    pj_per_bit = check_nonneg(pj_per_bit, "pj_per_bit", "an energy per bit (pJ)")
    return finite_time(nbytes * 8 * pj_per_bit * PJ, "the energy of (nbytes, pj_per_bit)")


def allreduce_energy(gpus: int, nbytes: float, pj_per_bit: float, factor: float = 2.0) -> float:
    """Energy (J) of one all-reduce of ``nbytes`` per GPU over ``gpus`` GPUs:
    ``factor × nbytes × 8 × pJ/bit × gpus``.

    ``factor`` = 2 is the chapter's data-movement factor; pass
    ``ring_traffic_factor(gpus)`` for the exact ring value 2(p−1)/p.

    >>> round(allreduce_energy(1024, 1e9, 30.0), 9)  # 2 x 1024 GPUs x 0.24 J
    491.52
    """
    gpus = check_p(gpus, "gpus")
    factor = check_nonneg(factor, "factor", "a data-movement factor")
    what = "the energy of (gpus, nbytes, pj_per_bit, factor)"
    return finite_time(factor * gpus * energy_joules(nbytes, pj_per_bit), what)


# ============================================================================ propagation
C_VACUUM = 299_792_458.0
"""Speed of light in vacuum, m/s (exact by the SI definition of the metre)."""
FIBER_GROUP_INDEX_SMF28 = 1.4682
"""Effective group index of Corning SMF-28 Ultra single-mode fiber at 1550 nm (Corning
SMF-28 Ultra Optical Fiber product information sheet: 1.4676 at 1310 nm, 1.4682 at 1550 nm)."""
FIBER_SPEED_CHAPTER = 2.0e8
"""The chapter's round speed of light in fiber, 200,000 km/s (footnote 4): 5 µs per km."""


def fiber_speed(group_index: float = FIBER_GROUP_INDEX_SMF28) -> float:
    """Signal speed in fiber, c / group index (m/s); ≈2.04e8 m/s for SMF-28 at 1550 nm.

    >>> round(fiber_speed() / 1e8, 4), fiber_speed(1.5) == C_VACUUM / 1.5
    (2.0419, True)
    """
    group_index = check_real(group_index, "group_index", "a group index", lo=1.0)
    return C_VACUUM / group_index


def propagation_delay(meters: float, speed: float = FIBER_SPEED_CHAPTER) -> float:
    """One-way time of flight (s) over ``meters`` at ``speed`` (m/s; the chapter's 2e8 by
    default, so 1 km → 5 µs and 100 m → 500 ns).

    >>> round(propagation_delay(1000) * 1e6, 9), round(propagation_delay(100) * 1e9, 9)   # µs, ns
    (5.0, 500.0)
    """
    meters = check_size(meters, "meters")
    speed = check_real(speed, "speed", "a speed in (0, c] m/s", lo=0.0, lo_open=True, hi=C_VACUUM)
    return meters / speed


def bandwidth_delay_product(bytes_per_s: float, meters: float, speed: float = FIBER_SPEED_CHAPTER) -> float:
    """Bytes in flight on a link of ``bytes_per_s`` over ``meters``: rate × one-way delay.

    >>> round(bandwidth_delay_product(50e9, 1000))   # 50 GB/s x 5 µs over 1 km
    250000
    """
    bytes_per_s = check_positive(bytes_per_s, "bytes_per_s", "a bandwidth (bytes/s)")
    return bytes_per_s * propagation_delay(meters, speed)


# ============================================================================ generations
@dataclass(frozen=True)
class Interconnect:
    """One interconnect generation: one-direction bandwidth ``beta`` (bytes/s) of the
    stated ``scope`` (x16 slot, per GPU, per 4x port), computed as ``lanes × lane_bps ×
    efficiency / 8``.

    >>> g = generation("PCIe Gen5 x16")              # 16 lanes x 32 GT/s x 128/130, in bytes
    >>> round(g.beta / 1e9, 3), generation("NVLink 4.0").bidirectional / 1e9
    (63.015, 900.0)
    """

    family: str
    name: str
    year: int
    lanes: int
    lane_bps: float
    efficiency: float
    scope: str
    source: str

    @property
    def beta(self) -> float:
        """One-direction bandwidth in bytes/s."""
        return self.lanes * self.lane_bps * self.efficiency / 8

    @property
    def bidirectional(self) -> float:
        """Both directions together (what NVLink datasheets quote), bytes/s."""
        return 2 * self.beta


_PCIE = ("PCI-SIG, PCI Express Base Specification {v} ({y}): {gt} GT/s per lane, 128b/130b encoding; "
         "x16 = 16 lanes per direction; year = first NVIDIA data-center GPU with it ({gpu})")
_NVL = ("NVIDIA {doc}: {links} NVLinks x {per} GB/s per direction = {tot} GB/s bidirectional per GPU")
_IB = ("InfiniBand Trade Association, InfiniBand Roadmap (https://www.infinibandta.org/infiniband-roadmap/): "
       "{name} 4x port, {lane} per lane, {code}; year of first products ({prod})")

GENERATIONS: dict[str, Interconnect] = {g.name: g for g in [
    Interconnect("PCIe", "PCIe Gen3 x16", 2012, 16, 8e9, 128 / 130, "x16 slot",
                 _PCIE.format(v="3.0", y="2010", gt=8, gpu="Tesla K20, 2012")),
    Interconnect("PCIe", "PCIe Gen4 x16", 2020, 16, 16e9, 128 / 130, "x16 slot",
                 _PCIE.format(v="4.0", y="2017", gt=16, gpu="A100, 2020")),
    Interconnect("PCIe", "PCIe Gen5 x16", 2022, 16, 32e9, 128 / 130, "x16 slot",
                 _PCIE.format(v="5.0", y="2019", gt=32, gpu="H100, 2022")),
    Interconnect("NVLink", "NVLink 1.0", 2016, 4, 160e9, 1.0, "per GPU (P100)",
                 _NVL.format(doc="Tesla P100 whitepaper (2016)", links=4, per=20, tot=160)),
    Interconnect("NVLink", "NVLink 2.0", 2017, 6, 200e9, 1.0, "per GPU (V100)",
                 _NVL.format(doc="Tesla V100 GPU Architecture whitepaper (2017)", links=6, per=25, tot=300)),
    Interconnect("NVLink", "NVLink 3.0", 2020, 12, 200e9, 1.0, "per GPU (A100)",
                 _NVL.format(doc="A100 Tensor Core GPU Architecture whitepaper (2020)", links=12, per=25, tot=600)),
    Interconnect("NVLink", "NVLink 4.0", 2022, 18, 200e9, 1.0, "per GPU (H100)",
                 _NVL.format(doc="H100 Tensor Core GPU Architecture whitepaper (2022)", links=18, per=25, tot=900)),
    Interconnect("NVLink", "NVLink 5.0", 2024, 18, 400e9, 1.0, "per GPU (B200)",
                 _NVL.format(doc="Blackwell Architecture Technical Brief / DGX B200 datasheet (2024)",
                             links=18, per=50, tot=1800)),
    Interconnect("InfiniBand", "FDR", 2011, 4, 14.0625e9, 64 / 66, "per 4x port",
                 _IB.format(name="FDR", lane="14.0625 Gb/s", code="64b/66b", prod="ConnectX-3, 2011")),
    Interconnect("InfiniBand", "EDR", 2014, 4, 25e9, 1.0, "per 4x port",
                 _IB.format(name="EDR", lane="25 Gb/s data (25.78125 GBd, 64b/66b)", code="100 Gb/s data rate",
                            prod="ConnectX-4, 2014")),
    Interconnect("InfiniBand", "HDR", 2018, 4, 50e9, 1.0, "per 4x port",
                 _IB.format(name="HDR", lane="50 Gb/s PAM4", code="200 Gb/s data rate", prod="ConnectX-6, 2018")),
    Interconnect("InfiniBand", "NDR", 2021, 4, 100e9, 1.0, "per 4x port",
                 _IB.format(name="NDR", lane="100 Gb/s PAM4", code="400 Gb/s data rate",
                            prod="Quantum-2 / ConnectX-7, 2021")),
    Interconnect("InfiniBand", "XDR", 2024, 4, 200e9, 1.0, "per 4x port",
                 _IB.format(name="XDR", lane="200 Gb/s PAM4", code="800 Gb/s data rate",
                            prod="Quantum-X800 / ConnectX-8, announced 2024")),
]}
"""Interconnect generations by name; ``beta`` is bytes/s per direction."""

DGX_B200_NIC = "NDR"
"""The DGX B200 ships 8 single-port ConnectX-7 NICs at 400 Gb/s (NVIDIA DGX B200 datasheet,
2024), i.e. NDR, not XDR: the pairing behind an 18× gap."""


def generation(name: str) -> Interconnect:
    """Look up an interconnect generation by name (e.g. ``"NVLink 4.0"``, ``"NDR"``).

    >>> generation("NVLink 4.0").beta / 1e9
    450.0
    >>> generation("NVLink 6")
    Traceback (most recent call last):
    ValueError: unknown interconnect generation 'NVLink 6'; valid: PCIe Gen3 x16, ...
    """
    if name not in GENERATIONS:
        raise ValueError(f"unknown interconnect generation {name!r}; valid: {', '.join(GENERATIONS)}")
    return GENERATIONS[name]


def bandwidth_ratio(intra: str, inter: str) -> float:
    """One-direction bandwidth of ``intra`` over ``inter`` (e.g. NVLink 5.0 / NDR = 18).

    >>> bandwidth_ratio("NVLink 5.0", "NDR"), bandwidth_ratio("NVLink 5.0", "XDR")
    (18.0, 9.0)
    """
    return generation(intra).beta / generation(inter).beta


def contemporary_pairs(family: str, overrides: dict[str, str] | None = None) -> list[tuple[str, str, float]]:
    """Pair every generation of ``family`` ("PCIe" or "NVLink") with the newest InfiniBand
    generation whose year is not later than its own, and return ``(intra, inter, ratio)``.

    ``overrides`` maps an intra generation to the InfiniBand generation to use instead,
    e.g. ``{"NVLink 5.0": DGX_B200_NIC}`` for the NIC the DGX B200 actually ships with.

    >>> contemporary_pairs("NVLink")[-1], contemporary_pairs("NVLink", {"NVLink 5.0": DGX_B200_NIC})[-1]
    (('NVLink 5.0', 'XDR', 9.0), ('NVLink 5.0', 'NDR', 18.0))
    """
    if family not in ("PCIe", "NVLink"):
        raise ValueError(f"family must be 'PCIe' or 'NVLink', got {family!r}")
    overrides = dict(overrides or {})
    ib = sorted((g for g in GENERATIONS.values() if g.family == "InfiniBand"), key=lambda g: g.year)
    out = []
    for g in sorted((g for g in GENERATIONS.values() if g.family == family), key=lambda g: g.year):
        if g.name in overrides:
            inter = generation(overrides.pop(g.name)).name
        else:
            older = [x for x in ib if x.year <= g.year]
            if not older:
                raise ValueError(f"no InfiniBand generation as old as {g.name} ({g.year})")
            inter = older[-1].name
        out.append((g.name, inter, bandwidth_ratio(g.name, inter)))
    if overrides:
        raise ValueError(f"overrides name generations not in {family}: {', '.join(overrides)}")
    return out
