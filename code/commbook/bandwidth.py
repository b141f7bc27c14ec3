"""Algorithm and bus bandwidth, as nccl-tests defines them (its PERFORMANCE.md).

``algbw`` is size / time.  ``busbw`` multiplies it by a per-collective factor so that a
collective that is limited by its links shows the links' speed whatever the rank count:
2(r-1)/r for all-reduce, (r-1)/r for all-gather, reduce-scatter and all-to-all, 1 for
broadcast, reduce and send/recv.

The factor depends on the collective and the rank count only, never on the algorithm NCCL
ran: nccl-tests v2.19.6 computes an all-reduce's busbw as algbw · 2(r−1)/r in every case
(``AllReduceGetBw``, src/all_reduce.cu:59-65), with ``NCCL_ALGO=NVLS`` or ``NVLSTree`` as
with ring or tree.  Under NVLS the switch does the reduction, so a GPU sends fewer bytes than
the ring's 2(r−1)/r·n that the factor assumes, and the busbw printed can exceed one GPU's
NVLink bandwidth: a reading of the switch's work, not a faster link.
"""
from __future__ import annotations

from typing import Callable

from .checks import check_choice, check_p, check_real, check_size, finite_time

__all__ = ["BUSBW_FACTORS", "algbw", "busbw"]

BUSBW_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda r: 2 * (r - 1) / r,
    "all_gather": lambda r: (r - 1) / r,
    "reduce_scatter": lambda r: (r - 1) / r,
    "all_to_all": lambda r: (r - 1) / r,
    "broadcast": lambda r: 1.0,
    "reduce": lambda r: 1.0,
    "send_recv": lambda r: 1.0,
}
"""nccl-tests' bus-bandwidth factors (PERFORMANCE.md), as functions of the rank count."""


def algbw(size: float, time: float) -> float:
    """Algorithm bandwidth: size / time (bytes/s), as nccl-tests prints it.

    >>> algbw(1e9, 0.01) / 1e9            # 1 GB in 10 ms, in GB/s
    100.0
    """
    size = check_size(size, "size")
    time = check_real(time, "time", "a time in seconds")
    if not time > 0:
        raise ValueError(f"time must be > 0 seconds, got {time!r}")
    return finite_time(size / time, "size / time")


def busbw(op: str, size: float, time: float, nranks: int) -> float:
    """Bus bandwidth = algbw x the op's factor.  For all-gather, reduce-scatter and
    all-to-all ``size`` is the total size (count x nranks), as in nccl-tests.

    On 8 ranks an all-reduce's bus bandwidth is 2·7/8 = 1.75 times its algorithm bandwidth:

    >>> busbw("all_reduce", 1e9, 0.01, 8) / 1e9, busbw("broadcast", 1e9, 0.01, 8) / 1e9
    (175.0, 100.0)
    """
    check_choice(op, "op", BUSBW_FACTORS)
    return algbw(size, time) * BUSBW_FACTORS[op](check_p(nranks, "nranks"))
