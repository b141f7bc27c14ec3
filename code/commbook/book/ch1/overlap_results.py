"""Chapter §1.8, the numbers its prose quotes, one typed result per section: every field
carries its unit in its name (``_s``, ``_ms`` (a plain number of milliseconds), ``_bytes``,
``_Bps``, ``_frac``, ``_mib`` (a binary size as text), ``_times`` (a plain multiple, written
without ×); counts are ints), so the page glues a result whole with
:func:`commbook.book.glue.glue_fields`.

Each function reads the runs and tables of :mod:`.overlap_numbers` (which the tables and
figures share) or calls :mod:`commbook.overlap` itself, and derives here what the page
used to work out by hand.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...hardware import IB_NDR_CHAPTER
from ...overlap import DDP_FIRST_BUCKET_BYTES, layerwise_timeline, single_node_check, step_time_no_overlap
from ...parallelism import DDP_BUCKET_CAP_BYTES, DDP_BUCKET_CAP_MB, zero_memory_per_gpu
from ...units import MB, MiB, fmt_number, fmt_pct, ms
from . import overlap_numbers as ov
from .boxes import BOX_LINKS
from .inputs import SINGLE_NODE

__all__ = ["Residual", "residual_numbers", "RingTree", "ring_tree_numbers", "Buckets", "bucket_numbers", "Plans",
           "plan_numbers", "Sweep", "sweep_numbers", "Overhead", "overhead_numbers", "Hidden", "hidden_numbers",
           "Nm18", "nm18_numbers", "SingleNode", "single_node"]


def _mib(n: float) -> str:
    return f"{fmt_number(n / MiB, 3)} MiB"


# ============================================================================ what overlap hides
@dataclass(frozen=True)
class Residual:
    alpha_s: float
    beta_Bps: float
    n_bytes: float
    wire_s: float
    block_s: float
    over_s: float


def residual_numbers() -> Residual:
    r = ov.residual_example()
    return Residual(alpha_s=r["link"].alpha, beta_Bps=r["link"].beta, n_bytes=r["bytes"], wire_s=r["wire"],
                    block_s=r["blocking"], over_s=r["overlapped"])


@dataclass(frozen=True)
class RingTree:
    """Ring against tree per layer, blocking and overlapped, and the check-yourself case
    with half the backward per layer (:func:`commbook.overlap.layerwise_timeline`)."""
    layers: int
    n_bytes: float
    ring_s: float
    tree_s: float
    pen_block_s: float
    pen_over_s: float
    shrink_times: float
    q_b_s: float
    q_ring_s: float
    q_tree_s: float
    q_pen_s: float


def ring_tree_numbers() -> RingTree:
    rt = ov.ring_vs_tree()
    ring, tree, L = rt["ring"]["allreduce"], rt["tree"]["allreduce"], rt["layers"]
    q_b = rt["backward"] / 2
    q_ring = layerwise_timeline([q_b] * L, [ring] * L).step_time
    q_tree = layerwise_timeline([q_b] * L, [tree] * L).step_time
    return RingTree(layers=L, n_bytes=rt["bytes"], ring_s=ring, tree_s=tree, pen_block_s=rt["penalty_blocking"],
                    pen_over_s=rt["penalty_overlapped"], shrink_times=rt["penalty_blocking"] / rt["penalty_overlapped"],
                    q_b_s=q_b, q_ring_s=q_ring, q_tree_s=q_tree, q_pen_s=q_ring - q_tree)


# ============================================================================ buckets
@dataclass(frozen=True)
class Buckets:
    """DDP's bucket rule on the synthetic parameter list, at the default cap and at ``q_cap``."""
    start_up_s: float
    cap_mb: int
    cap_mib: str
    cap_dec_bytes: float
    first_mib: str
    syn_n: int
    syn_total_mib: str
    syn_embed: str
    syn_reb_first_mib: str
    syn_reb_first_big: str
    q_cap_mib: str
    q_cap_mb: int
    q_n: int
    q_sizes: str
    q_last_mib: str


def bucket_numbers(bt, q_cap: float = 50 * MiB) -> Buckets:
    """From :func:`.overlap_numbers.bucket_table` (and the same at ``q_cap``)."""
    names, sizes, reb = bt.meta["names"], bt.meta["sizes"], bt.meta["rebuilt"]
    q_sizes = [sum(sizes[i] for i in b) for b in ov.bucket_table(cap=q_cap).meta["rebuilt"]]
    return Buckets(start_up_s=ov.ring_startup(), cap_mb=DDP_BUCKET_CAP_MB, cap_mib=_mib(DDP_BUCKET_CAP_BYTES),
                   cap_dec_bytes=DDP_BUCKET_CAP_BYTES, first_mib=_mib(DDP_FIRST_BUCKET_BYTES), syn_n=len(sizes),
                   syn_total_mib=_mib(sum(sizes)), syn_embed=names[0], syn_reb_first_mib=_mib(sum(sizes[i] for i in reb[0])),
                   syn_reb_first_big=names[reb[0][-1]], q_cap_mib=_mib(q_cap), q_cap_mb=round(q_cap / MiB),
                   q_n=len(q_sizes), q_sizes=", ".join(_mib(x) for x in q_sizes), q_last_mib=_mib(q_sizes[-1]))


@dataclass(frozen=True)
class Plans:
    """The three bucket plans of the timeline figure, and construction against rebuilt order."""
    best_cap_mib: str
    big_wait_s: float
    def_wait_s: float
    best_wait_s: float
    cr_cons_s: float
    cr_reb_s: float


def plan_numbers() -> Plans:
    (_, p_def), (c_best, p_best), (_, p_big) = ov.bucket_plans()
    cr = ov.construction_vs_rebuilt()
    return Plans(best_cap_mib=_mib(c_best), big_wait_s=p_big.timeline.stall, def_wait_s=p_def.timeline.stall,
                 best_wait_s=p_best.timeline.stall, cr_cons_s=cr["construction"].step_time,
                 cr_reb_s=cr["rebuilt"].step_time)


@dataclass(frozen=True)
class Sweep:
    """The bucket-cap sweep on the two shapes, and the small shape on InfiniBand's α."""
    sm_ratio: float           # compute per byte over network per byte
    sm_best_mib: str
    sm_range: str             # the chapter's range for the shape
    lg_ratio: float
    lg_best_mib: str
    lg_range: str
    lo_mib: str
    hi_mib: str
    lg_layers: int
    gpus: int
    within_frac: float
    alt_alpha_s: float
    alt_best_bytes: float


def sweep_numbers() -> Sweep:
    small, large = (ov.sweep_summary(s) for s in ov.SHAPES)
    alt = ov.sweep_summary(ov.SHAPES[0], IB_NDR_CHAPTER)
    rng = lambda s: f"{fmt_number(s['range'][0] / MB)}–{fmt_number(s['range'][1] / MB)} MB"
    ratio = lambda s: s["compute_per_byte"] / s["net_per_byte"]
    return Sweep(sm_ratio=ratio(small), sm_best_mib=_mib(small["cap"]), sm_range=rng(small), lg_ratio=ratio(large),
                 lg_best_mib=_mib(large["cap"]), lg_range=rng(large), lo_mib=_mib(ov.SWEEP_GRID[0]),
                 hi_mib=f"{fmt_number(ov.SWEEP_GRID[-1] / MiB)} MiB", lg_layers=max(ov.layers_of(ov.SHAPES[1])) + 1,
                 gpus=ov.SWEEP_GPUS, within_frac=ov.NEAR_OPTIMUM, alt_alpha_s=IB_NDR_CHAPTER.alpha, alt_best_bytes=alt["cap"])


# ============================================================================ overhead, hidden share
@dataclass(frozen=True)
class Overhead:
    b_s: float
    o_s: float
    saved_s: float
    share_frac: float


def overhead_numbers() -> Overhead:
    oe = ov.overhead_example()
    return Overhead(b_s=oe["backward"], o_s=oe["o"], saved_s=oe["blocking"] - oe["overlapped"],
                    share_frac=oe["overhead"] / oe["overlapped"])


@dataclass(frozen=True)
class Hidden:
    f2_frac: float
    f3_frac: float
    f10_frac: float
    l2: int
    l3: int
    l10: int
    sh_range: str             # the chapter's ranges and the layers it gives them for
    dp_range: str
    sh_layers: str
    dp_layers: str


def hidden_numbers() -> Hidden:
    hf = ov.hidden_fractions()
    l2, l3, l10 = list(hf)[:3]
    (sh_layers, (sh_lo, sh_hi)), (dp_layers, (dp_lo, dp_hi)) = ov.CHAPTER_HIDDEN["shallow"], ov.CHAPTER_HIDDEN["deep"]
    return Hidden(f2_frac=hf[l2], f3_frac=hf[l3], f10_frac=hf[l10], l2=l2, l3=l3, l10=l10,
                  sh_range=f"{fmt_number(100 * sh_lo)}–{fmt_pct(sh_hi)}", dp_range=f"{fmt_number(100 * dp_lo)}–{fmt_pct(dp_hi)}",
                  sh_layers=f"{sh_layers[0]}–{sh_layers[1]}", dp_layers=f"{dp_layers[0]}–{dp_layers[1]}")


# ============================================================================ napkin math 1.8
@dataclass(frozen=True)
class Nm18:
    """Napkin math 1.8: the box's inputs, sequential and pipelined, the hierarchical check,
    and the check-yourself case with twice the backward per layer."""
    layers: int
    gpus: int
    b_s: float
    a_ms: float
    lb_bytes: float
    btot_s: float
    seq_ms: float
    pipe_ms: float
    exp_ms: float
    rest: int
    commtot_ms: float
    saving_frac: float
    stall_ms: float
    hidden_frac: float
    inflight: int
    inflight_bytes: float
    ck_one_s: float
    ck_k: int
    ck_bucketed_s: float
    ck_ratio: float
    ck_pipe_ms: float
    chapter_lb_bytes: float
    q18_b_s: float
    q18_seq_ms: float
    q18_pipe_ms: float
    q18_saving_frac: float


def nm18_numbers() -> Nm18:
    nm, chk, c = ov.nm18(), ov.nm18_check(), ov.NM18
    L, a = c["layers"], c["allreduce"]
    q_b = 2 * c["backward"]
    q_seq = step_time_no_overlap([q_b] * L, [a] * L)
    q_pipe = layerwise_timeline([q_b] * L, [a] * L).step_time
    return Nm18(layers=L, gpus=c["nodes"] * c["gpus_per_node"], b_s=c["backward"], a_ms=a / ms,
                lb_bytes=nm["layer_bytes"], btot_s=nm["backward_total"], seq_ms=nm["sequential"] / ms,
                pipe_ms=nm["pipelined"] / ms, exp_ms=nm["exposed_per_layer"] / ms, rest=L - 1, commtot_ms=L * a / ms,
                saving_frac=nm["saving"], stall_ms=nm["stall"] / ms, hidden_frac=nm["hidden"], inflight=nm["in_flight"],
                inflight_bytes=nm["in_flight"] * nm["layer_bytes"], ck_one_s=chk["one"], ck_k=chk["buckets"],
                ck_bucketed_s=chk["bucketed"], ck_ratio=chk["ratio"], ck_pipe_ms=ov.nm18(chk["bucketed"])["pipelined"] / ms,
                chapter_lb_bytes=ov.CHAPTER_NM18["layer_bytes"][0], q18_b_s=q_b, q18_seq_ms=q_seq / ms,
                q18_pipe_ms=q_pipe / ms, q18_saving_frac=1 - q_pipe / q_seq)


# ============================================================================ one node
@dataclass(frozen=True)
class SingleNode:
    """The 70B check on 8 GPUs over NVLink (:data:`~commbook.book.ch1.inputs.SINGLE_NODE`),
    and the model-state bytes per GPU under plain data parallelism and under ZeRO-3."""
    n_bytes: float
    gpus: int
    beta_Bps: float
    time_s: float
    budget_s: float
    share_frac: float
    mem_bytes: float
    bpp: float                # bytes of model state per parameter
    gpu_mem_bytes: float
    mem_times: float
    zero3_bytes: float
    fits: bool
    chapter_time_s: float
    chapter_share_frac: float
    n_params: float


def single_node() -> SingleNode:
    c, link, ch = SINGLE_NODE, BOX_LINKS["sn1.8"], ov.CHAPTER_SINGLE_NODE
    chk = single_node_check(link=link, **c)
    return SingleNode(n_bytes=c["params"] * c["bytes_per_value"], gpus=c["gpus"], beta_Bps=link.beta,
                      time_s=chk.allreduce_time, budget_s=chk.step_budget, share_frac=chk.share,
                      mem_bytes=chk.memory_per_gpu, bpp=chk.memory_per_gpu / c["params"], gpu_mem_bytes=chk.gpu_memory,
                      mem_times=chk.memory_per_gpu / chk.gpu_memory, zero3_bytes=zero_memory_per_gpu(3, c["params"], c["gpus"]),
                      fits=chk.fits, chapter_time_s=ch["time"][0], chapter_share_frac=ch["share"][0] / 100, n_params=c["params"])
