r"""Gradient compression operators (chapter §1.6): each one encodes a gradient into a
:class:`~commbook.compression.base.Payload` — the arrays that would go on the wire — and
decodes a payload back (the payload and the :class:`~commbook.compression.base.Compressor`
interface are in :mod:`commbook.compression.base`; both are re-exported here).

The encoded size is read from the payload's own numpy arrays (``Payload.nbytes``), not
from a formula, and the ratio is against FP32 (4 bytes per element), as the chapter
counts it.  :meth:`Compressor.encoded_bytes` gives the same size in closed form, without
encoding anything; the tests check that the two agree.

==================  =========================================  ===========================
operator            on the wire                                 decode
==================  =========================================  ===========================
:class:`Identity`   d FP32 values (the baseline)               the values
:class:`FP16`       d FP16 values                              the values
:class:`Int8`       d INT8 values + one FP32 scale per block   q·s, s = max|g|/127 of the
                    (``block=None``: one for the tensor)       block (error ≤ s/2)
:class:`Sign`       d sign bits (packed) + one FP32 scale per  ±s, s = mean|g| of the chunk
                    chunk (``chunk=None``: one per tensor)     (scaled sign)
:class:`TopK`       k FP32 values + k indices                  the k largest ``|g|``, else 0
:class:`RandomK`    k FP32 values + k indices                  (d/k)·g on k uniform indices
:class:`Threshold`  d bits                                     quantum where g ≥ threshold
==================  =========================================  ===========================

Indices are 16-bit when the dimension allows it (d ≤ 65,536, so every index 0 … d − 1
fits an unsigned 16-bit integer; the chapter's "INT16 for d < 65536"), else 32-bit
(the chapter's INT32); ``index_dtype`` forces one.  Metadata both sides already know
(the operator and its settings, d, the block size) is not counted.

:class:`Threshold` is the toy compressor of the chapter's Tables 3 and 4: it sends a
unit *quantum* (1) when its input reaches 0.5 and nothing otherwise (inventory T-k:
v is the quantum, not the value).  It works on numpy object arrays of
:class:`fractions.Fraction` as well, so error-feedback traces can be exact
(:mod:`commbook.compression.feedback`).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..checks import as_value_error, check_nonneg, check_positive, check_rational, check_real
from .base import FP32_BYTES, Compressor, Payload, _dim, _freeze, _gradient, _positive_int

__all__ = ["FP32_BYTES", "Payload", "Compressor", "FP16", "Int8", "Sign", "TopK", "RandomK",
           "Threshold", "Identity", "index_dtype_for", "int8_block_ratio", "sparse_ratio"]

_INT16_MAX_DIM = 2**16


def index_dtype_for(d: int) -> np.dtype:
    """Unsigned 16-bit indices when d ≤ 65,536, else 32-bit.

    >>> str(index_dtype_for(65536)), str(index_dtype_for(65537))
    ('uint16', 'int32')
    """
    return np.dtype(np.uint16) if _dim(d) <= _INT16_MAX_DIM else np.dtype(np.int32)


def int8_block_ratio(block: int) -> float:
    """4b/(b + 4): INT8 values plus one FP32 scale per block of b, when b divides d
    (the chapter's §1.6.1 formula; 3.88× at b = 128).

    >>> round(int8_block_ratio(128), 2), round(Int8(block=128).ratio(1024), 2)
    (3.88, 3.88)
    """
    b = _positive_int(block, "block")
    return 4 * b / (b + 4)


def sparse_ratio(d: int, k: int, value_bytes: int = 4, index_bytes: int = 4) -> float:
    """4d / (k·(value + index bytes)): the chapter's d/(2K) with FP32 values and INT32
    indices (§1.6.2).

    Top-1 % of a million elements: 50×, not the 100× of counting the values alone:

    >>> sparse_ratio(10**6, k=10**4), TopK(0.01, index_dtype="int32").ratio(10**6)
    (50.0, 50.0)
    """
    d, k = _dim(d), _positive_int(k, "k")
    value_bytes = as_value_error(check_positive, value_bytes, "value_bytes", "a number of bytes")
    index_bytes = as_value_error(check_nonneg, index_bytes, "index_bytes", "a number of bytes")
    return FP32_BYTES * d / (k * (value_bytes + index_bytes))



class Identity(Compressor):
    """No compression: the FP32 values (the baseline every ratio is measured against).

    >>> Identity().ratio(1000), Identity()([0.5, -2.0]).tolist()
    (1.0, [0.5, -2.0])
    """

    name = "fp32"
    unbiased = True

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g)
        return Payload(self.name, a.shape, _freeze(values=a.astype(np.float32)))

    def decode(self, payload: Payload) -> np.ndarray:
        self._check(payload)
        return payload.arrays["values"].astype(np.float64).reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        return 4 * _dim(d)


class FP16(Compressor):
    """Half precision: 2 bytes per element (2×).  Values beyond FP16's range (±65,504)
    raise instead of turning into inf.

    >>> FP16().ratio(1000), FP16()([0.1]).tolist()  # 0.1's nearest FP16 value
    (2.0, [0.0999755859375])
    >>> FP16().encode([1e5])
    Traceback (most recent call last):
    ...
    ValueError: gradient exceeds the FP16 range (|g| > 65504): scale it first
    """

    name = "fp16"

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g)
        if np.max(np.abs(a)) > np.finfo(np.float16).max:
            raise ValueError("gradient exceeds the FP16 range (|g| > 65504): scale it first")
        return Payload(self.name, a.shape, _freeze(values=a.astype(np.float16)))

    def decode(self, payload: Payload) -> np.ndarray:
        self._check(payload)
        return payload.arrays["values"].astype(np.float64).reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        return 2 * _dim(d)


class Int8(Compressor):
    """INT8 with a scale s = max|g|/127 per tensor (``block=None``) or per block of
    ``block`` consecutive elements: q = round(g/s) ∈ [−127, 127], decoded as q·s.  The
    scale is stored in FP32 and the rounding uses the stored scale, so every element's
    error is at most s/2 (s of its block).

    >>> g = np.array([0.3, -1.27])                          # s = 1.27 / 127 = 0.01
    >>> Int8().encode(g).arrays["values"].tolist(), bool(np.abs(Int8()(g) - g).max() <= 0.005)
    ([30, -127], True)
    """

    def __init__(self, block: int | None = None):
        self.block = None if block is None else _positive_int(block, "block")
        self.name = "int8" if block is None else f"int8/b{self.block}"

    def _blocks(self, d: int) -> int:
        return 1 if self.block is None else math.ceil(d / self.block)

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g)
        flat, d = a.ravel(), a.size
        if self.block is None:
            scale = np.array([np.abs(flat).max() / 127], dtype=np.float32)
            q = np.rint(flat / (float(scale[0]) or 1.0))
            return Payload(self.name, a.shape, _freeze(values=np.clip(q, -127, 127).astype(np.int8),
                                                       scales=scale))
        b = self.block
        padded = np.zeros(self._blocks(d) * b)
        padded[:d] = flat
        blocks = padded.reshape(-1, b)
        scales = (np.max(np.abs(blocks), axis=1) / 127).astype(np.float32)
        safe = np.where(scales > 0, scales, 1).astype(np.float64)
        q = np.clip(np.rint(blocks / safe[:, None]), -127, 127).astype(np.int8)
        return Payload(self.name, a.shape, _freeze(values=q.ravel()[:d], scales=scales))

    def decode(self, payload: Payload) -> np.ndarray:
        self._check(payload)
        q, s = payload.arrays["values"].astype(np.float64), payload.arrays["scales"].astype(np.float64)
        b = payload.size if self.block is None else self.block
        return (q * np.repeat(s, b)[:q.size]).reshape(payload.shape)

    def scales(self, payload: Payload) -> np.ndarray:
        """Each element's scale s (the bound on its error is s/2)."""
        self._check(payload)
        b = payload.size if self.block is None else self.block
        return np.repeat(payload.arrays["scales"].astype(np.float64), b)[:payload.size].reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        d = _dim(d)
        return d + 4 * self._blocks(d)


class Sign(Compressor):
    """1-bit (scaled sign, Seide et al. 2014; Karimireddy et al. 2019): one bit per
    element (g ≥ 0 → +, packed eight to a byte) and one FP32 scale s = mean|g| per chunk
    of ``chunk`` elements (``None``: one for the tensor); decoded as ±s.

    >>> Sign()([1.0, -3.0]).tolist(), Sign().encoded_bytes(1024)  # s = 2; 128 B of bits + a scale
    ([2.0, -2.0], 132)
    """

    def __init__(self, chunk: int | None = None):
        self.chunk = None if chunk is None else _positive_int(chunk, "chunk")
        self.name = "sign" if chunk is None else f"sign/c{self.chunk}"

    def _chunks(self, d: int) -> int:
        return 1 if self.chunk is None else math.ceil(d / self.chunk)

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g)
        flat, d = a.ravel(), a.size
        if self.chunk is None:
            scales = np.array([np.abs(flat).sum() / d], dtype=np.float32)
        else:
            starts = np.arange(0, d, self.chunk)
            sums = np.add.reduceat(np.abs(flat), starts)
            scales = (sums / np.diff(np.append(starts, d))).astype(np.float32)
        return Payload(self.name, a.shape, _freeze(bits=np.packbits(flat >= 0), scales=scales))

    def decode(self, payload: Payload) -> np.ndarray:
        self._check(payload)
        d = payload.size
        c = d if self.chunk is None else self.chunk
        pos = np.unpackbits(payload.arrays["bits"], count=d).astype(bool)
        s = np.repeat(payload.arrays["scales"].astype(np.float64), c)[:d]
        return np.where(pos, s, -s).reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        d = _dim(d)
        return math.ceil(d / 8) + 4 * self._chunks(d)


class _Sparse(Compressor):
    def __init__(self, fraction: float | None = None, k: int | None = None,
                 index_dtype: str | np.dtype | None = None):
        if (fraction is None) == (k is None):
            raise ValueError("give exactly one of fraction (0 < f <= 1) or k (>= 1)")
        if fraction is not None:
            fraction = as_value_error(check_real, fraction, "fraction", "a share in (0, 1]")
            if not 0 < fraction <= 1:
                raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
        self.fraction = None if fraction is None else float(fraction)
        self.fixed_k = None if k is None else _positive_int(k, "k")
        if index_dtype is not None and np.dtype(index_dtype) not in (np.dtype(np.uint16), np.dtype(np.int32)):
            raise ValueError(f"index_dtype must be uint16 or int32, got {index_dtype!r}")
        self.index_dtype = None if index_dtype is None else np.dtype(index_dtype)
        what = f"{self.fraction:g}" if k is None else f"k{self.fixed_k}"
        self.name = f"{self.kind}/{what}"

    def k(self, d: int) -> int:
        """Entries kept out of d: round(fraction·d), at least 1 (or the fixed k)."""
        d = _dim(d)
        k = self.fixed_k if self.fixed_k is not None else max(1, round(self.fraction * d))
        if k > d:
            raise ValueError(f"k = {k} exceeds the dimension d = {d}")
        return k

    def _idx_dtype(self, d: int) -> np.dtype:
        dt = self.index_dtype or index_dtype_for(d)
        if dt == np.uint16 and d > _INT16_MAX_DIM:
            raise ValueError(f"16-bit indices cannot address d = {d} > 65536 elements")
        return dt

    def _payload(self, a: np.ndarray, idx: np.ndarray) -> Payload:
        idx = np.sort(idx)
        return Payload(self.name, a.shape, _freeze(values=a.ravel()[idx].astype(np.float32),
                                                   indices=idx.astype(self._idx_dtype(a.size))))

    def _scatter(self, payload: Payload, scale: float) -> np.ndarray:
        self._check(payload)
        out = np.zeros(payload.size)
        out[payload.arrays["indices"].astype(np.int64)] = payload.arrays["values"].astype(np.float64) * scale
        return out.reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        return self.k(d) * (4 + self._idx_dtype(_dim(d)).itemsize)


class TopK(_Sparse):
    """Top-k (Lin et al. 2018): the k entries of largest ``|g|`` (exactly k; ties broken by
    ``np.argpartition``), FP32 values and their indices.

    >>> TopK(k=2)([3.0, -5.0, 1.0, 4.0]).tolist(), TopK(0.01).encoded_bytes(1000)  # 10 x (4 + 2) B
    ([0.0, -5.0, 0.0, 4.0], 60)
    """

    kind = "topk"

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g)
        k = self.k(a.size)
        return self._payload(a, np.argpartition(np.abs(a.ravel()), a.size - k)[a.size - k:])

    def decode(self, payload: Payload) -> np.ndarray:
        return self._scatter(payload, 1.0)


class RandomK(_Sparse):
    """Random-k: k indices drawn uniformly without replacement from ``rng`` (required, so
    runs are reproducible), values scaled by d/k on decode: E[decode] = g.

    >>> RandomK(k=2)([1.0, 2.0, 3.0, 4.0], np.random.default_rng(0)).tolist()  # x d/k = 2
    [0.0, 0.0, 6.0, 8.0]
    """

    kind = "randk"
    unbiased = True
    contractive = False

    def encode(self, g, rng: np.random.Generator | None = None) -> Payload:
        if not isinstance(rng, np.random.Generator):
            raise TypeError("RandomK needs rng, a seeded numpy.random.Generator")
        a = _gradient(g)
        return self._payload(a, rng.choice(a.size, size=self.k(a.size), replace=False))

    def decode(self, payload: Payload) -> np.ndarray:
        return self._scatter(payload, payload.size / payload.arrays["values"].size)


class Threshold(Compressor):
    """The chapter's toy compressor (Tables 3 and 4): one bit per element, set when the
    input is ≥ ``threshold``; decoded as ``quantum`` (1) or 0.  It never sends a negative
    quantum, as in the chapter.  Works on object arrays of Fraction (exact).

    >>> Threshold()([0.4, 0.5, 0.7]).tolist(), Threshold().encoded_bytes(16)
    ([0, 1, 1], 2)
    """

    def __init__(self, threshold: Fraction | int | float = Fraction(1, 2), quantum: Fraction | int | float = 1):
        self.threshold, self.quantum = check_rational(threshold, "threshold"), check_rational(quantum, "quantum")
        if self.quantum <= 0:
            raise ValueError(f"quantum must be > 0, got {quantum!r}")
        self.name = f"threshold/{self.threshold}/{self.quantum}"

    def encode(self, g, rng=None) -> Payload:
        a = _gradient(g, exact_ok=True)
        if a.dtype != object and Fraction(float(self.threshold)) == self.threshold:
            bits = a.ravel() >= float(self.threshold)           # exact: the threshold is a float
        else:
            bits = np.array([x >= self.threshold for x in a.ravel()], dtype=bool)
        return Payload(self.name, a.shape, _freeze(bits=np.packbits(bits)))

    def decode(self, payload: Payload) -> np.ndarray:
        self._check(payload)
        bits = np.unpackbits(payload.arrays["bits"], count=payload.size).astype(bool)
        out = np.zeros(payload.size, dtype=object)
        out[bits] = self.quantum if self.quantum.denominator != 1 else int(self.quantum)
        return out.reshape(payload.shape)

    def encoded_bytes(self, d: int) -> int:
        return math.ceil(_dim(d) / 8)
