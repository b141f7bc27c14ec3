r"""Chapter "Collective communication", purpose page and §1.1: what the worked numbers share
(the 70B model in BF16, its gradient bytes, the ordered pairs N(N−1), the '70B' label).  The
pages compute the boxes themselves (Definition 1.1, Napkin Math 1.1, the cost of
synchronization, light in fibre, energy per bit); the model behind
Figure 2 in :mod:`.parallelism_step`, the figures in :mod:`.parallelism_figures`, the tables
in :mod:`.parallelism_tables`.
"""
from __future__ import annotations

from ...checks import check_p
from ...units import fmt_number

__all__ = ["PARAMS_70B", "BF16_BYTES", "billions", "gradient_bytes", "logical_connections"]


# ============================================================================ the boxes
PARAMS_70B = 70e9
"""Parameters of the 70B model of Definition 1.1 and Napkin Math 1.1."""
BF16_BYTES = 2
"""Bytes per BF16 value."""


def gradient_bytes(params: float = PARAMS_70B, bytes_per_value: float = BF16_BYTES) -> float:
    """Bytes of one full gradient: params × bytes per value (70B in BF16: 140 GB)."""
    return params * bytes_per_value


def logical_connections(n: int) -> int:
    """Ordered pairs of workers that may exchange data in the most general pattern:
    N(N−1) (each worker may send to each of the others)."""
    n = check_p(n, "n")
    return n * (n - 1)


def billions(x: float) -> str:
    """A parameter count as the chapter writes it: '70B'.

    >>> billions(70e9)
    '70B'
    """
    return f"{fmt_number(x / 1e9, 3)}B"
