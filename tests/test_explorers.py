"""The explorers of commbook.book.explorers: each callback follows its controls, the
numbers it shows agree with commbook's public API computed here independently, the static
rendering carries the figure and the table in both languages, bad values fail clearly,
and a built page shows the static rendering and no widget.

Independent references: closed forms written out here (α + n/β; the naive/RD and
RD/Rabenseifner boundaries solved by hand), the registry's predictions
(:func:`commbook.collectives.predict`) for the race, the torus routes for the bytes per
link, :func:`commbook.collectives.t_allreduce_hierarchical`, the ring formula and NCCL's
ring with one channel per NIC, 2(p−1)(α_IB + max(n/(pβ_NV), n/(Gpβ_IB))), for the two-level
cluster, and the TP message B·d·2 through the ring formula for the decode budget.
"""
from __future__ import annotations

import base64
import functools
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from commbook import llm
from commbook.collectives import predict, t_allreduce_hierarchical, t_formula
from commbook.book.explorers import (AllReduceRaceExplorer, EffectiveBandwidthExplorer, HierarchyExplorer,
                                     RingMappingExplorer, TPDecodeExplorer)
from commbook.book.explorers.base import LIVE_NOTE
from commbook.hardware import IB_HDR, IB_NDR, ICI_V5E, LINKS, NVLINK4
from commbook.topology import Torus, ring_order
from commbook.units import GB, MB, us
from conftest import build_small_book

ROOT = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXPLORERS = [EffectiveBandwidthExplorer, AllReduceRaceExplorer, RingMappingExplorer, HierarchyExplorer,
             TPDecodeExplorer]


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)


def gid_xy(fig, gid: str) -> tuple[np.ndarray, np.ndarray]:
    """The data of the line with this gid in the explorer's figure."""
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_gid() == gid:
                return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    raise AssertionError(f"no line with gid {gid!r}")


@functools.lru_cache(maxsize=None)
def built(cls, lang: str = "en"):
    """One explorer of each class and language at its defaults, built once (the tests
    that use it leave it at its defaults)."""
    return cls(lang=lang)


@pytest.fixture(params=EXPLORERS, ids=lambda c: c.__name__)
def pair(request):
    """One explorer class in each language."""
    return {lang: built(request.param, lang) for lang in ("en", "zh")}


# ------------------------------------------------------------------ 1. effective bandwidth
def test_effbw_follows_link_preset_and_sliders():
    e = EffectiveBandwidthExplorer()
    e.controls["link"].value = "IB_NDR"                 # a preset sets α and β
    assert close(e.values["alpha_us"] * us, IB_NDR.alpha) and close(e.values["beta_gbps"] * GB, IB_NDR.beta)
    assert close(e.controls["alpha_us"].value * us, IB_NDR.alpha)
    e.update(n=2 * MB)
    row = e.result.table.rows[0]
    assert close(row["time_s"], IB_NDR.alpha + 2 * MB / IB_NDR.beta)
    assert close(row["eff_bw_Bps"], 2 * MB / (IB_NDR.alpha + 2 * MB / IB_NDR.beta))
    assert "bandwidth-bound" in e.result.table.notes["en"][0]          # 2 MB > αβ = 250 KB
    e.update(alpha_us=40.0, n=1e5)                      # moved away from the preset: both drawn
    mine, preset = e.result.table.rows
    assert close(mine["alpha_s"], 40e-6) and close(mine["beta_Bps"], IB_NDR.beta) and preset["link"] == IB_NDR.name
    assert close(mine["share_frac"], 1e5 / (40e-6 * IB_NDR.beta + 1e5))
    assert "latency-bound" in e.result.table.notes["en"][0]            # 100 KB < αβ = 2 MB
    x, y = gid_xy(e.result.figure, "at_n")
    assert close(x[0], 1e5) and close(y[0] * GB, mine["eff_bw_Bps"])
    assert e.controls["alpha_us"].value == 40.0


# ------------------------------------------------------------------ 2. the race
def test_race_winner_is_the_registrys_argmin():
    e = AllReduceRaceExplorer(p=64, n=3e5, alpha_us=5.0, beta_gbps=50.0)
    a, b = 5e-6, 50e9
    times = e.result.table.meta["times"]
    for algo, t in times.items():
        assert close(t, predict("all_reduce", algo, 64, 3e5, a, b))
    assert "innet" not in times
    assert e.result.table.meta["winner"] == min(times, key=times.get)
    assert [r["algorithm"] for r in e.result.table.rows] == sorted(times, key=times.get)
    e.controls["innet"].value = True                    # the switch reduces: in-network races, and wins
    assert e.result.table.meta["winner"] == "innet"
    assert close(e.result.table.meta["times"]["innet"], a + 3e5 / b)
    e.controls["p"].value = 16
    assert "p = 16" in e.result.table.title["en"]
    x, y = gid_xy(e.result.figure, "winner")
    assert close(x[0], 3e5) and close(y[0], predict("all_reduce", "innet", 16, 3e5, a, b))


def test_race_winner_changes_solve_the_closed_forms():
    """At p = 8 (defaults: NVLink 4) the winner goes naive -> RD -> Rabenseifner; the
    boundaries, solved by hand from the closed forms, are (L-2)αβ/(2(p-1)-L) and
    Lαβ/(L - 2(p-1)/p) with L = log2 p (§5.3)."""
    e = AllReduceRaceExplorer()
    p, L, ab = 8, 3, NVLINK4.alpha * NVLINK4.beta
    changes = e.result.table.meta["changes"]
    assert [(c["from"], c["to"]) for c in changes] == [("naive", "rd"), ("rd", "rabenseifner")]
    assert close(changes[0]["n_bytes"], (L - 2) * ab / (2 * (p - 1) - L), 1e-6)
    assert close(changes[1]["n_bytes"], L * ab / (L - 2 * (p - 1) / p), 1e-6)
    # elsewhere: each change is where the registry's argmin really changes
    e.update(p=256, alpha_us=20.0, beta_gbps=25.0)
    racers = e.result.table.meta["racers"]
    for c in e.result.table.meta["changes"]:
        for n, who in ((c["n_bytes"] * 0.999, c["from"]), (c["n_bytes"] * 1.001, c["to"])):
            t = {x: predict("all_reduce", x, 256, n, 20e-6, 25e9) for x in racers}
            assert min(t, key=t.get) == who, (c, n)


# ------------------------------------------------------------------ 3. ring mapping
def route_bytes(dims, kind, seed, n) -> dict[str, float]:
    """Bytes per directed link of a ring all-reduce, from the torus routes: every ring
    edge's route carries n/p in each of the 2(p-1) steps."""
    topo = Torus(dims, ICI_V5E)
    order, p = ring_order(dims, kind, seed), topo.p
    load: dict[str, float] = {}
    for r in range(p):
        path = topo.route(int(order[r]), int(order[(r + 1) % p]))
        for u, v in zip(path, path[1:]):
            cu, cv = topo.coords(u), topo.coords(v)
            d = int(np.flatnonzero(cu != cv)[0])
            sign = "+" if (cu[d] + 1) % dims[d] == cv[d] else "-"
            name = f"gpu{u}->gpu{v} (dim {d}, {sign})"   # the directed link u -> v (commbook.topology.Torus)
            load[name] = load.get(name, 0.0) + 2 * (p - 1) * n / p
    return load


def test_mapping_link_loads_follow_the_routes():
    e = RingMappingExplorer(lang="zh", mapping="snake")
    e.controls["seed"].value = 7                         # greyed out for the snake, still kept
    e.update(rows=3, cols=5, mapping="random", n=8 * MB)
    mine, snake = e.result.table.meta["runs"]
    expect = route_bytes((3, 5), "random", 7, 8 * MB)
    got = {k: v for k, v in mine["link_bytes"].items() if v > 0}
    assert got.keys() == expect.keys() and all(close(got[k], expect[k]) for k in expect)
    assert close(mine["max_link_bytes"], max(expect.values())) and mine["used"] == len(expect)
    assert snake["mapping"] == "snake" and close(snake["max_link_bytes"], 2 * 14 * 8 * MB / 15)
    topo = Torus((3, 5), ICI_V5E)
    order = ring_order((3, 5), "random", 7)
    assert mine["max_hops"] == max(topo.hops(int(order[i]), int(order[(i + 1) % 15])) for i in range(15))
    assert close(e.result.table.meta["ideal"], t_formula("ring", 15, 8 * MB, ICI_V5E.alpha, ICI_V5E.beta))
    assert "3×5" in e.result.table.title["zh"] and "种子 7" in e.result.table.title["zh"]
    assert not e.controls["seed"].disabled
    e.controls["mapping"].value = "snake"                # 4×4 snake: every edge one link, load = one chunk
    assert e.controls["seed"].disabled
    e.update(rows=4, cols=4)
    (only,) = e.result.table.meta["runs"]
    assert close(only["vs_ideal_x"], 1.0) and close(only["max_link_bytes"], 2 * 15 * 8 * MB / 16)


# ------------------------------------------------------------------ 4. hierarchical vs the rings
def test_hierarchy_matches_closed_forms():
    e = HierarchyExplorer(gpus=4, inter="IB_HDR", n=8 * MB)
    e.controls["nodes"].value = 4
    times = e.result.table.meta["times"]
    assert close(times["hierarchical"], t_allreduce_hierarchical(4, 4, 8 * MB, NVLINK4, IB_HDR))
    # the single ring crosses a node boundary in every step, so it runs at the inter-node link
    assert close(times["single_ring"], t_formula("ring", 16, 8 * MB, IB_HDR.alpha, IB_HDR.beta))
    # NCCL's ring, one channel per NIC (G = 4) with PXN: in each of the 2(p−1) steps every
    # GPU sends n/p over NVLink (G channels of n/(Gp)) and every NIC one channel's n/(Gp)
    p, G, n = 16, 4, 8 * MB
    nccl = 2 * (p - 1) * (IB_HDR.alpha + max(n / (p * NVLINK4.beta), n / (G * p * IB_HDR.beta)))
    assert close(times["nccl_ring"], nccl)
    meta = e.result.table.meta
    assert meta["channels"] == G and [r["channels"] for r in e.result.table.rows] == [1, G, None]
    assert close(meta["speedup"], times["single_ring"] / times["hierarchical"])
    assert close(meta["speedup_nccl"], times["nccl_ring"] / times["hierarchical"])
    for gid, key in (("at_N", "speedup"), ("at_N_nccl", "speedup_nccl")):
        x, y = gid_xy(e.result.figure, gid)
        assert x[0] == 4 and close(y[0], meta[key])
    x, y = gid_xy(e.result.figure, f"nccl:{n:g}")
    assert close(y[list(x).index(4)], meta["speedup_nccl"])
    assert [r["rounds"] for r in e.result.table.rows] == [2 * 15, 2 * 15, 2 * 3 + 2 * 3]


def test_hierarchy_large_messages_and_one_nic_per_node():
    """1 GB on 8 nodes × 8 GPUs: NCCL's ring beats the hierarchy (it overlaps NVLink and
    NICs in every step); with one NIC per node it has one channel, equals the single ring,
    and the hierarchy's G cross-node rings share that NIC: each of their 2(N−1) steps
    moves G·n/(GN) = n/N through it."""
    e = HierarchyExplorer(n=1e9)
    N, G, n, nv, ib = 8, 8, 1e9, NVLINK4, IB_NDR
    p = N * G
    times = e.result.table.meta["times"]
    nccl = 2 * (p - 1) * (ib.alpha + max(n / (p * nv.beta), n / (G * p * ib.beta)))
    assert close(times["nccl_ring"], nccl) and times["nccl_ring"] < times["hierarchical"]
    assert "Fastest here: NCCL's ring." in e.result.table.notes["en"][0]
    e.update(nics="node")
    times = e.result.table.meta["times"]
    assert e.result.table.meta["channels"] == 1 and close(times["nccl_ring"], times["single_ring"])
    assert close(times["single_ring"], 2 * (p - 1) * (ib.alpha + n / (p * ib.beta)))
    hier = 2 * (G - 1) * (nv.alpha + n / (G * nv.beta)) + 2 * (N - 1) * (ib.alpha + n / (N * ib.beta))
    assert close(times["hierarchical"], hier)
    assert "one NIC per node NCCL's ring has one channel too" in e.result.table.notes["en"][0]
    e.update(nodes=1)
    assert "with one node" in e.result.table.notes["en"][0]
    assert len({round(v, 15) for v in e.result.table.meta["times"].values()}) == 1


# ------------------------------------------------------------------ 5. TP decode budget
def test_tp_decode_follows_model_batch_tp_and_link():
    e = TPDecodeExplorer(model="LLAMA31_8B", tp=4)
    e.controls["batch"].value = 32
    m, msg = llm.LLAMA31_8B, 32 * llm.LLAMA31_8B.d_model * 2
    meta = e.result.table.meta
    assert meta["message"] == msg and meta["allreduces"] == 2 * m.n_layers
    step = llm.decode_step(m, 32, tp=4).time
    assert close(meta["step"], step)
    for algo in ("ring", "rd"):
        comm = 2 * m.n_layers * t_formula(algo, 4, msg, NVLINK4.alpha, NVLINK4.beta)
        assert close(meta["comm"][algo], comm) and close(meta["share"][algo], comm / (comm + step))
    e.update(link="NVLINK_H800", tp=16)                   # two nodes: hierarchical, IB between them
    h800 = LINKS["NVLINK_H800"]
    comm = 2 * m.n_layers * t_allreduce_hierarchical(2, 8, msg, h800, IB_NDR, inter_algorithm="rd")
    assert close(e.result.table.meta["comm"]["rd"], comm)
    assert any("16" in note and IB_NDR.name in note for note in e.result.table.notes["en"])
    x, y = gid_xy(e.result.figure, "at:rd")
    assert x[0] == 32 and close(y[0], e.result.table.meta["share"]["rd"])


# ------------------------------------------------------------------ renderings, both languages
def test_static_rendering_and_mime_bundle(pair):
    for lang, e in pair.items():
        bundle = e._repr_mimebundle_()
        assert WIDGET_VIEW in bundle and bundle[WIDGET_VIEW]["model_id"] == e.widget.model_id
        page = bundle["text/html"]
        png = re.search(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
        assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG\r\n\x1a\n")
        assert f'data-demo="{e.result.table.key}"' in page and "<td" in page
        assert LIVE_NOTE[lang] in page
        assert e.result.table.title[lang] in bundle["text/plain"]
        live = e._view.value                          # the live view: same figure and table, no note
        assert e.result.table.key in live and LIVE_NOTE[lang] not in live
        words = re.sub(r"<[^>]+>", "", e.result.table.to_html(lang))
        has_cjk = bool(re.search(r"[\u4e00-\u9fff]", "".join(e.result.table.headers[lang]) + words))
        assert has_cjk == (lang == "zh"), lang
        descriptions = "".join(c.description for c in e.controls.values())
        assert bool(re.search(r"[\u4e00-\u9fff]", descriptions)) == (lang == "zh"), descriptions


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(("cls", "values", "match"), [
    (EffectiveBandwidthExplorer, {"n": 1e12}, r"n must be between 100 and 1e\+09"),
    (EffectiveBandwidthExplorer, {"link": "NVLINK9"}, r"link must be one of .*NVLINK4"),
    (AllReduceRaceExplorer, {"p": 6}, r"p must be one of \[4, 8"),
    (AllReduceRaceExplorer, {"innet": "yes"}, r"innet must be True or False"),
    (AllReduceRaceExplorer, {"alpha": 2.0}, r"has no control 'alpha'; valid: p, n, alpha_us"),
    (RingMappingExplorer, {"rows": 2.5}, r"rows must be an integer"),
    (RingMappingExplorer, {"mapping": "hilbert"}, r"mapping must be one of"),
    (HierarchyExplorer, {"nodes": 0}, r"nodes must be between 1 and 32"),
    (TPDecodeExplorer, {"batch": float("nan")}, r"batch must be an integer"),
    (TPDecodeExplorer, {"model": "GPT-5"}, r"model must be one of"),
])
def test_bad_values_are_named_and_change_nothing(cls, values, match):
    e = built(cls)
    before, result = dict(e.values), e.result
    with pytest.raises(ValueError, match=match):
        e.update(**values)
    assert e.values == before and e.result is result


def test_a_control_that_cannot_be_computed_shows_why(monkeypatch):
    """A control moved to values commbook rejects: the live view says why, and the
    explorer keeps its last good values and result."""
    e = HierarchyExplorer()
    before, result = dict(e.values), e.result

    def refuse(**values):
        raise ValueError("nodes = 3 cannot be computed here")

    monkeypatch.setattr(e, "compute", refuse)
    e.controls["nodes"].value = 3
    assert "commbook-explorer-error" in e._view.value and "nodes = 3 cannot be computed" in e._view.value
    assert e.values == before and e.result is result


def test_bad_language():
    with pytest.raises(ValueError, match="lang must be one of"):
        TPDecodeExplorer(lang="fr")


# ------------------------------------------------------------------ the built page
def test_config_drops_widget_view_for_html():
    from myst_nb.core.render import get_mime_priority

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    order = get_mime_priority("html", [tuple(o) for o in config["nb_mime_priority_overrides"]])
    assert WIDGET_VIEW not in order and order.index("text/html") < order.index("text/plain")
    assert config["nb_ipywidgets_js"] == {}


PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Explorer

```{code-cell} python
from commbook.book.explorers import EffectiveBandwidthExplorer
EffectiveBandwidthExplorer(lang="en", link="IB_NDR")
```
"""


def test_built_page_shows_the_static_rendering_and_no_widget(tmp_path):
    """A one-page book with the repository's _config.yml and _ext/: the page shows the
    explorer's figure, table and note, and carries no widget view, no widget state and
    no script from elsewhere."""
    toc = "format: jb-book\nroot: index\nchapters:\n  - file: reference/api\n"
    api = "# API\n\n<!-- commbook-modules: commbook.book.explorers.effbw -->\n"   # the table's source link lands here
    html = build_small_book(tmp_path / "book", toc, {"index.md": PAGE, "reference/api.md": api})
    page = (html / "index.html").read_text(encoding="utf-8")
    for marker in ("widget-view+json", "widget-state+json", "jupyter-widgets", "require.min.js"):
        assert marker not in page, marker
    remote = [s for s in re.findall(r'<script[^>]*\ssrc="([^"]+)"', page) if re.match(r"(https?:)?//", s)]
    assert not remote, remote
    assert '<div class="commbook-explorer">' in page and '<img src="data:image/png;base64,' in page
    assert 'data-demo="explore-effbw"' in page and IB_NDR.name in page
    assert "commbook-explorer-live" in page
