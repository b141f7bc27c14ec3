"""commbook.physics against what its sources state.

Energy per bit: the chapter's Figure 1 tiers and badges, its 10,000-GPU estimate, and the
published ranges (Horowitz ISSCC 2014, O'Connor MICRO 2017, NVIDIA's NVLink statement,
NVIDIA's 400G transceiver datasheet).  Propagation: the chapter's footnote 4.  Generations:
the PCI-SIG / NVIDIA / IBTA numbers the inventory lists for Figure 3 (B.1), and the flag F4
on the "≈10× throughout" claim.  References: ../shared/seed_inventory.md (B.1, C.2, D.2, F).
"""
import math

import pytest

from commbook import physics
from commbook.book.ch1.inputs import CHAPTER_ENERGY_ESTIMATE, FIGURE3_CLAIMED_RATIO
from commbook.hardware import IB_HDR, IB_NDR, NVLINK4, NVLINK5
from commbook.physics import (ENERGY, GENERATIONS, allreduce_energy, bandwidth_ratio,
                              contemporary_pairs, energy_joules, energy_ratio, fiber_speed,
                              generation, propagation_delay, ring_traffic_factor,
                              transceiver_pj_per_bit)
from commbook.units import GB, KB, ns, us


# ============================================================================ energy per bit
def test_figure1_tiers_and_badges():
    """Figure 1: 0.5 / 20 / 100 / 1,000 pJ/bit; badges 40×, 200×, 2,000× vs SRAM."""
    assert [ENERGY[k].figure_pj for k in ("SRAM", "HBM", "NVLink", "IB")] == [0.5, 20, 100, 1000]
    assert energy_ratio("HBM") == pytest.approx(40)
    assert energy_ratio("NVLink") == pytest.approx(200)
    assert energy_ratio("IB") == pytest.approx(2000)


def test_chapter_energy_estimate_and_flag_f2():
    """Chapter: 10,000 GPUs × 1 GB × 30 pJ/bit × 2 ≈ 4.8 kJ per all-reduce (C.2 ✓).
    Flag F2: 30 pJ/bit is none of Figure 1's tiers; at the figure's IB value (1,000 pJ/bit)
    the same estimate is 160 kJ."""
    est = CHAPTER_ENERGY_ESTIMATE
    e30 = allreduce_energy(est["gpus"], est["nbytes"], est["pj_per_bit"], est["factor"])
    assert round(e30 / 1e3, 1) == 4.8 == est["stated_joules"] / 1e3
    assert 30 not in {t.figure_pj for t in ENERGY.values()}
    e1000 = allreduce_energy(10_000, 1 * GB, ENERGY["IB"].figure_pj)
    assert e1000 == pytest.approx(160e3, rel=1e-12)
    assert e1000 / e30 == pytest.approx(1000 / 30)
    # the exact ring traffic 2(p-1)/p changes the estimate by 1e-4 only
    exact = allreduce_energy(10_000, 1 * GB, 30, ring_traffic_factor(10_000))
    assert exact == pytest.approx(4800 * 0.9999, rel=1e-12)
    assert round(exact / 1e3, 1) == 4.8


def test_energy_arithmetic_closed_form():
    """bytes × 8 × pJ: 1 GB at 1 pJ/bit is 8 mJ."""
    assert energy_joules(1e9, 1.0) == pytest.approx(8e-3, rel=1e-12)
    assert energy_joules(0, 30) == 0
    assert ring_traffic_factor(8) == pytest.approx(1.75)


def test_published_ranges():
    """The published ranges, from each source's stated numbers."""
    sram, hbm, nvl, ib = (ENERGY[k] for k in ("SRAM", "HBM", "NVLink", "IB"))
    # Horowitz 2014: 64-bit read of an 8 KB SRAM 10 pJ, 1 MB 100 pJ; DRAM 1.3-2.6 nJ
    assert (sram.low_pj, sram.high_pj) == pytest.approx((10 / 64, 100 / 64))
    assert hbm.high_pj == pytest.approx(2600 / 64)
    assert hbm.low_pj == pytest.approx(3.9)              # O'Connor 2017, HBM2
    # NVIDIA: NVLink 1.3 pJ/bit, 5x more efficient than PCIe Gen5
    assert (nvl.low_pj, nvl.high_pj) == pytest.approx((1.3, 6.5))
    # NVIDIA 400G transceiver: 8 W typical, 9 W max at 400 Gb/s; one module, or two per link
    assert ib.low_pj == pytest.approx(8 / 400e9 / 1e-12) == pytest.approx(20)
    assert ib.high_pj == pytest.approx(2 * 9 / 400e9 / 1e-12) == pytest.approx(45)
    for tier in ENERGY.values():
        assert tier.low_pj < tier.high_pj and tier.source


def test_figure1_values_against_the_ranges():
    """The chapter says Figure 1 plots the high end of published ranges: true for SRAM and
    DRAM/HBM (inside the range), not for NVLink (100 vs ≤ 6.5) nor IB (1,000 vs ≤ 45).
    The chapter's own 30 pJ/bit estimate lies inside the optical-link range."""
    assert ENERGY["SRAM"].figure_in_range and ENERGY["HBM"].figure_in_range
    assert not ENERGY["NVLink"].figure_in_range and not ENERGY["IB"].figure_in_range
    assert ENERGY["NVLink"].figure_pj / ENERGY["NVLink"].high_pj > 15
    assert ENERGY["IB"].figure_pj / ENERGY["IB"].high_pj > 20
    assert ENERGY["IB"].low_pj <= CHAPTER_ENERGY_ESTIMATE["pj_per_bit"] <= ENERGY["IB"].high_pj
    assert energy_ratio("IB", use="high") < energy_ratio("IB")


def test_transceiver_energy():
    """A twin-port 800G module at 17 W is 21.25 pJ/bit (17 / 800e9)."""
    assert transceiver_pj_per_bit(17, 800e9) == pytest.approx(21.25)
    assert transceiver_pj_per_bit(8, 400e9, modules=2) == pytest.approx(40)


# ============================================================================ propagation
def test_propagation_chapter_footnote():
    """Footnote 4: light in fiber ≈ 200,000 km/s → 5 µs per km; 100 m → 500 ns."""
    assert propagation_delay(1000) == pytest.approx(5 * us, rel=1e-12)
    assert propagation_delay(100) == pytest.approx(500 * ns, rel=1e-12)
    assert physics.FIBER_SPEED_CHAPTER == 2e8


def test_fiber_speed_from_group_index():
    """c / 1.4682 = 2.0419e8 m/s: the chapter's 2e8 is 2 % low, 4.90 µs per km."""
    v = fiber_speed()
    assert v == pytest.approx(299_792_458 / 1.4682, rel=1e-12)
    assert v / physics.FIBER_SPEED_CHAPTER == pytest.approx(1.021, abs=1e-3)
    assert propagation_delay(1000, v) == pytest.approx(4.8975e-6, rel=1e-4)


def test_bandwidth_delay_product():
    """An NDR port (50 GB/s) over 1 km of fiber holds 50e9 × 5e-6 = 250 KB in flight."""
    assert physics.bandwidth_delay_product(50 * GB, 1000) == pytest.approx(250 * KB)


# ============================================================================ generations
@pytest.mark.parametrize("name, gb_s", [
    ("PCIe Gen3 x16", 15.75), ("PCIe Gen4 x16", 31.5), ("PCIe Gen5 x16", 63.0),   # inventory B.1
    ("FDR", 6.8), ("EDR", 12.5), ("HDR", 25.0), ("NDR", 50.0), ("XDR", 100.0),
])
def test_generation_bandwidth_one_direction(name, gb_s):
    """Inventory B.1 (Figure 3 data): one-direction GB/s, to the inventory's rounding."""
    digits = len(str(gb_s).split(".")[1])
    assert round(generation(name).beta / GB, digits) == gb_s


@pytest.mark.parametrize("name, one_way, both", [
    ("NVLink 1.0", 80, 160), ("NVLink 2.0", 150, 300), ("NVLink 3.0", 300, 600),
    ("NVLink 4.0", 450, 900), ("NVLink 5.0", 900, 1800),
])
def test_nvlink_per_gpu(name, one_way, both):
    """NVIDIA whitepapers: per-GPU NVLink bandwidth, one direction / bidirectional."""
    g = generation(name)
    assert g.beta == pytest.approx(one_way * GB) and g.bidirectional == pytest.approx(both * GB)


def test_generations_agree_with_hardware_presets():
    """The same datasheets, typed twice: hardware's link presets and the generation table."""
    assert generation("NVLink 4.0").beta == pytest.approx(NVLINK4.beta)
    assert generation("NVLink 5.0").beta == pytest.approx(NVLINK5.beta)
    assert generation("NDR").beta == pytest.approx(IB_NDR.beta)
    assert generation("HDR").beta == pytest.approx(IB_HDR.beta)


def test_pcie_gen5_chapter_table_rounds_up():
    """Chapter Table 1 writes PCIe Gen5 as 64 GB/s; 32 GT/s × 16 × 128/130 / 8 = 63.0 GB/s."""
    assert generation("PCIe Gen5 x16").beta == pytest.approx(32e9 * 16 * 128 / 130 / 8)
    assert round(generation("PCIe Gen5 x16").beta / GB) == 63 != 64


def test_figure3_flag_f4_pcie_is_not_10x():
    """Flag F4: PCIe x16 vs the contemporary IB port is 1.3-2.3×, not ≈10×."""
    pairs = contemporary_pairs("PCIe")
    assert [(a, b) for a, b, _ in pairs] == [("PCIe Gen3 x16", "FDR"), ("PCIe Gen4 x16", "HDR"),
                                             ("PCIe Gen5 x16", "NDR")]
    assert [round(r, 1) for _, _, r in pairs] == [2.3, 1.3, 1.3]
    assert all(r < FIGURE3_CLAIMED_RATIO / 4 for _, _, r in pairs)


def test_figure3_nvlink_ratios_and_the_pairing():
    """NVLink vs the contemporary IB port: 6.4× (P100/EDR), 12×, 12×, 9×, 9× (B200/XDR) —
    flat, not widening; paired with the DGX B200's NDR NICs the last one is 18×."""
    pairs = contemporary_pairs("NVLink")
    assert [b for _, b, _ in pairs] == ["EDR", "EDR", "HDR", "NDR", "XDR"]
    assert [r for _, _, r in pairs] == pytest.approx([6.4, 12, 12, 9, 9])
    dgx = contemporary_pairs("NVLink", {"NVLink 5.0": physics.DGX_B200_NIC})
    assert dgx[-1] == ("NVLink 5.0", "NDR", pytest.approx(18))
    assert bandwidth_ratio("NVLink 4.0", "NDR") == pytest.approx(9)   # chapter's 9× (450 / 50)


def test_generation_years_in_order():
    for family in ("PCIe", "NVLink", "InfiniBand"):
        gens = [g for g in GENERATIONS.values() if g.family == family]
        assert [g.year for g in gens] == sorted(g.year for g in gens)
        assert all(g.beta > 0 and g.source for g in gens)


# ============================================================================ bad input
@pytest.mark.parametrize("call", [
    lambda: energy_joules(-1, 30), lambda: energy_joules(1, -1), lambda: energy_joules(1, math.nan),
    lambda: allreduce_energy(0, 1, 1), lambda: allreduce_energy(2, 1, 1, factor=-1),
    lambda: propagation_delay(-1), lambda: propagation_delay(1, speed=4e8),
    lambda: fiber_speed(0.5), lambda: transceiver_pj_per_bit(0, 1e9),
    lambda: transceiver_pj_per_bit(1, 1e9, modules=0), lambda: generation("NVLink 9"),
    lambda: energy_ratio("DRAM"), lambda: energy_ratio("IB", use="middle"),
    lambda: contemporary_pairs("Ethernet"), lambda: contemporary_pairs("NVLink", {"PCIe Gen3 x16": "FDR"}),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_wrong_types_raise():
    with pytest.raises(TypeError):
        energy_joules("1 GB", 30)
    with pytest.raises(TypeError):
        allreduce_energy(2.5, 1, 1)
