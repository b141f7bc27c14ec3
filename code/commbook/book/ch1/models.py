r"""Chapter §1.2, network performance models: everything the page
``chapters/{zh,en}/ch1/02-performance-models.md`` uses, in one import.

* :mod:`.perf_numbers` — the worked boxes' links (:data:`BOX_LINKS`, :func:`box_link_table`)
  and Definition 1.2's fusion example (:func:`hockney_fusion`); **Table 1** (:func:`table1`,
  with :data:`CHAPTER_PRINTED_NSTAR`, what the chapter prints for each n*); the intra/inter
  ratios of Figure 3 (:func:`gap_ratios`, :func:`generations_table`); the two timelines of
  Figure 4 (:func:`figure4_timelines`); the **Llama-70B budget** (:func:`llama_budget`,
  :func:`llama_budget_table`).
* :mod:`.perf_calibration` — the ring's closed form fitted to a real nccl-tests log, next to
  the point-to-point fit and the nominal link (:func:`calibration`, :func:`calibration_table`,
  :func:`log_record_table`).
* :mod:`.perf_figures` — Figure 3 (:func:`fig_bandwidth_gap`), Figure 4 in two panels
  (:func:`fig_overlap`) and the calibration figure (:func:`fig_calibration`).

Nothing here types a result: every number is computed from the parameters it depends on, and
the notes of the tables are built from the same parameters.
"""
from __future__ import annotations

from .perf_calibration import CALIBRATION_LOG, calibration, calibration_table, log_record_table
from .perf_figures import fig_bandwidth_gap, fig_calibration, fig_overlap
from .perf_numbers import (BOX_LINKS, BOX_NAMES, CHAPTER_LLAMA, CHAPTER_PRINTED_NSTAR, CHECKPOINT_1_1,
                           FIG4, LLAMA, NM13, TABLE1, box_link_table, figure4_timelines, gap_ratios,
                           generations_table, hockney_fusion, link_name, llama_budget,
                           llama_budget_table, regime, table1)

__all__ = [
    "BOX_LINKS", "BOX_NAMES", "box_link_table", "hockney_fusion", "CHECKPOINT_1_1",
    "TABLE1", "CHAPTER_PRINTED_NSTAR", "table1", "link_name", "regime",
    "gap_ratios", "generations_table", "fig_bandwidth_gap",
    "FIG4", "NM13", "figure4_timelines", "fig_overlap",
    "LLAMA", "CHAPTER_LLAMA", "llama_budget", "llama_budget_table",
    "CALIBRATION_LOG", "calibration", "calibration_table", "log_record_table", "fig_calibration",
]
