"""Chapter §1.7 (communication libraries and runtimes): the page's data and numbers
(``commbook.book.ch1.libraries`` and ``chapters/{zh,en}/ch1/07-libraries.md``).

Table 5 is checked row by row against the chapter; the protocol shares with exact fractions
from the line layouts NCCL's maintainers describe; every number read from the 8×A100 log
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
    # NCCL 2.7.5 tuning.cc: baseLat + 2(p-1) * hwLat[NVLINK][RING], p = 8
    assert ll["lat"] == pytest.approx((3.6 + 14 * 0.47) * us)
    assert ll128["lat"] == pytest.approx((10.0 + 14 * 1.9) * us)
    assert simple["lat"] == pytest.approx((8.4 + 14 * 3.4) * us)
    assert (ll["factor"], ll128["factor"], simple["factor"]) == (0.25, 0.92, 1.0)
    assert t.cell(1, "share", "en") == "93.8%"


def test_nic_ceiling():
    nic = L.nic_ceiling()
    assert nic["nics"] == L.DGX_H100_NICS == 8
    assert nic["per_nic"] == IB_NDR.beta == 50 * GB
    assert nic["node"] == pytest.approx(400 * GB) and nic["x"] == 8


# ============================================================================ the A100 log
def test_flat_stretch_against_the_raw_log():
    raw = _raw_a100()
    fr = L.flat_region()
    np.testing.assert_array_equal(fr["sizes"], raw[:, 0])
    np.testing.assert_allclose(fr["times"], raw[:, 1] * us)
    np.testing.assert_allclose(fr["busbw"], raw[:, 3] * GB)
    i, j = fr["flat"]
    assert (fr["sizes"][i], fr["sizes"][j]) == (1 * MiB, 4 * MiB)
    np.testing.assert_allclose(raw[i:j + 1, 1], [101.9, 101.4, 101.5])
    assert raw[i - 1, 1] == 80.4 and raw[j + 1, 1] == 133.5       # both neighbours are off it


def test_fit_below_the_stretch_is_independent_least_squares():
    raw = _raw_a100()
    fr = L.flat_region()
    i = fr["flat"][0]
    n, t = raw[:i, 0], raw[:i, 1] * us
    p = 8
    a, b = np.full_like(n, 2 * (p - 1)), 2 * (p - 1) / p * n
    (alpha, inv_beta), *_ = np.linalg.lstsq(np.column_stack([a / t, b / t]), np.ones_like(t), rcond=None)
    assert fr["below"].alpha == pytest.approx(alpha, rel=1e-9)
    assert fr["below"].beta == pytest.approx(1 / inv_beta, rel=1e-9)
    assert n[0] == 32 * KiB and n[-1] == 512 * KiB
    assert fr["below"].rms_rel < 0.01
    # the line carried to 4 MiB: 14 alpha + 1.75 n / beta, several times the measured time
    pred = 14 * alpha + 1.75 * 4 * MiB * inv_beta
    assert fr["pred"][fr["flat"][1]] == pytest.approx(pred)
    assert pred / (101.5 * us) == pytest.approx(3.48, abs=0.01)


def test_ll_ceiling_excludes_ll_from_64_mib():
    raw = _raw_a100()
    fr = L.flat_region()
    assert fr["ll_cap"] == pytest.approx(150 * GB) and fr["ll128_cap"] == pytest.approx(281.25 * GB)
    k = fr["first_not_ll"]
    assert raw[k, 0] == 64 * MiB and raw[k, 3] == 171.54
    assert (raw[:k, 3] <= 150).all() and (raw[k:, 3] > 150).all()
    assert fr["max_busbw"] == pytest.approx(234.61 * GB)
    assert fr["max_busbw"] < fr["ll128_cap"]
    assert abs(L.NCCL275_A100_BUSBW_CAP - fr["max_busbw"]) < 0.5 * GB     # the 2.7.5 model's cap
    with pytest.raises(ValueError):
        L.flat_region(tol=0.0)


def test_flat_table_rows():
    t = L.flat_table()
    assert [r["n"] for r in t.rows] == [2 ** k * KiB for k in range(8, 15)]
    assert [r["flat"] for r in t.rows] == [False, False, True, True, True, False, False]
    assert t.find(n=4 * MiB)["ll"] == pytest.approx(72.33 / 150)


# ============================================================================ diagnosis
def test_diagnosis_against_the_baseline():
    d = L.diagnosis()
    assert d["n"] == 64 * MiB and d["traced"] == pytest.approx(1.10e-3)
    assert d["baseline"] == pytest.approx(684.6 * us)
    assert d["ratio"] == pytest.approx(1.10e-3 / 684.6e-6)
    assert d["excess"] == pytest.approx(1.10e-3 - 684.6e-6)
    assert d["bus_traced"] == pytest.approx(1.75 * 64 * MiB / 1.10e-3)
    assert d["bus_base"] == pytest.approx(171.54 * GB)
    assert d["base_share"] == pytest.approx(171.54 / 300)
    close = L.diagnosis(traced=L.DIAGNOSIS["close"])
    assert close["ratio"] == pytest.approx(0.70 / 0.6846) and close["ratio"] < 1.05
    with pytest.raises(ValueError):
        L.diagnosis(bucket=25 * MiB)


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
                 "ncclRedOpCreatePreMulSum", f"<{lang}-p5-lib>", f"<{lang}-p5-lib-mpi>", "pytorch/gloo"):
        assert word in text, word
    assert text.count(":class: dropdown") == 5          # three answers, two notes on the original
    assert "L.flat_region()" in text and "L.diagnosis()" in text


def test_every_source_key_is_used():
    code = (ROOT / "code" / "commbook" / "book" / "ch1" / "libraries.py").read_text(encoding="utf-8")
    for key in L.SOURCES:
        assert f"``{key}``" in code, key
