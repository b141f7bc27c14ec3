"""Explorer: the effective bandwidth n/T(n) of one link against message size (P5 §2)."""
from __future__ import annotations

import math

from ...cost import effective_bandwidth, half_bandwidth_point, p2p_time
from ...hardware import LINKS, Link
from ...units import GB, fmt_bytes, fmt_pct, fmt_rate, fmt_time, us
from ..plots import book_style, fig_effective_bandwidth
from ..tables import Table
from ..text import texts
from .base import Explorer, Result, link_choice, log_slider

__all__ = ["EffectiveBandwidthExplorer"]

T = texts("common")


class EffectiveBandwidthExplorer(Explorer):
    """Effective bandwidth of a link (a preset of :data:`commbook.hardware.LINKS`, or its
    α and β moved by hand) against message size, from
    :func:`commbook.book.plots.fig_effective_bandwidth`, with the message size ``n``
    marked; the table gives T(n) = :func:`commbook.cost.p2p_time`, n/T(n) and its share
    of β.  When α or β differ from the preset, the preset is drawn beside them.

    Controls: ``link`` (preset name; choosing one sets α and β to the preset's),
    ``alpha_us`` (µs), ``beta_gbps`` (GB/s), ``n`` (bytes).
    """

    OFFLINE_GRID = {"alpha_us": None, "beta_gbps": None}
    """The static page's grid (:mod:`.static`): every preset, six sizes; α and β follow the preset."""

    def _controls(self):
        start = LINKS["NVLINK4"]
        return {
            "link": link_choice(T.get("explorers.effbw.link", self.lang), "NVLINK4"),
            "alpha_us": log_slider("α (µs)", 0.1, 100, start.alpha / us),
            "beta_gbps": log_slider("β (GB/s)", 1, 2000, start.beta / GB),
            "n": log_slider(T.get("explorers.message_n", self.lang), 100, 1e9, 1e6, readout=".3s"),
        }

    def update(self, **values):
        """As :meth:`Explorer.update`; a new ``link`` also sets α and β to its values,
        unless they are given in the same call."""
        if "link" in values and values["link"] in LINKS:
            preset = LINKS[values["link"]]
            values = {"alpha_us": preset.alpha / us, "beta_gbps": preset.beta / GB, **values}
        return super().update(**values)

    def compute(self, link: str, alpha_us: float, beta_gbps: float, n: float) -> Result:
        preset = LINKS[link]
        alpha, beta = alpha_us * us, beta_gbps * GB
        if math.isclose(alpha, preset.alpha, rel_tol=1e-9) and math.isclose(beta, preset.beta, rel_tol=1e-9):
            links = [preset]
        else:
            a, b = fmt_time(alpha, 3), fmt_rate(beta, 3)
            name = T.get("explorers.effbw.set_here", self.lang, a=a, b=b)
            links = [Link(name, alpha, beta, "moved in the explorer"), preset]
        fig = fig_effective_bandwidth(links, lang=self.lang)
        ax = fig.axes[0]
        with book_style(self.lang):
            ax.axvline(n, color="0.3", lw=0.9, ls="--", gid="n")
            ax.plot([n], [effective_bandwidth(n, alpha, beta) / GB], marker="D", ms=7, ls="none",
                    color="0.1", gid="at_n")
        rows = []
        for lk in links:
            nh = half_bandwidth_point(lk.alpha, lk.beta)
            bw = effective_bandwidth(n, lk.alpha, lk.beta)
            rows.append({"link": lk.name, "alpha_s": lk.alpha, "beta_Bps": lk.beta, "n_half_bytes": nh,
                         "time_s": p2p_time(n, lk.alpha, lk.beta), "eff_bw_Bps": bw, "share_frac": bw / lk.beta})
        main = rows[0]
        ratio = n / main["n_half_bytes"] if main["n_half_bytes"] > 0 else math.inf
        how = f"{ratio:.3g} n½" if math.isfinite(ratio) else "∞ · n½"
        note = T("explorers.effbw.latency_note" if ratio < 1 else "explorers.effbw.bandwidth_note",
                 n=fmt_bytes(n), how=how, share=fmt_pct(main["share_frac"]))
        table = Table(
            key="explore-effbw",
            title=T("explorers.effbw.title", n=fmt_bytes(n)),
            columns=["link", "alpha_s", "beta_Bps", "n_half_bytes", "time_s", "eff_bw_Bps", "share_frac"],
            headers=T.pairs(*(f"explorers.effbw.{c}" for c in ("link", "alpha", "beta", "n_half", "time", "eff_bw",
                                                               "share"))),
            rows=rows,
            formats={"alpha_s": 3, "beta_Bps": 3, "eff_bw_Bps": 3},
            notes={lang: [note[lang]] for lang in note},
            meta={"n": n, "alpha": alpha, "beta": beta, "links": [lk.name for lk in links]},
        )
        return Result(fig, table)
