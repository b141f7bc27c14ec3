"""Interactive explorers for the P5 pages: ipywidgets controls that recompute a figure and
a table with :mod:`commbook` on every change, and show a static rendering where no
kernel runs (see :mod:`.base`).

One module per explorer: :mod:`.effbw` (effective bandwidth of a link, §2),
:mod:`.race` (the all-reduce race, §5), :mod:`.mapping` (a ring mapped onto a torus, §6.1),
:mod:`.hierarchy` (hierarchical against flat all-reduce, §6.3), :mod:`.tp_decode` (the
TP decode budget, §7.1); for chapter 1, :mod:`.crossover` (Figure 7, where the ring
takes over, §1.4) and :mod:`.payoff` (when compression pays, §1.6).  :mod:`.static`
precomputes an explorer's states for the static page (:func:`offline`).
"""
from .base import Explorer, Result
from .effbw import EffectiveBandwidthExplorer
from .race import AllReduceRaceExplorer
from .mapping import RingMappingExplorer
from .hierarchy import HierarchyExplorer
from .tp_decode import TPDecodeExplorer
from .crossover import CrossoverExplorer
from .payoff import CompressionPayoffExplorer
from .static import OfflineExplorer, offline

__all__ = ["Explorer", "Result", "EffectiveBandwidthExplorer", "AllReduceRaceExplorer", "RingMappingExplorer",
           "HierarchyExplorer", "TPDecodeExplorer", "CrossoverExplorer", "CompressionPayoffExplorer",
           "OfflineExplorer", "offline"]
