"""Input checks shared by every layer: sizes, device counts, link parameters.

Each raises ``TypeError`` for the wrong kind of value and ``ValueError`` for a value out
of range, with a message that names the parameter and what it must be.
"""
from __future__ import annotations

import math
import numbers

__all__ = ["check_size", "check_p", "check_link_params", "check_count", "require_pow2"]


def _real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_size(n: float, name: str = "n") -> float:
    """Return ``n`` as a float if it is a finite, non-negative number of bytes."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) and not hasattr(n, "__float__"):
        raise TypeError(f"{name} must be a number of bytes, got {type(n).__name__}")
    value = float(n)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number of bytes, got NaN")
    if value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite, non-negative number of bytes, got {n!r}")
    return value


def check_p(p: int, name: str = "p") -> int:
    """Return ``p`` if it is an integer >= 1 (a number of devices)."""
    if isinstance(p, bool) or not isinstance(p, int) and not hasattr(p, "__index__"):
        raise TypeError(f"{name} (number of devices) must be an integer, got {type(p).__name__}")
    p = int(p)
    if p < 1:
        raise ValueError(f"{name} (number of devices) must be >= 1, got {p}")
    return p


def check_count(k: int, name: str) -> int:
    """Return ``k`` if it is an integer >= 1 (a number of chunks, messages, servers ...)."""
    if isinstance(k, bool) or not hasattr(k, "__index__"):
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    if int(k) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    return int(k)


def check_link_params(alpha: float, beta: float) -> None:
    """Raise ``ValueError`` unless ``alpha >= 0`` and ``beta > 0`` (both finite numbers)."""
    if not _real(alpha) or math.isnan(alpha) or alpha < 0 or math.isinf(alpha):
        raise ValueError(f"alpha (latency, seconds) must be finite and >= 0, got {alpha!r}")
    if not _real(beta) or math.isnan(beta) or beta <= 0 or math.isinf(beta):
        raise ValueError(f"beta (bandwidth, bytes/s) must be finite and > 0, got {beta!r}")


def require_pow2(p: int, what: str) -> None:
    """Raise ``ValueError`` unless ``p`` is a power of two."""
    if p & (p - 1):
        raise ValueError(f"p must be a power of two for {what}, got p={p}")
