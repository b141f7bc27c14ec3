r"""The wire format and the interface of every gradient compressor (chapter §1.6).

A :class:`Payload` holds the numpy arrays one worker would put on the wire for one
gradient, and reads its encoded size from them; a :class:`Compressor` encodes a gradient
into a payload and decodes it back.  The operators themselves (FP16, INT8, sign, top-k,
random-k, the chapter's threshold) are in :mod:`commbook.compression.operators`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ..checks import as_value_error, check_int

__all__ = ["FP32_BYTES", "Payload", "Compressor"]

FP32_BYTES = 4
"""Bytes of one uncompressed (FP32) gradient element: the chapter's baseline."""


@dataclass(frozen=True)
class Payload:
    """What one worker sends for one gradient: ``arrays`` by name (read-only), made by
    the operator named ``codec`` from a gradient of ``shape``.

    INT8 in blocks of 128: 256 one-byte values and two FP32 scales, 4 x 256 / 264 = 3.88×:

    >>> from commbook.compression.operators import Int8
    >>> p = Int8(block=128).encode(np.ones(256))
    >>> p.nbytes, p.breakdown, round(p.ratio, 2)
    (264, {'values': 256, 'scales': 8}, 3.88)
    """

    codec: str
    shape: tuple[int, ...]
    arrays: Mapping[str, np.ndarray] = field(repr=False)

    @property
    def size(self) -> int:
        """Number of gradient elements d."""
        return int(math.prod(self.shape))

    @property
    def nbytes(self) -> int:
        """Encoded size: the bytes of every array on the wire."""
        return int(sum(a.nbytes for a in self.arrays.values()))

    @property
    def breakdown(self) -> dict[str, int]:
        """Bytes per array (values, indices, scales, bits)."""
        return {k: int(a.nbytes) for k, a in self.arrays.items()}

    @property
    def ratio(self) -> float:
        """Compression ratio against FP32: 4·d / encoded bytes."""
        return FP32_BYTES * self.size / self.nbytes if self.nbytes else math.inf


def _freeze(**arrays: np.ndarray) -> Mapping[str, np.ndarray]:
    """Read-only view of freshly made arrays (every encoder builds new ones)."""
    for a in arrays.values():
        a.setflags(write=False)
    return MappingProxyType(arrays)


def _gradient(g, exact_ok: bool = False) -> np.ndarray:
    """``g`` as a numpy array of finite reals (object arrays of exact numbers only where
    ``exact_ok``)."""
    a = np.asarray(g)
    if a.size == 0:
        raise ValueError("gradient must have at least one element")
    if a.dtype == object and exact_ok:
        for x in a.flat:
            if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)):
                raise TypeError(f"gradient values must be int, float or Fraction, got {type(x).__name__}")
            if isinstance(x, float) and not math.isfinite(x):
                raise ValueError("gradient must be finite (found NaN or inf)")
        return a
    if a.dtype.kind not in "iuf":
        extra = " (exact Fraction values only go through Threshold)" if a.dtype == object else ""
        raise TypeError(f"gradient must be an array of real numbers, got dtype {a.dtype}{extra}")
    a = a.astype(np.float64, copy=False)
    if not np.isfinite(a).all():
        raise ValueError("gradient must be finite (found NaN or inf)")
    return a


def _positive_int(x, name: str) -> int:
    return as_value_error(check_int, x, name, lo=1)


def _dim(d) -> int:
    return _positive_int(d, "d (number of gradient elements)")


class Compressor:
    """Base of the operators: ``encode(g, rng)`` → :class:`Payload`,
    ``decode(payload)`` → array of the gradient's shape, ``encoded_bytes(d)`` the closed
    form of the payload size.  ``unbiased`` says whether E[decode(encode(g))] = g;
    ``contractive`` whether what it drops is smaller than its input (what error feedback
    needs: random-k scaled by d/k is not).

    >>> from commbook.compression.operators import RandomK, Sign, TopK
    >>> TopK(0.5).decode(Sign().encode([1.0]))
    Traceback (most recent call last):
    ...
    ValueError: topk/0.5 cannot decode a 'sign' payload
    >>> RandomK.unbiased, RandomK.contractive, round(Sign().ratio(1024), 2)
    (True, False, 31.03)
    """

    name = "compressor"
    unbiased = False
    contractive = True

    def encode(self, g, rng: np.random.Generator | None = None) -> Payload:
        raise NotImplementedError

    def decode(self, payload: Payload) -> np.ndarray:
        raise NotImplementedError

    def encoded_bytes(self, d: int) -> int:
        raise NotImplementedError

    def ratio(self, d: int) -> float:
        """4d / encoded_bytes(d)."""
        return FP32_BYTES * _dim(d) / self.encoded_bytes(d)

    def __call__(self, g, rng: np.random.Generator | None = None) -> np.ndarray:
        """decode(encode(g)): what the receiver reconstructs."""
        return self.decode(self.encode(g, rng))

    def _check(self, payload: Payload) -> None:
        if not isinstance(payload, Payload):
            raise TypeError(f"expected a Payload, got {type(payload).__name__}")
        if payload.codec != self.name:
            raise ValueError(f"{self.name} cannot decode a {payload.codec!r} payload")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

