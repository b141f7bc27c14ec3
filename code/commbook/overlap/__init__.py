r"""Communication–computation overlap (chapter §1.8), in three modules:

* :mod:`~commbook.overlap.timeline` — the two-stream layer-wise timeline, step times
  without and with perfect overlap, LogP's transfer beside compute (Napkin Maths 1.3
  and 1.8, Figure 4);
* :mod:`~commbook.overlap.buckets` — PyTorch DDP's gradient buckets, their timeline, and
  a sweep of the bucket cap;
* :mod:`~commbook.overlap.limits` — the hidden share for L equal layers and the
  single-node 70B check.

A workload: it imports the core and :mod:`commbook.parallelism`, never the book layer.
"""
from .buckets import (DDP_FIRST_BUCKET_BYTES, FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, BucketPlan, ModelShape,
                      best_bucket_cap, bucket_cap_sweep, bucket_timeline, ddp_bucket_assignment,
                      SWEEP_CAPS, ring_allreduce_cost)
from .limits import SingleNodeCheck, hidden_fraction_equal_layers, single_node_check
from .timeline import (Block, Timeline, all_hidden, layerwise_timeline, step_time_no_overlap,
                       step_time_perfect_overlap, transfer_beside_compute)

__all__ = ["Block", "Timeline", "layerwise_timeline", "step_time_no_overlap", "step_time_perfect_overlap",
           "all_hidden", "transfer_beside_compute",
           "DDP_FIRST_BUCKET_BYTES", "ddp_bucket_assignment", "BucketPlan", "bucket_timeline", "ModelShape",
           "MANY_SMALL_LAYERS", "FEW_LARGE_LAYERS", "ring_allreduce_cost", "SWEEP_CAPS", "bucket_cap_sweep",
           "best_bucket_cap",
           "hidden_fraction_equal_layers", "SingleNodeCheck", "single_node_check"]
