"""code/scripts/measure/bench_collectives.py: real collectives with torch.distributed (gloo).

* torch-free: sizes, the op names, nccl-tests' buffer layouts (checked against the columns
  of a real nccl-tests log), and the table round trip through ``parse_nccl_tests``;
* torch, no process group: every expected result equals an independent numpy reduction /
  gather / transpose of the ranks' buffers, and a corrupted element is counted;
* torchrun with gloo, p = 2 and 3: every result correct, the table parses back, the JSON
  loads with ``commbook.measure.points.load`` and agrees with the table;
* failures: a rank that exits, a rank that hangs, a wrong world size, different ``-b`` on
  different ranks: every rank exits non-zero with a message, well within the timeout;
* the recorded gloo data of ``code/commbook/data/measured/gloo/``: each file consistent in itself.

Without torch the torch tests skip with the reason; with CI=true they fail (``make test``
installs torch through the ``measure`` extra).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commbook.measure import load_log, parse_nccl_tests
from commbook.measure.points import load

ROOT = Path(__file__).resolve().parents[1]
SCRIPT_DIR = ROOT / "code" / "scripts" / "measure"
SCRIPT = SCRIPT_DIR / "bench_collectives.py"
GLOO_DIR = ROOT / "code" / "commbook" / "data" / "measured" / "gloo"
sys.path.insert(0, str(SCRIPT_DIR))
import bench_report as br  # noqa: E402

# nccl-tests' PERFORMANCE.md, restated here independently of commbook.bandwidth
FACTOR = {"all_reduce": lambda p: 2 * (p - 1) / p, "all_gather": lambda p: (p - 1) / p,
          "reduce_scatter": lambda p: (p - 1) / p, "all_to_all": lambda p: (p - 1) / p,
          "broadcast": lambda p: 1.0, "send_recv": lambda p: 1.0}
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def need_torch() -> None:
    """Skip (with the reason) without torch; with CI=true, fail instead."""
    if HAVE_TORCH:
        return
    why = "torch is not installed (pip install -e '.[measure]', which pins torch==2.13.0)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


# -- torch-free -----------------------------------------------------------------------------
def test_sizes_and_ops():
    assert [br.parse_size(s) for s in ("8", "64K", "1m", "1G", "2KB")] == [8, 65536, 2 ** 20, 2 ** 30, 2048]
    for bad in ("", "1T", "-8", "0", "0.5", "K"):
        with pytest.raises(ValueError):
            br.parse_size(bad)
    assert br.sweep(8, 128, 2) == [8 * 2 ** k for k in range(5)]
    assert br.sweep(1000, 3000, 1, 1000) == [1000, 2000, 3000]
    with pytest.raises(ValueError):
        br.sweep(64, 8, 2)
    assert br.parse_ops("alltoall,all_reduce_perf,sendrecv") == ("all_reduce", "all_to_all", "send_recv")
    assert br.parse_ops("all") == br.OPS
    with pytest.raises(ValueError, match="unknown collective"):
        br.parse_ops("allreduce,gossip")


def test_layout_reproduces_a_real_nccl_tests_log():
    """Size and count columns of the H100 log (8 ranks, double) come out of ``layout``."""
    runs = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")
    assert {r.collective for r in runs} >= {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    for run in runs:
        for row in run.rows:
            lay = br.layout(run.collective, row.size, 8, run.nranks)
            assert (lay.size, lay.count) == (row.size, row.count), (run.collective, row.size)


def test_layout_rounds_per_rank_shares_to_16_bytes():
    lay = br.layout("all_gather", 1024, 4, 3)          # 256 floats / 3 = 85 -> 84 (16 B multiple)
    assert (lay.send, lay.recv, lay.count, lay.size) == (84, 252, 84, 1008)
    assert br.layout("reduce_scatter", 16, 4, 3) is None
    assert br.layout("all_reduce", 2, 4, 2) is None


def _table(op: str, p: int, results: list) -> str:
    devices = [{"rank": r, "pid": 100 + r, "host": "node0", "device": r, "bus": "cpu", "name": "CPU x"}
               for r in range(p)]
    lines = br.table_header(op, in_place=op == "all_reduce", sizes=[r.layout.size for r in results],
                            factor=4, step_bytes=0, warmup=1, iters=2, check=True, notes=["n"],
                            devices=devices)
    lines += [br.table_row(r, dtype="float32", root=-1, p=p) for r in results]
    return "\n".join(lines + br.table_footer(op, results, p))


@pytest.mark.parametrize("op", br.OPS)
def test_table_round_trip(op):
    rng = random.Random(op)
    p = 3
    results = [br.Result(br.layout(op, s, 4, p), tuple(rng.uniform(1e-5, 2.0) for _ in range(3)), 0)
               for s in br.sweep(1024, 64 * 2 ** 20, 4)]
    (run,) = parse_nccl_tests(_table(op, p, results))
    assert run.collective == op and run.nranks == p and len(run.rows) == len(results)
    assert run.placements == (("in_place",) if op == "all_reduce" else ("out_of_place",))
    for row, res in zip(run.rows, results):
        t = row.timing(run.placements[0])
        assert (row.size, row.count, row.dtype, t.wrong) == (res.layout.size, res.layout.count, "float", 0)
        assert t.time == pytest.approx(statistics.median(res.times), rel=1e-3, abs=1e-8)
        assert t.algbw == pytest.approx(row.size / statistics.median(res.times), rel=1e-3)
        assert t.busbw == pytest.approx(t.algbw * FACTOR[op](p), rel=2e-3)


# -- torch, no process group ----------------------------------------------------------------
def _reference(op: str, inputs: list, r: int, lay, root: int):
    import numpy as np
    p = len(inputs)
    if op == "all_reduce":
        return np.sum(inputs, axis=0)
    if op == "reduce_scatter":
        return np.sum(inputs, axis=0)[r * lay.recv:(r + 1) * lay.recv]
    if op == "all_gather":
        return np.concatenate(inputs)
    if op == "all_to_all":
        b = lay.count
        return np.concatenate([inputs[j][r * b:(r + 1) * b] for j in range(p)])
    if op == "broadcast":
        return inputs[root]
    return inputs[(r - 1) % p]                               # send_recv: from the previous rank


@pytest.mark.parametrize("p,dtype", [(2, "float32"), (3, "bfloat16"), (3, "int32"), (64, "bfloat16"),
                                     (5, "float16")])
def test_expected_results_match_numpy(p, dtype):
    need_torch()
    import torch
    from bench_ops import Bench
    # at p = 64 bfloat16 sums reach 256, the last exact integer: the reductions are what matter
    for op in br.OPS if p < 64 else ("all_reduce", "reduce_scatter"):
        lay = br.layout(op, 4000, br.DTYPES[dtype][1], p)
        root = p - 1
        benches = [Bench(lay, dtype, torch.device("cpu"), r, p, None, root) for r in range(p)]
        inputs = [b.inp.double().numpy().copy() for b in benches]
        for r, b in enumerate(benches):
            ref = _reference(op, inputs, r, lay, root)
            assert (b.expected().double().numpy() == ref).all(), (op, p, dtype, r)
            b.out.copy_(torch.from_numpy(ref).to(b.out.dtype))
            assert b.wrong() == 0
            b.out[len(ref) // 2] += 1
            assert b.wrong() == 1, (op, p, dtype)


# -- torchrun with gloo ---------------------------------------------------------------------
def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}


def torchrun(p: int, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc-per-node={p}",
           "--master-addr=127.0.0.1", f"--master-port={_port()}", str(SCRIPT), "--backend", "gloo", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV)


def launch(p: int, args: list[str], per_rank: dict[int, list[str]] | None = None,
           timeout: float = 90) -> list[tuple[int, str, float]]:
    """Start the ranks as plain processes (env:// as torchrun sets it, but no agent that
    would kill the others): each rank must end by itself.  (rc, stderr, seconds) per rank."""
    port, t0, procs = _port(), time.monotonic(), []
    for r in range(p):
        env = {**ENV, "RANK": str(r), "WORLD_SIZE": str(p), "LOCAL_RANK": str(r), "LOCAL_WORLD_SIZE": str(p),
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        procs.append(subprocess.Popen([sys.executable, str(SCRIPT), "--backend", "gloo", *args,
                                       *(per_rank or {}).get(r, [])],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    out = []
    try:
        for pr in procs:
            err = pr.communicate(timeout=max(1.0, timeout - (time.monotonic() - t0)))[1]
            out.append((pr.returncode, err, time.monotonic() - t0))
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
    return out


@pytest.mark.parametrize("p", [2, 3])
def test_torchrun_gloo_all_collectives(p, tmp_path):
    need_torch()
    proc = torchrun(p, "-b", "4K", "-e", "1M", "-f", "16", "-w", "1", "-n", "2", "--repeats", "2",
                    "--timeout", "30", "-q", "--json", str(tmp_path / "{collective}.json"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = parse_nccl_tests(proc.stdout)
    assert [r.collective for r in runs] == list(br.OPS)
    for run in runs:
        op = run.collective
        assert run.nranks == p and [row.size for row in run.rows] == \
            [br.layout(op, s, 4, p).size for s in (4096, 65536, 2 ** 20)]
        rec = load(op, tmp_path)
        assert rec.collective == op and rec.ranks == p and rec.system.nodes == 1
        for row, pt in zip(run.rows, rec.points, strict=True):
            t = row.timing(run.placements[0])
            assert t.wrong == 0, (op, row.size)
            assert t.busbw == pytest.approx(t.algbw * FACTOR[op](p), rel=2e-3)
            assert pt.bytes == row.size and t.time == pytest.approx(pt.time, rel=1e-3, abs=6e-9)
            assert pt.busbw == pytest.approx(pt.bytes / pt.time * FACTOR[op](p), rel=1e-9)
        raw = json.loads((tmp_path / f"{op}.json").read_text())
        assert raw["provenance"]["backend"] == "gloo" and raw["provenance"]["world_size"] == p


def test_rank_that_exits_ends_every_rank():
    need_torch()
    res = launch(3, ["-b", "1K", "-e", "4K", "-w", "1", "-n", "2", "--timeout", "20", "--fail-rank", "1"])
    assert [rc != 0 for rc, _, _ in res] == [True] * 3, res
    for r in (0, 2):
        assert "error:" in res[r][1] and "peer" in res[r][1], res[r][1][-2000:]
    assert max(t for _, _, t in res) < 20 + 60          # startup + at most the timeout


def test_rank_that_hangs_times_out_everywhere():
    need_torch()
    timeout = 4   # short, but long enough that a slow start under load is not taken for a hang
    # --init-timeout 60: the rendezvous keeps room for a slow start; the hang comes after it
    res = launch(2, ["-b", "1K", "-e", "4K", "-w", "1", "-n", "2", "--timeout", str(timeout),
                     "--init-timeout", "60", "--fail-rank", "1", "--fail-mode", "hang"])
    assert [rc for rc, _, _ in res] == [1, 1], res
    assert "Timed out" in res[0][1] or "timed out" in res[0][1].lower(), res[0][1][-2000:]
    assert "no progress" in res[1][1], res[1][1][-2000:]


def test_wrong_world_size_fails_with_a_message():
    """Checked before torch is imported: every rank stops at once."""
    res = launch(2, ["-b", "1K", "-e", "1K", "--expect-world-size", "3"], timeout=60)
    assert [rc for rc, _, _ in res] == [2, 2], res
    assert all("world size is 2, --expect-world-size says 3" in err for _, err, _ in res), res


def test_mismatched_sizes_fail_on_every_rank():
    need_torch()
    res = launch(2, ["-e", "4K", "-w", "1", "-n", "1", "--timeout", "20"], {0: ["-b", "1K"], 1: ["-b", "2K"]})
    assert [rc for rc, _, _ in res] == [2, 2], res
    assert all("different arguments" in err and "sizes" in err for _, err, _ in res), res


def test_bad_arguments_fail_before_torch():
    proc = subprocess.run([sys.executable, str(SCRIPT), "-b", "1T"], capture_output=True, text=True,
                          timeout=30, env={**ENV, "RANK": "0", "WORLD_SIZE": "1"})
    assert proc.returncode == 2 and "1T" in proc.stderr
    proc = subprocess.run([sys.executable, str(SCRIPT), "--ops", "all", "--json", "x.json"],
                          capture_output=True, text=True, timeout=30, env={**ENV, "RANK": "0", "WORLD_SIZE": "1"})
    assert proc.returncode == 2 and "{collective}" in proc.stderr


# -- the recorded gloo data -----------------------------------------------------------------
GLOO_SETS = (GLOO_DIR, GLOO_DIR / "cpu16")        # the 2-core machine; 16 idle cores
GLOO_FILES = [(d, p.stem) for d in GLOO_SETS for p in sorted(d.glob("*.json"))]


@pytest.mark.parametrize("directory", GLOO_SETS, ids=lambda d: d.name)
def test_gloo_recordings_exist(directory):
    names = {p.stem for p in directory.glob("*.json")}
    assert names == {f"gloo_p{p}_{op}" for p in (2, 3, 4) for op in br.OPS}
    assert {p.name for p in directory.glob("*.log")} == {f"gloo_p{p}.log" for p in (2, 3, 4)}
    prov = (GLOO_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "gloo_p{p}_{collective}.json" in prov and "gloo_p{p}.log" in prov


@pytest.mark.parametrize("directory,name", GLOO_FILES, ids=[f"{d.name}/{n}" for d, n in GLOO_FILES])
def test_gloo_recording_is_consistent(directory, name):
    rec = load(name, directory)
    raw = json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
    p, op = rec.ranks, rec.collective
    assert name == f"gloo_p{p}_{op}" and raw["provenance"]["backend"] == "gloo"
    assert raw["conditions"]["repeats"] == 5 and raw["conditions"]["iters"] == 10
    for pt, rp in zip(rec.points, raw["points"], strict=True):
        assert pt.algbw == pytest.approx(pt.bytes / pt.time, rel=1e-9)
        assert pt.busbw == pytest.approx(pt.algbw * FACTOR[op](p), rel=1e-9)
        assert len(rp["time_s_repeats"]) == 5
        assert pt.time == pytest.approx(statistics.median(rp["time_s_repeats"]), rel=1e-12)
        assert rp["wrong"] == 0
    assert [pt.bytes for pt in rec.points] == [br.layout(op, s, 4, p).size for s in br.sweep(1024, 64 * 2 ** 20, 4)]
    # the table printed in the same run (the .log) agrees to its printed precision
    (run,) = [r for r in parse_nccl_tests((directory / f"gloo_p{p}.log").read_text(encoding="utf-8"))
              if r.collective == op]
    assert run.nranks == p and [row.size for row in run.rows] == [pt.bytes for pt in rec.points]
    for row, pt in zip(run.rows, rec.points):
        t = row.timing(run.placements[0])
        assert math.isclose(t.time, pt.time, rel_tol=1e-3, abs_tol=6e-9) and t.wrong == 0
        assert math.isclose(t.busbw, pt.busbw, rel_tol=2e-3)
