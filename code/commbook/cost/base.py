r"""The α–β (Hockney) model and LogP: a point-to-point message, the bandwidth it gets, the
half-bandwidth point; and :func:`closed_form`, the decorator every collective's closed form
wears (checked arguments, 0 for one device).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..checks import check_link_params, check_nonneg, check_p, check_size, finite_time


def _log2_floor(p: int) -> int:
    return p.bit_length() - 1


def _log2_ceil(p: int) -> int:
    return (p - 1).bit_length()


def closed_form(f: Callable) -> Callable:
    """Decorate a closed form ``f(p, n, alpha, beta, ...)``: validate the arguments (also
    the extra ones, which ``f`` checks, at p = 1) and return 0 for a single device.

    >>> @closed_form
    ... def star(p, n, alpha, beta): return alpha + (p - 1) * n / beta
    >>> star(1, 1e6, 1e-6, 1e9)                      # one device: nothing to send
    0.0
    >>> star(8, 1e6, 1e-6, 0)
    Traceback (most recent call last):
    ValueError: beta (bandwidth, bytes/s) must be finite and > 0, got 0
    """
    @functools.wraps(f)
    def checked(p: int, n: float, alpha: float, beta: float, *args, **kwargs) -> float:
        p, n = check_p(p), check_size(n)
        alpha, beta = check_link_params(alpha, beta)
        t = f(p, n, alpha, beta, *args, **kwargs)
        return 0.0 if p == 1 else finite_time(t)
    return checked


# ----------------------------------------------------------------------------- α–β
def p2p_time(n: float, alpha: float, beta: float) -> float:
    """Point-to-point time of the α–β (Hockney) model, :math:`T(n) = \\alpha + n/\\beta`.

    >>> round(p2p_time(1e6, 1e-6, 1e9) * 1e6, 6)     # µs: 1 µs + 1 MB at 1 GB/s
    1001.0
    """
    n = check_size(n)
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(alpha + n / beta)


def effective_bandwidth(n: float, alpha: float, beta: float) -> float:
    """Bandwidth actually obtained, :math:`n / T(n)` in bytes/s (0 for an empty message).

    At the half-bandwidth point n = αβ a message gets half the link:

    >>> effective_bandwidth(1e3, 1e-6, 1e9) / 1e9
    0.5
    """
    t, n, beta = p2p_time(n, alpha, beta), check_size(n), check_link_params(alpha, beta)[1]
    return n / t if t > 0 else (beta if n > 0 else 0.0)


def half_bandwidth_point(alpha: float, beta: float) -> float:
    """:math:`n_{1/2} = \\alpha\\beta`: the size at which a link delivers exactly β/2.

    InfiniBand NDR in the chapter's Table 1 (α = 2 µs, 50 GB/s): n* ~ 100 KB.

    >>> half_bandwidth_point(2e-6, 50e9)
    100000.0
    """
    alpha, beta = check_link_params(alpha, beta)
    return finite_time(alpha * beta, "alpha * beta")


@dataclass(frozen=True)
class LogP:
    """LogP parameters (Culler et al. 1993): latency L, overhead o, gap g (seconds).

    ``L`` is time on the wire (can overlap with compute); ``o`` is processor time to
    start or finish a transfer (cannot); ``g`` is the minimum time between injections.

    >>> m = LogP(L=1e-6, o=2e-6, g=3e-6)
    >>> round(m.p2p(messages=4) * 1e6, 9), round(m.overlapped(10e-6) * 1e6, 9)   # µs: L + 2o + 3g; 2o + 10
    (14.0, 14.0)
    """

    L: float
    o: float
    g: float = 0.0

    def __post_init__(self) -> None:
        for name in ("L", "o", "g"):
            object.__setattr__(self, name, check_nonneg(getattr(self, name), name, "a LogP time (seconds)"))

    def p2p(self, messages: int = 1) -> float:
        """Time until the last of ``messages`` back-to-back small messages is received."""
        m = check_p(messages, "messages")
        return self.L + 2 * self.o + (m - 1) * max(self.g, self.o)

    def overlapped(self, t_compute: float) -> float:
        """Step time when a transfer runs beside ``t_compute`` of work: 2o + max(compute, L).

        The wire latency hides behind compute; the two overheads cannot.
        """
        t_compute = check_nonneg(t_compute, "t_compute", "a time (seconds)")
        return 2 * self.o + max(t_compute, self.L)
