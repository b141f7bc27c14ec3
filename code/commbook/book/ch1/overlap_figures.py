"""Chapter §1.8, the figures: DDP's buckets on the two-stream timeline for three bucket
caps (:func:`fig_bucket_timeline`) and the bucket-cap sweep for the two model shapes
(:func:`fig_bucket_sweep`), labelled in ``lang`` and drawn from :mod:`.overlap_buckets`.
Artists that carry data have a ``gid`` so that tests can read them back.
"""
from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...overlap import MANY_SMALL_LAYERS
from ...parallelism import DDP_BUCKET_CAP_BYTES
from ...units import MB, MiB, fmt_bytes, fmt_time, ms
from ..text import texts
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from .overlap_buckets import SHAPE_NAMES, SHAPES, TIMELINE_SHAPE, bucket_plans, layers_of, sweep_summary

__all__ = ["fig_bucket_timeline", "fig_bucket_sweep"]

T = texts("ch1")
K = "overlap_figures."

_LAB = T.labels(K + "lab.")

_BACKWARD = (PALETTE[1], "#F3C870")            # alternate layers
_WIRE = (PALETTE[4], "#E3B3CF")                # alternate buckets
_STALL = PALETTE[3]


def _draw_plan(ax, plan, shape, scale: float) -> None:
    layer = layers_of(shape)
    bucket_of = {}
    for j, bucket in enumerate(plan.buckets):
        for i in bucket:
            bucket_of[f"p{i}"] = j
    rows = {"compute": 1.0, "network": 0.0}
    for blk in plan.timeline.blocks:
        if blk.kind == "idle":
            continue
        key = blk.label.split()[-1]
        if blk.kind == "backward":
            color = _BACKWARD[layer[int(key[1:])] % 2]
        elif blk.kind == "allreduce":
            color = _WIRE[bucket_of[key] % 2]
        else:
            color = _STALL
        x0, w = blk.start / scale, blk.duration / scale
        ax.add_patch(Rectangle((x0, rows[blk.stream] - 0.32), w, 0.64, facecolor=color, edgecolor="white",
                               lw=0.4, gid=f"block:{blk.stream}:{blk.kind}:{blk.label}"))
        if blk.kind == "allreduce" and w > 0.11 * plan.step_time / scale:  # room for "128 MiB"
            n = plan.bucket_bytes[bucket_of[key]]
            ax.text(x0 + w / 2, 0.0, fmt_bytes(n, binary=True, digits=3), ha="center", va="center",
                    fontsize=SMALL_PT, color="black")
    ax.axvline(plan.step_time / scale, color="0.2", ls=":", lw=1.0, gid="step_end")
    ax.axvline(sum(shape.backward) / scale, color="0.5", ls="--", lw=0.8, gid="backward_end")
    ax.set_ylim(-0.6, 1.6)
    ax.set_yticks([0, 1])
    ax.grid(axis="y", visible=False)


def fig_bucket_timeline(lang: str = "en") -> Figure:
    """The backward pass of :data:`TIMELINE_SHAPE` with DDP's buckets at three caps
    (:func:`bucket_plans`): one block per tensor's backward (alternate layers shaded
    differently), one per bucket's all-reduce, the wait at the end in red.  Block gids are
    ``"block:<stream>:<kind>:<label>"`` with x in ms; ``"step_end"`` is the step time and
    ``"backward_end"`` the end of the compute."""
    plans = bucket_plans()
    best = sweep_summary(TIMELINE_SHAPE).cap_bytes
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 6.8))
        axes = fig.subplots(len(plans), 1, sharex=True)
        end = max(p.step_time for _, p in plans) / ms
        for k, (ax, (cap, plan)) in enumerate(zip(axes, plans)):
            _draw_plan(ax, plan, TIMELINE_SHAPE, ms)
            ax.set_yticklabels([L["network"], L["compute"]])
            tag = L["default"] if cap == DDP_BUCKET_CAP_BYTES else L["best"] if cap == best else L["largest"]
            ax.set_title(L["panel"].format(k="abc"[k], cap=f"{cap / MiB:g} MiB", n=len(plan.buckets),
                                           step=fmt_time(plan.step_time, 3)) + tag, loc="left")
            ax.set_xlim(0, end * 1.02)
        axes[-1].text(sum(TIMELINE_SHAPE.backward) / ms - 0.5, 1.45, L["backward_end"], ha="right", fontsize=SMALL_PT,
                      color="0.4")
        handles = [Rectangle((0, 0), 1, 1, facecolor=_BACKWARD[0]), Rectangle((0, 0), 1, 1, facecolor=_WIRE[0]),
                   Rectangle((0, 0), 1, 1, facecolor=_STALL)]
        fig.legend(handles, [L["key_backward"], L["key_wire"], L["wait"]], loc="outside lower center", ncol=1)
        axes[-1].set_xlabel(L["time"])
    return fig


def fig_bucket_sweep(lang: str = "en") -> Figure:
    """Step time against bucket cap for the two shapes (:data:`SHAPES`): the sweep (gid
    ``"sweep:<shape name>"``, x in bytes, y in ms), the backward alone (``"compute:…"``), the
    best cap (``"best:…"``), the recommended range (``"range:…"``, a span in bytes) and
    PyTorch's 25 MiB (``"default"``)."""
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.6))
        axes = fig.subplots(2, 1)  # stacked: each panel the column's width
        for k, (ax, shape) in enumerate(zip(axes, SHAPES)):
            s = sweep_summary(shape)
            caps = [c for c, _ in s.sweep]
            steps = [p.step_time / ms for _, p in s.sweep]
            color = PALETTE[0] if shape is MANY_SMALL_LAYERS else PALETTE[2]
            ax.plot(caps, steps, "o-", ms=3.5, color=color, gid=f"sweep:{shape.name}")
            ax.axhline(s.compute_s / ms, color="0.4", ls="--", lw=1.0, gid=f"compute:{shape.name}",
                       label=L["compute_only"].format(t=fmt_time(s.compute_s, 3)))
            lo, hi = s.range_bytes
            ax.axvspan(lo, hi, color=PALETTE[7], alpha=0.35, gid=f"range:{shape.name}",
                       label=L["range"].format(lo=f"{lo / MB:g}", hi=f"{hi / MB:g} MB"))
            ax.axvline(DDP_BUCKET_CAP_BYTES, color="0.3", ls=":", lw=1.0, gid="default", label=L["default_line"])
            ax.plot([s.cap_bytes], [s.step_s / ms], marker="*", ms=14, color=PALETTE[3], ls="none",
                    gid=f"best:{shape.name}",
                    label=L["best_mark"].format(cap=fmt_bytes(s.cap_bytes, digits=3), t=fmt_time(s.step_s, 3)))
            log_axis(ax, "x", "bytes")
            ax.set_xlabel(L["cap"])
            ax.set_ylabel(L["step"])
            ax.set_ylim(0, max(steps) * 1.12)
            ax.set_title(L["sweep_title"].format(k="ab"[k], name=SHAPE_NAMES[shape.name][lang]), loc="left")
            ax.legend(loc="lower right", fontsize=SMALL_PT)
    return fig
