"""P5 §8, the libraries: the numbers its prose quotes, one typed result per section, each
field named with its unit (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``; counts are ints),
glued whole by :func:`commbook.book.glue.glue_fields`.  The closed forms are
:func:`commbook.collectives.t_formula`'s; the custom all-reduces are simulated once
(:func:`one_node_runs`), for the one-node table (:func:`one_node_table`) and the prose.
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Sequence

from ... import llm
from ...collectives import all_reduce, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, NVLINK4, NVLINK_H800, Link
from ...llm import DEEPSEEK_V3, LLAMA31_70B
from ...topology import Switch
from ...units import GB, MB, fmt_bytes, fmt_count, fmt_time
from ..tables import Table
from ..text import texts
from ..measuring_p5 import p5_curve
from .allreduce_numbers import sharp_gain

__all__ = ["Nccl", "nccl_numbers", "ONE_NODE", "NodeRun", "one_node_runs", "one_node_table",
           "Custom", "custom_numbers", "Sharp", "sharp_numbers", "H800", "h800_numbers", "Mpi", "mpi_numbers"]

T = texts("p5")

@dataclass(frozen=True)
class Nccl:
    """§8.1: NCCL's effective α on the measured tensor, and what it costs a decode step."""
    p: int
    nvl_alpha_s: float
    n_bytes: float
    alpha_eff_s: float
    alpha_x: float                 # over the link's α
    dec_n_bytes: float             # one decode token's all-reduce
    dec_s: float                   # ... at the effective α
    dec_lat_frac: float            # its start-up share
    calls: int
    step_s: float
    step_link_s: float             # at the link's α
    step_x: float


def nccl_numbers(p: int = 8, link: Link = NVLINK4) -> Nccl:
    """§5.6's effective α (:func:`commbook.book.measuring_p5.p5_curve`, the ring on ``link``) on
    a decode step of Llama 3.1 70B over ``p`` GPUs."""
    m = p5_curve(link).measured
    a_eff = m.blog_alpha_exact_s
    n = llm.tp_message_bytes(LLAMA31_70B, 1)
    calls = llm.tp_allreduces_per_step(LLAMA31_70B)
    t_eff, t_link = (t_formula("ring", p, n, a, link.beta) for a in (a_eff, link.alpha))
    return Nccl(p=p, nvl_alpha_s=link.alpha, n_bytes=m.blog_exact_bytes, alpha_eff_s=a_eff, alpha_x=a_eff / link.alpha,
                dec_n_bytes=n, dec_s=t_eff, dec_lat_frac=2 * (p - 1) * a_eff / t_eff, calls=calls,
                step_s=calls * t_eff, step_link_s=calls * t_link, step_x=t_eff / t_link)


ONE_NODE = ("ring", "rd", "one_shot", "two_shot")
"""The all-reduces of the one-node table, in its column order."""


@dataclass(frozen=True)
class NodeRun:
    """A decode batch of ``tokens`` tokens of Llama 3.1 70B on one NVSwitch node: its
    all-reduce message, each algorithm of :data:`ONE_NODE` simulated (``{algorithm}_s``;
    ``rounds``: its steps) and the fastest."""
    tokens: int
    n_bytes: float
    ring_s: float
    rd_s: float
    one_shot_s: float
    two_shot_s: float
    rounds: dict[str, int]
    best: str

    def time(self, algorithm: str) -> float:
        """The simulated time of ``algorithm`` (one of :data:`ONE_NODE`)."""
        return getattr(self, f"{algorithm}_s")


def one_node_runs(p: int = 8, link: Link = NVLINK4, tokens: Sequence[int] = (1, 8, 64, 4096)) -> tuple[NodeRun, ...]:
    """The algorithms of :data:`ONE_NODE` on ``Switch(p, link)`` for each batch of ``tokens``.

    >>> one_node_runs(tokens=(1,))[0].best
    'one_shot'
    """
    c = VirtualCluster(Switch(p, link))
    out = []
    for k in tokens:
        n = llm.tp_message_bytes(LLAMA31_70B, tokens=k)
        runs = {a: all_reduce(c, nbytes=n, algorithm=a) for a in ONE_NODE}
        out.append(NodeRun(k, n, *(r.time for r in runs.values()), {a: r.rounds for a, r in runs.items()},
                           min(ONE_NODE, key=lambda a: runs[a].time)))
    return tuple(out)


def one_node_table(runs: Sequence[NodeRun], p: int = 8, link: Link = NVLINK4) -> Table:
    """§8.2's table: per batch, the message, each all-reduce's time with its steps in
    brackets, and the fastest (``runs`` from :func:`one_node_runs` on ``p`` GPUs over ``link``).

    >>> one_node_table(one_node_runs(tokens=(1,))).cell(0, "n")
    '16.4 KB'
    """
    cols = ["tokens", "n", *ONE_NODE, "best"]
    steps = lambda v: f"{fmt_time(v[0], 4)} ({v[1]})"
    return Table(
        key="p5-one-node",
        title=T("libraries.one_node_title", p=p, link=link.name),
        columns=cols,
        headers=T.pairs(*(f"libraries.h_{c}" for c in cols)),
        rows=[{"tokens": r.tokens, "n": r.n_bytes, **{a: (r.time(a), r.rounds[a]) for a in ONE_NODE}, "best": r.best}
              for r in runs],
        formats={"tokens": fmt_count, "n": fmt_bytes, **{a: steps for a in ONE_NODE}},
        labels={lang: {a: T.get(f"libraries.h_{a}", lang) for a in ONE_NODE} for lang in ("en", "zh")},
    )


@dataclass(frozen=True)
class Custom:
    """§8.2: the custom all-reduces (one-shot, two-shot) against the ring, from the page's runs."""
    tokens_dec: int
    n_dec_bytes: float
    ring_dec_s: float
    os_dec_s: float
    dec_x: float                   # ring over one-shot, decode
    ring_rounds: int
    calls: int
    step_ring_s: float
    step_os_s: float
    step_mem_s: float              # the decode step's roofline
    step_share_frac: float         # the ring's all-reduces of it
    cross_bytes: float             # one-shot = two-shot
    tokens_big: int
    n_big_bytes: float
    os_big_x: float                # one-shot over two-shot, the largest message
    ts_gain_s: float               # ring minus two-shot, the largest message
    ts_gain_frac: float
    q_p: int
    q_cross_bytes: float


def _cross(p: int, link: Link) -> float:
    """Where one-shot, α + (p−1)n/β, meets two-shot, 2α + 2(p−1)/p · n/β."""
    return link.alpha * link.beta * p / ((p - 1) * (p - 2))


def custom_numbers(runs: Sequence[NodeRun], p: int = 8, link: Link = NVLINK4) -> Custom:
    """From :func:`one_node_runs`: the smallest batch (decode) and the largest.

    >>> custom_numbers(one_node_runs()).ring_rounds
    14
    """
    dec, big = runs[0], runs[-1]
    calls = llm.tp_allreduces_per_step(LLAMA31_70B)
    mem = llm.decode_step(LLAMA31_70B, dec.tokens, tp=p).time
    return Custom(tokens_dec=dec.tokens, n_dec_bytes=dec.n_bytes, ring_dec_s=dec.ring_s, os_dec_s=dec.one_shot_s,
                  dec_x=dec.ring_s / dec.one_shot_s, ring_rounds=dec.rounds["ring"], calls=calls,
                  step_ring_s=calls * dec.ring_s, step_os_s=calls * dec.one_shot_s, step_mem_s=mem,
                  step_share_frac=calls * dec.ring_s / mem, cross_bytes=_cross(p, link), tokens_big=big.tokens,
                  n_big_bytes=big.n_bytes, os_big_x=big.one_shot_s / big.two_shot_s,
                  ts_gain_s=big.ring_s - big.two_shot_s, ts_gain_frac=1 - big.two_shot_s / big.ring_s,
                  q_p=p // 2, q_cross_bytes=_cross(p // 2, link))


@dataclass(frozen=True)
class Sharp:
    """§8.2: NVLink SHARP (in-network reduction) against the ring, modelled and measured."""
    n_big_bytes: float
    model_x: float                 # ring over in-network, 1 GB
    bw_frac: float                 # the bandwidth terms alone: what the ring sends more
    measured_frac: float           # the measured busbw gain
    small_x: float                 # at a decode token's message
    q_n_bytes: float
    q_x: float
    q_ring_rounds: int
    q_lat_s: float
    q_bw_s: float


def sharp_numbers(n_dec: float, p: int = 8, link: Link = NVLINK4, n_big: float = 1 * GB,
                  q_n: float = 1 * MB) -> Sharp:
    a, b = link.alpha, link.beta
    x = lambda n, alpha=a: t_formula("ring", p, n, alpha, b) / t_formula("innet", p, n, alpha, b)
    return Sharp(n_big_bytes=n_big, model_x=x(n_big), bw_frac=x(n_big, 0.0) - 1, measured_frac=sharp_gain(),
                 small_x=x(n_dec), q_n_bytes=q_n, q_x=x(q_n), q_ring_rounds=2 * (p - 1), q_lat_s=2 * (p - 1) * a,
                 q_bw_s=t_formula("ring", p, q_n, 0.0, b))


@dataclass(frozen=True)
class H800:
    """§8.3: the H800's NVLink against InfiniBand, per FP8 token of DeepSeek-V3's dispatch."""
    nvl_Bps: float
    ib_Bps: float
    ratio_x: float
    token_bytes: float
    ib_s: float
    nvl_s: float
    fit: int                       # NVLink forwards that fit in one InfiniBand send


def h800_numbers(ib: Link = IB_NDR) -> H800:
    token = DEEPSEEK_V3.d_model * 1                     # one token's activations in FP8
    t_ib, t_nvl = token / ib.beta, token / NVLINK_H800.beta
    return H800(nvl_Bps=NVLINK_H800.beta, ib_Bps=ib.beta, ratio_x=NVLINK_H800.beta / ib.beta, token_bytes=token,
                ib_s=t_ib, nvl_s=t_nvl, fit=int(t_ib // t_nvl))


@dataclass(frozen=True)
class Mpi:
    """"Check yourself" of §8.4: Rabenseifner against the ring on ``p`` ranks."""
    p: int
    rab: int                       # rounds
    ring: int
    lb: float                      # bytes each rank must send, over n


def mpi_numbers(p: int = 1024) -> Mpi:
    return Mpi(p=p, rab=2 * (p.bit_length() - 1), ring=2 * (p - 1), lb=2 * (p - 1) / p)
