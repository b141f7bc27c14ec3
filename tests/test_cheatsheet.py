"""The cost cheat-sheet (commbook.book.cheatsheet): its rows are the registry, its
coefficients are those of the closed forms and of the simulator, and its "fastest"
ranges tile the sweep with the algorithm the closed forms make fastest."""
from __future__ import annotations

import math

import pytest

from commbook import collectives as coll
from commbook.book.cheatsheet import affine_fit, cheatsheet, measure
from commbook.book.names import display_name
from commbook.collectives import ALGORITHMS, coefficients, predict
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4
from commbook.topology import Switch
from commbook.units import MB

CASES = [(8, NVLINK4), (6, IB_NDR)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"p{c[0]}" if isinstance(c, tuple) else str(c))
def sheet(request):
    p, link = request.param
    return p, link, cheatsheet(p, link, exclude=())


def _closed_form_fit(row, p, link, k=None):
    """The closed form's own coefficients (commbook.collectives.coefficients): what the
    simulator's measured rounds and bandwidth must equal."""
    c = coefficients(row["coll"], row["name"], p, **({} if k is None else {"chunks": k}))
    return c.alpha_steps, c.beta_bytes_per_byte


def test_rows_are_the_registry(sheet):
    _, _, t = sheet
    want = [(c, a.name) for c, algos in ALGORITHMS.items() for a in algos.values()
            if a.closed_form is not None]
    assert [(r["coll"], r["name"]) for r in t.rows] == want


def test_coefficients_are_the_closed_forms_and_the_simulator(sheet):
    p, link, t = sheet
    cluster = VirtualCluster(Switch(p, link))
    for row in t.rows:
        c = row["cost"]
        if c is None:
            continue
        for k in ((1, 3, 16) if c.pipelined else (None,)):
            a, b = _closed_form_fit(row, p, link, k)
            kk = 1 if k is None else k
            rounds = c.rounds[0] + c.rounds[1] * kk
            assert rounds == pytest.approx(a, abs=1e-6), (row["name"], k)
            assert c.bandwidth[0] + c.bandwidth[1] / kk == pytest.approx(b, rel=1e-9), (row["name"], k)
            kw = {} if k is None else {"chunks": k}
            res = getattr(coll, row["coll"])(cluster, nbytes=4 * MB, algorithm=row["name"], **kw)
            assert res.rounds == round(rounds), (row["name"], k)
            sent = c.sent[0] + c.sent[1] / kk
            assert res.bytes_sent.max() == pytest.approx(sent * 4 * MB, rel=1e-9), (row["name"], k)
            assert res.time == pytest.approx(c.time(4 * MB, link.alpha, link.beta, kk), rel=1e-9)


def test_formula_text_reads_the_coefficients():
    p = 8
    ring = measure("all_reduce", "ring", p, NVLINK4)
    a, b = affine_fit(lambda n: predict("all_reduce", "ring", p, n, 1e-6, 1e9), 1e-6, 1e9)
    assert (a, b) == pytest.approx((coefficients("all_reduce", "ring", p).alpha_steps,
                                    coefficients("all_reduce", "ring", p).beta_bytes_per_byte))
    assert ring.text() == f"{a:.4g} α + {b:.4g} n/β"
    chain = measure("broadcast", "chain", p, NVLINK4)
    assert chain.text() == f"({p - 2:g} + k) α + (1 + {p - 2:g}/k) n/β"      # (p-2+k)(α + n/(kβ))


def _best(row, p, n, link):
    kw = lambda k: {"chunks": k} if row["cost"].pipelined else {}
    ks = range(1, 513) if row["cost"].pipelined else (None,)
    return min(predict(row["coll"], row["name"], p, n, link.alpha, link.beta, **kw(k)) for k in ks)


def test_fastest_ranges_tile_the_sweep_and_hold_the_fastest(sheet):
    p, link, t = sheet
    lo, hi = t.meta["sweep"]
    for collective in ALGORITHMS:
        rows = [r for r in t.rows if r["coll"] == collective and r["cost"] is not None]
        if not rows:                                    # no closed form (all_to_all_v)
            continue
        spans = sorted((a, b, r["name"]) for r in rows for a, b in r["ranges"])
        assert spans[0][0] == lo and spans[-1][1] == hi, collective
        assert all(x[1] == y[0] for x, y in zip(spans, spans[1:])), f"{collective}: gap or overlap"
        for a, b, name in spans:
            n = math.sqrt(a * b)
            times = {r["name"]: _best(r, p, n, link) for r in rows}
            assert times[name] == pytest.approx(min(times.values()), rel=1e-12), (collective, n)


def test_crossover_is_exact():
    """The boundary between one-shot and two-shot is where their closed forms meet:
    α + (p-1)n/β = 2α + 2(p-1)/p·n/β  <=>  n = αβ·p/((p-1)(p-2))."""
    p, link = 8, NVLINK4
    t = cheatsheet(p, link)
    (_, cross), = t.find(coll="all_reduce", name="one_shot")["ranges"]
    assert cross == pytest.approx(link.alpha * link.beta * p / ((p - 1) * (p - 2)), rel=1e-9)


def test_excluded_and_impossible_rows():
    t = cheatsheet(8, NVLINK4)
    assert t.find(coll="all_reduce", name="innet")["wins"] == "not compared"
    assert "in-network" in t.notes["en"][-1]
    everything = cheatsheet(8, NVLINK4, exclude=())
    assert everything.find(coll="all_reduce", name="innet")["wins"] == "all sizes"   # α + n/β
    odd = cheatsheet(6, IB_NDR)
    row = odd.find(coll="reduce_scatter", name="rh")
    assert row["cost"] is None and row["wins"] == "not at this p"


def test_bilingual_rendering():
    t = cheatsheet()
    en, zh = t.to_html("en"), t.to_html("zh")
    for c, algos in ALGORITHMS.items():
        for a in algos.values():
            if a.closed_form is not None:
                assert display_name(c, a.name, "en") in en and display_name(c, a.name, "zh") in zh
    assert "从不" in zh and "never" not in zh
