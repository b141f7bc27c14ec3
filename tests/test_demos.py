"""The regenerated demo tables of P5 (commbook.book.p5) through the Table API: shape, a few
anchors of seed_inventory.md C.3.3 per table, the "original notes" remarks where the source
is wrong, notes that follow the parameters, and rendering of every row in both languages."""
from __future__ import annotations

import html
import re

import pytest

from commbook.measure import points as measured
from commbook.book.p5 import allreduce, inference, links, semantics, topology
from commbook.book.p5 import scripts as demos
from commbook.hardware import IB_HDR, IB_NDR, ICI_V5E, NVLINK4, Link
from commbook.book.tables import LANGS, Table, cell_text, list_text
from commbook.units import GB, KB, MB, KiB, MiB, fmt_ratio, us


@pytest.fixture(scope="module")
def tables() -> dict[str, Table]:
    return {key: fn() for key, fn in demos.DEMOS.items()}


def in_us(t):
    return t / us


def approx(x, **kw):
    return pytest.approx(x, **kw)


def all_tables(t: Table):
    yield t
    for p in t.parts:
        yield from all_tables(p)


def _in_order(line: str, cells: list[str]) -> bool:
    pos = 0
    for c in cells:
        pos = line.find(c, pos)
        if pos < 0:
            return False
        pos += len(c)
    return True


# --------------------------------------------------------------------- registry, rendering
def test_registry_covers_scripts_01_to_05():
    assert list(demos.DEMOS) == [k for keys in demos.SCRIPTS.values() for k in keys]
    assert len(demos.DEMOS) == 18  # 13 of scripts 01-04, 5 of script 05 (§7)
    for key, fn in demos.DEMOS.items():
        assert fn.__name__ == "demo_" + key.replace("-", "_")
        assert "§" in fn.__doc__ and "nchor" in fn.__doc__  # says which section and anchors


@pytest.mark.parametrize("key", list(demos.DEMOS))
@pytest.mark.parametrize("lang", LANGS)
def test_every_row_renders_in_both_languages(tables, key, lang):
    top = tables[key]
    assert top.key == key
    text, page, md = top.to_text(lang), top.to_html(lang), top.to_markdown(lang)
    rows = page.replace(' class="cb-prose"', "")  # a column of sentences is marked for its width
    for t in all_tables(top):
        assert len(t) > 0 and set(t.title) >= set(LANGS)
        heading = t.title[lang]
        assert heading in text and html.escape(heading) in page and heading.replace("|", "\\|") in md
        for cells in t.cells(lang):
            assert len(cells) == len(t.columns) and all(isinstance(c, str) and c for c in cells)
            # every row appears in each rendering: in text, as one line holding its cells in order
            assert any(_in_order(line, cells) for line in text.splitlines()), cells
            assert "<tr>" + "".join(
                f'<td style="text-align:right">{html.escape(c)}</td>' if r else f"<td>{html.escape(c)}</td>"
                for c, r in zip(cells, [t._numeric(col) for col in t.columns])) + "</tr>" in rows
            assert "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" in md
        for note in t.notes.get(lang, []):
            assert note in text and html.escape(note) in page
    assert page.count("<table") == len(list(all_tables(top)))
    if lang == "zh":
        assert "演示" in text and re.search(r"[\u4e00-\u9fff]", "".join(top.headers["zh"]))


def test_text_columns_are_aligned(tables):
    t = tables["03-1"]
    lines = t.to_text().splitlines()
    header, rule, first = lines[1], lines[2], lines[3]
    assert set(rule) <= {"-", " "}
    cols = [(m.start(), m.end()) for m in re.finditer("-+", rule)]
    assert [header[a:b].strip() for a, b in cols] == t.headers["en"]   # each header inside its column
    assert [first[a:b].strip() for a, b in cols] == t.cells()[0]
    assert first.split()[0:2] == ["4", "KB"]


# --------------------------------------------------------------------- 01
def test_01_1_links(tables):
    t = tables["01-1"]
    assert t.column("link")[:3] == [NVLINK4.name, IB_NDR.name, ICI_V5E.name] and len(t) == 7
    assert t.column("n_half")[:3] == approx([900 * KB, 250 * KB, 45 * KB])
    bw, frac = t.value(0, "at_4000")
    assert bw / GB == approx(1.99, abs=0.005) and frac * 100 == approx(0.44, abs=0.005)
    bw, frac = t.find(link=IB_NDR.name)["at_4000"]
    assert bw / GB == approx(0.79, abs=0.005) and frac * 100 == approx(1.57, abs=0.005)
    assert t.find(link=ICI_V5E.name)["at_4000"][1] * 100 == approx(8.2, abs=0.05)
    assert t.cell(0, "at_4000") == "1.99 GB/s (0.44%)" and t.cell(0, "n_half") == "900 KB"
    assert t.meta["sizes"][0] == 4 * KB and t.meta["sizes"][-1] == 256 * MB


def test_01_2_topologies(tables):
    t = tables["01-2"]
    assert t.column("topology") == ["switch", "ring", "2D torus 8×8", "3D torus 4×4×4", "two-level 8×8"]
    assert t.column("ports") == [1, 2, 4, 6, 2]
    assert t.column("diameter") == [2, 32, 8, 6, 4]
    assert [b / GB for b in t.column("bisection")] == approx([1440, 90, 720, 1440, 1600])
    assert t.value(4, "per_device") == approx(IB_NDR.beta) and t.value(4, "per_device") * 9 == approx(NVLINK4.beta)
    assert "1,440 GB/s" in t.to_text() and "1/9" in t.notes["en"][0]
    small = demos.DEMOS["01-2"](p=16)
    assert small.column("topology")[2:4] == ["2D torus 4×4", "3D torus 4×2×2"]


def test_01_3_point_to_point(tables):
    t = tables["01-3"]
    assert [round(in_us(v), 2) for v in t.column("t_4000")[:4]] == [1.09, 2.09, 4.09, 8.09]
    assert t.column("hops")[:4] == [1, 2, 4, 8]
    big = [in_us(v) for v in t.column("t_64000000")[:4]]
    assert 1423 <= min(big) and max(big) <= 1431
    nv, ib = t.rows[4], t.rows[5]
    assert in_us(nv["t_4000"]) == approx(2 + 4e3 / 450e3, abs=1e-9)
    assert in_us(ib["t_4000"]) == approx(5.08, abs=1e-9) and ib["beta"] == IB_NDR.beta
    # the α actually paid: h·α on the torus, one α through a switch although the path lists 2 hops
    assert t.column("alpha")[:4] == approx([h * ICI_V5E.alpha for h in (1, 2, 4, 8)])
    assert (nv["hops"], ib["hops"]) == (2, 2) and (nv["alpha"], ib["alpha"]) == (NVLINK4.alpha, IB_NDR.alpha)
    assert all(r["t_4000"] == approx(r["alpha"] + 4e3 / r["beta"], rel=1e-12) for r in t.rows)
    assert "α·(1 + 1·(h − 1))" in t.notes["en"][0] and "8 µs for 8 hops" in t.notes["en"][0]


# --------------------------------------------------------------------- 02
def test_02_1_semantics(tables):
    t = tables["02-1"]
    assert t.column("op") == ["input", "broadcast (root 0)", "reduce (root 0)", "all-reduce",
                              "reduce-scatter", "all-gather", "all-to-all"]
    row = lambda op: [t.find(op=op)[f"d{d}"] for d in range(4)]
    assert row("input") == [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33]]
    assert row("broadcast (root 0)") == [[0, 1, 2, 3]] * 4
    assert row("reduce (root 0)") == [[60, 64, 68, 72], None, None, None]
    assert row("all-reduce") == [[60, 64, 68, 72]] * 4
    assert row("reduce-scatter") == [[60], [64], [68], [72]]
    assert row("all-gather")[2] == [0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33]
    assert row("all-to-all") == [[0, 10, 20, 30], [1, 11, 21, 31], [2, 12, 22, 32], [3, 13, 23, 33]]
    assert t.cell(2, "d1") == "—" and "…" in t.cell(5, "d0")


def test_02_2_identities_and_broadcast_units(tables):
    t = tables["02-2"]
    assert t.column("max_diff") == [0, 0, 0] and all(t.column("holds"))
    b = t.part("02-2b")
    assert b.column("n") == [32 * KiB, 32 * KiB, 8 * MiB, 8 * MiB]
    sag, bino = b.find(n=8 * MiB, algorithm="scatter_allgather"), b.find(n=8 * MiB, algorithm="binomial")
    assert in_us(sag["time"]) == approx(48.62, abs=0.005) and in_us(bino["time"]) == approx(61.92, abs=0.005)
    assert round(in_us(sag["time"])) == 49 and round(in_us(bino["time"])) == 62
    small = b.find(n=32 * KiB, algorithm="scatter_allgather")
    assert round(in_us(small["time"]), 1) == 16.1
    assert round(in_us(b.find(n=32 * KiB, algorithm="binomial")["time"]), 1) == 6.2
    assert sag["root_bytes"] == approx(1.75 * 8 * MiB) and bino["root_bytes"] == approx(3 * 8 * MiB)
    # the original's 49 / 62 µs for "8 MB" are the 8 MiB times rounded; decimal 8 MB is in the remark
    assert in_us(semantics.broadcast_split(8, 8 * MB, NVLINK4).sag.time_s) == approx(47.11, abs=0.005)
    orig_en, orig_zh = b.notes["en"][1], b.notes["zh"][1]
    assert orig_en.startswith("Original notes: 49 vs 62 µs") and orig_zh.startswith("原讲义：")
    assert all(v in orig_en and v in orig_zh for v in ("48.62", "61.92", "47.11", "59.33", "8,388,608"))
    assert "1.75n" in b.notes["en"][0] and "3n" in b.notes["en"][0]
    assert "8 MiB" in b.to_text() and "scatter + all-gather" in b.to_text()


def test_02_3_bytes_per_device(tables):
    t = tables["02-3"]
    n = t.meta["n"]
    per = lambda name: [t.find(algorithm=name)[f"d{d}"] / n for d in range(8)]
    assert per("ring") == approx([1.75] * 8) and per("rabenseifner") == approx([1.75] * 8)
    assert per("rd") == approx([3.0] * 8)
    assert per("tree") == approx([3, 1, 2, 1, 3, 1, 2, 1])
    assert per("naive") == approx([7, 1, 1, 1, 1, 1, 1, 1]) and per("innet") == approx([1] * 8)
    assert t.find(algorithm="tree")["mean"] / n == approx(1.75)
    assert t.find(algorithm="rd")["rounds"] == 3 and t.find(algorithm="ring")["rounds"] == 14
    lb = t.part("02-3b")
    assert [v / n for v in lb.column("bound")] == approx([1.75, 0.875, 0.875, 0.875])
    assert lb.cell(0, "bound") == "1.75"


# --------------------------------------------------------------------- 03
def test_03_1_time_vs_size(tables):
    t = tables["03-1"]
    assert t.column("n_bytes") == [4 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB, 256 * MB]
    first, last = t.rows[0], t.rows[-1]
    assert [round(in_us(first[a].time_s), 2) for a in ("ring", "rd", "rabenseifner", "tree", "naive", "innet")] == \
        [28.02, 6.03, 12.02, 12.05, 4.12, 2.01]
    assert [round(in_us(last[f"{a}.time_s"]), 2) for a in ("ring", "rd", "rabenseifner", "tree", "naive", "innet")] \
        == [1023.56, 1712.67, 1007.56, 3425.33, 7968.44, 570.89]
    assert t.column("best") == ["naive", "naive", "rd", "rd", "rabenseifner", "rabenseifner", "rabenseifner"]
    assert all(r["innet"].time_s < min(r[a].time_s for a in ("ring", "rd", "rabenseifner", "tree", "naive"))
               for r in t.rows)
    x = t.part("03-1b")
    assert x.meta["naive_rd"] / KB == approx(81.8, abs=0.05)
    assert x.meta["rd_rab"] / MB == approx(2.16, abs=0.005)
    assert x.meta["rd_ring"] == approx(7.92e6, rel=1e-12)
    assert x.column("in_nhalf")[2] == approx(8.8)
    assert "1023.56" in t.to_text() and "7.92 MB" in x.to_text()


def test_03_2_scaling(tables):
    t = tables["03-2"]
    assert len(t) == 14 and t.column("p")[:7] == [8, 16, 32, 64, 128, 256, 512]
    ring64k = [r["ring"] * 1e3 for r in t.rows if r["n"] == 64 * KB]
    assert ring64k == approx([0.072, 0.152, 0.313, 0.633, 1.273, 2.553, 5.113], abs=0.0006)
    r = t.find(n=64 * KB, p=512)
    assert r["ring_rounds"] == 1022 and r["rd_rounds"] == 9 and in_us(r["rd"]) == approx(56.5, abs=0.05)
    big = [r for r in t.rows if r["n"] == 256 * MB]
    assert [round(b["ring"] * 1e3, 2) for b in big] == [9.03, 9.75, 10.23, 10.71, 11.43, 12.75, 15.33]
    assert big[0]["rabenseifner"] * 1e3 == approx(8.99, abs=0.005)
    assert big[-1]["rabenseifner"] * 1e3 == approx(10.31, abs=0.005)
    assert "70%" in t.notes["en"][0] and "1022 rounds = 5.11 ms" in t.notes["en"][0]
    assert t.notes["en"][1].startswith("Original notes: for large messages ring's time does not depend on p")


def test_03_3_model_vs_measurement(tables):
    t = tables["03-3"]
    data = measured.load(allreduce.HTSYM)
    tensor = 8192 * 3584 * 2                       # bf16[8192, 3584], the measured tensor
    want = {1 * MB: 54.9, 8 * MB: 236.8, 256 * MB: 437.7, 1e9: 446.8, 10e9: 449.7}
    assert t.column("n") == sorted(set(want) | {tensor})
    for n, gbps in want.items():
        assert t.find(n=n)["busbw"] / GB == approx(gbps, abs=0.05)
    # the ring closed form busbw = β·n / (n + pαβ) at the tensor's exact size
    row = t.find(n=float(tensor))
    assert row["busbw"] == approx(NVLINK4.beta * tensor / (tensor + 8 * NVLINK4.n_half), rel=1e-12)
    # only the measured points of the data file, at their exact sizes, with its source
    assert [(r["n"], r["measured"]) for r in t.rows if r["measured"] is not None] == list(data.pairs())
    assert t.meta["measurement"] == data and t.meta["source"] == data.source.cite()
    # α_eff = n/p·(1/busbw − 1/β); the source's rounded 58 MB gives the inventory's 32.2 µs
    assert row["alpha_eff"] == approx(tensor / 8 * (1 / row["measured"] - 1 / NVLINK4.beta), rel=1e-12)
    stated = 58 * MB / 8 * (1 / row["measured"] - 1 / NVLINK4.beta)
    assert in_us(stated) == approx(32.2, abs=0.05)
    assert f"α_eff = {in_us(stated):.3g} µs" in t.notes["en"][2] and "58,720,256 B" in t.notes["en"][2]
    assert t.notes["en"][2].startswith("Original notes:") and t.notes["zh"][2].startswith("原讲义：")
    assert t.find(n=10 * GB)["measured"] / NVLINK4.beta == approx(0.82, abs=0.005)
    assert "How to Scale Your Model" in t.notes["en"][0] and data.source.url in t.notes["zh"][0]
    assert "SHARP off" in t.title["en"] and "关闭 SHARP" in t.title["zh"] and t.cell(0, "measured") == "—"


def test_03_4_broadcast_pipeline(tables):
    t = tables["03-4"]
    assert in_us(t.find(schedule="flat (naive)")["time"]) == approx(1245.44, abs=0.005)
    assert in_us(t.find(schedule="binomial tree")["time"]) == approx(536.33, abs=0.005)
    chain = {r["k"]: in_us(r["time"]) for r in t.rows if r["k"] is not None}
    assert list(chain) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert [round(v, 2) for v in chain.values()] == [1251.44, 719.11, 454.44, 325.11, 266.44, 249.11, 264.44, 320.11]
    best = t.find(schedule="chain, k = int(k*)")
    assert best["k"] == 32 and round(best["vs_binomial"] * 100) == 46 and round(best["vs_bound"], 2) == 1.40
    assert in_us(t.meta["lower_bound"]) == approx(177.78, abs=0.005)
    assert t.meta["k_star"] == approx(32.66, abs=0.005) and in_us(t.meta["t_star"]) == approx(249.10, abs=0.005)
    assert t.meta["t_k_plus_1"] < best["time"] and t.meta["k_best"] == 33 == round(t.meta["k_star"])
    assert "k = 33 (249.101 µs)" in t.notes["en"][0]
    assert t.notes["en"][1].startswith("Original notes: k = 32 chunks is the best; here: k = 33")
    assert "only the best power of two" in t.notes["en"][1] and t.notes["zh"][1].startswith("原讲义：")
    nv = t.part("03-4b")
    assert in_us(nv.find(schedule="binomial tree")["time"]) == approx(32.67, abs=0.005)
    nv_best = nv.find(schedule="chain, k = int(k*)")
    assert nv_best["k"] == 5 and in_us(nv_best["time"]) == approx(41.56, abs=0.005)
    assert "4.44 n½" in nv.title["en"]


# --------------------------------------------------------------------- 04
def test_04_1_mapping(tables):
    t = tables["04-1"]
    assert in_us(t.meta["ideal"]) == approx(2696.7, abs=0.05)
    snake = t.find(mapping="snake")
    assert snake["vs_ideal"] == approx(1, rel=1e-12) and snake["max_hops"] == 1
    row = t.find(mapping="row-major")
    assert (row["vs_ideal"] - 1) * 100 == approx(1.11, abs=0.005) and row["max_hops"] == 2
    assert (t.find(mapping="row-major, 2α per extra hop")["vs_ideal"] - 1) * 100 == approx(2.22, abs=0.005)
    rand = [r for r in t.rows if r["mapping"] == "random"]
    assert [r["seed"] for r in rand] == [0, 1, 2, 3, 4]
    assert all(1.9 < r["vs_ideal"] < 2.1 for r in rand) and 1.9 < t.meta["random_median"] < 2.1
    assert all(r["max_link"] > snake["max_link"] for r in rand)
    assert snake["max_link"] == approx(30 * 64 * MB / 16)     # 30 rounds of n/p on every link
    f = t.part("04-1b")
    assert [in_us(v) for v in f.column("flat")] == approx([32.67, 2696.7], abs=0.05)
    assert [in_us(v) for v in f.column("two_d")] == approx([14.67, 2678.7], abs=0.05)
    assert f.column("flat_rounds") == [30, 30] and f.column("two_d_rounds") == [12, 12]
    assert "1.11%" in t.notes["en"][0] and "2.22% with 2α per extra hop" in t.notes["en"][0]
    assert t.notes["en"][1].startswith("Original notes: row-major ≈2 % slower")
    assert "only the rule “2α per extra hop” rounds to 2 %" in t.notes["en"][1]


def test_04_2_all_to_all(tables):
    t = tables["04-2"]
    sw, ring, torus = t.rows
    assert sw["time_s"] * 1e3 == approx(0.413, abs=0.0005) and sw["egress_s"] * 1e3 == approx(0.350, abs=0.0005)
    assert ring["sw_x"] == approx(16.3, abs=0.05) and ring["bisection_s"] * 1e3 == approx(2.844, abs=0.0005)
    assert torus["name"] == "2D torus 8×8" and torus["sw_x"] == approx(3.2, abs=0.05)
    assert 2 <= ring["bound_x"] <= 4 and 2 <= torus["bound_x"] <= 4
    assert topology.all_to_all_race().p16_x == approx(4.27, abs=0.01)
    assert "2.4–3.7×" in t.notes["en"][0] and "p−1 = 63" in t.notes["en"][0]
    assert t.notes["en"][1].startswith("Original notes: the ring ≈16×")
    assert "16.3× at p = 64, 4.3× at p = 16" in t.notes["en"][1] and "needs p = 64" in t.notes["en"][1]


def test_04_3_hierarchical(tables):
    t = tables["04-3"]
    speed = {(r["n"], r["nodes"]): r["speedup"] for r in t.rows}
    small = [speed[(64 * KB, N)] for N in (2, 4, 8, 16, 32)]
    large = [speed[(256 * MB, N)] for N in (2, 4, 8, 16, 32)]
    assert small == approx([3.97, 5.34, 6.42, 7.13, 7.54], abs=0.005)
    assert large == approx([5.83, 5.08, 4.84, 4.82, 4.95], abs=0.005)
    assert t.find(n=64 * KB, nodes=32)["p"] == 256 and t.find(n=64 * KB, nodes=2)["flat_rounds"] == 30


def _nccl_ring(N: int, G: int, n: float) -> float:
    """NCCL's ring on N nodes × G GPUs, one channel per NIC with PXN: 2(p−1) steps, each
    α of the network plus the slower of n/p over a GPU's NVLink port (G channels of
    n/(Gp)) and one channel's n/(Gp) through a NIC."""
    p = N * G
    return 2 * (p - 1) * (IB_NDR.alpha + max(n / (p * NVLINK4.beta), n / (G * p * IB_NDR.beta)))


def _hier(N: int, G: int, n: float, nics: int) -> float:
    """Hierarchical all-reduce; the G cross-node rings share the node's ``nics`` NICs."""
    nv, ib = NVLINK4, IB_NDR
    return (2 * (G - 1) * (nv.alpha + n / (G * nv.beta))
            + 2 * (N - 1) * (ib.alpha + n / (G * N * ib.beta) * G / nics))


def test_04_3_nccl_ring_column(tables):
    t = tables["04-3"]
    for r in t.rows:
        assert r["nccl"] == approx(_nccl_ring(r["nodes"], 8, r["n"]), rel=1e-9)
        assert r["nccl_vs_hier"] == approx(r["nccl"] / r["hier"], rel=1e-12)
    large = [t.find(n=256 * MB, nodes=N)["nccl_vs_hier"] for N in (2, 4, 8, 16, 32)]
    assert large == approx([0.81, 0.77, 0.85, 1.07, 1.49], abs=0.005)
    small = [t.find(n=64 * KB, nodes=N)["nccl_vs_hier"] for N in (2, 4, 8, 16, 32)]
    assert min(small) > 3.5                                  # 64 KB: α decides, the hierarchy wins
    assert "0.77×–1.49×" in t.notes["en"][1]


def test_04_3b_crossover_solves_the_closed_forms(tables):
    """The crossover size n* where NCCL's ring and the hierarchy take equal time: both
    are α-terms + n × (bandwidth terms), so n* = Δα / Δ(bandwidth per byte), or never
    when the ring's bandwidth terms are not the smaller ones."""
    t = tables["04-3"].part("04-3b")
    G, nv, ib = 8, NVLINK4, IB_NDR
    for r in t.rows:
        N, p = r["nodes"], r["nodes"] * G
        for key, nics in (("per_gpu", G), ("per_node", 1)):
            ring_alpha = 2 * (p - 1) * ib.alpha
            hier_alpha = 2 * (G - 1) * nv.alpha + 2 * (N - 1) * ib.alpha
            if nics == G:
                ring_bw = 2 * (p - 1) * max(1 / (p * nv.beta), 1 / (G * p * ib.beta))
            else:
                ring_bw = 2 * (p - 1) / (p * ib.beta)
            hier_bw = 2 * (G - 1) / (G * nv.beta) + 2 * (N - 1) / (N * ib.beta * nics)
            if hier_bw <= ring_bw:
                assert r[key] == "never"
                continue
            x = (ring_alpha - hier_alpha) / (hier_bw - ring_bw)
            assert r[key] == approx(x, rel=1e-9)
            ring = _nccl_ring(N, G, x) if nics == G else t_ring(p, x)
            assert ring == approx(_hier(N, G, x, nics), rel=1e-9)
    col = {key: [r[key] for r in t.rows] for key in ("per_gpu", "per_node")}
    assert [round(v / MB, 1) for v in col["per_gpu"]] == [65.8, 90.2, 159.2, 302.0, 589.5]
    assert col["per_node"][:3] == ["never"] * 3 and all(v > 600 * MB for v in col["per_node"][3:])
    assert t.cell(0, "per_node", "zh") == "不会"


def t_ring(p: int, n: float) -> float:
    """The single ring across nodes: every step waits for one NIC."""
    return 2 * (p - 1) * (IB_NDR.alpha + n / (p * IB_NDR.beta))


@pytest.fixture(scope="module", params=("zh", "en"))
def summary_glue(request) -> dict[str, str]:
    """The glued values of the P5 summary page, executed as the build runs it."""
    from pathlib import Path

    from conftest import executed_glue
    return executed_glue(Path(__file__).resolve().parents[1] / "chapters" / request.param / "p5"
                         / "09-summary.md")


def test_p5_summary_hierarchy_against_both_rings(summary_glue):
    """The summary quotes the hierarchy against the single ring and against NCCL's ring
    (one channel per NIC), small and large messages, as the closed forms give them."""
    G, nodes, small, large = 8, (2, 4, 8, 16, 32), 64 * KB, 256 * MB
    x = lambda v: fmt_ratio(v, 3)
    rng = lambda vs: f"{x(min(vs))}–{x(max(vs))}"
    single = {n: [t_ring(N * G, n) / _hier(N, G, n, G) for N in nodes] for n in (small, large)}
    nccl = {n: dict(zip(nodes, [_nccl_ring(N, G, n) / _hier(N, G, n, G) for N in nodes]))
            for n in (small, large)}
    g = summary_glue
    assert (g["s_hier_n_small_bytes"], g["s_hier_n_big_bytes"]) == ("64 KB", "256 MB")
    assert g["s_hier_small_range"] == rng(single[small]) == "3.97×–7.54×"
    assert g["s_hier_big_range"] == rng(single[large]) == "4.82×–5.83×"
    assert g["s_nccl_small_range"] == rng(nccl[small].values()) == "3.91×–7.53×"   # α: channels do not help
    assert min(nccl[small].values()) > 1                                         # the hierarchy wins small
    big = nccl[large]
    assert [N for N in nodes if big[N] < 1] == [2, 4, 8] and g["s_nccl_ring_to"] == "8"
    assert g["s_nccl_ring_x"] == x(1 / min(big.values())) == "1.3×"
    assert g["s_nccl_hier_from"] == "16"
    assert g["s_nccl_hier_range"] == f"{x(big[16])}–{x(big[32])}" == "1.07×–1.49×"
    assert (g["s_ring_from_n_lo"], g["s_ring_from_lo_bytes"]) == ("2", "65.8 MB")
    assert (g["s_ring_from_n_hi"], g["s_ring_from_hi_bytes"]) == ("32", "590 MB")


def test_p5_summary_latency_budget_question(summary_glue):
    """Check yourself: the smallest ring whose 2(p−1) start-ups on InfiniBand pass 1 ms."""
    p = next(p for p in range(2, 10 ** 5) if 2 * (p - 1) * IB_NDR.alpha > 1e-3)
    assert summary_glue["q10_p"] == f"{p:,}" and summary_glue["q10_rd"] == str((p - 1).bit_length())


def test_demo_parameters_are_keywords():
    """Non-default parameters work: a smaller 03-1 and an 04-3 with other node counts."""
    t = demos.DEMOS["03-1"](p=4, sizes=[1 * MB])
    assert len(t) == 1 and t.value(0, "ring.time_s") == approx(6 * (2e-6 + 1e6 / (4 * 450e9)))
    t = demos.DEMOS["04-3"](nodes=(2,), sizes=(64 * KB,))
    assert t.value(0, "speedup") == approx(3.97, abs=0.005)


# --------------------------------------------------------------------- no narration, no IDs
NARRATION = re.compile(r"lecture|讲义|\bF\.\d|flag|标记|seed \d{3}", re.I)
ORIGINAL = {"en": "Original notes: ", "zh": "原讲义："}


def _texts(t: Table, lang: str):
    yield t.title[lang]
    yield from t.headers[lang]
    yield from t.labels.get(lang, {}).values()
    yield from (c for row in t.cells(lang) for c in row)


@pytest.mark.parametrize("lang", LANGS)
def test_no_narration_and_no_internal_ids(tables, lang):
    for top in tables.values():
        for t in all_tables(top):
            for text in _texts(t, lang):
                assert not NARRATION.search(text), (t.key, text)
            for note in t.notes.get(lang, []):
                body = note.removeprefix(ORIGINAL[lang])   # the marked remark is the one exception
                assert not NARRATION.search(body), (t.key, note)


def _notes(t: Table, lang: str = "en") -> str:
    return " ".join(n for part in all_tables(t) for n in part.notes.get(lang, []))


def _both(t: Table) -> str:
    return _notes(t, "en") + " " + _notes(t, "zh")


def _has(text: str, *tokens: str) -> bool:
    """Whether any token occurs as a whole number ("2 µs" is not in "32.2 µs", "8×" not in "3.98×")."""
    return any(re.search(rf"(?<![\d.,/]){re.escape(tok)}(?!\d)", text) for tok in tokens)


# --------------------------------------------------------------------- notes follow the parameters
def test_notes_follow_parameters_01():
    t = links.demo_01_2(p=16, inter=IB_HDR)
    ratio = NVLINK4.beta / IB_HDR.beta
    assert f"1/{ratio:.3g}" in _both(t) and "25 GB/s" in _both(t)
    assert not _has(_both(t), "1/9", "50 GB/s")
    t = links.demo_01_3(hops=(1, 3), hop_alpha=2.0)
    assert t.column("alpha")[:2] == approx([ICI_V5E.alpha, 5 * ICI_V5E.alpha])   # α(1 + 2(h − 1))
    en, zh = _notes(t), _notes(t, "zh")
    assert "α·(1 + 2·(h − 1))" in en and "5 µs for 3 hops" in en and "3 跳是 5 µs" in zh
    assert not _has(en + zh, "8 hops", "8 跳", "8 µs")


def test_notes_follow_parameters_02():
    b = semantics.demo_02_2(p=16).part("02-2b")
    assert "1.875n" in _both(b) and "4n" in _both(b)
    assert not _has(_both(b), "Original", "原讲义", "49", "62", "1.75n", "3n")
    t = semantics.demo_02_3(p=16)
    assert "1.875n" in _notes(t) and "recursive doubling sends the most on average (4n" in _notes(t)
    assert not _has(_both(t), "1.75n", "3n")
    assert "9-element" in _notes(semantics.demo_02_1(p=3))


def test_notes_follow_parameters_03():
    t = allreduce.demo_03_1(p=16, sizes=[1 * MB])
    en = _notes(t)
    assert "30 rounds cost 60 µs" in en and "p = 16" in en and "30 rounds to Rabenseifner's 8" in en
    assert not _has(_both(t), "p = 8", "14", "28 µs")
    t = allreduce.demo_03_2(ps=(8, 16, 32))
    big = [r["ring"] for r in t.rows if r["n"] == 256 * MB]
    assert f"{big[-1] / big[0] - 1:.0%}" in _notes(t) and "p = 32" in _notes(t)
    assert not _has(_both(t), "512", "70%", "1022")
    fast = Link("test link", 1e-6, NVLINK4.beta, "a test link")
    t = allreduce.demo_03_3(link=fast)
    mid = t.find(n=float(8192 * 3584 * 2))
    assert f"{mid['alpha_eff'] / fast.alpha:.0f}× the link's 1 µs" in _notes(t)
    assert not _has(_both(t), "16×", "16 倍", "2 µs", "Original", "原讲义")
    t = allreduce.demo_03_4(n=4 * MB)
    assert f"{t.meta['k_star']:.2f}" in _notes(t) and f"k = {t.meta['k_best']} (" in _notes(t)
    assert not _has(_both(t), "Original", "原讲义", "32.66", "33", "249.10", "249.101")


def test_notes_follow_parameters_04():
    t = topology.demo_04_1(dims=(4, 2), n=16 * MB, seeds=(0,), median_seeds=4, extra_hop_alpha=3.0)
    assert t.find(mapping="row-major, 3α per extra hop") and "seeds 0–3" in _notes(t)
    assert "2 (p−1) = 14".replace(" ", "") in _notes(t).replace(" ", "")
    assert not _has(_both(t), "Original", "原讲义", "2α", "2.6967", "0–19", "30")
    t = topology.demo_04_2(p=16, check_p16=False)
    assert "p−1 = 15" in _notes(t) and not _has(_both(t), "63", "Original", "原讲义", "16.3×")
    t = topology.demo_04_3(nodes=(2, 4), gpus_per_node=4, sizes=(64 * KB,))
    en = _notes(t)
    assert all(v in en for v in ("2(4N−1)", "2×3", "n/4", "4 NICs"))
    assert not _has(_both(t), "8N", "2×7", "n/8", "8 NICs", "8 块")


def test_notes_follow_parameters_05():
    t = inference.demo_05_3(tps=(4, 32))
    assert "TP 32 on 4 nodes" in t.title["en"] and "4 nodes" in _notes(t) and "Up to 8 GPUs" in _notes(t)
    assert not _has(t.title["en"] + _both(t), "2 nodes", "2 个节点", "TP 16")
    t = inference.demo_05_5(nics=4, prompts=(1024, 8192))
    lo, hi = min(t.column("ratio_x")), max(t.column("ratio_x"))
    assert f"{fmt_ratio(lo, 3)}–{fmt_ratio(hi, 3)} slower than 4" in _notes(t) and t.headers["en"][3] == "4 NICs"
    assert not _has(_both(t), "Original", "原讲义", "8×", "9×", "8 块", "8 倍")
    t = inference.demo_05_4(eps=(4, 32))
    assert t.headers["en"][5] == "vs EP 4 BF16" and set(t.column("ep")) == {4, 32}
    assert "α = 10 µs" in " ".join(inference.demo_05_1(slow_alpha=10e-6, batches=(1,)).headers["en"])


# --------------------------------------------------------------------- Table itself
def _tiny(**kw):
    args = dict(key="x", title={"en": "T", "zh": "表"}, columns=["a", "b"],
                headers={"en": ["A", "B"], "zh": ["甲", "乙"]}, rows=[["ring", 1.5e-6], {"a": "tree", "b": None}])
    args.update(kw)
    return Table(**args)


def test_table_api():
    t = _tiny(labels={"zh": {"ring": "环"}}, notes={"en": ["n1"], "zh": ["注一"]})
    assert t.rows[0] == {"a": "ring", "b": 1.5e-6} and t.value(0, "b") == 1.5e-6
    assert t.column("a") == ["ring", "tree"] and t.find(a="tree")["b"] is None
    assert t.cells("zh") == [["环", "1.5e-06"], ["tree", "—"]]
    assert "Note: n1" in t.to_text() and "注：注一" in t.to_text("zh")
    assert "| 甲 | 乙 |" in t.to_markdown("zh") and "|---|---:|" in t.to_markdown("zh")
    with pytest.raises(KeyError):
        t.column("zzz")
    with pytest.raises(KeyError):
        t.find(a="nope")
    with pytest.raises(KeyError):
        t.part("y")


def test_table_rejects_bad_input():
    with pytest.raises(ValueError, match="headers"):
        _tiny(headers={"en": ["A"], "zh": ["甲", "乙"]})
    with pytest.raises(ValueError, match="title"):
        _tiny(title={"en": "T"})
    with pytest.raises(ValueError, match="row 0"):
        _tiny(rows=[["ring"]])
    with pytest.raises(ValueError, match="lacks"):
        _tiny(rows=[{"a": 1}])
    with pytest.raises(ValueError, match="unknown columns"):
        _tiny(formats={"c": str})
    with pytest.raises(ValueError, match="duplicate"):
        _tiny(columns=["a", "a"])
    with pytest.raises(ValueError, match="lang"):
        _tiny().to_html("fr")


def test_default_formatters():
    assert cell_text(None) == "—" and cell_text(True) == "✓" and cell_text(3) == "3"
    assert cell_text(0.875) == "0.875" and cell_text([1, 2]) == "[1, 2]"
    assert list_text(list(range(16))) == "[0, 1, 2, 3, 4, …, 13, 14, 15]"
