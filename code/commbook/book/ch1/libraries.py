"""Chapter §1.7, communication libraries and runtimes: the four decision axes, Table 5
(library selection) as data, NCCL's three wire protocols with the bandwidth ceiling each
payload share implies, the flat stretch of a real 8×A100 all-reduce log read against those
ceilings, the MPI versions the page names, Gloo's transports, and a diagnosis against an
nccl-tests baseline (its givens; the page compares them with the log).  Every constant names
its source in :data:`SOURCES`.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from ... import physics
from ...measure import fitting as _fit
from ...measure import load_log
from ...units import MiB, fmt_bytes, fmt_pct, fmt_rate, fmt_time
from ..tables import Table
from ..text import texts
from .libraries_protocols import A100_RING_BUSBW, NCCL_TUNING_VERSION, PROTOCOLS, Protocol, protocol_table

__all__ = ["SOURCES", "AXES", "LIBRARY_AXES", "TABLE5", "Protocol", "PROTOCOLS", "MPIVersion", "MPI_VERSIONS",
           "CHAPTER_MPI_CITATION_YEAR", "GLOO_TRANSPORTS", "PYTORCH_GLOO_DEFAULT", "DGX_H100_NICS", "A100_LOG",
           "NCCL_TUNING_VERSION", "DIAGNOSIS", "date_text", "axes_table", "table5", "protocol_table", "mpi_table",
           "Flat", "flat_region", "flat_table"]

T = texts("ch1")
K = "libraries."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


SOURCES: dict[str, str] = {
    "nccl_env": "NVIDIA, NCCL User Guide: 'Environment Variables' (NCCL_ALGO, NCCL_PROTO = LL, LL128, "
                "Simple; listed under Debugging) and 'Troubleshooting: Logging' (NCCL_DEBUG = VERSION, "
                "WARN, INFO, TRACE), docs.nvidia.com/deeplearning/nccl/user-guide/docs/",
    "nccl_redop": "NVIDIA, NCCL User Guide, 'User Defined Reduction Operators': ncclRedOpCreatePreMulSum, "
                  "one scalar, one communicator and one data type per operator",
    "ll": "S. Jeaugey, github.com/NVIDIA/nccl issue #281 (7 Jan 2020): LL relies on atomic 8-byte stores, "
          "4 B data + 4 B flag; LL128 on 128-byte stores seen in order, 120 B data + 8 B flag",
    "simple": "S. Jeaugey, github.com/NVIDIA/nccl issue #903 (3 Jul 2023): Simple waits on memory fences; "
              "Z. Hu et al., 'Demystifying NCCL', arXiv:2507.04786 (2025), §3",
    "switch": "S. Jeaugey, github.com/NVIDIA/nccl issue #754 (12 Dec 2022): NCCL moves between "
              "algorithm/protocol pairs with the size (tree/LL, ring/LL, ..., ring/Simple)",
    "tuning": "github.com/NVIDIA/nccl v2.29.2-1, src/graph/tuning.cc (commit ebd1e92), through "
              "commbook.measure.nccl_tuning: baseLat and hwLat (NVLink, ring) in µs, ring LL bandwidth "
              "x 0.5 capped at llMaxBw, LL128 x 0.92 capped per channel; line layouts src/include/device.h",
    "mpi": "MPI Forum, MPI: A Message-Passing Interface Standard, Version 4.0 (9 Jun 2021), front matter "
           "(history of versions) and change logs",
    "gloo": "github.com/facebookincubator/gloo: README (GPU buffers, GPUDirect over ibverbs) and "
            "gloo/transport/{tcp,ibverbs,uv}; pytorch/gloo issue #455 (11 Jul 2025) proposes a "
            "shared-memory path; PyTorch torch/csrc/distributed/c10d/GlooDeviceFactory.cpp",
    "dgx": "NVIDIA DGX H100 User Guide: 8 single-port ConnectX-7 400 Gb/s NICs (compute fabric); β: hardware.IB_NDR",
    "nvswitch": "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): NVLink SHARP (reduction "
                "inside the switch) arrives with third-generation NVSwitch; A100 systems have none",
    "torch": "PyTorch docs, torch.distributed 'Backends' (NCCL for GPU, Gloo for CPU training, Gloo as "
             "fallback) and init_process_group (backend 'cpu:gloo,cuda:nccl'); ROCm builds map the "
             "nccl backend to RCCL (github.com/ROCm/pytorch pull 347)",
}

# ============================================================================ the four axes
AXES: dict[str, dict[str, str]] = {
    "memory": _tx("device_memory_path"),
    "topology": _tx("topology_awareness"),
    "portability": _tx("portability"),
    "observability": _tx("observability"),
}
"""The four axes on which a production library realises the chapter's cost models."""

LIBRARY_AXES: dict[str, dict[str, tuple[str, str]]] = {
    "NCCL": {
        "memory": _two("gpu_kernels_move_and"),
        "topology": _two("detects_nvlink_nvswitch_pcie"),
        "portability": _two("nvidia_gpus_only"),
        "observability": _two("nccl_debug_logs_nccl"),
    },
    "MPI": {
        "memory": _two("host_buffers_cuda_aware"),
        "topology": _two("process_topologies_with_rank"),
        "portability": _two("vendor_neutral_standard_many"),
        "observability": _two("request_handles_mpi_test"),
    },
    "Gloo": {
        "memory": _two("host_memory_gpu_data"),
        "topology": _two("flat_ring_and_halving"),
        "portability": _two("linux_macos_windows_no"),
        "observability": _two("torch_distributed_s_checks"),
    },
}
"""Each library on each axis (``nccl_env``, ``nccl_redop``, ``switch``, ``gloo``, ``torch``)."""


def axes_table() -> Table:
    """The three libraries on the four axes."""
    libs = list(LIBRARY_AXES)
    rows = [{"axis": key, **{lib: key + "|" + lib for lib in libs}} for key in AXES]
    labels = {lang: {k: v[lang] for k, v in AXES.items()} for lang in ("en", "zh")}
    for lang, i in (("en", 0), ("zh", 1)):
        labels[lang].update({k + "|" + lib: LIBRARY_AXES[lib][k][i] for k in AXES for lib in libs})
    return Table(key="ch1-lib-axes", title=_tx("three_libraries_on_the"),
                 columns=["axis"] + libs, headers={lang: [T.get(K + "h_axis", lang)] + libs for lang in ("en", "zh")}, rows=rows, labels=labels)


# ============================================================================ Table 5
TABLE5: tuple[dict, ...] = (
    {"scenario": _two("multi_gpu_training_nvidia"), "library": ("NCCL", "NCCL"),
     "reason": _two("gpudirect_kernel_fusion_nvlink"),
     "axes": ("memory", "topology")},
    {"scenario": _two("cpu_only_distributed_training"), "library": _two("gloo_or_mpi"),
     "reason": _two("mature_cpu_optimisation"), "axes": ("memory",)},
    {"scenario": _two("development_and_debugging"), "library": ("Gloo", "Gloo"),
     "reason": _two("cross_platform_no_cuda"),
     "axes": ("portability", "observability")},
    {"scenario": _two("gpus_of_mixed_vendors"), "library": _two("gloo_fallback"),
     "reason": _two("nccl_runs_on_nvidia"), "axes": ("portability",)},
    {"scenario": _two("hpc_integration"), "library": ("MPI + NCCL", "MPI + NCCL"),
     "reason": _two("mpi_launches_the_job"), "axes": ("portability", "memory")},
)
"""Table 5 of the chapter, row by row, in both languages, with the axes that decide each row."""


def table5() -> Table:
    """Table 5: which library for which hardware and workload."""
    rows, labels = [], {"en": {}, "zh": {}}
    for i, r in enumerate(TABLE5):
        row = {"axes": r["axes"]}
        for col in ("scenario", "library", "reason"):
            row[col] = f"{col}{i}"
            labels["en"][row[col]], labels["zh"][row[col]] = r[col]
        row["axis"] = f"axis{i}"
        for lang in ("en", "zh"):
            labels[lang][row["axis"]] = T.get(K + "axis_sep", lang).join(
                AXES[a][lang].lower() if lang == "en" else AXES[a][lang] for a in r["axes"])
        rows.append(row)
    nccl_rows = sum("NCCL" in r["library"][0] for r in TABLE5)
    return Table(
        key="ch1-table5",
        title=_tx("table_5_choosing_a"),
        columns=["scenario", "library", "reason", "axis"],
        headers=_txs("scenario", "library", "why", "deciding_axis"),
        rows=rows, labels=labels,
        notes=_txs("nccl_is_in_of", nccl_rows=nccl_rows, table5=len(TABLE5)),
        meta={"nccl_rows": nccl_rows},
    )


# ============================================================================ protocols
# NCCL's protocols, their ring model and NCCL's pick per size: .libraries_protocols
# (constants of NCCL 2.29.2, ``ll``, ``simple``, ``tuning``, ``switch``).

DGX_H100_NICS = 8
"""Compute-fabric NICs of a DGX H100 (``dgx``)."""


# ============================================================================ MPI
@dataclass(frozen=True)
class MPIVersion:
    """One version of the MPI standard: number, release date, what the page uses of it."""

    version: str
    released: date
    feature: tuple[str, str]


MPI_VERSIONS: tuple[MPIVersion, ...] = (
    MPIVersion("1.0", date(1994, 5, 5), _two("collectives_mpi_allreduce_mpi")),
    MPIVersion("2.0", date(1997, 7, 18), _two("one_sided_mpi_put")),
    MPIVersion("3.0", date(2012, 9, 21), _two("non_blocking_collectives_mpi")),
    MPIVersion("4.0", date(2021, 6, 9), _two("persistent_collectives_mpi_allreduce")),
)
"""The MPI versions this page names, with the standard's own dates (``mpi``)."""

CHAPTER_MPI_CITATION_YEAR = 1993
"""Year of the reference the original gives for MPI 1.0: the Forum's Supercomputing '93 paper."""


def _bin(n: float) -> str:
    return fmt_bytes(n, binary=True)


def date_text(d: date, lang: str) -> str:
    """'5 May 1994' and its Chinese form (year, month, day), from ch1.toml."""
    return T.get(K + "date", lang, year=d.year, month=d.month, day=d.day, month_name=f"{d:%B}")


def mpi_table() -> Table:
    """The versions of MPI behind the features the page discusses."""
    rows = [{"version": f"MPI-{v.version}", "released": "d" + v.version, "feature": "f" + v.version}
            for v in MPI_VERSIONS]
    labels = {lang: {k + v.version: (v.feature[i] if k == "f" else date_text(v.released, lang))
                     for v in MPI_VERSIONS for k in "fd"} for lang, i in (("en", 0), ("zh", 1))}
    return Table(key="ch1-lib-mpi", title=_tx("mpi_versions_and_what"),
                 columns=["version", "released", "feature"],
                 headers=_txs("version", "released", "added_as_used_on"), rows=rows, labels=labels,
                 notes=_txs("dates_the_history_in"))


# ============================================================================ Gloo
GLOO_TRANSPORTS: dict[str, tuple[str, str]] = {
    "tcp": _two("sockets_any_ip_network"),
    "ibverbs": _two("infiniband_roce_gpudirect_for"),
    "uv": _two("libuv_sockets_the_macos"),
}
"""Gloo's transports (``gloo/transport/*``); none is shared memory (``gloo``)."""

PYTORCH_GLOO_DEFAULT = {"Linux": "tcp", "macOS": "uv", "Windows": "uv"}
"""The transport PyTorch's GlooDeviceFactory creates by default on each OS (``gloo``)."""

# ============================================================================ the A100 log
A100_LOG = "a100x8_nvswitch_nccl-tests_allreduce.txt"
"""8×A100 NVSwitch all-reduce sweep (code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""


@dataclass(frozen=True)
class Flat:
    """The flat stretch of a log (sizes ``flat`` = (i, j), both ends in), the ring fit
    below it (``alpha_s``, ``beta_Bps``, ``rms_frac``) carried over it (``pred``), and the
    protocol ceilings on the node's NVLink (``nv3_Bps``) it rules out."""
    sizes: np.ndarray
    times: np.ndarray
    busbw: np.ndarray
    pred: np.ndarray
    flat: tuple[int, int]
    p: int
    cols: int
    lo_bin: str
    hi_bin: str
    x_times: float
    tmin_s: float
    tmax_s: float
    bus_lo_Bps: float
    bus_hi_Bps: float
    small_lo_bin: str
    small_hi_bin: str
    alpha_s: float
    beta_Bps: float
    rms_frac: float
    beta_share_frac: float
    pred_hi_s: float
    pred_x: float
    nv3_Bps: float
    ll_cap_Bps: float
    ll128_cap_Bps: float
    not_ll_bytes: float       # the first size whose bus bandwidth passes the LL ceiling
    not_ll_bin: str
    not_ll_bus_Bps: float
    max_bus_Bps: float
    max_share_frac: float
    model_bus_Bps: float      # NCCL's model of the A100 ring under Simple
    model_gap_frac: float


def flat_region(log: str = A100_LOG, p: int = 8, tol: float = 0.01) -> Flat:
    """Where the measured time stops growing with size, read against the protocols.

    The flat stretch is the longest run of consecutive sizes whose times are within ``tol``
    of one another.  The sizes below it are fitted with the ring closed form; the line is
    extrapolated over the stretch.  The LL ceiling on the node's NVLink excludes LL wherever
    the measured bus bandwidth passes it: every all-reduce algorithm sends at least
    2(p − 1)/p · n per GPU when nothing reduces inside the switch, as on A100 (``nvswitch``).

    >>> flat_region().lo_bin
    '1 MiB'
    """
    run, = load_log(log)
    n, t, bus = run.sizes(), run.times(), run.column("busbw")
    best = (0, 0)
    for i in range(len(n)):
        j = i
        while j + 1 < len(n) and t[i:j + 2].max() / t[i:j + 2].min() - 1 <= tol:
            j += 1
        if j - i > best[1] - best[0]:
            best = (i, j)
    i, j = best
    if j == i:
        raise ValueError(f"{log}: no two consecutive sizes within {fmt_pct(tol)} of each other")
    b = _fit.fit(n[:i], t[:i], "all_reduce", "ring", p)
    pred = b.alpha * 2 * (p - 1) + 2 * (p - 1) / p * n / b.beta
    beta = physics.generation("NVLink 3.0").beta
    ll_cap = PROTOCOLS["LL"].ceiling(beta)
    k = int(np.nonzero(bus > ll_cap)[0][0])
    top = float(bus.max())
    return Flat(sizes=n, times=t, busbw=bus, pred=pred, flat=(i, j), p=p, cols=len(run.columns),
                lo_bin=_bin(n[i]), hi_bin=_bin(n[j]), x_times=n[j] / n[i], tmin_s=t[i:j + 1].min(),
                tmax_s=t[i:j + 1].max(), bus_lo_Bps=bus[i], bus_hi_Bps=bus[j], small_lo_bin=_bin(n[0]),
                small_hi_bin=_bin(n[i - 1]), alpha_s=b.alpha, beta_Bps=b.beta, rms_frac=b.rms_rel,
                beta_share_frac=b.beta / beta, pred_hi_s=pred[j], pred_x=pred[j] / t[j], nv3_Bps=beta,
                ll_cap_Bps=ll_cap, ll128_cap_Bps=PROTOCOLS["LL128"].ceiling(beta), not_ll_bytes=float(n[k]),
                not_ll_bin=_bin(n[k]), not_ll_bus_Bps=bus[k], max_bus_Bps=top, max_share_frac=top / beta,
                model_bus_Bps=A100_RING_BUSBW, model_gap_frac=A100_RING_BUSBW / top - 1)


def flat_table(fr: Flat | None = None, before: int = 2, after: int = 2) -> Table:
    """The log's rows around the flat stretch: measured, the ring line fitted below, busbw."""
    fr = flat_region() if fr is None else fr
    i, j = fr.flat
    lo, hi = max(0, i - before), min(len(fr.sizes), j + after + 1)
    rows = [{"n": fr.sizes[k], "t": fr.times[k], "pred": fr.pred[k], "ratio": fr.times[k] / fr.pred[k],
             "bus": fr.busbw[k], "ll": fr.busbw[k] / fr.ll_cap_Bps, "flat": i <= k <= j} for k in range(lo, hi)]
    return Table(
        key="ch1-lib-flat",
        title=_tx("a100_all_reduce_around", p=fr.p),
        columns=["n", "t", "pred", "ratio", "bus", "ll"],
        headers=_txs("size", "measured", "ring_line_from_below", "measured_line", "bus_bandwidth", "bus_bw_ll_ceiling"),
        rows=rows,
        formats={"n": _bin, "t": lambda x: fmt_time(x, 4),
                 "pred": lambda x: fmt_time(x, 4), "ratio": lambda x: f"{x:.2f}", "bus": lambda v: fmt_rate(v, 3),
                 "ll": lambda x: f"{x:.2f}"},
        notes=_txs("line_ring_closed_form", v=fr.small_lo_bin, v2=fr.small_hi_bin, alpha=fmt_time(fr.alpha_s, 3),
                   beta=fmt_rate(fr.beta_Bps, 3), rms_rel=fmt_pct(fr.rms_frac), beta2=fmt_rate(fr.nv3_Bps, 3),
                   ll_cap=fmt_rate(fr.ll_cap_Bps, 3)),
    )


# ============================================================================ diagnosis
DIAGNOSIS = {"bucket": 64 * MiB, "traced": 1.10e-3, "close": 0.70e-3}
"""An illustrative profiler reading (not a measurement): a 64 MiB gradient bucket's
all-reduce on an 8×A100 node takes 1.10 ms in the training step (``close``: a second case)."""
