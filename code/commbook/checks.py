"""Input checks shared by every layer: the one validation layer of :mod:`commbook`.

Every public entry point checks its arguments with these functions.  Each raises
``TypeError`` for the wrong kind of value and ``ValueError`` for a value out of range,
with a message that names the parameter and what it must be.

What counts as a number: any real number (``int``, ``float``, ``fractions.Fraction``,
numpy integer and floating scalars) and a 0-d numpy array holding one; never a ``bool``,
a string, ``None``, a list or an array with dimensions.  Integers must be integral types
(``2.0`` is not a count); integers too large for a float (``10**400``) and NaN / ±inf
are refused where a finite value is needed.
"""
from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

__all__ = ["check_size", "check_p", "check_link_params", "check_count", "require_pow2",
           "check_real", "check_nonneg", "check_positive", "check_fraction", "check_int",
           "check_link", "check_choice", "check_sequence", "check_flag", "check_node", "check_dims",
           "check_order", "check_servers", "finite_time", "BUTTERFLY_ORDERS", "as_value_error",
           "check_rational", "check_sizes", "first_arg"]

MAX_INT = 2**53
"""Largest count any check accepts: the last integer a float still holds exactly."""


def show(x: object) -> str:
    """``repr`` of a value, shortened for huge integers and long containers.

    >>> show(10**30), show(3)
    ('an integer of 31 digits', '3')
    """
    if isinstance(x, numbers.Integral) and not isinstance(x, bool) and abs(int(x)) >= 10**20:
        return f"an integer of {len(str(abs(int(x))))} digits"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _unwrap(x: object) -> object:
    """A 0-d numpy array stands for its scalar."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


def _not_index(x: object) -> bool:
    """Not an integer: a bool, an array with dimensions, anything without ``__index__``."""
    return isinstance(x, (bool, np.bool_, np.ndarray)) or not hasattr(x, "__index__")


def _kind(x: object) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    return type(x).__name__


def check_real(x: object, name: str, what: str = "a number", *, lo: float | None = None,
               lo_open: bool = False, hi: float | None = None, finite: bool = True) -> float:
    """Return ``x`` as a float if it is a real number within ``[lo, hi]`` (``(lo, hi]`` with
    ``lo_open``); NaN is always refused, ±inf unless ``finite=False``.

    >>> check_real(1.5, "share", lo=0, hi=1)
    Traceback (most recent call last):
    ValueError: share must be <= 1 (a number), got 1.5
    """
    x = _unwrap(x)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {_kind(x)}")
    try:
        value = float(x)
    except OverflowError:
        raise ValueError(f"{name} must be {what} (finite), got {show(x)}") from None
    if math.isnan(value):
        raise ValueError(f"{name} must be {what}, got NaN")
    if finite and math.isinf(value):
        raise ValueError(f"{name} must be {what} (finite), got {value!r}")
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo:g} ({what}), got {show(x)}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi:g} ({what}), got {show(x)}")
    return value


def check_rational(x: object, name: str, what: str = "a number (int, float or Fraction)") -> Fraction:
    """Return ``x`` as an exact Fraction if it is a finite real number (a float by its
    shortest repr: 0.4 is 2/5); a string is refused (pass a number or a Fraction).

    >>> check_rational(0.4, "x"), check_rational(3, "x")
    (Fraction(2, 5), Fraction(3, 1))
    """
    x = _unwrap(x)
    v = check_real(x, name, what)
    if isinstance(x, Fraction):
        return x
    return Fraction(int(x)) if isinstance(x, numbers.Integral) else Fraction(repr(v))


def check_nonneg(x: object, name: str, what: str = "a finite number") -> float:
    """Return ``x`` as a float if it is finite and >= 0.

    >>> check_nonneg(0, "alpha"), check_nonneg(2, "alpha")
    (0.0, 2.0)
    """
    return check_real(x, name, what, lo=0.0)


def check_positive(x: object, name: str, what: str = "a finite number") -> float:
    """Return ``x`` as a float if it is finite and > 0.

    >>> check_positive(0, "beta")
    Traceback (most recent call last):
    ValueError: beta must be > 0 (a finite number), got 0
    """
    return check_real(x, name, what, lo=0.0, lo_open=True)


def check_fraction(x: object, name: str, what: str = "a fraction") -> float:
    """Return ``x`` as a float if it lies in [0, 1].

    >>> check_fraction(0.25, "overlap")
    0.25
    """
    return check_real(x, name, what, lo=0.0, hi=1.0)


def check_int(x: object, name: str, what: str = "an integer", *, lo: int | None = None,
              hi: int | None = None) -> int:
    """Return ``x`` as an ``int`` if it is an integer (numpy integers and 0-d integer arrays
    included) within ``[lo, hi]`` and at most :data:`MAX_INT` in size.

    >>> check_int(2.0, "k")
    Traceback (most recent call last):
    TypeError: k must be an integer, got float
    """
    x = _unwrap(x)
    if _not_index(x):
        raise TypeError(f"{name} must be {what}, got {_kind(x)}")
    k = int(x.__index__())
    if lo is not None and k < lo:
        raise ValueError(f"{name} must be {what} >= {lo}, got {show(k)}")
    if abs(k) > MAX_INT:
        raise ValueError(f"{name} must be {what} of at most 2**53, got {show(k)}")
    if hi is not None and k > hi:
        raise ValueError(f"{name} must be {what} <= {hi}, got {show(k)}")
    return k


def check_size(n: object, name: str = "n") -> float:
    """Return ``n`` as a float if it is a finite, non-negative number of bytes.

    >>> check_size(-1, "nbytes")
    Traceback (most recent call last):
    ValueError: nbytes must be a finite, non-negative number of bytes, got -1
    """
    n = _unwrap(n)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Real):
        raise TypeError(f"{name} must be a number of bytes, got {_kind(n)}")
    value = _finite(n)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number of bytes, got NaN")
    if value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite, non-negative number of bytes, got {show(n)}")
    return value


def check_p(p: object, name: str = "p") -> int:
    """Return ``p`` if it is an integer >= 1 (a number of devices).

    >>> check_p(0)
    Traceback (most recent call last):
    ValueError: p (number of devices) must be >= 1, got 0
    """
    p = _unwrap(p)
    if _not_index(p):
        raise TypeError(f"{name} (number of devices) must be an integer, got {_kind(p)}")
    k = int(p.__index__())
    if k < 1:
        raise ValueError(f"{name} (number of devices) must be >= 1, got {k}")
    if k > MAX_INT:
        raise ValueError(f"{name} (number of devices) must be at most 2**53, got {show(k)}")
    return k


def check_count(k: object, name: str) -> int:
    """Return ``k`` if it is an integer >= 1 (a number of chunks, messages, servers ...).

    >>> check_count(0, "chunks")
    Traceback (most recent call last):
    ValueError: chunks must be an integer >= 1, got 0
    """
    k = _unwrap(k)
    if _not_index(k):
        raise ValueError(f"{name} must be an integer >= 1, got {show(k)}")
    v = int(k.__index__())
    if v < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {show(k)}")
    if v > MAX_INT:
        raise ValueError(f"{name} must be an integer >= 1 of at most 2**53, got {show(k)}")
    return v


def check_link_params(alpha: object, beta: object, alpha_name: str = "alpha",
                      beta_name: str = "beta") -> tuple[float, float]:
    """Return ``(alpha, beta)`` as floats if ``alpha >= 0`` and ``beta > 0`` (both finite);
    else ``ValueError`` (``TypeError`` for a value that is no number).

    >>> check_link_params(1e-6, 0)
    Traceback (most recent call last):
    ValueError: beta (bandwidth, bytes/s) must be finite and > 0, got 0
    """
    a, b = _unwrap(alpha), _unwrap(beta)
    for v, label in ((a, f"{alpha_name} (latency, seconds)"), (b, f"{beta_name} (bandwidth, bytes/s)")):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{label} must be a number, got {_kind(v)}")
    a, b = _finite(a), _finite(b)
    if not (math.isfinite(a) and a >= 0):
        raise ValueError(f"{alpha_name} (latency, seconds) must be finite and >= 0, got {show(alpha)}")
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"{beta_name} (bandwidth, bytes/s) must be finite and > 0, got {show(beta)}")
    return a, b


def _finite(v: numbers.Real) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf


def check_link(link: object, name: str = "link") -> object:
    """Return ``link`` if it is a link of the α–β model (a :class:`~commbook.hardware.Link`
    or anything with a valid ``alpha`` and ``beta``).

    >>> check_link("nvlink")
    Traceback (most recent call last):
    TypeError: link must be a Link (with alpha and beta), got str
    """
    if not (hasattr(link, "alpha") and hasattr(link, "beta")) or isinstance(link, (str, bytes)):
        raise TypeError(f"{name} must be a Link (with alpha and beta), got {_kind(link)}")
    check_link_params(link.alpha, link.beta, f"{name}.alpha", f"{name}.beta")
    return link


def check_choice(x: object, name: str, valid: Iterable[str], label: str | None = None) -> str:
    """Return ``x`` if it is one of the names ``valid``: ``TypeError`` for a non-string,
    ``ValueError`` ("unknown <label> 'x'; valid: ...") for an unknown one.

    >>> check_choice("rign", "algorithm", ["ring", "tree"])
    Traceback (most recent call last):
    ValueError: unknown algorithm 'rign'; valid: ring, tree
    """
    valid = list(valid)
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a name (str), one of {', '.join(valid)}; got {_kind(x)}")
    if x not in valid:
        raise ValueError(f"unknown {label or name} {x!r}; valid: {', '.join(valid)}")
    return x


def check_sequence(xs: object, name: str, what: str = "a sequence", *, nonempty: bool = True) -> list:
    """Return ``xs`` as a list if it is a (non-empty) sequence or 1-D array, not a string.

    >>> check_sequence([], "dims")
    Traceback (most recent call last):
    ValueError: dims must be a non-empty sequence, got an empty one
    """
    if isinstance(xs, np.ndarray):
        if xs.ndim != 1:
            raise ValueError(f"{name} must be {what} (1-D), got an array of shape {xs.shape}")
        xs = xs.tolist()
    if isinstance(xs, (str, bytes)) or not isinstance(xs, (Sequence, range)):
        raise TypeError(f"{name} must be {what} (a list or tuple), got {_kind(xs)}")
    if nonempty and len(xs) == 0:
        raise ValueError(f"{name} must be a non-empty {what.removeprefix('a ')}, got an empty one")
    return list(xs)


def check_sizes(sizes: object, name: str = "sizes") -> np.ndarray:
    """Return ``sizes`` (a number or a non-empty 1-D sequence of numbers of bytes, each
    finite and >= 0) as a float array; strings, None and 2-D arrays are refused.

    >>> check_sizes([1e6, 2**20])
    array([1000000., 1048576.])
    """
    raw = np.asarray(sizes, dtype=object) if not isinstance(sizes, np.ndarray) else sizes
    if raw.ndim > 1:
        raise TypeError(f"{name} must be a number or a 1-D sequence of byte counts, got shape {raw.shape}")
    values = [check_size(x, f"{name}[{i}]") for i, x in enumerate(np.atleast_1d(raw).tolist())]
    if not values:
        raise ValueError(f"{name} must hold at least one size, got an empty sequence")
    return np.array(values, dtype=float)


def check_flag(x: object, name: str) -> bool:
    """Return ``x`` if it is a bool (numpy's included).

    >>> check_flag(1, "binary")
    Traceback (most recent call last):
    TypeError: binary must be True or False, got int
    """
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_kind(x)}")
    return bool(x)


def check_node(x: object, name: str, cls: type | tuple[type, ...], what: str | None = None) -> object:
    """Return ``x`` if it is an instance of ``cls`` (a model, chip, topology ...).

    >>> check_node("3", "n", int)
    Traceback (most recent call last):
    TypeError: n must be a int, got str
    """
    if not isinstance(x, cls):
        names = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        raise TypeError(f"{name} must be {what or 'a ' + names}, got {_kind(x)}")
    return x


def check_dims(dims: object, name: str = "dims") -> list[int]:
    """Return the torus dimensions ``dims`` (a non-empty sequence of integers >= 1) as a list.

    >>> check_dims((4, 0))
    Traceback (most recent call last):
    ValueError: torus dimension dims[1] (number of devices) must be >= 1, got 0
    """
    return [check_p(a, f"torus dimension {name}[{i}]")
            for i, a in enumerate(check_sequence(dims, name, "a sequence of torus dimensions"))]


BUTTERFLY_ORDERS = ("far_first", "near_first")
"""Butterfly pairing orders: MPICH's (reduce-scatter at distance q/2 first) and the chapter's."""


def check_order(order: object) -> str:
    """Return ``order`` if it names a butterfly pairing order, else raise ``ValueError``.

    >>> check_order("random")
    Traceback (most recent call last):
    ValueError: unknown butterfly order 'random'; valid: far_first, near_first
    """
    return check_choice(order, "order", BUTTERFLY_ORDERS, "butterfly order")


def check_servers(servers: object, p: int) -> int:
    """Return the parameter-server count ``servers`` if 1 <= servers <= p, else raise.

    >>> check_servers(9, p=8)
    Traceback (most recent call last):
    ValueError: servers must be at most the number of ranks (8), got 9 (p = 8)
    """
    k = check_count(servers, "servers")
    if k > p:
        raise ValueError(f"servers must be at most the number of ranks ({p}), got {k} (p = {p})")
    return k


def finite_time(t: float, what: str = "the time of (p, n, alpha, beta)") -> float:
    """Return ``t`` as a float if it is finite: a guard against overflow from extreme but
    valid arguments (a huge n over a tiny beta); ``what`` names the arguments.

    >>> finite_time(1e300 * 1e300, "n / beta")
    Traceback (most recent call last):
    ValueError: n / beta overflows a float (inf): the arguments are too extreme for the model
    """
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f"{what} overflows a float ({t!r}): the arguments are too extreme for the model")
    return t


def as_value_error(check, *args, **kwargs):
    """Run ``check(*args, **kwargs)`` with a wrong type reported as ``ValueError`` too: for
    the modules whose documented rule is one ValueError for every bad value (compression).

    >>> as_value_error(check_p, "8")
    Traceback (most recent call last):
    ValueError: p (number of devices) must be an integer, got str
    """
    try:
        return check(*args, **kwargs)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def first_arg(cls: type, name: str):
    """Decorator: the function's first argument must be an instance of ``cls`` (a
    ``TypeError`` naming ``name`` otherwise, not an AttributeError deep inside).

    >>> first_arg(int, "k")(lambda k: 2 * k)("4")
    Traceback (most recent call last):
    TypeError: k must be a int, got str
    """
    def wrap(f):
        @functools.wraps(f)
        def checked(*args, **kwargs):
            check_node(args[0] if args else kwargs.get(name), name, cls)
            return f(*args, **kwargs)
        return checked
    return wrap


def require_pow2(p: int, what: str) -> None:
    """Raise ``ValueError`` unless ``p`` is a power of two.

    >>> require_pow2(6, "recursive doubling")
    Traceback (most recent call last):
    ValueError: p must be a power of two for recursive doubling, got p=6
    """
    if p & (p - 1):
        raise ValueError(f"p must be a power of two for {what}, got p={p}")
