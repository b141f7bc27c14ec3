"""Chapter §1.7 (communication libraries and runtimes): the page's data and numbers
(``commbook.book.ch1.libraries`` and ``chapters/{zh,en}/ch1/07-libraries.md``).

Table 5 is checked row by row against the chapter; the protocol shares with exact fractions
from the line layouts NCCL's maintainers describe; NCCL 2.29.2's ring model and the sizes at
which its pick changes (LL -> LL128 -> Simple, ring -> NVLS) against crossovers solved here
from the constants of ``commbook.measure.nccl_tuning``, and the page's glued values against
them (the page is executed, both languages); every number read from the 8×A100 log
against an independent parse of the raw text and an independent least-squares fit; where the
chapter is wrong (Gloo's transports, the year of the MPI reference) both values are pinned.
"""
from __future__ import annotations

import re
from datetime import date
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from commbook import physics
from commbook.book.ch1 import libraries as L
from commbook.book.ch1 import libraries_protocols as LP
from commbook.measure import nccl_model as M
from commbook.measure import nccl_tuning as T
from commbook.units import fmt_bytes
from conftest import executed_glue
from commbook.hardware import IB_NDR
from commbook.measure import LOG_DIR
from commbook.units import GB, KiB, MiB, us

ROOT = Path(__file__).resolve().parents[1]
PAGE = {lang: ROOT / "chapters" / lang / "ch1" / "07-libraries.md" for lang in ("en", "zh")}

# Table 5 as the chapter prints it: scenario -> (library, reason), in the chapter's order.
CHAPTER_TABLE5 = [
    ("Multi-GPU training (NVIDIA)", "NCCL", ("GPUDirect", "kernel fusion", "NVLink")),
    ("CPU-only distributed training", "Gloo or MPI", ("CPU",)),
    ("Development and debugging", "Gloo", ("cross-platform", "no CUDA")),
    ("GPUs of mixed vendors", "Gloo (fallback)", ("NVIDIA only",)),
    ("HPC integration", "MPI + NCCL", ("MPI launches", "NCCL runs the GPU collectives")),
]


# The model's ring bus bandwidth on 8xH100 (GB/s), from the constants: the ring graph is 6
# channels of 60 GB/s (18 NVLinks x 20.6 = 370.8 GB/s; 60 is the fastest speed that fits,
# search.cc:1101-1177), doubled to 12 of 30 (search.cc:961-974); LL x 0.5 capped at llMaxBw,
# LL128 x 0.92 capped at 12 x perChMaxRingLL128Bw (tuning.cc:304-305).
_H100_RING_BUS = {"LL": min(T.LL_MAX_BW[2][0], 12 * 30 * T.RING_LL_FACTOR),
                  "LL128": min(12 * 30 * T.RING_LL128_FACTOR, 12 * T.PER_CH_MAX_RING_LL128_BW[2][0]),
                  "Simple": 12 * 30.0}
# 8xA100: 12 NVLinks x 20 = 240 GB/s, 6 channels of 40 doubled to 12 of 20
_A100_RING_BUS = {"LL": min(T.LL_MAX_BW[1][0], 12 * 20 * T.RING_LL_FACTOR),
                  "LL128": min(12 * 20 * T.RING_LL128_FACTOR, 12 * T.PER_CH_MAX_RING_LL128_BW[1][0]),
                  "Simple": 12 * 20.0}


def _ring_lat(proto: str) -> float:
    """µs: baseLat + 14 NVLink hops (tuning.cc:143-168), 8 GPUs."""
    i = T.PROTOCOLS.index(proto)
    return T.BASE_LAT["ring"][i] + 14 * T.HW_LAT["nvlink"]["ring"][i]


def _crossover(lat_a: float, bus_a: float, lat_b: float, bus_b: float) -> float:
    """Bytes where lat + n / algbw are equal (µs, GB/s of bus bandwidth; algbw = bus × 8/14)."""
    alg_a, alg_b = bus_a * 8 / 14 * 1e9, bus_b * 8 / 14 * 1e9
    return (lat_b - lat_a) * 1e-6 / (1 / alg_a - 1 / alg_b)


def _thresholds() -> dict[str, float]:
    """Every switch of NCCL's all-reduce pick on the three nodes, from the constants alone."""
    h, a = _H100_RING_BUS, _A100_RING_BUS
    # NVLS on 8xH100: 8 channels of 40 GB/s (9 x 40 <= 370.8, search.cc:386-401), bwInter 60;
    # per channel 40 x nvlsEfficiency x 7/8, x2 for all-reduce (tuning.cc), latency hwLat alone
    nvls_bus = 8 * min(40 * T.NVLS_EFFICIENCY[2] * 7 / 8 * 2, 60.0)
    nvls_lat = T.HW_LAT["nvlink"]["nvls"][2]
    return {
        "pk_nvls": _crossover(_ring_lat("LL"), h["LL"], nvls_lat, nvls_bus),
        "pk_ll128": _crossover(_ring_lat("LL"), h["LL"], _ring_lat("LL128"), h["LL128"]),
        "pk_simple": _crossover(_ring_lat("LL128"), h["LL128"], _ring_lat("Simple"), h["Simple"]),
        "pk_a_ll128": _crossover(_ring_lat("LL"), a["LL"], _ring_lat("LL128"), a["LL128"]),
        "pk_a_simple": _crossover(_ring_lat("LL128"), a["LL128"], _ring_lat("Simple"), a["Simple"]),
        "nvls_bus": nvls_bus, "nvls_lat": nvls_lat,
    }


def _raw_a100() -> np.ndarray:
    """The A100 log parsed here from its text: rows of (bytes, µs, algbw GB/s, busbw GB/s)."""
    text = (LOG_DIR / L.A100_LOG).read_text(encoding="utf-8")
    rows = [tuple(float(x.replace("_", "")) for x in m.groups()) for m in
            re.finditer(r"^\s*([\d_]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", text, re.M)]
    return np.array(rows)


# ============================================================================ Table 5, axes
def test_table5_rows_are_the_chapters():
    t = L.table5()
    assert len(t) == len(CHAPTER_TABLE5) == 5
    for i, (scenario, library, words) in enumerate(CHAPTER_TABLE5):
        assert t.cell(i, "scenario", "en") == scenario
        assert t.cell(i, "library", "en") == library
        reason = t.cell(i, "reason", "en")
        assert all(w in reason for w in words), reason
        for col in ("scenario", "library", "reason", "axis"):
            assert t.cell(i, col, "zh") and t.cell(i, col, "zh") != t.rows[i][col]
    assert t.meta["nccl_rows"] == 2
    assert all(set(r["axes"]) <= set(L.AXES) for r in L.TABLE5)
    assert "2 of 5" in t.notes["en"][0] and "5 行里有 2 行" in t.notes["zh"][0]


def test_axes_table_covers_three_libraries_on_four_axes():
    t = L.axes_table()
    assert list(L.AXES) == ["memory", "topology", "portability", "observability"]
    assert t.columns == ["axis", "NCCL", "MPI", "Gloo"] and len(t) == 4
    for lang in ("en", "zh"):
        cells = t.cells(lang)
        assert all(c and "|" not in c for row in cells for c in row)
    assert t.cell(0, "axis", "zh") == "设备内存路径"
    assert "NVIDIA" in t.cell(2, "NCCL", "en")


# ============================================================================ protocols
def test_protocol_shares_are_exact():
    p = L.PROTOCOLS
    assert (p["LL"].line, p["LL"].flag, p["LL"].payload) == (8, 4, 4)
    assert (p["LL128"].line, p["LL128"].flag, p["LL128"].payload) == (128, 8, 120)
    assert p["LL"].share == Fraction(1, 2)
    assert p["LL128"].share == Fraction(15, 16)          # 93.75 %
    assert p["Simple"].share == 1 and p["Simple"].payload is None


@pytest.mark.parametrize("gen, beta", [("NVLink 4.0", 450 * GB), ("NVLink 3.0", 300 * GB)])
def test_protocol_ceilings(gen, beta):
    assert physics.generation(gen).beta == pytest.approx(beta)
    assert L.PROTOCOLS["LL"].ceiling(beta) == pytest.approx(beta / 2)
    assert L.PROTOCOLS["LL128"].ceiling(beta) == pytest.approx(beta * 120 / 128)
    assert L.PROTOCOLS["Simple"].ceiling(beta) == pytest.approx(beta)


def test_protocol_table_and_tuning_model():
    t = L.protocol_table()
    ll, ll128, simple = (t.find(proto=k) for k in ("LL", "LL128", "Simple"))
    assert (ll["nv4"], ll128["nv4"], simple["nv4"]) == pytest.approx((225 * GB, 421.875 * GB, 450 * GB))
    assert (ll["nv3"], ll128["nv3"], simple["nv3"]) == pytest.approx((150 * GB, 281.25 * GB, 300 * GB))
    # NCCL 2.29.2 tuning.cc:143-168: baseLat + 2(p-1) * hwLat[NVLINK][RING], p = 8
    for row, proto in ((ll, "LL"), (ll128, "LL128"), (simple, "Simple")):
        i = T.PROTOCOLS.index(proto)
        assert row["lat"] == pytest.approx((T.BASE_LAT["ring"][i] + 14 * T.HW_LAT["nvlink"]["ring"][i]) * us)
    assert (ll["lat"], ll128["lat"], simple["lat"]) == pytest.approx((15.0 * us, 40.6 * us, 56.0 * us))
    assert (ll["factor"], ll128["factor"], simple["factor"]) == (0.5, 0.92, 1.0)    # tuning.cc:304-305
    # the ring's bus bandwidth in the model on 8xH100: 12 channels x 30 GB/s
    assert (ll["model"], ll128["model"], simple["model"]) == pytest.approx(tuple(
        b * GB for b in _H100_RING_BUS.values()))
    assert t.cell(1, "share", "en") == "93.8%"
    assert "tuning.cc:304-305" in t.notes["en"][0] and "device.h:70-83" in t.notes["en"][1]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nic_ceiling(glued, lang):
    g = glued[lang]
    assert g["li_nic_count"] == str(L.DGX_H100_NICS) == "8"
    assert IB_NDR.beta == 50 * GB and g["li_nic_bw_Bps"] == "50 GB/s"
    assert g["li_nic_node_Bps"] == "400 GB/s" and g["li_nic_x"] == "8×"
    assert (g["li_n_axes"], g["li_n_libs"], g["li_t5_rows"], g["li_t5_nccl"]) == ("4", "3", "5", "2")


def test_switches_are_the_crossovers_of_the_constants():
    """NCCL's pick changes where two pairs' lat + n/bw cross; nothing else (no tree) wins."""
    x = _thresholds()
    sw = {key: LP.switches(node) for key, node in LP.NODES.items()}
    assert [(s["algo"], s["proto"]) for s in sw["h100"]] == [("ring", "LL"), ("nvls", "Simple")]
    assert [(s["algo"], s["proto"]) for s in sw["h100_no_nvls"]] == [("ring", p) for p in T.PROTOCOLS]
    assert [(s["algo"], s["proto"]) for s in sw["a100"]] == [("ring", p) for p in T.PROTOCOLS]
    starts = {"pk_nvls": sw["h100"][1]["start"], "pk_ll128": sw["h100_no_nvls"][1]["start"],
              "pk_simple": sw["h100_no_nvls"][2]["start"], "pk_a_ll128": sw["a100"][1]["start"],
              "pk_a_simple": sw["a100"][2]["start"]}
    for key, start in starts.items():
        assert start - 1 <= x[key] + 1e-3 and x[key] < start + 1e-3, key     # the first byte past it
    assert [s["end"] for s in sw["h100"]] == [sw["h100"][1]["start"], None]
    assert x["pk_nvls"] == pytest.approx(1.1448e6, rel=1e-4)
    assert (x["pk_ll128"], x["pk_simple"]) == pytest.approx((3.5917e6, 36.432e6), rel=1e-4)
    # each range's pair really is the fastest there (checked against nccl_model.choose)
    for key, node in LP.NODES.items():
        for s in sw[key]:
            c = M.choose(node, "all_reduce", s["start"])
            assert (c.algo, c.proto) == (s["algo"], s["proto"])


def test_picks_table_and_channel_rule():
    t = LP.picks_table()
    assert [r["node"] for r in t.rows] == ["h100"] * 2 + ["h100_no_nvls"] * 3 + ["a100"] * 3
    nvls = t.rows[1]
    assert nvls["lat"] == pytest.approx(25 * us) and nvls["bus"] == pytest.approx(_thresholds()["nvls_bus"] * GB)
    assert nvls["bus"] > 450 * GB                                     # above NVLink 4's wire rate
    assert t.cell(1, "algo", "zh") == "NVLS" and t.cell(0, "algo", "zh") == "环" and t.cell(1, "end", "en") == "—"
    # ring LL: 512 threads x 8 B x 8 ranks per channel (device.h:92, comm.h:42, tuning.cc:547), 24 channels
    assert 512 * 8 * 8 == 32 * KiB
    assert T.MAX_THREADS["LL"] * T.THREAD_THRESHOLD["LL"] * 8 == 32 * KiB and M.graphs(M.H100_8).runtime_channels == 24
    assert M.runtime_channels(M.H100_8, "ring", "LL", 2 * 32 * KiB) == 2
    assert M.runtime_channels(M.H100_8, "ring", "LL", 768 * KiB) == 24
    assert M.runtime_channels(M.H100_8, "ring", "LL", 768 * KiB - 1) == 23


@pytest.fixture(scope="module")
def glued() -> dict[str, dict[str, str]]:
    return {lang: executed_glue(PAGE[lang]) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_glues_the_thresholds_of_the_constants(glued, lang):
    g, x = glued[lang], _thresholds()
    for key in ("pk_nvls", "pk_ll128", "pk_simple", "pk_a_ll128", "pk_a_simple"):
        assert g[key + "_bytes"] == fmt_bytes(x[key]), key
    assert (g["pk_nvls_bytes"], g["pk_ll128_bytes"], g["pk_simple_bytes"]) == ("1.14 MB", "3.59 MB", "36.4 MB")
    assert (g["pk_a_ll128_bytes"], g["pk_a_simple_bytes"]) == ("2.13 MB", "24.3 MB")
    assert g["pk_nvls_lat_s"] == "25 µs" and g["pk_nvls_bus_Bps"] == f"{x['nvls_bus']:.0f} GB/s"
    assert (g["pr_lat_ll_s"], g["pr_lat_ll128_s"], g["pr_lat_simple_s"]) == ("15 µs", "40.6 µs", "56 µs")
    assert (g["pr_f_ll"], g["pr_f_ll128"], g["pr_version"]) == ("0.5", "0.92", "2.29.2")
    assert (g["pr_ring_ch"], g["pr_ring_bw_Bps"], g["pr_llmax_Bps"]) == ("12", "30 GB/s", f"{T.LL_MAX_BW[2][0]:g} GB/s")
    assert g["pr_bus_simple_Bps"] == f"{_H100_RING_BUS['Simple']:.0f} GB/s"
    assert g["pk_a_llmax_Bps"] == f"{_A100_RING_BUS['LL']:g} GB/s"
    assert (g["pk_ch_per_bin"], g["pk_ch_n"], g["pk_ch_full_bin"]) == ("32 KiB", "24", "768 KiB")
    assert (g["fl_model_bus_Bps"], g["fl_model_gap_frac"]) == ("240 GB/s", "2.3%")
    assert (g["mpi_cite"], g["mpi_y1"]) == ("1993", "1994")
    assert (g["mpi_v1"], g["mpi_v4"]) == ("MPI-1.0", "MPI-4.0")
    assert g["mpi_d1"] == {"en": "5 May 1994", "zh": "1994 年 5 月 5 日"}[lang]
    # the line layouts: LL 4 B of data + 4 B of flag in 8, LL128 120 + 8 in 128; their ceilings on NVLink 4.0
    assert (g["pr_ll_line"], g["pr_ll_flag"], g["pr_ll128_line"], g["pr_ll128_data"], g["pr_ll128_flag"]) == (
        "8", "4", "128", "120", "8")
    assert (g["pr_ll_share_frac"], g["pr_ll128_share_frac"]) == ("50%", "93.75%")
    assert (g["pr_nv4_Bps"], g["pr_ll_nv4_Bps"], g["pr_ll128_nv4_Bps"]) == ("450 GB/s", "225 GB/s", "422 GB/s")
    assert g["pr_lat_x"] == f"{_ring_lat('Simple') / _ring_lat('LL'):.2g}×" and g["pr_p"] == "8"


def test_the_pick_at_every_power_of_two_lies_in_its_range():
    """The page's two views of NCCL's pick agree: predict_nccl at each power of two from
    8 B to 16 GiB falls in the range switches() gives, and the ranges are the expected pairs."""
    sizes = 2.0 ** np.arange(3, 35)
    pick = M.predict_nccl(M.H100_8, "all_reduce", sizes)
    sw = {key: LP.switches(node) for key, node in LP.NODES.items()}
    for n, a, p_ in zip(sizes, pick.algo, pick.proto):
        (seg,) = [s for s in sw["h100"] if s["start"] <= n and (s["end"] is None or n < s["end"])]
        assert (seg["algo"], seg["proto"]) == (a, p_)
    assert [(s["algo"], s["proto"]) for s in sw["h100"]] == [("ring", "LL"), ("nvls", "Simple")]
    assert [s["proto"] for s in sw["h100_no_nvls"]] == [s["proto"] for s in sw["a100"]] == list(T.PROTOCOLS)


def test_the_h100_log_is_neither_ll_nor_below_one_link():
    """Checkpoint: on 8×H100 the smallest size already beats LL's ceiling on NVLink 4.0,
    and the largest beats one link's 450 GB/s (bus bandwidth counts the ring's 2(p−1)/p)."""
    from commbook.book.ch1.perf_calibration import CALIBRATION_LOG
    from commbook.measure import load_log
    h100, = [r for r in load_log(CALIBRATION_LOG) if r.collective == "all_reduce"]
    bus = h100.column("busbw", "out_of_place")
    nv4 = L.protocol_table().meta["nv4"]
    assert nv4 == 450e9 and bus[0] > L.PROTOCOLS["LL"].ceiling(nv4) == nv4 / 2 and bus.max() > nv4


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_cites_nccl_2_29_2_not_2_7_5(lang):
    text = PAGE[lang].read_text(encoding="utf-8")
    assert "2.7.5" not in text
    for cite in ("tuning.cc:304", "tuning.cc:305", "tuning.cc:169-174", "tuning.cc:143-168",
                 "tuning.cc:586-603", "enqueue.cc:1935-1947", "enqueue.cc:1994-1998", "comm.h:42-44",
                 "nvls.cc:152", "nccl_model.predict_nccl(nccl_model.H100_8, \"all_reduce\", sizes)"):
        assert cite in text, cite


# ============================================================================ the A100 log
def test_flat_stretch_against_the_raw_log():
    raw = _raw_a100()
    fr = L.flat_region()
    np.testing.assert_array_equal(fr.sizes, raw[:, 0])
    np.testing.assert_allclose(fr.times, raw[:, 1] * us)
    np.testing.assert_allclose(fr.busbw, raw[:, 3] * GB)
    i, j = fr.flat
    assert (fr.sizes[i], fr.sizes[j]) == (1 * MiB, 4 * MiB)
    np.testing.assert_allclose(raw[i:j + 1, 1], [101.9, 101.4, 101.5])
    assert raw[i - 1, 1] == 80.4 and raw[j + 1, 1] == 133.5       # both neighbours are off it


def test_fit_below_the_stretch_is_independent_least_squares():
    raw = _raw_a100()
    fr = L.flat_region()
    i = fr.flat[0]
    n, t = raw[:i, 0], raw[:i, 1] * us
    p = 8
    a, b = np.full_like(n, 2 * (p - 1)), 2 * (p - 1) / p * n
    (alpha, inv_beta), *_ = np.linalg.lstsq(np.column_stack([a / t, b / t]), np.ones_like(t), rcond=None)
    assert fr.alpha_s == pytest.approx(alpha, rel=1e-9)
    assert fr.beta_Bps == pytest.approx(1 / inv_beta, rel=1e-9)
    assert n[0] == 32 * KiB and n[-1] == 512 * KiB
    assert fr.rms_frac < 0.01
    # the line carried to 4 MiB: 14 alpha + 1.75 n / beta, several times the measured time
    pred = 14 * alpha + 1.75 * 4 * MiB * inv_beta
    assert fr.pred[fr.flat[1]] == pytest.approx(pred) == fr.pred_hi_s
    assert pred / (101.5 * us) == pytest.approx(3.48, abs=0.01)


def test_ll_ceiling_excludes_ll_from_64_mib():
    raw = _raw_a100()
    fr = L.flat_region()
    assert fr.ll_cap_Bps == pytest.approx(150 * GB) and fr.ll128_cap_Bps == pytest.approx(281.25 * GB)
    k = int(np.nonzero(raw[:, 0] == fr.not_ll_bytes)[0][0])
    assert raw[k, 0] == 64 * MiB and raw[k, 3] == 171.54
    assert (raw[:k, 3] <= 150).all() and (raw[k:, 3] > 150).all()
    assert fr.max_bus_Bps == pytest.approx(234.61 * GB)
    assert fr.max_bus_Bps < fr.ll128_cap_Bps
    # NCCL 2.29.2's model: an A100 ring of 12 channels x 20 GB/s under Simple, 2.3 % above the plateau
    assert LP.A100_RING_BUSBW == pytest.approx(240 * GB)
    assert LP.A100_RING_BUSBW / fr.max_bus_Bps - 1 == pytest.approx(0.023, abs=0.001) == fr.model_gap_frac
    with pytest.raises(ValueError):
        L.flat_region(tol=0.0)


def test_flat_table_rows():
    t = L.flat_table()
    assert [r["n"] for r in t.rows] == [2 ** k * KiB for k in range(8, 15)]
    assert [r["flat"] for r in t.rows] == [False, False, True, True, True, False, False]
    assert t.find(n=4 * MiB)["ll"] == pytest.approx(72.33 / 150)


# ============================================================================ diagnosis
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_diagnosis_against_the_baseline(glued, lang):
    """The traced 1.10 ms (and 0.70 ms) against the raw log's 684.6 µs at 64 MiB."""
    from commbook.units import fmt_pct, fmt_rate, fmt_ratio, fmt_time
    g, raw = glued[lang], _raw_a100()
    k = int(np.nonzero(raw[:, 0] == L.DIAGNOSIS["bucket"])[0][0])
    base, bus = raw[k, 1] * us, raw[k, 3] * GB
    assert (raw[k, 1], raw[k, 3]) == (684.6, 171.54) and L.DIAGNOSIS["bucket"] == 64 * MiB
    assert g["dg_n_bin"] == "64 MiB" and g["dg_traced_s"] == fmt_time(1.10e-3, 3) == "1.1 ms"
    assert g["dg_base_s"] == fmt_time(base) and g["dg_ratio_x"] == fmt_ratio(1.10e-3 / base)
    assert g["dg_excess_s"] == fmt_time(1.10e-3 - base, 3)
    assert g["dg_bus_traced_Bps"] == fmt_rate(1.75 * 64 * MiB / 1.10e-3) and g["dg_bus_base_Bps"] == fmt_rate(bus)
    assert g["dg_share_frac"] == fmt_pct(171.54 / 300)
    assert g["dg_q_ratio_x"] == fmt_ratio(0.70e-3 / base) and 0.70 / 0.6846 < 1.05


# ============================================================================ MPI and Gloo
def test_mpi_versions_and_the_chapters_reference():
    v = {m.version: m.released for m in L.MPI_VERSIONS}
    assert v == {"1.0": date(1994, 5, 5), "2.0": date(1997, 7, 18), "3.0": date(2012, 9, 21),
                 "4.0": date(2021, 6, 9)}
    # the chapter: "Version 1.0 released May 1994", cited to the Forum's 1993 paper
    assert (v["1.0"].year, v["1.0"].month) == (1994, 5)
    assert L.CHAPTER_MPI_CITATION_YEAR == 1993 < v["1.0"].year
    t = L.mpi_table()
    assert t.cell(0, "released", "en") == "5 May 1994" and t.cell(0, "released", "zh") == "1994 年 5 月 5 日"
    assert "MPI_Allreduce_init" in t.cell(3, "feature", "en")


def test_gloo_has_no_shared_memory_transport():
    """The chapter credits Gloo with a shared-memory transport; Gloo has TCP, ibverbs and libuv."""
    assert set(L.GLOO_TRANSPORTS) == {"tcp", "ibverbs", "uv"}
    assert not any("shm" in k or "shared" in v[0] for k, v in L.GLOO_TRANSPORTS.items())
    assert L.PYTORCH_GLOO_DEFAULT == {"Linux": "tcp", "macOS": "uv", "Windows": "uv"}
    assert "#455" in L.SOURCES["gloo"]


# ============================================================================ pages
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_names_what_it_must(lang):
    text = PAGE[lang].read_text(encoding="utf-8")
    for word in ("NCCL_ALGO", "NCCL_PROTO", "NCCL_DEBUG", "`LL`", "`LL128`", "`Simple`", "RCCL", "oneCCL",
                 "MPI_Iallreduce", "MPI_Allreduce_init", "MPI_Put", "cpu:gloo,cuda:nccl",
                 "ncclRedOpCreatePreMulSum", f"<{lang}-p5-lib>", f"<{lang}-p5-lib-mpi>"):
        assert word in text, word
    notes = (ROOT / "chapters" / lang / "notes" / "ch1-sources.md").read_text(encoding="utf-8")
    assert "pytorch/gloo" in notes                      # the note on Gloo's transports cites the issue
    assert text.count(":class: dropdown") == 3          # three answers
    assert text.count("<sup>{ref}`") == 2               # two notes on the original (notes/ch1-sources.md)
    assert "L.flat_region()" in text and "L.DIAGNOSIS" in text and "load_log(L.A100_LOG)" in text


def test_every_source_key_is_used():
    code = "".join(p.read_text(encoding="utf-8")
                   for p in (ROOT / "code" / "commbook" / "book" / "ch1").glob("libraries*.py"))
    for key in L.SOURCES:
        assert f"``{key}``" in code, key
