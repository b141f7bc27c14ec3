"""Speed of ``commbook.measure.parse_nccl_tests`` on large synthetic logs: is it linear?

Run from the repository root::

    .venv/bin/python benchmarks/bench_parse.py              # 5 MB and 50 MB
    .venv/bin/python benchmarks/bench_parse.py --mb 1 10    # other sizes

The log repeats the H100 log of ``code/commbook/data/measured/nccl-tests/`` (five tests, ten rows each,
in their own layout) with an ``NCCL INFO`` line after every row, as ``NCCL_DEBUG=INFO``
interleaves them, until it reaches the size.  Printed per size: MB, tests, rows, wall time
(best of ``--repeats``, ``time.perf_counter``), MB/s and the process's peak RSS so far (the
log and one parse's runs); then the time ratio of the largest to the smallest size against
the size ratio (linear: equal; the target is within 1.5x).  Each
parse is checked: as many runs and rows as the log holds, each row equal to the same row of
the untouched log.  Not part of the test suite: timings depend on the machine.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "code"))

from commbook.measure import LOG_DIR, parse_nccl_tests  # noqa: E402

BASE = (LOG_DIR / "h100x8_nvswitch_nccl2.29.2_nccl-tests.log").read_text(encoding="utf-8")
INFO = "cnode3-002:4180122:4180399 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7 comm 0x55d0 nRanks 8"


def with_info_lines(text: str) -> str:
    out = []
    for line in text.splitlines():
        out.append(line)
        if line[:1] == " " and line.strip()[:1].isdigit():
            out.append(INFO)
    return "\n".join(out) + "\n"


def synthetic(mb: float) -> tuple[str, int]:
    """A log of about ``mb`` MB (10^6 bytes): whole copies of the interleaved H100 log."""
    unit = with_info_lines(BASE)
    copies = max(1, round(mb * 1e6 / len(unit.encode())))
    return unit * copies, copies


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, nargs="+", default=[5.0, 50.0], help="log sizes in MB")
    ap.add_argument("--repeats", type=int, default=3, help="best of this many parses (default 3)")
    args = ap.parse_args(argv)
    ref = parse_nccl_tests(BASE)
    print(f"{'MB':>8} {'tests':>8} {'rows':>9} {'time (s)':>10} {'MB/s':>8} {'peak RSS (MB)':>14}")
    times = {}
    for mb in args.mb:
        text, copies = synthetic(mb)
        size = len(text.encode()) / 1e6
        best = float("inf")
        runs = None
        for _ in range(args.repeats):
            runs = None                       # free the previous parse: the peak is one parse's
            t0 = time.perf_counter()
            runs = parse_nccl_tests(text)
            best = min(best, time.perf_counter() - t0)
        assert len(runs) == copies * len(ref)
        assert all(run.rows == ref[i % len(ref)].rows for i, run in enumerate(runs))
        rows = sum(len(r) for r in runs)
        times[size] = best
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # KiB on Linux
        print(f"{size:8.1f} {len(runs):8d} {rows:9d} {best:10.3f} {size / best:8.1f} {rss:14.0f}")
        del runs
    if len(times) > 1:
        (s0, t0), (s1, t1) = min(times.items()), max(times.items())
        ratio, want = t1 / t0, s1 / s0
        verdict = "PASS" if ratio <= 1.5 * want else "MISS"
        print(f"time ratio {ratio:.1f} for a size ratio {want:.1f} (linear: equal; target <= "
              f"{1.5 * want:.1f}): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
