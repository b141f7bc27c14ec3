"""The machinery every explorer shares: controls, the callback, and two renderings.

An :class:`Explorer` holds ipywidgets controls (``explorer.controls``, by name) and one
pure callback, :meth:`Explorer.update`: it checks the values it is given, recomputes
with :mod:`commbook` (the subclass's :meth:`Explorer.compute`), and stores the result,
a :class:`Result` with a matplotlib figure and a :class:`~commbook.book.tables.Table`.
Moving a control calls ``update`` with the new value; calling ``update`` moves the
controls.  Nothing is computed anywhere else.

Displayed in a notebook, an explorer offers two renderings (``_repr_mimebundle_``): the
ipywidgets view (controls above the figure and table, recomputed on every change) for
a live Jupyter kernel, and a static ``text/html`` rendering of the current state (the
figure as an inline PNG, the table, and a sentence on how to run it live) for every
place without one.  The book's HTML builder drops the widget view (``_config.yml``:
``nb_mime_priority_overrides``), so the built page shows the static rendering and never
a control that does nothing.
"""
from __future__ import annotations

import base64
import functools
import html
import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure

from ...hardware import LINKS
from ..plots import figure_png
from ..tables import LANGS, Table
from ..text import texts

__all__ = ["Explorer", "Result", "LIVE_NOTE", "choice", "log_slider", "int_slider", "steps", "checkbox",
           "link_choice"]

PNG_DPI = 100
"""Resolution of the inline figure (the page's own figures use 300; an explorer's image
is redrawn on every change and embedded in the page, so it stays smaller)."""

LIVE_NOTE = texts("common")("explorers.live_note")
"""How to run an explorer live, in each language (HTML; shown under the static rendering)."""


@dataclass
class Result:
    """What one call of :meth:`Explorer.update` computed: a figure and a table (raw
    numbers in ``table.rows`` and ``table.meta``)."""

    figure: Figure
    table: Table

    @functools.cached_property
    def png(self) -> bytes:
        """The figure as PNG bytes (rendered once)."""
        return figure_png(self.figure, dpi=PNG_DPI)


# ------------------------------------------------------------------ controls
_STYLE = {"description_width": "initial"}


def choice(description: str, options: Mapping[Any, str], value: Any) -> widgets.Dropdown:
    """A drop-down over ``options`` (value -> label shown)."""
    return widgets.Dropdown(options=[(label, v) for v, label in options.items()], value=value,
                            description=description, style=_STYLE)


def link_choice(description: str, value: str) -> widgets.Dropdown:
    """A drop-down over the link presets of :data:`commbook.hardware.LINKS` (by constant name)."""
    return choice(description, {key: link.name for key, link in LINKS.items()}, value)


def log_slider(description: str, lo: float, hi: float, value: float, readout: str = ".3g",
               step: float = 0.05) -> widgets.FloatLogSlider:
    """A slider from ``lo`` to ``hi`` on a log scale (base 10)."""
    return widgets.FloatLogSlider(value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=step,
                                  description=description, readout_format=readout, style=_STYLE,
                                  continuous_update=False)


def int_slider(description: str, lo: int, hi: int, value: int) -> widgets.IntSlider:
    """An integer slider from ``lo`` to ``hi``."""
    return widgets.IntSlider(value=value, min=lo, max=hi, description=description, style=_STYLE,
                             continuous_update=False)


def steps(description: str, options: Sequence[Any], value: Any) -> widgets.SelectionSlider:
    """A slider over a few given values (powers of two, say)."""
    return widgets.SelectionSlider(options=list(options), value=value, description=description, style=_STYLE,
                                   continuous_update=False)


def checkbox(description: str, value: bool) -> widgets.Checkbox:
    """A yes/no box."""
    return widgets.Checkbox(value=value, description=description, style=_STYLE, indent=False)


def _check_value(name: str, control: widgets.Widget, value: Any) -> Any:
    """``value`` if ``control`` can show it, else a ``ValueError`` that names the control
    and what it accepts (a slider would silently clamp it, a drop-down refuse it)."""
    if isinstance(control, (widgets.Dropdown, widgets.SelectionSlider)):
        if value not in control._options_values:
            raise ValueError(f"{name} must be one of {list(control._options_values)}, got {value!r}")
        return value
    if isinstance(control, widgets.Checkbox):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return value
    if isinstance(control, widgets.IntSlider):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        lo, hi = control.min, control.max
    elif isinstance(control, widgets.FloatLogSlider):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        lo, hi = control.base ** control.min, control.base ** control.max
    else:  # pragma: no cover - a subclass declared a control this module does not make
        raise TypeError(f"{name}: unsupported control {type(control).__name__}")
    if not lo * (1 - 1e-12) <= value <= hi * (1 + 1e-12):
        raise ValueError(f"{name} must be between {lo:g} and {hi:g}, got {value!r}")
    return type(control.value)(value)


# ------------------------------------------------------------------ the explorer
class Explorer:
    """Base class: subclasses define :meth:`_controls` (name -> control, in display order,
    described in ``self.lang``) and :meth:`compute` (the values -> a :class:`Result`).

    Parameters
    ----------
    lang : "zh" or "en"
        Language of the controls, the figure and the table.
    **values
        Starting values of some controls (default: each control's own).
    """

    def __init__(self, lang: str = "en", **values: Any) -> None:
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {list(LANGS)}, got {lang!r}")
        self.lang = lang
        self.controls: dict[str, widgets.Widget] = self._controls()
        self.values: dict[str, Any] = {k: c.value for k, c in self.controls.items()}
        self.result: Result | None = None
        self._syncing = False
        self._quiet = False            # True while precomputing states (static.py): no view redraw
        self._view = widgets.HTML()
        for name, control in self.controls.items():
            control.observe(functools.partial(self._on_control, name), names="value")
        self.widget = widgets.VBox([
            widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")),
            self._view,
        ])
        self.update(**values)

    # -------------------------------------------------------------- subclass API
    def _controls(self) -> dict[str, widgets.Widget]:
        raise NotImplementedError

    def compute(self, **values: Any) -> Result:
        """Recompute from a full set of control values (one per control)."""
        raise NotImplementedError

    # -------------------------------------------------------------- the callback
    def update(self, **values: Any) -> Result:
        """Set some controls' values, recompute, and return the new :class:`Result`
        (also kept in ``self.result``).  An unknown name, a value a control cannot show
        or a combination commbook rejects raises ``ValueError`` and changes nothing."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no control {', '.join(map(repr, unknown))}; "
                             f"valid: {', '.join(self.controls)}")
        new = dict(self.values)
        new.update({k: _check_value(k, self.controls[k], v) for k, v in values.items()})
        result = self.compute(**new)
        self.values, self.result = new, result
        self._syncing = True
        try:
            for name, control in self.controls.items():
                if control.value != new[name]:
                    control.value = new[name]
        finally:
            self._syncing = False
        if not self._quiet:
            self._view.value = self.to_html(live=True)
        return result

    def _on_control(self, name: str, change: Mapping[str, Any]) -> None:
        """A control moved: recompute, or show why these values cannot be computed."""
        if self._syncing:
            return
        try:
            self.update(**{name: change["new"]})
        except ValueError as err:
            self._view.value = f'<p class="commbook-explorer-error">{html.escape(str(err))}</p>'

    # -------------------------------------------------------------- renderings
    def to_html(self, live: bool = False) -> str:
        """The current state as HTML: the figure (inline PNG), the table and, unless
        ``live``, the sentence on how to run the explorer live."""
        r = self.result
        b64 = base64.b64encode(r.png).decode("ascii")
        title = html.escape(r.table.title[self.lang], quote=True)
        out = ['<div class="commbook-explorer">',
               f'<img src="data:image/png;base64,{b64}" alt="{title}" style="max-width:100%;height:auto">',
               r.table.to_html(self.lang)]
        if not live:
            out.append(f'<p class="commbook-explorer-live">{LIVE_NOTE[self.lang]}</p>')
        return "\n".join(out + ["</div>"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The ipywidgets view for a live kernel, plus a static ``text/html`` rendering and
        the table as ``text/plain`` for every other place."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/html"] = self.to_html()
        bundle["text/plain"] = self.result.table.to_text(self.lang)
        return bundle
