"""Explicit byte and time units, and the formatting every table uses.

The lecture mixes decimal sizes (1 MB = 10**6 B) with binary ones (1 MiB = 2**20 B);
the book always says which one a number uses.  Every size in :mod:`commbook` is a
plain number of **bytes** and every time a plain number of **seconds**; the constants
below only make call sites readable (``8 * MB`` versus ``8 * MiB``).
"""
from __future__ import annotations

from decimal import Decimal

from .checks import check_flag, check_int, check_nonneg, check_real, check_size

__all__ = [
    "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
    "s", "ms", "us", "ns",
    "check_size", "fmt_bytes", "fmt_time", "fmt_rate", "fmt_ratio", "fmt_pct", "fmt_count",
    "fmt_number",
]

B = 1
KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40

s = 1.0
ms, us, ns = 1e-3, 1e-6, 1e-9


_DECIMAL = [(TB, "TB"), (GB, "GB"), (MB, "MB"), (KB, "KB")]
_BINARY = [(TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")]


def fmt_bytes(n: float, binary: bool = False, digits: int = 3) -> str:
    """Format a byte count with its unit: ``fmt_bytes(8e6) == '8 MB'``.

    ``binary=True`` uses KiB/MiB/GiB.  ``digits`` is the number of significant
    digits (trailing zeros dropped).

    >>> fmt_bytes(8e6), fmt_bytes(2**30, binary=True), fmt_bytes(999_999)
    ('8 MB', '1 GiB', '1 MB')
    """
    n, digits = check_size(n), check_int(digits, "digits", lo=1, hi=17)
    check_flag(binary, "binary")
    units = [(1, "B")] + (_BINARY if binary else _DECIMAL)[::-1]
    return _fmt_scaled(n, units, digits)


def _fmt_scaled(x: float, units: list[tuple[float, str]], digits: int) -> str:
    """Format ``x`` in the largest unit (ascending list) in which it still reads >= 1
    once rounded to ``digits`` significant digits: 999,999 B is "1 MB", not "1e+03 KB".

    The rounding is done on the exact decimal value of ``x / unit`` (so 995 B at two
    digits is "1 KB", as 995/1000 = 0.995 rounds up, although the float 0.995 is 0.99499…)."""
    def text(i: int) -> str:
        exact = Decimal(x) / Decimal(units[i][0])
        out = f"{float(format(exact, f'.{digits}g')):.{digits}g}"
        return f"{float(out):.0f}" if "e+" in out else out   # 1e+02 KB reads 100 KB

    i = len(units) - 1
    while i > 0 and abs(float(text(i))) < 1:
        i -= 1
    return f"{text(i)} {units[i][1]}"


def fmt_time(t: float, digits: int = 4) -> str:
    """Format seconds with the unit that keeps the number readable (s, ms, µs, ns).

    ``t`` may be negative (a signed duration, a difference of two times: ``-1 s``); it must
    be a finite real number (numpy scalars included).

    >>> fmt_time(0.0123456), fmt_time(2.5e-6), fmt_time(-1.0)
    ('12.35 ms', '2.5 µs', '-1 s')
    """
    t = check_real(t, "t", "a time in seconds")
    digits = check_int(digits, "digits", lo=1, hi=17)
    return _fmt_scaled(t, [(ns, "ns"), (us, "µs"), (ms, "ms"), (1.0, "s")], digits)


def fmt_number(x: float, digits: int = 4) -> str:
    """A plain number to ``digits`` significant digits, never in exponent form; thousands
    get separators once the rounding leaves no decimals.

    >>> fmt_number(1440.0, 3), fmt_number(0.0123456, 3), fmt_number(2.5e6, 2)
    ('1,440', '0.0123', '2,500,000')
    """
    x = check_real(x, "x")
    digits = check_int(digits, "digits", lo=1, hi=17)
    rounded = Decimal(format(Decimal(repr(float(x))), f".{digits}g"))
    if rounded == 0:
        return "0"
    whole = rounded.adjusted() + 1                     # digits before the point
    decimals = max(digits - whole, 0)
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_rate(bytes_per_s: float, digits: int = 4) -> str:
    """Format a bandwidth (finite, >= 0) in decimal GB/s (the unit of every link datasheet).

    >>> fmt_rate(50e9), fmt_rate(1440e9, digits=3), fmt_rate(1.234567e9, digits=3)
    ('50 GB/s', '1,440 GB/s', '1.23 GB/s')
    """
    bytes_per_s = check_nonneg(bytes_per_s, "bytes_per_s", "a bandwidth in bytes/s")
    digits = check_int(digits, "digits", lo=1, hi=17)
    return f"{fmt_number(bytes_per_s / GB, digits)} GB/s"


def fmt_ratio(x: float, digits: int = 3) -> str:
    """A dimensionless ratio with the times sign, to ``digits`` significant digits.

    >>> fmt_ratio(10.5), fmt_ratio(1234.5), fmt_ratio(2.0213, digits=2)
    ('10.5×', '1,230×', '2×')
    """
    return f"{fmt_number(x, digits)}×"


def fmt_pct(fraction: float, digits: int | None = None) -> str:
    """A share (0.25 = 25 %) as a percentage: by default 2 significant digits below 10 %,
    else 3.

    >>> fmt_pct(0.0044), fmt_pct(0.25), fmt_pct(0.123456, digits=4)
    ('0.44%', '25%', '12.35%')
    """
    pct = 100 * check_real(fraction, "fraction", "a share (1 = 100 %)")
    if digits is None:
        digits = 2 if abs(pct) < 10 else 3
    return f"{fmt_number(pct, digits)}%"


def fmt_count(n: int) -> str:
    """A whole count with thousands separators.

    >>> fmt_count(16384)
    '16,384'
    """
    return f"{check_int(n, 'n'):,}"
