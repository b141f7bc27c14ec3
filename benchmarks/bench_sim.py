"""Speed of the virtual cluster: is it fast enough for the book's interactive pages?

Run from the repository root::

    .venv/bin/python benchmarks/bench_sim.py            # the three figures
    .venv/bin/python benchmarks/bench_sim.py --profile  # + cProfile of each case
    .venv/bin/python benchmarks/bench_sim.py --quick    # smaller (a) for slow machines

Figures (median wall time of a few repeats, ``time.perf_counter``):

(a) real-data ring all-reduce, 8 ranks x 64 MiB float32 on ``Switch(8, NVLINK4)``,
    against ``np.sum`` over the same (8, N) stack along axis 0; target ratio <= 3x
    with ``check=False`` and <= 5x with ``check=True`` (the check costs one reduction for the
    reference and one blocked comparison pass over the ranks' outputs).
(b) size-only ring all-reduce, 512 ranks on ``Switch(512, IB_NDR)``; target < 0.2 s.
(c) size-only hierarchical all-reduce, 4096 ranks on
    ``TwoLevel(512, 8, intra=NVLINK4, inter=IB_NDR)``; target < 1 s.

Scale (each in a fresh process, wall time and peak RSS of that process, the simulated
time checked against the closed form to rel 1e-9): (d) ring all-reduce, 16,384 ranks on a
switch, and (e) the direct all-to-all there, <= 10 s and <= 2 GB; (f) ring all-reduce,
65,536 ranks, <= 60 s and <= 4 GB; (g) the 8-channel ring (one channel per NIC) on
1,024 nodes x 8 GPUs with PXN, <= 10 s and <= 2 GB.

Not part of the test suite: timings depend on the machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "code"))

from commbook.collectives import all_reduce  # noqa: E402
from commbook.comm_sim import VirtualCluster  # noqa: E402
from commbook.hardware import IB_NDR, NVLINK4  # noqa: E402
from commbook.topology import Switch, TwoLevel  # noqa: E402
from commbook.units import MiB  # noqa: E402


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


TARGETS = {"a_nocheck": 3.0, "a_check": 5.0, "b": 0.2, "c": 1.0}
"""(a) ratios to np.sum without and with the output check; (b), (c) seconds."""

SCALE = {  # case: (what, ranks, seconds, bytes of peak RSS)
    "d": ("ring all-reduce, Switch(16384, IB_NDR)", 16384, 10.0, 2e9),
    "e": ("direct all-to-all, Switch(16384, IB_NDR)", 16384, 10.0, 2e9),
    "f": ("ring all-reduce, Switch(65536, IB_NDR)", 65536, 60.0, 4e9),
    "g": ("8-channel ring, TwoLevel(1024, 8, NVLINK4 + IB_NDR, pxn=True)", 8192, 10.0, 2e9),
}
"""The scale cases: description, ranks, time and peak-memory targets."""


def scale_case(case: str) -> dict:
    """Run one scale case in this process: wall time, peak RSS, simulated / closed-form - 1."""
    from commbook import cost
    from commbook.collectives import all_to_all
    from commbook.collectives.channels import ring_time_two_level

    p, n = SCALE[case][1], 1e9
    t0 = time.perf_counter()
    if case == "g":
        topo = TwoLevel(p // 8, 8, NVLINK4, IB_NDR, pxn=True)
        got, want = all_reduce(VirtualCluster(topo), nbytes=n, channels=8).time, ring_time_two_level(topo, n, 8)
    elif case == "e":
        got = all_to_all(VirtualCluster(Switch(p, IB_NDR)), nbytes=n).time
        want = cost.all_to_all_direct(p, n, IB_NDR.alpha, IB_NDR.beta)
    else:
        got = all_reduce(VirtualCluster(Switch(p, IB_NDR)), nbytes=n).time
        want = cost.allreduce_ring(p, n, IB_NDR.alpha, IB_NDR.beta)
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024      # KiB on Linux
    return {"seconds": seconds, "rss": rss, "rel": got / want - 1}


def run_scale() -> int:
    """Every scale case in a fresh process; prints a row each; returns the number missed."""
    missed = 0
    print("\nScale, size only, each case in a fresh process (wall time, peak RSS, simulated vs closed form)")
    for case, (what, p, t_max, m_max) in SCALE.items():
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--case", case],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        ok = r["seconds"] <= t_max and r["rss"] <= m_max and abs(r["rel"]) <= 1e-9
        missed += not ok
        print(f"({case}) {what}\n    {r['seconds']:7.2f} s  (<= {t_max:g} s)   peak {r['rss'] / 1e9:5.2f} GB "
              f"(<= {m_max / 1e9:g} GB)   rel {r['rel']:+.1e}  {verdict(ok)}")
    return missed


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


# ----------------------------------------------------------------------------- cases
def case_a(size_bytes: int, repeats: int):
    """Real-data ring all-reduce vs np.sum; returns (t_np, t_nocheck, t_check, closures)."""
    p = 8
    n = size_bytes // 4
    rng = np.random.default_rng(0)
    stack = rng.standard_normal((p, n), dtype=np.float32)
    data = list(stack)  # 8 row views of the (8, N) stack
    cluster = VirtualCluster(Switch(p, NVLINK4))

    def ref():
        return np.sum(stack, axis=0)

    def sim(check):
        return lambda: all_reduce(cluster, data, algorithm="ring", check=check)

    # np.sum and the check=False run alternate, so that machine noise hits both alike
    ref(), sim(False)()
    t_ref, t_nc = [], []
    for _ in range(repeats):
        for fn, acc in ((ref, t_ref), (sim(False), t_nc)):
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    t_np, t_nocheck = statistics.median(t_ref), statistics.median(t_nc)
    t_check = median_time(sim(True), 3, warmup=0)  # seconds per run: 3 runs are plenty
    return t_np, t_nocheck, t_check, {"a: ring real data check=False": sim(False),
                                      "a: ring real data check=True": sim(True)}


def case_b(repeats: int):
    cluster = VirtualCluster(Switch(512, IB_NDR))
    fn = lambda: all_reduce(cluster, nbytes=64 * MiB, algorithm="ring")  # noqa: E731
    return median_time(fn, repeats), fn


def case_c(repeats: int):
    cluster = VirtualCluster(TwoLevel(512, 8, intra=NVLINK4, inter=IB_NDR))
    fn = lambda: all_reduce(cluster, nbytes=64 * MiB, algorithm="hierarchical")  # noqa: E731
    return median_time(fn, repeats), fn


def profile(name: str, fn, top: int = 18) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    print(f"\n=== cProfile: {name} (sorted by own time) ===")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per figure (median)")
    ap.add_argument("--quick", action="store_true", help="8 MiB per rank for (a) instead of 64 MiB")
    ap.add_argument("--profile", action="store_true", help="cProfile every case after timing")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale cases (d)-(g)")
    ap.add_argument("--case", choices=sorted(SCALE), help=argparse.SUPPRESS)  # one scale case, as JSON
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(scale_case(args.case)))
        return 0

    size = (8 if args.quick else 64) * MiB
    print(f"numpy {np.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")

    t_np, t_nc, t_c, fa = case_a(size, args.repeats)
    r_nc, r_c = t_nc / t_np, t_c / t_np
    print(f"(a) ring all-reduce, 8 ranks x {size // MiB} MiB float32, Switch(8, NVLINK4), real data")
    print(f"    np.sum(stack, axis=0)        {t_np * 1e3:9.1f} ms")
    print(f"    all_reduce check=False       {t_nc * 1e3:9.1f} ms   ratio {r_nc:5.2f}x  "
          f"target <= {TARGETS['a_nocheck']:g}x  {verdict(r_nc <= TARGETS['a_nocheck'])}")
    print(f"    all_reduce check=True        {t_c * 1e3:9.1f} ms   ratio {r_c:5.2f}x  "
          f"target <= {TARGETS['a_check']:g}x  {verdict(r_c <= TARGETS['a_check'])}")

    t_b, fb = case_b(args.repeats)
    print("\n(b) ring all-reduce, 512 ranks, Switch(512, IB_NDR), size only")
    print(f"    {t_b * 1e3:9.1f} ms   target < {TARGETS['b'] * 1e3:g} ms  {verdict(t_b < TARGETS['b'])}")

    t_cc, fc = case_c(args.repeats)
    print("\n(c) hierarchical all-reduce, 4096 ranks, TwoLevel(512, 8, NVLINK4 + IB_NDR), size only")
    print(f"    {t_cc * 1e3:9.1f} ms   target < {TARGETS['c'] * 1e3:g} ms  {verdict(t_cc < TARGETS['c'])}")

    misses = [r_nc > TARGETS["a_nocheck"], r_c > TARGETS["a_check"], t_b >= TARGETS["b"], t_cc >= TARGETS["c"]]
    total = 4
    if not args.no_scale:
        misses.append(run_scale())
        total += len(SCALE)
    print(f"\n{total - sum(misses)}/{total} targets met")

    if args.profile:
        for name, fn in [*fa.items(), ("b: ring 512 size-only", fb), ("c: hierarchical 4096 size-only", fc)]:
            profile(name, fn)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
