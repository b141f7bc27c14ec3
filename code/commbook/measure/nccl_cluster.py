r"""NCCL 2.29.2's pick and time on N nodes × G GPUs: :class:`Cluster`, the presets of the
recorded multi-node logs (defined in :mod:`.nccl_presets`), and :func:`predict_cluster` for a
reader's own cluster.

The model is NCCL's (``ncclTopoTuneModel``, src/graph/tuning.cc:230-404, in
:mod:`.nccl_net` and :mod:`.nccl_tuning`): a latency and a bandwidth per (algorithm,
protocol), the least ``lat + nBytes/bw`` wins (enqueue.cc:1935-1947), and the kernel runs
on the channels of enqueue.cc:1972-1998.  Across nodes NCCL adds NET latencies, ``bwInter``
from the NICs, the NET-dependent per-channel caps, and four algorithms: CollNet direct and
chain (SHARP; need ``NCCL_COLLNET_ENABLE=1``: :attr:`Cluster.sharp`), NVLS across nodes
(needs CollNet too, tuning.cc:468-471, enqueue.cc:1910) and NVLS-Tree (NVLS in the node, a
tree across), and PAT for all-gather / reduce-scatter with one GPU per node (tuning.cc:206).
A "node" is one NVLink domain (src/init.cc:795): a GB200 NVL72 rack is one node of 72 GPUs.

What is assumed, honestly:

* the graphs are :func:`.nccl_net.net_graphs`'s closed form for a rail-optimized network
  (one channel per NIC at least, ``bwInter`` = the NIC's speed as NCCL reads it), not NCCL's
  topology search; GPUs reach their NIC through PCIe (``pcie_gen``, Gen5 unless set) and
  LL128 stays on (NIC within PXN, tuning.cc:478-494);
* with SHARP the collective plugin offers no all-gather / reduce-scatter (so CollNet and
  NVLS are all-reduce only across nodes, tuning.cc:326-343);
* GPUDirect-TCPXO (Google A3 Mega) is seen through its net plugin as 8 NICs of 200 Gb/s
  reporting latency 0, like NCCL's own transports (net_ib/init.cc:401); no tuner plugin;
* ``cpu`` (intel, amd, arm) picks the LL bandwidth row and the net overhead (tuning.cc:211-219,
  251-253).

Accuracy against the six multi-node logs (``benchmarks/accuracy.py``; targets: median
``|busbw error|`` ≤ 10 % at ≥ 1 MiB and ≤ 25 % below, worst size ≥ 1 MiB ≤ 25 %).  Met: 12 × 8 H100
with SHARP (NVLS across nodes, 8 channels × 48 GB/s = 384 GB/s; the log levels off at 386.6:
median 0.8 %, worst 6.2 %) and the small sizes of the TCPXO and A100 logs (8.0 and 5.2 %).
Missed, with what the model lacks (code/commbook/data/measured/nccl-tests/PROVENANCE.md, strict xfails in
tests/test_nccl_cluster.py): TCPXO 1–256 MiB (a switch at 16–32 MiB and a 20 GB/s line below
it that NCCL's model, blind to net and tuner plugins, does not have); A100 + SHARP at half the
model's bandwidth (CollNet chain 232 GB/s busbw, the log 115: SHARP's aggregation throughput,
the 2.12–2.16 release); the GB200 racks, whose times have 0.6–4.7 ms intercepts where NVLS has
25–43 µs, and whose bandwidth halves from 2 to 20 racks where NCCL's NVLS bandwidth does not
depend on the rack count (tuning.cc:290-299; those logs ran 2.26.2).

>>> c = PRESETS["coreweave-h100-12x8-sharp"]
>>> graphs(c)["nvls"], comm_channels(c)
(Graph(n_channels=8, bw_intra=40.0, bw_inter=48.0), 16)
>>> choose(c, "all_reduce", 2**33).algo
'nvls'
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..bandwidth import BUSBW_FACTORS
from ..checks import as_value_error, check_node, check_nonneg, check_size, check_sizes, first_arg
from ..collectives.registry import predict as closed_form, t_allreduce_hierarchical
from ..hardware import IB_NDR, NVLINK4, NVLINK5, Link
from . import nccl_net as N
from . import nccl_tuning as T
from .fitting import fit
from .nccl_model import (MODELLED_COLLECTIVES, WORST_TARGET, MiB, Choice, Comparison, Entry, Prediction,
                         compare_predicted)
from .nccl_net import GPU_SPECS, NETWORKS, NIC_SPEEDS, Cluster
from .nccl_presets import (A3_MEGA_2x8, COREWEAVE_A100_4x8_SHARP, COREWEAVE_H100_12x8_SHARP, GB200_NVL72_1,
                           GB200_NVL72_2, GB200_NVL72_20, LOG_PRESETS, PRESETS)
from .records import Run

__all__ = ["GPU_SPECS", "NETWORKS", "NIC_SPEEDS", "Cluster", "PRESETS", "LOG_PRESETS", "A3_MEGA_2x8",
           "COREWEAVE_A100_4x8_SHARP", "COREWEAVE_H100_12x8_SHARP", "GB200_NVL72_1", "GB200_NVL72_2",
           "GB200_NVL72_20", "graphs",
           "comm_channels", "unavailable", "table", "algo_time", "choose", "runtime_channels", "predict_nccl",
           "compare", "ClusterPrediction", "predict_cluster"]

@lru_cache(maxsize=None)
def graphs(c: Cluster) -> dict[str, N.Graph]:
    """NCCL's graphs for ``c``: one node: the NVSwitch closed forms of :mod:`.nccl_tuning`;
    more: :func:`.nccl_net.net_graphs`.

    >>> graphs(COREWEAVE_A100_4x8_SHARP)["collnet_chain"]   # bwIntra raised above bwInter
    Graph(n_channels=8, bw_intra=30.0, bw_inter=24.0)
    """
    if c.nodes == 1:
        ring = T.ring_graph(c.link_bw, c.cc)
        tree = T.tree_graph(c.link_bw, c.cc, ring[0], c.gpus_per_node)
        out = {"ring": N.Graph(ring[0], ring[1], ring[1]), "tree": N.Graph(tree[0], tree[1], tree[1])}
        if c.has_nvls:
            out["nvls"] = N.Graph(*T.nvls_graph(c.link_bw, c.cc, c.gpus_per_node))
        return out
    return N.net_graphs(c.cc, c.link_bw, c.gpus_per_node, c.nics, c.nic_bw, c.pcie_bw, c.has_nvls)


def _collnet(c: Cluster) -> bool:
    return c.sharp and c.nodes >= N.COLLNET_NODE_THRESHOLD        # init.cc:1251-1255


def comm_channels(c: Cluster) -> int:
    """comm->nChannels: 2·min(ring, tree) (init.cc:1243, connect.cc:452), ×1.5 with CollNet when
    the chain's bwIntra exceeds its bwInter and ppn > 1 (connect.cc:455-460).

    >>> comm_channels(A3_MEGA_2x8), comm_channels(COREWEAVE_A100_4x8_SHARP)   # 2 x 8; 16 x 1.5
    (16, 24)
    """
    g = graphs(c)
    nc = min(T.MAXCHANNELS, 2 * min(g["ring"].n_channels, g["tree"].n_channels))
    cn = g.get("collnet_chain")
    if _collnet(c) and cn and cn.bw_intra > cn.bw_inter and c.gpus_per_node > 1:
        nc = min(T.MAXCHANNELS, nc + nc // 2)
    return nc


def _nvls_channels(c: Cluster) -> int:
    """comm->nvlsChannels (nvls.cc:178-199); across nodes NVLS runs min(that, nChannels) (enqueue.cc:1988-1989)."""
    return T.NVLS_NCHANNELS_SM90 if c.cc < 100 else T.NVLS_NCHANNELS_SM100 if c.nodes > 1 else T.NVLS_NCHANNELS_SM100_NVL


def _coll(collective: str) -> str:
    if collective not in MODELLED_COLLECTIVES:
        raise ValueError(f"collective: unknown {collective!r}; modelled: {', '.join(MODELLED_COLLECTIVES)}")
    return collective


@lru_cache(maxsize=None)
def unavailable(c: Cluster, collective: str) -> dict[tuple[str, str], str]:
    """Every (algorithm, protocol) NCCL does not consider on ``c`` for ``collective``, with the reason.

    >>> unavailable(A3_MEGA_2x8, "all_reduce")[("nvls", "Simple")]
    'NVLS across nodes needs CollNet (SHARP, NCCL_COLLNET_ENABLE; tuning.cc:468-471, enqueue.cc:1910)'
    """
    coll, g, out = _coll(collective), graphs(c), {}
    ag_rs = coll != "all_reduce"
    for a in T.ALGORITHMS:
        for p in T.PROTOCOLS:
            why = None
            if a in ("nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat") and p != "Simple":
                why = "Simple only (tuning.cc:280-282, 311-312)"
            elif a == "tree" and ag_rs or a in ("nvls_tree", "collnet_chain") and ag_rs:
                why = "all-gather/reduce-scatter run ring, PAT, NVLS or CollNet direct only (tuning.cc:274-276)"
            elif a == "pat" and not ag_rs:
                why = "PAT is not used for all-reduce (tuning.cc:277)"
            elif a == "pat" and c.gpus_per_node != 1:
                why = "PAT needs one GPU per node (tuning.cc:206)"
            elif a in ("nvls", "nvls_tree") and "nvls" not in g:
                why = "no NVLS graph (SM90+ and NVSwitch, search.cc:1062; NVLS off or no fit)"
            elif a == "nvls_tree" and c.nodes == 1:
                why = "NVLS-Tree is disabled on one node (tuning.cc:466)"
            elif a == "nvls" and c.nodes > 1 and not _collnet(c):
                why = "NVLS across nodes needs CollNet (SHARP, NCCL_COLLNET_ENABLE; tuning.cc:468-471, enqueue.cc:1910)"
            elif a in ("collnet_direct", "collnet_chain") and not _collnet(c):
                why = ("CollNet needs SHARP, NCCL_COLLNET_ENABLE and >= 2 nodes "
                       "(tuning.cc:468-471, init.cc:1251-1255)")
            elif a.startswith("collnet") and c.gpus_per_node > N.NCCL_MAX_DIRECT_ARITY + 1:
                why = "CollNet needs <= 8 GPUs per node (enqueue.cc:1905-1908)"
            elif a in ("nvls", "collnet_direct") and ag_rs and c.nodes > 1:
                why = "no CollNet all-gather/reduce-scatter assumed: bandwidth 0 (tuning.cc:326-343)"
            elif a == "nvls" and ag_rs and c.gpus_per_node > T.NVLS_MAX_ARITY:
                why = "NVLS all-gather/reduce-scatter needs <= 32 local ranks (enqueue.cc:1909)"
            if why:
                out[(a, p)] = why
    return out


def _graph(c: Cluster, algo: str) -> N.Graph:
    g = graphs(c)
    return g["nvls" if algo == "nvls_tree" else "tree" if algo == "pat" else algo]


def _bw(c: Cluster, coll: str, algo: str, proto: str, n_channels: float | None = None) -> float:
    return N.bandwidth(coll, algo, proto, c.cc, c.nranks, c.nodes, _graph(c, algo), c.cpu, n_channels)


@lru_cache(maxsize=None)
def _table(c: Cluster, collective: str) -> dict[tuple[str, str], Entry]:
    coll, skip = _coll(collective), unavailable(c, collective)
    return {(a, p): Entry(a, p, N.latency(coll, a, p, c.nranks, c.nodes, c.cpu) * 1e-6, _bw(c, coll, a, p) * 1e9)
            for a in T.ALGORITHMS for p in T.PROTOCOLS if (a, p) not in skip}


def table(c: Cluster, collective: str) -> dict[tuple[str, str], Entry]:
    """NCCL's latency (s) and bandwidth (bytes/s) for every pair it considers, in its order.

    NVLS across 12 nodes with SHARP: 8 channels x 48 GB/s = 384 GB/s of busbw (2·95/96 of algbw):

    >>> e = table(COREWEAVE_H100_12x8_SHARP, "all_reduce")[("nvls", "Simple")]
    >>> round(e.latency * 1e6, 6), round(e.bandwidth * 2 * 95 / 96 / 1e9, 6)
    (43.0, 384.0)
    """
    return dict(_table(c, collective))


def _correction(c: Cluster, coll: str, algo: str, proto: str, nbytes: float) -> float:
    """treeCorrectionFactor for tree all-reduce, and NVLS-Tree on SM100 x86 (tuning.cc:593-595)."""
    if coll == "all_reduce" and algo == "tree":
        return T.tree_correction(proto, nbytes)
    shifted = int(nbytes) >> 6
    k = shifted.bit_length() - 1
    if coll == "all_reduce" and algo == "nvls_tree" and c.cc >= 100 and c.cpu != "arm" and 0 <= k < 24:
        return T.TREE_CORRECTION[T.PROTOCOLS.index(proto)][k]
    return 1.0


def _lat(c: Cluster, coll: str, algo: str, proto: str, nbytes: float) -> float:
    lat = _table(c, coll)[(algo, proto)].latency
    if (algo, proto, coll) == ("ring", "Simple", "all_reduce") and c.nodes > 1 \
            and nbytes // (comm_channels(c) * c.nranks) >= 64:     # plateau effect, tuning.cc:596-599
        lat *= 1.4 if c.cc >= 80 else 1.9
    return lat


def algo_time(c: Cluster, collective: str, algo: str, proto: str, nbytes: float) -> float:
    """ncclTopoGetAlgoTime (tuning.cc:586-603) in seconds.

    >>> round(algo_time(COREWEAVE_H100_12x8_SHARP, "all_reduce", "nvls", "Simple", 0) * 1e6, 6)
    43.0
    >>> algo_time(A3_MEGA_2x8, "all_reduce", "nvls", "Simple", 1e6)
    Traceback (most recent call last):
    ...
    ValueError: nvls/Simple is not available for all_reduce: NVLS across nodes needs CollNet (SHARP, NCCL_COLLNET_ENABLE; tuning.cc:468-471, enqueue.cc:1910)
    """
    nbytes = check_size(nbytes, "nbytes")
    entries = _table(c, collective)
    if (algo, proto) not in entries:
        why = unavailable(c, collective).get((algo, proto), "unknown algorithm or protocol")
        raise ValueError(f"{algo}/{proto} is not available for {collective}: {why}")
    bw = entries[(algo, proto)].bandwidth * _correction(c, collective, algo, proto, nbytes)
    return _lat(c, collective, algo, proto, nbytes) + nbytes / bw


def choose(c: Cluster, collective: str, nbytes: float) -> Choice:
    """The pair with the least :func:`algo_time` (strict ``<`` in NCCL's order, enqueue.cc:1938-1947).

    >>> c = choose(A3_MEGA_2x8, "all_reduce", 1e3)
    >>> c.algo, c.proto
    ('tree', 'LL')
    """
    best = None
    for (a, p) in _table(c, collective):
        t = algo_time(c, collective, a, p, nbytes)
        if best is None or t < best.time:
            best = Choice(a, p, t)
    return best


def runtime_channels(c: Cluster, algo: str, proto: str, nbytes: float) -> int:
    """Channels the kernel runs on (enqueue.cc:1972-1998).

    >>> runtime_channels(A3_MEGA_2x8, "tree", "Simple", 2**30), runtime_channels(A3_MEGA_2x8, "tree", "LL", 1024)
    (16, 1)
    """
    nbytes, nc = check_size(nbytes, "nbytes"), comm_channels(c)
    if algo in ("nvls", "nvls_tree"):
        return min(_nvls_channels(c), nc) if c.nodes > 1 and algo == "nvls" else _nvls_channels(c)
    if algo == "collnet_direct":                                       # enqueue.cc:1975-1985
        nt, thr, heads = T.MAX_THREADS["LL128"], N.COLLNET_THREAD_THRESHOLD, graphs(c)["collnet_direct"].n_channels
        sw, flag = 16, True
        while sw >= 1 and flag:
            while (flag := nbytes < nc * nt * heads * thr) and nc > sw:
                if nc == sw + sw // 2:
                    thr //= 2
                nc -= 1
            sw //= 2
        return nc
    nt = {"collnet_chain": T.MAX_THREADS["LL128"], "pat": 0}.get(algo, T.MAX_THREADS[proto])   # tuning.cc:231-243
    thr = N.COLLNET_THREAD_THRESHOLD if algo == "collnet_chain" else \
        T.THREAD_THRESHOLD[proto] * (c.nranks if (algo, proto) == ("ring", "LL") else 1)
    while nbytes < nc * nt * thr and nc >= 2:
        nc -= 1
    return nc


def predict_nccl(c: Cluster, collective: str, sizes, overhead: float = 0.0, runtime: bool = True) -> Prediction:
    """Per size NCCL's pick, its channels, time (+ ``overhead`` s) and busbw; ``runtime=False``:
    NCCL's own model time.  Ring and tree run at the fraction of channels the kernel gets.
    (:func:`.nccl_model.predict_nccl` for one node; :func:`predict_cluster` builds the
    cluster from a reader's numbers.)

    >>> p = predict_nccl(A3_MEGA_2x8, "all_reduce", [1e3, 1e9])
    >>> p.algo, p.proto
    (('tree', 'tree'), ('LL', 'Simple'))
    """
    coll = _coll(collective)
    overhead = as_value_error(check_nonneg, overhead, "overhead", "a finite number of seconds")
    n = check_sizes(sizes)
    times, algos, protos, chans = [], [], [], []
    for x in n:
        x = check_size(x, "sizes")
        ch = choose(c, coll, x)
        nc = runtime_channels(c, ch.algo, ch.proto, x)
        t = ch.time
        if runtime and ch.algo in ("ring", "tree"):
            frac = nc * _graph(c, ch.algo).n_channels / comm_channels(c)
            bw = _bw(c, coll, ch.algo, ch.proto, frac) * 1e9 * _correction(c, coll, ch.algo, ch.proto, x)
            t = _lat(c, coll, ch.algo, ch.proto, x) + x / bw
        times.append(t + overhead)
        algos.append(ch.algo)
        protos.append(ch.proto)
        chans.append(nc)
    t = np.array(times)
    return Prediction(coll, n, t, BUSBW_FACTORS[coll](c.nranks) * n / t, tuple(algos), tuple(protos),
                      tuple(chans), float(overhead))


def compare(run: Run, c: Cluster, placement: str | None = None, overhead: float | str = "auto") -> Comparison:
    """:func:`.nccl_model.compare` for a cluster: the run against :func:`predict_nccl` (overhead read
    at the smallest size when it is below 1 MiB) and against an α–β ring fit.

    The recorded 12 x 8 H100 SHARP log: median 0.8 %, worst size 6.2 %:

    >>> from commbook.measure import load_log
    >>> run = load_log("multinode/h100x64_coreweave_ib_sharp_allreduce.log")[0]
    >>> cmp = compare(run, COREWEAVE_H100_12x8_SHARP)
    >>> round(cmp.median(">= 1 MiB"), 3), round(cmp.worst(">= 1 MiB"), 3), cmp.status(">= 1 MiB")
    (0.008, 0.062, 'PASS')
    """
    check_node(c, "c", Cluster)
    return compare_predicted(run, c.nranks, "the cluster", _coll, functools.partial(predict_nccl, c),
                             placement, overhead)


# ---------------------------------------------------------------- a reader's own cluster
@dataclass(frozen=True)
class ClusterPrediction:
    """Per size: NCCL's pick and channels, its time and busbw, and three α–β views — a single
    ring over the bottleneck link, the hierarchical all-reduce (NVLink ring in the node, ring
    across nodes per rail; NaN unless all-reduce on > 1 node), and an α–β ring fitted to the
    NCCL times (NaN with fewer than 2 sizes).

    >>> predict_cluster("H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps="NDR", sizes=[2**30])
    ClusterPrediction(all_reduce, 2 x 8 H100, 8 x 400 Gb/s ib)
          1073741824 B  nvls_tree/Simple x16      4428.3 us    454.64 GB/s
    """

    cluster: Cluster
    collective: str
    sizes_bytes: np.ndarray
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...]
    channels: tuple[int, ...]
    time_s: np.ndarray
    busbw_gbps: np.ndarray
    ring_time_s: np.ndarray
    hierarchical_time_s: np.ndarray
    ring_fit_time_s: np.ndarray
    ring_fit_alpha_s: float
    ring_fit_beta_gbps: float

    def __repr__(self) -> str:
        c = self.cluster
        head = (f"ClusterPrediction({self.collective}, {c.nodes} x {c.gpus_per_node} {c.gpu}, {c.nics} x "
                f"{c.nic_gbps:g} Gb/s {c.network}{' + SHARP' if c.sharp else ''})")
        rows = [f"  {n:>14.0f} B  {a}/{p} x{k}  {t * 1e6:10.1f} us  {b:8.2f} GB/s"
                for n, a, p, k, t, b in zip(self.sizes_bytes, self.algorithm, self.protocol, self.channels,
                                            self.time_s, self.busbw_gbps)]
        return "\n".join([head] + rows)


def _links(c: Cluster) -> tuple[Link, Link]:
    """NVLink per GPU and per-GPU share of the node's NICs as α–β links (commbook.hardware's α)."""
    nvl = {3: Link("NVLink 3 (A100)", NVLINK4.alpha, 300e9, "NVIDIA A100 datasheet: 600 GB/s bidirectional"),
           4: NVLINK4, 5: NVLINK5}[GPU_SPECS[c.gpu][1]]
    share = c.nics * c.nic_gbps / 8 * 1e9 / c.gpus_per_node if c.nics else nvl.beta
    return nvl, Link(f"{c.nics} x {c.nic_gbps:g} Gb/s per {c.gpus_per_node} GPUs", IB_NDR.alpha, share,
                     "the NICs' line rate shared by the node's GPUs; α of commbook.hardware.IB_NDR")


def predict_cluster(gpu: str, nodes: int, gpus_per_node: int, nics: int, nic_gbps: float | str, network: str = "ib",
                    sharp: bool = False, sizes=None, collective: str = "all_reduce", cpu: str = "intel",
                    pcie_gen: int | None = None) -> ClusterPrediction:
    """NCCL 2.29.2's pick, time and busbw for ``collective`` on your cluster, next to α–β views.

    ``nic_gbps``: Gb/s per NIC, or a name of :data:`NIC_SPEEDS` ("HDR", "NDR", "XDR", "RoCE-400G",
    "TCPXO"); ``sizes``: bytes (nccl-tests' convention), default 1 KiB … 16 GiB in powers of 4.

    >>> p = predict_cluster(gpu="H100", nodes=8, gpus_per_node=8, nics=8, nic_gbps=400,
    ...                     network="ib", sharp=False, sizes=[2**10, 2**30])
    >>> p.algorithm, p.protocol
    (('tree', 'nvls_tree'), ('LL', 'Simple'))
    >>> bool(p.busbw_gbps[1] > 300) and bool(p.hierarchical_time_s[1] > 0)
    True
    """
    if isinstance(nic_gbps, str):
        if nic_gbps not in NIC_SPEEDS:
            raise ValueError(f"nic_gbps: unknown NIC {nic_gbps!r}; named: {', '.join(NIC_SPEEDS)}")
        nic_gbps = NIC_SPEEDS[nic_gbps]
    c = Cluster(gpu, nodes, gpus_per_node, nics, nic_gbps, network, sharp, cpu, pcie_gen)
    coll = _coll(collective)
    pred = predict_nccl(c, coll, [4 ** k * 1024 for k in range(13)] if sizes is None else sizes)
    n, p = pred.sizes, c.nranks
    nvl, net = _links(c)
    bottleneck = net if nodes > 1 else nvl
    ring = np.array([closed_form(coll, "ring", p, x, bottleneck.alpha, min(bottleneck.beta, nvl.beta)) for x in n])
    hier = np.array([t_allreduce_hierarchical(nodes, gpus_per_node, x, nvl, net) if coll == "all_reduce"
                     and nodes > 1 and gpus_per_node > 1 else math.nan for x in n])
    if len(n) >= 2 and len(set(n.tolist())) >= 2:
        f = fit(n, pred.time, coll, "ring", p)
        fit_t, alpha, beta = f.predicted, f.alpha, f.beta / 1e9
    else:
        fit_t, alpha, beta = np.full(len(n), math.nan), math.nan, math.nan
    return ClusterPrediction(c, coll, n, pred.algo, pred.proto, pred.channels, pred.time, pred.busbw / 1e9,
                             ring, hier, np.asarray(fit_t), alpha, beta)


for _f in ("graphs", "comm_channels", "unavailable", "table", "algo_time", "choose", "runtime_channels", "predict_nccl"):
    globals()[_f] = first_arg(Cluster, "c")(globals()[_f])     # c=None: TypeError naming c
