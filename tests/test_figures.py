"""Figures of lecture P5 (commbook.book.p5.figures): each builds in both languages, renders
without missing glyphs, and draws the numbers commbook computes."""
from __future__ import annotations

import logging
import re
import warnings

import numpy as np
import pytest
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.text import Text

from commbook import double_tree
from commbook.book import plots
from commbook.book.p5 import figures as figures_p5
from commbook.book.p5 import steps
from commbook.book.names import display_name
from commbook.collectives import t_allreduce_hierarchical, t_formula
from commbook.collectives import all_reduce
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import Switch, TwoLevel
from commbook.units import KB, MB

GLYPH_PROBLEM = re.compile(r"missing from font|does not have a glyph|findfont: Font family", re.I)
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(params=["en", "zh"])
def lang(request):
    """Both languages, always: zh needs a CJK font, and without one the test is skipped
    saying so (the cjk_font fixture; with CI=true it fails) instead of silently dropped."""
    if request.param == "zh":
        request.getfixturevalue("cjk_font")
    return request.param


class _Figures(dict):
    def __missing__(self, key):
        name, lang = key
        self[key] = fig = getattr(figures_p5, name)(lang=lang)
        return fig


@pytest.fixture(scope="module")
def figs():
    """Every figure in every language asked for, built once (the slow part is the simulation)."""
    return _Figures()


def _texts(fig, gid_prefix: str = "") -> dict[str, str]:
    return {t.get_gid(): t.get_text() for t in fig.findobj(Text)
            if t.get_gid() and t.get_gid().startswith(gid_prefix)}


def _line(fig, gid: str, ax: int = 0):
    (line,) = [ln for ln in fig.axes[ax].get_lines() if ln.get_gid() == gid]
    return line.get_data()


@pytest.mark.parametrize("name", figures_p5.__all__)
def test_renders_without_missing_glyphs(figs, name, lang, caplog):
    caplog.set_level(logging.WARNING, logger="matplotlib")
    fig = figs[name, lang]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = plots.figure_png(fig, dpi=60)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    problems = [str(w.message) for w in caught if GLYPH_PROBLEM.search(str(w.message))]
    problems += [r.getMessage() for r in caplog.records if GLYPH_PROBLEM.search(r.getMessage())]
    assert not problems, problems[:3]
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text()]
    assert any(CJK.search(t) for t in texts) == (lang == "zh")
    assert not [t for t in texts if "$" in t], "no mathtext: it has no CJK glyphs"


def test_labels_complete_in_both_languages():
    assert plots.LABELS["zh"].keys() == plots.LABELS["en"].keys()


def test_topology_titles_carry_metrics(figs):
    titles = [ax.get_title() for ax in figs["fig_topologies", "en"].axes]
    assert "ports 1 · diameter 2 · bisection 360 GB/s" in titles[0]   # switch, 8 x 45 GB/s
    assert "ports 2 · diameter 8 · bisection 90 GB/s" in titles[1]    # ring: 2 links cut
    assert "ports 4 · diameter 4 · bisection 360 GB/s" in titles[2]   # 4x4 torus
    assert "ports 2 · diameter 4 · bisection 400 GB/s" in titles[3]   # 8 NICs x 50 GB/s


def test_collectives_after_grids_are_the_lecture_values(figs):
    t = _texts(figs["fig_collectives", "en"])
    row = lambda name, d, k: [float(t[f"{name}:{d}:{j}"]) for j in range(k)]
    assert row("all_reduce", 3, 4) == [60, 64, 68, 72]
    assert row("reduce", 0, 4) == [60, 64, 68, 72] and "reduce:1:0" not in t
    assert [row("reduce_scatter", d, 1) for d in range(4)] == [[60], [64], [68], [72]]
    assert row("all_to_all", 2, 4) == [2, 12, 22, 32]
    assert row("all_gather", 1, 16)[4:8] == [10, 11, 12, 13]
    assert row("broadcast", 3, 4) == [0, 1, 2, 3]


def test_ring_trace_states(figs):
    t = _texts(figs["fig_ring_trace", "en"])
    state = lambda k, g: [int(t[f"state{k}:{g}:{c}"]) for c in range(4)]
    assert [state(0, g) for g in range(4)] == [list(x) for x in figures_p5.EXAMPLE_1_1]
    assert state(1, 0) == [1, 5, 9, 7]               # the chapter's trace, round 1
    assert all(state(6, g) == [10, 26, 18, 34] for g in range(4))
    assert not any(f"state7:0:{c}" in t for c in range(4)), "7 states: initial + 6 rounds"


def test_allreduce_vs_size_lines_are_t_formula(figs):
    fig = figs["fig_allreduce_vs_size", "en"]
    for algo in figures_p5.ALLREDUCE_LINES:
        n, t = _line(fig, f"t:{algo}")
        i = len(n) // 2
        assert t[i] == pytest.approx(t_formula(algo, 8, n[i], NVLINK4.alpha, NVLINK4.beta), rel=1e-12)
    (nx,), (tx,) = _line(fig, "xover:rd_ring")
    assert nx == pytest.approx(7.92e6) and tx == pytest.approx(t_formula("rd", 8, nx, 2e-6, 450e9))


def test_allreduce_vs_size_draws_the_pipelined_double_tree(figs):
    fig = figs["fig_allreduce_vs_size", "en"]
    n, t = _line(fig, "t:double_tree")
    for i in (0, len(n) // 3, -1):           # NCCL's pipelined tree at its best chunk count
        best = double_tree.double_tree_optimum(8, n[i], NVLINK4.alpha, NVLINK4.beta)[1]
        assert t[i] == pytest.approx(best, rel=1e-12)
    assert t[-1] < t_formula("double_binomial", 8, n[-1], NVLINK4.alpha, NVLINK4.beta)


@pytest.mark.parametrize("name, algos", [("fig_allreduce_vs_size", figures_p5.ALLREDUCE_LINES),
                                         ("fig_allreduce_vs_p", figures_p5.SCALING_LINES)])
def test_legends_are_registry_names(figs, name, algos, lang):
    """The lines are named by the registry: in the legend, or (against message size, seven
    lines) at each line's end, in the line's own colour."""
    for ax in figs[name, lang].axes:
        want = [display_name("all_reduce", a, lang) for a in algos]
        if ax.get_legend() is not None:
            assert [t.get_text() for t in ax.get_legend().get_texts()] == want
            continue
        ends = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("end:")}
        assert sorted(t.get_text() for t in ends.values()) == sorted(want)
        for a in algos:
            line = next(ln for ln in ax.lines if ln.get_gid() == f"t:{a}")
            end = ends[f"end:t:{a}"]
            assert end.get_text() == display_name("all_reduce", a, lang)
            assert end.get_color() == line.get_color()


def test_allreduce_vs_p_panels(figs):
    fig = figs["fig_allreduce_vs_p", "en"]
    for ax, n in ((0, 64 * KB), (1, 256 * MB)):
        for algo in figures_p5.SCALING_LINES:
            p, t = _line(fig, f"t:{algo}", ax)
            assert list(p) == [2 ** k for k in range(1, 10)]
            assert t[-1] == pytest.approx(t_formula(algo, 512, n, IB_NDR.alpha, IB_NDR.beta), rel=1e-12)
    # pipelining: at 256 MB on 512 devices the two unpipelined trees pay log2 p buffers
    (_, pipe), (_, flat) = _line(fig, "t:double_tree", 1), _line(fig, "t:double_binomial", 1)
    assert flat[-1] > 3 * pipe[-1]


def test_broadcast_pipeline(figs):
    fig = figs["fig_broadcast_pipeline", "en"]
    k, t = _line(fig, "t:chain")
    assert k[0] == 1 and k[-1] == 128
    (ks,), (ts,) = _line(fig, "opt")
    assert round(ks) == 33 and round(ts * 1e6) == 249      # exercise 9
    assert t.min() >= ts and _line(fig, "bound")[1][0] == pytest.approx(8 * MB / ICI_V5E.beta)


def test_ring_mapping_ratios(figs):
    t = _texts(figs["fig_ring_mapping", "en"], "ratio:")
    ratios = {k[len("ratio:"):]: float(v.rsplit("=", 1)[1]) for k, v in t.items()}
    assert ratios["snake"] == 1.00 and ratios["row_major"] == 1.01
    assert 1.9 < ratios["random"] < 2.1


def test_hierarchical_speedup_matches_closed_form(figs):
    fig = figs["fig_hierarchical_speedup", "en"]
    N, s = _line(fig, f"speedup:{256 * MB:g}")
    assert list(N) == [1, 2, 4, 8, 16, 32, 64] and s[0] == pytest.approx(1.0)
    assert s[1] == pytest.approx(5.83, abs=0.005)          # lecture demo 04-3
    n, nodes = 256 * MB, 16
    hier = t_allreduce_hierarchical(nodes, 8, n, NVLINK4, IB_NDR)
    flat = t_formula("ring", nodes * 8, n, IB_NDR.alpha, IB_NDR.beta)
    assert s[4] == pytest.approx(flat / hier, rel=1e-12)
    sim = all_reduce(VirtualCluster(TwoLevel(nodes, 8, NVLINK4, IB_NDR)), nbytes=n, algorithm="hierarchical")
    assert sim.time == pytest.approx(hier, rel=1e-12)
    # dashed: over NCCL's ring, one channel per NIC with PXN (2(p−1) steps; every GPU
    # sends n/p over NVLink and every NIC one channel's n/(Gp) in each)
    N, r = _line(fig, f"nccl:{256 * MB:g}")
    assert list(N) == [1, 2, 4, 8, 16, 32, 64] and r[0] == pytest.approx(1.0)
    p, G = nodes * 8, 8
    nccl = 2 * (p - 1) * (IB_NDR.alpha + max(n / (p * NVLINK4.beta), n / (G * p * IB_NDR.beta)))
    assert r[4] == pytest.approx(nccl / hier, rel=1e-12)
    assert r[1] < 1 < r[4]          # NCCL's ring wins at 2 nodes, the hierarchy at 16 (256 MB)
    _, r_small = _line(fig, f"nccl:{64 * KB:g}")
    assert all(v > 3 for v in r_small[1:])                 # 64 KB: the hierarchy wins everywhere


def test_bad_arguments():
    with pytest.raises(ValueError, match="lang"):
        figures_p5.fig_topologies(lang="fr")
    with pytest.raises(ValueError, match="square"):
        figures_p5.fig_topologies(p=12)


def test_tp_decode_share_anchors(figs):
    fig = figs[("fig_tp_decode_share", "en")]
    rd2 = _line(fig, "share:rd:2e-06")[1]
    rd20 = _line(fig, "share:rd:2e-05")[1]
    assert round(rd2[0] * 100) == 16 and round(rd20[0] * 100) == 65   # lecture §7.1 at B = 1


def test_kv_transfer_lines(figs):
    from commbook import llm
    fig = figs[("fig_kv_transfer", "en")]
    one, eight = _line(fig, "kv:1")[1], _line(fig, "kv:8")[1]
    assert one[3] / eight[3] == pytest.approx(8, abs=0.05)
    assert _line(fig, "prefill")[1][4] == pytest.approx(llm.prefill_compute(llm.LLAMA31_70B, 8192))


# ---------------------------------------------------------------------------- step diagrams
def _messages(fig) -> set[tuple[int, ...]]:
    """(panel, src, dst, offset, count) of every arrow drawn."""
    return {tuple(int(x) for x in a.get_gid().split(":")[1:]) for a in fig.findobj(FancyArrowPatch)
            if (a.get_gid() or "").startswith("msg:")}


def _trace_messages(algorithm: str, data) -> set[tuple[int, ...]]:
    """The same tuples, from an independent run of the simulator with trace=True."""
    arrays = [np.asarray(x, dtype=np.int64) for x in data]
    res = all_reduce(VirtualCluster(Switch(len(arrays), NVLINK4)), arrays, algorithm=algorithm, trace=True)
    return {(k, int(s), int(d), int(o), int(c)) for k, st in enumerate(res.trace, start=1)
            for s, d, o, c in zip(st.round.src, st.round.dst, st.round.soff, st.round.count)}


RANDOM_8 = np.random.default_rng(7).integers(0, 10, size=(8, 8)).tolist()


@pytest.mark.parametrize("data", [figures_p5.EXAMPLE_1_1, RANDOM_8], ids=["p4", "p8"])
@pytest.mark.parametrize("algorithm", ["rd", "rabenseifner", "tree", "ring"])
def test_step_diagram_is_the_trace(algorithm, data):
    fig = figures_p5.fig_allreduce_steps("en", algorithm, data)
    drawn = _messages(fig)
    assert drawn == _trace_messages(algorithm, data)
    outlined = {tuple(int(x) for x in r.get_gid().split(":")[1:]) for r in fig.findobj(Rectangle)
                if (r.get_gid() or "").startswith("sent:")}
    assert outlined == {(k, s, o, c) for k, s, d, o, c in drawn}
    t = _texts(fig, "state")
    last = max(int(g.split(":")[0][len("state"):]) for g in t)
    assert last == max(k for k, *_ in drawn)                      # one panel per round
    p, w = np.shape(data)
    total = np.sum(np.asarray(data), axis=0)
    for r in range(p):
        assert [int(t[f"state{last}:{r}:{j}"]) for j in range(w)] == total.tolist()
        assert [int(t[f"state0:{r}:{j}"]) for j in range(w)] == list(data[r])


def test_step_diagram_rounds():
    rounds = lambda a: max(k for k, *_ in _messages(figures_p5.fig_allreduce_steps("en", a)))
    assert rounds("rd") == 2 and rounds("rabenseifner") == 4 and rounds("tree") == 4   # p = 4


def test_step_diagram_rejects_scratch_schedules():
    with pytest.raises(ValueError, match="scratch"):
        figures_p5.fig_allreduce_steps("en", "one_shot")


def test_step_labels_complete_in_both_languages():
    assert steps.STEP_LABELS["zh"].keys() == steps.STEP_LABELS["en"].keys()
