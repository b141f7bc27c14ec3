"""The page "Measuring collectives" (``chapters/{en,zh}/measure/measuring.md``) and P5 §5.6:
the tables' numbers equal the recorded files (read here with ``json`` and the parsers, not
through the book's module) and fits written out here in numpy; the figures' dots equal the
data; the page's commands are the README's; the structure of the twins.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import executed_glue

from commbook.book import measuring as M
from commbook.book import measuring_cluster as MC
from commbook.book import measuring_figures as MF
from commbook.book import measuring_models as MM
from commbook.book import measuring_p5 as M5
from commbook.hardware import NVLINK4
from commbook.measure import LOG_DIR, parse_busbw_markdown, parse_nccl_tests
from commbook.units import fmt_bytes, fmt_number, fmt_pct, fmt_rate, fmt_ratio, fmt_time

ROOT = Path(__file__).resolve().parents[1]
PAGE = {lang: ROOT / "chapters" / lang / "measure" / "measuring.md" for lang in ("en", "zh")}
GLOO_DIR = {"gloo16": ROOT / "code" / "commbook" / "data" / "measured" / "gloo" / "cpu16", "gloo2": ROOT / "code" / "commbook" / "data" / "measured" / "gloo"}
MiB = 2 ** 20


def _raw(system: str, p: int, op: str) -> dict:
    return json.loads((GLOO_DIR[system] / f"gloo_p{p}_{op}.json").read_text(encoding="utf-8"))


def _gloo(system, p, op, field):
    return np.array([pt[field] for pt in _raw(system, p, op)["points"]], dtype=float)


def _log(name: str):
    text = (LOG_DIR / name).read_text(encoding="utf-8")
    return (parse_busbw_markdown(text),) if name.endswith(".md") else parse_nccl_tests(text)


def _log_curve(system: str, op: str):
    run = next(r for r in _log(M.NVIDIA[system]) if r.collective == op)
    pl = run.placements[0]
    return run, run.sizes(), run.times(pl), run.column("busbw", pl)


def _coeffs(op: str, p: int, n):
    """The ring's closed form as a(p, n)·α + b(p, n)/β, written out."""
    n = np.asarray(n, dtype=float)
    if op == "all_reduce":
        return np.full_like(n, 2 * (p - 1)), 2 * (p - 1) / p * n
    assert op in ("all_gather", "reduce_scatter")
    return np.full_like(n, p - 1), (p - 1) / p * n


def _ring_fit(n, t, op, p):
    a, b = _coeffs(op, p, n)
    w = 1 / t
    (alpha, inv_beta), *_ = np.linalg.lstsq(np.column_stack([a * w, b * w]), t * w, rcond=None)
    return alpha, 1 / inv_beta


def _data(system, op, p):
    """sizes, times, busbw of a sweep, from the files."""
    if system in GLOO_DIR:
        return _gloo(system, p, op, "bytes"), _gloo(system, p, op, "time_s"), _gloo(system, p, op, "busbw_bytes_per_s")
    _, n, t, b = _log_curve(system, op)
    return n, t, b


# ============================================================================ tables
def test_gloo_table_equals_the_files():
    t = M.gloo_table()
    assert len(t) == len(M.GLOO_OPS) * len(M.GLOO_P) == 18
    for row in t.rows:
        op, p = row["collective"], row["p"]
        for system, suffix in (("gloo16", "16"), ("gloo2", "2")):
            n, times, bus = _data(system, op, p)
            mid = int(np.nonzero(np.isclose(n, MiB, rtol=0.01))[0][0])
            assert row[f"small{suffix}_s"] == times[0] and row[f"mid{suffix}_s"] == times[mid]
            assert row[f"bus{suffix}_Bps"] == bus[-1]
        assert row["n_small"] in (1024, 1008) and row["n_big"] >= 64 * MiB - 48


def test_gloo_spread_is_computed_from_the_repeats():
    for system in GLOO_DIR:
        ratios = [max(pt["time_s_repeats"]) / min(pt["time_s_repeats"])
                  for p in M.GLOO_P for op in M.GLOO_OPS for pt in _raw(system, p, op)["points"]]
        s = M.gloo_spread(system)
        assert s.points == len(ratios) == 162
        assert s.median_x == pytest.approx(np.median(ratios)) and s.max_x == pytest.approx(max(ratios))
    assert M.gloo_spread("gloo2").median_x > M.gloo_spread("gloo16").median_x     # the page's caveat


def test_logs_table_equals_the_parsed_logs():
    t = M.logs_table()
    count = 0
    for name in M.NVIDIA.values():
        for run in _log(name):
            count += 1
            system = next(k for k, v in M.NVIDIA.items() if v == name)
            row = t.find(system=system, collective=run.collective)
            bus = run.column("busbw", run.placements[0])
            assert row["count"] == len(run.rows) and row["n_min"] == run.rows[0].size
            assert row["small_Bps"] == bus[0] and row["big_Bps"] == bus[-1] and row["peak_Bps"] == bus.max()
            assert row["wire"] == {"h100": 450e9, "azure": 450e9, "a100": 300e9}[system]
    assert len(t) == count == 7
    assert t.find(system="h100", collective="all_reduce")["peak_Bps"] == 482.27e9          # the log's last row


def test_log_and_gloo_numbers_read_the_files(page_glue):
    g = page_glue
    n, _, bus = _data("h100", "all_reduce", None)
    assert g["lg_h_sizes"] == str(len(n)) and bus.max() == 482.27e9 and g["lg_h_ar_peak_Bps"] == "482 GB/s"   # last row
    assert g["lg_h_ar_peak_frac"] == fmt_pct(bus.max() / 450e9) and g["lg_h_wire_Bps"] == "450 GB/s"
    assert g["lg_a1_peak_Bps"] == fmt_rate(_data("a100", "all_reduce", None)[2].max(), 3) and g["lg_a1_wire_Bps"] == "300 GB/s"
    for op, key in (("all_gather", "lg_h_ag_peak_Bps"), ("reduce_scatter", "lg_h_rs_peak_Bps")):
        assert g[key] == fmt_rate(_data("h100", op, None)[2].max(), 3)
    t16, t2 = (_data(s, "all_reduce", 4)[1][0] for s in ("gloo16", "gloo2"))
    assert (g["gl_ar4_16_s"], g["gl_ar4_2_s"], g["gl_points"]) == (fmt_time(t16, 3), fmt_time(t2, 3), "162")
    assert g["gl_ar4_x"] == fmt_ratio(t2 / t16, 2) and (g["gl_ops"], g["gl_ps"]) == ("6", "2, 3, 4")


def test_fit_table_equals_an_independent_fit():
    t = M.fit_table()
    assert len(t) == len(M.FIT_CASES)
    for row in t.rows:
        n, times, _ = _data(row["system"], row["collective"], row["p"])
        keep = n <= (16 * MiB if row["system"].startswith("gloo") else math.inf)
        alpha, beta = _ring_fit(n[keep], times[keep], row["collective"], row["p"])
        assert row["alpha_s"] == pytest.approx(alpha, rel=1e-9) and row["beta_Bps"] == pytest.approx(beta, rel=1e-9)
        a, b = _coeffs(row["collective"], row["p"], n[keep])
        res = (times[keep] - (a * alpha + b / beta)) / times[keep]
        assert row["rms_frac"] == pytest.approx(np.sqrt(np.mean(res ** 2)), rel=1e-6)
    h = t.find(system="h100", collective="all_reduce")
    assert h["beta_Bps"] > 450e9 and h["rms_frac"] < 0.03                   # above the wire, and a good fit


def test_page_glues_the_independent_fits(page_glue):
    """The fits the prose quotes are the numpy ring fit of the files (α, β, RMS residual)."""
    def rms(system, op, p=8):
        n, t, _ = _data(system, op, p)
        keep = n <= (16 * MiB if system.startswith("gloo") else math.inf)
        a, b = _ring_fit(n[keep], t[keep], op, p)
        pred = np.array([(p - 1) * a + (p - 1) / p * x / b if op != "all_reduce" else 2 * (p - 1) * (a + x / (p * b))
                         for x in n[keep]])
        return a, b, float(np.sqrt(np.mean((pred / t[keep] - 1) ** 2)))
    a, b, r = rms("h100", "all_reduce")
    assert (page_glue["ft_h_alpha_s"], page_glue["ft_h_beta_Bps"]) == (fmt_time(a, 3), fmt_rate(b, 3))
    assert page_glue["ft_h_rms_frac"] == fmt_pct(r) and page_glue["ft_gloo_max_size"] == "16 MiB"
    for op, key in (("all_gather", "ft_ag_rms_frac"), ("reduce_scatter", "ft_rs_rms_frac")):
        assert page_glue[key] == fmt_pct(rms("h100", op)[2])
    g16 = [rms("gloo16", "all_reduce", p)[0] for p in M.GLOO_P]
    assert page_glue["ft_g16_alpha_range"] == f"{fmt_time(min(g16), 3)}–{fmt_time(max(g16), 3)}"


def test_curve_rejects_unknown_input():
    with pytest.raises(ValueError, match="unknown system"):
        M.curve("tpu", "all_reduce")
    with pytest.raises(ValueError, match="p in"):
        M.curve("gloo16", "all_reduce", 8)
    with pytest.raises(ValueError, match="no all_gather run"):
        M.curve("a100", "all_gather")


# ============================================================================ figures
def _lines(ax):
    return {l.get_gid(): l for l in ax.get_lines() if l.get_gid()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_model_vs_measured_figure_plots_the_data(lang, request):
    if lang == "zh":
        request.getfixturevalue("cjk_font")
    fig = MF.fig_model_vs_measured(lang=lang)
    assert len(fig.axes) == len(MF.PANELS) == 6
    for ax, (system, ops, p) in zip(fig.axes, MF.PANELS):
        lines = _lines(ax)
        for op in ops:
            n, times, bus = _data(system, op, p)
            pr = p or 8
            inside = n <= (16 * MiB if p else math.inf)
            assert np.array_equal(lines[f"measured:{op}"].get_xdata(), n[inside])
            assert lines[f"measured:{op}"].get_ydata() == pytest.approx(bus[inside] / 1e9)
            if not inside.all():
                assert lines[f"outside:{op}"].get_ydata() == pytest.approx(bus[~inside] / 1e9)
            alpha, beta = _ring_fit(n[inside], times[inside], op, pr)
            x = np.asarray(lines[f"fit:{op}"].get_xdata())
            a, b = _coeffs(op, pr, x)
            factor = {"all_reduce": 2 * (pr - 1) / pr}.get(op, (pr - 1) / pr)
            assert lines[f"fit:{op}"].get_ydata() == pytest.approx(x / (a * alpha + b / beta) * factor / 1e9, rel=1e-9)
        if system in M.NVIDIA:
            assert lines["wire"].get_ydata()[0] == {"a100": 300}.get(system, 450)


def test_model_vs_measured_figure_draws_given_predictions():
    xs = np.array([1e6, 1e9])
    given = SimpleNamespace(sizes=xs, busbw=np.array([10e9, 200e9]))        # what a Prediction has
    fig = MF.fig_model_vs_measured(predicted={("a100", "all_reduce"): given})
    line = _lines(fig.axes[4])["nccl:all_reduce"]
    assert np.array_equal(line.get_xdata(), xs) and line.get_ydata() == pytest.approx([10, 200])


def test_gloo_noise_figure_plots_medians_and_repeats():
    fig = MF.fig_gloo_noise()
    for ax, system in zip(fig.axes, ("gloo16", "gloo2")):
        lines = _lines(ax)
        ranges = {c.get_gid(): c for c in ax.collections if c.get_gid()}
        for p in M.GLOO_P:
            assert lines[f"median:{system}:p{p}"].get_ydata() == pytest.approx(_gloo(system, p, "all_reduce", "time_s"))
            rep = np.array([pt["time_s_repeats"] for pt in _raw(system, p, "all_reduce")["points"]])
            segs = ranges[f"range:{system}:p{p}"].get_segments()
            assert [s[0][1] for s in segs] == pytest.approx(rep.min(axis=1))
            assert [s[1][1] for s in segs] == pytest.approx(rep.max(axis=1))


# ============================================================================ P5 §5.6
def test_p5_table_is_the_log_beside_the_ring_model():
    t = M5.p5_table()
    run, n, times, bus = _log_curve("h100", "all_reduce")
    assert [r["n"] for r in t.rows] == list(n) and [r["busbw_Bps"] for r in t.rows] == list(bus)
    p, a, b = run.nranks, NVLINK4.alpha, NVLINK4.beta
    for r in t.rows:
        assert r["time_s"] == times[list(n).index(r["n"])]
        assert r["model_Bps"] == pytest.approx(b * r["n"] / (r["n"] + p * a * b), rel=1e-12)   # busbw of the ring
        assert r["alpha_eff_s"] == pytest.approx(r["n"] / p * (1 / r["busbw_Bps"] - 1 / b), rel=1e-12)
        assert (r["alpha_eff_s"] < 0) == (r["busbw_Bps"] > b)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_p5_figure_plots_both_logs_and_the_stated_points(lang, request):
    if lang == "zh":
        request.getfixturevalue("cjk_font")
    lines = _lines(MF.fig_p5_curve(lang=lang).axes[0])
    for system in ("h100", "azure"):
        _, n, _, bus = _log_curve(system, "all_reduce")
        assert np.array_equal(lines[f"measured:{system}"].get_xdata(), n)
        assert lines[f"measured:{system}"].get_ydata() == pytest.approx(bus / 1e9)
    raw = json.loads((ROOT / "code" / "commbook" / "data" / "measured" / f"{M5.BLOG}.json").read_text(encoding="utf-8"))
    assert lines["blog"].get_ydata() == pytest.approx([pt["busbw_bytes_per_s"] / 1e9 for pt in raw["points"]])
    x = np.asarray(lines["model"].get_xdata())
    assert lines["model"].get_ydata() == pytest.approx(450 * x / (x + 8 * 2e-6 * 450e9))
    assert lines["beta"].get_ydata()[0] == 450


# ============================================================================ the misses
def test_misses_are_read_from_the_data(page_glue):
    fl = MM.flat_miss()
    _, n, times, _ = _log_curve("a100", "all_reduce")
    stretch = (n >= MiB) & (n <= 4 * MiB)
    assert (fl.first_size, fl.last_size, fl.growth) == ("1 MiB", "4 MiB", 4)
    assert times[stretch].max() / times[stretch].min() < 1.01
    _, n, _, bus = _log_curve("h100", "all_reduce")
    assert bus.max() == 482.27e9 and page_glue["nv_peak_Bps"] == "482 GB/s"
    assert page_glue["nv_first_size"] == "1 GiB" == fmt_bytes(n[bus > NVLINK4.beta][0], binary=True)
    assert page_glue["nv_over_frac"] == fmt_pct(bus.max() / NVLINK4.beta - 1) and page_glue["nv_ring"] == "1.75"
    for op, key in (("all_gather", "nv_ag_frac"), ("reduce_scatter", "nv_rs_frac")):
        frac = _log_curve("h100", op)[3].max() / NVLINK4.beta
        assert frac < 1 and page_glue[key] == fmt_pct(frac)
    rs = MM.gloo_rs_miss()
    ratios = [(_gloo("gloo16", p, "reduce_scatter", "time_s") / _gloo("gloo16", p, "all_reduce", "time_s"))[:-1]
              for p in M.GLOO_P]
    assert min(rs.ratios) == pytest.approx(min(map(min, ratios))) and max(rs.ratios) == pytest.approx(max(map(max, ratios)))
    assert min(rs.big) > 2 and min(rs.ring_ratios) == pytest.approx(0.5) and max(rs.ring_ratios) == pytest.approx(0.5)
    _, n, t, _ = _log_curve("azure", "all_reduce")
    assert t[0] == pytest.approx(1024 * 1.75 / 0.07e9)             # the Azure table's busbw 0.07 GB/s at 1K
    assert page_glue["sm_t_s"] == fmt_time(t[0], 3) and page_glue["sm_size"] == "1 KiB"
    wire = 1.75 * n[0] / NVLINK4.beta                                # 2(p-1)/p · n/β on NVLink 4
    assert page_glue["sm_wire_s"] == fmt_time(wire, 3) and page_glue["sm_steps"] == "14"
    assert page_glue["sm_step_s"] == fmt_time(t[0] / 14, 3) and page_glue["sm_t_1m_s"] == fmt_time(t[n == MiB][0], 3)
    assert page_glue["sm_bytes_growth"] == "1,024" and page_glue["sm_gloo_s"] == fmt_time(_gloo("gloo16", 2, "all_reduce", "time_s")[0], 3)
    alpha, beta = _ring_fit(n, t, "all_reduce", 8)
    fit = 14 * alpha + 14 / 8 * n[0] / beta
    assert page_glue["sm_fit_s"] == fmt_time(fit, 3) and page_glue["sm_fit_err_frac"] == fmt_pct((fit - t[0]) / t[0])


# ============================================================================ the pages
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_structure(lang):
    text = PAGE[lang].read_text(encoding="utf-8")
    cells = re.findall(r"```\{code-cell\} python\n(:tags: \[[^\]]*\])?", text)
    assert sum(1 for c in cells if not c) == 2                                # two visible cells
    cluster_cell, fit_cell = re.findall(r"```\{code-cell\} python\n(?!:tags)(.*?)\n```", text, re.S)
    assert "parse_nccl_tests" in fit_cell and "fit_run" in fit_cell
    assert "predict_cluster(" in cluster_cell and "nccl_cluster import predict_cluster" in cluster_cell
    nodes = {"en": "## Across nodes", "zh": "## 跨节点"}[lang]
    assert text.index(nodes) < text.index("predict_cluster(") < text.index(f"({lang}-measure-yours)=")
    check = {"en": "Check yourself", "zh": "自测"}[lang]
    assert text.count(f"{{admonition}} {check}") == 3
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    for block in blocks:                                                      # the README's commands
        assert block in readme, block
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    index = (ROOT / "index.md").read_text(encoding="utf-8")
    assert f"chapters/{lang}/measure/measuring\n" in toc and f"(chapters/{lang}/measure/measuring.md)" in index


@pytest.fixture(scope="module")
def page_glue() -> dict:
    """Execute the English page once and collect its glued text values."""
    return executed_glue(PAGE["en"])


def test_page_glues_the_data(page_glue):
    g = page_glue
    assert g["lg_h_ar_peak_Bps"] == "482 GB/s" and g["lg_h_wire_Bps"] == "450 GB/s" and g["lg_a1_wire_Bps"] == "300 GB/s"
    n, t, _ = _data("h100", "all_reduce", None)
    alpha, beta = _ring_fit(n, t, "all_reduce", 8)
    assert g["ft_h_beta_Bps"] == f"{beta / 1e9:.3g} GB/s"
    assert g["fl_first_size"] == "1 MiB" and g["fl_last_size"] == "4 MiB" and g["nv_first_size"] == "1 GiB"
    assert g["rs_ring_x"] == "0.5×"


# ============================================================================ the predictor
def _accuracy_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "benchmarks" / "accuracy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _printed_rows(acc) -> dict:
    """accuracy.py's table as it prints it: (log, collective, band) -> (sizes, median, worst, status)."""
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        acc.main([])
    rows = {}
    for line in out.getvalue().splitlines():
        m = re.match(r"(\S+)\s+(all_reduce|all_gather|reduce_scatter)\s+(>= 1 MiB|< 1 MiB)\s+(\d+)\s+(\S+)\s+(\S+)"
                     r".*?us ?(PASS|MISS)?$", line)
        if m:
            num = lambda x: math.nan if x == "—" else float(x) / 100
            rows[m[1], m[2], m[3]] = (int(m[4]), num(m[5]), num(m[6]), m[7] or "")
    return rows


def test_error_table_is_what_benchmarks_accuracy_prints():
    """Every row accuracy.py prints with sizes in it is a row of the page's table, with the same
    count, medians, worst and PASS/MISS; the functions' values agree exactly, the printed
    text to its 0.1 %."""
    acc = _accuracy_module()
    t = MC.accuracy_table()
    printed = _printed_rows(acc)
    assert {log for log, _, _ in printed} == set(acc.LOGS) | set(MC.NC.LOG_PRESETS)    # one- and multi-node
    want = {k: v for k, v in printed.items() if v[0] > 0}
    got = {(r["log"], r["collective"], r["band"]): r for r in t.rows}
    assert set(got) == set(want) and len(t) == len(want) == 15
    for key, (count, med, worst, st) in want.items():
        row = got[key]
        assert row["count"] == count and row["status"] == st
        assert round(100 * row["model_frac"], 1) == pytest.approx(100 * med) and round(100 * row["worst_frac"], 1) == pytest.approx(100 * worst)
    for name, _, c in acc.comparisons():                                 # the functions themselves
        for band in acc.TARGETS:
            if not c.band(band).any():
                continue
            row = got[(name, c.collective, band)]
            assert row["count"] == int(c.band(band).sum()) and row["worst_frac"] == c.worst(band)
            assert row["status"] == c.status(band)
            for col in ("model", "fit", "nccl"):
                assert row[f"{col}_frac"] == c.median(band, col)
    assert {r["status"] for r in t.rows} == {"PASS", "MISS"}


def test_error_table_rows_render_in_both_languages():
    t = MC.accuracy_table()
    for lang, ok, miss in (("en", "PASS", "MISS"), ("zh", "达标", "未达标")):
        cells = t.cells(lang)
        assert [row[-1] for row in cells] == [ok if r["status"] == "PASS" else miss for r in t.rows]
    zh = " ".join(c for row in t.cells("zh") for c in row[:1])
    assert "机柜" in zh and "rack" not in zh


def test_error_table_medians_from_the_logs():
    """The fit column again, from the files and the numpy fit of this module (the one-node rows of
    the page's table)."""
    rows = [r for r in MC.accuracy_table().rows if r["system"] in M.NVIDIA]
    assert len(rows) == 7
    for row in rows:
        n, times, _ = _data(row["system"], row["collective"], None)
        alpha, beta = _ring_fit(n, times, row["collective"], 8)
        a, b = _coeffs(row["collective"], 8, n)
        err = times / (a * alpha + b / beta) - 1
        band = n >= MiB if row["band"] == ">= 1 MiB" else n < MiB
        if row["overhead_s"] is not None:                    # the size the overhead was read at is left out
            band &= n != n.min()
        assert row["fit_frac"] == pytest.approx(np.median(np.abs(err[band])), rel=1e-6)


def test_predictor_lines_and_figure():
    from commbook.measure import nccl_model as NM

    comps = MM.comparisons()
    lines = MM.predictor_lines()
    for (system, op), pr in lines.items():
        c, x, y = comps[(system, op)], pr.sizes, pr.busbw
        assert x[0] == pytest.approx(c.sizes.min()) and x[-1] == pytest.approx(c.sizes.max())
        assert y == pytest.approx(NM.predict_nccl(MM.NODES[system], op, x, overhead=c.overhead).busbw)
        # at the log's own sizes the predictor is the comparison's prediction
        assert NM.predict_nccl(MM.NODES[system], op, c.sizes, overhead=c.overhead).busbw == pytest.approx(c.prediction.busbw)
    fig = MF.fig_model_vs_measured(predicted=lines)
    for ax, (system, ops, _) in zip(fig.axes, MF.PANELS):
        got = _lines(ax)
        for op in ops:
            if (system, op) in lines:
                assert got[f"nccl:{op}"].get_ydata() == pytest.approx(lines[(system, op)].busbw / 1e9)
            else:
                assert f"nccl:{op}" not in got                           # gloo: no NCCL predictor


def test_misses_of_the_predictor(page_glue):
    fl, pred = MM.flat_miss(), MM.comparisons()[("h100", "all_reduce")].prediction
    assert fl.picks.split(", ")[0].endswith("/LL") and min(fl.pred_err) > 0
    assert page_glue["nv_pred_pick"] == "nvls/Simple" == f"{pred.algo[-1]}/{pred.proto[-1]}"
    assert pred.busbw[-1] > NVLINK4.beta and page_glue["nv_pred_top_Bps"] == fmt_rate(pred.busbw[-1], 3)
    assert page_glue["nv_pred_ag_pick"] == "ring/Simple"
    az = MM.comparisons()[("azure", "all_reduce")]
    assert az.median("< 1 MiB") < az.median("< 1 MiB", "fit")


def test_accuracy_glue_is_the_comparisons(page_glue):
    """The accuracy paragraph's numbers: the targets, the medians of |error| of NCCL's model, of
    the ring fit and of NCCL's cost table alone by band (the library's comparisons), the Azure
    overhead, the A100 line against NCCL's 8.4 + 14 x 3.4 us ring Simple latency."""
    from commbook.measure.nccl_model import TARGETS, WORST_TARGET

    g = page_glue
    assert (g["e_tgt_big_frac"], g["e_tgt_small_frac"]) == (fmt_pct(TARGETS[">= 1 MiB"]), fmt_pct(TARGETS["< 1 MiB"]))
    assert g["e_tgt_worst_frac"] == fmt_pct(WORST_TARGET) and g["e_release"] == MM.NCCL_RELEASE == "2.29.2"
    comps = MM.comparisons()
    h = [comps[("h100", op)] for op in ("all_reduce", "all_gather", "reduce_scatter")]
    for key, of in (("e_h_pred_range", "model"), ("e_h_fit_range", "fit")):
        med = [c.median(">= 1 MiB", of) for c in h]
        assert g[key] == f"{fmt_pct(min(med))}–{fmt_pct(max(med))}"
    for key, system in (("az", "azure"), ("a1", "a100")):
        c = comps[(system, "all_reduce")]
        for b, band in (("b", ">= 1 MiB"), ("s", "< 1 MiB")):
            assert g[f"e_{key}_{b}_pred_frac"] == fmt_pct(c.median(band, "model"))
            assert g[f"e_{key}_{b}_fit_frac"] == fmt_pct(c.median(band, "fit"))
    az = comps[("azure", "all_reduce")]
    assert g["e_az_s_nccl_frac"] == fmt_pct(az.median("< 1 MiB", "nccl")) and g["e_az_over_s"] == fmt_time(az.overhead, 3)
    assert (g["e_a1_lo_size"], g["e_a1_hi_size"]) == ("16 MiB", "256 MiB")
    _, n, t, _ = _log_curve("a100", "all_reduce")
    band = (n >= 16 * MiB) & (n <= 256 * MiB)
    w = 1 / t[band]                                                  # t = α + n/β, relative least squares
    (alpha, _), *_ = np.linalg.lstsq(np.column_stack([w, n[band] * w]), np.ones(band.sum()), rcond=None)
    lat = (8.4 + 14 * 3.4) * 1e-6
    assert g["e_a1_lat_s"] == fmt_time(lat, 2) and g["e_a1_alpha_s"] == fmt_time(alpha, 3)
    assert g["e_a1_over_lat"] == fmt_number(alpha / lat, 2)


def test_simple_miss_is_the_logs_line_against_nccls_latency():
    # an unweighted least-squares line through the log's 16-256 MiB rows (independent of fit.py's relative
    # weighting: within a few us) against NCCL's 8.4 + 14 x 3.4 us ring Simple all-reduce latency
    # (tuning.cc baseLat/hwLat; the same in every release that tunes for Ampere, PROVENANCE.md)
    s = MM.simple_miss()
    _, n, t, _ = _log_curve("a100", "all_reduce")
    band = (n >= 16 * MiB) & (n <= 256 * MiB)
    slope, intercept = np.polyfit(n[band], t[band], 1)
    assert s.alpha_s == pytest.approx(intercept, abs=5e-6) and s.beta_Bps == pytest.approx(1 / slope, rel=0.01)
    assert s.nccl_lat_s == pytest.approx((8.4 + 14 * 3.4) * 1e-6) and s.over_lat_x > 2
    assert len(s.pred_err) == band.sum() and min(s.pred_err) > 0.15


# ============================================================================ across nodes
MULTI = {"tcpxo": "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log",
         "a100_sharp": "multinode/a100x128_coreweave_ib_sharp_allreduce.log",
         "h100_sharp": "multinode/h100x64_coreweave_ib_sharp_allreduce.log",
         "gb1": "multinode/gb200x72_coreweave_nvl72_1rack_nccl2.26.2_allreduce.log",
         "gb2": "multinode/gb200x144_coreweave_nvl72_2racks_nccl2.26.2_allreduce.log",
         "gb20": "multinode/gb200x1440_coreweave_nvl72_20racks_nccl2.26.2_allreduce.log"}
COLUMN_PX = 690


def _multi(system):
    """The log's run (load_log: the stated collective and rank count), its preset and comparison."""
    from commbook.measure import load_log, nccl_cluster as NC

    run, = load_log(MULTI[system])
    cluster = NC.PRESETS[NC.LOG_PRESETS[MULTI[system]]]
    return run, cluster, NC.compare(run, cluster)


def test_multinode_logs_are_the_presets_logs():
    from commbook.measure import nccl_cluster as NC

    assert MC.LOGS == MULTI and set(MULTI.values()) == set(NC.LOG_PRESETS)
    for s in MULTI:
        run, cluster, _ = _multi(s)
        assert MC.CLUSTERS[s] == cluster and run.nranks == cluster.nranks
        assert str(cluster.nodes) in MC.cluster_name(s, "en") and str(cluster.nodes) in MC.cluster_name(s, "zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cluster_figure_plots_the_logs_the_model_and_its_picks(lang, request):
    from commbook.measure import nccl_cluster as NC

    if lang == "zh":
        request.getfixturevalue("cjk_font")
    fig = MC.fig_cluster(lang=lang)
    assert len(fig.axes) == len(MULTI) == 6
    for ax, s in zip(fig.axes, MULTI):
        run, cluster, c = _multi(s)
        lines = _lines(ax)
        assert np.array_equal(lines["measured"].get_xdata(), run.sizes())
        n, t, bus = run.sizes(), run.times(), run.column("busbw")
        y = lines["measured"].get_ydata()
        assert y == pytest.approx(2 * (run.nranks - 1) / run.nranks * n / t / 1e9, rel=1e-12)   # busbw from the times
        assert y[bus > 1e9] == pytest.approx(bus[bus > 1e9] / 1e9, rel=0.01)                    # = the printed column
        x = np.asarray(lines["model"].get_xdata())
        assert x[0] == pytest.approx(run.sizes().min()) and x[-1] == pytest.approx(run.sizes().max())
        pred = NC.predict_nccl(cluster, "all_reduce", x, overhead=c.overhead)
        assert lines["model"].get_ydata() == pytest.approx(pred.busbw / 1e9)
        # the band: one span per run of equal picks, in order, covering the whole line
        spans = [p for p in ax.patches if (p.get_gid() or "").startswith("pick:")]
        keys = [p.get_gid().split(":")[1] for p in spans]
        runs = [k for i, k in enumerate(f"{a}/{b}" for a, b in zip(pred.algo, pred.proto))
                if i == 0 or (pred.algo[i - 1], pred.proto[i - 1]) != (pred.algo[i], pred.proto[i])]
        assert keys == runs
        xs = [p.get_x() for p in spans] + [spans[-1].get_x() + spans[-1].get_width()]
        assert xs[0] == pytest.approx(x[0]) and xs[-1] == pytest.approx(x[-1]) and np.all(np.diff(xs) > 0)
    assert set(keys) == {"nvls/Simple"}                                   # the 20-rack log: NVLS only
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(legend) == 3 + len({p.get_gid().split(":")[1] for ax in fig.axes for p in ax.patches if p.get_gid()})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cluster_figure_is_readable_at_column_width(lang, request):
    from matplotlib.text import Text

    if lang == "zh":
        request.getfixturevalue("cjk_font")
    fig = MC.fig_cluster(lang=lang)
    width_in = fig.get_figwidth()
    assert width_in == MC.FIG_WIDTH_IN
    px = lambda t: t.get_fontsize() / 72 * COLUMN_PX / width_in           # px of a text shown at 690 px
    texts = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
    assert texts and min(px(t) for t in texts) >= 9, min(texts, key=px).get_text()
    assert len({round(ax.get_position().x0, 3) for ax in fig.axes}) == 2          # two columns at most
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert any(cjk.search(t.get_text()) for t in texts) == (lang == "zh")
    if lang == "zh":
        labels = [t.get_text() for t in texts if re.search(r"[a-z]{3,}", t.get_text())]
        allowed = ("GB/s", "NCCL", "NVLS", "NVL72", "InfiniBand", "SHARP", "TCPXO", "Mega", "CollNet", "Simple")
        assert all(any(a in x for a in allowed) for x in labels), labels


def test_cluster_lines_are_the_logs_times():
    """The lines the prose quotes: fit_point_to_point over the log's own times, and over the model's."""
    from commbook.measure.fitting import fit_point_to_point

    lines = MC.cluster_lines()
    for s, bands in MC.LINE_BANDS.items():
        run, _, c = _multi(s)
        n, t = run.sizes(), run.times()
        for (lo, hi), (meas, model) in zip(bands, lines[s]):
            keep = (n >= lo) & (n <= hi)
            f = fit_point_to_point(n[keep], t[keep])
            assert meas.alpha == pytest.approx(f.alpha, rel=1e-6) and meas.beta == pytest.approx(f.beta, rel=1e-6)
            g = fit_point_to_point(n[keep], c.prediction.time[keep])
            assert model.alpha == pytest.approx(g.alpha, rel=1e-9) and model.beta == pytest.approx(g.beta, rel=1e-9)
    (t1, _), (t2, _) = lines["tcpxo"]
    assert (t1.sizes.min(), t1.sizes.max(), t2.sizes.min()) == (MiB, 16 * MiB, 32 * MiB) and t1.rms_rel < 0.02


@pytest.fixture(scope="module")
def page_glue_zh() -> dict:
    return executed_glue(PAGE["zh"])


def test_across_nodes_glue_is_what_the_functions_return(page_glue, page_glue_zh):
    from commbook.units import fmt_pct, fmt_rate
    from commbook.measure import nccl_cluster as NC
    from commbook.units import fmt_bytes, fmt_time

    g = page_glue
    keys = [k for k in g if k.startswith("x_")]
    assert len(keys) >= 30 and {k: g[k] for k in keys} == {k: page_glue_zh[k] for k in keys}
    med = lambda c, band: float(np.median(np.abs(c.errors[c.band(band)])))
    wst = lambda c, band: float(np.max(np.abs(c.errors[c.band(band)])))
    _, h, ch = _multi("h100_sharp")
    _, _, ct = _multi("tcpxo")
    _, _, ca = _multi("a100_sharp")
    assert g["x_h_med_frac"] == fmt_pct(med(ch, ">= 1 MiB")) and g["x_h_worst_frac"] == fmt_pct(wst(ch, ">= 1 MiB"))
    assert g["x_t_s_med_frac"] == fmt_pct(med(ct, "< 1 MiB")) and g["x_a_s_med_frac"] == fmt_pct(med(ca, "< 1 MiB"))
    assert g["x_t_worst_frac"] == fmt_pct(wst(ct, ">= 1 MiB")) and g["x_a_med_frac"] == fmt_pct(med(ca, ">= 1 MiB"))
    assert g["x_t_over_s"] == fmt_time(ct.overhead, 3) and g["x_a_over_s"] == fmt_time(ca.overhead, 3)
    nv = NC.graphs(h)["nvls"]
    assert g["x_h_nvls_bw_Bps"] == fmt_rate(nv.n_channels * nv.bw_inter * 1e9, 3) == "384 GB/s"
    assert g["x_h_top_Bps"] == fmt_rate(ch.measured[-1], 3) and g["x_a_pred_top_Bps"] == fmt_rate(ca.prediction.busbw[-1], 3)
    assert (g["x_a1_ranks"], g["x_h_ranks"], g["x_gb2_ranks"]) == ("32", "96", "128")      # PROVENANCE.md
    lines = MC.cluster_lines()
    (t1, _), (t2, _) = lines["tcpxo"]
    assert g["x_t1_alpha_s"] == fmt_time(t1.alpha, 3) and g["x_t1_beta_Bps"] == fmt_rate(t1.beta, 3)
    assert g["x_t2_alpha_s"] == fmt_time(t2.alpha, 3) and g["x_t2_beta_Bps"] == fmt_rate(t2.beta, 3)
    (g1, g1m), = lines["gb1"]
    assert g["x_g1_alpha_s"] == fmt_time(g1.alpha, 3) and g["x_g1m_beta_Bps"] == fmt_rate(g1m.beta, 3)
    n = 8 * 2 ** 30                                           # the largest size all three GB200 logs have
    (_, _, c1), (_, _, c20) = _multi("gb1"), _multi("gb20")
    at = lambda c, y: float(y[list(c.sizes).index(n)])
    assert g["x_g_n_size"] == fmt_bytes(n, binary=True) and g["x_g_model_Bps"] == fmt_rate(at(c1, c1.prediction.busbw), 3)
    assert g["x_g1_top_Bps"] == fmt_rate(at(c1, c1.measured), 3) and g["x_g20_top_Bps"] == fmt_rate(at(c20, c20.measured), 3)
    assert g["x_g_release"] == "2.26.2" and g["e_logs"] == "9"


def test_across_nodes_paragraphs_glue_at_most_six_numbers():
    for lang, head in (("en", "(en-measure-nodes)="), ("zh", "(zh-measure-nodes)=")):
        text = PAGE[lang].read_text(encoding="utf-8")
        section = text[text.index(head):text.index(f"({lang}-measure-yours)=")]
        section = re.sub(r"```\{code-cell\}.*?\n```\n", "", section, flags=re.S)
        for para in section.split("\n\n"):
            assert para.count("{glue:text}") <= 6, para[:80]


# ============================================================================ what the prose says
# (these were asserts in the page's cells; each is checked here on the files, the numpy fit of
# this module, or the library's own comparison, not through the book's numbers module)
def test_prose_all_gather_check_the_fit_predicts_less_than_the_log(page_glue):
    n, t, _ = _data("h100", "all_gather", None)
    alpha, beta = _ring_fit(n, t, "all_gather", 8)
    k = int(np.nonzero(n == 256 * MiB)[0][0])
    pred = 7 * alpha + 7 / 8 * n[k] / beta
    assert pred < t[k]                                   # "the fit is ... less than the measurement"
    assert 7 * alpha < 0.1 * pred                        # "the bandwidth term is almost all of it"
    assert page_glue["qag_pred_s"] == fmt_time(pred, 4) and page_glue["qag_meas_s"] == fmt_time(t[k], 4)
    assert page_glue["qag_size"] == "256 MiB" and page_glue["qag_err_frac"] == fmt_pct(abs(pred / t[k] - 1))


def test_prose_model_vs_measurement_orders():
    t = MC.accuracy_table()
    row = lambda s, band, op="all_reduce": t.find(system=s, collective=op, band=band)
    assert max(row("h100", ">= 1 MiB", op)["model_frac"] for op in ("all_reduce", "all_gather", "reduce_scatter")) < 0.05
    az = row("azure", "< 1 MiB")
    assert az["model_frac"] < az["fit_frac"] < az["nccl_frac"]          # the predictor earns its place below 1 MiB
    for band in (">= 1 MiB", "< 1 MiB"):                 # the A100 log: the predictor misses, worse than the fit
        assert row("a100", band)["model_frac"] > row("a100", band)["fit_frac"]
    _, n, times, _ = _log_curve("a100", "all_reduce")
    keep = (n >= 16 * MiB) & (n <= 256 * MiB)
    slope, intercept = np.polyfit(n[keep], times[keep], 1)
    assert np.sqrt(np.mean(((intercept + slope * n[keep]) / times[keep] - 1) ** 2)) < 0.03    # "lie on a line"


def test_prose_misses():
    _, n, t, bus = _log_curve("a100", "all_reduce")
    flat = (n >= MiB) & (n <= 4 * MiB)
    after = int(np.nonzero(n == 4 * MiB)[0][0]) + 1
    assert t[flat].max() / t[flat].min() - 1 < 0.01 and t[after] > 1.2 * t[flat].max()      # a step
    for op in ("all_gather", "reduce_scatter"):          # they stay below the wire
        _, _, _, b = _log_curve("h100", op)
        assert b.max() < NVLINK4.beta
    n, t, _ = _data("h100", "all_reduce", None)
    assert _ring_fit(n, t, "all_reduce", 8)[1] > NVLINK4.beta     # the ring fit answers with β above the wire
    _, n, t, _ = _log_curve("azure", "all_reduce")
    upto = n <= MiB
    alpha, beta = _ring_fit(n, t, "all_reduce", 8)
    assert 14 * alpha + 14 / 8 * n[0] / beta > t[0]      # the whole-log fit puts too much at the smallest size
    assert t[upto][-1] / t[0] < 2                        # the time grows less than twice up to 1 MiB


def test_prose_gloo_reduce_scatter_is_an_all_reduce(page_glue):
    for p in M.GLOO_P:
        ar, rs = (_gloo("gloo16", p, op, "time_s") for op in ("all_reduce", "reduce_scatter"))
        ag = _gloo("gloo16", p, "all_gather", "time_s")
        n = _gloo("gloo16", p, "all_reduce", "bytes")
        keep = n <= 16 * MiB
        assert (rs[~keep] / ar[~keep]).min() > 2 and ((rs + ag) / ar)[keep].min() > 1
        a_ar, b_ar = _ring_fit(n[keep], ar[keep], "all_reduce", p)
        n_rs = _gloo("gloo16", p, "reduce_scatter", "bytes")
        keep_rs = n_rs <= 16 * MiB
        a_rs, b_rs = _ring_fit(n_rs[keep_rs], rs[keep_rs], "reduce_scatter", p)
        assert a_rs > a_ar and b_rs < b_ar               # numbers that describe no link
    n = _gloo("gloo16", 4, "all_reduce", "bytes")
    k = int(np.nonzero(n == 16 * MiB)[0][0])
    ar, rs = (_gloo("gloo16", 4, op, "time_s") for op in ("all_reduce", "reduce_scatter"))
    alpha, beta = _ring_fit(n[n <= 16 * MiB], ar[n <= 16 * MiB], "all_reduce", 4)
    ring = 3 * alpha + 3 / 4 * n[k] / beta
    assert rs[k] > ar[k] > ring                          # "Check yourself": slower than its own all-reduce
    assert page_glue["qrs_ring_s"] == fmt_time(ring, 3) and page_glue["qrs_p"] == "4"
    assert (page_glue["qrs_meas_s"], page_glue["qrs_ar_s"]) == (fmt_time(rs[k], 3), fmt_time(ar[k], 3))


def test_prose_across_nodes():
    _, h, ch = _multi("h100_sharp")
    _, tc, ct = _multi("tcpxo")
    _, ac, ca = _multi("a100_sharp")
    assert MC.CLUSTERS["gb1"].nodes == 1                 # one NVL72 rack is one NCCL node
    assert ch.status(">= 1 MiB") == ct.status("< 1 MiB") == ca.status("< 1 MiB") == "PASS"
    assert ct.status(">= 1 MiB") == "MISS"
    pick = lambda c: [f"{a}/{b}" for a, b in zip(c.prediction.algo, c.prediction.proto)]
    assert set(pick(ch)) == {"nvls/Simple"}              # NVLS across nodes at every size
    for c in (ct, ca):                                   # the pick changes more than once below 1 MiB
        small = [p for p, n in zip(pick(c), c.sizes) if n < MiB]
        assert len({*small}) >= 2
    stretch = [p for p, n in zip(pick(ct), ct.sizes) if MiB <= n <= 16 * MiB]
    assert set(stretch) == {"tree/LL128"}
    big = ct.band(">= 1 MiB")
    assert ct.sizes[big][np.argmax(np.abs(ct.errors[big]))] == 16 * MiB    # "misses the last of them"
    assert pick(ca)[-1] == "collnet_chain/Simple" and ca.prediction.busbw[-1] > 1.8 * ca.measured[-1]
    gb = {s: _multi(s)[2] for s in ("gb1", "gb2", "gb20")}
    assert all(c.sizes.min() == 2 ** 29 and c.status(">= 1 MiB") == "MISS" for c in gb.values())
    at = {s: int(np.nonzero(c.sizes == 8 * 2 ** 30)[0][0]) for s, c in gb.items()}
    model = [gb[s].prediction.busbw[at[s]] for s in gb]
    assert max(model) / min(model) < 1.01                # nothing in the model grows with the fabric
    assert gb["gb20"].measured[at["gb20"]] < 0.5 * gb["gb1"].measured[at["gb1"]]
    from commbook.measure.fitting import fit_point_to_point
    run, _, c = _multi("gb1")
    f, fm = fit_point_to_point(run.sizes(), run.times()), fit_point_to_point(c.sizes, c.prediction.time)
    assert abs(f.beta / fm.beta - 1) < 0.1 and f.alpha > 10 * fm.alpha                  # close slope, far intercept
