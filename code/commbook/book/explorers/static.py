"""An explorer on the static page: its states precomputed over a grid of its controls.

A built page has no kernel.  :func:`offline` wraps an :class:`~.base.Explorer` so that the
page carries, besides the static rendering of its default state (kept for print and for a
reader without JavaScript), a JSON payload: the controls (labels and option names in the
explorer's language), and for every point of a modest grid of their values what
:meth:`~.base.Explorer.update` computes there: the plotted series of the figure (read
from the matplotlib figure, see :func:`figure_data`) and the table as HTML.
``_static/commbook-interactive.js`` draws the controls (native ``<select>`` and
``<input type=range>`` with ``<label>``) and redraws the chart with Vega-Lite (served
from the site, ``_ext/commbook_interactive.py``) on every change.  In a live kernel the
wrapper shows the explorer's own ipywidgets view.

The grid: a drop-down, a checkbox and a stepped slider take every value (a stepped slider
with more than :data:`MAX_STEPS` options a spread of them), a free slider
:data:`SLIDER_STEPS` values spread over its range (log-spaced on a log slider); each
grid holds the control's starting value.  ``grid=`` (by default the explorer's
``OFFLINE_GRID``) replaces a control's values; a control mapped to ``None`` is not
offered, and keeps the value the explorer gives it.

The states are computed when the page is built (``_ext/commbook_interactive.py`` sets
:data:`BUILD_ENV` for the page kernels), not in a reader's kernel, which shows the live
ipywidgets view.
"""
from __future__ import annotations

import html
import itertools
import json
import math
import os
from typing import Any, Mapping, Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from ...units import fmt_bytes, fmt_number
from ..text import texts
from .base import Explorer, _check_value

__all__ = ["offline", "OfflineExplorer", "control_grid", "figure_data", "MAX_STATES", "SLIDER_STEPS"]

BUILD_ENV = "COMMBOOK_OFFLINE_STATES"
"""Set (to ``1``) by the book's Sphinx build, whose page kernels inherit it: only then does a
page cell ``offline(...)`` compute and embed its states."""
OFFLINE_NOTE = texts("common")("explorers.offline_note")
"""Under the view on the page: where its numbers come from, and how to try other values (HTML)."""
SLIDER_STEPS = 5
"""Values of a free slider on the offline grid."""
MAX_STEPS = 9
"""At most this many values of a stepped slider (spread, ends and start kept)."""
MAX_STATES = 400
"""A grid with more states than this is refused (the page would grow past a few hundred KB)."""
MAX_POINTS = 40
"""A curve keeps at most this many of its points (evenly spread over its indices, ends kept)."""
DIGITS = 5
"""Significant digits of the plotted numbers in the payload."""


def _round(x: float) -> float | None:
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.{DIGITS}g}")


def _spread(values: Sequence[Any], k: int, keep: Any) -> list[Any]:
    """At most ``k`` of ``values`` (in order), spread evenly, the ends and ``keep`` kept."""
    values = list(values)
    if len(values) <= k:
        return values
    idx = {round(i) for i in np.linspace(0, len(values) - 1, k)}
    idx.add(values.index(keep))
    return [values[i] for i in sorted(idx)]


def control_grid(explorer: Explorer, grid: Mapping[str, Sequence[Any] | None] | None = None) -> dict[str, list]:
    """The values each offered control takes on the offline grid (see the module's
    docstring); every value is checked as :meth:`~.base.Explorer.update` checks it."""
    grid = dict(grid or {})
    unknown = sorted(set(grid) - set(explorer.controls))
    if unknown:
        raise ValueError(f"grid: {type(explorer).__name__} has no control {', '.join(map(repr, unknown))}; "
                         f"valid: {', '.join(explorer.controls)}")
    out: dict[str, list] = {}
    for name, control in explorer.controls.items():
        start = explorer.values[name]
        if name in grid:
            if grid[name] is None:
                continue
            values = list(grid[name])
            if not values:
                raise ValueError(f"grid[{name!r}] must hold at least one value")
        elif isinstance(control, widgets.Dropdown):
            values = list(control._options_values)
        elif isinstance(control, widgets.SelectionSlider):
            values = _spread(control._options_values, MAX_STEPS, start)
        elif isinstance(control, widgets.Checkbox):
            values = [False, True]
        elif isinstance(control, widgets.IntSlider):
            values = sorted({int(round(v)) for v in np.linspace(control.min, control.max, SLIDER_STEPS)} | {start})
        elif isinstance(control, widgets.FloatLogSlider):
            spread = np.logspace(control.min, control.max, SLIDER_STEPS, base=control.base)
            values = sorted({float(f"{v:.3g}") for v in spread[1:-1]} | {float(spread[0]), float(spread[-1]), start})
        else:  # pragma: no cover - base.py makes no other control
            raise TypeError(f"{name}: unsupported control {type(control).__name__}")
        values = [_check_value(f"grid[{name!r}]", control, v) for v in values]
        if repr(start) not in map(repr, values):   # the starting state is always on the grid
            values.append(start)
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                values.sort()
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"grid[{name!r}] repeats a value: {values!r}")
        out[name] = values
    return out


def _readout(control: widgets.Widget, value: Any) -> str:
    """How a control shows ``value`` (a drop-down its option's label)."""
    if isinstance(control, widgets.Dropdown):
        return dict(zip(control._options_values, control._options_labels))[value]
    if isinstance(control, widgets.Checkbox):
        return "✓" if value else "✗"
    if isinstance(control, widgets.FloatLogSlider):
        return fmt_bytes(value) if control.readout_format.endswith("s") else fmt_number(value, 3)
    return str(value)


# ------------------------------------------------------------------ the figure as data
_DASH = {"-": None, "solid": None, "--": [6, 3], "dashed": [6, 3], ":": [1.5, 2.5], "dotted": [1.5, 2.5],
         "-.": [6, 2, 1.5, 2], "dashdot": [6, 2, 1.5, 2]}
_SHAPE = {"o": "circle", "s": "square", "D": "diamond", "d": "diamond", "^": "triangle-up",
          "v": "triangle-down", ">": "triangle-right", "<": "triangle-left", "x": "cross", "+": "cross",
          "*": "M0,-1L0.24,-0.33L0.95,-0.31L0.38,0.12L0.59,0.81L0,0.4L-0.59,0.81L-0.38,0.12L-0.95,-0.31L-0.24,-0.33Z",
          "|": "M0,-1L0,1", "_": "stroke", ".": "circle"}


def _colour(c: Any) -> str:
    return to_hex(c, keep_alpha=False)


def _ticks(axis: Any, lo: float, hi: float) -> tuple[list[float], list[str]]:
    """The major ticks inside ``[lo, hi]`` and their labels, as matplotlib writes them."""
    locs = [float(t) for t in axis.get_major_locator()() if min(lo, hi) * (1 - 1e-9) <= t <= max(lo, hi) * (1 + 1e-9)]
    labels = axis.get_major_formatter().format_ticks(locs) if locs else []
    return [_round(t) for t in locs], [str(s) for s in labels]


def _corners(x: np.ndarray, y: np.ndarray, tol: float = 1e-3) -> np.ndarray:
    """The indices of a polyline's ends and corners: a point on the straight segment
    between the points kept around it (within ``tol`` of the drawing's size) is dropped."""
    size = max(float(np.ptp(x)), float(np.ptp(y)), 1e-12)
    keep = [0]
    for i in range(1, x.size - 1):
        a, b = keep[-1], i + 1
        dx, dy = x[b] - x[a], y[b] - y[a]
        dist = abs(dx * (y[i] - y[a]) - dy * (x[i] - x[a])) / max(math.hypot(dx, dy), 1e-12)
        if dist > tol * size:
            keep.append(i)
    if x.size > 1:
        keep.append(x.size - 1)
    return np.array(keep, dtype=int)


def _line(line: Line2D, ax: Any, thin: bool) -> dict[str, Any] | None:
    """One curve or one rule (axhline/axvline) of ``ax``, or ``None`` for nothing drawn."""
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    if x.size == 0 or not line.get_visible():
        return None
    out: dict[str, Any] = {"color": _colour(line.get_color()), "width": float(line.get_linewidth()),
                           "alpha": line.get_alpha() if line.get_alpha() is not None else 1}
    label = line.get_label()
    if label and not label.startswith("_"):
        out["label"] = label
    if line.get_gid():
        out["gid"] = line.get_gid()
    if line.get_transform() != ax.transData:   # axhline / axvline: one coordinate in axes units
        if np.all(y == y[0]) and set(x) <= {0.0, 1.0}:
            return {**out, "rule": "y", "at": _round(y[0]), "dash": _DASH.get(line.get_linestyle())}
        if np.all(x == x[0]) and set(y) <= {0.0, 1.0}:
            return {**out, "rule": "x", "at": _round(x[0]), "dash": _DASH.get(line.get_linestyle())}
        return None
    idx = _corners(x, y) if thin and not ax.axison else np.arange(x.size)
    if thin and idx.size > MAX_POINTS:
        idx = np.unique(np.round(np.linspace(0, x.size - 1, MAX_POINTS)).astype(int))
    out["x"] = [_round(v) for v in x[idx]]
    out["y"] = [_round(v) for v in y[idx]]
    ls = line.get_linestyle()
    if ls not in ("None", "none", "", " "):
        out["dash"] = _DASH.get(ls)
    marker = line.get_marker()
    if marker not in (None, "None", "none", "", " ") and marker in _SHAPE:
        out["marker"] = _SHAPE[marker]
        out["size"] = float(line.get_markersize())
    return out


def figure_data(fig: Figure, thin: bool = True) -> list[dict[str, Any]]:
    """What ``fig`` plots, axes by axes: title, each axis's label, scale, limits and
    ticks, the curves and markers (:class:`~matplotlib.lines.Line2D`, at most
    :data:`MAX_POINTS` points each when ``thin``), the horizontal and vertical rules and
    the bars (rectangles of ``ax.bar``).  Text drawn inside the axes is not kept."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        item: dict[str, Any] = {"title": ax.get_title(), "series": [], "bars": []}
        if not ax.axison:                          # a diagram: no axes drawn, one unit is one unit
            item["diagram"] = True
        for key, axis, lim, scale, lab in (("x", ax.xaxis, ax.get_xlim(), ax.get_xscale(), ax.get_xlabel()),
                                          ("y", ax.yaxis, ax.get_ylim(), ax.get_yscale(), ax.get_ylabel())):
            ticks, labels = _ticks(axis, *lim)
            item[key] = {"label": lab, "scale": "log" if scale == "log" else "linear",
                         "lim": [_round(v) for v in lim], "ticks": ticks, "tick_labels": labels}
        for line in ax.get_lines():
            got = _line(line, ax, thin)
            if got is not None:
                item["series"].append(got)
        for container in ax.containers:
            patches = getattr(container, "patches", None)
            if not patches:
                continue
            label = container.get_label()
            for p in patches:
                x0, y0, w, h = p.get_x(), p.get_y(), p.get_width(), p.get_height()
                item["bars"].append({"x": _round(x0), "x2": _round(x0 + w), "y": _round(y0), "y2": _round(y0 + h),
                                     "color": _colour(p.get_facecolor()),
                                     **({"label": label} if label and not label.startswith("_") else {})})
        if item.get("diagram"):
            item["bars"] += _diagram_marks(ax)
        if item["series"] or item["bars"]:
            out.append(item)
    return out


def _diagram_marks(ax: Any) -> list[dict[str, Any]]:
    """A diagram's devices (scatter points), arrows (straight, from tail to head) and
    labels (text at a data position), as marks."""
    marks: list[dict[str, Any]] = []
    for coll in ax.collections:
        if isinstance(coll, PathCollection):
            faces = coll.get_facecolors()
            sizes = coll.get_sizes()
            for i, (x, y) in enumerate(coll.get_offsets()):
                marks.append({"point": [_round(x), _round(y)],
                              "color": _colour(faces[i % len(faces)]) if len(faces) else "#444444",
                              "size": float(sizes[i % len(sizes)]) if len(sizes) else 36.0})
    for patch in ax.patches:
        if isinstance(patch, FancyArrowPatch) and getattr(patch, "_posA_posB", None):
            (x0, y0), (x1, y1) = patch._posA_posB
            marks.append({"arrow": [_round(x0), _round(y0), _round(x1), _round(y1)],
                          "color": _colour(patch.get_edgecolor())})
    for text in ax.texts:
        if text.get_visible() and text.get_text() and text.get_transform() == ax.transData:
            x, y = text.get_position()
            marks.append({"text": text.get_text(), "at": [_round(x), _round(y)], "color": _colour(text.get_color())})
    return marks


# ------------------------------------------------------------------ the wrapper
class OfflineExplorer:
    """An explorer and its precomputed states (see the module's docstring).

    ``payload`` is what the page embeds: ``controls`` (name, label, kind, the options'
    labels, the starting index), ``states`` (key: the options' indices joined by ``-``;
    value: ``[[[axes, [series...], [bars...]], ...], table]``, indices into the pools
    ``axes``, ``series``, ``bars`` and ``tables``, where each distinct item is kept once).
    """

    def __init__(self, explorer: Explorer, grid: Mapping[str, Sequence[Any] | None] | None = None,
                 max_states: int = MAX_STATES) -> None:
        if not isinstance(explorer, Explorer):
            raise TypeError(f"explorer must be an Explorer, got {type(explorer).__name__}")
        self.explorer = explorer
        self.start = dict(explorer.values)
        self.grid = control_grid(explorer, getattr(explorer, "OFFLINE_GRID", None) if grid is None else grid)
        count = math.prod(len(v) for v in self.grid.values())
        if count > max_states:
            raise ValueError(f"grid of {type(explorer).__name__} has {count} states, more than "
                             f"max_states={max_states}: give fewer values in grid= ({ {k: len(v) for k, v in self.grid.items()} })")
        self._static_html = explorer.to_html()
        self._static_text = explorer.result.table.to_text(explorer.lang)
        self._states_cache: dict[str, Any] | None = None

    @property
    def payload(self) -> dict[str, Any]:
        """The states (computed on first use; the explorer is then back at its start)."""
        if self._states_cache is None:
            self._states_cache = self._compute()
            self.explorer.values = dict(self.start)
            self.explorer.update()
        return self._states_cache

    def state_values(self, key: str) -> dict[str, Any]:
        """The control values of one state of the payload (by its key)."""
        idx = [int(i) for i in key.split("-")] if key else []
        if len(idx) != len(self.grid):
            raise ValueError(f"state key {key!r} must hold {len(self.grid)} indices")
        return {name: values[i] for (name, values), i in zip(self.grid.items(), idx)}

    def _compute(self) -> dict[str, Any]:
        """The payload: every state of the grid, each from the starting values (so a control
        left out of the grid keeps what the explorer gives it), and the controls.  Each axes,
        curve, bar and table is kept once (``pools``) and a state names them by index."""
        ex, names = self.explorer, list(self.grid)
        pools: dict[str, dict[str, int]] = {"axes": {}, "series": {}, "bars": {}, "tables": {}}
        key = lambda pool, item: pools[pool].setdefault(
            item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":")),
            len(pools[pool]))
        states: dict[str, list] = {}
        ex._quiet = True
        try:
            for idx in itertools.product(*(range(len(self.grid[n])) for n in names)):
                ex.values = dict(self.start)
                result = ex.update(**{n: self.grid[n][i] for n, i in zip(names, idx)})
                axes = []
                for ax in figure_data(result.figure):
                    series, bars = ax.pop("series"), ax.pop("bars")
                    axes.append([key("axes", ax), [key("series", s) for s in series], [key("bars", b) for b in bars]])
                result.figure.clear()
                states["-".join(map(str, idx))] = [axes, key("tables", result.table.to_html(ex.lang))]
        finally:
            ex._quiet = False
        controls = []
        for name in names:
            control, values = ex.controls[name], self.grid[name]
            kind = "select" if isinstance(control, (widgets.Dropdown, widgets.Checkbox)) else "range"
            controls.append({"name": name, "label": control.description, "kind": kind,
                             "labels": [_readout(control, v) for v in values],
                             "start": [repr(v) for v in values].index(repr(self.start[name]))})
        out = {"explorer": type(ex).__name__, "lang": ex.lang, "controls": controls, "states": states,
               "note": OFFLINE_NOTE[ex.lang]}
        for pool in ("axes", "series", "bars"):
            out[pool] = [json.loads(item) for item in pools[pool]]
        out["tables"] = list(pools["tables"])
        return out

    def payload_json(self) -> str:
        """The payload as compact JSON, safe inside ``<script type="application/json">``."""
        text = json.dumps(self.payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.replace("</", "<\\/")

    def to_html(self) -> str:
        """The interactive container: the payload, where the script draws the view, and the
        static rendering (shown without JavaScript and in print)."""
        name = html.escape(type(self.explorer).__name__)
        return (f'<div class="commbook-interactive" data-explorer="{name}" lang="{"zh-Hans" if self.explorer.lang == "zh" else "en"}">\n'
                f'<script type="application/json" class="commbook-interactive-data">{self.payload_json()}</script>\n'
                f'<div class="commbook-interactive-static">\n{self._static_html}\n</div>\n</div>')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The explorer's own bundle (ipywidgets view, static HTML, text); during the book's
        build (:data:`BUILD_ENV` set, see ``_ext/commbook_interactive.py``) the HTML is the
        interactive container with the precomputed states.  A reader's live kernel thus
        never waits for the grid."""
        bundle = self.explorer.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/html"] = self.to_html() if os.environ.get(BUILD_ENV) else self._static_html
        bundle["text/plain"] = self._static_text
        return bundle


offline = OfflineExplorer
"""``offline(explorer, grid=None, max_states=MAX_STATES)``: ``explorer`` with its states
precomputed over the offline grid (``grid=`` replaces some controls' values; ``None``
leaves a control out), for the static page."""
