"""The numbers of P5 §4 (collective operations) as typed results for
:func:`commbook.book.glue.glue_fields`: the semantics example read off demo 02-1, the two
broadcasts of the third identity (scatter + all-gather against the binomial tree, run on
the simulator), and the lower bounds of §4.3 (:func:`commbook.cost.lower_bound_bytes`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ... import cost
from ...collectives import broadcast, crossover
from ...comm_sim import VirtualCluster
from ...hardware import Link
from ...topology import Switch
from ..tables import Table

__all__ = ["SemanticsExample", "semantics_example", "BroadcastRun", "BroadcastSplit", "broadcast_split",
           "Bounds", "bounds", "SheetNumbers", "sheet_numbers", "SheetRace", "sheet_race"]


def _listing(values) -> str:
    return ", ".join(str(v) for v in values)


@dataclass(frozen=True)
class SemanticsExample:
    """Demo 02-1's buffers as prose: the inputs of devices 0 and 1, the all-reduce sum,
    the reduce-scatter pieces of the first and the ``last`` device, the all-gather's length,
    the all-to-all buffers of devices 0 and 1, the number of collectives shown, and the
    reduce-scatter, all-to-all and all-gather buffers of device ``q_d`` (the question's)."""

    p: int
    last: int
    d0: str
    d1: str
    total: str
    rs_d0: str
    rs_last: str
    ag_len: int
    a2a_d0: str
    a2a_d1: str
    n_ops: int
    q_d: int
    q_rs: str
    q_a2a: str
    q_ag: str


def semantics_example(table: Table, device: int = 2) -> SemanticsExample:
    """:class:`SemanticsExample` of demo 02-1's ``table``, the question about ``device``."""
    rows = {r["op"]: r for r in table.rows}
    p = len(rows["input"]["d0"])
    if not 0 <= device < p:
        raise ValueError(f"device must be in 0..{p - 1}, got {device!r}")
    op = lambda name, d: _listing(rows[name][f"d{d}"])
    return SemanticsExample(p, p - 1, op("input", 0), op("input", 1), op("all-reduce", 0),
                            op("reduce-scatter", 0), op("reduce-scatter", p - 1), len(rows["all-gather"]["d0"]),
                            op("all-to-all", 0), op("all-to-all", 1), len(table.rows) - 1, device,
                            op("reduce-scatter", device), op("all-to-all", device), op("all-gather", device))


@dataclass(frozen=True)
class BroadcastRun:
    """One simulated broadcast: its time, rounds and the bytes the root sends per byte of n."""

    time_s: float
    rounds: int
    root_per_n: float


@dataclass(frozen=True)
class BroadcastSplit:
    """Broadcast of ``n_bytes`` (``n`` as a count) on ``p`` devices behind one switch: scatter
    then all-gather (``sag``) against the binomial tree (``bin``), and the size where their
    closed forms cross, also in units of αβ."""

    p: int
    log2_p: int
    n: int
    n_bytes: float
    sag: BroadcastRun
    bin: BroadcastRun
    cross_bytes: float
    cross_per_ab: float


def broadcast_split(p: int, n: float, link: Link) -> BroadcastSplit:
    """:class:`BroadcastSplit` on ``Switch(p, link)``."""
    c = VirtualCluster(Switch(p, link))
    runs = {}
    for a in ("scatter_allgather", "binomial"):
        r = broadcast(c, nbytes=n, algorithm=a)
        runs[a] = BroadcastRun(r.time, r.rounds, float(r.bytes_sent[0]) / n)
    x = crossover("scatter_allgather", "binomial", p, link.alpha, link.beta, collective="broadcast")
    return BroadcastSplit(p, int(math.log2(p)), int(n), float(n), runs["scatter_allgather"], runs["binomial"],
                          x, x / link.n_half)


@dataclass(frozen=True)
class Bounds:
    """§4.3's lower bounds on ``p`` devices, per byte of n and for ``n_bytes`` over a NIC of
    ``beta_Bps``: all-reduce 2(p−1)/p·n, all-gather (p−1)/p·n, their ``ratio``, and the
    least time each takes to send."""

    p: int
    n_bytes: float
    beta_Bps: float
    all_reduce_per_n: float
    all_gather_per_n: float
    ratio: float
    all_reduce_bytes: float
    all_reduce_s: float
    all_gather_s: float


def bounds(p: int, n: float, link: Link) -> Bounds:
    """:class:`Bounds` for ``n`` bytes on ``p`` devices, each sending over ``link``."""
    ar, ag = (cost.lower_bound_bytes(op, p, 1.0) for op in ("all_reduce", "all_gather"))
    return Bounds(p, float(n), link.beta, ar, ag, ar / ag, ar * n, ar * n / link.beta, ag * n / link.beta)


@dataclass(frozen=True)
class SheetNumbers:
    """What §4.4 reads off a cheat sheet (:func:`commbook.book.cheatsheet.cheatsheet`): its
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


def _row(sheet: Table, coll: str, name: str) -> dict:
    return sheet.find(coll=coll, name=name)


def sheet_numbers(sheet: Table) -> SheetNumbers:
    """:class:`SheetNumbers` of a cheat sheet built with its default exclusions."""
    cost_of = lambda coll, name: _row(sheet, coll, name)["cost"]
    ring, two, one = (cost_of("all_reduce", a) for a in ("ring", "two_shot", "one_shot"))
    red, dt, chain = cost_of("reduce", "binomial"), cost_of("all_reduce", "double_tree"), cost_of("broadcast", "chain")
    (_, x_shot), = _row(sheet, "all_reduce", "one_shot")["ranges"]
    (_, x_flat), = _row(sheet, "broadcast", "flat")["ranges"]
    (_, x_bin), = _row(sheet, "broadcast", "binomial")["ranges"]
    (x_chain, _), = _row(sheet, "broadcast", "chain")["ranges"]
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
    """:class:`SheetRace` of ``sheet`` for the sizes ``small`` and ``big``."""
    (_, x_naive), = _row(sheet, "all_reduce", "naive")["ranges"]
    (_, x_rd), = _row(sheet, "all_reduce", "rd")["ranges"]
    text = lambda name: _row(sheet, "all_reduce", name)["cost"].text()
    return SheetRace(sheet.meta["p"], sheet.meta["link"].name, float(small), float(big), x_naive, x_rd,
                     text("rd"), text("rabenseifner"), text("ring"))
