r"""NCCL's tuning model, transcribed from one pinned release: NCCL 2.29.2.

Every constant below is copied from github.com/NVIDIA/nccl at tag ``v2.29.2-1`` (commit
:data:`NCCL_COMMIT`), and cites its file and line there.  The same release produced the
8×H100 log in ``code/commbook/data/measured/nccl-tests/``.  Units are NCCL's own: latencies in µs,
bandwidths in GB/s (10⁹ B/s); :mod:`.nccl_model` converts to seconds and bytes/s.

What NCCL computes, for one communicator, collective, algorithm and protocol
(``ncclTopoTuneModel``, src/graph/tuning.cc:230-404):

* bandwidth: ``nChannels × bw`` of the algorithm's graph (the topology search's result),
  then the protocol's refinements — ring LL: ``min(llMaxBw, ½·busBw)``; ring LL128:
  ``min(0.92·busBw, nChannels·perChMaxRingLL128Bw)``; tree all-reduce:
  ``min(0.92·busBw, nChannels·perChMaxTreeBw)``, then LL ÷3.8 (capped at ``llMaxBw``) or
  LL128 ×7/9 on one node; NVLS: per channel ``bwIntra·nvlsEfficiency·(nCh−1)/nCh``, ×2 for
  all-reduce (it pipelines reduce-scatter and all-gather) or ×(ppn−1)/ppn otherwise; then
  converted to algorithm bandwidth (×nRanks/nsteps for ring and NVLS, ×½ for tree; not for
  non-ring all-gather and reduce-scatter) — :func:`bandwidth`;
* latency: ``baseLat + nsteps·hwLat`` for a ring, ``baseLat + 2(ppn−1)·hwLat`` for a
  one-node tree, ``hwLat`` alone for NVLS — :func:`latency`;
* time (``ncclTopoGetAlgoTime``, tuning.cc:586-603): ``lat + nBytes / (1000·bw)`` µs, tree
  all-reduce bandwidth scaled by :data:`TREE_CORRECTION` at the size's power of two.

The graph (channels and per-channel bandwidth) comes from the topology search
(src/graph/search.cc); on an NVSwitch node it reduces to the closed forms of
:func:`ring_graph`, :func:`tree_graph` and :func:`nvls_graph` (see their docstrings).
"""
from __future__ import annotations

import math

__all__ = [
    "NCCL_RELEASE", "NCCL_TAG", "NCCL_COMMIT", "cite", "ALGORITHMS", "PROTOCOLS",
    "BASE_LAT", "HW_LAT", "LL_MAX_BW", "PER_CH_MAX_RING_LL128_BW", "PER_CH_MAX_TREE_LL128_BW",
    "PER_CH_MAX_TREE_BW", "NVLS_EFFICIENCY", "TREE_CORRECTION", "NVLINK_BW", "SPEED_ARRAY_INTRA",
    "RING_LL_FACTOR", "RING_LL128_FACTOR", "TREE_AR_FACTOR", "TREE_LL_FACTOR", "TREE_LL128_FACTOR_1NODE",
    "MAXCHANNELS", "RING_MAX_CHANNELS", "NVLS_MAX_ARITY", "NVLS_NCHANNELS_SM90", "NVLS_NCHANNELS_SM100",
    "NVLS_NCHANNELS_SM100_NVL", "speed_key", "MAX_THREADS",
    "THREAD_THRESHOLD", "compcap_index", "ring_graph", "tree_graph", "nvls_graph", "bandwidth",
    "latency", "tree_correction",
]

NCCL_RELEASE = "2.29.2"
NCCL_TAG = "v2.29.2-1"
NCCL_COMMIT = "ebd1e929285881cb4df02c3459588a2e12b2d8c0"


def cite(path: str, lines: str) -> str:
    """'github.com/NVIDIA/nccl v2.29.2-1 (ebd1e92) src/…:lines' — how this module cites.

    >>> cite("src/graph/tuning.cc", "143-148")
    'github.com/NVIDIA/nccl v2.29.2-1 (ebd1e92) src/graph/tuning.cc:143-148'
    """
    return f"github.com/NVIDIA/nccl {NCCL_TAG} ({NCCL_COMMIT[:7]}) {path}:{lines}"


ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
"""NCCL's algorithm order (src/include/plugin/nccl_tuner.h:26-32)."""
PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocol order (nccl_tuner.h:36-38)."""

BASE_LAT = {  # µs, tuning.cc:143-148
    "tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4),
    "collnet_direct": (0, 0, 0), "collnet_chain": (0, 0, 0),
    "nvls": (0, 0, 0), "nvls_tree": (0, 0, 0), "pat": (8.0, 8.0, 8.0),
}
"""Base latency (µs) per algorithm × (LL, LL128, Simple): ``cite("src/graph/tuning.cc", "143-148")``."""

HW_LAT = {  # µs, tuning.cc:149-168
    "nvlink": {"tree": (.6, 1.25, 4.0), "ring": (.6, 1.9, 3.4), "collnet_direct": (0, 0, 3.7),
               "collnet_chain": (0, 0, 2.8), "nvls": (0, 0, 25), "nvls_tree": (0, 0, 25), "pat": (0, 0, 4.0)},
    "pci": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7), "collnet_direct": (0, 0, 3.7),
            "collnet_chain": (0, 0, 2.8), "nvls": (0, 0, 0), "nvls_tree": (0, 0, 0), "pat": (0, 0, 4.0)},
    "net": {"tree": (5.0, 8.5, 14), "ring": (2.7, 4.0, 14.0), "collnet_direct": (0, 0, 31),
            "collnet_chain": (0, 0, 30), "nvls": (0, 0, 18), "nvls_tree": (0, 0, 20.9), "pat": (0, 0, 14)},
}
"""Per-hop hardware latency (µs), NVLink / PCI / NET × algorithm × protocol: tuning.cc:149-168."""

# Rows: compute-capability index (Volta, Ampere, Hopper, Blackwell, tuning.cc:249);
# columns: N1 / N2 / N4 (one node, two nodes, more, tuning.cc:250).
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
"""``llMaxBws`` (GB/s), tuning.cc:169-174 (one node: indexed by GPU generation, tuning.cc:252)."""
PER_CH_MAX_RING_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (34.5, 34.6, 34.5))
"""``perChMaxRingLL128Bws`` (GB/s per channel), tuning.cc:175-180."""
PER_CH_MAX_TREE_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
"""``perChMaxTreeLL128Bws`` (GB/s per channel), tuning.cc:181-186."""
PER_CH_MAX_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
"""``perChMaxTreeBws`` (GB/s per channel), tuning.cc:187-192."""
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)
"""``nvlsEfficiency`` per generation (Volta, Ampere, Hopper, Blackwell), tuning.cc:134-139."""

RING_LL_FACTOR = 0.5            # tuning.cc:304
RING_LL128_FACTOR = 0.92        # tuning.cc:305 ("120.0/128.0")
TREE_AR_FACTOR = 0.92           # tuning.cc:306
TREE_LL_FACTOR = 1.0 / 3.8      # tuning.cc:307
TREE_LL128_FACTOR_1NODE = 7.0 / 9.0   # tuning.cc:308 (one node)

TREE_CORRECTION = (  # tuning.cc:580-584, powers of two 64 B ... (index log2(nBytes >> 6))
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
)
"""``treeCorrectionFactor`` per protocol, applied to tree all-reduce for log2(nBytes/64) < 23
(tuning.cc:578-594): NCCL's own correction, not this module's."""

NVLINK_BW = {80: 20.0, 90: 20.6, 100: 40.1}
"""GB/s per NVLink: SM80_NVLINK_BW, SM90_NVLINK_BW, SM100_NVLINK_BW (src/graph/topo.h:19-20,
22).  A GPU's link to an NVSwitch carries ``count × NVLINK_BW`` (src/graph/topo.cc:612-613)."""
SPEED_ARRAY_INTRA = {
    80: (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    90: (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    100: (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
}
"""Per-channel speeds the one-node search tries, fastest first (search.cc:976, 981, 986;
chosen by compute capability, search.cc:1089-1091)."""


def speed_key(cc: int) -> int:
    """Key of the speed arrays for compute capability ``cc``: 100, 90 or 80 (search.cc:1090-1094).

    >>> speed_key(80), speed_key(90), speed_key(103)   # A100, H100, B300
    (80, 90, 100)
    """
    return 100 if cc >= 100 else 90 if cc >= 90 else 80

MAXCHANNELS = 64                  # src/include/device.h:86
RING_MAX_CHANNELS = MAXCHANNELS // 2   # src/init.cc:1061
NVLS_MAX_ARITY = 32               # device.h:208
NVLS_NCHANNELS_SM90 = 16          # src/transport/nvls.cc:148
NVLS_NCHANNELS_SM100 = 32         # nvls.cc:149 (Blackwell, more than one NVLink domain)
NVLS_NCHANNELS_SM100_NVL = 24     # nvls.cc:150 (Blackwell, one node or one MNNVL domain; nvls.cc:180-194)
MAX_THREADS = {"LL": 512, "LL128": 640, "Simple": 512}
"""Threads per channel: NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS
(device.h:92, 109, 90; ring and tree, tuning.cc:231-243, above PCI speed)."""
THREAD_THRESHOLD = {"LL": 8, "LL128": 8, "Simple": 64}
"""Bytes per thread before NCCL adds threads or channels (src/include/comm.h:42-44); ring LL
multiplies it by nRanks (tuning.cc:547)."""


def compcap_index(cc: int) -> int:
    """Row of the per-generation tables: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (tuning.cc:249).

    >>> [compcap_index(cc) for cc in (70, 80, 90, 100)], LL_MAX_BW[compcap_index(90)][0]
    ([0, 1, 2, 3], 141.0)
    """
    return 3 if cc >= 100 else 2 if cc >= 90 else 1 if cc >= 80 else 0


def _fits(n_channels: int, speed: float, total_bw: float) -> bool:
    return n_channels * speed <= total_bw + 1e-9


def ring_graph(link_bw: float, cc: int) -> tuple[int, float]:
    """(nChannels, bwIntra) of the ring graph on an NVSwitch node whose GPUs each have
    ``link_bw`` GB/s to the switch.

    Each ring channel takes ``speed`` out of and into every GPU's switch link, so a speed
    carries ``floor(link_bw/speed)`` channels (at most :data:`RING_MAX_CHANNELS`).  Pass 1
    (search.cc:1101-1177) starts at the fastest speed that fits, keeps the graph with the
    most ``nChannels × speed`` (ties: the faster), stops when that reaches ``link_bw`` or
    the channel limit, and otherwise tries slower speeds while they are above 0.49 of the
    best found.  Then ncclTopoDupChannels (search.cc:961-974) doubles the channels at half
    the speed, unless the speed is < 25 GB/s, or the GPU is newer than SM80 with speed
    < 50 and more than 4 channels.  Pass 2 (search.cc:1194-1200) tries faster speeds with
    the same channel count, which on a switch never fits after a doubling.

    An H100's 18 NVLinks of 20.6 GB/s: 6 channels at 60 GB/s, doubled to 12 at 30:

    >>> ring_graph(18 * NVLINK_BW[90], cc=90)
    (12, 30.0)
    """
    speeds = SPEED_ARRAY_INTRA[speed_key(cc)]
    i = next((k for k, s in enumerate(speeds) if s <= link_bw), len(speeds) - 1)
    best = (0, 0.0)
    for s in speeds[i:]:
        if best[0] and s / best[1] <= 0.49:
            break
        n = min(RING_MAX_CHANNELS, int(link_bw // s + 1e-9))
        if n and n * s > best[0] * best[1]:
            best = (n, s)
        if best[0] == RING_MAX_CHANNELS or best[0] * best[1] >= link_bw:
            break
    n, s = best
    if n == 0:
        raise ValueError(f"no ring fits a {link_bw:g} GB/s link (slowest speed {speeds[-1]:g} GB/s)")
    if s >= 25.0 and not (cc > 80 and s < 50.0 and n > 4):
        dup = min(2 * n, RING_MAX_CHANNELS)
        s, n = s / math.ceil(dup / n), dup
    for faster in reversed([x for x in speeds if x > s]):
        if _fits(n, faster, link_bw):
            s = faster
    return n, s


def tree_graph(link_bw: float, cc: int, n_channels: int, ngpus: int) -> tuple[int, float]:
    """(nChannels, bwIntra) of the one-node tree graph: exactly the ring's channel count
    (init.cc:1068-1069, min = max = ring channels); the first speed with ``speed ≤ link_bw``
    and ``nChannels·speed ≤ link_bw·ngpus/(ngpus−1)`` (search.cc:1100-1101) at which a chain
    through the switch fits (``nChannels·speed ≤ link_bw``).  ncclTopoDupChannels cannot add
    channels here: its limit is min(2·nChannels, maxChannels) = nChannels (search.cc:967).

    >>> tree_graph(18 * NVLINK_BW[90], cc=90, n_channels=12, ngpus=8)
    (12, 30.0)
    """
    speeds = SPEED_ARRAY_INTRA[speed_key(cc)]
    scaled = link_bw * ngpus / (ngpus - 1)
    for s in speeds:
        if s <= link_bw and n_channels * s <= scaled + 1e-9 and _fits(n_channels, s, link_bw):
            return n_channels, s
    raise ValueError(f"no tree of {n_channels} channels fits a {link_bw:g} GB/s link")


def nvls_graph(link_bw: float, cc: int, ngpus: int) -> tuple[int, float, float]:
    """(nChannels, bwIntra, bwInter) of the one-node NVLS graph.

    One channel per head GPU, all required (search.cc:1064, 1069-1072: min = max =
    n = min(32, ngpus)).  A channel with head g moves ``speed`` over every GPU's switch link
    and ``2·speed`` over g's (search.cc:386-401, ncclTopoSearchTryNvls), so n channels
    need ``(n+1)·speed ≤ link_bw``: the first such speed of the array, starting where
    ``n·speed ≤ link_bw·ngpus/(ngpus−1)``.  Pass 2 then raises bwInter, one step at a
    time, while it is below ``2·bwIntra`` (search.cc:1201-1204); on one node nothing limits
    it, so it ends at the first speed ≥ 2·bwIntra or the top of the array.

    Eight heads on 8 x H100: 9 x 40 GB/s fits the 370.8 GB/s link, 9 x 50 does not:

    >>> nvls_graph(18 * NVLINK_BW[90], cc=90, ngpus=8)
    (8, 40.0, 60.0)
    >>> nvls_graph(12 * NVLINK_BW[80], cc=80, ngpus=8)
    Traceback (most recent call last):
    ...
    ValueError: NVLS needs compute capability >= 9.0 (search.cc:1062)
    """
    if cc < 90:
        raise ValueError("NVLS needs compute capability >= 9.0 (search.cc:1062)")
    speeds = SPEED_ARRAY_INTRA[speed_key(cc)]
    n = min(NVLS_MAX_ARITY, ngpus)
    scaled = link_bw * ngpus / (ngpus - 1)
    for k, s in enumerate(speeds):
        if s <= link_bw and n * s <= scaled + 1e-9 and (n + 1) * s <= link_bw + 1e-9:
            inter = k
            while inter > 0 and speeds[inter] < 2 * s:
                inter -= 1
            return n, s, speeds[inter]
    raise ValueError(f"no NVLS graph fits a {link_bw:g} GB/s link")


def bandwidth(coll: str, algo: str, proto: str, cc: int, nranks: int, n_channels: float,
              bw_intra: float, bw_inter: float | None = None) -> float:
    """NCCL's bandwidth (GB/s, algorithm bandwidth as NCCL stores it) on one node:
    tuning.cc:284-351 with nNodes = 1, ppn = nranks, maxTreePattern = balanced tree.

    ``n_channels`` may be fractional (:mod:`.nccl_model` passes the channels a small
    message actually uses, in graph-channel units); per-channel caps scale with it,
    ``llMaxBw`` (a total) does not.  ``coll``: all_reduce, all_gather or reduce_scatter.

    Ring Simple all-reduce on 8 x H100: 12 channels x 30 GB/s of bus bandwidth, as
    algorithm bandwidth x nRanks/nsteps = 8/14:

    >>> round(bandwidth("all_reduce", "ring", "Simple", cc=90, nranks=8, n_channels=12, bw_intra=30.0), 4)
    205.7143
    """
    ci = compcap_index(cc)
    nsteps = 2 * (nranks - 1) if coll == "all_reduce" else nranks - 1
    bw = bw_intra
    if algo == "nvls":
        intra = bw_intra * NVLS_EFFICIENCY[ci] * (n_channels - 1) / n_channels
        intra *= 2.0 if coll == "all_reduce" else (nranks - 1) / nranks
        bw = min(intra, bw_inter if bw_inter is not None else math.inf)
    bus = n_channels * bw
    if algo == "ring" and proto == "LL":
        bus = min(LL_MAX_BW[ci][0], bus * RING_LL_FACTOR)
    if algo == "ring" and proto == "LL128":
        bus = min(bus * RING_LL128_FACTOR, n_channels * PER_CH_MAX_RING_LL128_BW[ci][0])
    if algo == "tree" and coll == "all_reduce":
        bus = min(bus * TREE_AR_FACTOR, n_channels * PER_CH_MAX_TREE_BW[ci][0])
    if algo == "tree" and proto == "LL":
        bus = min(bus * TREE_LL_FACTOR, LL_MAX_BW[ci][0])
    if algo == "tree" and proto == "LL128":
        bus = min(bus * TREE_LL128_FACTOR_1NODE, n_channels * PER_CH_MAX_TREE_LL128_BW[ci][0])
    if not (algo != "ring" and coll in ("all_gather", "reduce_scatter")):
        bus *= nranks / nsteps if algo in ("ring", "nvls") else 0.5
    return bus


def latency(coll: str, algo: str, proto: str, nranks: int) -> float:
    """NCCL's latency (µs) on one node over NVLink: tuning.cc:353-395 with nNodes = 1.

    Ring Simple all-reduce on 8 ranks: 8.4 + 2·7 x 3.4 µs; NVLS: its 25 µs hop alone:

    >>> round(latency("all_reduce", "ring", "Simple", 8), 6), latency("all_reduce", "nvls", "Simple", 8)
    (56.0, 25)
    """
    p = PROTOCOLS.index(proto)
    hw = HW_LAT["nvlink"][algo][p]
    if algo == "ring":
        nsteps = 2 * (nranks - 1) if coll == "all_reduce" else nranks - 1
        return BASE_LAT["ring"][p] + nsteps * hw
    if algo == "tree":
        return BASE_LAT["tree"][p] + (2 * (nranks - 1) * hw if coll == "all_reduce" else 0.0)
    if algo == "nvls":
        return hw
    raise ValueError(f"no one-node latency for algorithm {algo!r}")


def tree_correction(proto: str, nbytes: float) -> float:
    """treeCorrectionFactor at log2i(nBytes >> 6) when that is in [0, 23), else 1 (tuning.cc:593-594).

    >>> tree_correction("Simple", 64), tree_correction("Simple", 128 * 1024), tree_correction("Simple", 2**40)
    (0.9, 0.5, 1.0)
    """
    shifted = int(nbytes) >> 6
    log_size = shifted.bit_length() - 1          # log2i; -1 for 0
    return TREE_CORRECTION[PROTOCOLS.index(proto)][log_size] if 0 <= log_size < 23 else 1.0
