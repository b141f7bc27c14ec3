"""The torch-free half of ``bench_collectives.py``: sizes, buffer layouts, the nccl-tests
table and the ``commbook.measured/1`` JSON record.

Everything here is plain Python so that it can be tested (and the table parsed back with
``commbook.measure.parse_nccl_tests``) without torch.  Conventions follow nccl-tests:

* sizes are given as ``8``, ``64K``, ``1M``, ``1G`` (K/M/G = 2^10, 2^20, 2^30 bytes) and
  swept from ``-b`` to ``-e`` by a factor ``-f`` (or by ``-i`` bytes when ``-f`` is 1);
* the printed *size* is the per-rank buffer for all-reduce, broadcast and send/recv, and
  the whole (gathered / scattered / exchanged) buffer for all-gather, reduce-scatter and
  all-to-all, whose per-rank share is rounded down to a multiple of 16 bytes; *count* is
  the per-rank element count for the first group and the per-peer count for the second;
* *time* is the mean over ranks of the time per iteration, *algbw* = size / time and
  *busbw* = algbw x the collective's factor from :data:`commbook.bandwidth.BUSBW_FACTORS`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

try:
    from commbook.bandwidth import BUSBW_FACTORS, algbw, busbw
except ImportError:  # run from a checkout without `pip install -e .`: use the repo's code/
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from commbook.bandwidth import BUSBW_FACTORS, algbw, busbw

__all__ = ["OPS", "ALIASES", "DTYPES", "NCCL_TESTS_NAMES", "SCHEMA", "Layout", "Result", "parse_size",
           "parse_ops", "sweep", "MAX_SIZES", "layout", "fmt_bw", "fmt_time", "table_header", "table_row",
           "table_footer", "json_record", "json_path"]

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv")
"""The collectives the script measures, in the order it runs them."""
ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
           "alltoall": "all_to_all", "sendrecv": "send_recv", "bcast": "broadcast"}
"""nccl-tests' spellings (``alltoall``, ``sendrecv`` …) accepted by ``--ops``."""
NCCL_TESTS_NAMES = {"all_reduce": "all_reduce_perf", "all_gather": "all_gather_perf",
                    "reduce_scatter": "reduce_scatter_perf", "all_to_all": "alltoall_perf",
                    "broadcast": "broadcast_perf", "send_recv": "sendrecv_perf"}
"""The nccl-tests binary each collective corresponds to (printed on the table's first line)."""
DTYPES = {"float32": ("float", 4), "float16": ("half", 2), "bfloat16": ("bfloat16", 2),
          "float64": ("double", 8), "int32": ("int32", 4)}
"""``--dtype`` → (nccl-tests' type name, bytes per element)."""
REDOP = {"all_reduce": "sum", "reduce_scatter": "sum"}
SCHEMA = "commbook.measured/1"
_UNITS = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "": 1}


def parse_size(text: str) -> int:
    """``"8"`` → 8, ``"64K"`` → 65536, ``"1M"`` → 1048576, ``"1G"`` → 2^30 (nccl-tests'
    binary suffixes, case-insensitive, an optional trailing ``B``).  Raises ``ValueError``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)B?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"size {text!r} is not a number of bytes with an optional K/M/G suffix "
                         "(e.g. 8, 64K, 1M, 1G)")
    value = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if value != int(value) or value < 1:
        raise ValueError(f"size {text!r} must be a whole number of bytes >= 1")
    return int(value)


def parse_ops(text: str) -> tuple[str, ...]:
    """``"all_reduce,alltoall"`` → ``("all_reduce", "all_to_all")``; ``"all"`` → every op.
    Accepts nccl-tests' names (``all_reduce_perf``, ``sendrecv``).  Raises ``ValueError``."""
    ops: list[str] = []
    for raw in str(text).split(","):
        name = re.sub(r"_perf$", "", raw.strip().lower().replace("-", "_"))
        if not name:
            continue
        if name == "all":
            return OPS
        name = ALIASES.get(name, name)
        if name not in OPS:
            raise ValueError(f"unknown collective {raw.strip()!r}; valid: all, {', '.join(OPS)}")
        if name not in ops:
            ops.append(name)
    if not ops:
        raise ValueError("--ops names no collective")
    return tuple(op for op in OPS if op in ops)


MAX_SIZES = 10_000
"""The most sizes one sweep may visit (each is a barrier, warm-up and timed calls on every rank)."""


def sweep(min_bytes: int, max_bytes: int, factor: int = 2, step_bytes: int = 0) -> list[int]:
    """The sizes nccl-tests visits: ``min, min*factor, …`` up to ``max`` (or ``min,
    min+step, …`` when ``factor`` is 1).  Raises ``ValueError`` on an empty or endless
    sweep, on ``step_bytes`` with a factor other than 1 (it would be ignored), and on more
    than :data:`MAX_SIZES` sizes (counted before any list is built)."""
    if min_bytes < 1 or max_bytes < min_bytes:
        raise ValueError(f"need 1 <= -b (minbytes) <= -e (maxbytes), got {min_bytes} and {max_bytes}")
    if factor < 1:
        raise ValueError(f"-f (step factor) must be >= 1, got {factor}")
    if factor > 1 and step_bytes:
        raise ValueError(f"-i (step bytes) {step_bytes} applies only with -f 1, got -f {factor}: "
                         "give -f 1 -i N (sizes min, min+N, ...) or -f F alone (min, min*F, ...)")
    if factor == 1 and step_bytes < 1 and max_bytes > min_bytes:
        raise ValueError("with -f 1 the sizes step by -i bytes, which must be >= 1")
    if factor == 1:
        count = (max_bytes - min_bytes) // step_bytes + 1 if max_bytes > min_bytes else 1
    else:
        count, size = 0, min_bytes
        while size <= max_bytes and count <= MAX_SIZES:
            count, size = count + 1, size * factor
    if count > MAX_SIZES:
        raise ValueError(f"-b {min_bytes} -e {max_bytes} -f {factor}"
                         + (f" -i {step_bytes}" if factor == 1 else "")
                         + f" gives {count:,}{'+' if factor > 1 else ''} sizes; at most {MAX_SIZES:,} "
                         "(raise -i or -f, or narrow -b .. -e)")
    if factor == 1:
        return list(range(min_bytes, max_bytes + 1, step_bytes)) if max_bytes > min_bytes else [min_bytes]
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= factor
    return sizes


@dataclass(frozen=True)
class Layout:
    """Buffers of one collective at one size: element counts of the send and receive
    buffers on each rank, ``count`` as nccl-tests prints it, and the printed ``size``."""

    op: str
    send: int
    recv: int
    count: int
    size: int


def layout(op: str, size: int, elt: int, p: int) -> Layout | None:
    """nccl-tests' buffers for ``op`` at ``size`` bytes, ``elt``-byte elements, ``p`` ranks;
    ``None`` when the size holds no element (per rank) at all."""
    count = size // elt
    if op in ("all_reduce", "broadcast", "send_recv"):
        return Layout(op, count, count, count, count * elt) if count else None
    align = max(1, 16 // elt)          # nccl-tests: (count / nranks) & -(16 / eltSize)
    base = count // p // align * align
    if not base:
        return None
    if op == "all_gather":
        return Layout(op, base, base * p, base, base * p * elt)
    if op == "reduce_scatter":
        return Layout(op, base * p, base, base, base * p * elt)
    if op == "all_to_all":
        return Layout(op, base * p, base * p, base, base * p * elt)
    raise ValueError(f"unknown collective {op!r}")


@dataclass(frozen=True)
class Result:
    """One measured size: the layout, times (s, mean over ranks) of each repeat, #wrong
    (``None`` when not checked)."""

    layout: Layout
    times: tuple[float, ...]
    wrong: int | None

    @property
    def time(self) -> float:
        """Median over repeats of the time per iteration (s)."""
        t = sorted(self.times)
        k = len(t)
        return t[k // 2] if k % 2 else 0.5 * (t[k // 2 - 1] + t[k // 2])

    def algbw(self) -> float:
        """size / time (bytes/s)."""
        return algbw(self.layout.size, self.time)

    def busbw(self, p: int) -> float:
        """algbw x nccl-tests' factor for ``p`` ranks (bytes/s)."""
        return busbw(self.layout.op, self.layout.size, self.time, p)


def fmt_time(us: float) -> str:
    """Microseconds in 7 columns, as nccl-tests prints them: 2 decimals, 1 from 10^4 µs,
    none from 10^5 µs."""
    return f"{us:7.2f}" if us < 1e4 else f"{us:7.1f}" if us < 1e5 else f"{us:7.0f}"


def fmt_bw(gbps: float) -> str:
    """GB/s with at least 4 significant digits (nccl-tests prints 2 decimals, which would
    leave nothing of gloo's small-message bandwidths); width 6 like nccl-tests."""
    if gbps <= 0 or not math.isfinite(gbps):
        return f"{gbps:6.2f}"
    decimals = max(2, 3 - math.floor(math.log10(gbps)))
    return f"{gbps:6.{decimals}f}"


def table_header(op: str, *, in_place: bool, sizes: Sequence[int], factor: int, step_bytes: int,
                 warmup: int, iters: int, check: bool, notes: Sequence[str],
                 devices: Sequence[dict]) -> list[str]:
    """The comment lines and column header that nccl-tests prints before its rows.
    ``devices``: one dict per rank with ``rank, pid, host, device, bus, name``."""
    step = f"{factor}(factor)" if factor > 1 else f"{step_bytes}(bytes)"
    lines = [f"# Collective test starting: {NCCL_TESTS_NAMES[op]}",
             f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: {step} "
             f"warmup iters: {warmup} iters: {iters} agg iters: 1 validation: {int(check)} graph: 0"]
    lines += [f"# {n}" for n in notes]
    lines += ["#", "# Using devices"]
    lines += [f"#  Rank {d['rank']:2d} Group  0 Pid {d['pid']:6d} on {d['host']:>10s} device "
              f"{d['device']:2d} [{d['bus']}] {d['name']}" for d in devices]
    place = "in-place" if in_place else "out-of-place"
    lines += ["#", f"#{'':62s}{place}",
              f"# {'size':>10s}  {'count':>12s}  {'type':>8s}  {'redop':>6s}  {'root':>6s}  "
              f"{'time':>7s} {'algbw':>6s} {'busbw':>6s}  {'#wrong':>6s}",
              f"# {'(B)':>10s}  {'(elements)':>12s}  {'':8s}  {'':6s}  {'':6s}  "
              f"{'(us)':>7s} {'(GB/s)':>6s} {'(GB/s)':>6s}  {'':6s}"]
    return lines


def table_row(res: Result, *, dtype: str, root: int, p: int) -> str:
    """One row: size, count, type, redop, root, time (µs), algbw, busbw (GB/s), #wrong."""
    lay = res.layout
    wrong = "N/A" if res.wrong is None else str(res.wrong)
    return (f"{lay.size:12d}  {lay.count:12d}  {DTYPES[dtype][0]:>8s}  {REDOP.get(lay.op, 'none'):>6s}  "
            f"{root:6d}  {fmt_time(res.time * 1e6)} {fmt_bw(res.algbw() / 1e9)} "
            f"{fmt_bw(res.busbw(p) / 1e9)}  {wrong:>6s}")


def table_footer(op: str, results: Sequence[Result], p: int) -> list[str]:
    """Out-of-bounds count, average busbw and the closing line, as nccl-tests prints them."""
    wrong = sum(r.wrong or 0 for r in results)
    avg = sum(r.busbw(p) for r in results) / len(results) / 1e9 if results else 0.0
    return [f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}",
            f"# Avg bus bandwidth    : {fmt_bw(avg).strip()} ", "#",
            f"# Collective test concluded: {NCCL_TESTS_NAMES[op]}", "#"]


def json_path(template: str, op: str, p: int, backend: str, dtype: str) -> Path:
    """``--json`` with ``{collective}``, ``{p}``, ``{backend}``, ``{dtype}`` filled in."""
    try:
        return Path(template.format(collective=op, p=p, backend=backend, dtype=dtype))
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as e:
        raise ValueError(f"--json {template!r}: bad placeholder ({e}); use {{collective}}, {{p}}, "
                         "{backend}, {dtype}") from None


def json_record(path: Path, op: str, results: Sequence[Result], meta: dict[str, Any]) -> dict[str, Any]:
    """The ``commbook.measured/1`` record of one collective's sweep (see
    ``commbook.measure.points``).  ``meta`` holds the run's provenance: ``world_size``,
    ``nodes``, ``backend``, ``dtype``, ``in_place``, ``warmup``, ``iters``, ``repeats``,
    ``root``, ``device_names``, ``software``, ``interconnect``, ``date``, ``command`` …"""
    p, backend = meta["world_size"], meta["backend"]
    names = sorted(set(meta["device_names"]))
    gpus = p if backend == "nccl" else 0
    what = (f"{op} with torch.distributed ({backend}) on {p} ranks, {meta['nodes']} node(s), "
            f"{meta['dtype']}: time per iteration (mean over ranks, median of {meta['repeats']} "
            f"repeats of {meta['iters']} iterations), algbw and busbw as nccl-tests defines them")
    conditions = {k: meta[k] for k in ("backend", "dtype", "in_place", "warmup", "iters", "repeats",
                                       "check") if k in meta}
    if op == "broadcast":
        conditions["root"] = meta.get("root", 0)
    conditions.update({k: v for k, v in meta.get("nccl_env", {}).items() if v is not None})
    points = []
    for r in results:
        bus = r.busbw(p)      # 0 on one rank (factor 0): left out, the schema wants values > 0
        points.append({"bytes": r.layout.size, "time_s": r.time, "algbw_bytes_per_s": r.algbw(),
                       **({"busbw_bytes_per_s": bus} if bus > 0 else {}), "count": r.layout.count,
                       "wrong": r.wrong, "time_s_repeats": list(r.times)})
    return {
        "schema": SCHEMA, "name": path.stem, "what": what, "collective": op, "ranks": p,
        "system": {"gpu": ", ".join(names) if backend == "nccl" else f"none: CPU processes ({', '.join(names)})",
                   "gpus": gpus, "nodes": meta["nodes"], "interconnect": meta["interconnect"],
                   "software": meta["software"]},
        "conditions": conditions,
        "units": {"bytes": "bytes as nccl-tests prints its size column: the per-rank buffer for "
                           "all_reduce, broadcast and send_recv, the whole buffer (count x ranks) for "
                           "all_gather, reduce_scatter and all_to_all",
                  "time_s": "seconds per iteration: mean over ranks, median over repeats",
                  "algbw_bytes_per_s": "bytes / time_s (1 GB/s = 1e9 B/s)",
                  "busbw_bytes_per_s": f"algbw x nccl-tests' factor for {op} "
                                       f"({BUSBW_FACTORS[op](p):.6g} at {p} ranks)",
                  "time_s_repeats": "the mean-over-ranks time of each repeat (s)"},
        "points": points,
        "source": {"title": "commbook bench_collectives.py (own measurement with torch.distributed)",
                   "url": "https://docs.pytorch.org/docs/stable/distributed.html",
                   "section": "torch.distributed collectives timed and printed as nccl-tests does",
                   "path": "code/scripts/measure/bench_collectives.py",
                   **({"commit": meta["commit"]} if meta.get("commit") else {})},
        "provenance": {k: meta[k] for k in ("date", "command", "world_size", "local_world_size", "nodes",
                                            "hostname_count",
                                            "backend", "torch", "nccl", "cuda", "device_names",
                                            "nccl_env") if k in meta},
        "notes": list(meta.get("notes", ())),
    }
