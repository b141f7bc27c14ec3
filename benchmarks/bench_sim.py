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

Not part of the test suite: timings depend on the machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
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
    args = ap.parse_args(argv)

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
    print(f"\n{4 - sum(misses)}/4 targets met")

    if args.profile:
        for name, fn in [*fa.items(), ("b: ring 512 size-only", fb), ("c: hierarchical 4096 size-only", fc)]:
            profile(name, fn)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
