"""Reading and fitting real collective measurements.

* :mod:`.nccl_tests` parses the output of NVIDIA's nccl-tests (``all_reduce_perf`` …) and
  :mod:`.busbw_table` the busbw-only markdown tables some reports publish, into the
  records of :mod:`.records` (:class:`Run`, :class:`Row`, :class:`Timing`);
  :func:`load_log` (:mod:`.logs`) reads the logs copied under ``code/commbook/data/measured/nccl-tests/``.
* :mod:`.fitting` fits effective α and β to measured times, on the closed form of the
  collective and algorithm that ran (:func:`fit`, i.e. ``commbook.measure.fit`` — the
  function, not a module), or on the point-to-point α + n/β
  (:func:`fit_point_to_point`) to show the bias of fitting unlike to unlike.
* :mod:`.points` reads the recorded measurements of ``code/commbook/data/measured/*.json`` (schema
  ``commbook.measured/1``), each with its source.
* :mod:`.nccl_model` (constants and formulas in :mod:`.nccl_tuning`, NCCL 2.29.2) predicts
  the time and busbw NCCL picks for all-reduce, all-gather and reduce-scatter on one
  NVSwitch node; :mod:`.nccl_cluster` (multi-node constants and graphs in :mod:`.nccl_net`)
  on N nodes × G GPUs, with presets of the recorded multi-node logs and
  :func:`.nccl_cluster.predict_cluster` for a reader's cluster; both return the records of
  :mod:`.comparison` (a prediction, and its comparison with a measured run), and
  ``benchmarks/accuracy.py`` prints their error against every recorded log.

This package sits above the core: it uses :mod:`commbook.bandwidth` and the algorithm
registry of :mod:`commbook.collectives`; nothing in the core imports it.

>>> import numpy as np
>>> from commbook import measure
>>> n = np.array([1e3, 1e6, 1e9]); p = 8
>>> t = 2 * (p - 1) * 5e-6 + 2 * (p - 1) / p * n / 100e9      # a ring at α = 5 µs, β = 100 GB/s
>>> f = measure.fit(n, t, "all_reduce", "ring", p)
>>> round(f.alpha * 1e6, 6), round(f.beta / 1e9, 6)
(5.0, 100.0)
"""
from .busbw_table import parse_busbw_markdown, resolve_size_label
from .fitting import Fit, fit, fit_point_to_point, fit_run, model_coefficients
from .logs import LOG_DIR, available_logs, load_log
from .nccl_tests import parse_nccl_tests
from .records import (NCCL_TESTS_COLUMNS, PLACEMENTS, Device, Row, Run, Timing, collective_name,
                      printed_half_unit)

__all__ = [
    "parse_nccl_tests", "parse_busbw_markdown", "load_log", "available_logs", "LOG_DIR",
    "NCCL_TESTS_COLUMNS", "PLACEMENTS", "Run", "Row", "Timing", "Device", "printed_half_unit",
    "resolve_size_label", "collective_name",
    "fit", "fit_point_to_point", "fit_run", "model_coefficients", "Fit",
]
