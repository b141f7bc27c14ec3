"""The launch half of ``bench_collectives.py``: exit codes, leaving at once, the watchdog,
the rank's environment and the rendezvous with its deadline.

Kept apart so that every way a job can fail before its first collective is in one place:
a rank that dies, hangs or never starts before joining, two processes with one RANK, an
impossible RANK, and a ``--json`` folder rank 0 cannot write each end every rank within
``--init-timeout`` (default ``--timeout``) seconds with a message naming the cause.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
import tempfile
import threading
import time
from typing import NoReturn

from bench_report import json_path

EXIT_RUNTIME, EXIT_USAGE, EXIT_FAILRANK = 1, 2, 3
MAX_TIMEOUT = 7 * 24 * 3600.0
"""The longest --timeout / --init-timeout (s): beyond, torch's millisecond timeouts overflow."""


def die(rank: int | str, msg: str, code: int) -> NoReturn:
    """Print ``msg`` on stderr, prefixed with the rank, and leave at once (no destructor
    of a broken process group may hang the exit)."""
    sys.stderr.write(f"[bench_collectives rank {rank}] error: {msg}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(code)


class Watchdog:
    """A daemon thread that ends the process when no step has finished for ``limit``
    seconds: the backstop for hangs that no timeout of the backend catches."""

    def __init__(self, limit: float, rank: int | str):
        self.limit, self.rank = float(limit), rank
        self.last, self.what = time.monotonic(), "starting"
        threading.Thread(target=self._watch, daemon=True, name="bench-watchdog").start()

    def beat(self, what: str) -> None:
        """Record progress: ``what`` is the step that starts now."""
        self.last, self.what = time.monotonic(), what

    def _watch(self) -> None:
        while True:
            time.sleep(min(1.0, self.limit / 10))
            idle = time.monotonic() - self.last
            if idle > self.limit:
                die(self.rank, f"no progress for {idle:.0f} s while {self.what} (the limit: the step's "
                    "timeout plus grace): a peer rank has probably died or hangs", EXIT_RUNTIME)


def env_int(name: str, default: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        if default is None:
            die("?", f"environment variable {name} is not set: start the script with torchrun "
                "(python -m torch.distributed.run)", EXIT_USAGE)
        return default
    try:
        return int(raw)
    except ValueError:
        die("?", f"environment variable {name}={raw!r} is not an integer", EXIT_USAGE)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def rendezvous(dist, rank: int, world: int, timeout: float, problem: str | None):
    """Join every rank within ``timeout`` seconds, or end this rank saying who is missing.

    The store is the one ``init_process_group`` would use (env://: rank 0 serves it at
    MASTER_ADDR:MASTER_PORT, or torchrun's agent does).  Each rank registers its RANK once
    (a second process with the same RANK stops at once) and waits, with a deadline, until
    all WORLD_SIZE ranks have: a rank that died, hangs or never started before joining, or
    stopped on its own arguments (another --expect-world-size), ends the others within
    ``timeout``, not torch's default of 30 minutes.  ``problem`` (rank 0: a --json folder it
    cannot write) ends every rank once all have joined, before any collective."""
    deadline = time.monotonic() + timeout
    addr = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
    td = datetime.timedelta(seconds=timeout)
    try:
        store, _, _ = next(dist.rendezvous("env://", rank=rank, world_size=world, timeout=td))
        store.set_timeout(td)
    except Exception as e:  # noqa: BLE001
        die(rank, f"the rendezvous at {addr} failed within --init-timeout {timeout:g} s: {first_line(e)} "
            "(a rank died or hangs before joining, or was started with other arguments; for rank 0: "
            "another process holds the port, e.g. a second process with RANK 0)", EXIT_RUNTIME)
    ns = ("commbook_bench/" + os.environ.get("TORCHELASTIC_RUN_ID", "") + "/"
          + os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") + f"/{world}/")
    try:
        if store.add(ns + f"rank{rank}", 1) != 1:
            store.set(ns + f"dup{rank}", "1")
            die(rank, f"two processes were started with RANK {rank} of WORLD_SIZE {world}: this one stops "
                "(the others stop within --init-timeout)", EXIT_USAGE)
        if problem:
            store.set(ns + "problem", problem)
        if store.add(ns + "joined", 1) == world:
            store.set(ns + "all", "1")
        try:
            store.wait([ns + "all"], datetime.timedelta(seconds=max(0.1, deadline - time.monotonic())))
        except Exception:  # noqa: BLE001 - the deadline passed (or the store went away)
            joined = store.add(ns + "joined", 0)
            missing = [r for r in range(world) if not store.check([ns + f"rank{r}"])]
            dups = [r for r in range(world) if store.check([ns + f"dup{r}"])]
            die(rank, f"only {joined} of {world} ranks joined within --init-timeout {timeout:g} s; "
                f"rank(s) {', '.join(map(str, missing[:8]))}{' …' if len(missing) > 8 else ''} did not join"
                + (f"; two processes were started with RANK {', '.join(map(str, dups))}" if dups else "")
                + " (a rank died or hangs before joining, was started with another --expect-world-size or "
                "WORLD_SIZE, or with an impossible RANK)", EXIT_RUNTIME)
        if store.check([ns + "problem"]):
            msg = store.get(ns + "problem").decode()
            store.add(ns + "told", 1)
            if rank == 0:          # rank 0 may serve the store: the others read first
                with contextlib.suppress(Exception):
                    while store.add(ns + "told", 0) < world and time.monotonic() < deadline + 10:
                        time.sleep(0.05)
            die(rank, msg if rank == 0 else f"rank 0: {msg}", EXIT_USAGE)
    except Exception as e:  # noqa: BLE001 - the store failed: its host (rank 0) probably ended
        die(rank, f"the rendezvous store at {addr} failed: {first_line(e)} (rank 0, which serves it "
            "unless torchrun does, has probably ended: see its message)", EXIT_RUNTIME)
    return store


def json_problem(args: argparse.Namespace, world: int, backend: str) -> str | None:
    """Why rank 0 could not write the --json files (``None``: it can): each folder is made
    (as writing would) and a probe file created in it and removed."""
    for op in args.ops:
        path = json_path(args.json, op, world, backend, args.dtype)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".bench_probe_"):
                pass
            if path.is_dir():
                return f"--json {args.json!r}: {path} is a folder"
        except OSError as e:
            return f"--json {args.json!r}: cannot write {path} ({type(e).__name__}: {e})"
    return None
