"""Link and chip presets, each with the source of its numbers.

Conventions
-----------
* ``beta`` is the **one-direction** bandwidth of one link or NIC, in bytes/s
  (NVLink 4 datasheets quote 900 GB/s for both directions together: β = 450 GB/s).
* ``alpha`` is the per-message start-up latency in seconds.  Datasheets do not give
  it: the values are the *assumed magnitudes* of the two source documents, and real
  effective α (software stack included) can be ten times larger.

Where the chapter (seed 000) and the lecture (seed 002) disagree, both values exist
under their own names: ``IB_NDR`` (lecture, α = 5 µs) and ``IB_NDR_CHAPTER`` (chapter
Table 1, α = 2 µs); ``NVLINK4`` (lecture, α = 2 µs) and ``NVLINK4_CHAPTER`` (chapter
Table 1, midpoint of 1–2 µs).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .checks import check_link_params, check_nonneg, check_positive, check_sequence
from .units import GB, TB

__all__ = [
    "Link", "Chip", "LINKS", "CHIPS",
    "NVLINK4", "NVLINK4_CHAPTER", "NVLINK5", "NVLINK_H800",
    "IB_NDR", "IB_NDR_CHAPTER", "IB_HDR", "PCIE_GEN5", "ROCE_100G", "ICI_V5E",
    "H100", "H200", "H800",
]

_CH_T1 = ("Scaling Machine Learning Systems, Vol. II, ch. 06 'Collective Communication', Table 1 "
          "(interconnect parameters; α = midpoint of the stated range)")


def _store(obj: object, name: str, checked: float) -> None:
    """Keep a field given as int or float as it is; store a numpy scalar or 0-d array as the float."""
    if type(getattr(obj, name)) not in (int, float):
        object.__setattr__(obj, name, checked)


@dataclass(frozen=True)
class Link:
    """One link class of the α–β model.

    Parameters
    ----------
    name : str
        Display name.
    alpha : float
        Start-up latency per message, seconds (must be >= 0).
    beta : float
        One-direction bandwidth, bytes per second (must be > 0).
    source : str
        Where the numbers come from.
    alpha_range : tuple of float, optional
        The (low, high) range a source states, when ``alpha`` is its midpoint.

    Examples
    --------
    >>> NVLINK4.alpha, NVLINK4.beta / 1e9, NVLINK4.n_half     # 2 µs x 450 GB/s = 900 KB
    (2e-06, 450.0, 900000.0)
    >>> Link("bad", alpha=1e-6, beta=0, source="none")
    Traceback (most recent call last):
    ValueError: beta (bandwidth, bytes/s) must be finite and > 0, got 0
    """

    name: str
    alpha: float
    beta: float
    source: str
    alpha_range: tuple[float, float] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        alpha, beta = check_link_params(self.alpha, self.beta)
        _store(self, "alpha", alpha)
        _store(self, "beta", beta)
        if self.alpha_range is not None:
            rng = check_sequence(self.alpha_range, "alpha_range", "a (low, high) pair of latencies")
            if len(rng) != 2:
                raise ValueError(f"alpha_range must be a (low, high) pair, got {len(rng)} values")
            low, high = (check_nonneg(v, f"alpha_range[{i}]", "a latency (seconds)") for i, v in enumerate(rng))
            if low > high:
                raise ValueError(f"alpha_range must be (low, high) with low <= high, got ({low!r}, {high!r})")
            object.__setattr__(self, "alpha_range", (low, high))

    @property
    def n_half(self) -> float:
        """Half-bandwidth point αβ in bytes (the chapter's critical size n*)."""
        return self.alpha * self.beta


NVLINK4 = Link(
    "NVLink 4 (H100)", 2e-6, 450 * GB,
    "α = 2 µs assumed, a typical start-up for one message between GPUs of a node (no "
    "datasheet gives it); β: NVIDIA H100 Tensor Core GPU datasheet, NVLink 900 GB/s = 18 links "
    "x 25 GB/s = 450 GB/s per direction",
)
NVLINK4_CHAPTER = Link(
    "NVLink 4 (chapter)", 1.5e-6, 450 * GB, _CH_T1 + ": 1-2 µs, 450 GB/s, n* ~ 0.7 MB",
    alpha_range=(1e-6, 2e-6),
)
NVLINK5 = Link(
    "NVLink 5 (GB200 NVL72)", 2e-6, 900 * GB,
    "NVIDIA GB200 NVL72 spec: 1.8 TB/s NVLink per GPU bidirectional = 900 GB/s per "
    "direction; α assumed as for NVLink 4",
)
NVLINK_H800 = Link(
    "NVLink (H800)", 2e-6, 160 * GB,
    "DeepSeek-V3 Technical Report §3.2.2: NVLink ~160 GB/s achievable on H800 "
    "(~3.2x IB); α assumed as for NVLink 4",
)
IB_NDR = Link(
    "InfiniBand NDR", 5e-6, 50 * GB,
    "α = 5 µs assumed, a typical start-up for one RDMA message through a NIC and a switch "
    "(no datasheet gives it); β: NVIDIA ConnectX-7 datasheet, NDR 400 Gb/s = 50 GB/s per NIC "
    "per direction",
)
IB_NDR_CHAPTER = Link(
    "InfiniBand NDR (chapter)", 2e-6, 50 * GB, _CH_T1 + ": 1-3 µs, 50 GB/s per port, n* ~ 100 KB",
    alpha_range=(1e-6, 3e-6),
)
IB_HDR = Link(
    "InfiniBand HDR", 3.5e-6, 25 * GB, _CH_T1 + ": 2-5 µs, 200 Gb/s = 25 GB/s, n* ~ 87.5 KB",
    alpha_range=(2e-6, 5e-6),
)
PCIE_GEN5 = Link(
    "PCIe Gen5 x16", 3.5e-6, 64 * GB, _CH_T1 + ": 2-5 µs, 64 GB/s (GPU-CPU), n* ~ 224 KB",
    alpha_range=(2e-6, 5e-6),
)
ROCE_100G = Link(
    "Ethernet 100G (RoCE)", 7.5e-6, 12.5 * GB,
    _CH_T1 + ": 5-10 µs, 100 Gb/s = 12.5 GB/s, n* = 93.75 KB (printed as 93.7)",
    alpha_range=(5e-6, 10e-6),
)
ICI_V5E = Link(
    "TPU v5e ICI", 1e-6, 45 * GB,
    "How to Scale Your Model, ch. 2 'How to Think About TPUs': v5e ICI 4.5e10 B/s one way "
    "per link; α = 1 µs assumed, the order of magnitude it gives per hop",
)

LINKS: dict[str, Link] = {
    "NVLINK4": NVLINK4, "NVLINK4_CHAPTER": NVLINK4_CHAPTER, "NVLINK5": NVLINK5,
    "NVLINK_H800": NVLINK_H800, "IB_NDR": IB_NDR, "IB_NDR_CHAPTER": IB_NDR_CHAPTER,
    "IB_HDR": IB_HDR, "PCIE_GEN5": PCIE_GEN5, "ROCE_100G": ROCE_100G, "ICI_V5E": ICI_V5E,
}
"""Every link preset by its constant name."""


@dataclass(frozen=True)
class Chip:
    """An accelerator: dense BF16 peak, HBM bandwidth and capacity, with the source.

    >>> H100.bf16_flops / 1e12, H100.hbm_bandwidth / 1e12, H200.hbm_bytes / 1e9   # TFLOP/s, TB/s, GB
    (989.0, 3.35, 141.0)
    """

    name: str
    bf16_flops: float
    hbm_bandwidth: float
    hbm_bytes: float
    source: str

    def __post_init__(self) -> None:
        for name, what in (("bf16_flops", "a peak rate (FLOP/s)"), ("hbm_bandwidth", "a bandwidth (bytes/s)"),
                           ("hbm_bytes", "a capacity (bytes)")):
            _store(self, name, check_positive(getattr(self, name), name, what))


H100 = Chip(
    "H100 SXM", 989e12, 3.35 * TB, 80 * GB,
    "NVIDIA H100 datasheet (SXM): BF16 dense 989 TFLOP/s (1,979 with sparsity), "
    "HBM3 3.35 TB/s, 80 GB",
)
H200 = Chip(
    "H200 SXM", 989e12, 4.8 * TB, 141 * GB,
    "NVIDIA H200 datasheet (SXM): BF16 dense 989 TFLOP/s, HBM3e 4.8 TB/s, 141 GB",
)
H800 = Chip(
    "H800 SXM", 989e12, 3.35 * TB, 80 * GB,
    "NVIDIA H800 (export variant of H100 SXM): same compute and HBM as H100; NVLink "
    "limited (see NVLINK_H800)",
)

CHIPS: dict[str, Chip] = {"H100": H100, "H200": H200, "H800": H800}
"""Every chip preset by its constant name."""
