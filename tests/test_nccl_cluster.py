"""commbook.measure.nccl_cluster / nccl_net: NCCL 2.29.2's tuning model across nodes.

Expected values are derived by hand in this file from NCCL's constants at v2.29.2-1 (the file
and line is cited at each use: src/graph/tuning.cc, search.cc, topo.cc, topo.h, enqueue.cc,
nvls.cc, connect.cc) or read off the recorded logs (code/commbook/data/measured/nccl-tests/multinode/).
"""
import dataclasses
import doctest
import importlib.util
import io
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from commbook.measure import load_log, nccl_cluster as C, nccl_net as N
from commbook.measure.nccl_model import H100_8, TARGETS, WORST_TARGET, Node, graphs as node_graphs, table as node_table

US, GB, MiB, GiB = 1e-6, 1e9, 2 ** 20, 2 ** 30
TCPXO = "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log"
A100_SHARP = "multinode/a100x128_coreweave_ib_sharp_allreduce.log"
H100_SHARP = "multinode/h100x64_coreweave_ib_sharp_allreduce.log"
GB1 = "multinode/gb200x72_coreweave_nvl72_1rack_nccl2.26.2_allreduce.log"
GB2 = "multinode/gb200x144_coreweave_nvl72_2racks_nccl2.26.2_allreduce.log"
GB20 = "multinode/gb200x1440_coreweave_nvl72_20racks_nccl2.26.2_allreduce.log"


# ---------------------------------------------------------------- what NCCL reads
def test_nic_and_pcie_bandwidth_as_nccl_reads_them():
    # topo.cc:384 bw = Mb/s / 8000; topo.cc:435-436, 502-503: width x rate / 80
    assert N.nic_bw(200) == 25.0 and N.nic_bw(400) == 50.0 and N.nic_bw(800) == 100.0
    assert N.pcie_bw(4) == 16 * 120 / 80 == 24.0 and N.pcie_bw(5) == 48.0
    assert C.Cluster("GB200", 2, 72, 72, 400).link_bw == pytest.approx(18 * 40.1)      # SM100_NVLINK_BW, topo.h:22
    assert C.Cluster("H200", 2, 8, 8, 400).link_bw == pytest.approx(18 * 20.6)         # SM90_NVLINK_BW, topo.h:20


# ---------------------------------------------------------------- graphs by hand
def test_h100_ndr_graphs():
    # maxBw = min(NIC 50, PCIe Gen5 48) = 48; sm90SpeedArrayInter starts at 48 (search.cc:982, 1101);
    # channels = min(32, 8 NICs x floor(50/48), floor(370.8 / (48 x 7/8))) = 8; 8 x 48 = 384 >= totalBw
    # 370.8 (search.cc:1125): done; no dup (cc > 80, 48 < 50, 8 > 4: search.cc:965).
    # NVLS: 8 heads, (8+1) x 42 = 378 > 370.8 >= 9 x 40; bwInter raised 40 -> 42 -> 45 -> 48 while
    # < 2 x 40 and within maxBw (search.cc:1201-1204)
    g = C.graphs(C.COREWEAVE_H100_12x8_SHARP)
    assert g["ring"] == N.Graph(8, 48.0, 48.0) and g["tree"] == N.Graph(8, 48.0, 48.0)
    assert g["nvls"] == N.Graph(8, 40.0, 48.0)
    assert C.comm_channels(C.COREWEAVE_H100_12x8_SHARP) == 16                # 2 x 8, connect.cc:452


def test_a100_hdr_graphs_and_collnet_channels():
    # maxBw = min(HDR 25, PCIe Gen4 24) = 24 -> 8 x 24 = 192 < 240; 20, 18, 15 give 8 channels; 12
    # (12/24 = 0.5 > 0.49, search.cc:1171) gives 16 x 12 = 192, not more: 8 x 24 stays; 10/24 < 0.49.
    # No dup: 24 < 25 (search.cc:964).  Tree pass 2 raises bwIntra 24 -> 28 -> 30 (8 x 30 x 7/8 = 210
    # <= 240), not 48 (336 > 240) (search.cc:1205-1208, speedArrayInter search.cc:977)
    g = C.graphs(C.COREWEAVE_A100_4x8_SHARP)
    assert g["ring"] == N.Graph(8, 24.0, 24.0) and g["tree"] == N.Graph(8, 30.0, 24.0)
    # CollNet: chain bwIntra 30 > bwInter 24 and ppn > 1: 16 + 16/2 = 24 channels (connect.cc:458-460)
    assert C.comm_channels(C.COREWEAVE_A100_4x8_SHARP) == 24


def test_tcpxo_tree_bwintra_is_raised_on_two_nodes():
    # 8 NICs of 200 Gb/s = 25 GB/s: ring 8 x 24; the tree's bwIntra climbs 24 -> 30 -> 40 -> 42 -> 45
    # -> 48 (8 x 48 x 7/8 = 336 <= 370.8; stops at 48 = 2 x 24), and with 2 nodes NCCL uses bwIntra
    # (tuning.cc:284): tree all-reduce bus bw min(0.92 x 8 x 48, 8 x perChMaxTreeBw[Hopper][N2] 41.4)
    # = 331.2 (tuning.cc:187-192, 306), algorithm bw x 1/2 (tuning.cc:349)
    c = C.A3_MEGA_2x8
    assert C.graphs(c)["ring"] == N.Graph(8, 24.0, 24.0) and C.graphs(c)["tree"] == N.Graph(8, 48.0, 24.0)
    assert C.table(c, "all_reduce")[("tree", "Simple")].bandwidth == pytest.approx(8 * 41.4 / 2 * GB)


def test_gb200_graphs():
    # one rack (one node): NVLS 32 heads (min(32, 72), search.cc:1064), 33 x 24 = 792 > 721.8 >= 33 x 20
    # (sm100SpeedArrayIntra, search.cc:986), bwInter raised to 40 = 2 x 20; 24 NVLS channels on one
    # NVLink domain (nvls.cc:150, 194)
    one = C.GB200_NVL72_1
    assert C.graphs(one)["nvls"] == N.Graph(32, 20.0, 40.0)
    assert C.runtime_channels(one, "nvls", "Simple", GiB) == 24
    # racks: maxBw 48; 48 gives floor(721.8 / (48 x 71/72)) = 15 channels (720), 45.1 gives 16 (721.6),
    # 42 .. 24 no more, 22/45.1 < 0.49 stops (search.cc:987, 1171); no dup (45.1 < 50)
    assert C.graphs(C.GB200_NVL72_20)["ring"] == N.Graph(16, 45.1, 45.1)
    assert C.runtime_channels(C.GB200_NVL72_20, "nvls", "Simple", GiB) == 32     # nvls.cc:149, enqueue.cc:1989


# ---------------------------------------------------------------- latencies and bandwidths by hand
def test_h100_sharp_table_by_hand():
    t = C.table(C.COREWEAVE_H100_12x8_SHARP, "all_reduce")
    p, nodes, steps = 96, 12, 190
    # NVLS across nodes: NVLink 25 + NET 18 us (tuning.cc:153, 165, 391-393); bus bw per channel
    # min(40 x 0.85 x 7/8 x 2, 48) (tuning.cc:290-299), algbw x p / 2(p-1) (tuning.cc:348)
    assert t[("nvls", "Simple")].latency == pytest.approx(43 * US)
    assert t[("nvls", "Simple")].bandwidth == pytest.approx(8 * 48 * p / steps * GB)
    # ring Simple: 8.4 + (190 - 22) x max(3.4, 3 x 1.0) + 22 x 14 (tuning.cc:371-379, getNetOverhead 1.0)
    assert t[("ring", "Simple")].latency == pytest.approx((8.4 + 168 * 3.4 + 22 * 14) * US)
    # tree LL: 6.8 + 2 (7 x 0.6 + log2i(12) x 5.0); bw min(min(0.92 x 384, 8 x 36.0) / 3.8, llMaxBw
    # Intel N4 20.4) x 1/2 (tuning.cc:170, 306-307, 383-384)
    assert t[("tree", "LL")].latency == pytest.approx((6.8 + 2 * (7 * 0.6 + 3 * 5.0)) * US)
    assert t[("tree", "LL")].bandwidth == pytest.approx(20.4 / 2 * GB)
    # CollNet direct: 2 (3.7 + 7 x 0.4) + 31; bw 8 x 48 / (GPU/NIC factor 1) x 0.85 x 1/2 (tuning.cc:313-323, 387-388)
    assert t[("collnet_direct", "Simple")].latency == pytest.approx((2 * (3.7 + 7 * 0.4) + 31) * US)
    assert t[("collnet_direct", "Simple")].bandwidth == pytest.approx(8 * 48 * 0.85 / 2 * GB)
    # NVLS-Tree: 25 + 2 log2i(12) x 20.9; min(59.5, 48, perChMaxNVLSTreeBw[Hopper][N4] 45.5) (tuning.cc:196, 395)
    assert t[("nvls_tree", "Simple")].latency == pytest.approx((25 + 2 * 3 * 20.9) * US)
    assert t[("nvls_tree", "Simple")].bandwidth == pytest.approx(8 * 45.5 * p / steps * GB)
    assert nodes == C.COREWEAVE_H100_12x8_SHARP.nodes


def test_ring_simple_plateau_factor():
    # tuning.cc:596-599: ring Simple all-reduce on > 1 node, nBytes / (nChannels x nRanks) >= 64: lat x 1.4
    c, n = C.COREWEAVE_H100_12x8_SHARP, 1 * GiB
    e = C.table(c, "all_reduce")[("ring", "Simple")]
    assert C.algo_time(c, "all_reduce", "ring", "Simple", n) == pytest.approx(1.4 * e.latency + n / e.bandwidth)
    small = 64 * 16 * 96 - 1
    assert C.algo_time(c, "all_reduce", "ring", "Simple", small) == pytest.approx(e.latency + small / e.bandwidth)


def test_pat_with_one_gpu_per_node():
    # PAT only with one GPU per node (tuning.cc:206): latency 8 + log2i(16) x 14/3.5 + 16 x 2.8, the
    # NET tree latency because ppn = 1 (tuning.cc:356, 396-400); bw = bwInter x nChannels x 0.75 (tuning.cc:310)
    c = C.Cluster("H100", 16, 1, 1, 400)
    e = C.table(c, "all_gather")[("pat", "Simple")]
    g = C.graphs(c)["tree"]
    assert e.latency == pytest.approx((8 + 4 * 14 / 3.5 + 16 * 2.8) * US)
    assert e.bandwidth == pytest.approx(g.n_channels * g.bw_inter * 0.75 * GB)
    assert "one GPU per node" in C.unavailable(C.COREWEAVE_H100_12x8_SHARP, "all_gather")[("pat", "Simple")]


def test_which_algorithms_need_what():
    h = C.COREWEAVE_H100_12x8_SHARP
    off = C.unavailable(dataclasses.replace(h, sharp=False), "all_reduce")
    assert "CollNet" in off[("nvls", "Simple")] and "SHARP" in off[("collnet_direct", "Simple")]
    assert ("nvls_tree", "Simple") not in off
    assert "<= 8 GPUs" in C.unavailable(C.GB200_NVL72_20, "all_reduce")[("collnet_chain", "Simple")]
    assert "one node" in C.unavailable(C.GB200_NVL72_1, "all_reduce")[("nvls_tree", "Simple")]
    assert ("nvls", "Simple") in C.unavailable(h, "all_gather")


def test_one_node_cluster_is_the_one_node_model():
    # the multi-node formulas with nNodes = 1 are tuning.cc's one-node branch, as nccl_model transcribes it
    c = C.Cluster("H100", 1, 8, 8, 400)
    for coll in ("all_reduce", "all_gather"):
        mine, ref = C.table(c, coll), node_table(H100_8, coll)
        assert set(mine) == set(ref)
        for k in ref:
            assert mine[k].latency == pytest.approx(ref[k].latency) and mine[k].bandwidth == pytest.approx(ref[k].bandwidth)
    assert node_graphs(Node("H200", 4, 18, nvls=True)) == node_graphs(H100_8)


# ---------------------------------------------------------------- against the logs
def test_h100_sharp_log_is_nvls_at_its_network_rate():
    # NVLS across 12 nodes runs at 8 channels x bwInter 48 GB/s = 384 GB/s bus bandwidth; the log's
    # largest row (8 GiB, 43980 us) is 386.56 GB/s
    run, = load_log(H100_SHARP)
    p = C.predict_nccl(C.COREWEAVE_H100_12x8_SHARP, "all_reduce", run.sizes())
    assert set(p.algo) == {"nvls"} and run.column("busbw")[-1] == pytest.approx(386.56 * GB)
    want = 8 * 48 * GB * (8 * GiB / (43 * US * 8 * 48 * GB * 96 / 190 + 8 * GiB))
    assert p.busbw[-1] == pytest.approx(want, rel=1e-9)
    assert abs(p.busbw[-1] / run.column("busbw")[-1] - 1) < 0.01


MET = {(TCPXO, "< 1 MiB"), (A100_SHARP, "< 1 MiB"), (H100_SHARP, ">= 1 MiB")}
MISSED = {
    (TCPXO, ">= 1 MiB"):
        "median 30.3 %, worst 241.7 % (16 MiB): from 1 to 16 MiB the log lies on t = 151 us + n / 20.1 GB/s "
        "(rms 0.8 %) and from 32 MiB on t = 891 us + n / 183 GB/s, a switch between 16 and 32 MiB; NCCL 2.29.2's "
        "model gives tree LL128 on 16 channels (busbw 110 GB/s at 16 MiB, the log 32) then NVLS-Tree. The model "
        "lacks what the TCPXO net plugin and any tuner plugin do (NCCL's model knows neither); the run's NCCL_DEBUG="
        "INFO (version, plugins, NCCL_PROTO/ALGO, per-size algorithm) would settle it",
    (A100_SHARP, ">= 1 MiB"):
        "median 102 %, worst 122 %: from 64 MiB the log is t = 290 us + n / 59.2 GB/s (busbw 115 GB/s); the model "
        "picks CollNet chain at 8 x 30 GB/s (busbw 232; without SHARP the ring, 191). It lacks SHARP's aggregation "
        "throughput on HDR switches and the log's release (2.12-2.16); the run's NCCL_DEBUG=INFO graph lines and "
        "SHARP settings, and the node's NIC count, would settle it",
    (GB1, ">= 1 MiB"):
        "median 20.4 %, worst 53.3 % (512 MiB): the log is t = 606 us + n / 439 GB/s (rms 1.8 %), NCCL's NVLS "
        "t = 25 us + n / 465 GB/s: the bandwidth term within 6 %, the intercept 24x; the log starts at 512 MiB "
        "and ran NCCL 2.26.2, whose NVLS formula differs (v2.26.2-1 tuning.cc:251, 293); a sweep from 8 B "
        "with NCCL_DEBUG=INFO would settle it",
    (GB2, ">= 1 MiB"):
        "median 28.3 %, worst 79.1 %: the log is t = 890 us + n / 411 GB/s; NCCL 2.29.2's NVLS across 2 racks "
        "43 us + n / 462 GB/s; same gaps as one rack, larger",
    (GB20, ">= 1 MiB"):
        "median 190 %, worst 486 %: the log is t = 4674 us + n / 213 GB/s, half the 2-rack bandwidth; NCCL's "
        "NVLS bandwidth, min(NVLS in the rack, bwInter) per channel (tuning.cc:290-299), does not depend on the "
        "rack count, and its latency 43 us neither; what the 20-rack fabric does (SHARP tree depth, NCCL 2.26.2's "
        "algorithm) needs the run's NCCL_DEBUG=INFO",
}
CASES = sorted(MET | set(MISSED))


def _worst(c, band):
    return float(np.max(np.abs(c.errors[c.band(band)])))


@pytest.mark.parametrize("log, band", [
    pytest.param(*k, marks=pytest.mark.xfail(strict=True, reason=MISSED[k])) if k in MISSED else k for k in CASES])
def test_accuracy_target(log, band):
    run, = load_log(log)
    c = C.compare(run, C.PRESETS[C.LOG_PRESETS[log]])
    assert c.band(band).sum() >= 4
    assert c.median(band) <= TARGETS[band]
    if band == ">= 1 MiB":
        assert _worst(c, band) <= WORST_TARGET


def test_every_multinode_band_is_classified():
    known = set()
    for log, key in C.LOG_PRESETS.items():
        run, = load_log(log)
        c = C.compare(run, C.PRESETS[key])
        known |= {(log, b) for b in TARGETS if c.band(b).any()}
    assert known == MET | set(MISSED)


def test_gb200_logs_fall_with_racks_where_the_model_does_not():
    # the logs' largest common size, 8 GiB: 834.57, 793.06, 381.48 GB/s busbw for 1, 2, 20 racks
    bus = [load_log(g)[0].column("busbw")[list(load_log(g)[0].sizes()).index(8 * GiB)] for g in (GB1, GB2, GB20)]
    assert bus == pytest.approx([834.57 * GB, 793.06 * GB, 381.48 * GB])
    model = [C.predict_nccl(C.PRESETS[k], "all_reduce", [8 * GiB]).busbw[0] for k in
             ("gb200-nvl72-1", "gb200-nvl72-2", "gb200-nvl72-20")]
    per_channel = 20 * 0.74 * 31 / 32 * 2                # tuning.cc:290-293, nvlsEfficiency Blackwell 0.74
    assert max(model) / min(model) < 1.01 and model[0] == pytest.approx(32 * per_channel * GB, rel=0.01)
    assert bus[2] / bus[0] < 0.5


def test_tcpxo_small_sizes_follow_the_overhead():
    # 8 B: tree LL, 6.8 + 2 (7 x 0.6 + log2i(2) x 5.0) us (tuning.cc:383-384) on 1 of 16 channels
    # (enqueue.cc:1995-1998), i.e. 8/16 graph channels: bus bw min(min(0.92 x 0.5 x 48, 0.5 x 41.4) / 3.8,
    # llMaxBw Intel N2 39.0) (tuning.cc:170, 187-192, 306-307), algbw x 1/2; the log's 8 B row is 135.8 us
    run, = load_log(TCPXO)
    c = C.compare(run, C.A3_MEGA_2x8)
    bw = min(min(0.92 * 0.5 * 48, 0.5 * 41.4) / 3.8, 39.0) / 2 * GB
    assert c.calibrated_at == 8
    assert c.overhead == pytest.approx(135.8 * US - (6.8 + 2 * (7 * 0.6 + 5.0)) * US - 8 / bw, rel=1e-9)
    assert c.median("< 1 MiB") <= TARGETS["< 1 MiB"]


def test_benchmark_script_covers_every_log():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy.py"
    spec = importlib.util.spec_from_file_location("accuracy_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = io.StringIO()
    with redirect_stdout(out):
        mod.main([])
    lines = out.getvalue().splitlines()
    for log, band in MET | set(MISSED):
        row = [ln for ln in lines if ln.startswith(log) and band in ln]
        assert len(row) == 1 and row[0].endswith("PASS" if (log, band) in MET else "MISS"), (log, band)


# ---------------------------------------------------------------- a reader's cluster
def test_predict_cluster_docstring_and_views():
    assert doctest.testmod(C).failed == 0 and doctest.testmod(N).failed == 0
    named = C.predict_cluster("H100", 2, 8, 8, "NDR", sizes=[GiB])
    assert named.cluster.nic_gbps == 400 and named.cluster.nic_bw == 400 * 1000 / 8000   # topo.cc:384
    p = C.predict_cluster(gpu="H100", nodes=8, gpus_per_node=8, nics=8, nic_gbps=400, sizes=[GiB, 2 * GiB])
    # hierarchical (commbook.cost): NVLink 4 (alpha 2 us, 450 GB/s) ring reduce-scatter + all-gather in
    # the node, a ring across 8 nodes on n/8 over each GPU's share of the NICs (8 x 50 GB/s / 8, alpha 5 us)
    n = GiB
    hand = 2 * 7 * (2e-6 + n / (8 * 450e9)) + 2 * 7 * (5e-6 + n / 8 / (8 * 50e9))
    assert p.hierarchical_time_s[0] == pytest.approx(hand)
    assert p.ring_time_s[0] == pytest.approx(2 * 63 * (5e-6 + n / (64 * 50e9)))
    assert np.allclose(p.ring_fit_time_s, p.time_s, rtol=1e-6)       # two sizes: the ring fit is exact
    assert p.busbw_gbps[0] == pytest.approx(2 * 63 / 64 * n / p.time_s[0] / GB)
    assert "8 x 8 H100" in repr(p) and "nvls_tree/Simple" in repr(p)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(gpu="V100"), ValueError, "gpu"), (dict(nodes=0), ValueError, "nodes"),
    (dict(nodes=2.0), TypeError, "nodes"), (dict(nics=0), ValueError, "nics"),
    (dict(nic_gbps=[400]), TypeError, "nic_gbps"), (dict(network="ethernet"), ValueError, "network"),
    (dict(network="roce", sharp=True), ValueError, "sharp"), (dict(cpu="power"), ValueError, "cpu"),
    (dict(pcie_gen=7), ValueError, "pcie_gen"), (dict(gpus_per_node=73), ValueError, "gpus_per_node"),
    (dict(collective="all_to_all"), ValueError, "collective"), (dict(nic_gbps="QDR"), ValueError, "nic_gbps"),
])
def test_bad_input(kwargs, err, match):
    args = dict(gpu="H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps=400) | kwargs
    with pytest.raises(err, match=match):
        C.predict_cluster(**args)


def test_bad_input_elsewhere():
    run, = load_log(H100_SHARP)
    with pytest.raises(ValueError, match="ranks"):
        C.compare(run, C.A3_MEGA_2x8)
    with pytest.raises(TypeError):
        C.compare("log", C.A3_MEGA_2x8)
    with pytest.raises(ValueError, match="not available"):
        C.algo_time(C.A3_MEGA_2x8, "all_reduce", "nvls", "Simple", 1)
    with pytest.raises(ValueError, match="overhead"):
        C.predict_nccl(C.A3_MEGA_2x8, "all_reduce", [1], overhead=-1)
