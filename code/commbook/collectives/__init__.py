"""Every collective, every algorithm: schedules run on a :class:`~commbook.comm_sim.VirtualCluster`.

>>> import numpy as np
>>> from commbook.comm_sim import VirtualCluster
>>> from commbook.hardware import NVLINK4
>>> from commbook.topology import Switch
>>> c = VirtualCluster(Switch(4, NVLINK4))
>>> r = all_reduce(c, [np.arange(4.0) + 10 * d for d in range(4)])
>>> r.outputs[0]
array([60., 64., 68., 72.])

The package holds one module per family of schedules (:mod:`.ring`, :mod:`.trees`,
:mod:`.butterfly`, :mod:`.direct`, :mod:`.alltoall`, :mod:`.composite`), the independent
numpy :mod:`.reference`, the one algorithm :mod:`.registry`, and the public API
(:mod:`.api`, :mod:`.exchange`, :mod:`.versus`: every algorithm against its closed form),
re-exported here.

Results on real data are checked against numpy (``check=True``) with the tolerance
:func:`~.reference.check_reduction` states and applies to a reader's own outputs:
float sums in another order than numpy's are not bit-identical to ``np.sum``.
"""
from .registry import (ALGORITHMS, COLLECTIVES, Algorithm, Coefficients, algorithm, coefficients, crossover,
                       names, predict, t_all_gather, t_allreduce_hierarchical, t_allreduce_tiers, t_broadcast,
                       t_formula, t_reduce, t_reduce_scatter)
from .api import all_gather, all_reduce, broadcast, reduce, reduce_scatter
from .exchange import all_to_all, all_to_all_v, gather, scatter, send_recv
from .reference import CheckError, check_reduction
from .versus import versus_closed_forms

__all__ = [
    "all_reduce", "broadcast", "reduce", "reduce_scatter", "all_gather", "all_to_all",
    "all_to_all_v", "scatter", "gather", "send_recv",
    "ALGORITHMS", "COLLECTIVES", "Algorithm", "algorithm", "names", "predict", "coefficients", "Coefficients",
    "crossover",
    "t_formula", "t_broadcast", "t_reduce", "t_reduce_scatter", "t_all_gather",
    "t_allreduce_hierarchical", "t_allreduce_tiers", "CheckError", "check_reduction",
    "versus_closed_forms",
]
