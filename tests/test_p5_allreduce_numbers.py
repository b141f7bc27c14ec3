"""P5 §5's typed results (book/p5/allreduce_numbers.py, book/measuring_p5.py) against the
closed forms written out here, the numbers the chapter states, and numpy; these are the
checks the page's cells used to assert."""
from __future__ import annotations

import math

import numpy as np
import pytest

from commbook.book.glue import fields
from commbook.book.measuring_p5 import TENSOR, p5_curve
from commbook.book.p5.allreduce_numbers import chain_broadcast, race, ring_cost, sim_check, step_runs
from commbook.book.p5.results import link_numbers, versus
from commbook.book.p5.steps import EXAMPLE_1_1
from commbook.collectives import all_reduce
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import Switch
from commbook.units import KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time

NV = NVLINK4
_UNIT = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _seconds(text: str) -> float:
    """'1.311 ms' -> 0.001311."""
    value, unit = text.split()
    return float(value) * _UNIT[unit]


@pytest.fixture(scope="module")
def page05():
    """Page §5 (English) as the book runs it: its glued texts."""
    from conftest import ROOT, executed_glue
    return executed_glue(ROOT / "chapters/en/p5/05-allreduce.md")


def test_race_bytes_per_device_are_the_textbook_counts():
    r = race(8, 1 * MB, NV)
    assert r.ring.sent_per_n == pytest.approx(2 * 7 / 8)          # 2(p-1)/p
    assert r.rabenseifner.sent_per_n == pytest.approx(2 * 7 / 8)
    assert r.rd.sent_per_n == pytest.approx(3)                    # log2 p whole buffers
    assert r.innet.sent_per_n == pytest.approx(1)
    assert (r.ring.rounds, r.rd.rounds, r.rabenseifner.rounds) == (14, 3, 6)
    assert r.ring.latency_s == pytest.approx(14 * NV.alpha)


def test_race_best_is_the_fastest_software_algorithm():
    r = race(8, 4 * KB, NV)                                       # §5.3: naive wins at 4 KB
    assert r.best == "naive" and r.best_time_s == r.naive.time_s
    assert r.innet.time_s < r.best_time_s


def test_ring_cost_is_eq_ring():
    a, b, p, n = NV.alpha, NV.beta, 8, 4 * MB
    c = ring_cost(p, n, NV)
    assert c.time_s == pytest.approx(2 * (p - 1) * (a + n / (p * b)))
    assert c.latency_s == pytest.approx(2 * (p - 1) * a)
    # at balance_bytes the two terms are equal
    n_bal = c.balance_bytes
    assert 2 * (p - 1) * a == pytest.approx(2 * (p - 1) / p * n_bal / b)


def test_double_tree_never_reaches_its_envelope(page05):
    """§5.1's cell (8 GPUs, 256 MB on NVLink) and §5.4's (512 GPUs on InfiniBand): the pipelined
    double tree lies between its envelope 2·log2(p)·α + 2n/β and the two unpipelined trees."""
    for key, p, link in (("dt", 8, NV), ("bgdt", 512, IB_NDR)):
        env = 2 * math.log2(p) * link.alpha + 2 * 256 * MB / link.beta
        assert page05[f"{key}_n_bytes"] == fmt_bytes(256 * MB) and page05[f"{key}_envelope_s"] == fmt_time(env)
        assert env < _seconds(page05[f"{key}_time_s"]) < _seconds(page05[f"{key}_unpiped_s"])
        ring = 2 * (p - 1) * (link.alpha + 256 * MB / (p * link.beta))
        assert page05[f"{key}_ring_s"] == fmt_time(ring)


def test_crossovers_match_the_stated_anchors(page05):
    """§5.3's cell against demo 03-1's stated boundaries and eq. (cross) on 8 GPUs."""
    p, L = 8, 3
    assert page05["x_rd_ring_per_ab"] == "8.8" == f"{(2 * (p - 1) - L) / (L - 2 * (p - 1) / p):g}"
    assert page05["x_rd_ring_bytes"] == fmt_bytes(8.8 * NV.n_half)
    assert (page05["x_naive_rd_bytes"], page05["x_rd_rab_bytes"]) == ("81.8 KB", "2.16 MB")
    assert (page05["x_rd_ring_num"], page05["x_rd_ring_den"]) == ("11", "1.25")


def test_sharp_ideal_gain_tends_to_two(page05):
    """§5.2's in-network reduction: the ideal 2(p−1)/p on 8 and 1,024 GPUs, and the measured
    8×H100 bus bandwidths of How to Scale Your Model ch. 12 (370 GB/s off, 480 GB/s on)."""
    assert page05["sharp_ideal_x"] == fmt_ratio(1.75) and page05["sharp_ideal_gain_frac"] == fmt_pct(0.75)
    assert page05["sharp_big_p"] == "1,024" and page05["sharp_big_x"] == fmt_ratio(2 * 1023 / 1024, 4)
    assert (page05["sharp_off_Bps"], page05["sharp_on_Bps"]) == ("370 GB/s", "480 GB/s")
    assert page05["sharp_measured_gain_frac"] == fmt_pct(480 / 370 - 1)
    assert 0 < 480 / 370 - 1 < 0.75


def test_sim_check_equal_chunks_are_exact_and_odd_ones_are_not():
    c = sim_check(8, NV, sizes=(1_000, 8_000))
    assert c.time_rel < 1e-12 and c.out_rel < 1e-12
    assert c.odd_rel > 1e-7 and c.odd_algo in c.names


def test_step_runs_counts_and_halves():
    s = step_runs(EXAMPLE_1_1, NV)
    p, w = len(EXAMPLE_1_1), len(EXAMPLE_1_1[0])
    assert s.total == ", ".join(str(v) for v in np.sum(EXAMPLE_1_1, axis=0))
    assert s.ring.sent == 2 * (p - 1) * w // p and s.rd.sent == int(math.log2(p)) * w
    assert s.rabenseifner.sent == s.ring.sent
    c = VirtualCluster(Switch(p, NV))
    arrays = [np.asarray(x) for x in EXAMPLE_1_1]
    for algo in ("rabenseifner", "tree"):                         # adds first, copies after
        run = all_reduce(c, arrays, algorithm=algo, trace=True)
        k = run.rounds // 2
        assert [bool(st.round.reduce.all()) for st in run.trace] == [True] * k + [False] * k
    assert set(s.rd.messages.split(", ")) == {str(p)}              # every GPU sends in every round


def test_chain_broadcast_against_its_closed_form():
    p, n, a, b = 8, 8 * MB, ICI_V5E.alpha, ICI_V5E.beta
    bc = chain_broadcast(p, n, ICI_V5E)
    T = lambda k: (p - 2 + k) * (a + n / (k * b))
    assert bc.k_star == pytest.approx(math.sqrt((p - 2) * n / (a * b)))
    assert bc.t_star_s == pytest.approx((math.sqrt((p - 2) * a) + math.sqrt(n / b)) ** 2)
    assert bc.best_k == min(range(1, 257), key=T) == 33           # flag F.28: not 32
    assert bc.best_s == pytest.approx(T(33)) and bc.floor_k == 32
    nv = chain_broadcast(p, 4 * MB, NV)                           # demo 03-4b: the tree wins
    assert nv.best_k == int(nv.k_star) == 5 and nv.binomial_s < nv.best_s


def test_measured_vs_ring_signs():
    m = p5_curve(NV).measured
    assert m.alpha_min_s > 0 and m.first_above_alpha_s < 0       # below β: a positive α; above: none fits
    assert m.worst_frac < 0.75 and m.first_above_Bps > NV.beta
    assert m.blog_exact == math.prod(TENSOR) and m.blog_exact_bytes == m.blog_exact
    assert m.first_above_s < m.first_above_ring_s                 # faster than a ring's bandwidth term


def test_results_glue_with_their_units():
    f = fields("nv", link_numbers(NV))
    assert f == {"nv_alpha_s": "2 µs", "nv_beta_Bps": "450 GB/s", "nv_n_half_bytes": "900 KB"}
    v = fields("g", versus(3.0, 2.0))
    assert v == {"g_diff_s": "1 s", "g_ratio_x": "1.5×", "g_growth_frac": "50%"}
    assert fields("sm", race(512, 64 * KB, IB_NDR))["sm_ring_rounds"] == "1,022"


# ----------------------------------------------------------------------------- §4 (semantics)
from commbook.book.p5.semantics import bounds, broadcast_split, semantics  # noqa: E402
from commbook.collectives import t_broadcast                           # noqa: E402
from commbook.units import GB, KiB, MiB                                # noqa: E402


def test_semantics_example_against_numpy():
    s = semantics(4, device=2)
    x = np.array([np.arange(4) + 10 * d for d in range(4)])             # demo 02-1's inputs
    assert s.total == ", ".join(str(v) for v in x.sum(axis=0))
    assert s.q_rs == str(x.sum(axis=0)[2]) and s.q_a2a == ", ".join(str(v) for v in x[:, 2])
    assert s.ag_len == x.size
    with pytest.raises(ValueError, match="device"):
        semantics(4, device=4)


def test_broadcast_split_tree_wins_small_scatter_allgather_wins_large():
    small, large = broadcast_split(8, 32 * KiB, NV), broadcast_split(8, 8 * MiB, NV)
    assert small.sag.time_s > small.bin.time_s and large.sag.time_s < large.bin.time_s
    a, b, p, n = NV.alpha, NV.beta, 8, 8 * MiB
    assert large.sag.time_s == pytest.approx(p * a + 2 * (p - 1) / p * n / b)   # eq. (bcast)
    assert large.bin.time_s == pytest.approx(math.log2(p) * (a + n / b))
    assert large.sag.time_s == pytest.approx(t_broadcast("scatter_allgather", p, n, a, b))
    # the closed forms cross where p·α + 2(p−1)/p·n/β = log₂p·(α + n/β)
    x = (p - math.log2(p)) * a / ((math.log2(p) - 2 * (p - 1) / p) / b)
    assert large.cross_bytes == pytest.approx(x)
    assert (large.sag.root_per_n, large.bin.root_per_n) == (pytest.approx(1.75), pytest.approx(3))


def test_bounds_are_patarasuk_yuan():
    b = bounds(64, 1 * GB, IB_NDR)
    assert b.all_reduce_per_n == pytest.approx(2 * 63 / 64) and b.all_gather_per_n == pytest.approx(63 / 64)
    assert b.all_reduce_s == pytest.approx(2 * 63 / 64 * GB / IB_NDR.beta) and b.ratio == pytest.approx(2)
    r = race(8, 1 * MB, NV)                                              # ring and Rabenseifner meet it
    assert r.ring.sent_per_n == r.rabenseifner.sent_per_n == pytest.approx(bounds(8, 1, NV).all_reduce_per_n)


def test_sheet_numbers_and_race_read_the_cheat_sheet():
    from commbook.book.cheatsheet import cheatsheet
    from commbook.book.cheatsheet import sheet_numbers, sheet_race

    sheet = cheatsheet()
    s = sheet_numbers(sheet)
    assert sheet.find(coll="all_reduce", name="ring")["ranges"] == []          # the ring never wins on a switch
    ring, two = (sheet.find(coll="all_reduce", name=a)["cost"] for a in ("ring", "two_shot"))
    assert ring.sent[0] == pytest.approx(two.sent[0]) == pytest.approx(2 * (s.p - 1) / s.p)   # same bytes
    red = sheet.find(coll="reduce", name="binomial")["cost"]
    assert red.sent[0] < red.bandwidth[0]                                      # the root's port receives
    with_innet = cheatsheet(s.p, sheet.meta["link"], exclude=())
    assert with_innet.find(coll="all_reduce", name="innet")["ranges"] == [sheet.meta["sweep"]]
    assert s.x_flat_bytes < s.x_bin_bytes < s.x_chain_bytes and s.dt_limit == pytest.approx(2)
    q = sheet_race(cheatsheet(p=64, link=IB_NDR, exclude=("innet", "one_shot", "two_shot")), 64 * KB, 256 * MB)
    assert q.naive_bytes < q.small_bytes < q.x_bytes < q.big_bytes
