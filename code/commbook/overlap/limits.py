r"""What overlap cannot hide (chapter §1.8.3, "Overlap limits") and the single-node check
that ends §1.8.

**Boundary effects.**  With L equal layers whose all-reduce takes exactly as long as
their backward, every all-reduce but the last runs beside the next layer's backward;
the last one has nothing left to hide behind.  The hidden share of the communication
is (L − 1)/L: 50 % for L = 2, 66.7 % for 3, 90 % for 10, 95 % for 20 — the timeline of
:func:`~commbook.overlap.timeline.layerwise_timeline` gives the same
(:func:`hidden_fraction_equal_layers`).  The chapter's "50–60 %" for 2–3 layers stops
short of the model's 66.7 % at L = 3; its "90–95 %" for "dozens of layers or more" is
the model's L = 10 … 20 (at L = 32 it is 96.9 %).

**Single node** (:func:`single_node_check`; the chapter's inputs are
:data:`commbook.book.ch1.inputs.SINGLE_NODE`): a 70B model's BF16 gradients (140 GB)
all-reduced by a ring over 8 GPUs on NVLink (450 GB/s per direction): 2·(7/8)·140/450 =
0.5444 s, 25.9 % of the chapter's 2.1 s step.  Plain data parallelism cannot hold that
model, though: parameters, gradients and Adam state take 16 bytes per parameter, 1.12
TB per GPU (inventory flag F21), so the check is a bandwidth exercise, not a
configuration.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_nonneg, check_p, check_positive
from ..collectives.registry import t_formula
from ..hardware import NVLINK4, Link
from ..parallelism import zero_memory_per_gpu
from .timeline import layerwise_timeline

__all__ = ["hidden_fraction_equal_layers", "SingleNodeCheck", "single_node_check"]


def hidden_fraction_equal_layers(n_layers: int, layer_time: float = 1.0) -> float:
    """Share of the all-reduce time hidden behind backward for ``n_layers`` layers whose
    all-reduce and backward both take ``layer_time``: read from the two-stream timeline
    (it equals (L − 1)/L).

    >>> [round(hidden_fraction_equal_layers(L), 4) for L in (2, 3, 10, 20, 32)]
    [0.5, 0.6667, 0.9, 0.95, 0.9688]
    """
    L = check_p(n_layers, "n_layers")
    t = check_nonneg(layer_time, "layer_time", "a time in seconds")
    return layerwise_timeline([t] * L, [t] * L).hidden_fraction


@dataclass(frozen=True)
class SingleNodeCheck:
    """All-reduce time, its share of the step, and the model-state bytes each GPU would
    need under plain data parallelism (ZeRO stage 0, mixed-precision Adam).

    >>> c = SingleNodeCheck(allreduce_time=0.5, step_budget=2.0, memory_per_gpu=1.12e12, gpu_memory=80e9)
    >>> c.share, c.fits
    (0.25, False)
    """

    allreduce_time: float
    step_budget: float
    memory_per_gpu: float
    gpu_memory: float

    @property
    def share(self) -> float:
        return self.allreduce_time / self.step_budget

    @property
    def fits(self) -> bool:
        return self.memory_per_gpu <= self.gpu_memory


def single_node_check(params: float, gpus: int, step_budget: float, gpu_memory: float,
                      link: Link = NVLINK4, alpha: float = 0.0, bytes_per_value: int = 2) -> SingleNodeCheck:
    """Ring all-reduce of the gradients of ``params`` parameters (``bytes_per_value`` each)
    on ``gpus`` GPUs over ``link`` against a ``step_budget``-second step, and whether plain
    data parallelism fits in ``gpu_memory`` bytes (the end of §1.8 uses no α; ``alpha``
    adds one per step).

    >>> c = single_node_check(70e9, 8, 2.1, 80e9)
    >>> round(c.allreduce_time, 4), round(c.share, 3), c.fits
    (0.5444, 0.259, False)
    """
    if not isinstance(link, Link):
        raise TypeError(f"link must be a commbook.hardware.Link, got {type(link).__name__}")
    step_budget = check_positive(step_budget, "step_budget", "a step time in seconds")
    gpu_memory = check_positive(gpu_memory, "gpu_memory", "a memory size in bytes")
    params, gpus = check_positive(params, "params", "a parameter count"), check_p(gpus, "gpus")
    n = params * check_positive(bytes_per_value, "bytes_per_value", "bytes per gradient value")
    t = t_formula("ring", gpus, n, alpha, link.beta)
    return SingleNodeCheck(t, step_budget, zero_memory_per_gpu(0, params, gpus), gpu_memory)
