"""Schedules as data: a :class:`Round` is one synchronous set of messages (numpy arrays,
one entry per message), and :func:`chunk_bounds` splits a buffer into chunks.  The
engine that runs rounds is :mod:`commbook.comm_sim`; the schedules are built in
:mod:`commbook.collectives`."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

__all__ = ["Round", "LazyRounds", "chunk_bounds"]


def chunk_bounds(n, parts: int, size_only: bool) -> np.ndarray:
    """Offsets that split ``n`` items into ``parts`` near-equal chunks.

    ``n`` may be a scalar or an array (one split per entry; result shape (..., parts+1)).
    ``size_only=True`` splits a byte count into equal real-valued shares; otherwise
    element counts are split into integers by ``floor(n·k/parts)``: chunk sizes differ by
    at most one, and the larger chunks are spread among the smaller ones (7 items in 3
    parts: 2, 2, 3; 8 items in 3 parts: 2, 3, 3; 5 in 4: 1, 1, 1, 2).

    >>> chunk_bounds(7, 3, size_only=False), chunk_bounds(8, 3, size_only=False)
    (array([0, 2, 4, 7]), array([0, 2, 5, 8]))
    >>> chunk_bounds(1e6, 4, size_only=True)
    array([      0.,  250000.,  500000.,  750000., 1000000.])
    """
    n = np.asarray(n)
    k = np.arange(parts + 1)
    if size_only:
        return n[..., None] * k / parts
    return (n[..., None].astype(np.int64) * k) // parts


@dataclass
class Round:
    """One synchronous round of messages (arrays of equal length m).

    ``count`` is in elements for real-data runs and in bytes for size-only runs.
    ``reduce[i]`` combines the payload into the destination with the run's operator;
    otherwise it overwrites.  ``innet=True`` marks an in-network reduction: message i
    means "participant src[i] streams its slice into the switch and receives the
    reduction of all slices at dst[i]'s destination region".  ``repeat=k`` makes the round
    stand for k consecutive rounds with the same messages and counts (a size-only ring
    pass is one such round: its q-1 steps differ only in the offsets, which a size-only
    run does not read), so a schedule of thousands of ranks is not p rounds of p messages.

    Rank 0 sends 4 elements to rank 1 and rank 1 sends 4 to rank 0, in one round:

    >>> r = Round.make(src=[0, 1], dst=[1, 0], count=4, label="swap")
    >>> len(r), r.dst.tolist(), r.reduce.tolist()
    (2, [1, 0], [False, False])
    >>> Round.make(src=[0, 1], dst=[1, 0, 2], count=4, label="bad")
    Traceback (most recent call last):
    ValueError: round 'bad': message fields have [2, 3] entries; give one entry per message or a scalar
    """

    src: np.ndarray
    dst: np.ndarray
    count: np.ndarray
    soff: np.ndarray
    doff: np.ndarray
    sbuf: np.ndarray
    dbuf: np.ndarray
    reduce: np.ndarray
    label: str = ""
    innet: bool = False
    repeat: int = 1

    @classmethod
    def make(cls, src, dst, count, soff=0, doff=None, sbuf=0, dbuf=None, reduce=False,
             label: str = "", innet: bool = False, repeat: int = 1) -> "Round":
        """Build a round, broadcasting scalars; ``doff``/``dbuf`` default to ``soff``/``sbuf``."""
        doff = soff if doff is None else doff
        dbuf = sbuf if dbuf is None else dbuf
        fields = [np.asarray(a).reshape(-1) for a in (src, dst, count, soff, doff, sbuf, dbuf, reduce)]
        sizes = {a.size for a in fields} - {1}
        if len(sizes) > 1:
            raise ValueError(f"round {label!r}: message fields have {sorted(sizes)} entries; "
                             "give one entry per message or a scalar")
        m = sizes.pop() if sizes else 1
        src, dst, count, soff, doff, sbuf, dbuf, reduce = (a if a.size == m else np.repeat(a, m) for a in fields)
        arrays = (("count", count), ("source offset", soff), ("destination offset", doff))
        if count.size and not (min(a.min() for _, a in arrays) >= 0           # NaN fails too
                               and (count.dtype.kind in "iu" or max(a.max() for _, a in arrays) < np.inf)):
            for name, a in arrays:
                bad = a[~(np.isfinite(a) & (a >= 0))]
                if bad.size:
                    raise ValueError(f"round {label!r}: every {name} must be finite and >= 0, got {bad[0]!r}")
        if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
            raise ValueError(f"round {label!r}: repeat must be an integer >= 1, got {repeat!r}")
        i64 = lambda a: a.astype(np.int64, copy=False)
        return cls(i64(src), i64(dst), count, soff, doff, i64(sbuf), i64(dbuf), reduce.astype(bool, copy=False),
                   label, innet, int(repeat))

    @classmethod
    def rows(cls, labels: Sequence[str], src, dst, count, soff=0, doff=None, sbuf=0, dbuf=None,
             reduce=False) -> list["Round"]:
        """Several rounds at once: every field broadcasts to shape (rounds, messages), row k
        is round k (labelled ``labels[k]``).  Checked once for all rows, as :meth:`make`."""
        doff = soff if doff is None else doff
        dbuf = sbuf if dbuf is None else dbuf
        k = len(labels)
        fields = np.broadcast_arrays(*(np.asarray(a) for a in (src, dst, count, soff, doff, sbuf, dbuf, reduce)))
        if fields[0].ndim != 2 or fields[0].shape[0] != k:
            raise ValueError(f"rounds {labels[0]!r}…: fields must broadcast to ({k}, messages), "
                             f"got {fields[0].shape}")
        m = fields[0].shape[1]
        flat = cls.make(*(a.reshape(-1) for a in fields), label=labels[0])
        grid = [getattr(flat, f).reshape(k, m) for f in ("src", "dst", "count", "soff", "doff", "sbuf", "dbuf", "reduce")]
        return [cls(*(a[j] for a in grid), label=labels[j]) for j in range(k)]

    @classmethod
    def concat(cls, rounds: Sequence["Round"], label: str | None = None) -> "Round":
        """Merge rounds that run at the same time (e.g. one per group) into one."""
        rounds = [r for r in rounds if r is not None]
        if len(rounds) == 1:
            return rounds[0]
        if len({r.repeat for r in rounds}) > 1:
            raise ValueError("rounds merged into one must repeat the same number of times")
        cat = lambda name: np.concatenate([getattr(r, name) for r in rounds])
        return cls(cat("src"), cat("dst"), cat("count"), cat("soff"), cat("doff"), cat("sbuf"),
                   cat("dbuf"), cat("reduce"), rounds[0].label if label is None else label,
                   rounds[0].innet, rounds[0].repeat)

    def __len__(self) -> int:
        return int(self.src.size)


class LazyRounds(Sequence):
    """A schedule whose round ``i`` is built by ``make(i)`` when the engine reaches it, so a
    schedule of p rounds of p messages (the direct all-to-all of 16,384 ranks) never sits in
    memory whole.  The engine keeps such rounds in ``RunResult.trace`` only with
    ``trace=True``.

    >>> lazy = LazyRounds(1000, lambda i: Round.make(src=i, dst=(i + 1) % 1000, count=1, label=f"step {i}"))
    >>> len(lazy), lazy[-1].label, lazy[999].dst.tolist()
    (1000, 'step 999', [0])
    """

    def __init__(self, count: int, make):
        self._count, self._make = int(count), make

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if not -self._count <= i < self._count:
            raise IndexError(i)
        return self._make(i % self._count)
