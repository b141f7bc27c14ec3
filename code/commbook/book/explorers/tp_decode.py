"""Explorer: the budget of one tensor-parallel decode step (P5 §7.1): roofline time
against the time of its all-reduces."""
from __future__ import annotations

from ... import llm
from ...hardware import IB_NDR, LINKS
from ...units import fmt_bytes, fmt_pct, fmt_time
from ..p5.figures import fig_tp_decode_share
from ..plots import book_style
from ..tables import Table, algorithm_labels, bilingual, bilingual_notes
from .base import Explorer, Result, choice, int_slider, link_choice, steps

__all__ = ["TPDecodeExplorer", "MODELS", "ALGORITHMS", "BATCHES", "GPUS_PER_NODE"]

MODELS = {"LLAMA31_70B": llm.LLAMA31_70B, "LLAMA31_8B": llm.LLAMA31_8B, "LLAMA31_70B_MHA": llm.LLAMA31_70B_MHA}
"""The dense models of :mod:`commbook.llm` offered, by constant name."""

ALGORITHMS = ("ring", "rd")
"""The all-reduces compared, as in §7.1: ring and recursive doubling."""

BATCHES = tuple(2 ** k for k in range(9))
"""Batch sizes of the figure: 1 to 256."""

GPUS_PER_NODE = 8
"""A TP group up to this size is one node; wider ones span nodes, with IB NDR between
them (the defaults of :func:`commbook.llm.tp_comm_time`, which the figure uses)."""


class TPDecodeExplorer(Explorer):
    """One decode step of a dense model with tensor parallelism ``tp``: the roofline
    time :func:`commbook.llm.decode_step` against the time of its
    :func:`commbook.llm.tp_allreduces_per_step` all-reduces of
    :func:`commbook.llm.tp_message_bytes` each, :func:`commbook.llm.tp_comm_time` with
    the ring and with recursive doubling on ``link`` (no overlap).

    The figure is :func:`commbook.book.p5.figures.fig_tp_decode_share` at this link's α
    with ``batch`` marked; the table gives each algorithm's time per all-reduce, per step,
    and its share of the step.

    Controls: ``model`` (a key of :data:`MODELS`), ``batch`` (1 to 256), ``tp`` (1 to 64,
    powers of two), ``link`` (the link preset inside a node).
    """

    def _controls(self):
        return {
            "model": choice(self._text({"en": "model", "zh": "模型"}),
                            {k: m.name for k, m in MODELS.items()}, "LLAMA31_70B"),
            "batch": int_slider(self._text({"en": "batch B", "zh": "批大小 B"}), 1, BATCHES[-1], 1),
            "tp": steps(self._text({"en": "TP degree", "zh": "TP 并行度"}), [2 ** k for k in range(7)], 8),
            "link": link_choice(self._text({"en": "link in the node", "zh": "节点内链路"}), "NVLINK4"),
        }

    def compute(self, model: str, batch: int, tp: int, link: str) -> Result:
        m, lk = MODELS[model], LINKS[link]
        step = llm.decode_step(m, batch, tp=tp)
        n_ar, msg = llm.tp_allreduces_per_step(m), llm.tp_message_bytes(m, batch)
        comm = {a: llm.tp_comm_time(m, batch, tp, a, intra=lk, inter=IB_NDR, gpus_per_node=GPUS_PER_NODE)
                for a in ALGORITHMS}
        share = {a: comm[a] / (comm[a] + step.time) for a in ALGORITHMS}

        fig = fig_tp_decode_share(lang=self.lang, model=m, tp=tp, batches=BATCHES, alphas=(lk.alpha,), link=lk)
        ax = fig.axes[0]
        with book_style(self.lang):
            ax.axvline(batch, color="0.3", lw=0.9, ls="--", gid="batch")
            for a in ALGORITHMS:
                ax.plot([batch], [share[a]], marker="D", ms=7, color="0.1", ls="none", zorder=5, gid=f"at:{a}")

        rows = [{"algorithm": a, "one": comm[a] / n_ar, "comm": comm[a], "step": step.time + comm[a],
                 "share": share[a]} for a in ALGORITHMS]
        bound = ("memory-bound", "访存受限") if step.memory >= step.compute else ("compute-bound", "计算受限")
        nodes = -(-tp // GPUS_PER_NODE)
        span = ((f"TP = {tp} spans {nodes} nodes: each all-reduce is hierarchical, the named algorithm "
                 f"running across nodes over {IB_NDR.name}.",
                 f"TP = {tp} 跨 {nodes} 个节点：每次 all-reduce 走分层算法，表中的算法用在节点之间，"
                 f"走 {IB_NDR.name}。"),) if nodes > 1 else \
            (("TP = 1: one GPU holds the whole model and nothing is all-reduced.",
              "TP = 1：一块 GPU 装下整个模型，不需要 all-reduce。"),) if tp == 1 else ()
        table = Table(
            key="explore-tp",
            title=bilingual(f"{m.name}, TP = {tp}, B = {batch}: one decode step on {lk.name} (no overlap)",
                            f"{m.name}，TP = {tp}，B = {batch}：decode 一步，走 {lk.name}（不重叠）"),
            columns=["algorithm", "one", "comm", "step", "share"],
            headers={"en": ["all-reduce", "one all-reduce", "all-reduces of a step", "step with them",
                            "communication share"],
                     "zh": ["all-reduce 算法", "一次 all-reduce", "一步的全部 all-reduce", "加上通信的一步", "通信占比"]},
            rows=rows,
            formats={"one": lambda v: fmt_time(v, 4), "comm": lambda v: fmt_time(v, 4),
                     "step": lambda v: fmt_time(v, 4), "share": fmt_pct},
            labels=algorithm_labels("all_reduce"),
            notes=bilingual_notes(
                (f"{n_ar} all-reduces of B·d·2 = {fmt_bytes(msg)} per step. Roofline per GPU: "
                 f"{fmt_time(step.time, 4)}, {bound[0]} (memory {fmt_time(step.memory, 4)}, "
                 f"compute {fmt_time(step.compute, 4)}).",
                 f"每步 {n_ar} 次 all-reduce，每次 B·d·2 = {fmt_bytes(msg)}。每块 GPU 的 roofline："
                 f"{fmt_time(step.time, 4)}，{bound[1]}（访存 {fmt_time(step.memory, 4)}，"
                 f"计算 {fmt_time(step.compute, 4)}）。"), *span),
            meta={"step": step.time, "comm": comm, "share": share, "message": msg, "allreduces": n_ar},
        )
        return Result(fig, table)
