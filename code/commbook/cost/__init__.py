r"""Closed-form times of the α–β model: point to point, LogP, every collective algorithm,
lower bounds, crossovers and optimal chunk counts.

Conventions: ``p`` devices, ``n`` bytes, ``alpha`` seconds per message, ``beta`` bytes per
second in one direction.  For all-reduce, broadcast, reduce and reduce-scatter ``n`` is
the buffer each device holds; for all-gather it is the gathered output (each device
contributes ``n/p``); for all-to-all it is what each device holds before the exchange.

Every ``allreduce_*``, ``broadcast_*``, … function here is the exact time of the schedule
of the same name in :mod:`commbook.collectives` under the timing model of
:mod:`commbook.comm_sim` (synchronous rounds, α once per round, ports serialize their
bytes); :mod:`commbook.collectives.registry` pairs each schedule with its closed form.
Each takes ``(p, n, alpha, beta)``, checks them, and costs nothing for ``p == 1``.

Modules: :mod:`.base` (point to point, LogP, the :func:`~commbook.cost.base.closed_form` decorator),
:mod:`.allreduce`, :mod:`.rooted` (broadcast, reduce, scatter, gather, reduce-scatter,
all-gather, all-to-all) and :mod:`.bounds` (lower bounds, crossovers, the chain optimum),
re-exported here: ``from commbook.cost import allreduce_ring``.
"""
from __future__ import annotations

from ..checks import check_order, check_servers  # noqa: F401  (imported from here by older callers)
from .base import LogP, closed_form, effective_bandwidth, half_bandwidth_point, p2p_time
from .allreduce import (allreduce_double_binomial, allreduce_hierarchical, allreduce_innet, allreduce_leader,
                        allreduce_naive, allreduce_one_shot, allreduce_parameter_server,
                        allreduce_rabenseifner, allreduce_rabenseifner_on_ring, allreduce_rd, allreduce_ring,
                        allreduce_torus, allreduce_torus_rings, allreduce_tree, allreduce_two_shot)
from .rooted import (all_gather_rd, all_gather_ring, all_to_all_direct, broadcast_binomial, broadcast_chain,
                     broadcast_flat, broadcast_scatter_allgather, gather_flat, reduce_binomial, reduce_flat,
                     reduce_scatter_rh, reduce_scatter_ring, scatter_flat)
from .bounds import (LOWER_BOUND_FACTORS, all_to_all_bounds, chain_broadcast_optimum, crossover_rd_ring,
                     crossover_tree_ring, lower_bound_bytes)

__all__ = ["LogP", "closed_form", "effective_bandwidth", "half_bandwidth_point", "p2p_time",
           "allreduce_double_binomial", "allreduce_hierarchical", "allreduce_innet", "allreduce_leader",
           "allreduce_naive", "allreduce_one_shot", "allreduce_parameter_server", "allreduce_rabenseifner",
           "allreduce_rabenseifner_on_ring", "allreduce_rd", "allreduce_ring", "allreduce_torus",
           "allreduce_torus_rings", "allreduce_tree", "allreduce_two_shot", "all_gather_rd",
           "all_gather_ring", "all_to_all_direct", "broadcast_binomial", "broadcast_chain", "broadcast_flat",
           "broadcast_scatter_allgather", "gather_flat", "reduce_binomial", "reduce_flat",
           "reduce_scatter_rh", "reduce_scatter_ring", "scatter_flat", "LOWER_BOUND_FACTORS",
           "all_to_all_bounds", "chain_broadcast_optimum", "crossover_rd_ring", "crossover_tree_ring",
           "lower_bound_bytes"]
