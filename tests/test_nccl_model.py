"""commbook.measure.nccl_model: NCCL 2.29.2's tuning model on one node, against the logs.

Expected values are derived by hand in this file from the constants of NCCL's source at
v2.29.2-1 (src/graph/tuning.cc, search.cc, topo.h, enqueue.cc; the line is cited at each
use) or read off the recorded logs (code/commbook/data/measured/nccl-tests/), never from the module.
"""
import importlib.util
import io
import math
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from commbook.hardware import NVLINK4
from commbook.measure import load_log
from commbook.measure import nccl_tuning as T
from commbook.measure.fitting import fit_point_to_point
from commbook.measure.nccl_model import (A100_8, MODELLED_COLLECTIVES, H100_8, TARGETS, Node, algo_time, choose, compare,
                                         graphs, predict_nccl, runtime_channels, table, unavailable)

H100_LOG = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log"
A100_LOG = "a100x8_nvswitch_nccl-tests_allreduce.txt"
AZURE_LOG = "azure_nd_h100_v5_allreduce_busbw.md"
US, GB, MiB = 1e-6, 1e9, 2 ** 20

# ---------------------------------------------------------------- hand-derived constants
# H100: 18 NVLinks x SM90_NVLINK_BW 20.6 (topo.h:20) = 370.8 GB/s to the switch.  Ring search
# (search.cc:981, 1101-1177): 60 GB/s fits 6 channels (360 < 370.8); 50 -> 7 (350), 40 -> 9
# (360, not more), 30 -> 12 (360, not more), 24 is < 0.49 x 60: best 6 x 60; doubled
# (search.cc:967-972; 60 >= 50) to 12 x 30.  NVLS: (8 + 1) x 40 = 360 <= 370.8 < 9 x 50;
# bwInter raised 40 -> 50 -> 60 (search.cc:1201-1204).
H100_RING, H100_NVLS = (2 * 6, 60 / 2), (8, 40.0, 60.0)
# A100: 12 x SM80_NVLINK_BW 20.0 (topo.h:19) = 240 GB/s: 40 GB/s fits 6 = 240 (search done),
# doubled (SM80 is not > 80) to 12 x 20.
A100_RING = (2 * 6, 40 / 2)


def h100_ar(algo, proto):
    """(latency µs, algbw GB/s) of all-reduce on 8xH100, from tuning.cc:143-168, 169-192, 304-351."""
    nch, bw, steps = 12, 30.0, 14
    return {
        ("ring", "LL"): (6.6 + steps * 0.6, min(141.0, 0.5 * nch * bw) * 8 / steps),
        ("ring", "LL128"): (14.0 + steps * 1.9, min(0.92 * nch * bw, nch * 36.7) * 8 / steps),
        ("ring", "Simple"): (8.4 + steps * 3.4, nch * bw * 8 / steps),
        ("nvls", "Simple"): (25.0, 8 * min(40 * 0.85 * 7 / 8 * 2, 60.0) * 8 / steps),
        ("tree", "LL"): (6.8 + 2 * 7 * 0.6, min(min(0.92 * nch * bw, nch * 38.7) / 3.8, 141.0) * 0.5),
    }[(algo, proto)]


def a100_ar(algo, proto):
    nch, bw, steps = 12, 20.0, 14
    return {
        ("ring", "LL"): (6.6 + steps * 0.6, min(87.7, 0.5 * nch * bw) * 8 / steps),
        ("ring", "LL128"): (14.0 + steps * 1.9, min(0.92 * nch * bw, nch * 20.0) * 8 / steps),
        ("ring", "Simple"): (8.4 + steps * 3.4, nch * bw * 8 / steps),
        ("tree", "LL128"): (14.0 + 2 * 7 * 1.25, min(min(0.92 * nch * bw, nch * 24.0) * 7 / 9, nch * 20.0) * 0.5),
    }[(algo, proto)]


def h100_ag(algo, proto):
    nch, bw, steps = 12, 30.0, 7
    return {
        ("ring", "LL"): (6.6 + steps * 0.6, min(141.0, 0.5 * nch * bw) * 8 / steps),
        ("ring", "LL128"): (14.0 + steps * 1.9, min(0.92 * nch * bw, nch * 36.7) * 8 / steps),
        ("ring", "Simple"): (8.4 + steps * 3.4, nch * bw * 8 / steps),
        ("nvls", "Simple"): (25.0, 8 * min(40 * 0.85 * 7 / 8 * 7 / 8, 60.0)),    # no algbw conversion
    }[(algo, proto)]


def crossover(a, b):
    """Size (B) where lat_a + n/bw_a = lat_b + n/bw_b, (µs, GB/s) pairs."""
    return (b[0] - a[0]) * US / (1 / (a[1] * GB) - 1 / (b[1] * GB))


# ---------------------------------------------------------------- graphs and the table
def test_graphs_follow_the_search_by_hand():
    g = graphs(H100_8)
    assert H100_8.link_bw == pytest.approx(18 * 20.6)
    assert g.ring == H100_RING and g.tree == (12, 30.0) and g.nvls == H100_NVLS
    assert g.runtime_channels == 2 * 12 and g.nvls_channels == 16          # connect.cc:452, nvls.cc:148
    a = graphs(A100_8)
    assert a.ring == A100_RING and a.tree == (12, 20.0) and a.nvls is None and a.runtime_channels == 24


@pytest.mark.parametrize("node, coll, ref, pairs", [
    (H100_8, "all_reduce", h100_ar, [("ring", "LL"), ("ring", "LL128"), ("ring", "Simple"), ("nvls", "Simple"),
                                     ("tree", "LL")]),
    (A100_8, "all_reduce", a100_ar, [("ring", "LL"), ("ring", "LL128"), ("ring", "Simple"), ("tree", "LL128")]),
    (H100_8, "all_gather", h100_ag, [("ring", "LL"), ("ring", "LL128"), ("ring", "Simple"), ("nvls", "Simple")]),
    (H100_8, "reduce_scatter", h100_ag, [("ring", "LL128"), ("nvls", "Simple")]),
])
def test_latency_and_bandwidth_equal_hand_derivation(node, coll, ref, pairs):
    t = table(node, coll)
    for pair in pairs:
        lat, bw = ref(*pair)
        assert t[pair].latency == pytest.approx(lat * US, rel=1e-12), pair
        assert t[pair].bandwidth == pytest.approx(bw * GB, rel=1e-12), pair


def test_which_pairs_nccl_considers():
    assert set(table(H100_8, "all_reduce")) == {(a, p) for a in ("tree", "ring") for p in T.PROTOCOLS} | {
        ("nvls", "Simple")}
    assert set(table(A100_8, "all_reduce")) == {(a, p) for a in ("tree", "ring") for p in T.PROTOCOLS}
    assert set(table(H100_8, "all_gather")) == {("ring", p) for p in T.PROTOCOLS} | {("nvls", "Simple")}
    why = unavailable(H100_8, "all_reduce")
    assert "SHARP" in why[("collnet_direct", "Simple")] and "one node" in why[("nvls_tree", "Simple")]
    assert "Simple" in why[("nvls", "LL")] and "no NVLS" in unavailable(A100_8, "all_reduce")[("nvls", "Simple")]


def test_tree_correction_is_nccls_table():
    # tuning.cc:581-583, index log2(nBytes >> 6): 1 MiB -> 14 (Simple 0.5, LL 0.5); 256 MiB -> 22 (Simple
    # 0.9); 512 MiB -> 23: none
    assert T.tree_correction("Simple", MiB) == 0.5 and T.tree_correction("Simple", 256 * MiB) == 0.9
    assert T.tree_correction("Simple", 512 * MiB) == 1.0 and T.tree_correction("LL", 63) == 1.0
    lat, bw = h100_ar("tree", "LL")
    assert algo_time(H100_8, "all_reduce", "tree", "LL", MiB) == pytest.approx(lat * US + MiB / (bw * GB * 0.5))


# ---------------------------------------------------------------- NCCL's choice
def _picks(node, coll, sizes):
    return [(c.algo, c.proto) for c in (choose(node, coll, n) for n in sizes)]


@pytest.mark.parametrize("node, coll, ref", [(A100_8, "all_reduce", a100_ar), (H100_8, "all_gather", h100_ag),
                                             (H100_8, "reduce_scatter", h100_ag)])
def test_protocol_goes_ll_ll128_simple_at_the_hand_derived_sizes(node, coll, ref):
    sizes = [2.0 ** k for k in range(0, 35)]
    picks = _picks(node, coll, sizes)
    protos = [p for _, p in picks]
    assert all(a == "ring" for a, _ in picks)
    order = [T.PROTOCOLS.index(p) for p in protos]
    assert order == sorted(order) and set(protos) == set(T.PROTOCOLS)
    n1 = crossover(ref("ring", "LL"), ref("ring", "LL128"))
    n2 = crossover(ref("ring", "LL128"), ref("ring", "Simple"))
    for n, before, after in ((n1, "LL", "LL128"), (n2, "LL128", "Simple")):
        assert choose(node, coll, n * (1 - 1e-6)).proto == before and choose(node, coll, n * (1 + 1e-6)).proto == after


def test_h100_all_reduce_goes_from_ring_ll_to_nvls():
    n = crossover(h100_ar("ring", "LL"), h100_ar("nvls", "Simple"))
    assert 1.0e6 < n < 1.2e6
    assert _picks(H100_8, "all_reduce", [n * (1 - 1e-6), n * (1 + 1e-6), 16 * 2.0 ** 30]) == [
        ("ring", "LL"), ("nvls", "Simple"), ("nvls", "Simple")]
    no_nvls = Node("H100", 4, 18, nvls=False)
    protos = [p for _, p in _picks(no_nvls, "all_reduce", [2.0 ** k for k in range(35)])]
    assert protos[0] == "LL" and protos[-1] == "Simple" and "LL128" in protos


@pytest.mark.parametrize("node", [H100_8, A100_8])
@pytest.mark.parametrize("coll", MODELLED_COLLECTIVES)
def test_time_is_monotone_in_size(node, coll):
    sizes = np.geomspace(1, 2.0 ** 34, 1500)
    t = [choose(node, coll, n).time for n in sizes]
    assert np.all(np.diff(t) >= 0)
    p = predict_nccl(node, coll, [2.0 ** k for k in range(35)])
    assert np.all(np.diff(p.time) >= 0)
    assert predict_nccl(node, coll, 0).time[0] == table(node, coll)[(p.algo[0], p.proto[0])].latency


# ---------------------------------------------------------------- runtime channels and the prediction
def test_runtime_channels_follow_enqueue_rule():
    # ring LL: 512 threads x 8 B x 8 ranks = 32 KiB per channel (comm.h:42, device.h:92, tuning.cc:547)
    per = 512 * 8 * 8
    got = [runtime_channels(H100_8, "ring", "LL", k * per) for k in (0.5, 1, 2, 23.99, 24, 100)]
    assert got == [1, 1, 2, 23, 24, 24]
    assert runtime_channels(H100_8, "ring", "LL128", 640 * 8 * 5) == 5          # device.h:109, comm.h:43
    assert runtime_channels(H100_8, "nvls", "Simple", 1) == 16


def test_prediction_of_a_small_ring_ll_uses_one_channel():
    n = 1024                                        # one of 24 channels: 1/24 of 12 x 30 GB/s
    lat, _ = h100_ar("ring", "LL")
    bw = min(141.0, 0.5 * (12 / 24) * 30.0) * 8 / 14
    p = predict_nccl(H100_8, "all_reduce", n)
    assert p.channels == (1,) and p.time[0] == pytest.approx(lat * US + n / (bw * GB))
    assert predict_nccl(H100_8, "all_reduce", n, runtime=False).time[0] == pytest.approx(
        algo_time(H100_8, "all_reduce", "ring", "LL", n))
    assert predict_nccl(H100_8, "all_reduce", n, overhead=5e-6).time[0] == pytest.approx(p.time[0] + 5e-6)


def test_nvls_passes_the_nvlink_wire_rate_as_measured():
    run = load_log(H100_LOG)[0]
    p = predict_nccl(H100_8, "all_reduce", run.sizes()[-1:])
    assert p.busbw[0] > NVLINK4.beta and run.column("busbw")[-1] > NVLINK4.beta
    assert p.busbw[0] == pytest.approx(8 * 59.5 * GB, rel=2e-3)        # 25 µs of 36 ms
    assert predict_nccl(H100_8, "all_gather", run.sizes()[-1:]).busbw[0] < 360 * GB


# ---------------------------------------------------------------- against the logs
def test_error_at_16_gib_from_the_log_row():
    run = load_log(H100_LOG)[0]                     # 17179869184 B, out-of-place 62340.7 µs
    c = compare(run, H100_8)
    lat, bw = h100_ar("nvls", "Simple")
    want = 62340.7 * US / (lat * US + 17179869184 / (bw * GB)) - 1
    assert c.sizes[-1] == 17179869184 and c.errors[-1] == pytest.approx(want, rel=1e-9)
    assert c.overhead == 0 and c.calibrated_at is None


def test_overhead_is_read_at_the_smallest_size():
    run, = load_log(AZURE_LOG)                      # 1K: busbw 0.07 GB/s -> t = 1.75 x 1024 / 0.07e9
    c = compare(run, H100_8)
    measured = 2 * 7 / 8 * 1024 / 0.07e9
    model = 15.0 * US + 1024 / (min(141.0, 0.5 * 0.5 * 30.0) * 8 / 14 * GB)
    assert c.calibrated_at == 1024 and c.overhead == pytest.approx(measured - model, rel=1e-9)
    assert not c.band("< 1 MiB")[0] and c.band("< 1 MiB").sum() == 9


MET = {(H100_LOG, "all_reduce", ">= 1 MiB"), (H100_LOG, "all_gather", ">= 1 MiB"),
       (H100_LOG, "reduce_scatter", ">= 1 MiB"), (AZURE_LOG, "all_reduce", ">= 1 MiB"),
       (AZURE_LOG, "all_reduce", "< 1 MiB")}
MISSED = {
    (A100_LOG, "all_reduce", ">= 1 MiB"):
        "measured 15.2 %, and no NCCL release's model does better (with the A100 constants of 2.8-2.9, "
        "2.10-2.17 and 2.18-2.20, the last the log's most plausible era: 22.6, 28.9, 22.0 %; PROVENANCE.md): "
        "from 16 to 256 MiB the log's times lie on a line starting at ~132 us (test_a100_simple_sizes_"
        "start_far_above_nccls_latency), where every release from 2.7.3 to 2.29.2 gives a ring Simple "
        "all-reduce 8.4 + 14 x 3.4 = 56 us, so the model is 19-45 % fast there; and 1-4 MiB take a flat "
        "~101 us where every release's time rises with size",
    (A100_LOG, "all_reduce", "< 1 MiB"):
        "measured 29.1 % whatever the release (test_a100_small_sizes_miss_by_the_logs_own_growth): NCCL's "
        "channel rule (enqueue.cc, 512 threads x 8 B x nranks per ring LL channel in every release from "
        "2.7.3 to 2.29.2) makes the time flat from 32 to 768 KiB, so with the overhead read at 32 KiB the "
        "error is the log's own growth t(n)/t(32 KiB) - 1 = 6.8, 18.1, 40.0, 83.4 %; dropping the rule "
        "(overhead 28.2 us) gives 19.9 % here but 29.0 % on Azure's H100 log",
}
CASES = [(log, coll, band) for log in (H100_LOG, A100_LOG, AZURE_LOG) for run in load_log(log)
         for coll in [run.collective] if coll in MODELLED_COLLECTIVES for band in TARGETS
         if (log, coll, band) in MET | set(MISSED)]


@pytest.mark.parametrize("log, coll, band", [
    pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=MISSED[c])) if c in MISSED else c for c in CASES])
def test_accuracy_target(log, coll, band):
    node = A100_8 if log == A100_LOG else H100_8
    run = next(r for r in load_log(log) if r.collective == coll)
    c = compare(run, node)
    assert c.band(band).sum() >= 4
    assert c.median(band) <= TARGETS[band]


def test_a100_small_sizes_miss_by_the_logs_own_growth():
    # ring LL on all 24 channels needs 24 x 512 x 8 x 8 B = 768 KiB (enqueue.cc:1994-1998); below, the
    # channel count follows the size and the time stays that of 32 KiB on one channel; the overhead read
    # at 32 KiB makes the prediction equal the log there, so each error is the log's growth from 32 KiB
    run, = load_log(A100_LOG)
    c = compare(run, A100_8)
    small = c.sizes < MiB
    assert {(c.prediction.algo[i], c.prediction.proto[i]) for i in np.nonzero(small)[0]} == {("ring", "LL")}
    assert np.ptp(c.prediction.time[small]) < 1e-12
    times = {32768: 43.83, 65536: 46.80, 131072: 51.76, 262144: 61.38, 524288: 80.40}   # the log's rows
    want = [times[int(n)] / times[32768] - 1 for n in c.sizes[small]]
    assert c.errors[small] == pytest.approx(want, rel=1e-9)
    assert np.median(np.abs(want[1:])) > TARGETS["< 1 MiB"]


def test_a100_simple_sizes_start_far_above_nccls_latency():
    # the log from 16 to 256 MiB as t = a + n/b (fit_point_to_point): a is ~2.4x the 56 us that NCCL
    # gives a ring Simple all-reduce on 8 ranks (8.4 + 14 x 3.4, tuning.cc:143-168, the same in every
    # release from 2.7.3), so NCCL's model, plus the overhead read at 32 KiB, is too fast there
    run, = load_log(A100_LOG)
    n, t = run.sizes(), run.times()
    band = (n >= 16 * MiB) & (n <= 256 * MiB)
    f = fit_point_to_point(n[band], t[band])
    nccl_lat = (8.4 + 14 * 3.4) * US
    assert table(A100_8, "all_reduce")[("ring", "Simple")].latency == pytest.approx(nccl_lat)
    c = compare(run, A100_8)
    assert f.rms_rel < 0.03 and f.alpha > 2 * nccl_lat and f.alpha > 1.5 * (nccl_lat + c.overhead)
    assert np.all(c.errors[band] > 0.15)


def test_every_log_band_is_classified():
    known = {(log, r.collective, b) for log in (H100_LOG, A100_LOG, AZURE_LOG) for r in load_log(log)
             if r.collective in MODELLED_COLLECTIVES for b in TARGETS
             if compare(r, A100_8 if log == A100_LOG else H100_8).band(b).any()}
    assert known == MET | set(MISSED)


def test_benchmark_script_prints_the_table():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy.py"
    spec = importlib.util.spec_from_file_location("accuracy_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = io.StringIO()
    with redirect_stdout(out):
        rc_plain, rc_strict = mod.main([]), mod.main(["--strict", "--sizes"])
    text = out.getvalue()
    assert rc_plain == 0 and rc_strict == (1 if MISSED else 0)
    one_node = [ln for ln in text.splitlines() if ln.startswith((H100_LOG, A100_LOG, AZURE_LOG))]
    passed = MET - set(WORST_MISSED)        # the table's PASS also needs the worst size >= 1 MiB <= 25 %
    assert sum(ln.endswith("PASS") for ln in one_node) == 2 * len(passed)
    assert sum(ln.endswith("MISS") for ln in one_node) == 2 * len(set(MISSED) | set(WORST_MISSED))
    assert "ebd1e92" in text and "nvls/Simple, 16" in text


WORST_TARGET = 0.25
WORST_MISSED = {
    (A100_LOG, "all_reduce", ">= 1 MiB"):
        "worst 91.2 % at 1 MiB (44.9 % at 16 MiB): the log is flat at ~101 us from 1 to 4 MiB where NCCL's ring LL/LL128 time "
        "rises with the size (see the median's reason)",
    (AZURE_LOG, "all_reduce", ">= 1 MiB"):
        "worst 29.0 % at 16 MiB (28.8 % at 8 MiB, 25.2 % at 32 MiB): from 4 to 64 MiB the log's NVLS all-reduce "
        "is t = 41.7 us + n / 220.6 GB/s (fit_point_to_point, rms 5.8 %), where NCCL 2.29.2's NVLS has 25 us and "
        "n / 272 GB/s (476 GB/s busbw); the log ran NCCL 2.18.5, and its NCCL_DEBUG=INFO tuning table would settle "
        "which latency that release gave NVLS",
}


@pytest.mark.parametrize("log, coll", [
    pytest.param(log, coll, marks=pytest.mark.xfail(strict=True, reason=WORST_MISSED[(log, coll, ">= 1 MiB")]))
    if (log, coll, ">= 1 MiB") in WORST_MISSED else (log, coll)
    for log, coll, band in CASES if band == ">= 1 MiB"])
def test_worst_size_at_least_1_mib(log, coll):
    node = A100_8 if log == A100_LOG else H100_8
    c = compare(next(r for r in load_log(log) if r.collective == coll), node)
    assert np.max(np.abs(c.errors[c.band(">= 1 MiB")])) <= WORST_TARGET


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    (dict(gpu="B200", nvlink_gen=5, nvlinks=18), "unknown GPU"),
    (dict(gpu="H100", nvlink_gen=3, nvlinks=18), "NVLink 4"),
    (dict(gpu="A100", nvlink_gen=3, nvlinks=13), "nvlinks"),
    (dict(gpu="A100", nvlink_gen=3, nvlinks=12, nvls=True), "NVLS needs"),
    (dict(gpu="H100", nvlink_gen=4, nvlinks=18, ngpus=1), "ngpus"),
])
def test_bad_node(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Node(**kwargs)


def test_bad_input_elsewhere():
    with pytest.raises(TypeError):
        Node("H100", 4.0, 18)
    with pytest.raises(ValueError, match="NVSwitch"):
        graphs(Node("A100", 3, 12, nvswitch=False))
    for f in (lambda: table(H100_8, "all_to_all"), lambda: choose(H100_8, "alltoall", 1),
              lambda: predict_nccl(A100_8, "broadcast", [1])):
        with pytest.raises(ValueError, match="unknown collective"):
            f()
    with pytest.raises(ValueError, match="not available"):
        algo_time(A100_8, "all_reduce", "nvls", "Simple", 1)
    with pytest.raises(ValueError, match="unknown protocol"):
        algo_time(H100_8, "all_reduce", "ring", "LL64", 1)
    with pytest.raises(ValueError):
        predict_nccl(H100_8, "all_reduce", [-1])
    with pytest.raises(ValueError, match="overhead"):
        predict_nccl(H100_8, "all_reduce", [1], overhead=-1e-6)
    with pytest.raises(TypeError):
        predict_nccl(H100_8, "all_reduce", ["big"])
    sendrecv = next(r for r in load_log(H100_LOG) if r.collective == "send_recv")
    with pytest.raises(ValueError, match="unknown collective"):
        compare(sendrecv, H100_8)
    with pytest.raises(ValueError, match="ranks"):
        compare(load_log(H100_LOG)[0], Node("H100", 4, 18, nvls=True, ngpus=4))
    with pytest.raises(ValueError, match="band"):
        compare(load_log(H100_LOG)[0], H100_8).median("big")
    assert math.isnan(compare(load_log(H100_LOG)[0], H100_8).median("< 1 MiB"))
