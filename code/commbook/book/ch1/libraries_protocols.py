"""Chapter §1.7: NCCL's three wire protocols and NCCL's pick of algorithm and protocol per
message size, from the constants of NCCL 2.29.2 that the book's model uses
(:mod:`commbook.measure.nccl_tuning`, each cited there by file and line;
:mod:`commbook.measure.nccl_model` evaluates them).

* :data:`PROTOCOLS`: what a line carries (src/include/device.h:70-83 and 105-107 of
  v2.29.2-1), the payload share and the ceiling it puts on a link, NCCL's ring factors and
  its ring latency on one node;
* :func:`switches`: the sizes at which NCCL's choice (:func:`commbook.measure.nccl_model.choose`)
  changes on a node, found exactly (to the byte) by bisection;
* :func:`picks_table`: those ranges on 8×H100 (NVLS on, and off), and 8×A100;
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ... import physics
from ...measure import nccl_model as M
from ...measure import nccl_tuning as T
from ...units import fmt_bytes, fmt_pct, fmt_rate, fmt_time, us
from ..tables import Table
from ..text import texts

__all__ = ["NCCL_TUNING_VERSION", "Protocol", "PROTOCOLS", "H100_NO_NVLS", "NODES", "protocol_table",
           "ring_busbw", "switches", "picks_table", "A100_RING_BUSBW"]

TX = texts("ch1")
K = "libraries_protocols."
_tx = TX.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


NCCL_TUNING_VERSION = T.NCCL_RELEASE
"""The NCCL release whose tuning model the numbers come from (2.29.2)."""

RING_FACTOR = {"LL": T.RING_LL_FACTOR, "LL128": T.RING_LL128_FACTOR, "Simple": 1.0}
"""NCCL's ring bandwidth factor per protocol (tuning.cc:304-305; Simple: none)."""


@dataclass(frozen=True)
class Protocol:
    """One NCCL wire protocol: ``line`` bytes written with data and flag together (``None``:
    the flag is not in the data, as in Simple), ``flag`` bytes of it; the latencies and the
    bandwidth factor are NCCL 2.29.2's for a ring over NVLink (:mod:`~commbook.measure.nccl_tuning`)."""

    name: str
    line: int | None
    flag: int
    sync: tuple[str, str]

    @property
    def index(self) -> int:
        return T.PROTOCOLS.index(self.name)

    @property
    def base(self) -> float:
        """baseLat of the ring (s), tuning.cc:143-148."""
        return T.BASE_LAT["ring"][self.index] * us

    @property
    def hop(self) -> float:
        """hwLat of one NVLink ring step (s), tuning.cc:149-168."""
        return T.HW_LAT["nvlink"]["ring"][self.index] * us

    @property
    def bw_factor(self) -> float:
        return RING_FACTOR[self.name]

    @property
    def payload(self) -> int | None:
        """Data bytes per line."""
        return None if self.line is None else self.line - self.flag

    @property
    def share(self) -> Fraction:
        """Payload share of what crosses the link: payload / line (1 for Simple)."""
        return Fraction(1) if self.line is None else Fraction(self.payload, self.line)

    def ceiling(self, beta: float) -> float:
        """The most payload a link of β bytes/s can carry with this protocol."""
        return float(self.share) * beta

    def ring_latency(self, p: int) -> float:
        """NCCL's fixed cost of a one-node ring all-reduce on p GPUs: baseLat + 2(p − 1) hwLat."""
        return self.base + 2 * (p - 1) * self.hop


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("LL", 8, 4, _two("each_8_bytes_4")),
    Protocol("LL128", 128, 8, _two("each_128_byte_line")),
    Protocol("Simple", None, 0, _two("large_chunks_a_memory")),
)}
"""NCCL's protocols.  LL: ncclLLFifoLine, data1 flag1 data2 flag2 of 4 bytes each, "flags
after data" with 8-byte atomicity (device.h:70-83); LL128: NCCL_LL128_LINESIZE 128 bytes of
16 uint64, 15 of them data (device.h:105-107)."""

H100_NO_NVLS = M.Node("H100", 4, 18, nvswitch=True, nvls=False, nics=8)
"""8×H100 with NVLS disabled (NCCL_NVLS_ENABLE=0, src/transport/nvls.cc:152)."""

NODES = {"h100": M.H100_8, "h100_no_nvls": H100_NO_NVLS, "a100": M.A100_8}
NODE_NAMES = {lang: {"h100": "8×H100", "h100_no_nvls": TX.get(K + "node_no_nvls", lang), "a100": "8×A100"}
              for lang in ("en", "zh")}
ALGO_NAMES = TX.labels(K + "algo_names.")


def ring_busbw(node: M.Node, proto: str) -> float:
    """Bus bandwidth (bytes/s) NCCL's model gives a ring all-reduce on ``node`` with
    ``proto``: its algorithm bandwidth (the table of :func:`commbook.measure.nccl_model.table`)
    × 2(p − 1)/p."""
    p = node.ngpus
    return M.table(node, "all_reduce")[("ring", proto)].bandwidth * 2 * (p - 1) / p


A100_RING_BUSBW = ring_busbw(M.A100_8, "Simple")
"""The model's ring Simple bus bandwidth on 8×A100: 12 channels × 20 GB/s = 240 GB/s."""


def protocol_table(node: M.Node = M.H100_8) -> Table:
    """The three protocols: line, payload share, how they synchronise, the ceiling on NVLink 4
    (H100) and NVLink 3 (A100), NCCL 2.29.2's ring factor, the ring bus bandwidth its model
    gives ``node`` and its ring start-up there."""
    nv4, nv3 = physics.generation("NVLink 4.0").beta, physics.generation("NVLink 3.0").beta
    p = node.ngpus
    rows = [{"proto": pr.name, "line": pr.line, "payload": pr.payload, "share": float(pr.share),
             "sync": "sync|" + pr.name, "nv4": pr.ceiling(nv4), "nv3": pr.ceiling(nv3),
             "factor": pr.bw_factor, "model": ring_busbw(node, pr.name), "lat": pr.ring_latency(p)}
            for pr in PROTOCOLS.values()]
    labels = {lang: {"sync|" + pr.name: pr.sync[i] for pr in PROTOCOLS.values()}
              for lang, i in (("en", 0), ("zh", 1))}
    g = M.graphs(node).ring
    ci = T.compcap_index(node.cc)
    v = NCCL_TUNING_VERSION
    return Table(
        key="ch1-lib-protocols",
        title=_tx("nccl_s_three_protocols"),
        columns=["proto", "line", "payload", "share", "sync", "nv4", "nv3", "factor", "model", "lat"],
        headers=_txs("h_proto", "h_line", "h_data", "h_share", "h_sync", "h_nv4", "h_nv3", "h_factor", "h_model", "h_lat",
                     p=p, gpu=node.gpu),
        rows=rows, labels=labels,
        formats={"share": fmt_pct, "nv4": lambda v: fmt_rate(v, 3), "nv3": lambda v: fmt_rate(v, 3), "factor": lambda f: f"{f:g}",
                 "model": lambda v: fmt_rate(v, 3), "lat": lambda t: fmt_time(t, 3)},
        notes=_txs("ceiling_payload_share_the", "line_layouts_src_include", nv4=fmt_rate(nv4, 3), nv3=fmt_rate(nv3, 3), v=v, v2=g[0], v3=g[1], v4=T.LL_MAX_BW[ci][0], v5=T.PER_CH_MAX_RING_LL128_BW[ci][0], p=p, nccl_tag=T.NCCL_TAG),
        meta={"nv4": nv4, "nv3": nv3, "p": p},
    )


def switches(node: M.Node, collective: str = "all_reduce", lo: int = 1, hi: int = 2 ** 36) -> list[dict]:
    """NCCL's pick on ``node`` from ``lo`` to ``hi`` bytes as ranges: ``start`` (the smallest
    size with this pick, bytes), ``end`` (the first size with the next pick, or ``None``),
    ``algo``, ``proto``.  Sizes are scanned at 32 points per doubling and every change is
    bisected to the byte with :func:`commbook.measure.nccl_model.choose` (NCCL's model time)."""
    def pick(n: int) -> tuple[str, str]:
        c = M.choose(node, collective, n)
        return c.algo, c.proto

    steps = int(32 * math.log2(hi / lo))
    grid = sorted({min(hi, int(round(lo * 2 ** (k / 32)))) for k in range(steps + 1)} | {hi})
    out, prev = [], None
    for a, b in zip([None] + grid[:-1], grid):
        now = pick(b)
        if now != prev:
            start = b
            if a is not None:
                while b - a > 1:                     # pick(a) == prev, pick(b) != prev
                    mid = (a + b) // 2
                    a, b = (mid, b) if pick(mid) == prev else (a, mid)
                start = b
                out[-1]["end"] = start
            out.append({"algo": now[0], "proto": now[1], "start": start, "end": None})
            prev = now
    return out


def picks_table(nodes: dict[str, M.Node] | None = None) -> Table:
    """NCCL's all-reduce pick by size on each node: the range, the pair, its latency and
    the bus bandwidth of its model (``time = latency + size/bandwidth``, tuning.cc:586-603;
    the least time wins, src/enqueue.cc:1935-1947)."""
    nodes = NODES if nodes is None else nodes
    rows = []
    for key, node in nodes.items():
        entries = M.table(node, "all_reduce")
        p = node.ngpus
        for s in switches(node):
            e = entries[(s["algo"], s["proto"])]
            rows.append({"node": key, "start": float(s["start"]), "end": None if s["end"] is None else float(s["end"]),
                         "algo": s["algo"], "proto": s["proto"], "lat": e.latency,
                         "bus": e.bandwidth * 2 * (p - 1) / p})
    labels = {lang: {**NODE_NAMES[lang], **ALGO_NAMES[lang]} for lang in ("en", "zh")}
    return Table(
        key="ch1-lib-picks",
        title=_tx("nccl_s_all_reduce", nccl_tuning_version=NCCL_TUNING_VERSION),
        columns=["node", "start", "end", "algo", "proto", "lat", "bus"],
        headers=_txs("node", "from", "below", "algorithm", "protocol", "model_latency", "model_bus_bandwidth"),
        rows=rows, labels=labels,
        formats={"start": fmt_bytes, "end": fmt_bytes, "lat": lambda t: fmt_time(t, 3), "bus": lambda v: fmt_rate(v, 3)},
        notes=_txs("for_every_algorithm_and"),
    )
