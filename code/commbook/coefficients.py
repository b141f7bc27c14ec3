r"""The one way to read a closed form's coefficients.

A closed form ``T(p, n, α, β)`` of the α–β model is, for most algorithms,

    T = alpha_steps · α + beta_bytes_per_byte · n / β,

``alpha_steps`` the start-ups on the critical path and ``beta_bytes_per_byte`` the bytes
the busiest port moves per byte of the buffer (ring all-reduce: 2(p − 1) and
2(p − 1)/p).  :func:`closed_form_coefficients` reads both off the form itself: the α count
at n = 0, α = 1, β = 1, the factor at α = 0, β = 1 — and checks at other sizes, α and β
that the form is of that shape, so a form that is not (the double binary tree at its best
chunk count, which depends on α and β) is refused rather than misread.

The registry's names go through :func:`commbook.collectives.coefficients`; this module
works on any callable, so the core below the registry (:mod:`commbook.double_tree`)
uses it too.

>>> ring = lambda p, n, alpha, beta: 2 * (p - 1) * (alpha + n / (p * beta))
>>> closed_form_coefficients(ring, 8)
Coefficients(alpha_steps=14.0, beta_bytes_per_byte=1.75)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .checks import check_p

__all__ = ["Coefficients", "closed_form_coefficients"]

_SIZES = (2.0 ** 20, 2.0 ** 30)          # bytes at which the factor is read and checked
_CHECKS = ((0.0, 0.0, 1.0), (_SIZES[1], 0.0, 1.0), (_SIZES[0], 2.0, 0.5), (_SIZES[1], 3.0, 4.0))
_RTOL = 1e-9


@dataclass(frozen=True)
class Coefficients:
    """``T(n) = alpha_steps·α + beta_bytes_per_byte·n/β``.

    >>> Coefficients(14.0, 1.75).time(1e6, 2e-6, 50e9)       # 14·2 µs + 1.75·1 MB/(50 GB/s)
    6.3e-05
    """

    alpha_steps: float
    beta_bytes_per_byte: float

    def time(self, n: float, alpha: float, beta: float) -> float:
        """The closed form's time at ``n`` bytes on a link of ``alpha`` seconds and ``beta`` bytes/s."""
        return self.alpha_steps * alpha + self.beta_bytes_per_byte * n / beta


def closed_form_coefficients(form: Callable[..., float], p: int, *, what: str = "the closed form",
                             **params) -> Coefficients:
    """The :class:`Coefficients` of ``form(p, n, alpha, beta, **params)``.

    Raises ``ValueError`` (naming ``what``) when the form is not affine in α and n/β —
    the times at n = 0 (α = 0), n = 2³⁰ (α = 0) and at (α, β) = (2, 1/2) and (3, 4) must be
    what the two coefficients give.

    >>> closed_form_coefficients(lambda p, n, alpha, beta: (p - 1) * (alpha + n / (p * beta)), 4)
    Coefficients(alpha_steps=3.0, beta_bytes_per_byte=0.75)
    >>> closed_form_coefficients(lambda p, n, alpha, beta: max(alpha, n / beta), 4)
    Traceback (most recent call last):
    ValueError: the closed form is not linear in alpha and n/beta at p=4 ...
    """
    p = check_p(p)
    T = lambda n, alpha, beta: float(form(p, n, alpha, beta, **params))   # noqa: E731
    a = T(0.0, 1.0, 1.0)
    b = T(_SIZES[0], 0.0, 1.0) / _SIZES[0]
    for n, alpha, beta in _CHECKS:
        got, want = T(n, alpha, beta), a * alpha + b * n / beta
        if not math.isclose(got, want, rel_tol=_RTOL, abs_tol=1e-300):
            extra = "".join(f", {k}={v!r}" for k, v in params.items())
            raise ValueError(f"{what} is not linear in alpha and n/beta at p={p}{extra} (n={n:g}, alpha={alpha:g}, "
                             f"beta={beta:g}: T={got!r}, alpha_steps*alpha + factor*n/beta={want!r}); "
                             "its coefficients depend on n, alpha or beta")
    return Coefficients(a, b)
