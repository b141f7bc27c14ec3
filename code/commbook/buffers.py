"""The buffers of a real-data run, with copy-on-write of the inputs a caller lends.

Per logical rank the engine addresses a list of 1-D numpy buffers.  A writable buffer is
changed in place.  A **read-only** buffer (the collectives pass read-only views of the
caller's arrays) is never written: the first write to it allocates a private array of the
same size, and from then on each region reads from wherever its current value lives —
the private array where the run has written it, the caller's array elsewhere.  A reduction
into a region not yet written reads the caller's array as its left operand and writes the
private array, so lending an input costs no up-front copy.  :meth:`Buffers.finish` fills
what was never written from the input and puts the private arrays in the caller's lists;
a lent buffer the run never wrote becomes a copy, so outputs never alias inputs.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["Buffers"]


class _Lent:
    """A read-only input and the private array that replaces it, with the regions
    ``[lo, hi)`` written so far (sorted, disjoint, merged)."""

    __slots__ = ("orig", "own", "done")

    def __init__(self, orig: np.ndarray):
        self.orig, self.own, self.done = orig, None, []

    def coverage(self, lo: int, hi: int) -> tuple[bool, bool]:
        """(some of [lo, hi) is written, all of it is)."""
        got = 0
        for a, b in self.done:
            if b <= lo:
                continue
            if a >= hi:
                break
            got += min(b, hi) - max(a, lo)
        return got > 0, got == hi - lo

    def mark(self, lo: int, hi: int) -> None:
        keep, for_merge = [], [(lo, hi)]
        for iv in self.done:
            (for_merge if iv[0] <= hi and lo <= iv[1] else keep).append(iv)
        keep.append((min(a for a, _ in for_merge), max(b for _, b in for_merge)))
        self.done = sorted(keep)

    def fill(self, lo: int, hi: int) -> None:
        """Copy the unwritten parts of [lo, hi) from the input into the private array."""
        at = lo
        for a, b in self.done:
            if b <= at:
                continue
            if a >= hi:
                break
            if a > at:
                self.own[at:a] = self.orig[at:a]
            at = b
            if at >= hi:
                break
        if at < hi:
            self.own[at:hi] = self.orig[at:hi]
        self.mark(lo, hi)

    def full(self) -> np.ndarray:
        """The current contents as one private array (a copy while nothing is written)."""
        if self.own is None:
            self.own = np.empty_like(self.orig)
        self.fill(0, self.orig.size)
        return self.own


class Buffers:
    """The rank buffers of one run (``lists[r][j]``: rank r's buffer j), read and written
    by region; read-only buffers are copied on write (see the module docstring).

    A lent (read-only) input is never written: the first write goes to a private copy.

    >>> x = np.arange(4.0); x.flags.writeable = False
    >>> b = Buffers([[x]])
    >>> b.write(0, 0, 1, 3, np.array([10.0, 10.0]), np.add)
    >>> b.finish(); b.lists[0][0], x
    (array([ 0., 11., 12.,  3.]), array([0., 1., 2., 3.]))
    """

    def __init__(self, lists: list[list[np.ndarray]]):
        self.lists = lists
        self._lent = {(r, j): _Lent(b) for r, bufs in enumerate(lists) for j, b in enumerate(bufs)
                      if not b.flags.writeable}

    def check(self, label: str, ranks: np.ndarray, bufs: np.ndarray, offs: np.ndarray,
              counts: np.ndarray, what: str) -> None:
        """Raise ValueError naming the round when a region is not inside an existing buffer."""
        for r, j, o, c in zip(ranks.tolist(), bufs.tolist(), offs.tolist(), counts.tolist()):
            if not 0 <= j < len(self.lists[r]):
                raise ValueError(f"round {label!r}: rank {r} has no buffer {j} (it has {len(self.lists[r])})")
            if not 0 <= o or o + c > self.lists[r][j].size:
                raise ValueError(f"round {label!r}: {what} region [{o}, {o + c}) is past the end "
                                 f"of rank {r}'s buffer {j} ({self.lists[r][j].size} elements)")

    def read(self, r: int, j: int, lo: int, hi: int) -> np.ndarray:
        """A view of rank r's buffer j over [lo, hi) as the run sees it now."""
        lent = self._lent.get((r, j))
        if lent is None or lent.own is None:
            return self.lists[r][j][lo:hi]
        some, every = lent.coverage(lo, hi)
        if not some:
            return lent.orig[lo:hi]
        if not every:
            lent.fill(lo, hi)
        return lent.own[lo:hi]

    def write(self, r: int, j: int, lo: int, hi: int, payload: np.ndarray, ufunc: Callable | None) -> None:
        """Copy ``payload`` into [lo, hi) of rank r's buffer j, or reduce it in with ``ufunc``
        (``target = ufunc(target, payload)``)."""
        lent = self._lent.get((r, j))
        if lent is None:
            target = self.lists[r][j][lo:hi]
            if ufunc is None:
                target[...] = payload
            else:
                ufunc(target, payload, out=target)
            return
        if lent.own is None:
            lent.own = np.empty_like(lent.orig)
        if ufunc is None:
            lent.own[lo:hi] = payload
        else:
            some, every = lent.coverage(lo, hi)
            if some and not every:
                lent.fill(lo, hi)
            left = lent.own[lo:hi] if some else lent.orig[lo:hi]
            ufunc(left, payload, out=lent.own[lo:hi])
        lent.mark(lo, hi)

    def snapshot(self) -> list[list[np.ndarray]]:
        """A copy of every buffer's current contents."""
        return [[self._lent[(r, j)].full().copy() if (r, j) in self._lent else b.copy()
                 for j, b in enumerate(bufs)] for r, bufs in enumerate(self.lists)]

    def finish(self) -> None:
        """Put a complete private array in place of every lent buffer."""
        for (r, j), lent in self._lent.items():
            self.lists[r][j] = lent.full()
        self._lent = {}
