"""The nccl-tests logs copied under ``code/commbook/data/measured/nccl-tests/`` (see its PROVENANCE.md).

One-node logs lie in the folder itself, multi-node logs in ``multinode/``; a log's name is
its path relative to :data:`LOG_DIR` (``"multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log"``).
The multi-node logs are excerpts that print neither the test's name nor every rank's line:
:data:`STATED` gives the collective and rank count their sources state (file name, source
and PROVENANCE.md), which :func:`load_log` applies where the text does not say.

>>> LOG_DIR.relative_to(LOG_DIR.parents[3]).as_posix()
'commbook/data/measured/nccl-tests'
>>> load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0].collective
'all_reduce'
"""
from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

from .busbw_table import parse_busbw_markdown
from .nccl_tests import parse_nccl_tests
from .records import Run

__all__ = ["LOG_DIR", "STATED", "available_logs", "load_log"]

LOG_DIR = Path(str(resources.files("commbook") / "data" / "measured" / "nccl-tests"))
"""Where the copied logs live: ``code/commbook/data/measured/nccl-tests/`` (see its PROVENANCE.md),
package data of ``commbook``: an installed wheel finds them too."""

STATED = {
    "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log": ("all_reduce", 16),
    "multinode/a100x128_coreweave_ib_sharp_allreduce.log": ("all_reduce", 32),
    "multinode/h100x64_coreweave_ib_sharp_allreduce.log": ("all_reduce", 96),
    "multinode/gb200x72_coreweave_nvl72_1rack_nccl2.26.2_allreduce.log": ("all_reduce", 72),
    "multinode/gb200x144_coreweave_nvl72_2racks_nccl2.26.2_allreduce.log": ("all_reduce", 128),
    "multinode/gb200x1440_coreweave_nvl72_20racks_nccl2.26.2_allreduce.log": ("all_reduce", 1440),
}
"""(collective, ranks) of the logs whose text omits them: ``all_reduce_perf`` (the sources).
The ranks are those nccl-tests computed each row's busbw with (busbw/algbw = 2(p−1)/p in
every row): 16, 32, 96, 72, 128 and ~1,440.  Three differ from the file names' 128, 64 and
144 (the sources' job names and the last printed rank line): PROVENANCE.md, "How many ranks"."""


def available_logs() -> tuple[str, ...]:
    """Names (paths relative to :data:`LOG_DIR`) of the logs there, PROVENANCE.md excluded.

    >>> "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log" in available_logs()
    True
    """
    if not LOG_DIR.is_dir():
        return ()
    return tuple(sorted(p.relative_to(LOG_DIR).as_posix() for p in LOG_DIR.rglob("*")
                        if p.is_file() and p.name != "PROVENANCE.md"))


def load_log(name: str, **kwargs) -> tuple[Run, ...]:
    """Parse one log of :data:`LOG_DIR`: ``.md`` files with :func:`parse_busbw_markdown`,
    anything else with :func:`parse_nccl_tests`; always a tuple of runs.  For a log of
    :data:`STATED`, ``nranks`` defaults to the stated count and a run that names no
    collective gets the stated one (with a note).

    The 8 x H100 log holds five tests; a multi-node excerpt gets its stated collective:

    >>> [run.collective for run in load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")]
    ['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'send_recv']
    >>> run, = load_log("multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log")
    >>> run.collective, run.nranks
    ('all_reduce', 16)
    >>> load_log("nope.log")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no log 'nope.log' in ...
    """
    if not isinstance(name, str) or name not in available_logs():
        raise ValueError(f"no log {name!r} in {LOG_DIR}; available: {', '.join(available_logs()) or 'none'}")
    path = LOG_DIR / name
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return (parse_busbw_markdown(text, **kwargs),)
    stated = STATED.get(name)
    if stated is not None:
        kwargs.setdefault("nranks", stated[1])
    runs = parse_nccl_tests(text, **kwargs)
    if stated is not None:
        runs = tuple(r if r.collective else replace(
            r, collective=stated[0], notes=r.notes + (f"collective {stated[0]} as the source states",))
            for r in runs)
    return runs
