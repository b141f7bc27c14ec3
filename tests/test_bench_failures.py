"""bench_collectives.py must not take the machine down, nor wait longer than it says (issue 17 §4).

* arguments that cannot work are refused before anything is allocated or any rank waits:
  a sweep of more than 10,000 sizes (``-b 1 -e 1G -f 1 -i 1`` would build 2^30 per rank),
  ``-i`` without ``-f 1``, a ``--json`` with a bad placeholder, a ``--timeout`` that is
  not a finite number of seconds (``inf``, ``1e300``);
* a failure before the rendezvous (a rank that dies or hangs before joining, one rank with
  another ``--expect-world-size``, ``RANK >= WORLD_SIZE``, two processes with one ``RANK``)
  ends every rank, each with a message and a non-zero exit, within about ``--timeout``
  seconds (the README's promise); a ``--json`` folder rank 0 cannot write ends every rank
  before the first collective;
* the failures that worked already stay under test: a rank SIGKILLed in the middle of the
  sweep, ranks started with different ``-e``, ``--ops`` or ``-d``.

Every rank is a plain process on 127.0.0.1 (env:// as torchrun sets it, but no agent that
would kill the others): each must end by itself.
"""
from __future__ import annotations

import importlib.util
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "code" / "scripts" / "measure" / "bench_collectives.py"
ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
TIMEOUT = 10            # --timeout of the failure runs
# the longest a rank may take: python + torch import under load, then --timeout, then the
# watchdog's grace (a quarter of it, at least 5 s) for a rank that is itself stuck
BOUND = 20 + TIMEOUT + max(5, TIMEOUT / 4)


def need_torch() -> None:
    if importlib.util.find_spec("torch") is not None:
        return
    why = "torch is not installed (pip install -e '.[measure]', which pins torch==2.13.0)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(rank: int, world: int, port: int, **over: str) -> dict[str, str]:
    return {**ENV, "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), **over}


def launch(p: int, args: list[str], per_rank: dict[int, list[str]] | None = None,
           env: dict[int, dict[str, str]] | None = None, limit: float = 90,
           kill: tuple[int, str] | None = None) -> list[tuple[int, str, float]]:
    """Start ``p`` ranks; (rc, stderr, seconds until it ended) per rank.  ``kill=(r, text)``:
    SIGKILL rank r once rank 0's stderr shows ``text``."""
    port, t0 = _port(), time.monotonic()
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), "--backend", "gloo", *args,
                               *(per_rank or {}).get(r, [])], env=_env(r, p, port, **(env or {}).get(r, {})),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for r in range(p)]
    errs: list[list[str]] = [[] for _ in procs]
    ended: list[float | None] = [None] * p

    def read(r: int) -> None:
        for line in procs[r].stderr:
            errs[r].append(line)
            if kill and r == 0 and kill[1] in line and procs[kill[0]].poll() is None:
                os.kill(procs[kill[0]].pid, signal.SIGKILL)
        procs[r].wait()
        ended[r] = time.monotonic() - t0

    threads = [threading.Thread(target=read, args=(r,), daemon=True) for r in range(p)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join(timeout=max(0.1, limit - (time.monotonic() - t0)))
        hung = [r for r in range(p) if ended[r] is None]
        assert not hung, f"ranks {hung} still running after {limit} s: " + \
            " | ".join("".join(e)[-600:] for e in errs)
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
    return [(pr.returncode, "".join(e), ended[r]) for r, (pr, e) in enumerate(zip(procs, errs))]


def run1(*args: str, **env: str) -> subprocess.CompletedProcess:
    """One process, RANK 0 of WORLD_SIZE 1, at most 2 GiB of address space: an argument
    error must come before any large allocation (a 2^30-size sweep needs 8 GiB)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60,
                          env={**_env(0, 1, _port()), **env}, preexec_fn=cap)


# -- refused at once, on every rank -------------------------------------------------------
@pytest.mark.parametrize("args, says", [
    (["-b", "1", "-e", "1G", "-f", "1", "-i", "1"], "10,000"),
    (["-b", "8", "-e", "1M", "-f", "1", "-i", "8"], "10,000"),
    (["-b", "8", "-e", "1M", "-f", "2", "-i", "8"], "-i"),
    (["-b", "8", "-e", "1M", "-f", "4", "-i", "1K"], "-f 1"),
    (["--ops", "all_reduce", "--json", "out/{colective}.json"], "placeholder"),
    (["--json", "out/{collective}_{}.json"], "placeholder"), (["--ops", "all_reduce", "--json", "{collective.x}/a.json"], "placeholder"),
    (["--timeout", "inf"], "--timeout"), (["--timeout", "1e300"], "--timeout"),
    (["--timeout", "nan"], "--timeout"), (["--init-timeout", "inf"], "--init-timeout"),
    (["--expect-world-size", "0"], "--expect-world-size"),
])
def test_bad_arguments_are_refused_before_anything_else(args, says):
    t0 = time.monotonic()
    proc = run1(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1500:])
    assert says in proc.stderr, proc.stderr[-1500:]
    assert "MemoryError" not in proc.stderr and time.monotonic() - t0 < 30


def test_a_sweep_of_10000_sizes_is_allowed():
    sys.path.insert(0, str(SCRIPT.parent))
    import bench_report as br
    assert len(br.sweep(8, 8 * 10_000, 1, 8)) == 10_000
    with pytest.raises(ValueError, match="10,000"):
        br.sweep(8, 8 * 10_001, 1, 8)


@pytest.mark.parametrize("env, says", [({"RANK": "2"}, "RANK 2"), ({"RANK": "-1"}, "RANK -1"),
                                       ({"WORLD_SIZE": "0"}, "WORLD_SIZE 0")])
def test_impossible_rank_is_refused_at_once(env, says):
    proc = run1("-e", "1K", **env)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr[-1500:]


# -- failures before the rendezvous end every rank within about --timeout ------------------
def _ended_in_time(res, rcs=None):
    for r, (rc, err, t) in enumerate(res):
        assert rc != 0 and "error:" in err, (r, rc, err[-1500:])
        assert t < BOUND, f"rank {r} took {t:.0f} s (--timeout {TIMEOUT}): {err[-800:]}"
    if rcs is not None:
        assert [rc for rc, _, _ in res] == rcs, [(rc, err[-300:]) for rc, err, _ in res]


FAST = ["-b", "1K", "-e", "4K", "-w", "1", "-n", "2", "--timeout", str(TIMEOUT)]


@pytest.mark.parametrize("bad", [0, 1])
def test_a_rank_with_another_expect_world_size(bad):
    """That rank stops at once (exit 2); the others were waiting for it at the rendezvous."""
    need_torch()
    res = launch(2, FAST + ["--expect-world-size", "2"], {bad: ["--expect-world-size", "3"]})
    _ended_in_time(res)
    assert res[bad][0] == 2 and "--expect-world-size says 3" in res[bad][1]
    other = res[1 - bad][1]
    assert "join" in other.lower() or "timed out" in other.lower(), other[-1500:]


def test_a_rank_that_hangs_before_joining():
    need_torch()
    res = launch(2, FAST, {1: ["--fail-rank", "1", "--fail-mode", "hang-before-init"]})
    _ended_in_time(res)
    assert "no progress" in res[1][1], res[1][1][-1500:]
    assert "rank 1" in res[0][1] or "1/2" in res[0][1] or "clients joined" in res[0][1], res[0][1][-1500:]


def test_a_rank_that_never_starts():
    """WORLD_SIZE 3 but only ranks 0 and 1 exist: rank 2 is named as missing."""
    need_torch()
    port = _port()
    res = launch(2, FAST, env={0: {"WORLD_SIZE": "3", "MASTER_PORT": str(port)},
                               1: {"WORLD_SIZE": "3", "MASTER_PORT": str(port)}})
    _ended_in_time(res)
    assert any("2" in err and "join" in err.lower() for _, err, _ in res), res


def test_rank_not_below_world_size():
    need_torch()
    res = launch(2, FAST, env={1: {"RANK": "2"}})
    _ended_in_time(res)
    assert res[1][0] == 2 and "RANK 2" in res[1][1]


def test_two_processes_with_one_rank():
    """WORLD_SIZE 3, ranks 0, 1, 1: the second 1 is told at once, ranks 0 and 1 within --timeout."""
    need_torch()
    res = launch(3, FAST, env={2: {"RANK": "1", "LOCAL_RANK": "1"}})
    _ended_in_time(res)
    assert sum("RANK 1" in err and "two processes" in err for _, err, _ in res) >= 1, res


def test_unwritable_json_folder_ends_every_rank_before_the_first_collective(tmp_path):
    """rank 0 writes the JSON: a folder below a file cannot exist; every rank is told."""
    need_torch()
    (tmp_path / "file").write_text("x")
    res = launch(2, FAST + ["--json", str(tmp_path / "file" / "sub" / "{collective}.json")])
    _ended_in_time(res, rcs=[2, 2])
    assert all("--json" in err and "file" in err for _, err, _ in res), res
    assert all("all_reduce at" not in err for _, err, _ in res), res


# -- the failures that already worked ------------------------------------------------------
def test_sigkill_mid_run_ends_every_rank():
    need_torch()
    res = launch(3, ["-b", "1K", "-e", "64K", "-f", "2", "-w", "1", "-n", "50", "--timeout", str(TIMEOUT)],
                 kill=(1, "all_reduce 2/"))
    assert res[1][0] == -signal.SIGKILL, res[1]
    for r in (0, 2):
        rc, err, t = res[r]
        assert rc != 0 and "error:" in err and t < BOUND, (r, rc, t, err[-1500:])


@pytest.mark.parametrize("flag, a, b, key", [("-e", "4K", "8K", "sizes"), ("--ops", "all_reduce", "all_gather", "ops"),
                                             ("-d", "float32", "float16", "dtype")])
def test_ranks_with_different_arguments(flag, a, b, key):
    need_torch()
    base = ["-b", "1K", "-w", "1", "-n", "1", "--timeout", str(TIMEOUT)] + (["-e", "4K"] if flag != "-e" else [])
    res = launch(2, base, {0: [flag, a], 1: [flag, b]})
    _ended_in_time(res, rcs=[2, 2])
    assert all("different arguments" in err and key in err for _, err, _ in res), res
