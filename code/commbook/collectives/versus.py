"""Every algorithm of a collective, run on a topology next to its closed form.

:func:`versus_closed_forms` runs each algorithm that has a closed form in (p, n, α, β) and
can run on the topology (:func:`~commbook.collectives.registry.names`), size only, and puts
the engine's time next to :func:`~commbook.collectives.registry.predict` on the topology's
link.  On one link class (a :class:`~commbook.topology.Switch`) the two agree for the
textbook algorithms; where they differ, the engine is the one that saw the topology.

>>> from commbook.hardware import NVLINK4
>>> from commbook.topology import Switch
>>> rows = versus_closed_forms(Switch(8, NVLINK4), "all_reduce", nbytes=2**26)
>>> ring = next(r for r in rows if r.algorithm == "ring")
>>> round(ring.ratio, 12)
1.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_choice, check_size
from ..hardware import Link
from ..topology import Topology
from ..units import fmt_time
from . import api, exchange
from .registry import names, predict

__all__ = ["Versus", "Comparison", "versus_closed_forms"]

_RUN = {"all_reduce": api.all_reduce, "broadcast": api.broadcast, "reduce": api.reduce,
        "reduce_scatter": api.reduce_scatter, "all_gather": api.all_gather,
        "all_to_all": exchange.all_to_all}


@dataclass(frozen=True)
class Versus:
    """One algorithm: the engine's time and the closed form's, in seconds.

    >>> v = Versus("ring", simulated_s=3.0e-3, closed_form_s=2.0e-3)
    >>> v.ratio
    1.5
    """

    algorithm: str
    simulated_s: float
    closed_form_s: float

    @property
    def ratio(self) -> float:
        """Simulated over closed-form time (1.0: they agree)."""
        return self.simulated_s / self.closed_form_s if self.closed_form_s else math.nan


class Comparison(tuple):
    """The rows of :func:`versus_closed_forms` (a tuple of :class:`Versus`) that print as a table.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> print(versus_closed_forms(Switch(4, NVLINK4), "all_gather", nbytes=4e6))
    algorithm   simulated  closed form  ratio
    ring         12.67 µs     12.67 µs  1.000
    rd           10.67 µs     10.67 µs  1.000
    """

    def __str__(self) -> str:
        width = max([len("algorithm")] + [len(r.algorithm) for r in self])
        lines = [f"{'algorithm':<{width}}  {'simulated':>10}  {'closed form':>11}  ratio"]
        lines += [f"{r.algorithm:<{width}}  {fmt_time(r.simulated_s):>10}  {fmt_time(r.closed_form_s):>11}"
                  f"  {r.ratio:.3f}" for r in self]
        return "\n".join(lines)

    __repr__ = __str__


def versus_closed_forms(topology: Topology, collective: str = "all_reduce", nbytes: float = 2 ** 26) -> Comparison:
    """Run every algorithm of ``collective`` with a closed form that runs on ``topology``
    on ``nbytes`` bytes (size only) and compare its time with the closed form on the
    topology's one link class (``topology.link``: a Switch, a Ring, a Torus, a SwitchTree);
    a topology of several link classes (a TwoLevel cluster) raises ``ValueError`` naming
    ``topology``: the closed forms assume one link.

    On one switch the engine and the closed forms agree; a two-level cluster is refused:

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import Switch, TwoLevel
    >>> sorted({round(r.ratio, 9) for r in versus_closed_forms(Switch(8, NVLINK4), "broadcast")})
    [1.0]
    >>> versus_closed_forms(TwoLevel(2, 8, NVLINK4, IB_NDR))
    Traceback (most recent call last):
    ValueError: topology: TwoLevel(2 nodes x 8 GPUs, ...) has more than one link class; ...
    """
    if not isinstance(topology, Topology):
        raise TypeError(f"topology must be a commbook.topology.Topology, got {type(topology).__name__}")
    check_choice(collective, "collective", tuple(_RUN))
    nbytes = check_size(nbytes, "nbytes")
    link = getattr(topology, "link", None)
    if not isinstance(link, Link) or getattr(topology, "uplink", link) is not link:
        raise ValueError(f"topology: {topology.name} has more than one link class; the closed forms "
                         "assume one (compare on one node's Switch)")
    rows = []
    for name in names(collective, with_closed_form=True, topology=topology):
        simulated = _RUN[collective](topology, nbytes=nbytes, algorithm=name).time
        rows.append(Versus(name, simulated, predict(collective, name, topology.p, nbytes, link.alpha, link.beta)))
    return Comparison(rows)
