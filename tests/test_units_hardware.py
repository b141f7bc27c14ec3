"""Units say which convention a number uses; every hardware constant carries its source."""
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from commbook import hardware, units
from commbook.units import GB, KB, KiB, MB, MiB


def test_decimal_and_binary_units_differ():
    assert (KB, MB, GB) == (1e3, 1e6, 1e9)          # SI prefixes
    assert (KiB, MiB) == (1024, 1024**2)            # IEC prefixes
    # the lecture's "8 MB" broadcast needs 8 MiB (flag F.25): the two print differently
    assert units.fmt_bytes(8 * MiB) == "8.39 MB" and units.fmt_bytes(8 * MiB, binary=True) == "8 MiB"
    assert units.fmt_bytes(8 * MB, binary=True) == "7.63 MiB"


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


def test_unit_is_chosen_after_rounding():
    """Defect: the unit was chosen before rounding, so 999,999 B printed "1e+03 KB" and
    0.99999 s printed "1000 ms"."""
    assert units.fmt_bytes(999_999) == "1 MB"
    assert units.fmt_bytes(999_999, binary=True) == "977 KiB"
    assert units.fmt_bytes(2**20 - 1, binary=True) == "1 MiB"
    assert units.fmt_time(0.99999) == "1 s"
    assert units.fmt_time(999.99999e-6) == "1 ms"
    assert units.fmt_time(-0.99999) == "-1 s"


_BYTE_UNITS = {"B": 1, "KB": KB, "MB": MB, "GB": GB, "TB": units.TB,
               "KiB": KiB, "MiB": MiB, "GiB": units.GiB, "TiB": units.TiB}
_TIME_UNITS = {"ns": units.ns, "µs": units.us, "ms": units.ms, "s": 1.0}


def _check_printed(text, value, scales, first, last, digits, top=1000):
    """The printed number lies in [1, top) for its unit (below 1 only in the smallest
    unit, ``top`` or more only in the largest; ``top`` is 1024 for binary units, where
    1000-1023 MiB is still under 1 GiB) and reads back as ``value`` to ``digits``
    significant digits."""
    number, unit = text.split(" ")
    x = abs(float(number))
    assert unit in scales, text
    assert x >= 1 or unit == first or value == 0, text
    assert x < top or unit == last, text
    assert math.isclose(float(number) * scales[unit], value, rel_tol=0.5 * 10 ** (1 - digits) + 1e-12), text


@settings(max_examples=400, deadline=None)
@given(exponent=st.floats(-3, 16), mantissa=st.floats(1, 10, exclude_max=True), binary=st.booleans())
@example(exponent=5.0, mantissa=9.99999, binary=False)       # 999,999 B, just below a unit
@example(exponent=8.0, mantissa=9.999999, binary=False)
def test_fmt_bytes_number_in_one_to_a_thousand(exponent, mantissa, binary):
    value = mantissa * 10 ** exponent
    text = units.fmt_bytes(value, binary=binary)
    _check_printed(text, value, _BYTE_UNITS, "B", "TiB" if binary else "TB", 3, 1024 if binary else 1000)


@settings(max_examples=400, deadline=None)
@given(exponent=st.floats(-13, 5), mantissa=st.floats(1, 10, exclude_max=True), sign=st.sampled_from([1, -1]))
@example(exponent=-1.0, mantissa=9.9999, sign=1)               # 0.99999 s
def test_fmt_time_number_in_one_to_a_thousand(exponent, mantissa, sign):
    value = sign * mantissa * 10 ** exponent
    _check_printed(units.fmt_time(value), value, _TIME_UNITS, "ns", "s", 4)


def test_fmt_with_fewer_digits_at_a_decimal_tie():
    assert units.fmt_bytes(995, digits=2) == "1 KB"


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
