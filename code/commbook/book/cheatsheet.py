"""The cost cheat-sheet: every collective, every algorithm with a closed form, what it
costs and the message sizes at which it is the fastest of its collective.

Nothing here is typed in.  The rows come from the algorithm registry
(:data:`commbook.collectives.ALGORITHMS`); the cost of each algorithm is *measured*:
size-only simulator runs on a :class:`~commbook.topology.Switch` of ``p`` devices at two
message sizes fit ``T(n) = a·α + b·n/β`` (:func:`affine_fit`), so ``a`` is the number of
rounds and ``b`` the bytes, in units of n, that the busiest port carries one after the
other.  A pipelined algorithm (one that takes ``chunks``) is measured at two chunk counts
as well and written in k: ``(4 + 2k) α + (2 + 3/k) n/β``.  The "fastest" column compares
the closed forms (:func:`commbook.collectives.predict`, pipelined algorithms at their
best integer k) over a sweep of sizes; its ranges end at the exact crossovers (found by
bisection) and tile the sweep.  :func:`sheet_numbers` and :func:`sheet_race` read what
P5 §4.4 says off a sheet.

>>> from commbook.hardware import NVLINK4
>>> c = measure("all_reduce", "ring", 8, NVLINK4)
>>> c.text()
'14 α + 1.75 n/β'
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .. import collectives as coll
from ..collectives import ALGORITHMS, algorithm, predict
from ..comm_sim import VirtualCluster
from ..hardware import NVLINK4, Link
from ..topology import Switch
from ..units import GB, MB, fmt_bytes, fmt_rate, fmt_time
from .names import algorithm_labels
from .tables import Table
from .text import texts

T = texts("p5")

__all__ = ["Cost", "affine_fit", "measure", "best_time", "fastest_ranges", "cheatsheet",
           "FIT_SIZES", "FIT_CHUNKS", "SheetNumbers", "sheet_numbers", "SheetRace", "sheet_race"]

FIT_SIZES = (1 * MB, 2 * MB)
"""The two message sizes of every fit."""

FIT_CHUNKS = (2, 4, 8)
"""Chunk counts of a pipelined algorithm: fit at the first two, checked at the third."""


def affine_fit(time, alpha: float, beta: float, sizes: Sequence[float] = FIT_SIZES) -> tuple[float, float]:
    """``(a, b)`` such that ``time(n) = a·α + b·n/β``, from ``time`` at two sizes."""
    (n1, n2) = sizes
    t1, t2 = time(n1), time(n2)
    b = (t2 - t1) / (n2 - n1) * beta
    return (t1 - b * n1 / beta) / alpha, b


def _num(x: float) -> str:
    """A coefficient as the table prints it: 14, 1.75, 0.875, 1.667."""
    return f"{round(x, 9):.4g}"


def _term(c0: float, c1: float, k: str) -> str:
    """``c0 + c1·k`` (``k="k"``) or ``c0 + c1/k`` (``k="/k"``) as text: '4 + 2k', '2 + 3/k'."""
    if round(c1, 9) == 0:
        return _num(c0)
    tail = (("" if round(c1, 9) == 1 else _num(c1)) + "k") if k == "k" else f"{_num(c1)}/k"
    return tail if round(c0, 9) == 0 else f"{_num(c0)} + {tail}"


@dataclass(frozen=True)
class Cost:
    """What one algorithm costs on p devices of a switch, measured on the simulator.

    ``T = (rounds[0] + rounds[1]·k)·α + (bandwidth[0] + bandwidth[1]/k)·n/β``, and the
    busiest device sends ``(sent[0] + sent[1]/k)·n`` bytes; k is the chunk count of a
    pipelined algorithm (``rounds[1] == bandwidth[1] == sent[1] == 0`` for the others).
    """

    collective: str
    name: str
    p: int
    rounds: tuple[float, float]
    bandwidth: tuple[float, float]
    sent: tuple[float, float]

    @property
    def pipelined(self) -> bool:
        return "chunks" in algorithm(self.collective, self.name).params

    def time(self, n: float, alpha: float, beta: float, chunks: int = 1) -> float:
        """The measured formula at size ``n`` (and ``chunks`` for a pipelined algorithm)."""
        k = chunks if self.pipelined else 1
        return ((self.rounds[0] + self.rounds[1] * k) * alpha
                + (self.bandwidth[0] + self.bandwidth[1] / k) * n / beta)

    def rounds_text(self) -> str:
        return _term(*self.rounds, "k")

    def sent_text(self) -> str:
        return _term(*self.sent, "/k")

    def text(self) -> str:
        """The time as a formula in α, β, n (and k): '14 α + 1.75 n/β'."""
        a, b = self.rounds_text(), _term(*self.bandwidth, "/k")
        a = "" if a == "1" else (f"({a}) " if "+" in a else f"{a} ")
        b = "" if b == "1" else (f"({b}) " if "+" in b else f"{b} ")
        return f"{a}α + {b}n/β"


def measure(collective: str, name: str, p: int, link: Link) -> Cost:
    """Measure ``collective`` by ``name`` on ``Switch(p, link)``: size-only runs at
    :data:`FIT_SIZES` (and, for a pipelined algorithm, at the chunk counts of
    :data:`FIT_CHUNKS`, checking that the cost is affine in k and 1/k)."""
    a = algorithm(collective, name)
    cluster = VirtualCluster(Switch(p, link))

    def fit(**params) -> tuple[float, float, float]:
        run = lambda n: getattr(coll, collective)(cluster, nbytes=n, algorithm=a.name, **params)
        rounds, bandwidth = affine_fit(lambda n: run(n).time, link.alpha, link.beta)
        n = FIT_SIZES[0]
        return rounds, bandwidth, float(run(n).bytes_sent.max()) / n

    if "chunks" not in a.params:
        r, b, s = fit()
        return Cost(collective, a.name, p, (r, 0.0), (b, 0.0), (s, 0.0))
    (k1, k2, k3) = FIT_CHUNKS
    f1, f2, f3 = (fit(chunks=k) for k in FIT_CHUNKS)
    slope = [(y - x) / (k2 - k1) for x, y in zip(f1, f2)]           # rounds: affine in k
    inv = [(x - y) / (1 / k1 - 1 / k2) for x, y in zip(f1, f2)]     # bytes: affine in 1/k
    cost = Cost(collective, a.name, p, (f1[0] - slope[0] * k1, slope[0]),
                (f1[1] - inv[1] / k1, inv[1]), (f1[2] - inv[2] / k1, inv[2]))
    expect = (cost.rounds[0] + cost.rounds[1] * k3, cost.bandwidth[0] + cost.bandwidth[1] / k3,
              cost.sent[0] + cost.sent[1] / k3)
    if not all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) for x, y in zip(expect, f3)):
        raise ValueError(f"the cost of {collective} {a.name!r} on p={p} is not affine in k and 1/k")
    return cost


def best_time(cost: Cost, n: float, link: Link) -> float:
    """The closed-form time at size ``n``; a pipelined algorithm at its best integer k
    (near the optimum k* of its measured formula)."""
    a = link.alpha
    if not cost.pipelined:
        return predict(cost.collective, cost.name, cost.p, n, a, link.beta)
    grow, save = cost.rounds[1] * a, cost.bandwidth[1] * n / link.beta
    k_star = math.sqrt(save / grow) if grow > 0 else 1.0
    ks = {1, *(max(1, math.floor(k_star) + d) for d in (-1, 0, 1, 2))}
    return min(predict(cost.collective, cost.name, cost.p, n, a, link.beta, chunks=k) for k in ks)


def fastest_ranges(costs: Sequence[Cost], link: Link, sweep: tuple[float, float] = (1.0, 1 * GB),
                   per_decade: int = 20) -> list[tuple[str, float, float]]:
    """``(name, from, to)`` for each stretch of sizes over ``sweep`` in which ``name`` is
    the fastest of ``costs`` (a tie goes to the one listed first).  The stretches tile
    the sweep; each boundary is a crossover located by bisection to 1e-12 relative."""
    if not costs:
        return []
    lo, hi = sweep
    steps = max(2, round(math.log10(hi / lo) * per_decade))
    sizes = [lo * (hi / lo) ** (i / steps) for i in range(steps + 1)]

    def winner(n: float) -> str:
        times = [best_time(c, n, link) for c in costs]
        return costs[times.index(min(times))].name

    out, start, cur, prev = [], sizes[0], winner(sizes[0]), sizes[0]
    for n in sizes[1:]:
        while winner(n) != cur:
            a, b = prev, n                                   # winner(a) == cur != winner(b)
            while b / a - 1 > 1e-12:
                mid = math.sqrt(a * b)
                a, b = (mid, b) if winner(mid) == cur else (a, mid)
            out.append((cur, start, b))
            start, cur, prev = b, winner(b), b
        prev = n
    out.append((cur, start, sizes[-1]))
    return out


def _ranges_text(spans: list[tuple[float, float]], sweep: tuple[float, float]) -> str:
    if not spans:
        return "never"
    parts = []
    for lo, hi in spans:
        first, last = lo <= sweep[0], hi >= sweep[1]
        parts.append("all sizes" if first and last else f"< {fmt_bytes(hi)}" if first
                     else f"≥ {fmt_bytes(lo)}" if last else f"{fmt_bytes(lo)} – {fmt_bytes(hi)}")
    return ", ".join(parts)


_WORD_KEYS = {"never": "never", "all sizes": "all_sizes", "not compared": "not_compared", "not at this p": "not_at_p"}
WORDS = {"zh": {en: T.get(f"cheatsheet.{k}", "zh") for en, k in _WORD_KEYS.items()}}
"""Chinese for the words of the "fastest" column (English is the key), from book/texts/p5.toml."""


def cheatsheet(p: int = 8, link: Link = NVLINK4, sweep: tuple[float, float] = (1.0, 1 * GB),
               exclude: Sequence[str] = ("innet",)) -> Table:
    """The cheat-sheet as a bilingual :class:`~commbook.book.tables.Table`: one row per
    collective and algorithm with a closed form (registry order), with the measured
    rounds, bytes sent by the busiest device, time formula, and the sizes in ``sweep`` at
    which the algorithm is the fastest of its collective on ``Switch(p, link)``.

    ``exclude`` names algorithms left out of the comparison (by default in-network
    reduction, which needs a switch that adds).  An algorithm that cannot run on ``p``
    devices (recursive halving needs a power of two) gets an empty row.  Each row also
    holds its :class:`Cost` (``"cost"``) and its ``(from, to)`` stretches (``"ranges"``).
    """
    rows = []
    for collective, algos in ALGORITHMS.items():
        if not any(a.closed_form is not None for a in algos.values()):
            continue
        costs = []
        for a in algos.values():
            if a.closed_form is None:
                continue
            try:
                costs.append(measure(collective, a.name, p, link))
            except ValueError:                  # e.g. a power of two needed
                pass
        ranges = fastest_ranges([c for c in costs if c.name not in exclude], link, sweep)
        for i, name in enumerate(a.name for a in algos.values() if a.closed_form is not None):
            cost = next((c for c in costs if c.name == name), None)
            spans = [(lo, hi) for w, lo, hi in ranges if w == name]
            wins = ("not at this p" if cost is None else "not compared" if name in exclude
                    else _ranges_text(spans, sweep))
            rows.append({"collective": collective.replace("_", "-") if i == 0 else "",
                         "algorithm": f"{collective}:{name}",
                         "rounds": cost and cost.rounds_text(), "sent": cost and cost.sent_text(),
                         "time": cost and cost.text(), "wins": wins,
                         "coll": collective, "name": name, "cost": cost, "ranges": spans})
    names = algorithm_labels()
    names["zh"].update(WORDS["zh"])
    alpha, beta = fmt_time(link.alpha), fmt_rate(link.beta)
    dropped = [f"{c}:{x}" for c in ALGORITHMS for x in exclude if x in ALGORITHMS[c]]
    left_out = {lang: T.get("cheatsheet.list_sep", lang).join(dict.fromkeys(names[lang][d] for d in dropped))
                or "—" for lang in ("en", "zh")}
    return Table(
        key="cost-cheatsheet",
        title=T("cheatsheet.title", p=p, link=link.name, alpha=alpha, beta=beta),
        columns=["collective", "algorithm", "rounds", "sent", "time", "wins"],
        headers=T.pairs(*(f"cheatsheet.{c}" for c in ("collective", "algorithm", "rounds", "sent", "time", "wins"))),
        rows=rows,
        labels=names,
        notes={lang: [T.get("cheatsheet.note_n", lang), T.get("cheatsheet.note_measured", lang),
                      T.get("cheatsheet.note_fastest", lang, lo=fmt_bytes(sweep[0]), hi=fmt_bytes(sweep[1]),
                            left_out=left_out[lang])] for lang in ("en", "zh")},
        meta={"p": p, "link": link, "sweep": tuple(sweep), "exclude": tuple(exclude)},
    )


@dataclass(frozen=True)
class SheetNumbers:
    """What §4.4 of P5 reads off a cheat sheet (:func:`cheatsheet`): its
    setting (``p`` devices, the ``link``'s name, its rows and collectives, the size sweep),
    the cost texts of the ring, two-shot and one-shot all-reduce, the binomial reduce, the
    double tree and the pipelined chain broadcast (with rounds and bytes sent where the page
    names them), the double tree's bandwidth factor, and where the winners change."""

    p: int
    link: str
    rows: int
    colls: int
    lo_bytes: float
    hi_bytes: float
    ring: str
    ring_rounds: str
    ring_sent: str
    two: str
    two_rounds: str
    one: str
    x_shot_bytes: float
    red: str
    red_sent: str
    red_rounds: str
    dt: str
    dt_limit: float
    chain: str
    x_flat_bytes: float
    x_bin_bytes: float
    x_chain_bytes: float


def sheet_numbers(sheet: Table) -> SheetNumbers:
    """:class:`SheetNumbers` of a cheat sheet built with its default exclusions.

    >>> sheet_numbers(cheatsheet()).p
    8
    """
    cost_of = lambda coll, name: sheet.find(coll=coll, name=name)["cost"]
    ring, two, one = (cost_of("all_reduce", a) for a in ("ring", "two_shot", "one_shot"))
    red, dt, chain = cost_of("reduce", "binomial"), cost_of("all_reduce", "double_tree"), cost_of("broadcast", "chain")
    (_, x_shot), = sheet.find(coll="all_reduce", name="one_shot")["ranges"]
    (_, x_flat), = sheet.find(coll="broadcast", name="flat")["ranges"]
    (_, x_bin), = sheet.find(coll="broadcast", name="binomial")["ranges"]
    (x_chain, _), = sheet.find(coll="broadcast", name="chain")["ranges"]
    lo, hi = sheet.meta["sweep"]
    return SheetNumbers(sheet.meta["p"], sheet.meta["link"].name, len(sheet), len({r["coll"] for r in sheet.rows}),
                        lo, hi, ring.text(), ring.rounds_text(), ring.sent_text(), two.text(), two.rounds_text(),
                        one.text(), x_shot, red.text(), red.sent_text(), red.rounds_text(), dt.text(),
                        dt.bandwidth[0], chain.text(), x_flat, x_bin, x_chain)


@dataclass(frozen=True)
class SheetRace:
    """The all-reduce rows of a cheat sheet on ``p`` devices: where naive gives way
    (``naive_bytes``) and where recursive doubling gives way to Rabenseifner (``x_bytes``),
    the cost texts of recursive doubling, Rabenseifner and the ring, and the question's two
    sizes."""

    p: int
    link: str
    small_bytes: float
    big_bytes: float
    naive_bytes: float
    x_bytes: float
    rd: str
    rab: str
    ring: str


def sheet_race(sheet: Table, small: float, big: float) -> SheetRace:
    """:class:`SheetRace` of ``sheet`` for the sizes ``small`` and ``big``.

    >>> from commbook.hardware import IB_NDR
    >>> sheet_race(cheatsheet(64, IB_NDR, exclude=("innet", "one_shot", "two_shot")), 64e3, 256e6).p
    64
    """
    (_, x_naive), = sheet.find(coll="all_reduce", name="naive")["ranges"]
    (_, x_rd), = sheet.find(coll="all_reduce", name="rd")["ranges"]
    text = lambda name: sheet.find(coll="all_reduce", name=name)["cost"].text()
    return SheetRace(sheet.meta["p"], sheet.meta["link"].name, float(small), float(big), x_naive, x_rd,
                     text("rd"), text("rabenseifner"), text("ring"))
