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
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["Reference", "check_equal"]

BLOCK = 1 << 18
"""Elements per block of the float check (a few hundred KiB: the temporaries stay in cache)."""


def check_equal(name: str, got: np.ndarray, ref: np.ndarray) -> None:
    """Raise ``AssertionError`` unless ``got`` equals ``ref`` exactly (shape and values)."""
    if got.shape != ref.shape:
        raise AssertionError(f"{name}: output shape {got.shape} differs from the reference {ref.shape}")
    if not np.array_equal(got, ref):
        i = int(np.flatnonzero(got != ref)[0])
        raise AssertionError(f"{name}: element {i} is {got[i]!r}, numpy reference {ref[i]!r}")


def _int_avg(total: np.ndarray, p: int) -> np.ndarray:
    """Truncating division by p with Python integers (no fixed-width overflow)."""
    out = [(abs(int(v)) // p) * (1 if v >= 0 else -1) for v in total.tolist()]
    return np.array(out, dtype=total.dtype)


class Reference:
    """The reduction of ``data`` under ``op`` and the check of outputs against it."""

    def __init__(self, data: Sequence[np.ndarray], op: str):
        self.rows, self.op = [np.asarray(x).ravel() for x in data], op  # views, no copy
        dt, p = self.rows[0].dtype, len(self.rows)
        self.exact = dt.kind == "i" or op in ("min", "max")
        self.work = dt if self.exact else (np.float32 if dt == np.float16 else dt)
        ufunc = {"min": np.minimum, "max": np.maximum, "prod": np.multiply}.get(op, np.add)
        with np.errstate(over="ignore", invalid="ignore"):
            ref = self.rows[0].astype(self.work, copy=True)
            for x in self.rows[1:]:
                ufunc(ref, x, out=ref)
            if op == "avg":
                ref = _int_avg(ref, p) if dt.kind == "i" else ref / np.asarray(p, dtype=self.work)
        self.ref = ref

    def check(self, name: str, got: np.ndarray, sl: slice = slice(None)) -> None:
        """Check one output (the whole reduction, or its slice ``sl``)."""
        ref = self.ref[sl]
        if self.exact or got.shape != ref.shape:
            check_equal(name, got, ref)
            return
        base = sl.start or 0
        for lo in range(0, ref.size, BLOCK):  # block by block: temporaries stay in cache
            self._check_floats(name, got[lo:lo + BLOCK], ref[lo:lo + BLOCK], base + lo, lo)

    def _check_floats(self, name: str, got: np.ndarray, ref: np.ndarray, at: int, shown: int) -> None:
        p, fi = len(self.rows), np.finfo(got.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            diff = got.astype(self.work, copy=False) - ref
            np.abs(diff, out=diff)
            tol = np.abs(ref)
            tol *= 4 * p * fi.eps
            tol += fi.tiny
            loose = np.flatnonzero(~(diff <= tol))
            if loose.size == 0:
                return
            mag = np.abs(np.stack([x[at + loose] for x in self.rows])).astype(self.work)
            if self.op == "prod":
                bound = np.prod(np.maximum(mag, 1), axis=0)  # no partial product exceeds it
                scale = np.abs(ref[loose])
            else:
                bound = mag.sum(axis=0)                       # no partial sum exceeds it
                scale = bound / p if self.op == "avg" else bound
            bad = ~(diff[loose] <= 4 * p * fi.eps * scale + fi.tiny) & (bound <= fi.max)
        if bad.any():
            i = int(loose[np.flatnonzero(bad)[0]])
            raise AssertionError(f"{name}: element {shown + i} is {got[i]!r}, numpy reference {ref[i]!r}")

    def check_all(self, name: str, outs: list[np.ndarray]) -> None:
        """Check every rank's output.  Outputs bit-identical to rank 0's are found in one
        blocked pass (rank 0's block stays in cache while the others are compared with it);
        rank 0 and every rank that differs are then checked against the reference."""
        first = outs[0]
        differs = [o.shape != first.shape for o in outs]
        for lo in range(0, first.size, BLOCK):
            block = first[lo:lo + BLOCK]
            for r in range(1, len(outs)):
                if not differs[r] and not np.array_equal(outs[r][lo:lo + BLOCK], block):
                    differs[r] = True
        for r, o in enumerate(outs):
            if r == 0 or differs[r]:
                self.check(f"{name} rank {r}", o)
