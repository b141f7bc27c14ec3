"""Interactive explorers for the P5 pages: ipywidgets controls that recompute a figure and
a table with :mod:`commbook` on every change, and show a static rendering where no
kernel runs (see :mod:`.base`).

One module per explorer: :mod:`.effbw` (effective bandwidth of a link, §2),
:mod:`.race` (the all-reduce race, §5), :mod:`.mapping` (a ring mapped onto a torus, §6.1),
:mod:`.hierarchy` (hierarchical against flat all-reduce, §6.3), :mod:`.tp_decode` (the
TP decode budget, §7.1).
"""
from .base import Explorer, Result
from .effbw import EffectiveBandwidthExplorer
from .race import AllReduceRaceExplorer
from .mapping import RingMappingExplorer
from .hierarchy import HierarchyExplorer
from .tp_decode import TPDecodeExplorer

__all__ = ["Explorer", "Result", "EffectiveBandwidthExplorer", "AllReduceRaceExplorer", "RingMappingExplorer",
           "HierarchyExplorer", "TPDecodeExplorer"]
