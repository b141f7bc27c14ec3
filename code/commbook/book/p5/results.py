"""Small typed results the P5 pages share, for :func:`commbook.book.glue.glue_fields`:
a link's α, β and αβ, and one time set against another."""
from __future__ import annotations

from dataclasses import dataclass

from ...hardware import Link

__all__ = ["LinkNumbers", "link_numbers", "Versus", "versus"]


@dataclass(frozen=True)
class LinkNumbers:
    """A link's α, β and half-bandwidth point αβ in their units (glued as ``nv_alpha_s``,
    ``nv_beta_Bps``, ``nv_n_half_bytes``)."""

    alpha_s: float
    beta_Bps: float
    n_half_bytes: float


def link_numbers(link: Link) -> LinkNumbers:
    """:class:`LinkNumbers` of ``link``."""
    return LinkNumbers(link.alpha, link.beta, link.n_half)


@dataclass(frozen=True)
class Versus:
    """Time ``a`` set against time ``b``: the difference, the ratio and the growth a/b − 1."""

    diff_s: float
    ratio_x: float
    growth_frac: float


def versus(a: float, b: float) -> Versus:
    """``a`` against ``b`` (both in seconds)."""
    return Versus(a - b, a / b, a / b - 1)
