"""The worked boxes of chapter 1 (collective communication): each box prices its example with its own link.

The chapter uses InfiniBand NDR with α = 1.5, 2, 3 and 5 µs in different boxes, and
generic teaching links; every box's link is built here once, with its number and the box
it comes from, and every page and module of the chapter takes it from here.  Also the one
table of display names of the chapter's links in both languages (:func:`link_name`).
"""
from __future__ import annotations

from ...hardware import IB_HDR, IB_NDR_CHAPTER, NVLINK4_CHAPTER, PCIE_GEN5, ROCE_100G, Link
from ...units import GB
from ..tables import bilingual
from ..text import texts

__all__ = ["BOX_LINKS", "BOX_NAMES", "LINK_NAMES", "link_name", "split_pairs"]

T = texts("ch1")
K = "boxes."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys)
_txs = _tx.pairs


_CH = "Scaling Machine Learning Systems, Vol. II, ch. 06 'Collective Communication'"

BOX_LINKS: dict[str, Link] = {
    "def1.1": Link("ring link", 0.0, 50 * GB,
                   f"{_CH}, chapter definition 1.1 (gradient synchronization): 50 GB/s per link; "
                   "the box gives no α, so only the bandwidth term is computed (α = 0 µs)"),
    "nm1.1": Link("InfiniBand NDR", 1.5e-6, 50 * GB,
                  f"{_CH}, chapter napkin math 1.1 (70B all-reduce on 64 GPUs): α = 1.5 µs, β = 50 GB/s"),
    "def1.2": Link("InfiniBand NDR", 2e-6, 50 * GB,
                   f"{_CH}, chapter definition 1.2 (Hockney model): α ≈ 2 µs, β ≈ 50 GB/s"),
    "nm1.2": Link("InfiniBand NDR", 2e-6, 400e9 / 8,
                  f"{_CH}, chapter napkin math 1.2 (critical message size): 400 Gb/s, α = 2 µs, "
                  "β = 50 GB/s"),
    "cp1.1": Link("generic link", 2e-6, 10 * GB,
                  f"{_CH}, chapter checkpoint 1.1 (α–β diagnosis): α = 2 µs, β = 10 GB/s"),
    "nm1.4": Link("InfiniBand NDR", 3e-6, 50 * GB,
                  f"{_CH}, chapter napkin math 1.4 (MoE all-to-all): α = 3 µs, β = 50 GB/s"),
    "nm1.5": Link("generic link", 10e-6, 10 * GB,
                  f"{_CH}, chapter napkin math 1.5 (ring against tree, 1 MB on 64 GPUs): α = 10 µs, "
                  "β = 10 GB/s"),
    "s1.4": Link("InfiniBand NDR", 5e-6, 50 * GB,
                 f"{_CH}, chapter §1.4 (algorithm switch point), example with N = 100: α = 5 µs, "
                 "β = 50 GB/s"),
    "cp1.3": Link("InfiniBand NDR", 5e-6, 50 * GB,
                  f"{_CH}, chapter checkpoint 1.3 (algorithm choice): α = 5 µs, β = 50 GB/s"),
    "lb1.4": Link("bandwidth only", 0.0, 50 * GB,
                  f"{_CH}, chapter §1.4 (bandwidth lower bound), 1 GB on 64 GPUs: the sentence compares "
                  "bandwidth terms and names no link; 50 GB/s is the chapter's InfiniBand NDR port "
                  "(α = 0 µs: bandwidth terms only)"),
    "lb1.4-nvl": Link("bandwidth only", 0.0, 450 * GB,
                      f"{_CH}, chapter §1.4 (bandwidth lower bound), the same example at the chapter's "
                      "NVLink 4.0 rate of 450 GB/s per direction (α = 0 µs: bandwidth terms only)"),
    "tree1.4": Link(NVLINK4_CHAPTER.name, NVLINK4_CHAPTER.alpha, NVLINK4_CHAPTER.beta,
                    f"{_CH}, chapter §1.4 (tree all-reduce), 1 MB on the 8 GPUs of one node: no link "
                    "given; Table 1's NVLink 4.0, α = 1.5 µs (midpoint), β = 450 GB/s"),
    "fig7": Link(IB_HDR.name, IB_HDR.alpha, IB_HDR.beta,
                 f"{_CH}, chapter figure 7 (256 GPUs, 200 Gb/s fabric = 25 GB/s): no α given; Table 1's "
                 "InfiniBand HDR midpoint α = 3.5 µs"),
    "cp1.2": Link("bandwidth only", 0.0, 450 * GB,
                  f"{_CH}, chapter checkpoint 1.2 (a straggler in the ring): no link given; 8 GPUs "
                  "and 1 GB at NVLink 4.0's 450 GB/s, α = 0 µs so that only bandwidth counts"),
    "nm1.6": Link("InfiniBand NDR", 3e-6, 50 * GB,
                  f"{_CH}, chapter napkin math 1.6 (hierarchical all-reduce, 8 x 8 GPUs): β = 50 GB/s; "
                  "the box gives no α, its 4.42 ms for the inter-node phase implies α = 3 µs"),
    "nm1.8": Link("InfiniBand NDR", 2e-6, 50 * GB,
                  f"{_CH}, chapter napkin math 1.8 (7B overlap budget, 8 x 8 GPUs): the box gives the "
                  "hierarchical all-reduce's time per layer but no link; Table 1's InfiniBand NDR, "
                  "α = 2 µs (midpoint), β = 50 GB/s, checks it"),
    "nm1.8-nvl": Link(NVLINK4_CHAPTER.name, NVLINK4_CHAPTER.alpha, NVLINK4_CHAPTER.beta,
                      f"{_CH}, chapter napkin math 1.8, the intra-node phases of the same check: Table 1's "
                      "NVLink 4.0, α = 1.5 µs (midpoint), β = 450 GB/s"),
    "sn1.8": Link("bandwidth only", 0.0, 450 * GB,
                  f"{_CH}, chapter §1.8 (single-node check, 70B on 8 GPUs): NVLink at 450 GB/s per "
                  "direction, no α (α = 0 µs: bandwidth term only)"),
}
"""The link each worked box of the chapter prices its example with, by box id."""

BOX_NAMES: dict[str, dict[str, str]] = {
    "def1.1": _tx("definition_1_1_1"),
    "nm1.1": _tx("napkin_math_1_1"),
    "def1.2": _tx("definition_1_2_1"),
    "nm1.2": _tx("napkin_math_1_2"),
    "cp1.1": _tx("checkpoint_1_1_1"),
    "nm1.4": _tx("napkin_math_1_4"),
    "nm1.5": _tx("napkin_math_1_5"),
    "s1.4": _tx("switch_point_example_1"),
    "cp1.3": _tx("checkpoint_1_3_1"),
    "lb1.4": _tx("lower_bound_example_1"),
    "lb1.4-nvl": _tx("lower_bound_example_at"),
    "tree1.4": _tx("tree_example_8_gpus"),
    "fig7": _tx("crossover_figure_1_4"),
    "cp1.2": _tx("checkpoint_1_2_1"),
    "nm1.6": _tx("napkin_math_1_6"),
    "nm1.8": _tx("napkin_math_1_8"),
    "nm1.8-nvl": _tx("napkin_math_1_8_2"),
    "sn1.8": _tx("single_node_check_1"),
}
"""Display name of each box in both languages."""


def _gbit(link: Link) -> str:
    return f"{link.beta * 8 / 1e9:.0f} Gb/s"


LINK_NAMES: dict[str, dict[str, str]] = {
    NVLINK4_CHAPTER.name: _tx("nvlink_4_0_intra"),
    IB_NDR_CHAPTER.name: _tx("infiniband_ndr_per_port", ib_ndr_chapter=_gbit(IB_NDR_CHAPTER)),
    IB_HDR.name: _tx("infiniband_hdr", ib_hdr=_gbit(IB_HDR)),
    PCIE_GEN5.name: _tx("pcie_gen5_gpu_cpu"),
    ROCE_100G.name: _tx("ethernet_roce", roce_100g=_gbit(ROCE_100G)),
    "InfiniBand NDR": _tx("infiniband_ndr"),
    "generic link": _tx("generic_teaching_link"),
    "ring link": _tx("ring_link"),
    "bandwidth only": _tx("link_bandwidth_term_only"),
}
"""Display names of the chapter's links (Table 1's presets and the boxes' links), by ``Link.name``."""


def link_name(link: Link, lang: str = "en") -> str:
    """A link's display name in ``lang``: the chapter's name where it has one, else the
    preset's own name."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', got {lang!r}")
    names = LINK_NAMES.get(link.name)
    return names[lang] if names else link.name


def split_pairs(entry: dict[str, str]) -> dict[str, list[str]]:
    """Both languages of a text entry whose parts are separated by '|' (a table's headers)."""
    return {lang: text.split("|") for lang, text in entry.items()}
