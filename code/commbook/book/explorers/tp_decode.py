"""Explorer: the budget of one tensor-parallel decode step (P5 §7.1): roofline time
against the time of its all-reduces."""
from __future__ import annotations

from ... import llm
from ...hardware import IB_NDR, LINKS
from ...units import fmt_bytes, fmt_time
from ..p5.figures import fig_tp_decode_share
from ..plots import book_style
from ..tables import Table, algorithm_labels
from ..text import texts
from .base import Explorer, Result, choice, int_slider, link_choice, steps

__all__ = ["TPDecodeExplorer", "MODELS", "ALGORITHMS", "BATCHES", "GPUS_PER_NODE"]

T = texts("common")

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

    OFFLINE_GRID = {"batch": [32, 256], "tp": [2, 8, 32], "link": ["NVLINK4", "PCIE_GEN5"]}
    """The static page's grid (:mod:`.static`): every model, three batches, three TP degrees, two links."""

    def _controls(self):
        return {
            "model": choice(T.get("explorers.tp_decode.model", self.lang),
                            {k: m.name for k, m in MODELS.items()}, "LLAMA31_70B"),
            "batch": int_slider(T.get("explorers.tp_decode.batch", self.lang), 1, BATCHES[-1], 1),
            "tp": steps(T.get("explorers.tp_decode.tp", self.lang), [2 ** k for k in range(7)], 8),
            "link": link_choice(T.get("explorers.tp_decode.link", self.lang), "NVLINK4"),
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

        rows = [{"algorithm": a, "one_s": comm[a] / n_ar, "comm_s": comm[a], "step_s": step.time + comm[a],
                 "share_frac": share[a]} for a in ALGORITHMS]
        bound = T("explorers.tp_decode.memory_bound" if step.memory >= step.compute else "explorers.tp_decode.compute_bound")
        nodes = -(-tp // GPUS_PER_NODE)
        span = [T("explorers.tp_decode.span", tp=tp, nodes=nodes, ib=IB_NDR.name)] if nodes > 1 else \
            [T("explorers.tp_decode.tp1")] if tp == 1 else []
        note = {lang: T.get("explorers.tp_decode.note", lang, n_ar=n_ar, msg=fmt_bytes(msg), time=fmt_time(step.time, 4),
                            bound=bound[lang], memory=fmt_time(step.memory, 4), compute=fmt_time(step.compute, 4))
                for lang in ("en", "zh")}
        table = Table(
            key="explore-tp",
            title=T("explorers.tp_decode.title", model=m.name, tp=tp, batch=batch, link=lk.name),
            columns=["algorithm", "one_s", "comm_s", "step_s", "share_frac"],
            headers=T.pairs(*(f"explorers.tp_decode.{c}" for c in ("algorithm", "one", "comm", "step", "share"))),
            rows=rows,
            labels=algorithm_labels("all_reduce"),
            notes={lang: [note[lang], *(s[lang] for s in span)] for lang in ("en", "zh")},
            meta={"step": step.time, "comm": comm, "share": share, "message": msg, "allreduces": n_ar},
        )
        return Result(fig, table)
