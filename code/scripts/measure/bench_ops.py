"""The torch half of ``bench_collectives.py``: buffers filled with known patterns, one call
of each collective, the expected result and the count of wrong elements, and the timed loop.

Patterns (every value a small integer, so it is exact in every ``--dtype``):

* data movement (all_gather, all_to_all, broadcast, send_recv): element ``k`` of rank
  ``r``'s send buffer is ``(13 r + 7 k) mod 251`` (< 256: exact even in bfloat16), so a
  value placed at the wrong offset or taken from the wrong rank is counted as wrong;
* sums (all_reduce, reduce_scatter): element ``k`` of rank ``r`` is ``(3 r + k) mod q``
  with ``q - 1 = min(4, L // p)``, ``L`` the largest integer that every partial sum of the
  dtype holds exactly (256 for bfloat16, 2048 for float16, 2^24 for float32), so the sum
  over ``p`` ranks is exact whatever the reduction order and is compared exactly.  Only
  when ``p > L`` (bfloat16 beyond 256 ranks, float16 beyond 2048) do the values become 0/1
  and the comparison allow ``p`` units of rounding.

Patterns are periodic in ``k``, so buffers are tiled from one period and no index tensor
of the buffer's length is ever built (1 GB buffers on a GPU stay 1 GB).
"""
from __future__ import annotations

import math
import time
from typing import Callable

import torch
import torch.distributed as dist

from bench_report import Layout

__all__ = ["TORCH_DTYPES", "Bench", "time_loop", "move_period", "sum_period"]

TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
                "float64": torch.float64, "int32": torch.int32}
_EXACT = {"float16": 2048, "bfloat16": 256, "float32": 2 ** 24, "float64": 2 ** 53, "int32": 2 ** 31 - 1}
_MOVE_PERIOD = 251
_SENTINEL = -1          # every expected value is >= 0

_all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def move_period(src: int) -> list[int]:
    """One period (251 values) of the data-movement pattern of rank ``src``."""
    return [(13 * src + 7 * k) % _MOVE_PERIOD for k in range(_MOVE_PERIOD)]


def sum_period(src: int, q: int) -> list[int]:
    """One period (``q`` values) of the summed pattern of rank ``src``."""
    return [(3 * src + k) % q for k in range(q)]


class Bench:
    """One collective at one size on this rank: buffers, :meth:`run` (one call),
    :meth:`check` (fresh buffers, one call, the number of wrong elements)."""

    def __init__(self, lay: Layout, dtype: str, device: torch.device, rank: int, p: int,
                 group, root: int = 0):
        self.lay, self.dtype, self.device = lay, dtype, device
        self.tdtype = TORCH_DTYPES[dtype]
        self.rank, self.p, self.group, self.root = rank, p, group, root
        self.q = max(1, min(4, _EXACT[dtype] // p)) + 1
        self.exact = p * (self.q - 1) <= _EXACT[dtype]
        self.inp = torch.empty(lay.send, dtype=self.tdtype, device=device)
        self.out = (self.inp if lay.op in ("all_reduce", "broadcast")
                    else torch.empty(lay.recv, dtype=self.tdtype, device=device))
        self.fill()

    # -- patterns -------------------------------------------------------------------
    def _tile(self, period: list[int], start: int, n: int) -> torch.Tensor:
        """Elements ``start … start+n-1`` of the periodic sequence ``period``."""
        per = torch.tensor(period, dtype=torch.int64).to(self.tdtype)
        per = torch.roll(per, -(start % len(period))).to(self.device)
        return per.repeat(math.ceil(n / len(period)))[:n]

    def _sums(self) -> list[int]:
        """One period of the expected sum over all ranks of the summed pattern."""
        return [sum((3 * r + j) % self.q for r in range(self.p)) for j in range(self.q)]

    def fill(self) -> None:
        """Fill the send buffer with this rank's pattern and the receive buffer with -1."""
        op, n = self.lay.op, self.lay.send
        if op in ("all_reduce", "reduce_scatter"):
            self.inp.copy_(self._tile(sum_period(self.rank, self.q), 0, n))
        elif op == "broadcast" and self.rank != self.root:
            self.inp.fill_(_SENTINEL)
        else:
            self.inp.copy_(self._tile(move_period(self.rank), 0, n))
        if self.out is not self.inp:
            self.out.fill_(_SENTINEL)

    def expected(self) -> torch.Tensor:
        """What :attr:`out` must hold after one call on freshly filled buffers."""
        op, lay, r, p = self.lay.op, self.lay, self.rank, self.p
        if op == "all_reduce":
            return self._tile(self._sums(), 0, lay.recv)
        if op == "reduce_scatter":
            return self._tile(self._sums(), r * lay.recv, lay.recv)
        if op == "broadcast":
            return self._tile(move_period(self.root), 0, lay.recv)
        if op == "send_recv":
            return self._tile(move_period((r - 1) % p), 0, lay.recv)
        b = lay.count                     # per-rank share (all_gather) or per-peer block (all_to_all)
        offset = 0 if op == "all_gather" else r * b
        return torch.cat([self._tile(move_period(j), offset, b) for j in range(p)])

    # -- one call and its check --------------------------------------------------------
    def run(self) -> None:
        """One call of the collective (blocking on gloo, enqueued on the stream on NCCL)."""
        op, g = self.lay.op, self.group
        if op == "all_reduce":
            dist.all_reduce(self.inp, group=g)
        elif op == "all_gather":
            _all_gather(self.out, self.inp, group=g)
        elif op == "reduce_scatter":
            _reduce_scatter(self.out, self.inp, group=g)
        elif op == "all_to_all":
            dist.all_to_all_single(self.out, self.inp, group=g)
        elif op == "broadcast":
            dist.broadcast(self.inp, src=self.root, group=g)
        elif op == "send_recv":
            peers = ((self.rank + 1) % self.p, (self.rank - 1) % self.p)
            ops = [dist.P2POp(dist.isend, self.inp, peers[0], group=g),
                   dist.P2POp(dist.irecv, self.out, peers[1], group=g)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
        else:
            raise ValueError(f"unknown collective {op!r}")

    def check(self, sync: Callable[[], None]) -> int:
        """Refill the buffers, run once, return this rank's number of wrong elements."""
        self.fill()
        sync()
        self.run()
        sync()
        return self.wrong()

    def wrong(self) -> int:
        """Elements of :attr:`out` that differ from :meth:`expected` on this rank."""
        exp = self.expected()
        if self.exact:
            return int((self.out != exp).sum().item())
        diff = (self.out.double() - exp.double()).abs()
        tol = exp.double().abs() * torch.finfo(self.tdtype).eps * self.p
        return int((diff > tol).sum().item())


def time_loop(fn: Callable[[], None], iters: int, *, cuda: bool, barrier: Callable[[], None],
              beat: Callable[[str], None], what: str) -> float:
    """Seconds per call of ``fn`` on this rank: ``iters`` calls after a barrier, timed with
    CUDA events on the GPU and ``time.perf_counter`` on the CPU.  ``beat`` tells the
    watchdog that the loop progresses; waiting for the GPU polls, so the watchdog can act."""
    barrier()
    if not cuda:
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
            beat(what)
        return (time.perf_counter() - t0) / iters
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    wait_event(end)
    beat(what)
    return start.elapsed_time(end) / 1e3 / iters


def wait_event(event) -> None:
    """Wait for a CUDA event by polling (the GIL stays free for the watchdog thread)."""
    while not event.query():
        time.sleep(50e-6)
