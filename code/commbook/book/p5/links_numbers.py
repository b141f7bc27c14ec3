"""The numbers of P5 §2 (links) as typed results for :func:`commbook.book.glue.glue_fields`:
what a link delivers at a size (:func:`commbook.cost.effective_bandwidth`) and the stated
facts of an H100 node's links."""
from __future__ import annotations

from dataclasses import dataclass

from ...cost import effective_bandwidth
from ...hardware import IB_NDR, NVLINK4, NVLINK5, Link
from ...units import GB

__all__ = ["Delivered", "delivered", "NodeLinks", "NODE_LINKS"]


@dataclass(frozen=True)
class Delivered:
    """A message of ``n_bytes`` (``per_nhalf`` half-bandwidth points) over one link: its
    time α + n/β, the bandwidth it gets, n/T, and that bandwidth's share of β."""

    n_bytes: float
    per_nhalf: float
    time_s: float
    bw_Bps: float
    share_frac: float


def delivered(link: Link, n: float) -> Delivered:
    """:class:`Delivered` for ``n`` bytes over ``link``."""
    bw = effective_bandwidth(n, link.alpha, link.beta)
    return Delivered(float(n), n / link.n_half, link.alpha + n / link.beta, bw, bw / link.beta)


@dataclass(frozen=True)
class NodeLinks:
    """The links of an H100 node as their data sheets state them: ``dgx_gpus`` GPUs, each
    with ``nvlinks`` NVLink 4 links of ``nvlink_link_Bps`` per direction (``nvlink_total_Bps``
    in all); a GB200 NVL72 domain of ``nvl72_gpus`` GPUs at NVLink 5's ``nvl72_Bps``
    (``nvl5_vs_nvl4`` times NVLink 4's β); one ConnectX-7 NIC per GPU (``nic_gbit``,
    ``nic_Bps``) and the ``cliff``, the NIC's share of NVLink's bandwidth."""

    dgx_gpus: int
    nvlinks: int
    nvlink_link_Bps: float
    nvlink_total_Bps: float
    nvl72_gpus: int
    nvl72_Bps: float
    nvl5_vs_nvl4: float
    nic_gbit: str
    nic_Bps: float
    cliff: str


NODE_LINKS = NodeLinks(8, 18, 25 * GB, 18 * 25 * GB, 72, NVLINK5.beta, NVLINK5.beta / NVLINK4.beta,
                       f"{IB_NDR.beta * 8 / 1e9:.0f} Gb/s", IB_NDR.beta, f"1/{NVLINK4.beta / IB_NDR.beta:.0f}")
