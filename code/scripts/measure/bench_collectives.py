"""Measure real collectives with torch.distributed and print nccl-tests' table.

Run under torchrun, one process per GPU (NCCL) or per CPU rank (gloo)::

    torchrun --nproc-per-node=8 code/scripts/measure/bench_collectives.py -b 8 -e 1G -f 2
    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=HOST:29500 \\
        code/scripts/measure/bench_collectives.py --ops all_reduce,all_to_all --json 'ar_{collective}.json'
    torchrun --nproc-per-node=4 code/scripts/measure/bench_collectives.py --backend gloo -e 16M

Rank 0 prints, per collective, the table nccl-tests prints (size, count, type, redop, root,
time in µs, algbw, busbw in GB/s, #wrong), which ``commbook.measure.parse_nccl_tests`` reads
back; ``--json`` writes a ``commbook.measured/1`` record per collective.  Every size's
result is checked against the expected values (#wrong), and the script exits 1 if any is
wrong.  Failures end every rank with a message and a non-zero exit within ``--timeout``
seconds of no progress: a rank that dies or hangs, a world size other than
``--expect-world-size``, or ranks started with different arguments (exit 2); before the
rendezvous as well (``bench_launch.rendezvous``: ``--init-timeout``, default ``--timeout``).
Arguments that cannot work (more than 10,000 sizes, ``-i`` without ``-f 1``, a bad
``--json`` placeholder or folder, a timeout past 7 days) are refused on every rank first.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_launch import (EXIT_FAILRANK, EXIT_RUNTIME, EXIT_USAGE, MAX_TIMEOUT, Watchdog, die, env_int,
                          json_problem, rendezvous)
from bench_report import (DTYPES, OPS, Result, json_path, json_record, layout, parse_ops, parse_size,
                          sweep, table_footer, table_header, table_row)

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, nccl-tests' short options where it has them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="all", help=f"comma-separated: all or {', '.join(OPS)} "
                    "(nccl-tests names such as alltoall, sendrecv also work); default all")
    ap.add_argument("-b", "--minbytes", default="8", help="smallest size (8, 64K, 1M, 1G); default 8")
    ap.add_argument("-e", "--maxbytes", default="128M", help="largest size; default 128M")
    ap.add_argument("-f", "--stepfactor", type=int, default=2, help="multiply the size by this; default 2")
    ap.add_argument("-i", "--stepbytes", default="0", help="with -f 1: add this many bytes per step")
    ap.add_argument("-d", "--dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("-w", "--warmup_iters", type=int, default=5, help="warm-up calls per size; default 5")
    ap.add_argument("-n", "--iters", type=int, default=20, help="timed calls per size; default 20")
    ap.add_argument("--repeats", type=int, default=1,
                    help="time the -n calls this many times and report the median; default 1")
    ap.add_argument("-r", "--root", type=int, default=0, help="broadcast root; default 0")
    ap.add_argument("-c", "--check", type=int, default=1, choices=(0, 1), help="verify results; default 1")
    ap.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"),
                    help="auto: nccl when CUDA is available, else gloo")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a collective may wait "
                    "for its peers before every rank gives up; default 300")
    ap.add_argument("--init-timeout", type=float, help="seconds for every rank to join the "
                    "rendezvous; default --timeout")
    ap.add_argument("--expect-world-size", type=int, help="fail unless the job has this many ranks")
    ap.add_argument("--json", metavar="PATH", help="write a commbook.measured/1 record; with several "
                    "--ops PATH must contain {collective} ({p}, {backend}, {dtype} also work)")
    ap.add_argument("--hide-hostnames", action="store_true", help="print node0, node1 … for host names")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--fail-rank", type=int, help=argparse.SUPPRESS)   # tests: this rank fails
    ap.add_argument("--fail-mode", default="exit", choices=("exit", "hang", "hang-before-init"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        args.ops = parse_ops(args.ops)
        args.step_bytes = parse_size(args.stepbytes) if args.stepbytes not in ("0", "") else 0
        args.sizes = sweep(parse_size(args.minbytes), parse_size(args.maxbytes), args.stepfactor,
                           args.step_bytes)
        if args.json and len(args.ops) > 1 and "{collective}" not in args.json:
            raise ValueError(f"--json {args.json!r} with {len(args.ops)} collectives must contain "
                             "{collective}, one file per collective")
        if args.json:                  # a bad placeholder: refused here, on every rank
            for op in args.ops:
                json_path(args.json, op, 1, "gloo", args.dtype)
    except ValueError as e:
        ap.error(str(e))
    for name in ("warmup_iters", "iters", "repeats"):
        if getattr(args, name) < (0 if name == "warmup_iters" else 1):
            ap.error(f"--{name} must be >= {0 if name == 'warmup_iters' else 1}")
    if args.expect_world_size is not None and args.expect_world_size < 1:
        ap.error(f"--expect-world-size must be >= 1, got {args.expect_world_size}")
    if args.init_timeout is None:
        args.init_timeout = args.timeout
    for name in ("timeout", "init_timeout"):
        value = getattr(args, name)
        if not 0 < value <= MAX_TIMEOUT:      # also nan, inf and 1e300 (torch overflows)
            ap.error(f"--{name.replace('_', '-')} must be a number of seconds in (0, {MAX_TIMEOUT:.0f}] "
                     f"(7 days), got {value!r}")
    return args


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _pci_bus(torch, index: int) -> str:
    """The GPU's PCI address as nccl-tests prints it (``0000:1b:00``), where torch knows it."""
    props = torch.cuda.get_device_properties(index)
    ids = [getattr(props, f"pci_{k}_id", None) for k in ("domain", "bus", "device")]
    if all(isinstance(i, int) for i in ids):
        return f"{ids[0]:04x}:{ids[1]:02x}:{ids[2]:02x}"
    return f"cuda:{index}"


def _git_commit() -> str | None:
    """HEAD of the checkout the script runs from, ``-dirty`` when the script's own files
    differ from it (or are not committed); ``None`` outside git."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=5)
        status = subprocess.run(["git", "status", "--porcelain", "--", "bench_*.py"], cwd=here,
                                capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if head.returncode != 0 or not head.stdout.strip():
        return None
    return head.stdout.strip() + ("-dirty" if status.returncode != 0 or status.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; return the exit code (0: all correct, 1: a wrong result)."""
    args = parse_args(argv)
    rank, world = env_int("RANK"), env_int("WORLD_SIZE")
    local_rank = env_int("LOCAL_RANK", 0)
    if world < 1:
        die(rank, f"WORLD_SIZE {world} must be >= 1", EXIT_USAGE)
    if not 0 <= rank < world or local_rank < 0:
        die(rank, f"RANK {rank} (LOCAL_RANK {local_rank}) is not a rank of WORLD_SIZE {world} "
            f"(0 .. {world - 1}): the launcher gave this process an impossible rank", EXIT_USAGE)
    if args.expect_world_size is not None and world != args.expect_world_size:
        die(rank, f"world size is {world}, --expect-world-size says {args.expect_world_size}", EXIT_USAGE)
    if "broadcast" in args.ops and not 0 <= args.root < world:
        die(rank, f"--root {args.root} is not a rank of a world of {world}", EXIT_USAGE)
    grace = lambda t: t + max(5.0, 0.25 * t)   # noqa: E731 - the backend's own timeout speaks first
    dog = Watchdog(grace(max(args.init_timeout, 60.0)), rank)   # a cold import of torch can be slow
    dog.beat("importing torch")
    try:
        import torch
        import torch.distributed as dist
        from bench_ops import Bench, time_loop
    except ImportError as e:
        die(rank, f"cannot import torch ({e}): pip install -e '.[measure]' (torch==2.13.0)", EXIT_USAGE)
    cuda_ok = torch.cuda.is_available() and dist.is_nccl_available()
    backend = args.backend if args.backend != "auto" else ("nccl" if cuda_ok else "gloo")
    if backend == "nccl" and not cuda_ok:
        die(rank, "--backend nccl needs CUDA GPUs and a torch built with NCCL", EXIT_USAGE)
    cuda = backend == "nccl"
    if cuda and local_rank >= torch.cuda.device_count():
        die(rank, f"LOCAL_RANK {local_rank} but this node shows {torch.cuda.device_count()} GPU(s): start "
            "at most one process per GPU (--nproc-per-node), or use --backend gloo", EXIT_USAGE)
    problem = json_problem(args, world, backend) if rank == 0 and args.json else None
    if cuda:
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")   # tear down on a timeout
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dog.limit = grace(args.init_timeout)
    if args.fail_rank == rank and args.fail_mode == "hang-before-init":
        dog.beat("simulating a rank that hangs before joining (--fail-mode hang-before-init)")
        while True:
            time.sleep(1)
    dog.beat("the rendezvous (waiting for every rank to join)")
    store = rendezvous(dist, rank, world, args.init_timeout, problem)
    dog.beat("init_process_group")
    try:
        dist.init_process_group(backend, store=dist.PrefixStore("default_pg", store), rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=args.init_timeout))
        # every measured call goes through a group whose timeout is --timeout
        group = dist.new_group(backend=backend, timeout=datetime.timedelta(seconds=args.timeout))
    except Exception as e:  # noqa: BLE001 - any failure to form the group ends the run cleanly
        die(rank, f"init_process_group({backend}) failed: {type(e).__name__}: {e}", EXIT_RUNTIME)
    dog.limit = grace(args.timeout)
    barrier = ((lambda: dist.barrier(group=group, device_ids=[local_rank])) if cuda
               else (lambda: dist.barrier(group=group)))
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    step = "exchanging the configuration"
    try:
        dog.beat(step)
        _check_same_config(args, rank, world, dist, group)
        me = {"rank": rank, "pid": os.getpid(), "host": socket.gethostname(), "device": local_rank,
              "bus": _pci_bus(torch, local_rank) if cuda else "cpu",
              "name": torch.cuda.get_device_name(local_rank) if cuda else f"CPU {_cpu_name()}"}
        devices: list[Any] = [None] * world
        dist.all_gather_object(devices, me, group=group)
        if args.fail_rank == rank:
            sys.stderr.write(f"[bench_collectives rank {rank}] --fail-rank: failing now ({args.fail_mode})\n")
            sys.stderr.flush()
            if args.fail_mode == "exit":
                os._exit(EXIT_FAILRANK)
            dog.beat("simulating a hung rank (--fail-mode hang)")
            while True:
                time.sleep(1)
        meta = _provenance(args, backend, world, devices, torch)
        wrong_total = 0
        started = time.monotonic()
        for op in args.ops:
            if op == "send_recv" and world < 2:
                if rank == 0:
                    print(f"# send_recv needs at least 2 ranks (world size {world}): skipped", flush=True)
                continue
            elt = DTYPES[args.dtype][1]
            lays = [lay for s in args.sizes if (lay := layout(op, s, elt, world)) is not None]
            if rank == 0:
                _print_header(op, args, world, devices, meta, skipped=len(args.sizes) - len(lays))
            results = []
            for i, lay in enumerate(lays):
                step = f"{op} at {lay.size} B"
                dog.beat(step)
                barrier()
                bench = Bench(lay, args.dtype, device, rank, world, group, args.root)
                for _ in range(args.warmup_iters):
                    bench.run()
                    dog.beat(step + " (warm-up)")
                sync()
                times = [time_loop(bench.run, args.iters, cuda=cuda, barrier=barrier, beat=dog.beat,
                                   what=step) for _ in range(args.repeats)]
                wrong = bench.check(sync) if args.check else None
                t = torch.tensor(times + [float(wrong or 0)], dtype=torch.float64, device=device)
                dist.all_reduce(t, group=group)               # times: mean over ranks; wrong: sum
                res = Result(lay, tuple(x / world for x in t[:-1].tolist()),
                             int(round(t[-1].item())) if args.check else None)
                wrong_total += res.wrong or 0
                results.append(res)
                del bench
                if rank == 0:
                    print(table_row(res, dtype=args.dtype, root=args.root if op == "broadcast" else -1,
                                    p=world), flush=True)
                    if not args.quiet:
                        sys.stderr.write(f"[bench_collectives] {op} {i + 1}/{len(lays)}: {lay.size} B "
                                         f"{res.time * 1e6:.1f} us, #wrong {res.wrong} "
                                         f"({time.monotonic() - started:.1f} s)\n")
            if rank == 0:
                print("\n".join(table_footer(op, results, world)), flush=True)
                if args.json and results:
                    path = json_path(args.json, op, world, backend, args.dtype)
                    _write_json(path, json_record(path, op, results, {**meta, "in_place": op in
                                                                      ("all_reduce", "broadcast")}))
        dog.beat("finishing")
        barrier()
    except Exception as e:  # noqa: BLE001 - a broken peer surfaces as any exception of the backend
        die(rank, f"{step} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
            "(did a peer rank die, hang or get other arguments?)", EXIT_RUNTIME)
    if wrong_total:
        die(rank, f"{wrong_total} wrong elements in the results (see #wrong)", EXIT_RUNTIME)
    sys.stdout.flush()
    os._exit(0)   # skip destroy_process_group: on a broken job it can hang, and the job ends here


def _check_same_config(args: argparse.Namespace, rank: int, world: int, dist, group) -> None:
    """Every rank must measure the same things: gather the arguments and compare."""
    mine = {k: getattr(args, k) for k in ("ops", "sizes", "dtype", "warmup_iters", "iters",
                                          "repeats", "root", "check")}
    mine["sizes"] = list(mine["sizes"])
    every: list[Any] = [None] * world
    dist.all_gather_object(every, mine, group=group)
    diff = sorted({f"{k} (rank 0: {every[0][k]!r:.60}, rank {r}: {cfg[k]!r:.60})"
                   for r, cfg in enumerate(every) for k in mine if cfg[k] != every[0][k]})
    if diff:
        die(rank, "the ranks were started with different arguments: " + "; ".join(diff[:4]), EXIT_USAGE)


def _provenance(args: argparse.Namespace, backend: str, world: int, devices: list[dict], torch) -> dict:
    """What the JSON record says about the run."""
    hosts = sorted({d["host"] for d in devices})
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if backend == "nccl" else None
    env = {"NCCL_ALGO": os.environ.get("NCCL_ALGO"), "NCCL_PROTO": os.environ.get("NCCL_PROTO")}
    if args.hide_hostnames:
        for d in devices:
            d["host"] = f"node{hosts.index(d['host'])}"
    software = f"torch {torch.__version__}, {backend}" + (f" (NCCL {nccl}, CUDA {torch.version.cuda})"
                                                          if nccl else "")
    interconnect = (f"{backend} on one host (shared memory / loopback)" if len(hosts) == 1
                    else f"{backend} across {len(hosts)} hosts (network as the cluster provides)")
    return {"world_size": world, "local_world_size": env_int("LOCAL_WORLD_SIZE", 0) or None,
            "nodes": len(hosts), "hostname_count": len(hosts), "backend": backend,
            "dtype": args.dtype, "warmup": args.warmup_iters, "iters": args.iters, "repeats": args.repeats,
            "check": bool(args.check), "root": args.root, "torch": torch.__version__, "nccl": nccl,
            "cuda": torch.version.cuda if backend == "nccl" else None,
            "device_names": [d["name"] for d in devices], "software": software,
            "interconnect": interconnect, "nccl_env": env, "commit": _git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": "bench_collectives.py " + shlex.join(sys.argv[1:]),
            "notes": ["all_reduce and broadcast run in place (torch.distributed has no out-of-place "
                      "form); the other collectives out of place",
                      "#wrong counts the elements that differ from the expected pattern in one "
                      "extra call on fresh buffers after the timed calls, summed over ranks"]}


def _print_header(op: str, args: argparse.Namespace, world: int, devices: list[dict], meta: dict,
                  skipped: int) -> None:
    notes = [f"commbook bench_collectives.py: torch.distributed {meta['backend']}, world size {world}, "
             f"{meta['nodes']} node(s), dtype {args.dtype}, {meta['software']}",
             f"time = mean over ranks of the time per call, median of {args.repeats} repeat(s)"]
    if meta["nccl"]:
        notes.append(f"NCCL version {meta['nccl']}")
    notes += [f"{k}={v}" for k, v in meta["nccl_env"].items() if v is not None]
    if skipped:
        notes.append(f"{skipped} size(s) below one element per rank skipped")
    print("\n".join(table_header(op, in_place=op in ("all_reduce", "broadcast"), sizes=args.sizes,
                                 factor=args.stepfactor, step_bytes=args.step_bytes, warmup=args.warmup_iters,
                                 iters=args.iters, check=bool(args.check), notes=notes,
                                 devices=devices)), flush=True)


def _write_json(path: Path, record: dict) -> None:
    import json
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
