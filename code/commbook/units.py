"""Explicit byte and time units, and the formatting every table uses.

The lecture mixes decimal sizes (1 MB = 10**6 B) with binary ones (1 MiB = 2**20 B);
the book always says which one a number uses.  Every size in :mod:`commbook` is a
plain number of **bytes** and every time a plain number of **seconds**; the constants
below only make call sites readable (``8 * MB`` versus ``8 * MiB``).
"""
from __future__ import annotations

import math

__all__ = [
    "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
    "s", "ms", "us", "ns",
    "check_size", "fmt_bytes", "fmt_time", "fmt_rate",
]

B = 1
KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40

s = 1.0
ms, us, ns = 1e-3, 1e-6, 1e-9


def check_size(n: float, name: str = "n") -> float:
    """Return ``n`` as a float if it is a finite, non-negative number of bytes.

    Raises
    ------
    TypeError
        if ``n`` is not a real number.
    ValueError
        if ``n`` is negative, NaN or infinite.
    """
    if isinstance(n, bool) or not isinstance(n, (int, float)) and not hasattr(n, "__float__"):
        raise TypeError(f"{name} must be a number of bytes, got {type(n).__name__}")
    value = float(n)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number of bytes, got NaN")
    if value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite, non-negative number of bytes, got {n!r}")
    return value


_DECIMAL = [(TB, "TB"), (GB, "GB"), (MB, "MB"), (KB, "KB")]
_BINARY = [(TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")]


def fmt_bytes(n: float, binary: bool = False, digits: int = 3) -> str:
    """Format a byte count with its unit: ``fmt_bytes(8e6) == '8 MB'``.

    ``binary=True`` uses KiB/MiB/GiB.  ``digits`` is the number of significant
    digits (trailing zeros dropped).
    """
    n = check_size(n)
    for scale, unit in (_BINARY if binary else _DECIMAL):
        if n >= scale:
            return f"{n / scale:.{digits}g} {unit}"
    return f"{n:.{digits}g} B"


def fmt_time(t: float, digits: int = 4) -> str:
    """Format seconds with the unit that keeps the number readable (s, ms, µs, ns)."""
    if not math.isfinite(t):
        raise ValueError(f"time must be finite, got {t!r}")
    a = abs(t)
    for scale, unit in ((1.0, "s"), (ms, "ms"), (us, "µs")):
        if a >= scale:
            return f"{t / scale:.{digits}g} {unit}"
    return f"{t / ns:.{digits}g} ns"


def fmt_rate(bytes_per_s: float, digits: int = 4) -> str:
    """Format a bandwidth in decimal GB/s (the unit of every link datasheet)."""
    return f"{bytes_per_s / GB:.{digits}g} GB/s"
