r"""Data-parallel training with compressed gradients on a seeded least-squares problem,
with and without error feedback, and 1-bit Adam (Tang et al. 2021).

**The problem** (:func:`least_squares`).  ``workers`` workers (8) each hold ``rows`` rows
(64) of a d = 100 least-squares problem, A_w ∈ R^{64×100} with N(0, 1) entries and
targets b_w = A_w x_w, where every worker's x_w is a shared x_true (N(0, 1)) plus
``heterogeneity`` (0.005) × N(0, 1): the workers' data differ a little, as real shards
do.  The loss is ½·mean of the squared residuals over all 512 rows; its minimum L* and
minimiser come from ``numpy.linalg.lstsq``.  Runs start at x = 0 and report the
**relative excess loss** (L(x_t) − L*)/(L(x_0) − L*) after every step.

**SGD** (:func:`train_sgd`): every step each worker computes its full-batch gradient,
compresses it (through :class:`~commbook.compression.feedback.ErrorFeedback` when
``feedback``), and the server averages the decoded payloads; x ← x − lr·average.  The
learning rate is fixed, ``LR`` = 0.04 for ``STEPS`` = 500 steps (the largest
eigenvalue of the Hessian is about 2, so plain gradient descent is stable up to ≈ 1).  Uncompressed
(``compressor=None``) runs in float64 and is counted as FP32 on the wire.

Without error feedback two things go wrong.  Each step moves along only what the
operator kept, so progress is slow (top-1 % of d = 100 is one coordinate per worker);
and with differing shards the local gradients at the optimum are not zero (they only
sum to zero), so the kept parts need not cancel: the optimum is not a fixed point
(:func:`update_at_optimum`), the iterates stall at a biased point.  Error feedback
repairs both, but with a fixed learning rate it leaves an oscillation of order lr ×
residual (the workers' residuals need not cancel each step): a floor that grows like
(lr · heterogeneity)², which the settings above keep below 1e-5.  With identical shards
(``heterogeneity=0``) the floor is gone, and so is the bias.

**1-bit Adam** (:func:`train_onebit_adam`): Adam with full-precision averaging for the
first ``warmup`` share of the steps; then the variance is frozen (its bias-corrected
value at the end of warm-up), each worker forms its momentum β₁m + (1 − β₁)g_w,
compresses it to 1 bit (scaled sign) with its own error feedback, the server averages
and compresses the average again with a server error feedback, and everyone updates
with x ← x − lr·m/(√v_frozen + ε).  Each worker then sends ``f·32 + (1 − f)·1`` bits
per element instead of 32: :func:`onebit_adam_ratio` = 1/(f + (1 − f)/32) less (plus the
scale per tensor, which :class:`Run` counts from the payloads).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..checks import as_value_error, check_int, check_nonneg, check_positive, check_real, check_sequence, show
from .feedback import ErrorFeedback
from .operators import FP32_BYTES, Compressor, Sign

__all__ = ["WORKERS", "DIM", "ROWS", "HETEROGENEITY", "LR", "STEPS", "ADAM_LR", "ADAM_STEPS",
           "ONEBIT_WARMUP", "LeastSquares", "least_squares", "Run", "train_sgd", "train_adam",
           "train_onebit_adam", "onebit_adam_ratio", "update_at_optimum"]

WORKERS, DIM, ROWS = 8, 100, 64
HETEROGENEITY = 0.005
LR, STEPS = 0.04, 500
ADAM_LR, ADAM_STEPS, ONEBIT_WARMUP = 0.05, 800, 0.2


@dataclass(frozen=True)
class LeastSquares:
    """A (workers, rows, d), b (workers, rows); the minimiser ``x_opt`` and minimum
    ``loss_opt`` (numpy lstsq); runs start from ``x0`` = 0.

    The workers' gradients sum to zero at the minimiser (each one alone does not):

    >>> p = least_squares()
    >>> p.A.shape, p.excess(p.x0), bool(np.allclose(p.gradients(p.x_opt).mean(axis=0), 0))
    ((8, 64, 100), 1.0, True)
    """

    A: np.ndarray
    b: np.ndarray
    x_opt: np.ndarray
    loss_opt: float

    @property
    def workers(self) -> int:
        return self.A.shape[0]

    @property
    def dim(self) -> int:
        return self.A.shape[2]

    @property
    def x0(self) -> np.ndarray:
        return np.zeros(self.dim)

    def loss(self, x: np.ndarray) -> float:
        """½ · mean over all rows of (a·x − b)²."""
        r = (self.A @ x - self.b).ravel()
        return 0.5 * float(r @ r) / r.size

    def gradients(self, x: np.ndarray) -> np.ndarray:
        """Each worker's full-batch gradient A_wᵀ(A_w x − b_w)/rows, shape (workers, d);
        their mean is the gradient of :meth:`loss`."""
        return np.einsum("wrd,wr->wd", self.A, self.A @ x - self.b) / self.A.shape[1]

    def excess(self, x: np.ndarray) -> float:
        """(L(x) − L*) / (L(x0) − L*)."""
        return (self.loss(x) - self.loss_opt) / (self.loss(self.x0) - self.loss_opt)


def _count(x, name: str, hi: int | None = None) -> int:
    return as_value_error(check_int, x, name, lo=1, hi=hi)


def _nonneg(x, name: str) -> float:
    return as_value_error(check_nonneg, x, name)


def _share(x, name: str, lo_open: bool) -> float:
    """A share of the steps: in (0, 1] (``lo_open``) or [0, 1]."""
    v = as_value_error(check_real, x, name, "a share")
    if not (0 < v <= 1 if lo_open else 0 <= v <= 1):
        raise ValueError(f"{name} must be a share of the steps in {'(0' if lo_open else '[0'}, 1], got {show(x)}")
    return v


def least_squares(workers: int = WORKERS, dim: int = DIM, rows: int = ROWS,
                  heterogeneity: float = HETEROGENEITY, noise: float = 0.0,
                  seed: int = 0) -> LeastSquares:
    """The seeded problem of the module docs (``noise`` adds N(0, noise²) to b).

    >>> least_squares(workers=2, dim=3, rows=4).b.shape
    (2, 4)
    >>> least_squares(workers=0)
    Traceback (most recent call last):
    ...
    ValueError: workers must be an integer >= 1, got 0
    """
    w, d, r = _count(workers, "workers", 10**6), _count(dim, "dim", 10**6), _count(rows, "rows", 10**6)
    if w * d * r > 2**28:
        raise ValueError(f"workers x rows x dim = {w * r * d} elements is too large (at most 2**28)")
    het, noise = _nonneg(heterogeneity, "heterogeneity"), _nonneg(noise, "noise")
    rng = np.random.default_rng(as_value_error(check_int, seed, "seed", lo=0))
    A = rng.standard_normal((w, r, d))
    x_w = rng.standard_normal(d) + het * rng.standard_normal((w, d))
    b = np.einsum("wrd,wd->wr", A, x_w) + noise * rng.standard_normal((w, r))
    x_opt = np.linalg.lstsq(A.reshape(-1, d), b.ravel(), rcond=None)[0]
    res = A.reshape(-1, d) @ x_opt - b.ravel()
    loss = 0.5 * float(np.mean(res * res))
    if not (np.isfinite(b).all() and np.isfinite(x_opt).all() and np.isfinite(loss)):
        raise ValueError(f"heterogeneity ({het:g}) or noise ({noise:g}) is too large: the problem overflows")
    return LeastSquares(A, b, x_opt, loss)


@dataclass(frozen=True)
class Run:
    """One training run: ``excess`` after each step (index 0 = start, = 1), the final
    loss, bytes each worker sent (``bytes_up``) and received from the server
    (``bytes_down``) over the run, and its wall time in seconds (measured, varies).

    Uncompressed, each of 500 steps sends 100 FP32 values each way:

    >>> run = train_sgd(least_squares())
    >>> run.name, run.bytes_up, run.bytes_down, run.final < 1e-6
    ('fp32', 200000, 200000, True)
    """

    name: str
    lr: float
    steps: int
    excess: np.ndarray
    final_loss: float
    bytes_up: int
    bytes_down: int
    seconds: float

    @property
    def final(self) -> float:
        """Relative excess loss after the last step."""
        return float(self.excess[-1])


def _setup(problem, lr, steps):
    if not isinstance(problem, LeastSquares):
        raise TypeError(f"problem must be a LeastSquares (see least_squares()), got {type(problem).__name__}")
    return as_value_error(check_positive, lr, "lr"), _count(steps, "steps")


def train_sgd(problem: LeastSquares, compressor: Compressor | None = None, *, feedback: bool = True,
              lr: float = LR, steps: int = STEPS, seed: int = 0) -> Run:
    """Data-parallel gradient descent; each worker sends ``compressor``'s payload (with
    error feedback when ``feedback``), the server averages the decodes.  ``seed``
    drives random operators (RandomK).

    Top-1 % (one FP32 value and a 2-byte index a step) stalls without error feedback
    and converges with it:

    >>> from commbook.compression.operators import TopK
    >>> p = least_squares()
    >>> ef, no_ef = train_sgd(p, TopK(0.01)), train_sgd(p, TopK(0.01), feedback=False)
    >>> ef.bytes_up, ef.final < 1e-5, no_ef.final > 0.1
    (3000, True, True)
    """
    lr, steps = _setup(problem, lr, steps)
    if compressor is not None and not isinstance(compressor, Compressor):
        raise TypeError(f"compressor must be a Compressor or None, got {type(compressor).__name__}")
    if not isinstance(feedback, bool):
        raise TypeError(f"feedback must be a bool, got {type(feedback).__name__}")
    rng = np.random.default_rng(seed)
    W, d = problem.workers, problem.dim
    efs = [ErrorFeedback(compressor) for _ in range(W)] if compressor is not None and feedback else None
    x, excess, sent = problem.x0, np.empty(steps + 1), 0
    excess[0] = 1.0
    start = time.perf_counter()
    for t in range(1, steps + 1):
        G = problem.gradients(x)
        if compressor is None:
            avg, sent = G.mean(axis=0), sent + W * FP32_BYTES * d
        else:
            total = np.zeros(d)
            for w in range(W):
                if efs is not None:
                    payload, v = efs[w].step(G[w], rng)
                else:
                    payload = compressor.encode(G[w], rng)
                    v = compressor.decode(payload)
                total += v
                sent += payload.nbytes
            avg = total / W
        x = x - lr * avg
        excess[t] = problem.excess(x)
    seconds = time.perf_counter() - start
    name = "fp32" if compressor is None else compressor.name + (" + EF" if feedback else "")
    return Run(name, lr, steps, excess, problem.loss(x), sent // W, steps * FP32_BYTES * d, seconds)


def _betas(betas, eps):
    b1, b2 = as_value_error(check_sequence, betas, "betas", "a (beta1, beta2) pair")
    for v, n in ((b1, "beta1"), (b2, "beta2")):
        if not 0 <= as_value_error(check_real, v, n) < 1:
            raise ValueError(f"{n} must be in [0, 1), got {v!r}")
    return float(b1), float(b2), as_value_error(check_positive, eps, "eps")


def train_adam(problem: LeastSquares, *, lr: float = ADAM_LR, steps: int = ADAM_STEPS,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> Run:
    """Adam (Kingma & Ba 2015, bias-corrected) on the averaged full-precision gradient.

    >>> run = train_adam(least_squares())
    >>> run.bytes_up, run.final < 1e-10  # 800 steps x 100 FP32 values
    (320000, True)
    """
    lr, steps = _setup(problem, lr, steps)
    b1, b2, eps = _betas(betas, eps)
    d = problem.dim
    x, m, v = problem.x0, np.zeros(d), np.zeros(d)
    excess = np.empty(steps + 1)
    excess[0] = 1.0
    start = time.perf_counter()
    for t in range(1, steps + 1):
        g = problem.gradients(x).mean(axis=0)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        x = x - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        excess[t] = problem.excess(x)
    seconds = time.perf_counter() - start
    nbytes = steps * FP32_BYTES * d
    return Run("adam", lr, steps, excess, problem.loss(x), nbytes, nbytes, seconds)


def train_onebit_adam(problem: LeastSquares, *, warmup: float = ONEBIT_WARMUP, lr: float = ADAM_LR,
                      steps: int = ADAM_STEPS, betas: tuple[float, float] = (0.9, 0.999),
                      eps: float = 1e-8, compressor: Compressor | None = None) -> Run:
    """1-bit Adam (module docs): ``round(warmup·steps)`` (at least 1) full-precision Adam
    steps, then frozen variance and 1-bit momentum (``compressor``, default
    :class:`~commbook.compression.operators.Sign`) with worker and server error feedback.

    With 20 % warm-up it sends 4.27× fewer bytes than Adam (4.44× less the per-tensor
    scales) and still converges:

    >>> p = least_squares()
    >>> onebit = train_onebit_adam(p, warmup=0.2)
    >>> round(train_adam(p).bytes_up / onebit.bytes_up, 2), onebit.final < 1e-5
    (4.27, True)
    """
    lr, steps = _setup(problem, lr, steps)
    b1, b2, eps = _betas(betas, eps)
    warmup = _share(warmup, "warmup", lo_open=True)
    comp = Sign() if compressor is None else compressor
    if not isinstance(comp, Compressor):
        raise TypeError(f"compressor must be a Compressor, got {type(comp).__name__}")
    W, d = problem.workers, problem.dim
    t_warm = max(1, round(warmup * steps))
    workers, server = [ErrorFeedback(comp) for _ in range(W)], ErrorFeedback(comp)
    x, m, v = problem.x0, np.zeros(d), np.zeros(d)
    excess, up, down = np.empty(steps + 1), 0, 0
    excess[0] = 1.0
    start = time.perf_counter()
    for t in range(1, steps + 1):
        G = problem.gradients(x)
        if t <= t_warm:
            g = G.mean(axis=0)
            m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
            x = x - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
            up, down = up + FP32_BYTES * d, down + FP32_BYTES * d
            if t == t_warm:
                precond = np.sqrt(v / (1 - b2**t)) + eps
        else:
            total = np.zeros(d)
            for w in range(W):
                payload, c = workers[w].step(b1 * m + (1 - b1) * G[w])
                total += c
                up += payload.nbytes if w == 0 else 0
            payload, m = server.step(total / W)
            down += payload.nbytes
            x = x - lr * m / precond
        excess[t] = problem.excess(x)
    seconds = time.perf_counter() - start
    return Run(f"1-bit adam (warm-up {warmup:g})", lr, steps, excess, problem.loss(x), up, down, seconds)


def onebit_adam_ratio(warmup: float, bits: float = 32) -> float:
    """Adam's bits over 1-bit Adam's: 1/(f + (1 − f)/bits), f the warm-up share and
    ``bits`` the compression of the momentum (32 for 1 bit per FP32 element).

    >>> onebit_adam_ratio(0), onebit_adam_ratio(1), round(onebit_adam_ratio(0.2), 2)
    (32.0, 1.0, 4.44)
    >>> onebit_adam_ratio(1.5)
    Traceback (most recent call last):
    ...
    ValueError: warmup must be a share of the steps in [0, 1], got 1.5
    """
    warmup = _share(warmup, "warmup", lo_open=False)
    bits = as_value_error(check_real, bits, "bits", "the compression ratio of the momentum", lo=1.0)
    return 1 / (warmup + (1 - warmup) / bits)


def update_at_optimum(problem: LeastSquares, compressor: Compressor | None = None,
                      seed: int = 0) -> float:
    """‖average of the workers' decoded payloads‖ at the minimiser, without error
    feedback: 0 (to rounding) uncompressed, where the local gradients sum to zero; not 0
    for a biased operator, whose iterates therefore cannot stay at the optimum.

    >>> from commbook.compression.operators import TopK
    >>> p = least_squares()
    >>> update_at_optimum(p) < 1e-10, update_at_optimum(p, TopK(0.01)) > 1e-3
    (True, True)
    """
    _setup(problem, 1.0, 1)
    G = problem.gradients(problem.x_opt)
    if compressor is None:
        return float(np.linalg.norm(G.mean(axis=0)))
    rng = np.random.default_rng(seed)
    return float(np.linalg.norm(np.mean([compressor(g, rng) for g in G], axis=0)))
