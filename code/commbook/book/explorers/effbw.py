"""Explorer: the effective bandwidth n/T(n) of one link against message size (P5 §2)."""
from __future__ import annotations

import math

from ...cost import effective_bandwidth, half_bandwidth_point, p2p_time
from ...hardware import LINKS, Link
from ...units import GB, fmt_bytes, fmt_pct, fmt_rate, fmt_time, us
from ..plots import book_style, fig_effective_bandwidth
from ..tables import Table, bilingual
from .base import Explorer, Result, link_choice, log_slider

__all__ = ["EffectiveBandwidthExplorer"]


class EffectiveBandwidthExplorer(Explorer):
    """Effective bandwidth of a link (a preset of :data:`commbook.hardware.LINKS`, or its
    α and β moved by hand) against message size, from
    :func:`commbook.book.plots.fig_effective_bandwidth`, with the message size ``n``
    marked; the table gives T(n) = :func:`commbook.cost.p2p_time`, n/T(n) and its share
    of β.  When α or β differ from the preset, the preset is drawn beside them.

    Controls: ``link`` (preset name; choosing one sets α and β to the preset's),
    ``alpha_us`` (µs), ``beta_gbps`` (GB/s), ``n`` (bytes).
    """

    def _controls(self):
        start = LINKS["NVLINK4"]
        return {
            "link": link_choice(self._text({"en": "link", "zh": "链路"}), "NVLINK4"),
            "alpha_us": log_slider("α (µs)", 0.1, 100, start.alpha / us),
            "beta_gbps": log_slider("β (GB/s)", 1, 2000, start.beta / GB),
            "n": log_slider(self._text({"en": "message n (B)", "zh": "消息 n（B）"}), 100, 1e9, 1e6,
                            readout=".3s"),
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
            name = self._text({"en": f"set here: α = {a}, β = {b}", "zh": f"此处设定：α = {a}，β = {b}"})
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
            rows.append({"link": lk.name, "alpha": lk.alpha, "beta": lk.beta, "n_half": nh,
                         "time": p2p_time(n, lk.alpha, lk.beta), "eff_bw": bw, "share": bw / lk.beta})
        main = rows[0]
        ratio = n / main["n_half"] if main["n_half"] > 0 else math.inf
        bound = {"en": "latency-bound" if ratio < 1 else "bandwidth-bound",
                 "zh": "受延迟限制" if ratio < 1 else "受带宽限制"}
        how = f"{ratio:.3g} n½" if math.isfinite(ratio) else "∞ · n½"
        note = {"en": f"At n = {fmt_bytes(n)} the link is {bound['en']}: n = {how}, so it gets "
                      f"{fmt_pct(main['share'])} of β.",
                "zh": f"n = {fmt_bytes(n)} 时这条链路{bound['zh']}：n = {how}，"
                      f"只得到 β 的 {fmt_pct(main['share'])}。" if ratio < 1 else
                      f"n = {fmt_bytes(n)} 时这条链路{bound['zh']}：n = {how}，能得到 β 的 "
                      f"{fmt_pct(main['share'])}。"}
        table = Table(
            key="explore-effbw",
            title=bilingual(f"effective bandwidth at n = {fmt_bytes(n)}", f"n = {fmt_bytes(n)} 时的有效带宽"),
            columns=["link", "alpha", "beta", "n_half", "time", "eff_bw", "share"],
            headers={"en": ["link", "α", "β", "n½ = αβ", "T(n) = α + n/β", "n/T(n)", "share of β"],
                     "zh": ["链路", "α", "β", "n½ = αβ", "T(n) = α + n/β", "n/T(n)", "占 β"]},
            rows=rows,
            formats={"alpha": lambda v: fmt_time(v, 3), "beta": lambda v: fmt_rate(v, 3), "n_half": fmt_bytes,
                     "time": lambda v: fmt_time(v, 4), "eff_bw": lambda v: fmt_rate(v, 3), "share": fmt_pct},
            notes={lang: [note[lang]] for lang in note},
            meta={"n": n, "alpha": alpha, "beta": beta, "links": [lk.name for lk in links]},
        )
        return Result(fig, table)
