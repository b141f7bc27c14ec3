"""Building blocks shared by the schedule builders.

A builder returns a schedule (a list of :class:`~commbook.comm_sim.Round`) for *groups*:
an int array of shape (m, q) holding m disjoint groups of q logical ranks that run the
same algorithm at the same time, each on its own region ``[base, base + n)`` of the
buffer (one entry of ``base`` and ``n`` per group).  ``size_only=True`` means counts are
bytes (real-valued shares); otherwise they are element counts (integers).
"""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round

IN, OUT, TMP = 0, 1, 2
"""Buffer indices: the user's data (IN), a scratch/output buffer (OUT), staging (TMP)."""


def grid(groups, base, n, size_only: bool):
    """Normalize ``groups`` to shape (m, q) and ``base``/``n`` to one entry per group.

    >>> groups, base, n = grid([0, 1, 2, 3], 0, 8, size_only=False)
    >>> groups.tolist(), base.tolist(), n.tolist()
    ([[0, 1, 2, 3]], [0], [8])
    """
    groups = np.atleast_2d(np.asarray(groups, dtype=np.int64))
    m = groups.shape[0]
    kind = float if size_only else np.int64
    base = np.broadcast_to(np.asarray(base, dtype=kind), (m,))
    n = np.broadcast_to(np.asarray(n, dtype=kind), (m,))
    return groups, base, n


def whole(groups, base, n, src_local, dst_local, reduce: bool, label: str, buf: int = IN) -> Round:
    """One round in which, in every group, local rank ``src_local[j]`` sends its whole
    region to local rank ``dst_local[j]``.

    Every group's local rank 1 sends its whole region to local rank 0:

    >>> groups, base, n = grid([[0, 1], [2, 3]], 0, 8, size_only=False)
    >>> r = whole(groups, base, n, [1], [0], reduce=True, label="fold")
    >>> r.src.tolist(), r.dst.tolist(), r.count.tolist()
    ([1, 3], [0, 2], [8, 8])
    """
    src_local, dst_local = np.asarray(src_local), np.asarray(dst_local)
    k = src_local.size
    return Round.make(groups[:, src_local], groups[:, dst_local],
                      np.repeat(n[:, None], k, axis=1), np.repeat(base[:, None], k, axis=1),
                      sbuf=buf, reduce=reduce, label=label)
