r"""Which algorithm and protocol NCCL picks on one node, and what that costs.

The model is NCCL 2.29.2's own tuning model (:mod:`.nccl_tuning`, every constant cited
there by file and line): for each (algorithm, protocol) pair a latency and a bandwidth,
``time = latency + size / bandwidth`` (ncclTopoGetAlgoTime, tuning.cc:586-603), and the pair
with the least time wins, as in ``topoGetAlgoInfo`` (src/enqueue.cc:1935-1947).  :func:`table` gives the pairs, :func:`choose`
the winner, :func:`predict_nccl` time and bus bandwidth per size, :func:`compare` puts a
prediction next to a parsed nccl-tests run (the records, :class:`Prediction` and
:class:`Comparison`, are defined in :mod:`.comparison` and re-exported here).

A node is a :class:`Node`; :data:`H100_8` (NVLink 4, 18 links, NVLS on) and :data:`A100_8`
(NVLink 3, 12 links) are the two nodes of the recorded logs.  Sizes are nccl-tests' (the
whole buffer; all-gather and reduce-scatter: nranks × the per-rank count), which is NCCL's
``nBytes`` (src/include/enqueue.h:36-37).

Simplifications, honestly:

* **One node, NVSwitch only.**  The graph search (channels and per-channel bandwidth) is
  replaced by its closed form on a switch (:func:`.nccl_tuning.ring_graph` and friends):
  on 8×H100, 18 × 20.6 = 370.8 GB/s per GPU gives ring and tree 12 channels × 30 GB/s and
  NVLS 8 channels × 40 GB/s; on 8×A100, 12 × 20 = 240 GB/s gives 12 × 20.  Direct NVLink
  meshes (``nvswitch=False``) are not modelled.  Across nodes NCCL adds NET latencies,
  ``bwInter``, CollNet (SHARP) and NVLS-Tree (:mod:`.nccl_cluster`); on one node CollNet is off unless a SHARP
  network is configured (tuning.cc:468-471), NVLS-Tree is off (tuning.cc:466) and PAT needs
  one GPU per node (tuning.cc:206): :func:`unavailable` says so per pair.  ``nics`` describes
  the node; no one-node quantity of NCCL's model uses it.
* The tree is taken to be NCCL's balanced tree (no ×0.85 of tuning.cc:309); LL128 is on
  (NVLink, one GPU generation, tuning.cc:478-494).
* **NVLS** is NCCL's model: per channel ``bwIntra × 0.85 × (nCh−1)/nCh``, ×2 for all-reduce
  because the switch reduces (multimem) and the reduce-scatter and all-gather halves
  pipeline.  On 8×H100 that is 8 × 59.5 = 476 GB/s of bus bandwidth, above NVLink 4's
  450 GB/s per direction — as the measured 482 GB/s is.  For all-gather and reduce-scatter
  NVLS gets ×7/8 instead and loses to the ring.
* **Time as nccl-tests measures it** (:func:`predict_nccl`, :func:`compare`) keeps NCCL's choice
  and adds two things NCCL's cost table leaves out.  (i) The channels a small message really
  runs on: NCCL drops channels while ``nBytes < nc · nThreads · threshold``
  (src/enqueue.cc:1994-1998) out of the 2 × 12 = 24 runtime channels (connect.cc:452), each
  carrying 1/24 of the graph's bandwidth; NVLS always runs its 16 (nvls.cc:148, enqueue.cc:
  1986-1992).  Because the count is an integer, time between powers of two is a sawtooth.
  (ii) ``overhead``: host launch and timing that nccl-tests includes and NCCL's model does
  not; :func:`compare` can read it off a log's smallest size (one number per log).

Accuracy (``benchmarks/accuracy.py``, median ``|busbw error|``): 8×H100 NCCL 2.29.2, 32 MiB–16 GiB,
3.6 / 3.4 / 2.1 % for all-reduce / all-gather / reduce-scatter with nothing fitted; Azure
8×H100 all-reduce 9.0 % (≥ 1 MiB) and 3.4 % (below); 8×A100 all-reduce 15.2 % and 29.1 %,
missing the 10 % and 25 % targets.  That log names no NCCL release (its date points to 2.18.x)
and no release's model does better (code/commbook/data/measured/nccl-tests/PROVENANCE.md compares 2.8–2.29):
from 16 to 256 MiB its times start at ~132 µs, where every release gives a ring Simple
all-reduce 56 µs, and below 1 MiB they grow where NCCL's channel rule keeps the time flat.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..bandwidth import BUSBW_FACTORS
from ..checks import as_value_error, check_int, check_node, check_nonneg, check_size, check_sizes, first_arg
from . import nccl_tuning as T
from .comparison import TARGETS, WORST_TARGET, Comparison, Prediction, compare_predicted
from .records import Run

__all__ = ["Node", "GPUS", "H100_8", "A100_8", "PRESETS", "MODELLED_COLLECTIVES", "Graphs", "graphs", "Entry",
           "table", "unavailable", "algo_time", "Choice", "choose", "runtime_channels", "Prediction",
           "predict_nccl", "MiB", "TARGETS", "WORST_TARGET", "Comparison", "compare"]

MiB = 2 ** 20
MODELLED_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
"""The collectives the NCCL-style predictor models (a subset of the registry's
:data:`commbook.collectives.COLLECTIVES`, hence the distinct name)."""
GPUS = {"H100": {"cc": 90, "nvlink_gen": 4, "max_nvlinks": 18},
        "A100": {"cc": 80, "nvlink_gen": 3, "max_nvlinks": 12},
        "H200": {"cc": 90, "nvlink_gen": 4, "max_nvlinks": 18}}
"""Compute capability, NVLink generation and NVLinks per GPU of the GPUs one node is modelled
for (H200: Hopper, NVLink 4 × 18 like H100).  Blackwell (SM100) and many nodes:
:mod:`.nccl_cluster`."""


@dataclass(frozen=True)
class Node:
    """One node: ``ngpus`` GPUs of type ``gpu`` ("H100" or "A100"), each with ``nvlinks``
    links of NVLink generation ``nvlink_gen`` to NVSwitches; ``nvls``: NVLink SHARP
    available (H100 with NVSwitch only); ``nics``: NICs per node (descriptive here).

    >>> H100_8.cc, round(H100_8.link_bw, 6), A100_8.link_bw   # 18 x 20.6 and 12 x 20 GB/s
    (90, 370.8, 240.0)
    >>> Node("A100", 3, 12, nvls=True)
    Traceback (most recent call last):
    ...
    ValueError: NVLS needs an NVSwitch and compute capability >= 9.0 (search.cc:1062); A100 has 8.0, nvswitch=True
    """

    gpu: str
    nvlink_gen: int
    nvlinks: int
    nvswitch: bool = True
    nvls: bool = False
    nics: int = 0
    ngpus: int = 8

    def __post_init__(self) -> None:
        if self.gpu not in GPUS:
            raise ValueError(f"unknown GPU {self.gpu!r}; known: {', '.join(GPUS)}")
        spec = GPUS[self.gpu]
        for f, lo, hi in (("nvlink_gen", 1, 9), ("nvlinks", 1, spec["max_nvlinks"]), ("nics", 0, 64), ("ngpus", 2, 72)):
            object.__setattr__(self, f, check_int(getattr(self, f), f, lo=lo, hi=hi))
        if self.nvlink_gen != spec["nvlink_gen"]:
            raise ValueError(f"{self.gpu} has NVLink {spec['nvlink_gen']}, got nvlink_gen={self.nvlink_gen}")
        if not isinstance(self.nvswitch, bool) or not isinstance(self.nvls, bool):
            raise TypeError("nvswitch and nvls must be True or False")
        if self.nvls and (spec["cc"] < 90 or not self.nvswitch):
            raise ValueError(f"NVLS needs an NVSwitch and compute capability >= 9.0 (search.cc:1062); "
                             f"{self.gpu} has {spec['cc'] / 10:.1f}, nvswitch={self.nvswitch}")

    @property
    def cc(self) -> int:
        """Compute capability × 10 (90 for H100, 80 for A100)."""
        return GPUS[self.gpu]["cc"]

    @property
    def link_bw(self) -> float:
        """GB/s from one GPU to the switch, as NCCL's topology counts it: nvlinks × NVLINK_BW."""
        return self.nvlinks * T.NVLINK_BW[self.cc]


H100_8 = Node("H100", 4, 18, nvswitch=True, nvls=True, nics=8)
"""8×H100 SXM, 18 NVLink 4 links each to NVSwitch, NVLS on (the 8×H100 logs)."""
A100_8 = Node("A100", 3, 12, nvswitch=True, nvls=False, nics=8)
"""8×A100 SXM, 12 NVLink 3 links each to NVSwitch (the 8×A100 log)."""
PRESETS = {"8xH100": H100_8, "8xA100": A100_8}


@dataclass(frozen=True)
class Graphs:
    """NCCL's graphs on the node: (channels, GB/s per channel) of ring and tree, NVLS's
    (channels, bwIntra, bwInter) or None, and the channel counts kernels run on.

    >>> graphs(A100_8)
    Graphs(ring=(12, 20.0), tree=(12, 20.0), nvls=None, runtime_channels=24, nvls_channels=0)
    """

    ring: tuple[int, float]
    tree: tuple[int, float]
    nvls: tuple[int, float, float] | None
    runtime_channels: int
    nvls_channels: int


@lru_cache(maxsize=None)
def graphs(node: Node) -> Graphs:
    """The graphs of :mod:`.nccl_tuning` for ``node``; comm->nChannels = min(ring, tree)
    (init.cc:1243), doubled when connecting (connect.cc:452).

    >>> g = graphs(H100_8)
    >>> g.ring, g.nvls, g.runtime_channels, g.nvls_channels
    ((12, 30.0), (8, 40.0, 60.0), 24, 16)
    """
    if not node.nvswitch:
        raise ValueError("only NVSwitch nodes are modelled: NCCL's search on a direct NVLink mesh "
                         "depends on the wiring")
    ring = T.ring_graph(node.link_bw, node.cc)
    tree = T.tree_graph(node.link_bw, node.cc, ring[0], node.ngpus)
    nvls = T.nvls_graph(node.link_bw, node.cc, node.ngpus) if node.nvls else None
    return Graphs(ring, tree, nvls, min(T.MAXCHANNELS, 2 * min(ring[0], tree[0])),
                  T.NVLS_NCHANNELS_SM90 if nvls else 0)


def _coll(collective: str) -> str:
    if collective not in MODELLED_COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; modelled: {', '.join(MODELLED_COLLECTIVES)}")
    return collective


def _proto(algo: str, proto: str) -> str:
    if proto not in T.PROTOCOLS:
        raise ValueError(f"unknown protocol {proto!r}; valid: {', '.join(T.PROTOCOLS)}")
    if algo not in T.ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; valid: {', '.join(T.ALGORITHMS)}")
    return proto


def unavailable(node: Node, collective: str) -> dict[tuple[str, str], str]:
    """Every (algorithm, protocol) pair NCCL does not consider here, with the reason.

    >>> unavailable(H100_8, "all_gather")[("tree", "Simple")]
    'tree runs all-reduce only among these (tuning.cc:274-276)'
    """
    c, out = _coll(collective), {}
    for a in T.ALGORITHMS:
        for p in T.PROTOCOLS:
            why = None
            if a in ("collnet_direct", "collnet_chain"):
                why = "CollNet needs a SHARP network and NCCL_COLLNET_ENABLE; off by default (tuning.cc:468-471)"
            elif a == "nvls_tree":
                why = "NVLS-Tree is disabled on one node (tuning.cc:466)"
            elif a == "pat":
                why = ("PAT is not used for all-reduce (tuning.cc:277)" if c == "all_reduce" else
                       "PAT needs one GPU per node (tuning.cc:206)")
            elif a == "tree" and c != "all_reduce":
                why = "tree runs all-reduce only among these (tuning.cc:274-276)"
            elif a == "nvls" and not node.nvls:
                why = "no NVLS on this node (needs NVSwitch and SM90, search.cc:1062)"
            elif a == "nvls" and p != "Simple":
                why = "NVLS has only the Simple protocol (tuning.cc:280)"
            if why:
                out[(a, p)] = why
    return out


@dataclass(frozen=True)
class Entry:
    """One pair of NCCL's table: ``latency`` (s) and ``bandwidth`` (bytes/s, the algorithm
    bandwidth NCCL divides the size by).

    NVLS all-reduce on 8 x H100: 25 µs, 272 GB/s of algorithm bandwidth (476 GB/s of busbw):

    >>> e = table(H100_8, "all_reduce")[("nvls", "Simple")]
    >>> round(e.latency * 1e6, 6), round(e.bandwidth / 1e9, 6), round(e.bandwidth * 14 / 8 / 1e9, 6)
    (25.0, 272.0, 476.0)
    """

    algo: str
    proto: str
    latency: float
    bandwidth: float


def _bw_gbps(node: Node, coll: str, algo: str, proto: str, graph_channels: float | None = None) -> float:
    g = graphs(node)
    if algo == "nvls":
        n, intra, inter = g.nvls
        return T.bandwidth(coll, algo, proto, node.cc, node.ngpus, n, intra, inter)
    n, bw = g.ring if algo == "ring" else g.tree
    return T.bandwidth(coll, algo, proto, node.cc, node.ngpus, n if graph_channels is None else graph_channels, bw)


@lru_cache(maxsize=None)
def _table(node: Node, collective: str) -> dict[tuple[str, str], Entry]:
    c, skip = _coll(collective), unavailable(node, collective)
    return {(a, p): Entry(a, p, T.latency(c, a, p, node.ngpus) * 1e-6, _bw_gbps(node, c, a, p) * 1e9)
            for a in T.ALGORITHMS for p in T.PROTOCOLS if (a, p) not in skip}


def table(node: Node, collective: str) -> dict[tuple[str, str], Entry]:
    """NCCL's latency and bandwidth for every pair it considers, in its order (algorithm-major).

    >>> list(table(H100_8, "all_reduce"))
    [('tree', 'LL'), ('tree', 'LL128'), ('tree', 'Simple'), ('ring', 'LL'), ('ring', 'LL128'), ('ring', 'Simple'), ('nvls', 'Simple')]
    """
    return dict(_table(node, collective))


def algo_time(node: Node, collective: str, algo: str, proto: str, nbytes: float) -> float:
    """ncclTopoGetAlgoTime (tuning.cc:586-603) in seconds: latency + nbytes / bandwidth, the
    tree all-reduce bandwidth times :func:`.nccl_tuning.tree_correction`.

    >>> round(algo_time(H100_8, "all_reduce", "ring", "Simple", 0) * 1e6, 6)   # the latency alone
    56.0
    >>> algo_time(H100_8, "all_gather", "tree", "Simple", 1e6)
    Traceback (most recent call last):
    ...
    ValueError: tree/Simple is not available for all_gather: tree runs all-reduce only among these (tuning.cc:274-276)
    """
    nbytes = check_size(nbytes, "nbytes")
    entries = _table(node, collective)
    if (algo, _proto(algo, proto)) not in entries:
        raise ValueError(f"{algo}/{proto} is not available for {collective}: "
                         f"{unavailable(node, collective)[(algo, proto)]}")
    e = entries[(algo, proto)]
    bw = e.bandwidth * (T.tree_correction(proto, nbytes) if algo == "tree" else 1.0)
    return e.latency + nbytes / bw


@dataclass(frozen=True)
class Choice:
    """NCCL's pick for one size: algorithm, protocol, and its model time (s).

    >>> c = choose(H100_8, "all_reduce", 1e9)
    >>> c.algo, c.proto, round(c.time * 1e3, 4)   # 25 µs + 1 GB / 272 GB/s
    ('nvls', 'Simple', 3.7015)
    """

    algo: str
    proto: str
    time: float


def choose(node: Node, collective: str, nbytes: float) -> Choice:
    """The pair with the least :func:`algo_time`; ties go to the earlier pair in NCCL's order
    (strict ``<``, enqueue.cc:1941).

    >>> [(c.algo, c.proto) for c in (choose(H100_8, "all_reduce", n) for n in (1e3, 1e9))]
    [('ring', 'LL'), ('nvls', 'Simple')]
    """
    best = None
    for (a, p) in _table(node, collective):
        t = algo_time(node, collective, a, p, nbytes)
        if best is None or t < best.time:
            best = Choice(a, p, t)
    return best


def runtime_channels(node: Node, algo: str, proto: str, nbytes: float) -> int:
    """Channels the kernel runs on (enqueue.cc:1972-1998): NVLS its fixed count; ring and
    tree start from the runtime count and drop one while nbytes < nc × threads × threshold
    (the ring LL threshold × nranks, tuning.cc:547).

    >>> [runtime_channels(H100_8, "ring", "Simple", n) for n in (1e9, 64 * 1024)], runtime_channels(H100_8, "nvls", "Simple", 1e3)
    ([24, 2], 16)
    """
    nbytes, g = check_size(nbytes, "nbytes"), graphs(node)
    _proto(algo, proto)
    if algo == "nvls":
        return g.nvls_channels
    nt = T.MAX_THREADS[proto]
    thr = T.THREAD_THRESHOLD[proto] * (node.ngpus if algo == "ring" and proto == "LL" else 1)
    nc = g.runtime_channels
    while nbytes < nc * nt * thr and nc >= 2:
        nc -= 1
    return nc


def predict_nccl(node: Node, collective: str, sizes, overhead: float = 0.0, runtime: bool = True) -> Prediction:
    """Time and bus bandwidth of ``collective`` at each size on ``node``.

    NCCL's choice per size (:func:`choose`); its time with the channels the kernel runs on
    (``runtime=True``, see the module docstring) or NCCL's own model time (``runtime=False``);
    plus ``overhead`` seconds (≥ 0) per call.  (Named ``predict_nccl``, not ``predict``:
    :func:`commbook.collectives.predict` is the registry's closed form of one algorithm.)

    >>> p = predict_nccl(H100_8, "all_reduce", [1e3, 1e9])
    >>> p.algo, p.proto
    (('ring', 'nvls'), ('LL', 'Simple'))
    >>> "broadcast" in MODELLED_COLLECTIVES
    False
    """
    c = _coll(collective)
    overhead = as_value_error(check_nonneg, overhead, "overhead", "a finite number of seconds")
    n = check_sizes(sizes)
    g, times, algos, protos, chans = graphs(node), [], [], [], []
    for x in n:
        x = check_size(x, "sizes")
        ch = choose(node, c, x)
        nc = runtime_channels(node, ch.algo, ch.proto, x)
        t = ch.time
        if runtime and ch.algo != "nvls":
            graph_n = (g.ring if ch.algo == "ring" else g.tree)[0]
            bw = _bw_gbps(node, c, ch.algo, ch.proto, nc * graph_n / g.runtime_channels) * 1e9
            bw *= T.tree_correction(ch.proto, x) if ch.algo == "tree" else 1.0
            t = _table(node, c)[(ch.algo, ch.proto)].latency + x / bw
        times.append(t + overhead)
        algos.append(ch.algo)
        protos.append(ch.proto)
        chans.append(nc)
    t = np.array(times)
    bus = BUSBW_FACTORS[c](node.ngpus) * n / t
    return Prediction(c, n, t, bus, tuple(algos), tuple(protos), tuple(chans), float(overhead))


def compare(run: Run, node: Node, placement: str | None = None, overhead: float | str = "auto") -> Comparison:
    """Predict ``run``'s sizes on ``node`` and compare busbw, with the α–β ring fit of
    :func:`.fitting.fit_run` (fitted to all of the run's sizes) alongside.

    ``overhead="auto"``: when the run reaches below 1 MiB, the measured time at its smallest
    size minus the predicted one there (≥ 0), else 0; or a number of seconds.

    The recorded 8 x H100 all-reduce (32 MiB to 16 GiB) is within 3.6 % at the median:

    >>> from commbook.measure import load_log
    >>> c = compare(load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0], H100_8)
    >>> round(c.median(">= 1 MiB"), 3), c.status(">= 1 MiB"), c.overhead
    (0.036, 'PASS', 0.0)
    """
    check_node(node, "node", Node)
    return compare_predicted(run, node.ngpus, "the node", _coll, functools.partial(predict_nccl, node),
                             placement, overhead)


for _f in ("graphs", "unavailable", "table", "algo_time", "choose", "runtime_channels", "predict_nccl"):
    globals()[_f] = first_arg(Node, "node")(globals()[_f])   # node=None: TypeError naming node
