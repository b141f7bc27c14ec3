r"""The collectives of one training step under data parallelism: DDP, FSDP (with and
without resharding after forward) and ZeRO stages 1–3.

For each strategy :class:`StepComm` lists the collectives of one step (operation, phase,
how many, bytes each) and what follows from them: the number of collectives (what α
is paid for), the bytes each GPU sends with bandwidth-optimal algorithms (ring:
all-reduce 2(p−1)/p·n, all-gather and reduce-scatter (p−1)/p·n each), and a time from
the closed forms of :mod:`commbook.cost`.

Conventions (stated so that each number can be checked):

* ``params`` parameters of ``bytes_per_value`` bytes (BF16: 2); gradients are reduced in
  the same precision.  Sizes are the full (unsharded) buffers, as in :mod:`commbook.cost`
  (an all-gather's ``n`` is its gathered output).
* **DDP** (PyTorch ``DistributedDataParallel``): one all-reduce per gradient bucket.  The
  default cap is ``bucket_cap_mb = 25``, which PyTorch turns into
  ``int(bucket_cap_mb * 1024 * 1024)`` bytes (25 MiB; ``torch/nn/parallel/distributed.py``).
  Here the bucket count is ⌈params·bytes/cap⌉; PyTorch's exact rule (a 1 MiB first
  bucket, buckets closed at tensor boundaries once they reach the cap) runs on a
  parameter list in :func:`commbook.overlap.ddp_bucket_assignment`.
* **FSDP** with ``n_layers`` units of equal size.  ``reshard_after_forward=True``
  (PyTorch ``ShardingStrategy.FULL_SHARD``, the default): per unit an all-gather before
  forward, another before backward (the parameters were freed after forward), and a
  reduce-scatter of the gradients: **3·N_L** collectives per step.  Without resharding
  (``SHARD_GRAD_OP``) the backward all-gather disappears: 2·N_L.  The chapter (§1.3, its
  section on FSDP's communication pattern) says 2·N_L for FSDP in general, which holds only without resharding.
* **ZeRO** (Rajbhandari et al. 2020): stages 1 and 2 reduce-scatter the gradients and
  all-gather the updated parameters — the same bytes as DDP's all-reduce; stage 3 is
  FSDP with resharding: 3/2 of DDP's bytes.  :func:`zero_memory_per_gpu` gives the
  paper's model-state memory, (2 + 2 + K)·Ψ bytes with K = 12 for mixed-precision Adam.
* **Pipeline** parallelism (chapter §1.9, the fallacy that pipelining removes the
  communication cost): with p stages of equal time and m micro-batches, a GPipe or 1F1B
  schedule keeps each stage idle for (p − 1) of its m + p − 1 slots per phase, :func:`pipeline_bubble_fraction` =
  (p − 1)/(m + p − 1) (Huang et al. 2019, GPipe; Narayanan et al. 2021).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .checks import check_count, check_link_params, check_p, check_size, show
from .collectives.registry import predict
from .units import MiB

__all__ = ["DDP_BUCKET_CAP_MB", "DDP_BUCKET_CAP_BYTES", "Collective", "StepComm", "ddp_bucket_count",
           "ddp", "fsdp", "zero", "zero_memory_per_gpu", "ADAM_MIXED_PRECISION_K",
           "pipeline_bubble_fraction", "min_microbatches"]

DDP_BUCKET_CAP_MB = 25
"""PyTorch DDP's default ``bucket_cap_mb`` (torch/nn/parallel/distributed.py), in MiB."""
DDP_BUCKET_CAP_BYTES = DDP_BUCKET_CAP_MB * MiB
"""26,214,400 B: ``int(bucket_cap_mb * 1024 * 1024)`` as PyTorch computes it."""
ADAM_MIXED_PRECISION_K = 12
"""ZeRO paper's K for mixed-precision Adam: FP32 parameters, momentum and variance."""

_FACTOR = {"all_reduce": lambda p: 2 * (p - 1) / p, "all_gather": lambda p: (p - 1) / p,
           "reduce_scatter": lambda p: (p - 1) / p}


def _params(params) -> float:
    v = check_size(params, "params")
    if not 0 < v <= 1e30:
        raise ValueError(f"params must be > 0 (at most 1e30), got {params!r}")
    return v


def _stage(stage) -> int:
    """A ZeRO stage: 0, 1, 2 or 3 (an int, numpy's included; not a bool)."""
    s = stage[()] if isinstance(stage, np.ndarray) and stage.ndim == 0 else stage
    if isinstance(s, (bool, np.bool_, np.ndarray)) or not hasattr(s, "__index__") or int(s) not in (0, 1, 2, 3):
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {show(stage)}")
    return int(s)


def _bytes_per_value(b) -> float:
    v = check_size(b, "bytes_per_value")
    if not 0 < v <= 1e6:
        raise ValueError(f"bytes_per_value must be > 0 (at most 1e6), got {b!r}")
    return v


@dataclass(frozen=True)
class Collective:
    """``count`` calls of ``op`` ("all_reduce", "all_gather", "reduce_scatter") in
    ``phase`` ("forward", "backward", "step"), each on a full buffer of ``nbytes``.

    A ring all-reduce of 1,000 bytes on 4 GPUs sends 2 x 3/4 x 1,000 bytes per GPU:

    >>> Collective("all_reduce", "backward", count=1, nbytes=1000).bytes_sent(world=4)
    1500.0
    """

    op: str
    phase: str
    count: int
    nbytes: float

    def bytes_sent(self, world: int) -> float:
        """Bytes one GPU sends for all ``count`` calls (bandwidth-optimal algorithms)."""
        return self.count * _FACTOR[self.op](check_p(world, "world")) * self.nbytes


@dataclass(frozen=True)
class StepComm:
    """The collectives of one step of ``strategy`` on ``world`` GPUs.

    FSDP FULL_SHARD over 32 layers: an all-gather in forward and in backward, a
    reduce-scatter in backward, per layer; each call pays α (here 20 µs):

    >>> step = fsdp(7e9, n_layers=32, world=8)
    >>> step.n_collectives, step.count("all_gather"), round(step.startup_cost(20e-6) * 1e3, 2)
    (96, 64, 1.92)
    """

    strategy: str
    world: int
    collectives: tuple[Collective, ...]

    @property
    def n_collectives(self) -> int:
        """Collective calls per step (each pays its start-up)."""
        return sum(c.count for c in self.collectives)

    @property
    def bytes_per_gpu(self) -> float:
        """Bytes each GPU sends per step."""
        return sum(c.bytes_sent(self.world) for c in self.collectives)

    def count(self, op: str | None = None, phase: str | None = None) -> int:
        """Calls of one operation and/or in one phase."""
        return sum(c.count for c in self.collectives
                   if (op is None or c.op == op) and (phase is None or c.phase == phase))

    def startup_cost(self, alpha_eff: float) -> float:
        """``n_collectives × alpha_eff``: the chapter's start-up term (≈2·N_L·α_eff for FSDP
        in its count), with α_eff measured per collective call."""
        check_link_params(alpha_eff, 1.0)
        return self.n_collectives * alpha_eff

    def time(self, alpha: float, beta: float, algorithm: str = "ring") -> float:
        """Serial communication time of the step (no overlap) from the closed forms of
        ``algorithm`` for each collective (see :func:`commbook.collectives.predict`)."""
        return sum(c.count * predict(c.op, algorithm, self.world, c.nbytes, alpha, beta)
                   for c in self.collectives)


def ddp_bucket_count(model_bytes: float, bucket_cap: float = DDP_BUCKET_CAP_BYTES) -> int:
    """⌈model_bytes / bucket_cap⌉ gradient buckets (at least one).

    A 7 B-parameter BF16 model (14 GB) in PyTorch's default 25 MiB buckets:

    >>> ddp_bucket_count(7e9 * 2), ddp_bucket_count(1)
    (535, 1)
    """
    m, cap = check_size(model_bytes, "model_bytes"), check_size(bucket_cap, "bucket_cap")
    if cap < 1:
        raise ValueError(f"bucket_cap must be > 0 bytes (at least 1), got {bucket_cap!r}")
    return max(1, math.ceil(m / cap))


def ddp(params: float, world: int, bytes_per_value: float = 2,
        bucket_cap: float = DDP_BUCKET_CAP_BYTES) -> StepComm:
    """DDP: one all-reduce per bucket in backward; full buckets of ``bucket_cap`` and one
    remainder bucket.

    Each GPU sends one ring all-reduce's 2(p − 1)/p of the 14 GB; at 100 GB/s, no α:

    >>> step = ddp(7e9, world=8)
    >>> step.n_collectives, step.bytes_per_gpu / 14e9, round(step.time(alpha=0, beta=100e9), 3)
    (535, 1.75, 0.245)
    """
    world = check_p(world, "world")
    m = _params(params) * _bytes_per_value(bytes_per_value)
    k = ddp_bucket_count(m, bucket_cap)
    last = max(0.0, m - (k - 1) * float(bucket_cap))
    parts = [Collective("all_reduce", "backward", k - 1, float(bucket_cap))] if k > 1 else []
    return StepComm("DDP", world, tuple(parts + [Collective("all_reduce", "backward", 1, last)]))


def fsdp(params: float, n_layers: int, world: int, bytes_per_value: float = 2,
         reshard_after_forward: bool = True) -> StepComm:
    """FSDP over ``n_layers`` equal units: all-gather before forward, again before
    backward when ``reshard_after_forward`` (FULL_SHARD), reduce-scatter in backward.

    FULL_SHARD sends 3/2 of DDP's bytes in 3·N_L calls; SHARD_GRAD_OP DDP's bytes in 2·N_L:

    >>> full = fsdp(7e9, n_layers=32, world=8)
    >>> grad_op = fsdp(7e9, n_layers=32, world=8, reshard_after_forward=False)
    >>> full.bytes_per_gpu / ddp(7e9, 8).bytes_per_gpu, full.n_collectives, grad_op.n_collectives
    (1.5, 96, 64)
    """
    world, L = check_p(world, "world"), check_p(n_layers, "n_layers")
    if not isinstance(reshard_after_forward, bool):
        raise TypeError(f"reshard_after_forward must be a bool, got {type(reshard_after_forward).__name__}")
    unit = _params(params) * _bytes_per_value(bytes_per_value) / L
    parts = [Collective("all_gather", "forward", L, unit)]
    if reshard_after_forward:
        parts.append(Collective("all_gather", "backward", L, unit))
    parts.append(Collective("reduce_scatter", "backward", L, unit))
    name = "FSDP (FULL_SHARD)" if reshard_after_forward else "FSDP (SHARD_GRAD_OP)"
    return StepComm(name, world, tuple(parts))


def zero(stage: int, params: float, world: int, bytes_per_value: float = 2,
         n_layers: int = 1) -> StepComm:
    """ZeRO stage 0 (plain data parallel: one all-reduce), 1 or 2 (reduce-scatter the
    gradients, all-gather the updated parameters), or 3 (per layer: all-gather in
    forward and backward, reduce-scatter; as FSDP FULL_SHARD).

    A reduce-scatter plus an all-gather move the bytes of one all-reduce:

    >>> zero(2, 7e9, world=8).bytes_per_gpu == ddp(7e9, 8, bucket_cap=14e9).bytes_per_gpu
    True
    >>> zero(4, 7e9, world=8)
    Traceback (most recent call last):
    ...
    ValueError: stage must be 0, 1, 2 or 3, got 4
    """
    stage, world = _stage(stage), check_p(world, "world")
    n_layers = check_p(n_layers, "n_layers")
    m = _params(params) * _bytes_per_value(bytes_per_value)
    if stage == 3:
        s = fsdp(params, n_layers, world, bytes_per_value, reshard_after_forward=True)
        return StepComm("ZeRO-3", world, s.collectives)
    if stage == 0:
        return StepComm("ZeRO-0", world, (Collective("all_reduce", "backward", 1, m),))
    return StepComm(f"ZeRO-{stage}", world, (Collective("reduce_scatter", "backward", 1, m),
                                             Collective("all_gather", "step", 1, m)))


def zero_memory_per_gpu(stage: int, params: float, world: int,
                        k: float = ADAM_MIXED_PRECISION_K) -> float:
    """Model-state bytes per GPU (ZeRO paper, §5): FP16 parameters (2Ψ) and gradients
    (2Ψ) plus K·Ψ of optimizer state; stage 1 shards the optimizer state, stage 2 also
    the gradients, stage 3 also the parameters, over ``world`` GPUs.

    The paper's Figure 1 (Ψ = 7.5 B, N_d = 64, K = 12): 120 GB, 31.4, 16.6 and 1.9 GB:

    >>> [round(zero_memory_per_gpu(s, 7.5e9, 64) / 1e9, 1) for s in range(4)]
    [120.0, 31.4, 16.6, 1.9]
    """
    stage = _stage(stage)
    psi, n, k = _params(params), check_p(world, "world"), check_size(k, "k")
    sharded = {0: 0.0, 1: k, 2: k + 2, 3: k + 4}[stage]
    return (4 + k - sharded) * psi + sharded * psi / n


def pipeline_bubble_fraction(p: int, m: int) -> float:
    """(p − 1)/(m + p − 1): the idle share of every stage of a p-stage pipeline running
    m equal micro-batches (p = 8, m = 32: 7/39 = 17.95 %).

    >>> round(pipeline_bubble_fraction(p=8, m=32), 4), pipeline_bubble_fraction(1, 1)
    (0.1795, 0.0)
    """
    p, m = check_p(p, "p (pipeline stages)"), check_count(m, "m (micro-batches)")
    return (p - 1) / (m + p - 1)


def min_microbatches(p: int, target: float) -> int:
    """The smallest m whose bubble is strictly below ``target`` (a share in (0, 1]),
    decided exactly: m > (p − 1)(1 − t)/t, with t read by its decimal text (0.2 is
    1/5, so m = 28 at p = 8, exactly 20 %, is not below 20 %).

    >>> min_microbatches(8, 0.2), pipeline_bubble_fraction(8, 28)
    (29, 0.2)
    """
    p = check_p(p, "p (pipeline stages)")
    if isinstance(target, np.ndarray) and target.ndim == 0:
        target = target[()]
    if isinstance(target, np.floating):
        target = float(target)
    if isinstance(target, (bool, np.bool_)) or not isinstance(target, (int, float, Fraction)) \
            or not 0 < target <= 1:
        raise ValueError(f"target must be a share in (0, 1], got {show(target)}")
    t = Fraction(repr(float(target))) if isinstance(target, float) else Fraction(target)
    return max(1, math.floor((p - 1) * (1 - t) / t) + 1)
