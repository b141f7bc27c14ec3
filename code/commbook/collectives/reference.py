"""The numpy answers the collectives are checked against, written independently of the
schedules and of the engine.

* Reductions: the plain left-to-right reduction of the rank buffers in numpy (a float16
  sum in float32).  Integers and min/max must match exactly.  Floats may differ by what
  another order of operations allows: 4·p·eps·(sum of |x|) for sums (|product| for prod);
  elements whose partial results may leave the dtype's range are not compared (the order
  of operations decides there between inf and a finite value).
* ``avg``: the reduction divided by p, truncating toward zero for integers (as NCCL's
  ``ncclAvg``), computed here with Python integers so that it cannot share an overflow
  with the implementation.
* NaN and ±inf are values like any other: an output equals the reference where both are
  NaN in the same position (IEEE: NaN is what the operation produced), or both the same
  infinity.  Data with NaN passes the check wherever the collective moved it right.

A failed check raises :class:`CheckError` (a ``ValueError``), never an ``AssertionError``.
:func:`check_reduction` is the same check for a reader's own outputs.

Why not ``np.array_equal(out, np.sum(data, axis=0))``: a ring adds the ranks' values in
another order than numpy, and float addition is not associative (eight float32 ranks
holding 0.1, ..., 0.8 sum to 3.6000004 in one element of the ring's output, to 3.6 in
numpy's).  ``np.allclose`` is no better where values cancel: its absolute tolerance
(1e-8) is not scaled by the magnitude of the summands.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["Reference", "check_equal", "check_reduction", "CheckError", "REDUCTION_OPS"]

REDUCTION_OPS = ("sum", "prod", "min", "max", "avg")
"""The reductions the reference computes (NCCL's ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg)."""


class CheckError(ValueError):
    """A collective's output differs from the independent numpy reference (``check=True``).

    A ``ValueError``, so ``except ValueError`` catches it too:

    >>> try:
    ...     check_equal("all_gather rank 1", np.array([1, 2]), np.array([1, 3]))
    ... except ValueError as e:
    ...     print(type(e).__name__, "-", e)
    CheckError - all_gather rank 1: element 1 is np.int64(2), numpy reference np.int64(3)
    """

BLOCK = 1 << 16
"""Elements per block of the float check (a few hundred KiB: the temporaries stay in cache)."""


def _mismatch(name: str, got: np.ndarray, ref: np.ndarray, i: int, shown: int) -> CheckError:
    """The error for element ``i`` of a block that starts at output element ``shown``."""
    return CheckError(f"{name}: element {shown + i} is {got[i]!r}, numpy reference {ref[i]!r}")


def _both_nan(got: np.ndarray, ref: np.ndarray) -> np.ndarray | bool:
    if got.dtype.kind in "fc" and ref.dtype.kind in "fc":
        return np.isnan(got) & np.isnan(ref)
    return False


def check_equal(name: str, got: np.ndarray, ref: np.ndarray, shown: int = 0) -> None:
    """Raise :class:`CheckError` unless ``got`` equals ``ref`` exactly (shape and values; NaN
    equals NaN in the same position); ``shown``: the output index of ``got[0]``.

    >>> check_equal("x", np.array([1.0, np.nan]), np.array([1.0, np.nan]))     # NaN where numpy has NaN
    >>> check_equal("x", np.zeros(3), np.zeros(2))
    Traceback (most recent call last):
    commbook.collectives.reference.CheckError: x: output shape (3,) differs from the reference (2,)
    """
    if got.shape != ref.shape:
        raise CheckError(f"{name}: output shape {got.shape} differs from the reference {ref.shape}")
    if not np.array_equal(got, ref):
        differ = (got != ref) & ~_both_nan(got, ref)
        if differ.any():
            raise _mismatch(name, got, ref, int(np.flatnonzero(differ)[0]), shown)


def check_reduction(outputs: np.ndarray | Sequence[np.ndarray], data: Sequence[np.ndarray], op: str = "sum",
                    name: str = "output") -> None:
    """Check that ``outputs`` (one array, or one per rank) is the reduction of ``data`` (one
    array per rank) under ``op``, as the collectives' ``check=True`` does; raise
    :class:`CheckError` naming the first element that is off.

    The tolerance (per element, ``eps`` of the dtype: float32 1.2e-7, float64 2.2e-16;
    float16 is reduced in float32): integers and min/max exactly; floats within
    4·p·eps·|reference|, else within 4·p·eps·Σ|x| over the p ranks (no order of the
    additions has a partial sum beyond Σ|x|; for ``prod`` Π max(|x|, 1)).

    >>> import numpy as np
    >>> from commbook.collectives import all_reduce
    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> data = [np.full(4, 0.1 * (r + 1), dtype=np.float32) for r in range(8)]
    >>> out = all_reduce(Switch(8, NVLINK4), data).outputs[0]
    >>> out, out == np.sum(data, axis=0)         # the ring's order of additions is not numpy's
    (array([3.6      , 3.6      , 3.6000004, 3.6      ], dtype=float32), array([ True,  True, False,  True]))
    >>> check_reduction(out, data)                # within 4·8·eps·3.6 = 1.4e-5: passes
    >>> check_reduction(out + 1e-4, data)
    Traceback (most recent call last):
    commbook.collectives.reference.CheckError: output rank 0: element 0 is ...
    """
    if op not in REDUCTION_OPS:
        raise ValueError(f"unknown op {op!r}; valid: {', '.join(REDUCTION_OPS)}")
    if isinstance(data, np.ndarray) or not isinstance(data, Sequence) or not len(data):
        raise TypeError("data must be a non-empty list with one numpy array per rank")
    rows = [np.asarray(x) for x in data]
    if any(x.shape != rows[0].shape or x.dtype != rows[0].dtype for x in rows):
        raise ValueError("data: every rank's array must have the shape and dtype of rank 0's")
    outs = [outputs] if isinstance(outputs, np.ndarray) else list(outputs)
    for r, o in enumerate(outs):
        if not isinstance(o, np.ndarray) or o.shape != rows[0].shape:
            raise CheckError(f"{name} rank {r}: {getattr(o, 'shape', type(o).__name__)} is not an array "
                             f"of the data's shape {rows[0].shape}")
    Reference(rows, op).check_all(name, [o.ravel() for o in outs])


def _int_avg(total: np.ndarray, p: int) -> np.ndarray:
    """Truncating division by p with Python integers (no fixed-width overflow)."""
    out = [(abs(int(v)) // p) * (1 if v >= 0 else -1) for v in total.tolist()]
    return np.array(out, dtype=total.dtype)


class Reference:
    """The reduction of ``data`` under ``op``, computed block by block while outputs are
    checked against it (the reference never exists whole: each block of it is compared with
    every output while it is in cache).

    >>> ref = Reference([np.arange(4), 10 * np.arange(4)], "sum")
    >>> ref.block(0, 4)
    array([ 0, 11, 22, 33])
    >>> ref.check("reduce", np.array([0, 11, 22, 34]))                        # integers: exactly
    Traceback (most recent call last):
    commbook.collectives.reference.CheckError: reduce: element 3 is np.int64(34), numpy reference np.int64(33)
    """

    def __init__(self, data: Sequence[np.ndarray], op: str):
        self.rows, self.op = [np.asarray(x).ravel() for x in data], op  # views, no copy
        dt = self.rows[0].dtype
        self.exact = dt.kind == "i" or op in ("min", "max")
        self.work = dt if self.exact else (np.float32 if dt == np.float16 else dt)
        self.ufunc = {"min": np.minimum, "max": np.maximum, "prod": np.multiply}.get(op, np.add)

    def block(self, lo: int, hi: int) -> np.ndarray:
        """Elements [lo, hi) of the reduction: rows reduced left to right (avg: then divided)."""
        p = len(self.rows)
        with np.errstate(over="ignore", invalid="ignore"):
            ref = self.rows[0][lo:hi].astype(self.work, copy=True)
            for x in self.rows[1:]:
                self.ufunc(ref, x[lo:hi], out=ref)
            if self.op == "avg":
                ref = _int_avg(ref, p) if ref.dtype.kind == "i" else ref / np.asarray(p, dtype=self.work)
        return ref

    def check(self, name: str, got: np.ndarray, sl: slice = slice(None)) -> None:
        """Check one output (the whole reduction, or its slice ``sl``)."""
        self.check_all(name, [got], sl, ranks=False)

    def check_all(self, name: str, outs: list[np.ndarray], sl: slice = slice(None), ranks: bool = True) -> None:
        """Check outputs that should all equal the reduction (or its slice ``sl``) in one
        blocked pass: per block, the reference's block is computed, the first output is
        checked against it, and every other output that is not bit-identical to the first
        is checked against it too."""
        lo, hi, _ = sl.indices(self.rows[0].size)
        want = (max(hi - lo, 0),)
        label = (lambda r: f"{name} rank {r}") if ranks else (lambda r: name)
        for r, o in enumerate(outs):
            if o.shape != want:
                raise CheckError(f"{label(r)}: output shape {o.shape} differs from the reference {want}")
        for at in range(0, want[0], BLOCK):
            ref = self.block(lo + at, min(lo + at + BLOCK, hi))
            first = outs[0][at:at + BLOCK]
            self._compare(label(0), first, ref, lo + at, at)
            for r in range(1, len(outs)):
                o = outs[r][at:at + BLOCK]
                if not np.array_equal(o, first, equal_nan=o.dtype.kind in "fc"):
                    self._compare(label(r), o, ref, lo + at, at)

    def _compare(self, name: str, got: np.ndarray, ref: np.ndarray, at: int, shown: int) -> None:
        """One block: exactly (integers, min/max) or within the float bound of the module
        docstring; ``at`` is the block's index in the rows, ``shown`` in the output."""
        if self.exact:
            check_equal(name, got, ref, shown)
            return
        p, fi = len(self.rows), np.finfo(got.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.subtract(got, ref, dtype=self.work)
            np.abs(diff, out=diff)
            tol = np.abs(ref)
            tol *= 4 * p * fi.eps
            tol += fi.tiny
            ok = diff <= tol
            ok |= _both_nan(got, ref)
            if ok.all():
                return
            loose = np.flatnonzero(~ok)
            mag = np.abs(np.stack([x[at + loose] for x in self.rows])).astype(self.work)
            if self.op == "prod":
                bound = np.prod(np.maximum(mag, 1), axis=0)  # no partial product exceeds it
                scale = np.abs(ref[loose])
            else:
                bound = mag.sum(axis=0)                       # no partial sum exceeds it
                scale = bound / p if self.op == "avg" else bound
            bad = ~(diff[loose] <= 4 * p * fi.eps * scale + fi.tiny) & (bound <= fi.max)
        if bad.any():
            raise _mismatch(name, got, ref, int(loose[np.flatnonzero(bad)[0]]), shown)
