r"""Which algorithm and protocol NCCL picks on one node, and what that costs.

The model is NCCL 2.29.2's own tuning model (:mod:`.nccl_tuning`, every constant cited
there by file and line): for each (algorithm, protocol) pair a latency and a bandwidth,
``time = latency + size / bandwidth`` (ncclTopoGetAlgoTime, tuning.cc:586-603), and the pair
with the least time wins, as in ``topoGetAlgoInfo`` (src/enqueue.cc:1935-1947).  :func:`table` gives the pairs, :func:`choose`
the winner, :func:`predict_nccl` time and bus bandwidth per size, :func:`compare` puts a
prediction next to a parsed nccl-tests run.

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

Accuracy (``benchmarks/accuracy.py``, median |busbw error|): 8×H100 NCCL 2.29.2, 32 MiB–16 GiB,
3.6 / 3.4 / 2.1 % for all-reduce / all-gather / reduce-scatter with nothing fitted; Azure
8×H100 all-reduce 9.0 % (≥ 1 MiB) and 3.4 % (below); 8×A100 all-reduce 15.2 % and 29.1 %,
missing the 10 % and 25 % targets.  That log names no NCCL release (its date points to 2.18.x)
and no release's model does better (code/commbook/data/measured/nccl-tests/PROVENANCE.md compares 2.8–2.29):
from 16 to 256 MiB its times start at ~132 µs, where every release gives a ring Simple
all-reduce 56 µs, and below 1 MiB they grow where NCCL's channel rule keeps the time flat.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..bandwidth import BUSBW_FACTORS
from ..checks import as_value_error, check_int, check_node, check_nonneg, check_size, check_sizes, first_arg
from . import nccl_tuning as T
from .fitting import Fit, fit_run
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
    available (H100 with NVSwitch only); ``nics``: NICs per node (descriptive here)."""

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
    (channels, bwIntra, bwInter) or None, and the channel counts kernels run on."""

    ring: tuple[int, float]
    tree: tuple[int, float]
    nvls: tuple[int, float, float] | None
    runtime_channels: int
    nvls_channels: int


@lru_cache(maxsize=None)
def graphs(node: Node) -> Graphs:
    """The graphs of :mod:`.nccl_tuning` for ``node``; comm->nChannels = min(ring, tree)
    (init.cc:1243), doubled when connecting (connect.cc:452)."""
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
    """Every (algorithm, protocol) pair NCCL does not consider here, with the reason."""
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
    bandwidth NCCL divides the size by)."""

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
    """NCCL's latency and bandwidth for every pair it considers, in its order (algorithm-major)."""
    return dict(_table(node, collective))


def algo_time(node: Node, collective: str, algo: str, proto: str, nbytes: float) -> float:
    """ncclTopoGetAlgoTime (tuning.cc:586-603) in seconds: latency + nbytes / bandwidth, the
    tree all-reduce bandwidth times :func:`.nccl_tuning.tree_correction`."""
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
    """NCCL's pick for one size: algorithm, protocol, and its model time (s)."""

    algo: str
    proto: str
    time: float


def choose(node: Node, collective: str, nbytes: float) -> Choice:
    """The pair with the least :func:`algo_time`; ties go to the earlier pair in NCCL's order
    (strict ``<``, enqueue.cc:1941)."""
    best = None
    for (a, p) in _table(node, collective):
        t = algo_time(node, collective, a, p, nbytes)
        if best is None or t < best.time:
            best = Choice(a, p, t)
    return best


def runtime_channels(node: Node, algo: str, proto: str, nbytes: float) -> int:
    """Channels the kernel runs on (enqueue.cc:1972-1998): NVLS its fixed count; ring and
    tree start from the runtime count and drop one while nbytes < nc × threads × threshold
    (the ring LL threshold × nranks, tuning.cc:547)."""
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


@dataclass(frozen=True)
class Prediction:
    """Per size: time (s), busbw (bytes/s, nccl-tests' definition), NCCL's pick and channels."""

    collective: str
    sizes: np.ndarray
    time: np.ndarray
    busbw: np.ndarray
    algo: tuple[str, ...]
    proto: tuple[str, ...]
    channels: tuple[int, ...]
    overhead: float


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


TARGETS = {">= 1 MiB": 0.10, "< 1 MiB": 0.25}
"""Median absolute relative busbw error the predictor should reach per log and collective."""
WORST_TARGET = 0.25
"""The largest |busbw error| the predictor may have at any size >= 1 MiB of a log."""


@dataclass(frozen=True)
class Comparison:
    """A run against the prediction and against an α–β ring fit.

    ``errors`` (the predictor), ``nccl_errors`` (NCCL's own model time: full channels, no
    overhead) and ``fit_errors`` are relative busbw errors, predicted/measured − 1 (= measured
    time / predicted time − 1).  ``calibrated_at`` is the size the overhead was read at
    (``None`` if it was given or zero); :meth:`median` leaves that size out."""

    collective: str
    sizes: np.ndarray
    measured: np.ndarray
    prediction: Prediction
    errors: np.ndarray
    fit: Fit
    fit_errors: np.ndarray
    nccl_errors: np.ndarray
    overhead: float
    calibrated_at: float | None
    notes: tuple[str, ...] = field(default=())

    def band(self, band: str) -> np.ndarray:
        """Mask of the sizes in ``band`` (a key of :data:`TARGETS`), calibration size excluded."""
        if band not in TARGETS:
            raise ValueError(f"unknown band {band!r}; valid: {', '.join(TARGETS)}")
        mask = self.sizes >= MiB if band == ">= 1 MiB" else self.sizes < MiB
        return mask & (self.sizes != self.calibrated_at) if self.calibrated_at is not None else mask

    def median(self, band: str, of: str = "model") -> float:
        """Median |error| of the predictor (``of="model"``), the ring fit (``"fit"``) or NCCL's
        own time (``"nccl"``) in ``band``; NaN when the run has no size there."""
        errors = {"model": self.errors, "fit": self.fit_errors, "nccl": self.nccl_errors}
        if of not in errors:
            raise ValueError(f"of must be one of {', '.join(errors)}, got {of!r}")
        e = errors[of][self.band(band)]
        return float(np.median(np.abs(e))) if e.size else math.nan

    def worst(self, band: str) -> float:
        """Largest |error| of the predictor in ``band``; NaN when the run has no size there."""
        e = self.errors[self.band(band)]
        return float(np.max(np.abs(e))) if e.size else math.nan

    def status(self, band: str) -> str:
        """``PASS``/``MISS`` of the predictor against :data:`TARGETS` (the median) and, at
        >= 1 MiB, :data:`WORST_TARGET` (the worst size); ``""`` for an empty band."""
        if not self.band(band).any():
            return ""
        ok = self.median(band) <= TARGETS[band] and (band != ">= 1 MiB" or self.worst(band) <= WORST_TARGET)
        return "PASS" if ok else "MISS"


def compare(run: Run, node: Node, placement: str | None = None, overhead: float | str = "auto") -> Comparison:
    """Predict ``run``'s sizes on ``node`` and compare busbw, with the α–β ring fit of
    :func:`.fitting.fit_run` (fitted to all of the run's sizes) alongside.

    ``overhead="auto"``: when the run reaches below 1 MiB, the measured time at its smallest
    size minus the predicted one there (≥ 0), else 0; or a number of seconds."""
    check_node(node, "node", Node)
    return compare_predicted(run, node.ngpus, "the node", _coll, functools.partial(predict_nccl, node),
                             placement, overhead)


def compare_predicted(run: Run, nranks: int, what: str, check_collective, predicted, placement: str | None,
                      overhead: float | str) -> Comparison:
    """:func:`compare` and :func:`.nccl_cluster.compare`: check ``run`` (a collective that
    ``check_collective`` accepts, on ``nranks`` ranks of ``what``), then set
    ``predicted(collective, sizes, overhead, runtime=True)`` against its times."""
    if not isinstance(run, Run):
        raise TypeError(f"run must be a commbook.measure.records.Run, got {type(run).__name__}")
    if run.collective is None:
        raise ValueError("the run does not say which collective it measured")
    c = check_collective(run.collective)
    if run.nranks != nranks:
        raise ValueError(f"the run has {run.nranks} ranks, {what} {nranks} GPUs")
    predicted = functools.partial(predicted, c)
    n, t = run.sizes(), run.times(placement)
    notes, at = [], None
    if overhead == "auto":
        k = int(np.argmin(n))
        overhead = 0.0
        if n[k] < MiB:
            overhead, at = max(0.0, float(t[k] - predicted(n[k:k + 1], 0.0).time[0])), float(n[k])
            notes.append(f"overhead read at the smallest size, {n[k]:.0f} B")
    pred = predicted(n, overhead)
    f = fit_run(run, placement=placement)
    own = predicted(n, 0.0, runtime=False).time
    return Comparison(c, n, BUSBW_FACTORS[c](run.nranks) * n / t, pred, t / pred.time - 1.0, f,
                      t / f.predicted - 1.0, t / own - 1.0, float(overhead), at, tuple(notes))


for _f in ("graphs", "unavailable", "table", "algo_time", "choose", "runtime_channels", "predict_nccl"):
    globals()[_f] = first_arg(Node, "node")(globals()[_f])   # node=None: TypeError naming node
