"""The one registry of collective algorithms.

Each algorithm is declared once, here: its collective, canonical name, aliases, English
display name (the book's pair of names is in ``book/texts/common.toml``), schedule builder, closed form (where one exists) and the extra
parameters it takes.  The public API (:mod:`commbook.collectives.api`), the tables, the
figures and the pages read this table; no other list of algorithm names exists.

Builders take ``(groups, base, n, size_only, **params)`` (see
:mod:`commbook.collectives.schedule`), except those marked ``scope="topology"``, which
need the whole topology (hierarchical, torus, hierarchical all-to-all) and are called
by the API with it.  Closed forms take ``(p, n, alpha, beta, **params)``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

from .. import cost, double_tree
from ..checks import check_choice, check_count, check_node, check_real
from ..coefficients import Coefficients, closed_form_coefficients
from ..topology import Switch, SwitchTree, ThreeTier, Topology, Torus, TwoLevel
from . import alltoall, butterfly, composite, direct, ring, trees
from . import full_buffer
from . import tiers

__all__ = ["Algorithm", "ALGORITHMS", "COLLECTIVES", "algorithm", "names", "predict", "coefficients",
           "crossover", "t_formula", "t_broadcast", "t_reduce", "t_reduce_scatter", "t_all_gather",
           "t_allreduce_hierarchical", "t_allreduce_tiers"]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of one collective.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> rd = algorithm("all_gather", "rd")
    >>> rd.pow2, rd.runs_on(Switch(8, NVLINK4)), rd.runs_on(Switch(6, NVLINK4))
    (True, True, False)
    >>> rd.check(Switch(6, NVLINK4), 6)
    Traceback (most recent call last):
    ValueError: p must be a power of two for recursive doubling, got p=6
    """

    collective: str
    name: str
    en: str                     # display name (English; the book's pair: commbook.book.names)
    builder: Callable
    closed_form: Callable | None = None
    aliases: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    scope: str = "groups"       # "groups": any groups of ranks; "topology": the whole topology
    pow2: bool = False          # needs a power-of-two number of ranks
    topologies: tuple[type, ...] = ()   # the topology kinds it runs on (empty: any)
    needs: str = ""             # what ``topologies`` asks, as its error message says it

    def runs_on(self, topology: Topology, p: int | None = None) -> bool:
        """Whether the algorithm can run on ``topology`` over ``p`` ranks (default: all
        its devices): the topology kind it needs and, for ``pow2``, a power of two.

        >>> from commbook.hardware import NVLINK4
        >>> algorithm("all_gather", "rd").runs_on(Switch(6, NVLINK4))
        False
        >>> algorithm("all_reduce", "innet").runs_on(Switch(6, NVLINK4))
        True
        """
        q = topology.p if p is None else p
        return (not self.topologies or isinstance(topology, self.topologies)) and not (self.pow2 and q & (q - 1))

    def check(self, topology: Topology, p: int) -> None:
        """Raise ValueError saying why the algorithm cannot run on ``topology`` over ``p``
        ranks (see :meth:`runs_on`); return None when it can."""
        if self.topologies and not isinstance(topology, self.topologies):
            raise ValueError(f"{self.needs}, got {topology.name}")
        if self.pow2 and p & (p - 1):
            raise ValueError(f"p must be a power of two for {self.en}, got p={p}")


def _channels(form: Callable) -> Callable:
    """A closed form on one link class that also takes ``channels``: k channels of n/k
    send through the same ports as one of n, so the time does not depend on k (what
    channels buy across nodes is :func:`commbook.collectives.channels.ring_time_two_level`)."""
    @functools.wraps(form)
    def with_channels(p, n, alpha, beta, channels: int = 1, **params):
        check_count(channels, "channels")
        return form(p, n, alpha, beta, **params)
    return with_channels


_A = Algorithm
_DECLARED = [
    # ------------------------------------------------------------------ all-reduce
    _A("all_reduce", "ring", "ring", ring.allreduce_ring, _channels(cost.allreduce_ring),
       params=("channels",)),
    _A("all_reduce", "rd", "recursive doubling", butterfly.allreduce_rd,
       cost.allreduce_rd, aliases=("recursive_doubling",)),
    _A("all_reduce", "rabenseifner", "Rabenseifner (halving–doubling)",
       butterfly.allreduce_rabenseifner, cost.allreduce_rabenseifner,
       aliases=("butterfly", "recursive_halving_doubling"), params=("order",)),
    _A("all_reduce", "tree", "binomial tree", trees.allreduce_tree, _channels(cost.allreduce_tree),
       aliases=("binomial", "binomial_tree"), params=("channels",)),
    _A("all_reduce", "double_tree", "double binary tree", trees.allreduce_double_tree,
       _channels(double_tree.allreduce_double_tree), aliases=("dbtree", "double_binary_tree"),
       params=("chunks", "channels")),
    _A("all_reduce", "double_binomial", "two binomial trees (unpipelined)",
       trees.allreduce_double_binomial, cost.allreduce_double_binomial),
    _A("all_reduce", "naive", "naive (via rank 0)", direct.allreduce_naive,
       cost.allreduce_naive, aliases=("star",)),
    _A("all_reduce", "parameter_server", "parameter server (K servers)",
       direct.allreduce_parameter_server, cost.allreduce_parameter_server, aliases=("ps",),
       params=("servers",)),
    _A("all_reduce", "innet", "in-network (SHARP)", direct.allreduce_innet,
       cost.allreduce_innet, aliases=("sharp", "in_network"),
       topologies=(Switch, SwitchTree, TwoLevel), needs="in-network reduction needs a switch"),
    _A("all_reduce", "one_shot", "one-shot", direct.allreduce_one_shot,
       cost.allreduce_one_shot),
    _A("all_reduce", "two_shot", "two-shot", direct.allreduce_two_shot,
       cost.allreduce_two_shot),
    _A("all_reduce", "hierarchical", "hierarchical", composite.allreduce_hierarchical,
       scope="topology", params=("inter_algorithm",), topologies=(TwoLevel,),
       needs="the hierarchical all-reduce needs a TwoLevel topology"),
    _A("all_reduce", "torus", "torus, by dimension", composite.allreduce_torus,
       scope="topology", topologies=(Torus,), needs="the torus all-reduce needs a Torus topology"),
    _A("all_reduce", "tiers", "multi-level hierarchical (node, rail, racks)",
       tiers.allreduce_tiers, scope="topology", params=("inter_algorithm",),
       aliases=("multilevel", "three_tier"), topologies=(TwoLevel, ThreeTier),
       needs="the multi-level all-reduce needs a TwoLevel or ThreeTier topology"),
    _A("all_reduce", "leader", "hierarchical via node leaders",
       full_buffer.allreduce_leader, scope="topology", params=("inter_algorithm",),
       aliases=("leader_hierarchical",), topologies=(TwoLevel,),
       needs="the leader-based hierarchical all-reduce needs a TwoLevel topology"),
    _A("all_reduce", "torus_rings", "torus, full ring per dimension",
       full_buffer.allreduce_torus_rings, scope="topology", topologies=(Torus,),
       needs="the full-ring torus all-reduce needs a Torus topology"),
    # ------------------------------------------------------------------ broadcast / reduce
    _A("broadcast", "binomial", "binomial tree", trees.binomial_broadcast,
       cost.broadcast_binomial, aliases=("tree",)),
    _A("broadcast", "flat", "flat", direct.broadcast_flat, cost.broadcast_flat),
    _A("broadcast", "chain", "pipelined chain", ring.broadcast_chain,
       cost.broadcast_chain, params=("chunks",)),
    _A("broadcast", "scatter_allgather", "scatter + all-gather",
       ring.broadcast_scatter_allgather, cost.broadcast_scatter_allgather),
    _A("reduce", "binomial", "binomial tree", trees.binomial_reduce, cost.reduce_binomial,
       aliases=("tree",)),
    _A("reduce", "flat", "flat", direct.reduce_flat, cost.reduce_flat),
    # ------------------------------------------------------------------ RS / AG / A2A
    _A("reduce_scatter", "ring", "ring", ring.ring_reduce_scatter, cost.reduce_scatter_ring),
    _A("reduce_scatter", "rh", "recursive halving", butterfly.halving_reduce_scatter,
       cost.reduce_scatter_rh, aliases=("recursive_halving",), pow2=True),
    _A("all_gather", "ring", "ring", ring.ring_all_gather, cost.all_gather_ring),
    _A("all_gather", "rd", "recursive doubling", butterfly.doubling_all_gather,
       cost.all_gather_rd, aliases=("recursive_doubling",), pow2=True),
    _A("all_to_all", "direct", "direct (shift)", alltoall.alltoall_direct,
       cost.all_to_all_direct),
    _A("all_to_all", "hierarchical", "hierarchical (by rail)",
       alltoall.alltoall_hierarchical, scope="topology", topologies=(TwoLevel,),
       needs="the hierarchical all-to-all needs a TwoLevel topology"),
    _A("all_to_all_v", "direct", "direct (shift)", alltoall.alltoall_v_direct),
    _A("all_to_all_v", "hierarchical", "hierarchical (by rail)",
       alltoall.alltoall_v_hierarchical, scope="topology", topologies=(TwoLevel,),
       needs="the hierarchical all_to_all_v needs a TwoLevel topology"),
]

COLLECTIVES = ("all_reduce", "broadcast", "reduce", "reduce_scatter", "all_gather", "all_to_all",
               "all_to_all_v")

ALGORITHMS: dict[str, dict[str, Algorithm]] = {c: {} for c in COLLECTIVES}
for _a in _DECLARED:
    ALGORITHMS[_a.collective][_a.name] = _a
del _a


def algorithm(collective: str, name: str) -> Algorithm:
    """Look up an algorithm by canonical name or alias; an unknown name raises
    ``ValueError`` listing the valid ones.

    >>> algorithm("all_reduce", "butterfly").name                  # an alias
    'rabenseifner'
    >>> algorithm("all_reduce", "rign")
    Traceback (most recent call last):
    ValueError: unknown all_reduce algorithm 'rign'; valid names: ring, rd, rabenseifner, ...
    """
    check_choice(collective, "collective", COLLECTIVES)
    if not isinstance(name, str):
        raise TypeError(f"name (the {collective} algorithm) must be a str, got {type(name).__name__}")
    table = ALGORITHMS[collective]
    key = name.strip().lower()
    if key in table:
        return table[key]
    for a in table.values():
        if key in a.aliases:
            return a
    aliases = sorted(x for a in table.values() for x in a.aliases)
    raise ValueError(f"unknown {collective} algorithm {name!r}; valid names: {', '.join(table)}"
                     + (f" (aliases: {', '.join(aliases)})" if aliases else ""))


def names(collective: str, with_closed_form: bool = False, *, topology: Topology | None = None,
          p: int | None = None) -> tuple[str, ...]:
    """Canonical names of a collective's algorithms, in declaration order.

    With ``topology`` only those that can run there (over ``p`` ranks, default all its
    devices: :meth:`Algorithm.runs_on`); ``with_closed_form``: only those with a closed form.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Ring
    >>> names("all_gather", topology=Ring(6, NVLINK4))
    ('ring',)
    >>> "innet" in names("all_reduce", topology=Ring(8, NVLINK4))
    False
    """
    check_choice(collective, "collective", COLLECTIVES)
    if topology is not None and not isinstance(topology, Topology):
        raise TypeError(f"topology must be a commbook.topology.Topology, got {type(topology).__name__}")
    if p is not None:
        p = check_count(p, "p")
    return tuple(a.name for a in ALGORITHMS[collective].values()
                 if (a.closed_form is not None or not with_closed_form)
                 and (topology is None or a.runs_on(topology, p)))


def predict(collective: str, name: str, p: int, n: float, alpha: float, beta: float, **params) -> float:
    """Closed-form time of ``collective`` by algorithm ``name`` (see :mod:`commbook.cost`).

    >>> from commbook.cost import allreduce_ring
    >>> predict("all_reduce", "ring", 8, 8e6, 1e-6, 1e9) == allreduce_ring(8, 8e6, 1e-6, 1e9)
    True
    >>> predict("all_reduce", "hierarchical", 8, 8e6, 1e-6, 1e9)
    Traceback (most recent call last):
    ValueError: all_reduce algorithm 'hierarchical' has no closed form in (p, n, alpha, beta); ...
    """
    a = algorithm(collective, name)
    if a.closed_form is None:
        raise ValueError(f"{collective} algorithm {a.name!r} has no closed form in (p, n, alpha, beta); "
                         "it depends on the topology (see commbook.cost)")
    extra = set(params) - set(a.params)
    if extra:
        raise ValueError(f"{collective} algorithm {a.name!r} takes no parameter {', '.join(sorted(extra))}")
    return a.closed_form(p, n, alpha, beta, **params)


def coefficients(collective: str, name: str, p: int, **params) -> Coefficients:
    """The α count and bandwidth factor of a closed form, T = alpha_steps·α +
    beta_bytes_per_byte·n/β (see :mod:`commbook.coefficients`): ``ValueError`` for a form
    that is not of that shape (the double tree without ``chunks`` picks them from α and β).

    >>> c = coefficients("all_reduce", "ring", 8)
    >>> c.alpha_steps, c.beta_bytes_per_byte
    (14.0, 1.75)
    """
    a = algorithm(collective, name)
    return closed_form_coefficients(lambda q, n, alpha, beta: predict(collective, a.name, q, n, alpha, beta, **params),
                                    p, what=f"the closed form of {collective}/{a.name}")


def crossover(a: str, b: str, p: int, alpha: float, beta: float, collective: str = "all_reduce",
              n_max: float = 1e15) -> float:
    """Message size at which algorithms ``a`` and ``b`` of ``collective`` take the same time
    by their closed forms (numeric, so it works for forms that are not affine in n, such
    as the double tree at its best chunk count).  Raises ``ValueError`` when the two do not
    cross between 0 and ``n_max`` bytes (one is never faster, or they coincide).

    The size where recursive doubling stops beating the ring on 8 ranks, (14 - 3)αβ/(3 - 14/8):

    >>> round(crossover("rd", "ring", 8, 1e-6, 1e9), 6)
    8800.0
    """
    def gap(n: float) -> float:
        return predict(collective, a, p, n, alpha, beta) - predict(collective, b, p, n, alpha, beta)

    n_max = check_real(n_max, "n_max", "a size in bytes", lo=1.0)
    gap(0.0)                                           # checks p, alpha, beta and the names
    grid = [0.0] + [10.0 ** e for e in range(0, int(math.log10(n_max)) + 1)]
    signs = [gap(n) for n in grid]
    for lo, hi, g_lo, g_hi in zip(grid, grid[1:], signs, signs[1:]):
        if g_lo == 0 and g_hi == 0:
            continue
        if g_lo == 0:
            return lo
        if (g_lo < 0) != (g_hi < 0):
            for _ in range(200):                       # bisection to the float's resolution
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if (gap(mid) < 0) == (g_lo < 0):
                    lo = mid
                else:
                    hi = mid
            return (lo + hi) / 2
    raise ValueError(f"{collective} algorithms {a!r} and {b!r} do not cross between 0 and n_max = {n_max:g} bytes "
                     f"at p={p} (alpha={alpha:g} s, beta={beta:g} B/s)")


def t_formula(algorithm_name: str, p: int, n: float, alpha: float, beta: float, **params) -> float:
    """Closed-form all-reduce time: ``predict("all_reduce", ...)``.

    >>> round(t_formula("ring", 8, 4e6, 2e-6, 450e9) * 1e6, 2)
    43.56
    """
    return predict("all_reduce", algorithm_name, p, n, alpha, beta, **params)


def t_broadcast(name: str, p: int, n: float, alpha: float, beta: float, chunks: int = 1) -> float:
    """Closed-form broadcast time (``chunks`` is used by the pipelined chain only).

    >>> round(t_broadcast("chain", 8, 8e6, 1e-6, 1e9, chunks=8) * 1e3, 9)    # ms: (6 + 8)(α + 1 ms)
    14.014
    """
    params = {"chunks": chunks} if "chunks" in algorithm("broadcast", name).params else {}
    return predict("broadcast", name, p, n, alpha, beta, **params)


def t_reduce(name: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Closed-form reduce time.

    >>> round(t_reduce("binomial", 8, 8e6, 1e-6, 1e9) * 1e3, 9)              # ms: 3(α + 8 ms)
    24.003
    """
    return predict("reduce", name, p, n, alpha, beta)


def t_reduce_scatter(name: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Closed-form reduce-scatter time of an n-byte buffer.

    >>> round(t_reduce_scatter("ring", 8, 8e6, 1e-6, 1e9) * 1e3, 9)          # ms: 7(α + 1 ms)
    7.007
    """
    return predict("reduce_scatter", name, p, n, alpha, beta)


def t_all_gather(name: str, p: int, n: float, alpha: float, beta: float) -> float:
    """Closed-form all-gather time to an n-byte output.

    >>> round(t_all_gather("rd", 8, 8e6, 1e-6, 1e9) * 1e3, 9)                # ms: 3α + 7/8·8 ms
    7.003
    """
    return predict("all_gather", name, p, n, alpha, beta)


def nestable(name: str) -> Algorithm:
    """The all-reduce that runs across nodes inside the hierarchical schedule: any
    algorithm that runs on groups of ranks, except in-network reduction (one group at a
    time) and those that take parameters (the double tree's chunk count) — so every time
    the model gives has a schedule with the same parameters.  Parameters whose default
    the schedule and the closed form share (the butterfly's ``order``, the parameter
    server's ``servers``, one channel) run nested at that default.

    >>> nestable("recursive_doubling").name
    'rd'
    >>> nestable("double_tree")
    Traceback (most recent call last):
    ValueError: inter_algorithm 'double_tree' cannot run inside the hierarchical all-reduce; valid: ring, rd, ...
    """
    a = algorithm("all_reduce", name)
    def fits(x: Algorithm) -> bool:
        return (x.scope == "groups" and not x.topologies
                and set(x.params) <= {"order", "servers", "channels"})

    if not fits(a):
        valid = [x.name for x in ALGORITHMS["all_reduce"].values() if fits(x)]
        raise ValueError(f"inter_algorithm {a.name!r} cannot run inside the hierarchical all-reduce; "
                         f"valid: {', '.join(valid)}")
    return a


def t_allreduce_hierarchical(nodes: int, gpus_per_node: int, n: float, intra, inter,
                             inter_algorithm: str = "ring") -> float:
    """Closed-form hierarchical all-reduce (see :func:`commbook.cost.allreduce_hierarchical`)
    with the cross-node algorithm given by name.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> round(t_allreduce_hierarchical(2, 8, 8e6, NVLINK4, IB_NDR) * 1e6, 3)   # µs
    89.111
    """
    return cost.allreduce_hierarchical(nodes, gpus_per_node, n, intra, inter,
                                       nestable(inter_algorithm).closed_form)


def t_allreduce_tiers(topology, n: float, inter_algorithm: str = "ring") -> float:
    """Closed-form multi-level all-reduce on a TwoLevel or ThreeTier ``topology`` (see
    :func:`commbook.collectives.tiers.allreduce_tiers_time`), the outermost tier by name.

    On two nodes the tiers are the hierarchical all-reduce:

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> t_allreduce_tiers(TwoLevel(2, 8, NVLINK4, IB_NDR), 8e6) == t_allreduce_hierarchical(2, 8, 8e6, NVLINK4, IB_NDR)
    True
    """
    check_node(topology, "topology", (TwoLevel, ThreeTier))
    return tiers.allreduce_tiers_time(topology, n, nestable(inter_algorithm).closed_form)
