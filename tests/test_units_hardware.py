"""Units say which convention a number uses; every hardware constant carries its source."""
import pytest

from commbook import hardware, units
from commbook.units import GB, KB, KiB, MB, MiB


def test_decimal_and_binary_units_differ():
    assert (KB, MB, GB) == (1e3, 1e6, 1e9)
    assert (KiB, MiB) == (1024, 1024**2)
    assert 8 * MiB / (8 * MB) == pytest.approx(1.048576)


def test_formatting():
    assert units.fmt_bytes(8e6) == "8 MB"
    assert units.fmt_bytes(8 * MiB, binary=True) == "8 MiB"
    assert units.fmt_bytes(327_680) == "328 KB"
    assert units.fmt_bytes(12) == "12 B"
    assert units.fmt_time(249.111e-6) == "249.1 µs"
    assert units.fmt_time(5.113e-3) == "5.113 ms"
    assert units.fmt_time(2e-9) == "2 ns"
    assert units.fmt_rate(450e9) == "450 GB/s"
    with pytest.raises(ValueError, match="non-negative"):
        units.fmt_bytes(-1)


@pytest.mark.parametrize("name,link", list(hardware.LINKS.items()))
def test_every_link_has_a_source_and_sane_numbers(name, link):
    assert len(link.source) > 20
    assert 0 < link.alpha < 20e-6 and 1e9 <= link.beta <= 1e12
    if link.alpha_range:
        lo, hi = link.alpha_range
        assert link.alpha == pytest.approx((lo + hi) / 2)


def test_both_documents_values_exist_under_their_own_names():
    assert hardware.IB_NDR.alpha == 5e-6 and hardware.IB_NDR_CHAPTER.alpha == 2e-6
    assert hardware.IB_NDR.n_half == pytest.approx(250e3)
    assert hardware.IB_NDR_CHAPTER.n_half == pytest.approx(100e3)
    assert hardware.NVLINK4.n_half == pytest.approx(900e3)
    assert hardware.NVLINK4_CHAPTER.n_half == pytest.approx(675e3)  # the chapter's "~0.7 MB"
    assert hardware.IB_HDR.n_half == pytest.approx(87.5e3)
    assert hardware.PCIE_GEN5.n_half == pytest.approx(224e3)
    assert hardware.ROCE_100G.n_half == pytest.approx(93.75e3)  # printed as 93.7 (flag F.6)
    assert hardware.NVLINK4.beta == 18 * 25e9
    assert hardware.NVLINK_H800.beta / hardware.IB_NDR.beta == pytest.approx(3.2)


def test_chips():
    h = hardware.H100
    assert (h.bf16_flops, h.hbm_bandwidth, h.hbm_bytes) == (989e12, 3.35e12, 80e9)
    assert hardware.H200.hbm_bytes == 141e9
    assert all(len(c.source) > 20 for c in hardware.CHIPS.values())
    # lecture §0.1: an H100 reads 141 GB of weights "twenty-odd" times a second
    assert 20 < h.hbm_bandwidth / 141.1e9 < 30
