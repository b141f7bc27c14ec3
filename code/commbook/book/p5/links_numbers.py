"""The numbers of P5 §2 (links) as typed results for :func:`commbook.book.glue.glue_fields`:
what a link delivers at a size (:func:`commbook.cost.effective_bandwidth`), the stated
facts of an H100 node's links, the hop latency of a torus, the simulator's corner cases
and one port sending two messages in a round."""
from __future__ import annotations

from dataclasses import dataclass
from inspect import signature

from ...collectives import all_reduce
from ...comm_sim import Round, VirtualCluster
from ...cost import effective_bandwidth
from ...hardware import IB_NDR, NVLINK4, NVLINK5, Link
from ...topology import Ring, Switch, Torus
from ...units import GB, KB, MB, KiB, MiB

__all__ = ["ByteUnits", "BYTE_UNITS", "Delivered", "delivered", "NodeLinks", "NODE_LINKS", "HopCost", "hop_cost",
           "SimCorners", "sim_corners", "FanOut", "fan_out", "RunVsFormula"]


@dataclass(frozen=True)
class ByteUnits:
    """Bytes in a decimal kilobyte and megabyte and in a binary kibibyte and mebibyte."""

    kb: int
    mb: int
    kib: int
    mib: int


BYTE_UNITS = ByteUnits(int(KB), int(MB), int(KiB), int(MiB))


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


@dataclass(frozen=True)
class HopCost:
    """A message of ``hops`` hops on a torus pays α·(1 + hop_alpha·(hops − 1)) = ``alphas``·α."""

    hop_alpha: float
    hops: int
    alphas: float


def hop_cost(hops: int = 3) -> HopCost:
    """:class:`HopCost` with the torus's default ``hop_alpha``."""
    h = signature(Torus).parameters["hop_alpha"].default
    return HopCost(h, hops, 1 + h * (hops - 1))


@dataclass(frozen=True)
class SimCorners:
    """The simulator's corner cases on ``p`` devices: an empty ring all-reduce still pays α
    in each of its ``rounds`` (``time_s``); in-network reduction sends ``innet_sent_bytes``
    into the switch and none over device links; a ring's first two resources are named
    ``ring_res``."""

    p: int
    rounds: int
    time_s: float
    innet_sent_bytes: float
    innet_link_bytes: float
    ring_res: str


def sim_corners(p: int, link: Link, n: float = MB) -> SimCorners:
    """:class:`SimCorners` for ``Switch(p, link)`` (``n`` bytes for the in-network run)."""
    c = VirtualCluster(Switch(p, link))
    zero = all_reduce(c, nbytes=0, algorithm="ring")
    innet = all_reduce(c, nbytes=n, algorithm="innet")
    return SimCorners(p, zero.rounds, zero.time, float(innet.bytes_sent.sum()), float(innet.link_bytes.sum()),
                      ", ".join(Ring(4, link).resource_names[:2]))


@dataclass(frozen=True)
class FanOut:
    """One GPU sending ``messages`` messages of ``n_bytes`` in one round over its one port
    (``time_s``, simulated), against a single message (``single_s``)."""

    messages: int
    n_bytes: float
    time_s: float
    single_s: float


def fan_out(link: Link, messages: int = 2, n: float = MB) -> FanOut:
    """:class:`FanOut` on a switch of ``messages`` + 1 devices."""
    rnd = Round.make(src=[0] * messages, dst=list(range(1, messages + 1)), count=n)
    t = VirtualCluster(Switch(messages + 1, link)).run([rnd]).time
    return FanOut(messages, float(n), t, link.alpha + n / link.beta)


@dataclass(frozen=True)
class RunVsFormula:
    """A simulated collective on ``p`` devices with ``n_bytes``: its rounds and time beside
    the closed form's."""

    p: int
    n_bytes: float
    rounds: int
    time_s: float
    formula_s: float
