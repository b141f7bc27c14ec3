"""Communication budgets of LLM inference: tensor-parallel decode and prefill, MoE
all-to-all, and the KV-cache transfer of disaggregated serving.

Model of a step (stated, so that every number can be checked):

* **Decode** is a roofline: ``max(compute, memory)`` per GPU with ideal TP sharding.
  Memory reads every weight except the input embedding (a decode step looks up one
  row of it) plus the KV cache of every sequence (``batch x context`` tokens).
  Compute is 2 FLOPs per weight and token.  With a 4,096-token context this gives
  Llama-3.1-70B on 8 x H100 8.39 ms at B = 64 (the lecture's figure).
* **Prefill** compute is 2 FLOPs per weight and token for the linear layers, plus
  attention ``4 * n**2 * d_model`` FLOPs per layer (scores and weighted sum over the
  whole prompt; ``causal=True`` halves it).  Memory is not the limit there.
* **Tensor parallelism** (Megatron): two all-reduces per layer (after attention and
  after the MLP) of ``tokens x d_model x 2`` bytes.  Inside a node they run on NVLink;
  a TP group wider than a node uses the hierarchical all-reduce.

Every communication time comes from :mod:`commbook.cost` closed forms, which the tests
prove equal to the simulator, or from the simulator itself (all-to-all).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

from .collectives import all_to_all
from .comm_sim import VirtualCluster
from .checks import (check_flag, check_int, check_link, check_node, check_p, check_positive, check_size,
                     finite_time)
from .collectives.api import MAX_SIM_BYTES
from .collectives import t_allreduce_hierarchical, t_formula
from .hardware import H100, IB_NDR, NVLINK4, Chip, Link
from .topology import Switch, TwoLevel

__all__ = [
    "DenseModel", "MoEModel", "LLAMA31_70B", "LLAMA31_8B", "LLAMA31_70B_MHA", "DEEPSEEK_V3",
    "StepTime", "decode_step", "prefill_compute", "tp_allreduces_per_step", "tp_message_bytes",
    "tp_comm_time", "moe_a2a_bytes", "moe_a2a_time", "moe_cross_node_bytes", "kv_bytes",
    "kv_transfer_time", "DEFAULT_CONTEXT",
]

DEFAULT_CONTEXT = 4096
"""KV context length (tokens per sequence) of the decode roofline."""


@dataclass(frozen=True)
class DenseModel:
    """A Llama-style dense decoder (GQA attention, SwiGLU MLP, untied embeddings).

    Llama-3.1-70B counts the model card's 70.6 B weights; K and V of one token are
    2 x 80 layers x 8 KV heads x 128 x 2 bytes:

    >>> round(LLAMA31_70B.n_params / 1e9, 2), LLAMA31_70B.kv_bytes_per_token()
    (70.55, 327680)
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int
    source: str

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab"):
            object.__setattr__(self, name, check_int(getattr(self, name), name, "an integer", lo=1))

    @property
    def params_per_layer(self) -> int:
        """Weights of one block: Q, K, V, O projections, three MLP matrices, two norms."""
        d, kv = self.d_model, self.n_kv_heads * self.head_dim
        attn = d * self.n_heads * self.head_dim * 2 + 2 * d * kv
        return attn + 3 * d * self.d_ff + 2 * d

    @property
    def n_params(self) -> int:
        """All weights: blocks, input embedding, final norm and LM head."""
        return self.n_layers * self.params_per_layer + 2 * self.vocab * self.d_model + self.d_model

    @property
    def n_params_compute(self) -> int:
        """Weights a token multiplies through (all but the input embedding table)."""
        return self.n_params - self.vocab * self.d_model

    def weight_bytes(self, bytes_per_param: float = 2) -> float:
        return self.n_params * _per_value(bytes_per_param, "bytes_per_param")

    def kv_bytes_per_token(self, bytes_per_value: float = 2) -> float:
        """K and V of every layer: 2 x layers x kv_heads x head_dim x bytes."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * _per_value(bytes_per_value, "bytes_per_value")


def _per_value(b: object, name: str = "bytes_per_value") -> float:
    """Bytes per value or parameter: a finite number > 0 (an int stays an int)."""
    v = check_positive(b, name, "a number of bytes per value")
    return int(v) if isinstance(b, numbers.Integral) else v


def _model(model: object, cls: type) -> object:
    return check_node(model, "model", cls, f"a {cls.__name__} (e.g. LLAMA31_70B, DEEPSEEK_V3)")


LLAMA31_70B = DenseModel(
    "Llama-3.1-70B", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128,
    d_ff=28672, vocab=128256,
    source="Meta Llama 3.1 model card and config.json (meta-llama/Llama-3.1-70B): 80 layers, "
           "hidden 8192, 64 heads, 8 KV heads, intermediate 28672, vocab 128256",
)
LLAMA31_8B = DenseModel(
    "Llama-3.1-8B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128,
    d_ff=14336, vocab=128256,
    source="Meta Llama 3.1 config.json (meta-llama/Llama-3.1-8B): 32 layers, hidden 4096, "
           "32 heads, 8 KV heads, intermediate 14336",
)
LLAMA31_70B_MHA = DenseModel(
    "Llama-3.1-70B with MHA (64 KV heads)", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=64,
    head_dim=128, d_ff=28672, vocab=128256,
    source="Lecture P5 §7.5 / exercise 8: the same model with one KV head per query head",
)


@dataclass(frozen=True)
class MoEModel:
    """The routing shape of a mixture-of-experts model (what all-to-all moves).

    >>> DEEPSEEK_V3.n_experts, DEEPSEEK_V3.top_k, DEEPSEEK_V3.max_nodes_per_token
    (256, 8, 4)
    >>> MoEModel("bad", 1024, 4, 4, n_experts=8, top_k=16, max_nodes_per_token=None, source="")
    Traceback (most recent call last):
    ...
    ValueError: n_moe_layers (4) must be <= n_layers (4) and top_k (16) <= n_experts (8)
    """

    name: str
    d_model: int
    n_layers: int
    n_moe_layers: int
    n_experts: int
    top_k: int
    max_nodes_per_token: int | None
    source: str

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layers", "n_experts", "top_k"):
            object.__setattr__(self, name, check_int(getattr(self, name), name, "an integer", lo=1))
        object.__setattr__(self, "n_moe_layers", check_int(self.n_moe_layers, "n_moe_layers", "an integer", lo=0))
        if self.n_moe_layers > self.n_layers or self.top_k > self.n_experts:
            raise ValueError(f"n_moe_layers ({self.n_moe_layers}) must be <= n_layers ({self.n_layers}) and "
                             f"top_k ({self.top_k}) <= n_experts ({self.n_experts})")
        if self.max_nodes_per_token is not None:
            object.__setattr__(self, "max_nodes_per_token",
                               check_int(self.max_nodes_per_token, "max_nodes_per_token", "an integer or None", lo=1))


DEEPSEEK_V3 = MoEModel(
    "DeepSeek-V3", d_model=7168, n_layers=61, n_moe_layers=58, n_experts=256, top_k=8,
    max_nodes_per_token=4,
    source="DeepSeek-V3 Technical Report (2024) §2.1.2, §3.2: hidden 7168, 61 layers of which "
           "the first 3 are dense, 256 routed experts with 8 active, each token sent to at most 4 nodes",
)


# ----------------------------------------------------------------------------- roofline
@dataclass(frozen=True)
class StepTime:
    """Per-GPU time of one step: compute-bound time, memory-bound time, and the roofline.

    >>> StepTime(compute=1e-3, memory=8e-3).time
    0.008
    """

    compute: float
    memory: float

    @property
    def time(self) -> float:
        return max(self.compute, self.memory)


def decode_step(model: DenseModel = LLAMA31_70B, batch: int = 1, context: int = DEFAULT_CONTEXT,
                chip: Chip = H100, tp: int = 8, bytes_per_param: float = 2,
                kv_bytes_per_value: float = 2) -> StepTime:
    """One decode step (one new token for each of ``batch`` sequences), ideal TP sharding,
    no communication.

    Llama-3.1-70B at B = 64 on 8 x H100 is memory-bound at the lecture's 8.39 ms:

    >>> step = decode_step(LLAMA31_70B, batch=64)
    >>> round(step.time * 1e3, 2), step.memory > step.compute
    (8.39, True)
    """
    model, chip = _model(model, DenseModel), check_node(chip, "chip", Chip)
    batch, tp = check_p(batch, "batch"), check_p(tp, "tp")
    context = check_size(context, "context")
    weights = model.n_params_compute * _per_value(bytes_per_param, "bytes_per_param")
    kv = batch * context * model.kv_bytes_per_token(_per_value(kv_bytes_per_value, "kv_bytes_per_value"))
    memory = (weights + kv) / (tp * chip.hbm_bandwidth)
    flops = 2 * model.n_params_compute * batch + 4 * model.n_layers * batch * context * model.d_model
    return StepTime(flops / (tp * chip.bf16_flops), memory)


def prefill_compute(model: DenseModel = LLAMA31_70B, tokens: int = 1024, chip: Chip = H100,
                    tp: int = 8, causal: bool = False) -> float:
    """Compute time of prefilling one prompt of ``tokens`` tokens (per GPU, seconds).

    One token of Llama-3.1-70B on 8 x H100 (lecture §7.2: 17.6 µs):

    >>> round(prefill_compute(LLAMA31_70B, tokens=1) * 1e6, 1)
    17.6
    """
    model, chip = _model(model, DenseModel), check_node(chip, "chip", Chip)
    tokens, tp = check_p(tokens, "tokens"), check_p(tp, "tp")
    causal = check_flag(causal, "causal")
    linear = 2 * model.n_params_compute * tokens
    attention = (2 if causal else 4) * tokens**2 * model.d_model * model.n_layers
    return (linear + attention) / (tp * chip.bf16_flops)


# ----------------------------------------------------------------------------- tensor parallel
def tp_allreduces_per_step(model: DenseModel = LLAMA31_70B) -> int:
    """Megatron TP: an all-reduce after attention and one after the MLP, every layer.

    >>> tp_allreduces_per_step(LLAMA31_70B)  # 2 x 80 layers
    160
    """
    return 2 * _model(model, DenseModel).n_layers


def tp_message_bytes(model: DenseModel = LLAMA31_70B, tokens: int = 1, bytes_per_value: float = 2) -> float:
    """Bytes of one TP all-reduce: tokens x d_model x bytes (BF16 by default).

    >>> tp_message_bytes(LLAMA31_70B, tokens=64)  # 64 x 8192 x 2
    1048576
    """
    n = check_p(tokens, "tokens") * _model(model, DenseModel).d_model * _per_value(bytes_per_value)
    return finite_time(n, "tokens x d_model x bytes_per_value") if isinstance(n, float) else n


def tp_comm_time(model: DenseModel = LLAMA31_70B, tokens: int = 1, tp: int = 8,
                 algorithm: str = "ring", intra: Link = NVLINK4, inter: Link = IB_NDR,
                 gpus_per_node: int = 8, bytes_per_value: float = 2) -> float:
    """Communication time of one step's TP all-reduces (no overlap).

    Up to ``gpus_per_node`` the group is one NVLink switch and ``algorithm`` runs on it;
    a wider group spans ``tp / gpus_per_node`` nodes and uses the hierarchical
    all-reduce, with ``algorithm`` across nodes.

    At batch 1 the 160 ring all-reduces of Llama-3.1-70B cost 4.49 ms, about the
    decode step's own time (lecture §7.1):

    >>> round(tp_comm_time(LLAMA31_70B, tokens=1) * 1e3, 2)
    4.49
    >>> tp_comm_time(LLAMA31_70B, tokens=1, tp=12)
    Traceback (most recent call last):
    ...
    ValueError: tp=12 must be a multiple of gpus_per_node=8 across nodes
    """
    tp, g = check_p(tp, "tp"), check_p(gpus_per_node, "gpus_per_node")
    intra, inter = check_link(intra, "intra"), check_link(inter, "inter")
    n = tp_message_bytes(model, tokens, bytes_per_value)
    if tp <= g:
        one = t_formula(algorithm, tp, n, intra.alpha, intra.beta)
    else:
        if tp % g:
            raise ValueError(f"tp={tp} must be a multiple of gpus_per_node={g} across nodes")
        one = t_allreduce_hierarchical(tp // g, g, n, intra, inter, inter_algorithm=algorithm)
    return finite_time(tp_allreduces_per_step(model) * one, "the TP time of (tokens, bytes_per_value, intra, inter)")


# ----------------------------------------------------------------------------- MoE
def moe_a2a_bytes(model: MoEModel = DEEPSEEK_V3, tokens_per_gpu: int = 256, ep: int = 8,
                  bytes_per_value: float = 2) -> float:
    """Bytes one GPU sends in one dispatch all-to-all: every token goes to top_k experts,
    spread evenly over ``ep`` GPUs; the share that stays local is not sent.

    DeepSeek-V3, 256 tokens per GPU on 8 GPUs: 256 x 8 x 7168 x 2 bytes x 7/8:

    >>> moe_a2a_bytes(DEEPSEEK_V3, tokens_per_gpu=256, ep=8)
    25690112.0
    """
    ep, model = check_p(ep, "ep"), _model(model, MoEModel)
    held = check_p(tokens_per_gpu, "tokens_per_gpu") * model.top_k * model.d_model * _per_value(bytes_per_value)
    return held * (ep - 1) / ep


def moe_a2a_time(model: MoEModel = DEEPSEEK_V3, tokens_per_gpu: int = 256, ep: int = 8,
                 bytes_per_value: float = 2, intra: Link = NVLINK4, inter: Link = IB_NDR,
                 gpus_per_node: int = 8, algorithm: str = "direct") -> float:
    """Time of one all-to-all, simulated: ``ep`` GPUs on one NVLink switch, or
    ``ep / gpus_per_node`` nodes of a two-level network (``algorithm`` 'direct' or
    'hierarchical').  Uniform routing: every GPU holds tokens x top_k x d x bytes.

    Across 8 nodes the same dispatch is 8.7× slower than on one NVLink switch (the
    lecture's §7.4 says about 10×):

    >>> one = moe_a2a_time(DEEPSEEK_V3, tokens_per_gpu=256, ep=8)
    >>> round(moe_a2a_time(DEEPSEEK_V3, 256, ep=64, algorithm="hierarchical") / one, 1)
    8.7
    """
    ep, g, model = check_p(ep, "ep"), check_p(gpus_per_node, "gpus_per_node"), _model(model, MoEModel)
    intra, inter = check_link(intra, "intra"), check_link(inter, "inter")
    held = check_p(tokens_per_gpu, "tokens_per_gpu") * model.top_k * model.d_model * _per_value(bytes_per_value)
    if held > MAX_SIM_BYTES:
        raise ValueError(f"tokens_per_gpu x top_k x d_model x bytes_per_value = {held:g} bytes is more than a "
                         f"simulated run takes ({MAX_SIM_BYTES:g})")
    if ep <= g:
        cluster = VirtualCluster(Switch(ep, intra))
    else:
        if ep % g:
            raise ValueError(f"ep={ep} must be a multiple of gpus_per_node={g} across nodes")
        cluster = VirtualCluster(TwoLevel(ep // g, g, intra, inter))
    return all_to_all(cluster, nbytes=held, algorithm=algorithm).time


def moe_cross_node_bytes(model: MoEModel = DEEPSEEK_V3, tokens: int = 1, bytes_per_value: float = 2,
                         max_nodes: int | None = None) -> float:
    """Worst-case bytes a token sends across nodes in dispatch: one copy per destination
    node (forwarded inside the node over NVLink), at most min(top_k, max_nodes) nodes.

    DeepSeek-V3's limit of 4 nodes per token halves the worst case of 8 (7168 x 2 bytes each):

    >>> moe_cross_node_bytes(DEEPSEEK_V3), moe_cross_node_bytes(DEEPSEEK_V3, max_nodes=4)
    (114688, 57344)
    """
    model = _model(model, MoEModel)
    nodes = model.top_k if max_nodes is None else min(model.top_k, check_p(max_nodes, "max_nodes"))
    return check_p(tokens, "tokens") * nodes * model.d_model * _per_value(bytes_per_value)


# ----------------------------------------------------------------------------- KV transfer
def kv_bytes(model: DenseModel = LLAMA31_70B, tokens: int = 1, bytes_per_value: float = 2) -> float:
    """KV cache of ``tokens`` tokens (all layers).

    >>> kv_bytes(LLAMA31_70B, tokens=8192)  # 8192 x 327,680 bytes
    2684354560
    """
    return check_p(tokens, "tokens") * _model(model, DenseModel).kv_bytes_per_token(bytes_per_value)


def kv_transfer_time(model: DenseModel = LLAMA31_70B, tokens: int = 1, nics: int = 8,
                     link: Link = IB_NDR, bytes_per_value: float = 2, layerwise: bool = False) -> float:
    """Time to move a prompt's KV cache from the prefill to the decode GPUs over ``nics``
    NICs in parallel.  ``layerwise=True`` returns what stays exposed when each layer's
    KV is sent while later layers compute: one layer's share.

    An 8K-token prompt of Llama-3.1-70B (2.68 GB) over one 400 Gb/s NIC:

    >>> round(kv_transfer_time(LLAMA31_70B, tokens=8192, nics=1) * 1e3, 1)
    53.7
    """
    nics, link = check_p(nics, "nics"), check_link(link, "link")
    layerwise = check_flag(layerwise, "layerwise")
    size = kv_bytes(model, tokens, bytes_per_value)
    if layerwise:
        size /= model.n_layers
    return link.alpha + size / (nics * link.beta)
