"""DDP's buckets against PyTorch itself (torch 2.13, the CPU build the project installs):
two gloo ranks on 127.0.0.1, a small model, the reducer's bucket sizes read from DDP's
logging data in both modes — at construction and after the rebuild of the second
iteration — compared with commbook.overlap.ddp_bucket_assignment."""
from __future__ import annotations

import multiprocessing as mp
import os

import pytest

from commbook.overlap import ddp_bucket_assignment

torch = pytest.importorskip("torch", reason="torch (the 'measure' extra) is not installed") \
    if os.environ.get("CI") != "true" else __import__("torch")


def _model():
    nn = torch.nn
    return nn.Sequential(nn.Embedding(1000, 512), nn.Linear(512, 2048), nn.Linear(2048, 2048),
                         nn.Linear(2048, 512))


def _rank(rank: int, store: str, unused: bool, out) -> None:
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    torch.manual_seed(0)
    ddp = torch.nn.parallel.DistributedDataParallel(_model(), find_unused_parameters=unused)
    seen = [ddp._get_ddp_logging_data()["bucket_sizes"]]
    for _ in range(3):                      # the rebuild happens in the second forward pass
        ddp(torch.randint(0, 1000, (4, 3))).sum().backward()
    info = ddp._get_ddp_logging_data()
    seen += [info.get("has_rebuilt_buckets"), info.get("rebuilt_bucket_sizes")]
    if rank == 0:
        out.put(seen)
    dist.destroy_process_group()


def _torch_buckets(tmp_path, unused: bool):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    store = str(tmp_path / f"store_{unused}")
    procs = [ctx.Process(target=_rank, args=(r, store, unused, out)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        seen = out.get(timeout=120)
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    sizes = lambda text: [int(x) for x in text.split(",")] if text else None
    return sizes(seen[0]), seen[1], sizes(seen[2])


def test_ddp_buckets_in_both_modes_are_pytorchs(tmp_path):
    params = [p.numel() * p.element_size() for p in _model().parameters()]   # definition order
    bytes_of = lambda buckets: [sum(params[i] for i in b) for b in buckets]
    # default mode (find_unused_parameters=False): one bucket, then the rebuilt walk
    first, rebuilt_flag, rebuilt = _torch_buckets(tmp_path, False)
    assert first == bytes_of(ddp_bucket_assignment(params, rebuilt=False)) == [sum(params)]
    assert rebuilt_flag == 1
    assert rebuilt == bytes_of(ddp_bucket_assignment(params, rebuilt=True))
    # find_unused_parameters=True: the constructor's walk, never rebuilt
    first, rebuilt_flag, rebuilt = _torch_buckets(tmp_path, True)
    assert first == bytes_of(ddp_bucket_assignment(params, rebuilt=False, find_unused_parameters=True))
    assert len(first) > 1 and rebuilt_flag == 0 and rebuilt is None
    assert bytes_of(ddp_bucket_assignment(params, rebuilt=True, find_unused_parameters=True)) == first
