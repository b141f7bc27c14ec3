"""Measured data lives once, in code/commbook/data/measured/*.json with its source: every file loads, its
points agree with the bus-bandwidth definition, and a missing file or field is named."""
from __future__ import annotations

import json
import math
import re

import pytest

from commbook.measure import points as measured
from commbook.bandwidth import BUSBW_FACTORS

FILES = measured.available()
HTSYM = "htsym_allreduce_8xh100"


def _problems(m: measured.Measurement, rel: float) -> list[str]:
    """Where a point's fields disagree: algbw = bytes / time, busbw = algbw x the
    collective's nccl-tests factor (2(p-1)/p for all-reduce), to relative precision ``rel``."""
    factor = BUSBW_FACTORS[m.collective](m.ranks)
    out = []
    for pt in m.points:
        if pt.time is not None and pt.algbw is not None and not math.isclose(pt.bytes / pt.time, pt.algbw, rel_tol=rel):
            out.append(f"{pt.bytes:g} B: algbw {pt.algbw:g} != bytes / time {pt.bytes / pt.time:g}")
        if pt.algbw is not None and pt.busbw is not None and not math.isclose(pt.algbw * factor, pt.busbw, rel_tol=rel):
            out.append(f"{pt.bytes:g} B: busbw {pt.busbw:g} != algbw x {factor:g} = {pt.algbw * factor:g}")
    return out


def test_the_data_sets_are_there():
    assert HTSYM in FILES


@pytest.mark.parametrize("name", FILES)
def test_every_file_loads_with_its_source(name):
    m = measured.load(name)
    assert m.name == name and m.path.name == f"{name}.json"
    assert m.collective in BUSBW_FACTORS and 1 <= m.ranks <= m.system.gpus
    assert m.points and all(pt.bytes > 0 for pt in m.points)
    assert m.source.title and re.match(r"https?://", m.source.url) and m.source.section
    assert m.units and m.what


@pytest.mark.parametrize("name", FILES)
def test_points_follow_the_busbw_definition(name):
    assert _problems(measured.load(name), rel=5e-3) == []


def test_the_consistency_check_can_fail(tmp_path):
    """A real nccl-tests row (out-of-place all_reduce, 8x H100, the first row of
    ../shared/measured/h100x8_nvswitch_nccl2.29.2_nccl-tests.log) in this schema passes
    within the log's rounding; the same row with a wrong busbw does not."""
    raw = json.loads((measured.DATA_DIR / f"{HTSYM}.json").read_text(encoding="utf-8"))
    raw["points"] = [{"bytes": 33554432, "time_s": 182.87e-6, "algbw_bytes_per_s": 183.49e9,
                      "busbw_bytes_per_s": 321.10e9}]
    (tmp_path / "row.json").write_text(json.dumps(raw), encoding="utf-8")
    assert _problems(measured.load("row", tmp_path), rel=5e-4) == []
    raw["points"][0]["busbw_bytes_per_s"] = 183.49e9 * 2          # a factor of 2 instead of 2(p-1)/p
    (tmp_path / "bad.json").write_text(json.dumps(raw), encoding="utf-8")
    assert len(_problems(measured.load("bad", tmp_path), rel=5e-4)) == 1


def test_htsym_points_are_the_sources_statements():
    m = measured.load(HTSYM)
    assert (m.collective, m.ranks, m.system.gpus, m.system.gpu) == ("all_reduce", 8, 8, "H100")
    assert m.conditions == {"sharp": False} and "scaling-book/gpus" in m.source.url
    tensor, large = m.points
    # the tensor's exact size from its shape; the source rounds it to "58MB"
    rows, cols = map(int, re.fullmatch(r"bf16\[(\d+), (\d+)\]", tensor.label).groups())
    assert tensor.bytes == rows * cols * 2 and tensor.stated_bytes == 58e6
    assert "58MB" in tensor.stated_as and abs(tensor.bytes / tensor.stated_bytes - 1) < 0.02
    assert "150GB/s" in tensor.stated_as and "370GB/s" in large.stated_as and "10GB" in large.stated_as
    # "close to 370GB/s" is ≈82 % of NVLink 4's 450 GB/s (inventory §5.6)
    assert round(large.busbw / 450e9, 2) == 0.82 and all(pt.approximate for pt in m.points)
    assert m.pairs() == tuple((pt.bytes, pt.busbw) for pt in m.points)
    assert m.point(tensor.bytes) is tensor
    with pytest.raises(KeyError):
        m.point(1.0)


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "nope.json"))):
        measured.load("nope", tmp_path)


@pytest.mark.parametrize("drop, field", [
    (lambda r: r["source"].pop("url"), "source.url"),
    (lambda r: r["points"][0].pop("bytes"), "points[0].bytes"),
    (lambda r: r.pop("collective"), "collective"),
    (lambda r: r["system"].pop("gpus"), "system.gpus"),
    (lambda r: r["points"][1].pop("busbw_bytes_per_s"), "points[1].busbw_bytes_per_s"),
])
def test_a_missing_field_names_the_path_and_the_field(tmp_path, drop, field):
    raw = json.loads((measured.DATA_DIR / f"{HTSYM}.json").read_text(encoding="utf-8"))
    drop(raw)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(measured.MeasuredDataError) as err:
        measured.load("broken", tmp_path)
    assert str(path) in str(err.value) and f"'{field}'" in str(err.value)


def test_bad_values_are_refused(tmp_path):
    raw = json.loads((measured.DATA_DIR / f"{HTSYM}.json").read_text(encoding="utf-8"))
    raw["ranks"] = "8"
    (tmp_path / "a.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(measured.MeasuredDataError, match="'ranks' has the wrong type"):
        measured.load("a", tmp_path)
    (tmp_path / "b.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(measured.MeasuredDataError, match="not valid JSON"):
        measured.load("b", tmp_path)
